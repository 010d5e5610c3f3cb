"""The shared vocabulary: each name that more than one part of tile-mlir uses, once.

Kinds, exec scopes, element types, the warp's geometry, memory spaces, fold orders and
chips are defined here and nowhere else. Pure Python: the launch half (no MLIR) and
the compile half both import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import OptionError

# --- tile.reduce ---------------------------------------------------------------------

KINDS = ("sum", "max", "min", "maximum", "minimum")
SCOPES = ("thread", "warp", "warpgroup", "cta", "cluster")
FLOAT_DTYPES = ("f32", "f16", "bf16", "f64")
INT_DTYPES = ("i32", "i64")
DTYPES = FLOAT_DTYPES + INT_DTYPES
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8}

# Every attribute tile.reduce knows (the dialect declares the required ones; the
# optional ones cannot be declared in IRDL, so tile-verify checks them).
REDUCE_ATTRIBUTES = ("kind", "exec_scope", "axes", "accum", "src_layout", "dst_layout", "dispatch")

# --- tile.copy -----------------------------------------------------------------------

# The exec scopes of tile.copy: a copy never spans the CTAs of a cluster.
COPY_SCOPES = ("thread", "warp", "warpgroup", "cta")

# Every attribute tile.copy knows; exec_scope is required (the dialect declares it).
COPY_ATTRIBUTES = ("exec_scope", "layout", "padding", "alignment", "dispatch")

# The widest vector access a thread makes: 16 bytes (ld.global.v4.f32, LDG.E.128).
MAX_VECTOR_BYTES = 16

# --- threads -------------------------------------------------------------------------

WARP_SIZE = 32
LANE_BITS = 5  # log2(WARP_SIZE): lane indices have bits 0..4
WARPGROUP_WARPS = 4
WARPGROUP_SIZE = WARP_SIZE * WARPGROUP_WARPS
MAX_BLOCK_THREADS = 1024

# A thread-block cluster (sm_90+): at most 8 CTAs portably, 16 with the non-portable
# size the driver allows on request (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED).
MAX_CLUSTER_CTAS = 16
MAX_PORTABLE_CLUSTER_CTAS = 8
# In a layout's thread index, a CTA of a cluster counts as MAX_BLOCK_THREADS threads:
# thread = lane + 32 * warp + 1024 * cta_in_cluster, so the CTA bits are bits 10-13.
CTA_BITS_BASE = (MAX_BLOCK_THREADS - 1).bit_length()

# The layout axes: ``m`` is the register slot, the others are thread axes.
AXES = ("m", "laneid", "warpid", "wid_in_wg", "tid_in_wg", "cta_in_cluster")
THREAD_AXES = AXES[1:]

# Threads in one instance of each exec scope (at most, for a cta: the block decides; for
# a cluster: its CTAs of up to 1024 threads each), and the layout axes it may use.
SCOPE_THREADS = {"thread": 1, "warp": WARP_SIZE, "warpgroup": WARPGROUP_SIZE, "cta": MAX_BLOCK_THREADS,
                 "cluster": MAX_CLUSTER_CTAS * MAX_BLOCK_THREADS}
SCOPE_AXES = {
    "thread": ("m",),
    "warp": ("m", "laneid"),
    "warpgroup": ("m", "laneid", "wid_in_wg", "tid_in_wg"),
    "cta": ("m", "laneid", "warpid"),
    "cluster": ("m", "laneid", "warpid", "cta_in_cluster"),
}

# Named barriers the lowering uses for warpgroup-scope ops: warpgroup w of a block
# synchronises its 128 threads on barrier FIRST_NAMED_BARRIER + w (PTX bar.sync id, 128).
# Barrier 0 is the block's (gpu.barrier, __syncthreads).
FIRST_NAMED_BARRIER = 8

# The most register slots one thread's tile may span. A larger tile cannot stay in
# registers (the hardware has 255 32-bit registers per thread), and the lowering
# unrolls every loop over it; tile-verify rejects it.
MAX_REGISTERS = 1024

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# The largest offset + 1 each layout axis may reach: what the hardware has.
AXIS_LIMITS = {
    "m": MAX_REGISTERS,
    "laneid": WARP_SIZE,
    "wid_in_wg": WARPGROUP_WARPS,
    "tid_in_wg": WARPGROUP_SIZE,
    "warpid": MAX_BLOCK_THREADS // WARP_SIZE,
    "cta_in_cluster": MAX_CLUSTER_CTAS,
}

# The canonical NaN of each float type, as NVIDIA GPUs return it from f32/f16/bf16
# arithmetic: positive, every payload bit set. Every NaN a reduction returns is this one.
CANONICAL_NAN_BITS = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}


def shared_group_size(elements: int, reduced: int, threads: int) -> int:
    """G, the lanes that reduce one dst element together in the ``shared`` variant
    (docs/lowering-shared.md): the smallest power of two with ``elements * G >= threads``
    (every thread of the scope gets work), but at most 32 (a group stays in one warp),
    at most ``reduced`` (every lane has an element to fold) and a divisor of ``threads``
    (no thread is left over). Here because the numpy model of the fold order
    (``tile_mlir.testing.shared_cases``) needs it too, without MLIR."""
    g = 1
    while g * elements < threads and 2 * g <= min(WARP_SIZE, reduced) and threads % (2 * g) == 0:
        g *= 2
    return g


# --- memory --------------------------------------------------------------------------

# #gpu.address_space<NAME> -> the storage scope the dialect calls it; no memory
# space at all is "global" too.
ADDRESS_SPACES = {"private": "local", "workgroup": "shared", "global": "global"}
STORAGE_SPACES = {storage: name for name, storage in ADDRESS_SPACES.items()}


# The bytes a global memref's base address is assumed aligned to: tile.copy's vector
# accesses rely on it (docs/spec.md, "tile.copy"), cudaMalloc and numpy give at least
# that, and a launch checks it (``KernelSignature``'s ``ArgSpec.align``).
GLOBAL_BASE_ALIGN = 16


# Shared memory per block: what a launch gets without asking (static and dynamic
# together), and the most a kernel may opt into (``cuFuncSetAttribute``) on sm_90 and
# sm_100, 227 KB, which the interpreter allows too. A launch's ``shared_mem`` above what
# is left of the first needs the opt-in; above what is left of the second, a LaunchError.
DEFAULT_SHARED_BYTES_PER_BLOCK = 48 * 1024
MAX_SHARED_BYTES_PER_BLOCK = 227 * 1024


def address_space(storage: str) -> str:
    """The memory-space attribute text of a storage scope: ``local`` ->
    ``#gpu.address_space<private>``."""
    return f"#gpu.address_space<{STORAGE_SPACES[storage]}>"


# MLIR element type -> numpy dtype name. bf16 has no numpy dtype: a bf16 buffer is
# passed as uint16 holding the bits (or an ml_dtypes.bfloat16 array).
MLIR_TO_NUMPY = {
    "f32": "float32",
    "f64": "float64",
    "f16": "float16",
    "bf16": "bfloat16",
    "i32": "int32",
    "i64": "int64",
    "i16": "int16",
    "i8": "int8",
    "i1": "bool",
    "index": "int64",
}

# --- lowering options ----------------------------------------------------------------

FOLDS = ("linear", "tree")
DEFAULT_FOLD = "linear"
DEFAULT_CHIP = "sm_90a"

_CHIP = re.compile(r"sm_(\d+)(\d)([af]?)")


@dataclass(frozen=True)
class Chip:
    """An NVIDIA chip as ``-arch`` spells it: ``sm_90a`` is major 9, minor 0, suffix a.

    ``sm`` is the compute capability as one number (90). An arch-specific chip
    (``a``) runs only on exactly its capability; a plain (``sm_86``) or family
    (``sm_100f``) chip on the same major with an equal or higher minor.
    """

    name: str
    major: int
    minor: int
    suffix: str = ""

    @classmethod
    def parse(cls, name: str) -> "Chip":
        m = _CHIP.fullmatch(name or "")
        if m is None:
            raise OptionError(f"chip must look like sm_90a or sm_80, got {name!r}")
        return cls(name, int(m[1]), int(m[2]), m[3])

    @property
    def sm(self) -> int:
        return self.major * 10 + self.minor

    def runs_on(self, capability: tuple[int, int]) -> bool:
        """Whether code built for this chip runs on a device of ``capability``."""
        if self.suffix == "a":
            return (self.major, self.minor) == tuple(capability)
        return self.major == capability[0] and self.minor <= capability[1]
