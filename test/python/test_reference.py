"""The reference itself (``tile_mlir.testing.reference``), against docs/spec.md's own examples
and against plain float64 arithmetic: its layout parser and forward map, its rules, its
closure check, the documented fold order, rounding, NaN and signed zeros."""

import math
import struct

import numpy as np
import pytest

from tile_mlir.testing import reference as ref
from tile_mlir.testing.reference_layout import Layout, layout_problems


def places(text):
    """{coordinate index: sorted [(thread, slot)]}"""
    k, _, thread, slot = Layout.parse(text).places
    out = {}
    for k_, t, s in zip(k.tolist(), thread.tolist(), slot.tolist()):
        out.setdefault(k_, []).append((t, s))
    return {k_: sorted(v) for k_, v in out.items()}


# --- layouts (docs/spec.md, "Tile layouts") ---------------------------------------------------


def test_the_spec_examples_place_what_the_spec_says():
    assert Layout.parse("S[4]").shape == (4,) and places("S[4]") == {i: [(0, i)] for i in range(4)}
    assert places("S[(4, 8)]") == {i: [(0, i)] for i in range(32)}  # row-major
    assert places("S[(32, 8) : (1@laneid, 1)]")[8 * 5 + 3] == [(5, 3)]
    mma = places("S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]")
    for i in range(32):
        for j in range(8):
            assert mma[8 * i + j] == [(4 * (i // 4) + j // 2, 2 * (i % 4) + j % 2)]
    assert places("S[4 : 1] + R[32 : 1@laneid]")[2] == [(t, 2) for t in range(32)]
    assert places("S[8 : 1@laneid] + R[4 : 8@laneid]")[3] == [(3, 0), (11, 0), (19, 0), (27, 0)]
    assert places("S[4 : 1] + R[2 : 4]")[1] == [(0, 1), (0, 5)]


def test_thread_index_of_every_axis():
    """thread = laneid + tid_in_wg + 32 (wid_in_wg + warpid) + 1024 cta_in_cluster."""
    assert places("S[(2, 2, 2) : (1@cta_in_cluster, 3@warpid, 5@laneid)]")[7] == [(1024 + 96 + 5, 0)]
    assert places("S[(2, 2) : (1@wid_in_wg, 33@tid_in_wg)]")[3] == [(32 + 33, 0)]


@pytest.mark.parametrize("text", ["S[(4,)]", "S[ ( 4 , 8 , ) ]", "S[((2, 2),) : ((1@laneid, 2),)]"])
def test_trailing_commas_and_spaces(text):
    Layout.parse(text)


@pytest.mark.parametrize("text", ["S[4", "S[(4, 8) : (1)]", "S[4 : 1@lane]", "R[4 : 1]", "S[4] + R[2]", "S[4] x"])
def test_malformed_layouts_are_refused(text):
    with pytest.raises(ValueError):
        Layout.parse(text)


def test_the_validity_rules():
    assert layout_problems(Layout.parse("S[(16, 4) : (1@laneid, 1)] + R[2 : 8@laneid]"), "warp")  # rule 3
    assert layout_problems(Layout.parse("S[64 : 1@laneid]"), "warp")  # rule 4
    assert layout_problems(Layout.parse("S[(2, 32) : (32@laneid, 1@laneid)]"), "warp")
    assert layout_problems(Layout.parse("S[2048]"), "thread")  # rule 5
    assert layout_problems(Layout.parse("S[4 : 1@warpid]"), "warpgroup")  # the scope's axes
    assert not layout_problems(Layout.parse("S[((3), (2), 2) : ((3@laneid), (4@laneid), 8@laneid)]"), "warp")


# --- the op's rules and the exchange -----------------------------------------------------------


def op(src, dst, axes=(1,), scope="warp", kind="sum", dtype="f32", accum=False, fold="linear", shapes=(64, 64)):
    return ref.ReduceOp(scope, axes, (dtype,), (shapes[0],), (shapes[1],), kind, src, dst, accum, fold)


def test_the_rules_across_threads():
    ok = op("S[(8, 32) : (1, 1@laneid)]", "S[8 : 1] + R[32 : 1@laneid]")
    assert ref.problems(ok) == [] and ref.exchange_problem(ok) is None
    assert ref.problems(op("S[(8, 32) : (1, 1@laneid)]", "S[8 : 1]"))  # dst not replicated over L
    assert ref.problems(op("S[(8, 3) : (1, 1@laneid)]", "S[8 : 1] + R[4 : 1@laneid]"))  # rule 6
    assert ref.problems(op("S[(8, 32) : (1@laneid, 1)]", "S[8 : 1]"))  # kept dim moved off its lanes


def test_kept_iters_that_carry_into_a_reduced_bit_cannot_be_computed():
    """The outside campaign's layouts: valid, but dst (2, 1) lives on lanes 10 and 18, and
    lane 10 has the reduced lane bit 3 set."""
    carry = op("S[((3), (2), 2) : ((3@laneid), (4@laneid), 8@laneid)]",
               "S[((3), (2)) : ((3@laneid), (4@laneid))] + R[2 : 8@laneid]", axes=(2,))
    assert ref.problems(carry) == []
    assert "thread 10 has no partner across bit 3" in ref.exchange_problem(carry)
    with_replica = op("S[((3), 2) : ((3@laneid), 8@laneid)] + R[2 : 4@laneid]",
                      "S[(3) : (3@laneid)] + R[(2, 2) : (4@laneid, 8@laneid)]")
    assert ref.problems(with_replica) == [] and ref.exchange_problem(with_replica)
    # The same kept iters below the reduced bit: closed, computable.
    below = op("S[((3), 2) : ((1@laneid), 4@laneid)]", "S[(3) : (1@laneid)] + R[2 : 4@laneid]")
    assert ref.problems(below) == [] and ref.exchange_problem(below) is None


def test_a_kept_dim_on_a_replica_bit_across_warps_is_not_supported():
    uneven = op("S[((3), 2) : ((3@warpid), 16@warpid)] + R[2 : 2@warpid]",
                "S[(3) : (3@warpid)] + R[(2, 2) : (2@warpid, 16@warpid)]", scope="cta")
    assert ref.problems(uneven) == [] and ref.exchange_problem(uneven) is None
    assert ref.unsupported(uneven)


# --- the result: the documented order -------------------------------------------------------


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_a_warp_sum_is_the_butterfly_highest_lane_bit_first():
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (8, 32)).astype(np.float32)
    got = ref.reduce(op("S[(8, 32) : (1, 1@laneid)]", "S[8 : 1] + R[32 : 1@laneid]"), [x])[0]
    for row, value in zip(x.astype(float), got):
        v = list(row)
        for b in (16, 8, 4, 2, 1):
            v = [f32(v[t & ~b] + v[t | b]) for t in range(32)]
        assert value == np.float32(v[0])


def test_in_thread_folds_linear_and_tree():
    """Five values: linear ((((x0 + x1) + x2) + x3) + x4); tree op(op(op(x0, x1), op(x2, x3)), x4)."""
    x = np.array([1.0, 2.0**-11, 2.0**-11, 2.0**-11, 2.0**-11], np.float16)  # f16: 11 bits
    linear = ref.reduce(ref.ReduceOp("thread", (0,), ("f16",), (5,), (1,), "sum"), [x])[0]
    tree = ref.reduce(ref.ReduceOp("thread", (0,), ("f16",), (5,), (1,), "sum", fold="tree"), [x])[0]
    assert linear[0] == np.float16(1.0)  # each 1 + 2^-11 is a tie, to even: 1
    assert tree[0] == np.float16(1.0 + 2.0**-9)  # (1 + 2^-10) + 2^-11: a tie, to even
    seen = []
    logged = ref.ReduceOp("thread", (0,), ("i32",), (5,), (1,), combine=lambda l, r: (seen.append((l, r)) or l[0] + r[0],),
                          fold="tree")
    ref.reduce(logged, [np.arange(1, 6, dtype=np.int32)])
    assert seen == [((1,), (2,)), ((3,), (4,)), ((3,), (7,)), ((10,), (5,))]


def test_warps_then_ctas_in_ascending_order_and_accum_last():
    """A non-commutative combine shows the order: "the left operand, then the right"."""
    src = "S[(2, 2, 2) : (1@cta_in_cluster, 1@warpid, 1@laneid)]"
    order = ref.ReduceOp("cluster", (0, 1, 2), ("i64",), (1,), (1,), src_layout=src,
                         dst_layout="S[1 : 1] + R[(2, 2, 2) : (1@laneid, 1@warpid, 1@cta_in_cluster)]",
                         accum=True, combine=lambda l, r: (l[0] * 10 ** len(str(r[0])) + r[0],))
    x = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int64)
    # CTA 0: warps (1, 2) and (3, 4): lanes 12, 34; warps 1234. CTA 1: 5678. Then 12345678; accum: old 9 left.
    assert ref.reduce(order, [x], [np.array([9], np.int64)])[0][0] == int("9" + "0" * 8) + 12345678


def test_nan_and_signed_zeros():
    nan, inf = math.nan, math.inf

    def red(kind, values, dtype="f32"):
        x = ref.from_values(values, dtype, (len(values),))
        return ref.reduce(ref.ReduceOp("thread", (0,), (dtype,), (len(values),), (1,), kind), [x])[0].view(
            {"f32": np.uint32, "bf16": np.uint16, "f16": np.uint16, "f64": np.uint64}[dtype])[0]

    assert red("max", [nan, -1.0, nan]) == np.array(-1.0, np.float32).view(np.uint32)
    assert red("max", [nan, nan]) == 0x7FFFFFFF
    assert red("maximum", [1.0, nan]) == 0x7FFFFFFF
    assert red("minimum", [-inf, nan], "f64") == 0x7FFFFFFFFFFFFFFF
    assert red("max", [-0.0, 0.0]) == 0 and red("max", [0.0, -0.0]) == 0
    assert red("min", [0.0, -0.0]) == 0x80000000 and red("minimum", [-0.0, 0.0], "bf16") == 0x8000
    assert red("sum", [inf, -inf], "f16") == 0x7FFF
    assert red("sum", [-0.0, -0.0]) == 0x80000000


def test_rounding_to_each_type():
    assert ref.round_to("f16", 2049.0) == 2048.0 and ref.round_to("f16", 2051.0) == 2052.0
    assert ref.round_to("f16", 70000.0) == math.inf
    assert ref.round_to("f32", 1 + 2.0**-24) == 1.0 and ref.round_to("f32", 1e39) == math.inf
    assert ref.round_to("i32", 2**31) == -(2**31) and ref.round_to("i64", -(2**63) - 1) == 2**63 - 1
    assert ref.round_to("bf16", 1 + 2.0**-8) == 1.0 and ref.round_to("bf16", 1 + 3 * 2.0**-8) == 1 + 2.0**-6


def test_bf16_rounding_agrees_with_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(5000) * 10.0 ** rng.integers(-40, 39, 5000), [3.4e38, 3.39e38, -1e-45]])
    want = x.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
    got = ref.from_values([ref.round_to("bf16", v) for v in x.astype(np.float32).astype(float)], "bf16", x.shape)
    assert (got == want).all()


def test_shared_operands_follow_the_group_order():
    """docs/lowering-shared.md: (32, 7) -> (32) at warpgroup scope: G = 4; lane j folds terms
    j, j + 4 (a named kind: the sum, its combines logged); the butterfly then combines
    op(op(p0, p2), op(p1, p3))."""
    seen = []
    log = ref.ReduceOp("warpgroup", (1,), ("i32",), (32, 7), (32,), "sum",
                       combine=lambda l, r: (seen.append((l, r)) or 0,), storage="shared", threads=128)
    x = np.arange(32 * 7, dtype=np.int32).reshape(32, 7)
    ref.reduce(log, [x])
    first = seen[:3]
    assert first == [((0,), (4,)), ((1,), (5,)), ((2,), (6,))]


def test_a_shared_combiner_function_folds_contiguous_runs():
    """docs/spec.md, "The lower coordinates go left", 5: a combiner function's G = 4 lanes
    fold contiguous runs of R = 7 terms: lane j the q = 1 terms from j + min(j, 3) on, one
    more when j < 3: terms (1 2), (3 4), (5 6), (7); then the butterfly, offset 2 first, the
    lower lane left: op(op(l0, l2), op(l1, l3)), the lanes in bit-reversed order."""
    concat = ref.ReduceOp("warpgroup", (1,), ("i64",), (32, 7), (32,), storage="shared", threads=128,
                          combine=lambda l, r: (int(f"{l[0]}{r[0]}"),))
    x = np.tile(np.arange(1, 8, dtype=np.int64), (32, 1))
    assert (ref.reduce(concat, [x])[0] == 1256347).all()


def test_argmax_and_argmin_by_the_spec():
    """docs/spec.md, "argmax and argmin": the index is row-major among the reduced
    coordinates; the first NaN wins (canonical bits); else the first best value, -0 and +0
    equal (the first zero's bits); with accum the old pair competes, and stays on a tie."""
    nan, inf = math.nan, math.inf

    def arg(kind, rows, dtype="f32", old=None, index="i32"):
        """rows reduced in one thread, or (32 values a row) across the lanes of a warp."""
        n, r = len(rows), len(rows[0])
        x = ref.from_values([v for row in rows for v in row], dtype, (n, r))
        if r == 32:
            o = ref.ReduceOp("warp", (1,), (dtype, index), (n,), (n,), kind, f"S[({n}, 32) : (1, 1@laneid)]",
                             f"S[{n} : 1] + R[32 : 1@laneid]", accum=old is not None)
        else:
            o = ref.ReduceOp("thread", (1,), (dtype, index), (n, r), (n,), kind, accum=old is not None)
        olds = None if old is None else [ref.from_values([p[0] for p in old], dtype, (n,)),
                                         np.array([p[1] for p in old], ref.storage_dtype(index))]
        value, where = ref.reduce(o, [x], olds)
        bits = value.view({"f32": np.uint32, "f16": np.uint16, "bf16": np.uint16, "f64": np.uint64}.get(dtype, value.dtype))
        return [(ref.to_values(value, dtype)[e], int(where[e])) for e in range(n)], bits

    got, bits = arg("argmax", [[1.0, 3.0, 3.0, -1.0], [nan, 2.0, -nan, 5.0], [-0.0, 0.0, -1.0, -2.0],
                               [-inf, -inf, -inf, -inf]])
    assert [i for _, i in got] == [1, 0, 0, 0]
    assert bits[1] == 0x7FFFFFFF and bits[2] == 0x80000000  # canonical NaN; the first zero, -0
    got, _ = arg("argmin", [[2.0, 1.0, 5.0, 1.0], [0.0, -0.0, 1.0, 1.0], [1.0, 2.0, 3.0, -nan]], "bf16")
    assert [i for _, i in got] == [1, 0, 3]
    got, _ = arg("argmax", [[-5, 7, 7, -9]], "i64", index="i64")
    assert got == [(7, 1)]
    # accum: the old pair left; a complete tie keeps it, a better or a NaN new value wins
    got, _ = arg("argmax", [[1.0, 4.0], [1.0, 4.0], [nan, 0.5]], old=[(4.0, 1), (4.0, 0), (9.0, 3)])
    assert [i for _, i in got] == [1, 0, 0]
    # across lanes: the butterfly finds the first of ties on lanes 3 and 17
    row = [0.25] * 32
    row[17] = row[3] = 0.75
    got, _ = arg("argmax", [row, row[::-1]])
    assert [i for _, i in got] == [3, 14]


def test_a_combiner_function_meets_the_lanes_in_bit_reversed_order():
    """docs/spec.md, "The lower coordinates go left": an associative, non-commutative
    combiner over a warp gives its lanes in bit-reversed order of their reduced lane bits
    (a butterfly pairs the highest bit first), each lane's elements in row-major order;
    first/last keep the lowest/highest coordinate."""
    concat = ref.ReduceOp("warp", (0,), ("i64",), (2,), (1,), src_layout="S[((4, 2)) : ((1@laneid, 1))]",
                          dst_layout="S[1 : 1] + R[4 : 1@laneid]", combine=lambda l, r: (int(f"{l[0]}{r[0]}"),))
    x = np.arange(1, 9, dtype=np.int64)  # coordinate c = 2 lane + slot: lanes 0 1 2 3 hold (1 2) (3 4) (5 6) (7 8)
    # lane bits 1 then 0: op(op(l0, l2), op(l1, l3)) = l0 l2 l1 l3
    assert ref.reduce(concat, [x])[0][0] == 12563478
    inner = ref.ReduceOp("warp", (0,), ("i64",), (2,), (1,), src_layout="S[((2, 4)) : ((1, 1@laneid))]",
                         dst_layout="S[1 : 1] + R[4 : 1@laneid]", combine=lambda l, r: (int(f"{l[0]}{r[0]}"),))
    # c = 4 slot + lane: lane j holds (j + 1, j + 5)
    assert ref.reduce(inner, [x])[0][0] == 15372648
    first = ref.ReduceOp("warp", (0,), ("f32", "i32"), (2,), (1,), src_layout="S[((2, 4)) : ((1, 1@laneid))]",
                         dst_layout="S[1 : 1] + R[4 : 1@laneid]", combine=lambda l, r: l)
    last = ref.ReduceOp("warp", (0,), ("f32", "i32"), (2,), (1,), src_layout="S[((2, 4)) : ((1, 1@laneid))]",
                        dst_layout="S[1 : 1] + R[4 : 1@laneid]", combine=lambda l, r: r)
    values, coords = np.linspace(-1, 1, 8).astype(np.float32), np.arange(8, dtype=np.int32)
    assert ref.reduce(first, [values, coords])[1][0] == 0 and ref.reduce(last, [values, coords])[1][0] == 7
