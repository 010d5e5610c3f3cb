"""Kernel signatures: what a launch must pass, checked before anything runs.

Shared by both launch backends (the CUDA runtime and the CPU interpreter), and
stored in the compile cache as JSON, so it imports nothing from MLIR.

With the bare-pointer calling convention (``use-bare-ptr-memref-call-conv=1``)
a ``memref<4x8xf32>`` kernel argument is one device pointer to 32 contiguous
f32; scalars (``i32``, ``f32``, ``index``...) are passed by value. A dynamic dim
(``memref<?x8xf32>``, None in ``ArgSpec.shape``) takes its extent from the array a
launch passes; only the interpreter runs such kernels so far.

Each memref argument also records the alignment its compiled code assumes of that
pointer (``ArgSpec.align``, bytes; ``tile_mlir.alignment`` derives it), which every
launch checks (``KernelSignature.check_aligned``). In ``signatures.json`` an argument is
``[kind, dtype, shape]``, and a memref's has its alignment fourth; one without it
(written before alignments were recorded) is read as ``GLOBAL_BASE_ALIGN`` (16 bytes),
what the lowering then assumed of every global memref.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from .errors import LaunchError
from .vocab import GLOBAL_BASE_ALIGN, MAX_BLOCK_THREADS, MLIR_TO_NUMPY  # noqa: F401  (re-exported for the pipeline and interpreter)

# What a host array of each kernel dtype may look like.
_ACCEPTED = {
    "bfloat16": ("bfloat16", "uint16"),
}


def summary(value) -> str:
    """What ``value`` is, for an error message, never its data: its type, and its dtype
    and shape where it has them (``ndarray float32[3, 4]``), its length for a container
    (``list of 3 items``), a short number itself (``float 1.5``)."""
    kind = type(value).__name__
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"int of {value.bit_length()} bits"  # its decimal repr may not even exist
    if isinstance(value, (bool, int, float, complex, np.generic)) and not isinstance(value, np.void):
        return f"{kind} {value}" if len(str(value)) <= 32 else kind
    if isinstance(value, (str, bytes)):
        return f"{kind} of {len(value)} characters" if isinstance(value, str) else f"{kind} of {len(value)} bytes"
    try:
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if shape is not None and dtype is not None:
            return f"{kind} {dtype}[{', '.join(str(int(n)) for n in shape)}]"
    except Exception:  # a property that raises, or a shape that is no sequence of ints
        pass
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return f"{kind} of {len(value)} item{'s' if len(value) != 1 else ''}"
    return kind


def accepted_dtypes(dtype: str) -> tuple[str, ...]:
    return _ACCEPTED.get(dtype, (dtype,))


def itemsize(dtype: str) -> int:
    return 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument: a memref (device buffer) or a scalar.

    ``align``: for a memref, the bytes its base address must be aligned to (the
    compiled code relies on it); None gives ``GLOBAL_BASE_ALIGN``. 1 for a scalar."""

    kind: str  # "memref" | "scalar"
    dtype: str  # numpy dtype name (see MLIR_TO_NUMPY)
    shape: tuple[int | None, ...] = ()  # None: a dynamic dim
    align: int | None = None

    def __post_init__(self):
        if self.align is None:
            object.__setattr__(self, "align", GLOBAL_BASE_ALIGN if self.kind == "memref" else 1)

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
        d = {"name": self.name, "args": [
            [a.kind, a.dtype, list(a.shape)] + ([a.align] if a.kind == "memref" else []) for a in self.args]}
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
        args = tuple(ArgSpec(a[0], a[1], tuple(a[2]), *a[3:4]) for a in d["args"])
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
        if threads > MAX_BLOCK_THREADS:
            raise LaunchError(f"kernel {self.name}: block {block} has {threads} threads, over {MAX_BLOCK_THREADS}")
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
            raise LaunchError(f"{where} is a {spec.describe()}, got a {dtype_name}[{', '.join(map(str, shape))}] array")
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

    def check_aligned(self, i: int, pointer: int) -> None:
        """Raise LaunchError if the address ``pointer`` given for memref argument ``i`` is
        not aligned as its compiled code assumes (``ArgSpec.align``)."""
        align = self.args[i].align
        if pointer % align:
            raise LaunchError(
                f"kernel {self.name}: argument {i} ({self.args[i].describe()}) is misaligned: its address "
                f"{pointer:#x} % {align} = {pointer % align}, but the kernel's compiled code needs {align}-byte "
                "alignment; a view that starts inside an array (x[1:], x[:, 3:]) may not have it: pass a copy "
                "(x.clone(), x.copy())"
            )

    def check_scalar(self, i: int, value) -> None:
        """Check a number given for scalar argument ``i``: its kind (an int for an integer,
        a number for a float) and that it fits the type (an integer's range; a float's,
        for an int beyond every float). A float beyond the type's range is its infinity."""
        spec = self.args[i]
        where = f"kernel {self.name}: argument {i}"
        if spec.kind != "scalar":
            raise LaunchError(f"{where} is a {spec.describe()} buffer, got {summary(value)}")
        # bfloat16 is no numpy dtype without ml_dtypes; it is a float either way.
        kind = "f" if spec.dtype == "bfloat16" else np.dtype(spec.dtype).kind
        ok = (int, np.integer) if kind in "iub" else (int, float, np.integer, np.floating)
        if kind == "b":
            ok = (bool, np.bool_, int, np.integer)
        if not isinstance(value, ok):
            raise LaunchError(f"{where} is a {spec.describe()}, got {summary(value)}")
        if kind in "iu":
            info = np.iinfo(spec.dtype)
            fits = info.min <= int(value) <= info.max
        elif kind == "f" and isinstance(value, (int, np.integer)):
            try:
                float(value)
                fits = True
            except OverflowError:  # an int beyond any float
                fits = False
        else:
            fits = kind != "b" or int(value) in (0, 1)
        if not fits:
            raise LaunchError(f"{where}: {summary(value)} does not fit a {spec.describe()}")
