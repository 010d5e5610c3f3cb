"""Element types: how the values of each MLIR element type live in numpy.

f32, f64 and f16 compute in the numpy type of the same name, so every op rounds to
its type. bf16 values are float32 numbers rounded to bf16 (to nearest even) after
every op, and are stored in memory as uint16 bits (``tile_mlir.bf16``). i1 is bool,
index is int64.
"""

from __future__ import annotations

import numpy as np

from .. import bf16
from ..vocab import CANONICAL_NAN_BITS


class Elem:
    """An MLIR element type and how its values live in numpy.

    ``dtype`` holds SSA values and private memory, ``storage`` global and workgroup
    memory; they differ only for bf16 (float32 values, uint16 bits).
    """

    def __init__(self, name: str, dtype: str, bits: int):
        self.name = name
        self.bits = bits
        self.is_float = name.startswith(("f", "bf"))
        self.dtype = np.dtype(dtype)
        self.storage = np.dtype("uint16") if name == "bf16" else self.dtype
        self.udtype = np.dtype(f"uint{max(bits, 8)}")  # unsigned reading, bit patterns
        # poison: what fresh memory holds, NaN or 0xA5 bytes (true for i1).
        if self.is_float:
            self.poison = self.dtype.type(np.nan)
            # nan: what float arithmetic returns for NaN, as NVIDIA GPUs do: positive,
            # all payload bits set. (x86 returns a negative NaN for inf - inf, and the
            # first operand's NaN for NaN + NaN: lanes would disagree on the bits.)
            self.nan = self.from_bits(np.array(CANONICAL_NAN_BITS[name], self.udtype))[()]
        elif bits == 1:
            self.poison = np.bool_(True)
        else:
            self.poison = np.frombuffer(b"\xa5" * self.dtype.itemsize, self.dtype)[0]
        # values <-> global and workgroup memory; None: the same
        self.to_storage = self.to_bits if name == "bf16" else None
        self.from_storage = self.from_bits if name == "bf16" else None

    def scalar(self, value):
        """A Python number as a uniform value of this type (OverflowError if out of range);
        a bf16 as the runtime packs a scalar argument (``bf16.to_bits``)."""
        if self.name == "bf16":
            return bf16.rounded(value)
        return self.dtype.type(value)

    def wrap(self, value: int) -> int:
        """An integer wrapped to this type's width, as a signed number."""
        half = 1 << (self.bits - 1)
        return ((value + half) & ((half << 1) - 1)) - half

    def to_bits(self, v):
        """Values -> their bit patterns, as unsigned integers of the type's width."""
        if self.name == "bf16":
            return bf16.truncated(v)
        return v.view(self.udtype)

    def from_bits(self, b):
        """Unsigned bit patterns of the type's width -> values."""
        if self.name == "bf16":
            return bf16.from_bits(b)
        return b.view(self.dtype)


ELEMS = {
    e.name: e
    for e in (
        Elem("f16", "float16", 16),
        Elem("bf16", "float32", 16),
        Elem("f32", "float32", 32),
        Elem("f64", "float64", 64),
        Elem("i1", "bool", 1),
        Elem("i8", "int8", 8),
        Elem("i16", "int16", 16),
        Elem("i32", "int32", 32),
        Elem("i64", "int64", 64),
        Elem("index", "int64", 64),
    )
}


def round_bf16(x):
    """Float or integer values rounded to the nearest bf16 (ties to even), as float32,
    the way a GPU's ``cvt.rn.bf16`` does: once (float64 included; integers beyond 2**53
    twice), and a NaN is the canonical NaN."""
    return bf16.rounded(x, nan=CANONICAL_NAN_BITS["bf16"])


def sext_i1(x):
    """i1 values as sign-extended int8: true is -1."""
    return -(x.astype(np.int8))

