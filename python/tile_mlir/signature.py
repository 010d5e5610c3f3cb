"""Kernel signatures: what a launch must pass, checked before anything runs.

Shared by both launch backends (the CUDA runtime and the CPU interpreter), and
stored in the compile cache as JSON, so it imports nothing from MLIR.

With the bare-pointer calling convention (``use-bare-ptr-memref-call-conv=1``)
a ``memref<4x8xf32>`` kernel argument is one device pointer to 32 contiguous
f32; scalars (``i32``, ``f32``, ``index``...) are passed by value. A dynamic dim
(``memref<?x8xf32>``, None in ``ArgSpec.shape``) takes its extent from the array a
launch passes; only the interpreter runs such kernels so far.
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
    shape: tuple[int | None, ...] = ()  # None: a dynamic dim

    @property
    def dynamic(self) -> bool:
        return None in self.shape

    @property
    def numel(self) -> int:
        """The elements of a static shape."""
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.numel * itemsize(self.dtype)

    def describe(self) -> str:
        if self.kind == "scalar":
            return f"scalar {self.dtype}"
        return f"{self.dtype}[{', '.join('?' if d is None else str(d) for d in self.shape)}]"


@dataclass(frozen=True)
class KernelSignature:
    """What a launch must pass: the arguments, and the block sizes the kernel's tile ops
    can run on. A warp-scope op needs whole warps (``block_multiple`` 32), a
    warpgroup-scope op whole warpgroups (128), and a cta- or cluster-scope op exactly the
    threads of its register layout's warps (``block_threads``), unless the layout is each
    thread's own tile (``analysis.block_needs``); anything else would compute a wrong
    answer without a word, so a launch checks it (``check_block``).

    ``cluster``: the thread-block cluster the kernel runs in, as CTAs along x, y, z, or
    None. A cluster-scope op needs clusters of the CTAs its layouts span (``(C, 1, 1)``),
    and a kernel that fixes its cluster shape (``known_cluster_size``) needs that one;
    ``cluster_fixed`` says the kernel fixes it (PTX ``.reqnctapercluster``), so a launch
    passes no cluster dimension, else the launch gives it (``cuLaunchKernelEx``). The
    grid must be whole clusters (``check_grid``)."""

    name: str
    args: tuple[ArgSpec, ...] = field(default_factory=tuple)
    block_threads: int | None = None
    block_multiple: int = 1
    cluster: tuple[int, int, int] | None = None
    cluster_fixed: bool = False

    @property
    def cluster_ctas(self) -> int:
        """The CTAs of one cluster (1 without a cluster)."""
        return int(np.prod(self.cluster)) if self.cluster else 1

    def to_json(self) -> str:
        d = {"name": self.name, "args": [[a.kind, a.dtype, list(a.shape)] for a in self.args]}
        if self.block_threads is not None:
            d["block_threads"] = self.block_threads
        if self.block_multiple != 1:
            d["block_multiple"] = self.block_multiple
        if self.cluster is not None:
            d["cluster"] = list(self.cluster)
        if self.cluster_fixed:
            d["cluster_fixed"] = True
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> KernelSignature:
        d = json.loads(text)
        args = tuple(ArgSpec(k, t, tuple(s)) for k, t, s in d["args"])
        cluster = tuple(d["cluster"]) if d.get("cluster") is not None else None
        return cls(d["name"], args, d.get("block_threads"), d.get("block_multiple", 1), cluster,
                   d.get("cluster_fixed", False))

    def check_grid(self, grid: tuple[int, int, int]) -> None:
        """Raise LaunchError if ``grid`` is not made of whole clusters of the kernel's."""
        if self.cluster is None:
            return
        if any(g % c for g, c in zip(grid, self.cluster)):
            why = "its cluster-scope tile ops span" if not self.cluster_fixed else "its known_cluster_size is"
            raise LaunchError(
                f"kernel {self.name} runs in clusters of {self.cluster_ctas} CTA(s) ({why} "
                f"{tuple(self.cluster)}), so each grid dim must be a multiple of the cluster's; got grid {grid}"
            )

    def check_block(self, block: tuple[int, int, int]) -> None:
        """Raise LaunchError if the kernel's tile ops cannot run on blocks of ``block``."""
        threads = block[0] * block[1] * block[2]
        if self.block_threads is not None and threads != self.block_threads:
            raise LaunchError(
                f"kernel {self.name} needs blocks of {self.block_threads} threads (its cta- or "
                f"cluster-scope tile ops span {self.block_threads // 32} warps), got {block} = {threads} threads"
            )
        if threads % self.block_multiple:
            unit = "warps (32 threads)" if self.block_multiple == 32 else "warpgroups (128 threads)"
            raise LaunchError(
                f"kernel {self.name} needs whole {unit} per block (its tile ops run at that scope), "
                f"got {block} = {threads} threads"
            )

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
        # The exact shape, or flat with as many elements (numel only then: it is slow); with
        # a dynamic dim, the rank and the static dims.
        if spec.dynamic:
            fits = len(shape) == len(spec.shape) and all(d is None or d == e for d, e in zip(spec.shape, shape))
        else:
            fits = tuple(shape) == spec.shape or (len(shape) == 1 and shape[0] == spec.numel)
        if not fits:
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
