"""The shared vocabulary: each name that more than one part of tile-mlir uses, once.

Kinds, exec scopes, element types, the warp's geometry, memory spaces, fold orders and
chips are defined here and nowhere else. Pure Python: the launch half (no MLIR) and
the compile half both import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from .errors import OptionError

# --- tile.reduce ---------------------------------------------------------------------

# The named kinds: one operand, combined with one fixed operation.
KINDS = ("sum", "max", "min", "maximum", "minimum")
# argmax/argmin: one src, two dsts (the value and its index, which the lowering generates).
ARG_KINDS = ("argmax", "argmin")
REDUCE_KINDS = KINDS + ARG_KINDS
# A reduction of k operand pairs (k dsts, then k srcs) with a combiner is the op
# tile.reduce for k = 1 and tile.reduce<k> for k = 2 .. MAX_OPERAND_PAIRS: one op per k,
# since IRDL gives every operand of a variadic group one type (dialect/tile.irdl.mlir).
MAX_OPERAND_PAIRS = 8
REDUCE_OPS = ("tile.reduce",) + tuple(f"tile.reduce{k}" for k in range(2, MAX_OPERAND_PAIRS + 1))


def reduce_op_name(pairs: int) -> str:
    """The op that reduces ``pairs`` operand pairs: ``tile.reduce``, ``tile.reduce2`` ..."""
    return "tile.reduce" if pairs == 1 else f"tile.reduce{pairs}"


# The element types an argmax/argmin index may have (i64 where the reduced count needs it).
INDEX_DTYPES = ("i32", "i64")
SCOPES = ("thread", "warp", "warpgroup", "cta", "cluster")
FLOAT_DTYPES = ("f32", "f16", "bf16", "f64")
INT_DTYPES = ("i32", "i64")
DTYPES = FLOAT_DTYPES + INT_DTYPES
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i64": 8}

# Every attribute tile.reduce knows (the dialect declares the required ones; the
# optional ones cannot be declared in IRDL, so tile-verify checks them).
REDUCE_ATTRIBUTES = ("kind", "combiner", "exec_scope", "axes", "accum", "fold", "src_layout", "dst_layout", "dispatch")


def reduce_operand_roles(count: int, kind: str | None = None) -> tuple[str, ...]:
    """What each of a ``tile.reduce``'s ``count`` operands is: ``dst, src`` for two;
    ``dst 0 (value), dst 1 (index), src`` for an argmax/argmin; k dsts then k srcs
    (``dst 0 .. dst k-1, src 0 .. src k-1``) for a combiner."""
    if count == 2:
        return ("dst", "src")
    if kind in ARG_KINDS or (kind is None and count == 3):
        return ("dst 0 (value)", "dst 1 (index)", "src")[:count] + tuple(f"operand {i}" for i in range(3, count))
    half = count // 2
    return tuple(f"dst {i}" for i in range(half)) + tuple(f"src {i}" for i in range(count - half))

# --- tile.copy -----------------------------------------------------------------------

# The exec scopes of tile.copy: a copy never spans the CTAs of a cluster.
COPY_SCOPES = ("thread", "warp", "warpgroup", "cta")

# Every attribute tile.copy knows; exec_scope is required (the dialect declares it).
COPY_ATTRIBUTES = ("exec_scope", "layout", "padding", "alignment", "cache", "dispatch")

# tile.copy's ``cache`` values and the PTX cache operator each gives its global accesses
# (``ld.global.cs``, ``st.global.cs``: tile-cache-hints). "streaming": the data is touched
# once, so it is the first to go from L1 and L2 (docs/spec.md, "tile.copy").
CACHE_OPERATORS = {"streaming": "cs"}
CACHE_MARK = "tile.cache"  # the attribute tile-lower-copy puts on each access of such a copy

# The widest vector access a thread makes: 16 bytes (ld.global.v4.f32, LDG.E.128).
MAX_VECTOR_BYTES = 16

LOG2E = 1.4426950408889634  # log2(e): the kernels' exp(x) is exp2(x · LOG2E) (kernels.rows.Rows.exp)

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


class Fold(str, Enum):
    """The in-thread fold order (docs/spec.md, "Fold order"). A ``str``: ``Fold.TREE ==
    "tree"``, and it prints as its value."""

    LINEAR = "linear"
    TREE = "tree"

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__

    @classmethod
    def parse(cls, text) -> "Fold":
        """The fold that ``text`` names; an OptionError otherwise."""
        try:
            return cls(text)
        except ValueError:
            raise OptionError(f"fold must be {' or '.join(FOLDS)}, got {text!r}") from None


FOLDS = tuple(fold.value for fold in Fold)
DEFAULT_FOLD = Fold.LINEAR

# --- chips and targets ---------------------------------------------------------------

# The chip tile-mlir compiles for where nothing names one (a gpu.module without a target,
# build.kernel, the demo): the H200's.
DEFAULT_CHIP = "sm_90a"

# The chip MLIR's #nvvm.target means where it names none. Its printer leaves a default
# out, so `#nvvm.target` and `#nvvm.target<chip = "sm_50">` are one and the same.
NVVM_DEFAULT_CHIP = "sm_50"

# The chips LLVM 22's NVPTX backend knows, each with the PTX ISA version (x10) it writes
# for that chip where the target's features name none: the oldest PTX ISA that has it.
# Measured: the `.version` line of `tile-opt --tile-to-ptx` for each chip.
CHIP_PTX = {
    "sm_20": 32, "sm_21": 32, "sm_30": 32, "sm_32": 40, "sm_35": 32, "sm_37": 41,
    "sm_50": 40, "sm_52": 41, "sm_53": 42, "sm_60": 50, "sm_61": 50, "sm_62": 50,
    "sm_70": 60, "sm_72": 61, "sm_75": 63, "sm_80": 70, "sm_86": 71, "sm_87": 74,
    "sm_88": 90, "sm_89": 78, "sm_90": 78, "sm_90a": 80,
    "sm_100": 86, "sm_100a": 86, "sm_100f": 88, "sm_101": 86, "sm_101a": 86, "sm_101f": 88,
    "sm_103": 88, "sm_103a": 88, "sm_103f": 88, "sm_110": 90, "sm_110a": 90, "sm_110f": 90,
    "sm_120": 87, "sm_120a": 87, "sm_120f": 88, "sm_121": 88, "sm_121a": 88, "sm_121f": 88,
}

# What the instruction behind each NVVM op needs of its target, (PTX ISA x10, sm), as
# LLVM 22's NVPTX backend requires it (NVPTXIntrinsics.td: Requires<[hasPTX<N>, SMn]>).
# LLVM aborts the whole process on an op its target cannot select; tile-check-target
# reports the op instead. These are the ops the lowering emits, and their kin.
NVVM_OP_NEEDS = {
    "nvvm.shfl.sync": (60, 30),  # shfl.sync
    "nvvm.bar.warp.sync": (60, 30),  # bar.warp.sync
    "nvvm.vote.sync": (60, 30),  # vote.sync
    "nvvm.match.sync": (60, 70),  # match.sync
    "nvvm.redux.sync": (70, 80),  # redux.sync
    "nvvm.mapa": (78, 90),  # mapa
    "nvvm.cluster.arrive": (78, 90),  # barrier.cluster.arrive
    "nvvm.cluster.arrive.relaxed": (80, 90),  # barrier.cluster.arrive.relaxed
    "nvvm.cluster.wait": (78, 90),  # barrier.cluster.wait
    "nvvm.read.ptx.sreg.cluster.ctarank": (78, 90),  # %cluster_ctarank
    "nvvm.elect.sync": (80, 90),  # elect.sync
}

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
    def parse(cls, name) -> "Chip":
        """The chip ``name`` spells (a Chip is itself); an OptionError otherwise."""
        if isinstance(name, Chip):
            return name
        m = _CHIP.fullmatch(name) if isinstance(name, str) else None
        if m is None:
            raise OptionError(f"chip must look like sm_90a or sm_80, got {name!r}")
        return cls(name, int(m[1]), int(m[2]), m[3])

    def __str__(self) -> str:
        return self.name

    @property
    def sm(self) -> int:
        return self.major * 10 + self.minor

    @property
    def nvvm_target(self) -> str:
        """The target attribute that compiles for this chip: ``#nvvm.target<chip = "sm_90a">``."""
        return f'#nvvm.target<chip = "{self.name}">'

    def runs_on(self, capability: tuple[int, int]) -> bool:
        """Whether code built for this chip runs on a device of ``capability``."""
        if self.suffix == "a":
            return (self.major, self.minor) == tuple(capability)
        return self.major == capability[0] and self.minor <= capability[1]

    @classmethod
    def of_op(cls, op, chip: "Chip | None" = None) -> "Chip | None":
        """The chip ``op`` is compiled for (``Target.of_op``)."""
        return Target.of_op(op, chip).chip


_ATTR_STRING = r'\b{}\s*=\s*"([^"]*)"'


@dataclass(frozen=True)
class Target:
    """What a gpu.module's code is compiled for: the one reading of a target attribute,
    which the lowering passes, tile-check-target and the compiler all use.

    ``kind`` is ``cuda`` for an ``#nvvm.target``, else the attribute's dialect
    (``rocdl``). ``chip`` is the chip it names (``NVVM_DEFAULT_CHIP`` where it names none),
    ``features_ptx`` the PTX ISA (x10) its features ask for (``+ptx80``), if any.
    ``problem`` says why LLVM cannot compile for it (a chip it does not know, a PTX ISA
    too old for the chip), or is None.
    """

    kind: str
    chip: Chip | None = None
    features_ptx: int | None = None
    problem: str | None = None

    @property
    def ptx(self) -> int | None:
        """The PTX ISA (x10) LLVM writes: the features', else the chip's (``CHIP_PTX``)."""
        if self.features_ptx is not None:
            return self.features_ptx
        return CHIP_PTX.get(self.chip.name) if self.chip is not None else None

    @classmethod
    def of_attribute(cls, text: str) -> "Target":
        """The target a target attribute's text describes."""
        if not text.startswith("#nvvm.target"):
            return cls(text.lstrip("#").split("<")[0].split(".")[0] or "unknown")
        named = re.search(_ATTR_STRING.format("chip"), text)
        name = named.group(1) if named else NVVM_DEFAULT_CHIP
        features = re.search(_ATTR_STRING.format("features"), text)
        ptx = re.search(r"\+ptx(\d+)", features.group(1)) if features else None
        ptx = int(ptx.group(1)) if ptx else None
        try:
            chip = Chip.parse(name)
        except OptionError:
            return cls("cuda", None, ptx, f'the #nvvm.target chip "{name}" is not an -arch name '
                                          "(sm_90a, sm_80, sm_100f ...)")
        if name not in CHIP_PTX:
            return cls("cuda", chip, ptx, f"LLVM's NVPTX backend knows no chip {name}; it knows "
                                          f"{', '.join(CHIP_PTX)}")
        if ptx is not None and ptx < CHIP_PTX[name]:
            return cls("cuda", chip, ptx, f"PTX ISA {_isa(ptx)} (the #nvvm.target's features) has no {name}: "
                                          f"it needs PTX ISA {_isa(CHIP_PTX[name])} or newer")
        return cls("cuda", chip, ptx)

    @classmethod
    def of_gpu_module(cls, module) -> "Target | None":
        """The target of a gpu.module (an MLIR op): its first target attribute; None
        when it has none."""
        if "targets" not in module.attributes or not len(module.attributes["targets"]):
            return None
        return cls.of_attribute(str(module.attributes["targets"][0]))

    @classmethod
    def of_op(cls, op, chip: Chip | None = None) -> "Target":
        """The target of ``op``: that of the closest enclosing gpu.module with a target,
        else ``cuda`` for ``chip`` (the ``chip`` option; None: no chip)."""
        module = gpu_module_of(op)
        return (cls.of_gpu_module(module) if module is not None else None) or cls("cuda", chip)

    def lacks(self, op_name: str) -> str | None:
        """Why this target cannot run the NVVM op ``op_name`` (``NVVM_OP_NEEDS``), or None."""
        need = NVVM_OP_NEEDS.get(op_name)
        if need is None or self.chip is None or self.ptx is None:
            return None
        ptx, sm = need
        if self.chip.sm >= sm and self.ptx >= ptx:
            return None
        where = (f"{self.chip} at PTX ISA {_isa(self.ptx)}"
                 + ("" if self.features_ptx is not None else f" (LLVM's default for {self.chip})"))
        fix = f"a chip of sm_{sm} or newer" if self.chip.sm < sm else \
            f'features = "+ptx{ptx}" on the #nvvm.target, or a newer chip'
        return f"needs sm_{sm} and PTX ISA {_isa(ptx)}, but the gpu.module's target is {where}: name {fix}"


def _isa(ptx: int) -> str:
    return f"{ptx // 10}.{ptx % 10}"


def gpu_module_of(op):
    """The closest gpu.module with a target attribute that encloses ``op`` (an MLIR op),
    or None."""
    parent = op.parent
    while parent is not None:
        parent = getattr(parent, "operation", parent)
        if parent.name == "gpu.module" and "targets" in parent.attributes:
            return parent
        parent = parent.parent
    return None
