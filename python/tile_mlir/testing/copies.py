"""tile.copy cases with a numpy model of their meaning, for the CPU and the GPU suites.

Each ``CopyCase`` is one kernel (``kernel_text``): a ``load`` fills every thread's
registers with a sentinel, loads a tile from memory with ``tile.copy`` and dumps every
thread's registers to an array; a ``store`` fills the registers from an array and stores
the tile. ``CopyCase.check(backend)`` compiles it (``tile_mlir.compile``), launches one
block on random memory and compares bit for bit with ``reference_load`` /
``reference_store``, which read the layout's forward map element by element: a load
puts each element (or the padding, outside the memory) in every place that holds it,
and leaves every other register as it was; a store writes each element inside the
memory once, from its replica copy 0, and nothing else.

Origins are kernel arguments times a constant (``mults``), so that the lowering can
prove their alignment or not. ``CASES`` covers the vector and scalar variants, tiles
partly and wholly outside the memory, negative origins, replicas on threads and on
registers, threads that hold nothing, dynamic dims, every exec scope and six element
types, and ``cache = "streaming"``; ``TransposeCase`` moves a tile through workgroup memory and back with another
layout. Pure Python and numpy, like ``cases``: it runs on a GPU machine without MLIR,
from the compile cache that ``python -m tile_mlir.testing.prepare`` fills.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..layout import TileLayout
from ..vocab import DEFAULT_CHIP
from .cases import storage_dtype

# padding attribute text, and the bits a load puts in the registers
PADDING = {"f32": ("0xFF800000 : f32", np.float32(-np.inf)), "bf16": ("0xFF80 : bf16", np.uint16(0xFF80)),
           "f16": ("-2.5 : f16", np.float16(-2.5)), "f64": ("1.5 : f64", 1.5),
           "i32": ("-7 : i32", np.int32(-7)), "i64": ("123 : i64", np.int64(123))}
# what the registers hold before a load (bf16: 12288.0 is 0x4640)
SENTINEL = {"f32": 12345.0, "f16": 1234.0, "bf16": 12288.0, "f64": 12345.0, "i32": 12345, "i64": 12345}
SENTINEL_BITS = {"bf16": 0x4640}
CHIP = DEFAULT_CHIP

ROW = "S[(1, (32, 8)) : (1, (1@laneid, 1))]"  # one row of 256 per warp, 8 per lane
COALESCED = "S[(1, (2, 32, 4)) : (1, (4, 1@laneid, 1))]"  # each instruction: 512 contiguous bytes
MMA = "S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]"  # an mma accumulator
COLUMN = "S[(8, 32) : (1, 1@laneid)]"  # lane j holds column j
CTA_ROWS = "S[(4, (32, 4)) : (1@warpid, (1@laneid, 1))]"  # a row per warp, 4 warps


@dataclass(frozen=True)
class CopyCase:
    name: str
    direction: str  # "load" or "store"
    layout: str
    mem_shape: tuple[int, ...]
    origin: tuple[int, ...]  # at thread scope, thread t's is origin + (t, 0, ...)
    dtype: str = "f32"
    scope: str = "warp"
    threads: int = 32
    mults: tuple[int, ...] | None = None  # origin = argument x mult, per dim
    regs: tuple[int, ...] | None = None  # the register memref's shape (default: the span)
    padding: bool = True
    attrs: str = ""  # more attributes, ", alignment = 16"
    dynamic: tuple[int | None, ...] | None = None  # the copy sees memory cast to this shape
    expect: tuple[str, ...] = field(default=(), compare=False)  # text of the lowered IR

    @property
    def numel(self) -> int:
        return math.prod(self.regs) if self.regs else max(TileLayout.parse(self.layout).span, 1)

    @property
    def args(self) -> list[int]:
        mults = self.mults or (1,) * len(self.mem_shape)
        assert all(o % m == 0 for o, m in zip(self.origin, mults)), self.name
        return [o // m for o, m in zip(self.origin, mults)]

    def kernel_text(self, chip: str = CHIP) -> str:
        return copy_module(self, chip)

    @property
    def per_thread(self) -> bool:
        """Whether every thread copies a tile of its own: at thread scope (thread t at
        origin + (t, 0, ...)), or with a layout that names no thread axis (all at one
        origin: only loads)."""
        return self.scope == "thread" or TileLayout.parse(self.layout).axes() <= {"m"}

    def check(self, kernels, rng) -> None:
        """Launch ``kernels.k`` (this case's, compiled) on random memory and assert that
        the result is the reference's, bit for bit."""
        mem = memory(rng, self.mem_shape, self.dtype)
        per_thread = self.per_thread
        if self.direction == "load":
            dump = np.zeros((self.threads, self.numel), storage_dtype(self.dtype))
            kernels.k.launch(1, self.threads, mem, dump, *self.args)
            got, want = dump, reference_load(self, mem, per_thread)
        else:
            regs = memory(rng, (self.threads, self.numel), self.dtype)
            want = reference_store(self, mem, regs, per_thread)
            kernels.k.launch(1, self.threads, mem, regs, *self.args)
            got = mem
        bits = f"u{got.itemsize}"
        np.testing.assert_array_equal(got.view(bits), want.view(bits), err_msg=self.name)


def _priv(shape, dtype):
    return f"memref<{'x'.join(map(str, shape))}x{dtype}, #gpu.address_space<private>>"


def _mem(shape, dtype):
    return f"memref<{'x'.join('?' if e is None else str(e) for e in shape)}x{dtype}>"


def copy_module(case: CopyCase, chip: str = CHIP) -> str:
    """The kernel ``k(M: memref<mem>, R: memref<threads x numel>, o0, o1, ...)`` of a case."""
    rank, dtype, numel = len(case.mem_shape), case.dtype, case.numel
    regs = case.regs or (numel,)
    mults = case.mults or (1,) * rank
    mem_t, priv_t = _mem(case.mem_shape, dtype), _priv(regs, dtype)
    dump_t = f"memref<{case.threads}x{numel}x{dtype}>"
    lines = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
             f"%cn = arith.constant {numel} : index", "%tid = gpu.thread_id x"]
    origin = []
    for d in range(rank):
        lines += [f"%m{d} = arith.constant {mults[d]} : index", f"%org{d} = arith.muli %o{d}, %m{d} : index"]
        origin.append(f"%org{d}")
    if case.scope == "thread":  # a tile per thread: thread t at row origin + t
        lines.append("%org0t = arith.addi %org0, %tid : index")
        origin[0] = "%org0t"
    mem, copy_t = "%M", mem_t
    if case.dynamic:
        copy_t = _mem(case.dynamic, dtype)
        lines.append(f"%D = memref.cast %M : {mem_t} to {copy_t}")
        mem = "%D"
    lines.append(f"%t = memref.alloca() : {priv_t}")
    index_lines: list[str] = []
    reg_index = _flat_index(regs, "%s", index_lines)
    if case.direction == "load":
        lines += [f"%sent = arith.constant {SENTINEL[dtype]} : {dtype}",
                  "scf.for %s = %c0 to %cn step %c1 {", *index_lines,
                  f"  memref.store %sent, %t[{reg_index}] : {priv_t}", "}"]
    else:
        lines += ["scf.for %s = %c0 to %cn step %c1 {", *index_lines,
                  f"  %v = memref.load %R[%tid, %s] : {dump_t}",
                  f"  memref.store %v, %t[{reg_index}] : {priv_t}", "}"]
    pad = f", padding = {PADDING[dtype][0]}" if case.padding and case.direction == "load" else ""
    dst, src = ("%t", mem) if case.direction == "load" else (mem, "%t")
    dst_t, src_t = (priv_t, copy_t) if case.direction == "load" else (copy_t, priv_t)
    lines.append(
        f'"tile.copy"({dst}, {src}, {", ".join(origin)}) {{exec_scope = "{case.scope}", '
        f'layout = #tile.layout<"{case.layout}">{pad}{case.attrs}}} : ({dst_t}, {src_t}{", index" * rank}) -> ()'
    )
    if case.direction == "load":
        lines += ["scf.for %s = %c0 to %cn step %c1 {", *index_lines,
                  f"  %v = memref.load %t[{reg_index}] : {priv_t}",
                  f"  memref.store %v, %R[%tid, %s] : {dump_t}", "}"]
    args = ", ".join(f"%o{d}: index" for d in range(rank))
    body = "\n      ".join(lines)
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m [#nvvm.target<chip = "{chip}">] {{
    gpu.func @k(%M: {mem_t}, %R: {dump_t}, {args}) kernel {{
      {body}
      gpu.return
    }}
  }}
}}
"""


def _flat_index(shape, name, out):
    """Indices of flat slot ``name`` in a row-major memref of ``shape`` (ops to ``out``)."""
    if len(shape) == 1:
        return name
    idx = []
    for k in range(len(shape)):
        inner = math.prod(shape[k + 1:])
        out += [f"  %in{k} = arith.constant {inner} : index", f"  %ex{k} = arith.constant {shape[k]} : index",
                f"  %q{k} = arith.divui {name}, %in{k} : index", f"  %i{k} = arith.remui %q{k}, %ex{k} : index"]
        idx.append(f"%i{k}")
    return ", ".join(idx)


def memory(rng, shape, dtype) -> np.ndarray:
    """Random bit patterns of ``dtype`` (no zeros; -0.0 and infinities for floats)."""
    n = math.prod(shape)
    if dtype == "bf16":
        bits = rng.integers(1, 0x7F7F, n).astype(np.uint16) | (rng.integers(0, 2, n) << 15).astype(np.uint16)
        bits[::17] = 0x8000
        return bits.reshape(shape)
    if dtype[0] == "i":
        return (rng.integers(1, 1 << 30, n) * rng.choice([-1, 1], n)).astype(storage_dtype(dtype)).reshape(shape)
    x = (rng.uniform(0.25, 4.0, n) * rng.choice([-1.0, 1.0], n)).astype(storage_dtype(dtype))
    x[::13], x[5::29], x[7::31] = -0.0, np.inf, -np.inf
    return x.reshape(shape)


def _thread(place) -> int:
    return place.warp * 32 + place.lane


def _at(case, c, t):
    """The memory coordinate of tile coordinate ``c`` for thread ``t`` of a per-thread case."""
    shift = t if case.scope == "thread" else 0
    return tuple(o + ci + (shift if d == 0 else 0) for d, (o, ci) in enumerate(zip(case.origin, c)))


def _inside(at, shape) -> bool:
    return all(0 <= a < e for a, e in zip(at, shape))


def reference_load(case: CopyCase, mem, per_thread=False) -> np.ndarray:
    """Every thread's registers after the load; ``per_thread``: every thread copies its
    own tile (``CopyCase.per_thread``)."""
    pad = PADDING[case.dtype][1] if case.padding else 0
    out = np.full((case.threads, case.numel), SENTINEL_BITS.get(case.dtype, SENTINEL[case.dtype]), storage_dtype(case.dtype))
    layout = TileLayout.parse(case.layout)
    for t in range(case.threads) if per_thread else [0]:
        for c in itertools.product(*map(range, layout.shape)):
            at = _at(case, c, t)
            value = mem[at] if _inside(at, mem.shape) else pad
            for place in layout.forward(c):
                out[t + _thread(place), place.slot] = value
    return out


def reference_store(case: CopyCase, mem, regs, per_thread=False) -> np.ndarray:
    """Memory after the store: each element inside written once, from replica copy 0."""
    out = mem.copy()
    home = TileLayout(TileLayout.parse(case.layout).shard)  # replica copy 0
    for t in range(case.threads) if per_thread else [0]:
        for c in itertools.product(*map(range, home.shape)):
            at = _at(case, c, t)
            if _inside(at, mem.shape):
                (place,) = home.forward(c)
                out[at] = regs[t + _thread(place), place.slot]
    return out


def row_sum_reference(x: np.ndarray) -> np.ndarray:
    """The row sums of examples/row_sum_copy.mlir, in its fold order, in float32: per
    chunk of 256 columns (the last padded with zeros), each lane adds its 8 elements in
    order, a butterfly adds across the lanes (offsets 16 down to 1), and the chunk's sum
    is added to the running one (from 0)."""
    rows = x.shape[0]
    padded = np.pad(x.astype(np.float32), ((0, 0), (0, -x.shape[1] % 256)))
    total = np.zeros(rows, np.float32)
    for chunk in padded.reshape(rows, -1, 32, 8).transpose(1, 0, 2, 3):  # [row, lane, 8]
        lanes = chunk[..., 0]
        for k in range(1, 8):
            lanes = lanes + chunk[..., k]
        for offset in (16, 8, 4, 2, 1):
            lanes = lanes + lanes[:, np.arange(32) ^ offset]
        total = total + lanes[:, 0]
    return total


def _cases() -> list[CopyCase]:
    out = []

    def both(name, *args, expect_load=(), expect_store=(), **kwargs):
        out.append(CopyCase(f"{name}_load", "load", *args, expect=tuple(expect_load), **kwargs))
        out.append(CopyCase(f"{name}_store", "store", *args, expect=tuple(expect_store), **kwargs))

    for n, dtype, col in itertools.product((1000, 1024), ("f32", "bf16"), (0, 768)):
        # at column 768 of N = 1000 the last 24 elements are outside
        vec = (f"vector<{16 // (4 if dtype == 'f32' else 2)}x{dtype}>",)
        both(f"row_{dtype}_n{n}_col{col}", ROW, (6, n), (3, col), dtype, mults=(1, 256), expect_load=vec,
             expect_store=vec)
    both("row_past_the_end", ROW, (6, 1000), (6, 0), mults=(1, 256))
    both("row_negative_origin", ROW, (6, 1000), (2, -128), mults=(1, 128))
    both("coalesced_n1000", COALESCED, (4, 1000), (1, 768), mults=(1, 256),
         expect_load=("vector.maskedload",), expect_store=("vector.maskedstore",))
    both("coalesced_n1002_scalar", COALESCED, (4, 1002), (1, 768), mults=(1, 256))  # rows 4-byte aligned only
    for dtype in ("f32", "f16", "i32", "f64", "i64"):  # a corner outside; pairs of registers as vectors
        both(f"mma_{dtype}", MMA, (50, 30), (40, 24), dtype, mults=(8, 8), expect_load=(f"vector<2x{dtype}>",))
    both("column_scalar", COLUMN, (20, 40), (16, 20), mults=(4, 4), expect_load=("scf.if",))
    for n in (500, 512):
        both(f"cta_rows_n{n}", CTA_ROWS, (9, n), (6, 384), scope="cta", threads=128, mults=(2, 128))
    both("warpgroup_rows", "S[(4, (32, 4)) : (1@wid_in_wg, (1@laneid, 1))]", (7, 200), (5, 128),
         scope="warpgroup", threads=128, mults=(1, 64))
    both("warpgroup_tid", "S[(1, (128, 2)) : (1, (1@tid_in_wg, 1))]", (3, 300), (2, 100),
         scope="warpgroup", threads=128, mults=(1, 2))
    # lanes i, i+8, i+16, i+24 and slots j, j+4 hold copies of one element
    both("replicas", "S[(8, 4) : (1@laneid, 1)] + R[(4, 2) : (8@laneid, 4)]", (10, 12), (4, 8),
         mults=(4, 4), regs=(8,))
    both("lanes_hold_nothing", "S[(3, 4) : (8@laneid, 1)]", (5, 9), (3, 4), mults=(1, 4))
    both("thread_scope", "S[(1, 8)]", (6, 12), (1, 4), scope="thread", threads=6, mults=(1, 4), regs=(2, 4),
         expect_load=("vector<4xf32>",))
    both("registers_2d", ROW, (4, 1000), (1, 768), mults=(1, 256), regs=(2, 4),
         expect_load=("vector.extract",), expect_store=("vector.from_elements",))
    both("registers_strided", "S[(1, (32, 4)) : (1, (1@laneid, 2))]", (4, 132), (1, 4), mults=(1, 4),
         regs=(8,), expect_load=("vector<4xf32>",))
    both("dynamic_rows", ROW, (4, 1000), (1, 768), mults=(1, 256), dynamic=(None, 1000),
         expect_load=("memref.dim", "vector.broadcast"))
    both("dynamic_row_length_asserted", ROW, (4, 1000), (1, 768), mults=(1, 256), dynamic=(None, None),
         attrs=", alignment = 16", expect_load=("memref.dim", "vector.from_elements"))
    both("dynamic_row_length", ROW, (4, 1000), (1, 768), mults=(1, 256), dynamic=(None, None),
         expect_load=("memref.dim", "scf.if"))
    both("asserted_straddle", "S[((32, 8)) : ((1@laneid, 1))]", (1002,), (768,), attrs=", alignment = 16",
         expect_load=("alignment = 16", "vector.from_elements"))
    out.append(CopyCase("default_padding_load", "load", ROW, (2, 1000), (1, 768), mults=(1, 256), padding=False))
    # a layout with no thread axis is one thread's tile: at warp scope every lane loads it
    out.append(CopyCase("warp_scope_one_thread_tile_load", "load", "S[(2, 4)]", (3, 8), (2, 4), mults=(1, 4),
                        regs=(2, 4)))
    # cache = "streaming": the same accesses, each marked for tile-cache-hints, which on the
    # GPU path makes them inline ld/st.global.cs: whole-vector masks (predicated), 16-, 8-
    # and 4-byte vectors, 4-byte scalars, a dynamic row length (strides from the memref),
    # and vectors that may cross the row's end (a store's per-element mask stays plain)
    streaming = ("row_f32_n1000_col768", "row_bf16_n1000_col768", "row_past_the_end", "mma_f16", "mma_i64",
                 "mma_f64", "coalesced_n1002_scalar", "thread_scope", "dynamic_row_length", "asserted_straddle",
                 "cta_rows_n500")
    for case in [c for c in out if c.name.rsplit("_", 1)[0] in streaming]:
        out.append(dataclasses.replace(case, name=f"{case.name}_streaming", attrs=case.attrs + ', cache = "streaming"',
                                       expect=('tile.cache = "streaming"',)))
    return out


CASES = _cases()


# A 32 x 32 tile transposed through workgroup memory by one warp: tile.copy loads it
# from X (16-byte vectors), stores it to workgroup memory with the same layout (16-byte
# vectors: the memref.global is 16-byte aligned), and, after a barrier, loads it back
# with the layout whose lanes hold columns (scalar), and stores that to Y with the dims
# swapped (vectors again). Y = X^T, for a grid of 2 x 2 blocks over a 64 x 64 matrix.
_ROWS = "S[((8, 4), (8, 4)) : ((4, 8@laneid), (1@laneid, 1))]"  # rows over lanes 8 apart, 4 columns per lane
_COLUMNS = "S[((8, 4), (8, 4)) : ((1@laneid, 1), (4, 8@laneid))]"  # the same, for the transposed tile


@dataclass(frozen=True)
class TransposeCase:
    name: str = "transpose_through_workgroup"
    expect: tuple[str, ...] = ("vector.maskedstore", "memref.get_global")

    def kernel_text(self, chip: str = CHIP) -> str:
        tile = "memref<32xf32, #gpu.address_space<private>>"
        shared = "memref<32x32xf32, #gpu.address_space<workgroup>>"
        copy = '"tile.copy"({dst}, {src}, {i}, {j}) {{exec_scope = "warp", layout = #tile.layout<"{layout}">}} : ({dt}, {st}, index, index) -> ()'
        g = "memref<64x64xf32>"
        return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m [#nvvm.target<chip = "{chip}">] {{
    memref.global "private" @tile_w : {shared} {{alignment = 16 : i64}}
    gpu.func @k(%X: {g}, %Y: {g}) kernel attributes {{known_block_size = array<i32: 32, 1, 1>}} {{
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %row = arith.muli %by, %c32 : index
      %col = arith.muli %bx, %c32 : index
      %w = memref.get_global @tile_w : {shared}
      %a = memref.alloca() : {tile}
      %b = memref.alloca() : {tile}
      {copy.format(dst="%a", src="%X", i="%row", j="%col", layout=_ROWS, dt=tile, st=g)}
      {copy.format(dst="%w", src="%a", i="%c0", j="%c0", layout=_ROWS, dt=shared, st=tile)}
      gpu.barrier
      {copy.format(dst="%b", src="%w", i="%c0", j="%c0", layout=_COLUMNS, dt=tile, st=shared)}
      {copy.format(dst="%Y", src="%b", i="%col", j="%row", layout=_ROWS, dt=g, st=tile)}
      gpu.return
    }}
  }}
}}
"""

    def check(self, kernels, rng) -> None:
        x = memory(rng, (64, 64), "f32")
        y = np.zeros((64, 64), np.float32)
        kernels.k.launch((2, 2), 32, x, y)
        np.testing.assert_array_equal(y.view(np.uint32), x.T.view(np.uint32), err_msg=self.name)


CASES.append(TransposeCase())
