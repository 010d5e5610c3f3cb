"""Kernel signatures: what a launch must pass, checked before anything runs.

Shared by both launch backends (the CUDA runtime and the CPU interpreter), and
stored in the compile cache as JSON, so it imports nothing from MLIR.

With the bare-pointer calling convention (``use-bare-ptr-memref-call-conv=1``)
a ``memref<4x8xf32>`` kernel argument is one device pointer to 32 contiguous
f32; scalars (``i32``, ``f32``, ``index``...) are passed by value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from .errors import LaunchError
from .vocab import MLIR_TO_NUMPY  # noqa: F401  (re-exported for the pipeline and interpreter)

# What a host array of each kernel dtype may look like.
_ACCEPTED = {
    "bfloat16": ("bfloat16", "uint16"),
}


def accepted_dtypes(dtype: str) -> tuple[str, ...]:
    return _ACCEPTED.get(dtype, (dtype,))


def itemsize(dtype: str) -> int:
    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument: a memref (device buffer) or a scalar."""

    kind: str  # "memref" | "scalar"
    dtype: str  # numpy dtype name (see MLIR_TO_NUMPY)
    shape: tuple[int, ...] = ()

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.numel * itemsize(self.dtype)

    def describe(self) -> str:
        if self.kind == "scalar":
            return f"scalar {self.dtype}"
        return f"{self.dtype}[{', '.join(map(str, self.shape))}]"


@dataclass(frozen=True)
class KernelSignature:
    name: str
    args: tuple[ArgSpec, ...] = field(default_factory=tuple)

    def to_json(self) -> str:
        return json.dumps(
            {"name": self.name, "args": [[a.kind, a.dtype, list(a.shape)] for a in self.args]}
        )

    @classmethod
    def from_json(cls, text: str) -> "KernelSignature":
        d = json.loads(text)
        return cls(d["name"], tuple(ArgSpec(k, t, tuple(s)) for k, t, s in d["args"]))

    def describe(self) -> str:
        return f"{self.name}({', '.join(a.describe() for a in self.args)})"

    def check_count(self, args) -> None:
        if len(args) != len(self.args):
            raise LaunchError(
                f"kernel {self.describe()} takes {len(self.args)} argument(s), got {len(args)}"
            )

    def check_array(self, i: int, dtype_name: str, shape: tuple[int, ...]) -> None:
        """Check one array-like argument (host or device) against memref spec ``i``."""
        spec = self.args[i]
        where = f"kernel {self.name}: argument {i}"
        if spec.kind != "memref":
            raise LaunchError(f"{where} is a {spec.describe()}, got an array")
        if dtype_name not in accepted_dtypes(spec.dtype):
            raise LaunchError(f"{where} must be {spec.describe()}, got dtype {dtype_name}")
        # The exact shape, or flat with as many elements (numel only then: it is slow).
        if tuple(shape) != spec.shape and not (len(shape) == 1 and shape[0] == spec.numel):
            raise LaunchError(f"{where} must be {spec.describe()}, got shape {tuple(shape)}")

    def check_scalar(self, i: int, value) -> None:
        spec = self.args[i]
        where = f"kernel {self.name}: argument {i}"
        if spec.kind != "scalar":
            raise LaunchError(
                f"{where} is a {spec.describe()} buffer, got {type(value).__name__} {value!r}"
            )
        if isinstance(value, np.ndarray):
            raise LaunchError(f"{where} is a {spec.describe()}, got an array")
        # bfloat16 is no numpy dtype without ml_dtypes; it is a float either way.
        kind = "f" if spec.dtype == "bfloat16" else np.dtype(spec.dtype).kind
        if kind in "iu" and not isinstance(value, (int, np.integer)):
            raise LaunchError(f"{where} is a {spec.describe()}, got {type(value).__name__}")
        if kind == "f" and not isinstance(value, (int, float, np.integer, np.floating)):
            raise LaunchError(f"{where} is a {spec.describe()}, got {type(value).__name__}")
