"""tile.copy in the CPU interpreter, against a numpy model of its meaning.

Each case builds a kernel that loads a tile from memory into registers and dumps every
thread's registers (``load``), or fills the registers from an array and stores the tile
(``store``), compiles it with ``tile_mlir.compile(..., backend="interpreter")`` (so the
whole tile lowering runs) and compares bit for bit with ``reference_load`` /
``reference_store``, which read the layout's forward map element by element. Memory is
random bit patterns (no zeros), with -0.0 and infinities among them; registers that the
layout gives a thread no element in keep a sentinel.

Origins are kernel arguments multiplied by a constant, so that the lowering can prove
(or not) their alignment; the cases cover vector and scalar variants, tiles partly and
wholly out of bounds, negative origins, replicas, threads that hold nothing, dynamic
memref dims, every exec scope and six element types.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from tile_mlir.errors import InterpreterError, LaunchError
from tile_mlir.layout import TileLayout

STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "f64": np.float64,
           "i32": np.int32, "i64": np.int64}
PADDING = {"f32": ("0xFF800000 : f32", np.float32(-np.inf)), "bf16": ("0xFF80 : bf16", np.uint16(0xFF80)),
           "f16": ("-2.5 : f16", np.float16(-2.5)), "f64": ("1.5 : f64", 1.5),
           "i32": ("-7 : i32", np.int32(-7)), "i64": ("123 : i64", np.int64(123))}
SENTINEL = {"f32": 12345.0, "f16": 1234.0, "bf16": 12288.0, "f64": 12345.0, "i32": 12345, "i64": 12345}
SCOPE_THREADS = {"thread": 1, "warp": 32, "warpgroup": 128}


def _priv(shape, dtype):
    return f"memref<{'x'.join(map(str, shape))}x{dtype}, #gpu.address_space<private>>"


def _mem(shape, dtype):
    return f"memref<{'x'.join('?' if e is None else str(e) for e in shape)}x{dtype}>"


def copy_module(direction, layout, mem_shape, dtype="f32", scope="warp", threads=32, regs=None,
                mults=None, padding=True, attrs="", dynamic=False, thread_origin=False):
    """A kernel ``k(M: memref<mem>, R: memref<threads x numel>, o0, o1, ...)``.

    load: registers <- the tile of M at origin (o_d * mults[d]); R[tid] <- registers.
    store: registers <- R[tid]; the tile of M at the origin <- registers.
    ``dynamic``: the copy sees M through a memref.cast to this shape (None: a dynamic dim).
    ``thread_origin``: origin dim 0 adds the thread id (thread scope: a tile per thread).
    """
    layout_obj = TileLayout.parse(layout)
    regs = regs or (max(layout_obj.span, 1),)
    numel = int(np.prod(regs))
    rank = len(mem_shape)
    mults = mults or [1] * rank
    mem_t, priv_t = _mem(mem_shape, dtype), _priv(regs, dtype)
    dump_t = f"memref<{threads}x{numel}x{dtype}>"
    lines = ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
             f"%cn = arith.constant {numel} : index", "%tid = gpu.thread_id x"]
    origin = []
    for d in range(rank):
        lines.append(f"%m{d} = arith.constant {mults[d]} : index")
        lines.append(f"%org{d} = arith.muli %o{d}, %m{d} : index")
        origin.append(f"%org{d}")
    if thread_origin:
        lines.append("%org0t = arith.addi %org0, %tid : index")
        origin[0] = "%org0t"
    mem = "%M"
    if dynamic:
        dyn_t = _mem(dynamic, dtype)
        lines.append(f"%D = memref.cast %M : {mem_t} to {dyn_t}")
        mem, mem_t = "%D", dyn_t
    lines.append(f"%t = memref.alloca() : {priv_t}")
    index_lines = []
    reg_index = _flat_index(regs, "%s", index_lines)
    fill = "\n".join(index_lines)
    if direction == "load":
        lines += [f"%sent = arith.constant {SENTINEL[dtype]} : {dtype}",
                  "scf.for %s = %c0 to %cn step %c1 {", fill,
                  f"  memref.store %sent, %t[{reg_index}] : {priv_t}", "}"]
    else:
        lines += ["scf.for %s = %c0 to %cn step %c1 {", fill,
                  f"  %v = memref.load %R[%tid, %s] : {dump_t}",
                  f"  memref.store %v, %t[{reg_index}] : {priv_t}", "}"]
    pad = f", padding = {PADDING[dtype][0]}" if padding and direction == "load" else ""
    dst, src = ("%t", mem) if direction == "load" else (mem, "%t")
    dst_t, src_t = (priv_t, mem_t) if direction == "load" else (mem_t, priv_t)
    lines.append(
        f'"tile.copy"({dst}, {src}, {", ".join(origin)}) {{exec_scope = "{scope}", '
        f'layout = #tile.layout<"{layout}">{pad}{attrs}}} : ({dst_t}, {src_t}{", index" * rank}) -> ()'
    )
    if direction == "load":
        lines += ["scf.for %s = %c0 to %cn step %c1 {", fill,
                  f"  %v = memref.load %t[{reg_index}] : {priv_t}",
                  f"  memref.store %v, %R[%tid, %s] : {dump_t}", "}"]
    args = ", ".join(f"%o{d}: index" for d in range(rank))
    body = "\n      ".join("\n".join(lines).splitlines())
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m [#nvvm.target<chip = "sm_90a">] {{
    gpu.func @k(%M: {_mem(mem_shape, dtype)}, %R: {dump_t}, {args}) kernel {{
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
        inner = int(np.prod(shape[k + 1:]))
        out.append(f"  %in{k} = arith.constant {inner} : index")
        out.append(f"  %ex{k} = arith.constant {shape[k]} : index")
        out.append(f"  %q{k} = arith.divui {name}, %in{k} : index")
        out.append(f"  %i{k} = arith.remui %q{k}, %ex{k} : index")
        idx.append(f"%i{k}")
    return ", ".join(idx)


def memory(rng, shape, dtype):
    """Random bit patterns of ``dtype`` (no zeros; -0.0 and infinities for floats)."""
    n = int(np.prod(shape))
    if dtype == "bf16":
        bits = rng.integers(1, 0x7F7F, n).astype(np.uint16) | (rng.integers(0, 2, n) << 15).astype(np.uint16)
        bits[::17] = 0x8000
        return bits.reshape(shape)
    if dtype[0] == "i":
        x = rng.integers(1, 1 << 30, n) * rng.choice([-1, 1], n)
        return x.astype(STORAGE[dtype]).reshape(shape)
    x = (rng.uniform(0.25, 4.0, n) * rng.choice([-1.0, 1.0], n)).astype(STORAGE[dtype])
    x[::13], x[5::29], x[7::31] = -0.0, np.inf, -np.inf
    return x.reshape(shape)


def _threads(place):
    return place.warp * 32 + place.lane


def reference_load(layout, mem, origin, threads, numel, dtype, padding=True, per_thread=False):
    """Every thread's registers after the load; ``per_thread``: thread scope, where
    thread t copies its own tile at origin + (t, 0, ...)."""
    pad = PADDING[dtype][1] if padding else 0
    out = np.full((threads, numel), SENTINEL[dtype] if dtype != "bf16" else 0x4640, STORAGE[dtype])  # 12288.0
    lay = TileLayout.parse(layout)
    for t in range(threads) if per_thread else [0]:
        for c in itertools.product(*map(range, lay.shape)):
            at = _at(origin, c, t)
            value = mem[at] if _inside(at, mem.shape) else pad
            for place in lay.forward(c):
                out[t + _threads(place), place.slot] = value
    return out


def reference_store(layout, mem, regs, origin, threads, per_thread=False):
    """Memory after the store: each element written once, from replica copy 0."""
    out = mem.copy()
    home = TileLayout(TileLayout.parse(layout).shard)  # replica copy 0
    for t in range(threads) if per_thread else [0]:
        for c in itertools.product(*map(range, home.shape)):
            at = _at(origin, c, t)
            if _inside(at, mem.shape):
                (place,) = home.forward(c)
                out[at] = regs[t + _threads(place), place.slot]
    return out


def _at(origin, c, t):
    return tuple(o + ci + (t if d == 0 else 0) for d, (o, ci) in enumerate(zip(origin, c)))


def _inside(at, shape):
    return all(0 <= a < e for a, e in zip(at, shape))


def run_case(rng, direction, layout, mem_shape, origin, dtype="f32", scope="warp", threads=32,
             mults=None, regs=None, padding=True, attrs="", dynamic=False, expect=None):
    """Compile and run one copy; compare with the reference; return the module text.
    At thread scope, thread t's origin is ``origin`` + (t, 0, ...)."""
    mults = mults or [1] * len(mem_shape)
    args = [o // m for o, m in zip(origin, mults)]
    assert [a * m for a, m in zip(args, mults)] == list(origin)
    per_thread = scope == "thread"
    text = copy_module(direction, layout, mem_shape, dtype, scope, threads, regs, mults, padding, attrs, dynamic,
                       thread_origin=per_thread)
    kernels = tile_mlir.compile(text, backend="interpreter")
    lay = TileLayout.parse(layout)
    numel = int(np.prod(regs)) if regs else max(lay.span, 1)
    mem = memory(rng, mem_shape, dtype)
    if direction == "load":
        dump = np.zeros((threads, numel), STORAGE[dtype])
        kernels.k.launch(1, threads, mem, dump, *args)
        want = reference_load(layout, mem, origin, threads, numel, dtype, padding, per_thread)
        np.testing.assert_array_equal(dump.view(f"u{dump.itemsize}"), want.view(f"u{want.itemsize}"))
    else:
        regs_in = memory(rng, (threads, numel), dtype)
        before = mem.copy()
        kernels.k.launch(1, threads, mem, regs_in, *args)
        want = reference_store(layout, before, regs_in, origin, threads, per_thread)
        np.testing.assert_array_equal(mem.view(f"u{mem.itemsize}"), want.view(f"u{want.itemsize}"))
    if expect is not None:
        lowered, _ = tile_mlir.compiler.lower_tile_ops(text)
        for needle in expect:
            assert needle in lowered, needle
    return text


@pytest.fixture
def rng():
    return np.random.default_rng(20260115)


ROW = "S[(1, (32, 8)) : (1, (1@laneid, 1))]"  # one row of 256 per warp, 8 per lane
COALESCED = "S[(1, (2, 32, 4)) : (1, (4, 1@laneid, 1))]"  # each instruction: 512 contiguous bytes
MMA = "S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]"
COLUMN = "S[(8, 32) : (1, 1@laneid)]"  # lane j holds column j
CTA_ROWS = "S[(4, (32, 4)) : (1@warpid, (1@laneid, 1))]"  # a row per warp, 4 warps


@pytest.mark.parametrize("direction", ["load", "store"])
@pytest.mark.parametrize("n", [1000, 1024])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("col", [0, 768])
def test_row_per_warp(rng, direction, n, dtype, col):
    """A warp copies 256 elements of a row, 8 per lane; at column 768 of N = 1000 the
    last 24 are out of bounds (padding, or not written)."""
    run_case(rng, direction, ROW, (6, n), (3, col), dtype, mults=[1, 256],
             expect=[f"vector<{16 // (4 if dtype == 'f32' else 2)}x{dtype}>"])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_row_out_of_bounds_and_negative_origin(rng, direction):
    """A row past the end is all padding; a negative column origin pads the front."""
    run_case(rng, direction, ROW, (6, 1000), (6, 0), mults=[1, 256])
    run_case(rng, direction, ROW, (6, 1000), (2, -128), mults=[1, 128])


@pytest.mark.parametrize("direction", ["load", "store"])
@pytest.mark.parametrize("n", [1000, 1002])
def test_coalesced_vectors(rng, direction, n):
    """Lanes interleaved at 16-byte granularity; N = 1002 has rows that are not 16-byte
    aligned: scalar accesses."""
    expect = ["vector.maskedload" if direction == "load" else "vector.maskedstore"] if n == 1000 else []
    run_case(rng, direction, COALESCED, (4, n), (1, 768), mults=[1, 256], expect=expect)


@pytest.mark.parametrize("direction", ["load", "store"])
@pytest.mark.parametrize("dtype", ["f32", "f16", "i32", "f64", "i64"])
def test_mma_like_tile_partly_out(rng, direction, dtype):
    """An mma-accumulator-like 32x8 tile at (40, 24) of a 50x30 memory: pairs of
    registers are consecutive in memory (2-element vectors), a corner is outside."""
    run_case(rng, direction, MMA, (50, 30), (40, 24), dtype, mults=[8, 8],
             expect=[f"vector<2x{dtype}>"])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_column_layout_is_scalar(rng, direction):
    run_case(rng, direction, COLUMN, (20, 40), (16, 20), mults=[4, 4], expect=["scf.if"])


@pytest.mark.parametrize("direction", ["load", "store"])
@pytest.mark.parametrize("n", [500, 512])
def test_cta_of_four_warps_over_rows(rng, direction, n):
    run_case(rng, direction, CTA_ROWS, (9, n), (6, 384), scope="cta", threads=128, mults=[2, 128])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_warpgroup(rng, direction):
    layout = "S[(4, (32, 4)) : (1@wid_in_wg, (1@laneid, 1))]"
    run_case(rng, direction, layout, (7, 200), (5, 128), scope="warpgroup", threads=128, mults=[1, 64])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_thread_and_register_replicas(rng, direction):
    """Lanes i, i+8, i+16, i+24 hold copies of row i, and slot j + 4 a copy of slot j:
    a load fills every copy, a store writes each element once (from copy 0)."""
    run_case(rng, direction, "S[(8, 4) : (1@laneid, 1)] + R[(4, 2) : (8@laneid, 4)]", (10, 12), (4, 8),
             mults=[4, 4], regs=(8,))


@pytest.mark.parametrize("direction", ["load", "store"])
def test_lanes_that_hold_nothing(rng, direction):
    """Rows on lanes 0, 8, 16 only: the other lanes' registers stay as they were."""
    run_case(rng, direction, "S[(3, 4) : (8@laneid, 1)]", (5, 9), (3, 4), mults=[1, 4])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_thread_scope_tile_per_thread(rng, direction):
    """At thread scope each thread copies its own tile: thread t the row 1 + t; the
    last thread's row is past the end."""
    run_case(rng, direction, "S[(1, 8)]", (6, 12), (1, 4), scope="thread", threads=6, mults=[1, 4], regs=(2, 4),
             expect=["vector<4xf32>"])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_register_memref_of_rank_two_and_strided_registers(rng, direction):
    """Vectors move element by element into a 2-D register memref, and into registers
    two slots apart."""
    run_case(rng, direction, ROW, (4, 1000), (1, 768), mults=[1, 256], regs=(2, 4), expect=["vector.extract"]
             if direction == "load" else ["vector.from_elements"])
    run_case(rng, direction, "S[(1, (32, 4)) : (1, (1@laneid, 2))]", (4, 132), (1, 4), mults=[1, 4], regs=(8,),
             expect=["vector<4xf32>"])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_dynamic_dims(rng, direction):
    """Through a memref.cast to dynamic dims, the bounds come from memref.dim. With a
    static row length the rows stay aligned: vectors, whole in or out."""
    run_case(rng, direction, ROW, (4, 1000), (1, 768), mults=[1, 256], dynamic=(None, 1000),
             expect=["memref.dim", "vector.broadcast"])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_dynamic_row_length(rng, direction):
    """A dynamic row length: rows are aligned only as asserted, and a vector may run past
    the end of a row (a full-vector test, then a mask per element)."""
    run_case(rng, direction, ROW, (4, 1000), (1, 768), mults=[1, 256], dynamic=(None, None),
             attrs=", alignment = 16", expect=["memref.dim", "vector.from_elements"])
    run_case(rng, direction, ROW, (4, 1000), (1, 768), mults=[1, 256], dynamic=(None, None),
             expect=["memref.dim", "scf.if"])


@pytest.mark.parametrize("direction", ["load", "store"])
def test_asserted_alignment_with_straddling_vectors(rng, direction):
    """alignment = 16 on an origin the IR cannot prove aligned: vectors, and a row
    length (1002) that is not a multiple of 4, so the last vector is split by a mask."""
    run_case(rng, direction, "S[((32, 8)) : ((1@laneid, 1))]", (1002,), (768,), attrs=", alignment = 16",
             expect=["alignment = 16", "vector.from_elements"])


def test_asserted_alignment_is_checked_by_the_interpreter(rng):
    """An origin that breaks the asserted alignment is a misaligned vector access."""
    with pytest.raises(InterpreterError, match="not aligned to 16 bytes"):
        run_case(rng, "load", "S[((32, 8)) : ((1@laneid, 1))]", (1002,), (770,), attrs=", alignment = 16")


def test_default_padding_is_zero(rng):
    run_case(rng, "load", ROW, (2, 1000), (1, 768), mults=[1, 256], padding=False)


def test_row_sum_example(rng):
    """examples/row_sum_copy.mlir: a warp per row, tile.copy chunks with zero padding,
    tile.reduce into a running sum. Checked bit for bit against the documented fold
    order, emulated in float32: per chunk each lane adds its 8 elements in order, a
    butterfly adds across the lanes (offsets 16 down to 1), and the chunk's sum is added
    to the running one."""
    text = (Path(__file__).resolve().parents[2] / "examples" / "row_sum_copy.mlir").read_text()
    kernels = tile_mlir.compile(text, backend="interpreter")
    x = memory(rng, (4096, 1000), "f32")
    x[~np.isfinite(x)] = 1.0
    y = np.zeros(4096, np.float32)
    kernels.row_sum.launch(3, 128, x, y)  # rows 0..11
    rows = np.pad(x[:12], ((0, 0), (0, 24)))  # the padding: 1024 columns
    want = np.zeros(12, np.float32)
    for chunk in rows.reshape(12, 4, 32, 8).transpose(1, 0, 2, 3):  # [row, lane, 8]
        lanes = chunk[..., 0]
        for k in range(1, 8):
            lanes = lanes + chunk[..., k]
        for offset in (16, 8, 4, 2, 1):
            lanes = lanes + lanes[:, np.arange(32) ^ offset]
        want = want + lanes[:, 0]
    np.testing.assert_array_equal(y[:12], want)
    assert not y[12:].any()
    np.testing.assert_allclose(y[:12], x[:12].astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-3)


def test_a_cta_copy_needs_its_warps():
    """A cta-scope copy over 4 warps: the kernel's signature asks for exactly 128
    threads, and a launch on 64 is refused before anything runs."""
    text = copy_module("load", CTA_ROWS, (9, 512), scope="cta", threads=128, mults=[2, 128])
    kernels = tile_mlir.compile(text, backend="interpreter")
    assert kernels.k.signature.block_threads == 128
    with pytest.raises(LaunchError, match="128"):
        kernels.k.launch(1, 64, np.ones((9, 512), np.float32), np.zeros((64, 4), np.float32), 0, 0)
