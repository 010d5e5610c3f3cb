"""The numbers of the correctness reference (``tile_mlir.testing.reference``): each element
type's rounding, its buffers' bits, and the named kinds' combines, from docs/spec.md
("Semantics": "NaN and signed zeros", "Integers", "Element types") alone. numpy only.

Values are Python floats (the exact value of an element) and ints. A combine computes
exactly where it can (an f64 sum of two f16, bf16 or f32 elements is exact or within the
double rounding that leaves the final rounding unchanged) and ``round_to`` rounds once.
"""

from __future__ import annotations

import math
import struct
from typing import Callable

import numpy as np

KINDS = ("sum", "max", "min", "maximum", "minimum")
ARG_KINDS = ("argmax", "argmin")  # docs/spec.md, "argmax and argmin": (value, index) pairs
FLOATS = ("f16", "bf16", "f32", "f64")
# docs/spec.md, "NaN and signed zeros"
CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF, "f64": 0x7FFFFFFFFFFFFFFF}
_STORAGE = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
            "i32": np.int32, "i64": np.int64}
_BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64, "i32": np.uint32, "i64": np.uint64}


# --- numbers --------------------------------------------------------------------------------


def storage_dtype(dtype: str) -> np.dtype:
    """How a buffer of ``dtype`` sits in numpy (bf16: its bits, as uint16)."""
    return np.dtype(_STORAGE[dtype])


def _bf16_bits(x: float) -> int:
    """x rounded to bf16 (nearest even), as bits. Through f32: the double rounding
    f64 -> f32 -> bf16 gives the rounding of x itself (24 >= 2 * 8 + 2 bits)."""
    if x != x:
        return 0x7FFF
    with np.errstate(over="ignore"):
        u = int(np.float32(x).view(np.uint32))
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def _bf16_value(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", (b & 0xFFFF) << 16))[0]


def _f32(x: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # past the largest f32: an infinity, or the largest
        with np.errstate(over="ignore"):
            return float(np.float32(x))


def _f16(x: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float16(x))


def _int(width: int):
    mask, top = (1 << width) - 1, 1 << (width - 1)
    return lambda x: ((int(x) + top) & mask) - top


_ROUND = {"f64": float, "f32": _f32, "f16": _f16, "bf16": lambda x: _bf16_value(_bf16_bits(x)),
          "i32": _int(32), "i64": _int(64)}


def round_to(dtype: str, x):
    """x (a Python float or int) rounded to ``dtype``, as a Python float or int: floats to
    nearest even (an exact f64 sum of two elements rounds the same as the exact sum: 53
    bits are enough for a second rounding to f32 and below); integers wrap."""
    return _ROUND[dtype](x)


def to_values(a: np.ndarray, dtype: str) -> list:
    """A buffer of ``dtype`` -> its elements as Python floats or ints, flat."""
    a = np.asarray(a, dtype=_STORAGE[dtype]).reshape(-1)
    if dtype == "bf16":
        return [_bf16_value(int(b)) for b in a]
    return [float(v) for v in a] if dtype in FLOATS else [int(v) for v in a]


def from_values(values, dtype: str, shape) -> np.ndarray:
    """Python values (already of ``dtype``) -> a buffer of ``dtype``; a NaN gets the canonical bits."""
    if dtype in FLOATS:
        bits = []
        for v in values:
            if v != v:
                bits.append(CANONICAL_NAN[dtype])
            elif dtype == "bf16":
                bits.append(_bf16_bits(v))
            else:
                bits.append(int(np.array(v, _STORAGE[dtype]).view(_BITS[dtype])))
        return np.array(bits, dtype=_BITS[dtype]).view(_STORAGE[dtype]).reshape(shape)
    return np.array(values, dtype=_STORAGE[dtype]).reshape(shape)


# --- the named kinds (docs/spec.md, "NaN and signed zeros", "Integers") ---------------------


def _pick(a, b, larger: bool, propagate: bool):
    if a != a or b != b:  # NaN
        if propagate or (a != a and b != b):
            return math.nan
        return b if a != a else a
    if a == b == 0 and isinstance(a, float):  # -0 orders below +0
        neg_a, neg_b = math.copysign(1, a) < 0, math.copysign(1, b) < 0
        negative = (neg_a and neg_b) if larger else (neg_a or neg_b)
        return -0.0 if negative else 0.0
    return (a if a >= b else b) if larger else (a if a <= b else b)


def named(kind: str, dtype: str) -> Callable:
    """The combine of a named kind, over 1-tuples; ``reduce`` rounds what it returns."""
    if kind == "sum":
        return lambda l, r: (l[0] + r[0],)
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind}")
    larger, propagate = kind in ("max", "maximum"), kind in ("maximum", "minimum")
    return lambda l, r: (_pick(l[0], r[0], larger, propagate),)


def arg(kind: str) -> Callable:
    """The combine of argmax or argmin over (value, index) pairs (docs/spec.md, "argmax and
    argmin"): a NaN wins (of two NaNs, the smaller index); else the greater (argmin: the
    smaller) value, -0 and +0 equal; else the smaller index; on a complete tie, the left
    pair (with accum, the old one). The value keeps its element's bits."""
    if kind not in ARG_KINDS:
        raise ValueError(f"unknown kind {kind}")
    larger = kind == "argmax"

    def combine(left, right):
        (lv, li), (rv, ri) = left, right
        l_nan, r_nan = lv != lv, rv != rv
        if l_nan or r_nan:
            return right if r_nan and (not l_nan or ri < li) else left
        if lv == rv:
            return right if ri < li else left
        return right if (rv > lv if larger else rv < lv) else left

    return combine
