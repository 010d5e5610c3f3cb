"""Kept thread iters and the exchange across threads (docs/spec.md, "Validity", rule 7).

A reduction across threads pairs thread t with t xor 2^b for each reduced thread bit b.
Kept thread iters may have any extent and stride, but their sum, or a sum with a src
replica iter, can set a reduced bit: then the exchange mixes a coordinate's partials
with another thread's. Such ops used to be accepted and computed wrong answers (in the
interpreter as on the H200); now tile-verify rejects them with the coordinate, its
threads, the bit and the partner. Valid non-power-of-two kept layouts still run, and
are checked here against the numpy model of ``ReduceCase`` (float64, or int64 wrapped)
on fresh random inputs. The check costs a pass over the scope's threads, never over the
registers: a 16-CTA cluster layout of 1024 registers per thread checks in milliseconds.
"""

import time

import numpy as np
import pytest
import tile_mlir
from tile_mlir.analysis import analyze
from tile_mlir.analysis_exchange import exchange_problems, kept_threads
from tile_mlir.errors import CompileError
from tile_mlir.ir import find_ops, ir, make_context
from tile_mlir.layout import TileLayout
from tile_mlir.testing.cases import ReduceCase


@pytest.fixture
def rng():
    return np.random.default_rng()


def case(name, scope, axes, src, dst, kind="sum", dtype="f32", accum=False):
    spans = ((TileLayout.parse(text).span,) for text in (src, dst))
    return ReduceCase(name, kind, dtype, scope, axes, accum, *spans, src, dst)


def run(c: ReduceCase, rng) -> list[str]:
    """Launch ``c`` in the interpreter on random inputs; the mismatches with numpy."""
    x, old = c.random_inputs(rng)
    b = c.output_buffer(old if c.accum else None)
    kernel = tile_mlir.compile(c.kernel_text(), backend="interpreter", cache=False)[c.name]
    kernel.launch(c.grid(), c.block(), c.pack(x), b)
    return c.check(x, old if c.accum else None, b)


# The three layouts: each used to give wrong values (2 of 12 dst places at warp
# scope, 64 of 384 at cta scope).
CARRIES = [
    (case("warp_kept_sum", "warp", (2,), "S[((3), (2), 2) : ((3@laneid), (4@laneid), 8@laneid)]",
          "S[((3), (2)) : ((3@laneid), (4@laneid))] + R[2 : 8@laneid]", dtype="i32"),
     "dst coordinate (2, 1) is held by threads {10, 18}, but reduced bit 3 pairs thread 10 with thread 2, "
     "which holds no element: its kept thread iters add up to thread 10, which has reduced bit(s) {3} set"),
    (case("warp_kept_replica", "warp", (1,), "S[((3), 2) : ((3@laneid), 8@laneid)] + R[2 : 4@laneid]",
          "S[(3) : (3@laneid)] + R[(2, 2) : (4@laneid, 8@laneid)]", dtype="i32"),
     "dst coordinate (2) (replica copy 1) is held by threads {10, 18}, but reduced bit 3 pairs thread 10 "
     "with thread 2, which holds no element: its kept and replica thread iters add up to thread 10"),
    (case("cta_kept_warps", "cta", (2,), "S[(3, 2, 2, 32) : (3@warpid, 4@warpid, 8@warpid, 1@laneid)]",
          "S[(3, 2, 32) : (3@warpid, 4@warpid, 1@laneid)] + R[2 : 8@warpid]", dtype="i32"),
     "dst coordinate (2, 1, 0) is held by threads {320, 576}, but reduced bit 8 pairs thread 320 with "
     "thread 64, which holds no element"),
]


@pytest.mark.parametrize("c, reason", CARRIES, ids=[c.name for c, _ in CARRIES])
def test_a_kept_sum_that_reaches_a_reduced_bit_is_rejected_at_the_op(c, reason):
    with pytest.raises(CompileError) as e:
        tile_mlir.compile(c.kernel_text(), backend="interpreter", cache=False)
    assert "tile-verify" in str(e.value) and "'tile.reduce' op src_layout: " + reason in str(e.value)
    assert ":12:7: error:" in str(e.value)  # the op's line


# Valid layouts with non-power-of-two kept iters, alone, summed, with a replica, at every
# scope that exchanges: each reduces right.
VALID = [
    case("lanes3", "warp", (1,), "S[(3, 8) : (1@laneid, 4@laneid)]", "S[3 : 1@laneid] + R[8 : 4@laneid]"),
    case("lanes3_stride3", "warp", (1,), "S[(3, (4, 2)) : (3@laneid, (8@laneid, 1))]",
         "S[3 : 3@laneid] + R[4 : 8@laneid]", kind="max", dtype="f64"),
    case("kept_sum_below", "warp", (2,), "S[((3), (2), 2) : ((3@laneid), (4@laneid), 16@laneid)]",
         "S[((3), (2)) : ((3@laneid), (4@laneid))] + R[2 : 16@laneid]", dtype="i32", accum=True),
    case("kept_replica_below", "warp", (1,), "S[((3), 2) : ((3@laneid), 16@laneid)] + R[2 : 8@laneid]",
         "S[(3) : (3@laneid)] + R[(2, 2) : (8@laneid, 16@laneid)]", kind="min", dtype="bf16"),
    # The kept sums reach a replica bit (5 = 3 + 2 has bit 2): valid, and right within a warp.
    case("kept_sum_on_replica_bit", "warp", (2,), "S[(2, 2, 2) : (3@laneid, 2@laneid, 16@laneid)] + R[2 : 4@laneid]",
         "S[(2, 2) : (3@laneid, 2@laneid)] + R[(2, 2) : (4@laneid, 16@laneid)]", dtype="i64"),
    case("wg_tid5", "warpgroup", (1,), "S[(5, (4, 2)) : (1@tid_in_wg, (1@wid_in_wg, 1))]",
         "S[5 : 1@tid_in_wg] + R[4 : 1@wid_in_wg]", kind="maximum", dtype="f16"),
    case("cta_warps3", "cta", (1,), "S[(3, 2, 32) : (1@warpid, 4@warpid, 1@laneid)]",
         "S[(3, 32) : (1@warpid, 1@laneid)] + R[2 : 4@warpid]", accum=True),
    case("cluster_lanes3", "cluster", (1,), "S[(3, (2, 2)) : (1@laneid, (1@cta_in_cluster, 1))]",
         "S[3 : 1@laneid] + R[2 : 1@cta_in_cluster]", dtype="i32"),
]


@pytest.mark.parametrize("c", VALID, ids=[c.name for c in VALID])
def test_valid_uneven_kept_layouts_reduce_right(c, rng):
    assert run(c, rng) == []


def test_a_kept_sum_on_a_replica_bit_across_warps_is_refused_by_every_variant():
    """The same layout as ``kept_sum_on_replica_bit`` across warps: valid, but the
    exchange through scratch has no writer for dst (1, 1) (thread 5 has the replica bit
    2 set). It used to compute a wrong value there; now no variant takes it."""
    c = case("cta_kept_sum_on_replica_bit", "cta", (2,), "S[(2, 2, 2) : (3@laneid, 2@laneid, 1@warpid)] + R[2 : 4@laneid]",
             "S[(2, 2) : (3@laneid, 2@laneid)] + R[(2, 2) : (4@laneid, 1@warpid)]", dtype="i32")
    with pytest.raises(CompileError, match=r"cross_warp_applies — the kept dims' thread iters reach thread 5, "
                                           r"which has src replica bit\(s\) \{2\} set"):
        tile_mlir.compile(c.kernel_text(), backend="interpreter", cache=False)


def test_the_check_agrees_with_the_sums():
    """Over random small warp layouts: a group is broken iff a kept + replica sum has a
    reduced bit set (the group of a base b is b + span(L), closed iff b has no bit of L)."""
    import random

    r = random.Random(0)
    seen = {True: 0, False: 0}
    for _ in range(3000):
        text = (f"S[(({r.randint(2, 5)}), ({r.randint(1, 3)}), 2) : (({r.randint(1, 7)}@laneid), "
                f"({r.randint(1, 9)}@laneid), {1 << r.randint(0, 4)}@laneid)]")
        src = TileLayout.parse(text)
        if src.problems():
            continue
        red = src.shard[2][0]
        bit = red.stride.bit_length() - 1
        dst = TileLayout(src.shard[:2], (red,))
        if dst.problems():
            continue
        broken = bool(exchange_problems(src, dst, (2,), (0, 1, None), (bit,), (), (bit,)))
        sums = kept_threads(src, (2,))
        assert broken == bool(np.any(sums >> bit & 1)), text
        seen[broken] += 1
    assert min(seen.values()) > 100, seen


CLUSTER16 = (
    "S[((3, 1024), (8, 32, 16)) : ((1@laneid, 1), (4@laneid, 1@warpid, 1@cta_in_cluster))]",
    "S[((3, 1024)) : ((1@laneid, 1))] + R[(8, 32, 16) : (4@laneid, 1@warpid, 1@cta_in_cluster)]",
)


def test_the_check_costs_the_threads_not_the_registers():
    """A cluster of 16 CTAs of 1024 threads, 1024 registers per thread, a kept dim of
    3 lanes: every thread of the scope is reached, and the op checks in milliseconds."""
    src, dst = CLUSTER16
    text = (
        "func.func @f(%d: memref<1024xf32, #gpu.address_space<private>>, %s: memref<1024xf32, "
        "#gpu.address_space<private>>) {\n"
        f'  "tile.reduce"(%d, %s) {{kind = "sum", exec_scope = "cluster", axes = array<i64: 1>, '
        f'src_layout = #tile.layout<"{src}">, dst_layout = #tile.layout<"{dst}">}} : '
        "(memref<1024xf32, #gpu.address_space<private>>, memref<1024xf32, #gpu.address_space<private>>) -> ()\n"
        "  return\n}\n"
    )
    with make_context():
        module = ir.Module.parse(text)
        (op,) = find_ops(module.operation, "tile.reduce")
        start = time.perf_counter()
        analysis = analyze(op)
        took = time.perf_counter() - start
    assert analysis.errors == [] and analysis.info.reduced_thread_bits == (2, 3, 4, *range(5, 14))
    assert took < 0.25, took
    src_l, dst_l = TileLayout.parse(src), TileLayout.parse(dst)
    start = time.perf_counter()
    for _ in range(10):
        assert exchange_problems(src_l, dst_l, (1,), (0, None), tuple(range(2, 14)), (), tuple(range(2, 14))) == []
    assert (time.perf_counter() - start) / 10 < 0.1
