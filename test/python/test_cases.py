"""The conformance matrix (tile_mlir.testing.matrix, tile_mlir.testing.cases) on the CPU.

* Every case is a valid op (tile_mlir.analysis) and lowers to PTX with the promised
  shuffle count, no local memory, and exactly one barrier (``bar.sync``) for an op that
  reduces across warps (none otherwise): the block's for a cta, the warpgroup's own
  128 threads for a warpgroup.
* The numpy side is self-consistent: an output built from the reference passes
  ``check``, and a wrong value, an unwritten place or disagreeing replicas are reported.
* ``pack``, ``reference`` and the dtype conversions agree with hand-computed examples.
"""

import math
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest
from tile_mlir.analysis import analyze, thread_bits
from tile_mlir.compiler import lower_to_ptx
from tile_mlir.errors import CompileError
from tile_mlir.ir import find_ops, ir, make_context
from tile_mlir.testing import prepare
from tile_mlir.testing.cases import ReduceCase, bits, narrow, poison, special_inputs, widen
from tile_mlir.testing.matrix import CASES, THREAD_SHAPES, pattern_case, thread_case
from tile_mlir.vocab import DTYPES, FLOAT_DTYPES, KINDS, LANE_BITS

BY_NAME = {case.name: case for case in CASES}


def case_params(cases, marks_for=lambda case: ()):
    return [pytest.param(case, id=case.name, marks=marks_for(case)) for case in cases]


# --- the matrix ------------------------------------------------------------------------------


def test_names_are_unique_mlir_symbols():
    assert len(BY_NAME) == len(CASES)
    for name in BY_NAME:
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name), name


def test_matrix_coverage():
    names = set(BY_NAME)
    for tag, *_ in THREAD_SHAPES:
        for kind in ("sum", "max", "min"):
            assert {f"thread_f32_{kind}_{tag}", f"thread_f32_{kind}_{tag}_accum"} <= names
    for dtype in DTYPES:
        for kind in KINDS:
            assert f"thread_{dtype}_{kind}_4_to_1" in names
            assert f"warp_{dtype}_{kind}_fulllane" in names
            if dtype in FLOAT_DTYPES:
                assert f"warp_{dtype}_{kind}_fulllane_special" in names
    for tag in ("fulllane", "lanes_x4", "strided8", "quads", "mma"):
        assert f"warp_f32_sum_{tag}_accum" in names
    assert all(case.dtype in FLOAT_DTYPES for case in CASES if case.special)
    assert {c.exec_scope for c in CASES} == {"thread", "warp", "warpgroup", "cta", "cluster"}
    # Across warps: blocked ctas of 2 to 32 warps, whole or by rows; mma tiles with warps
    # along M and along N, reduced over either; warpgroups over wid_in_wg; a loop.
    for warps in (2, 4, 8, 16, 32):
        assert {f"cta_f32_sum_cta{warps}_all", f"cta_f32_max_cta{warps}_rows_accum"} <= names
    for tiles in ("mma2x2", "mma4x1", "mma1x4", "wgmma8"):
        assert {f"cta_f32_minimum_{tiles}_{dim}{accum}" for dim in "mn" for accum in ("", "_accum")} <= names
    for tag in ("wg_all", "wg_over_warps", "wg_mma_m", "wg_kept_replica", "loop3_wg"):
        assert f"warpgroup_f32_maximum_{tag}_accum" in names
    for dtype in DTYPES:
        assert {f"cta_{dtype}_sum_loop3_cta4_accum", f"cta_{dtype}_max_cta8_all"} <= names
        for kind in KINDS:
            if dtype in FLOAT_DTYPES:
                assert {f"cta_{dtype}_{kind}_cta8_all_special", f"cta_{dtype}_{kind}_cta8_all_accum_special"} <= names
    assert {case.repeat for case in CASES if "loop3" in case.name} == {3}


def _tile_reduce(module: ir.Module):
    (op,) = find_ops(module.operation, "tile.reduce")
    return op


@pytest.fixture(scope="module")
def context():
    return make_context()


@pytest.mark.parametrize("case", case_params(CASES))
def test_every_case_passes_analysis(case, context):
    with context, ir.Location.unknown():
        module = ir.Module.parse(case.kernel_text())  # alive while its op is analysed
        analysis = analyze(_tile_reduce(module))
    assert analysis.errors == []
    assert analysis.info.axes == case.reduced_dims


# --- the PTX ---------------------------------------------------------------------------------


def _lower(text: str):
    """``lower_to_ptx``, or the error it raised (so that one failure fails one case)."""
    try:
        return lower_to_ptx(text)
    except CompileError as e:
        return e


@pytest.fixture(scope="module")
def lowered(request):
    """The ``Lowered`` of every case this run's PTX tests take (the README's command runs a
    sample of them: conftest.py), by name, compiled up front in parallel (spawned
    processes, since this one holds MLIR contexts and their threads)."""
    wanted = {item.callspec.params["case"].name for item in request.session.items
              if item.module is request.module and "case" in getattr(getattr(item, "callspec", None), "params", {})
              and "lowered" in item.fixturenames}
    cases = [case for case in CASES if case.name in wanted]
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=os.cpu_count(), mp_context=spawn) as pool:
        results = pool.map(_lower, [case.kernel_text() for case in cases], chunksize=8)
        return dict(zip((case.name for case in cases), results))


def ptx_of(lowered, case) -> str:
    result = lowered[case.name]
    if isinstance(result, CompileError):
        pytest.fail(str(result))
    return result.ptx


def expected_shuffles(case: ReduceCase) -> int:
    """One ``shfl.sync.bfly`` per reduced lane bit (``laneid``, or ``tid_in_wg`` bits 0-4)
    and per dst slot of a lane;
    a 64-bit value moves as two 32-bit halves, two 16-bit values as one 32-bit pair
    (docs/lowering-local.md). A full-warp i32 reduction on sm_90a is one redux.sync
    per slot, no shuffle (docs/lowering-local-redux.md)."""
    src = case.src_tile
    lane_bits = [b for d in case.reduced_dims for b in thread_bits(src.shard[d]) if b < LANE_BITS]
    slots = math.prod(src.local_extent(d) for d in range(src.rank) if d not in case.reduced_dims)
    if case.dtype == "i32" and case.exec_scope == "warp" and sorted(lane_bits) == [0, 1, 2, 3, 4]:
        return 0
    moves = {"f64": 2 * slots, "i64": 2 * slots, "f16": (slots + 1) // 2, "bf16": (slots + 1) // 2}
    return len(lane_bits) * moves.get(case.dtype, slots)


def test_expected_shuffle_counts():
    counts = {
        "warp_f32_sum_fulllane": 5,
        "warp_f16_sum_fulllane": 5,
        "warp_f64_sum_fulllane": 10,
        "warp_i64_max_fulllane": 10,
        "warp_f32_sum_groups8": 3,
        "warp_f32_sum_quads": 2,
        "warp_f32_sum_strided8": 2,
        "warp_f32_sum_lanes_x4": 4 * 5,
        "warp_f16_sum_lanes_x4": 2 * 5,
        "warp_i32_sum_lanes_x4": 0,
        "warp_i32_sum_mma": 4 * 2,
        "warp_f32_sum_mma": 4 * 2,
        "warp_f64_sum_mma": 4 * 2 * 2,
        "warp_f32_sum_fold_and_lanes": 4 * 3,
        "warp_f32_sum_rowperlane": 0,
        "warpgroup_f32_sum_wg_rows": 0,
        "warpgroup_f32_sum_wg_all": 2 * 5,
        "warpgroup_f32_sum_wg_over_warps": 0,
        "cta_f32_sum_cta8_rows": 5,
        "cta_f32_sum_cta32_all": 5,
        "cta_i32_sum_cta8_all": 5,  # no redux.sync across warps: cross_warp shuffles
        "cta_f32_sum_cta32_rows": 0,
        "cta_f32_sum_mma2x2_n": 2 * 2,  # lane bits 0-1, 2 rows per thread
        "cta_f32_sum_mma2x2_m": 3 * 2,  # lane bits 2-4, 2 columns per thread
        "cta_f32_sum_wgmma8_m": 3 * 8,
        "warpgroup_f32_sum_wg_kept_replica": 1,
        "warpgroup_f32_sum_wg_mma_m": 3 * 4,
        "cta_f64_sum_loop3_cta4_accum": 5 * 2,  # the loop stays a loop: its op once
        "thread_f32_sum_32_to_1": 0,
    }
    assert {name: expected_shuffles(BY_NAME[name]) for name in counts} == counts


@pytest.mark.parametrize("case", case_params(CASES))
def test_ptx_shuffle_count(case, lowered):
    assert ptx_of(lowered, case).count("shfl.sync.bfly") == expected_shuffles(case)
    (signature,) = lowered[case.name].signatures
    assert signature.name == case.name
    assert tuple(a.shape for a in signature.args) == case.buffer_shapes()


@pytest.mark.parametrize("case", case_params(CASES))
def test_ptx_has_no_local_memory(case, lowered):
    assert re.findall(r"\b(?:ld|st)\.local\b[^\n]*", ptx_of(lowered, case)) == []


def crosses_warps(case: ReduceCase) -> bool:
    """Whether the reduced dims carry warp bits (thread bits 5 and up)."""
    return any(b >= LANE_BITS for d in case.reduced_dims for b in thread_bits(case.src_tile.shard[d]))


@pytest.mark.parametrize("case", case_params(CASES))
def test_ptx_barriers(case, lowered):
    """One barrier per op across warps, of its scope; none for an op inside warps. The
    loop cases keep their loop (it is not unrolled), so their op's code is there once.
    A cluster op: the block's barrier where it reduces warps; where it reduces CTAs, through
    ``cluster_push`` one cluster barrier at the entry (after the mbarriers' init), the
    pushes (``st.shared::cluster``, a remote arrive) and one wait, and a block barrier
    before the push in a loop without warps; through ``cluster`` (forced), two cluster
    barriers (arrive, wait) around the reads of the other CTAs."""
    ptx = ptx_of(lowered, case)
    barriers = re.findall(r"\b(?:bar|barrier)(?:\.cta)?\.(?:sync|arrive|red)\b[^;]*;", ptx)
    if case.exec_scope == "cluster":
        warps = any(LANE_BITS <= b < 10 for d in case.reduced_dims for b in thread_bits(case.src_tile.shard[d]))
        ctas = any(b >= 10 for d in case.reduced_dims for b in thread_bits(case.src_tile.shard[d]))
        push = ctas and case.dispatch is None
        assert [re.sub(r"\s+", " ", b) for b in barriers] == ["bar.sync 0;"] * (warps or (push and case.repeat > 1))
        cluster_barriers = re.findall(r"\bbarrier\.cluster\.\w+", ptx)
        if push:
            assert cluster_barriers == ["barrier.cluster.arrive", "barrier.cluster.wait"]
            assert "barrier.cluster.arrive.relaxed;" in ptx and "fence.mbarrier_init.release.cluster;" in ptx
            assert len(re.findall(r"\bmbarrier\.try_wait\.parity\.acquire\.cluster\b", ptx)) == 1
            arrives = len(re.findall(r"\bmbarrier\.arrive\.release\.cluster\.shared::cluster\b", ptx))
            assert arrives >= 1 and len(re.findall(r"\bst\.shared::cluster", ptx)) >= arrives
            assert "ld.shared::cluster" not in ptx
        else:
            assert cluster_barriers == ["barrier.cluster.arrive", "barrier.cluster.wait"] * 2 * ctas
            assert len(re.findall(r"\bmapa\.shared::cluster", ptx)) == len(re.findall(r"\bld\.shared::cluster", ptx))
            assert ctas == ("ld.shared::cluster" in ptx)
    elif not crosses_warps(case):
        assert barriers == []
    elif case.exec_scope == "cta":
        assert [re.sub(r"\s+", " ", b) for b in barriers] == ["bar.sync 0;"]
    else:  # a named barrier (id 8 + the warpgroup's index) over the warpgroup's 128 threads
        assert len(barriers) == 1 and re.fullmatch(r"bar\.sync\s+%r\d+, 128;", barriers[0]), barriers


def test_crosses_warps():
    crossing = {case.name for case in CASES if crosses_warps(case)}
    assert {"cta_f32_sum_cta2_all", "cta_f32_sum_mma2x2_n", "cta_f32_sum_mma1x4_n", "cta_f32_sum_mma4x1_m",
            "warpgroup_f32_sum_wg_all", "warpgroup_f32_sum_wg_over_warps", "cta_f32_sum_loop3_cta4"} <= crossing
    assert not {"cta_f32_sum_mma4x1_n", "cta_f32_sum_mma1x4_m", "warpgroup_f32_sum_wg_warps"} & crossing


# --- the numpy side: pack, reference, check ------------------------------------------------


def all_inputs(case, seed=0):
    rng = np.random.default_rng(seed)
    inputs = [("random", *case.random_inputs(rng))]
    return inputs + (special_inputs(case, rng) if case.special else [])


def perfect_output(case, x, old):
    """What a correct kernel writes: the reference, rounded to the dtype, on every dst place.
    A NaN is written as a plain quiet NaN: numpy's keeps an input's payload, which a
    16-bit type could narrow to the poison bits."""
    ref = case.reference(x, old)
    return case.pack_dst(narrow(np.where(np.isnan(ref), np.nan, ref), case.dtype))


def _last_place(case, b):
    """The last dst coordinate of ``b``, the (row, slot) of its last place, its place count."""
    coord, held = list(case.unpack(b).items())[-1]
    place = held[-1][0]
    cta, thread = divmod(place.lane + 32 * place.warp, 1024)
    return coord, (cta * case.block() + thread, place.slot), len(held)


@pytest.mark.parametrize("case", case_params(CASES))
def test_check_judges_outputs(case):
    """A perfect output passes; a wrong value or an unwritten place in it is reported."""
    (_, x, old), *special = all_inputs(case)
    for scenario, sx, sold in special:
        assert case.check(sx, sold, perfect_output(case, sx, sold)) == [], scenario
    good = perfect_output(case, x, old)
    assert case.check(x, old, good) == []
    coord, (t, s), n_places = _last_place(case, good)

    wrong = good.copy()
    ref = case.reference(x, old)[coord]
    slack = case.sum_bound(x, old)[coord] if case.kind == "sum" and case.dtype in FLOAT_DTYPES else 0
    wrong[t, s] = narrow(ref + 1 + 2 * slack, case.dtype)
    problems = case.check(x, old, wrong)
    assert any(p.startswith(f"dst{list(coord)}: expected") and " 1 of " in p for p in problems), problems
    assert any(p.startswith(f"dst{list(coord)}: replicas differ") for p in problems) == (n_places > 1)

    unwritten = good.copy()
    unwritten[t, s] = poison(case.dtype, ())
    assert any("never written (poison)" in p for p in case.check(x, old, unwritten))


def test_replicas_must_be_bit_identical():
    """Two NaNs, or +0.0 and -0.0, are right values but differing replicas."""
    case = BY_NAME["warp_f32_max_fulllane_special"]
    x = np.full(32, np.nan, np.float32)
    b = perfect_output(case, x, None)
    b[7, 0] = np.float32(-np.nan)
    assert case.check(x, None, b) == [
        "dst[0]: replicas differ: 0x7fc00000 at 31 place(s) (lane 0 slot 0, lane 1 slot 0, lane 2 slot 0, ...); "
        "0xffc00000 at 1 place(s) (lane 7 slot 0)"
    ]
    x = np.array([-0.0, 0.0] * 16, np.float32)
    b = perfect_output(case, x, None)
    b[3, 0] = -b[3, 0]
    differ, wrong = case.check(x, None, b)
    assert differ.startswith("dst[0]: replicas differ: 0x0 at 31 place(s)")
    assert wrong == "dst[0]: expected 0.0, 1 of 32 place(s) wrong, e.g. lane 3 slot 0: got -0.0 (0x80000000)"


@pytest.mark.parametrize(
    "kind, accepted", [("max", {"+0.0"}), ("min", {"-0.0"}), ("maximum", {"+0.0"}), ("minimum", {"-0.0"})]
)
def test_sign_of_a_zero_result(kind, accepted):
    """Every max/min orders -0.0 < +0.0, so a zero result's sign is decided."""
    case = BY_NAME[f"warp_f32_{kind}_fulllane"]
    x = np.array([-0.0, 0.0] * 16, np.float32)
    passing = {
        text for text, zero in (("+0.0", 0.0), ("-0.0", -0.0))
        if case.check(x, None, case.pack_dst(np.array([zero], np.float32))) == []
    }
    assert passing == accepted


# --- hand-computed examples ------------------------------------------------------------------


def test_pack_follows_the_layouts():
    rng = np.random.default_rng(1)
    mma = BY_NAME["warp_f32_sum_mma"]
    x, _ = mma.random_inputs(rng)
    a = mma.pack(x)
    for i in range(32):
        for j in range(8):  # the layout's forward map: lane = 4*(i/4) + j/2, slot = 2*(i%4) + j%2
            assert a[4 * (i // 4) + j // 2, 2 * (i % 4) + j % 2] == x[i, j]

    wg = BY_NAME["warpgroup_f32_sum_wg_rows"]
    x, _ = wg.random_inputs(rng)
    assert np.array_equal(wg.pack(x), x)

    fold = BY_NAME["warp_f32_sum_fold_and_lanes"]  # replicated over lane bits 3-4
    x, _ = fold.random_inputs(rng)
    a = fold.pack(x)
    for lane in range(32):
        for i in range(4):
            for j in range(64):
                if j % 8 == lane % 8:
                    assert a[lane, 8 * i + j // 8] == x[i, j]

    t = BY_NAME["thread_f32_sum_3x4x5_to_4"]
    x, _ = t.random_inputs(rng)
    assert np.array_equal(t.pack(x), x.reshape(1, -1))


def test_pack_leaves_unused_slots_poisoned():
    case = ReduceCase("sparse", "sum", "f32", "warp", (0,), False, (3,), (1,), "S[32 : 1@laneid]", "S[1 : 1] + R[32 : 1@laneid]")
    a = case.pack(np.arange(1, 33, dtype=np.float32))
    assert np.array_equal(a[:, 0], np.arange(1, 33))
    assert (bits(a[:, 1:], "f32") == 0x7FE0DEAD).all()


def test_unpack_lists_every_replica():
    case = BY_NAME["warp_f32_sum_strided8"]  # S[8 : 1@laneid] + R[4 : 8@laneid]
    held = case.unpack(case.pack_dst(np.arange(8, dtype=np.float32)))
    for i in range(8):
        assert sorted((p.lane, p.slot, float(v)) for p, v in held[(i,)]) == [(i + 8 * k, 0, i) for k in range(4)]


def test_reference_examples():
    full = BY_NAME["warp_f32_sum_fulllane_accum"]
    x, old = np.full(32, 0.5, np.float32), np.array([3.0], np.float32)
    assert full.reference(x, old).tolist() == [19.0]  # the replicated old value counts once

    t = BY_NAME["thread_f32_sum_2x3x4_to_2x3"]  # axes (-1,)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert np.array_equal(t.reference(x, None), x.sum(-1))
    t = BY_NAME["thread_f32_max_3x4x5_to_4"]  # axes (0, 2)
    x = np.random.default_rng(2).uniform(-1, 1, (3, 4, 5)).astype(np.float32)
    assert np.array_equal(t.reference(x, None), x.max(axis=(0, 2)))

    nan = np.float32(np.nan)
    x = np.array([1.0, nan, -2.0, nan], np.float32)
    ref = {k: thread_case("4_to_1", k, "f32", False).reference(x, None)[0] for k in KINDS}
    assert ref["max"] == 1.0 and ref["min"] == -2.0
    assert np.isnan(ref["maximum"]) and np.isnan(ref["minimum"]) and np.isnan(ref["sum"])
    assert np.isnan(thread_case("4_to_1", "max", "f32", False).reference(np.full(4, nan), None)[0])

    def signed(kind, values):
        r = thread_case("4_to_1", kind, "f32", False).reference(np.array(values, np.float32), None)[0]
        return (float(r), bool(np.signbit(r)))

    assert signed("maximum", [-0.0, 0.0, -1.0, -0.0]) == (0.0, False)
    assert signed("maximum", [-0.0, -0.0, -1.0, -0.0]) == (0.0, True)
    assert signed("minimum", [0.0, -0.0, 1.0, 0.0]) == (0.0, True)
    assert signed("minimum", [0.0, 0.0, 1.0, 0.0]) == (0.0, False)

    i32 = thread_case("4_to_1", "sum", "i32", False)
    assert i32.reference(np.array([2**31 - 1, 1, 0, 0], np.int32), None).tolist() == [-(2**31)]
    i64 = pattern_case("fulllane", "min", "i64", True)
    x = np.arange(32, dtype=np.int64) - 2**40
    assert i64.reference(x, np.array([-(2**41)], np.int64)).tolist() == [-(2**41)]


def test_sum_bound():
    case = BY_NAME["warp_f16_sum_fulllane_accum"]
    x, old = np.full(32, -0.5, np.float16), np.array([2.0], np.float16)
    assert case.sum_bound(x, old).tolist() == [33 * 2.0**-10 * 18.0]


def test_bf16_conversions():
    values = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -0.0, np.inf, -np.inf, 3.0e38])
    assert narrow(values, "bf16").tolist() == [0x3F80, 0x3F80, 0x3F82, 0x8000, 0x7F80, 0xFF80, 0x7F62]
    assert widen(narrow(values, "bf16"), "bf16")[:6].tolist() == [1.0, 1.0, 1 + 2**-6, -0.0, np.inf, -np.inf]
    assert np.isnan(widen(narrow(np.array([np.nan]), "bf16"), "bf16")).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_inputs(dtype):
    case = pattern_case("lanes_x4", "sum", dtype, True)
    x, old = case.random_inputs(np.random.default_rng(3))
    assert x.shape == (32, 4) and old.shape == (4,)
    assert x.dtype == old.dtype == {"bf16": np.uint16}.get(dtype, np.dtype(x.dtype))
    v = widen(x, dtype)
    assert (v != 0).all() and (np.abs(v) <= (1 if dtype in FLOAT_DTYPES else 99)).all()
    if dtype not in FLOAT_DTYPES:
        assert (v < 0).any() and (v > 0).any()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_special_inputs_hold_every_special_value(dtype):
    case = pattern_case("fulllane", "max", dtype, True, special=True)
    seen = np.concatenate([widen(x, dtype) for _, x, _ in special_inputs(case, np.random.default_rng(4))])
    assert np.isnan(seen).any() and (seen == np.inf).any() and (seen == -np.inf).any()
    assert ((seen == 0) & np.signbit(seen)).any() and ((seen == 0) & ~np.signbit(seen)).any()
    assert ((seen != 0) & np.isfinite(seen)).any()


def test_special_inputs_are_for_floats():
    with pytest.raises(ValueError, match="float"):
        special_inputs(BY_NAME["warp_i32_sum_fulllane"], np.random.default_rng(0))


def test_kernel_text_names_the_chip():
    text = BY_NAME["thread_f32_sum_4_to_1"].kernel_text("sm_80")
    assert '#nvvm.target<chip = "sm_80">' in text and "gpu.func @thread_f32_sum_4_to_1(" in text


# --- prepare ---------------------------------------------------------------------------------


def test_prepare_fills_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(prepare, "CASES", (BY_NAME["thread_f32_sum_4_to_1"], BY_NAME["warp_f16_max_fulllane"]))
    monkeypatch.setattr(prepare, "SHARED_CASES", ())
    monkeypatch.setattr(prepare, "EXAMPLES", ())
    monkeypatch.setattr(prepare, "FUSED", ())
    monkeypatch.setattr(prepare, "BACKWARD", ())
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "elsewhere"))
    for built in (2, 0):
        assert prepare.main(["--cache", str(tmp_path / "cache"), "--jobs", "1"]) == 0
        last = capsys.readouterr().out.splitlines()[-1]
        assert last == f"prepared 2 kernels into {tmp_path / 'cache'} ({built} built, {2 - built} cached)"
