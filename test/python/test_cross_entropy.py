"""Cross-entropy forward and backward (``tile_mlir.kernels.loss``) in the CPU
interpreter, against torch's formulas in float64 numpy (``tile_mlir.kernels.reference``):
f32 and bf16 logits, the three reductions, ignore_index rows, label smoothing, V not a
power of two, each kind of row plan, rows of -inf / +inf / NaN, and dlogits in place."""

import re
import shutil
import subprocess

import numpy as np
import pytest
from tile_mlir import kernels as K
from tile_mlir.errors import InterpreterError, LaunchError, OptionError
from tile_mlir.interpreter import global_races
from tile_mlir.kernels import reference as ref
from tile_mlir.testing.fused import RTOL, as_f64, check, plan_overrides, to_dtype

# (M, V, plan overrides): one warp per row (4 rows a CTA); several warps; 2 rows of 2 warps
# a CTA (a row's warps are warps 2r and 2r + 1: the case that caught x[target] read from
# another row's warp slot, warp id mod R); the measured plan of N = 1000; a row over a
# cluster of 4 CTAs and, f32, of 16 (through a small plan table: "small"). A cluster of 16
# is not fixed in the kernel, and the backward has no cluster-scope op, so it runs without
# clusters: each CTA must find its columns from its block id (the bug this case caught:
# NaN columns).
SHAPES = [(6, 1000, {"warps": 1}), (3, 3001, {"warps": 8, "rows": 1}), (5, 1000, {"warps": 2, "rows": 2}),
          (6, 1000, {}), (5, 1000, "small"), (4, 4093, "small")]


def inputs(rng, M, V, dtype, ignored=(1,)):
    x = to_dtype(3 * rng.standard_normal((M, V)), dtype)
    t = rng.integers(0, V, M)
    t[list(ignored)] = -100
    return x, t


def assert_close(got, want, dtype="f32"):
    error, ok = check(np.asarray(got), np.asarray(want, np.float64), dtype)
    assert ok, f"max error {error:g}\n got {as_f64(got)}\nwant {want}"


@pytest.mark.parametrize("M, V, overrides", SHAPES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_forward_and_backward_against_float64(M, V, overrides, dtype):
    overrides = plan_overrides(overrides, M, V, dtype)
    rng = np.random.default_rng([M, V, len(dtype)])
    x, t = inputs(rng, M, V, dtype)
    x64 = as_f64(x)
    for reduction, smoothing in (("mean", 0.0), ("sum", 0.1), ("none", 0.25)):
        loss, lse = K.cross_entropy(x, t, label_smoothing=smoothing, reduction=reduction, **overrides)
        want, want_lse = ref.cross_entropy(x64, t, smoothing=smoothing, reduction=reduction)
        assert loss.dtype == np.float32 and loss.shape == want.shape and lse.shape == (M,)
        assert_close(loss, want)  # the loss and lse are f32, for either dtype of logits
        assert_close(lse, want_lse)
        assert reduction != "none" or loss[1] == 0.0  # the ignored row
        dloss = np.float32(rng.uniform(0.5, 2.0, M if reduction == "none" else ()))
        dx = K.cross_entropy_backward(x, t, lse, dloss, label_smoothing=smoothing, reduction=reduction,
                                      **overrides)
        assert dx.dtype == x.dtype and dx.shape == x.shape
        assert_close(dx, ref.cross_entropy_backward(x64, t, dloss, smoothing=smoothing, reduction=reduction), dtype)
        assert not np.any(as_f64(dx)[1])  # an ignored row has no gradient


def test_the_mean_counts_the_rows_not_ignored():
    rng = np.random.default_rng(7)
    x, t = inputs(rng, 4, 37, "f32", ignored=(0, 2))
    loss, _ = K.cross_entropy(x, t)
    rows, _ = K.cross_entropy(x, t, reduction="none")
    assert loss == pytest.approx(rows.sum() / 2, rel=1e-6)
    everything, _ = K.cross_entropy(x, np.full(4, -100))
    assert np.isnan(everything)  # 0 / 0, as torch


@pytest.mark.parametrize("M", [1, 255, 256, 257, 700])
def test_the_rows_reduction_kernel_against_float64(M):
    """``cross_entropy_reduce`` (one CTA of 256 threads, each summing rows t, t + 256, ...):
    its three modes against float64 sums of fresh losses (mixed signs and magnitudes, a
    third of the rows ignored), at row counts on each side of the CTA's width; the mean of
    ``K.cross_entropy`` and of ``K.cross_entropy_with_grad`` is its result, bit for bit."""
    from tile_mlir.kernels import loss as L

    rng = np.random.default_rng([M, 31])
    losses = np.float32(rng.standard_normal(M) * 10.0 ** rng.integers(-3, 4, M))
    t = rng.integers(0, 50, M)
    t[rng.random(M) < 0.33] = -100
    losses[t == -100] = 0.0  # as the loss kernel writes an ignored row
    count = int((t != -100).sum())
    want = {"sum": losses.astype(np.float64).sum(), "scale": 1.0 / max(count, 1)}
    want["mean"] = want["sum"] / count if count else np.nan
    for mode in ("scale", "mean", "sum"):
        got = L._on_rows(losses, t, -100, mode, "interpreter")
        assert got.shape == (1,) and got.dtype == np.float32
        if np.isnan(want[mode]):
            assert np.isnan(got[0])
        else:
            assert got[0] == pytest.approx(want[mode], rel=2e-6, abs=1e-30), mode
    x, _ = inputs(rng, M, 50, "f32", ignored=())
    loss, _ = K.cross_entropy(x, t)
    rows, _ = K.cross_entropy(x, t, reduction="none")
    assert loss.shape == () and loss == L._on_rows(rows, t, -100, "mean", "interpreter")[0]
    fused, _, _ = K.cross_entropy_with_grad(x, t)
    assert fused.tobytes() == loss.tobytes()  # the same kernel, the same bits


@pytest.mark.parametrize("M", [1, 256, 257, 700])
def test_the_row_scale_kernel_against_float64(M):
    """``cross_entropy_row_scale``: each row's factor of the backward, dloss / count for a
    mean and dloss for a sum, 0 for an ignored row, against float64; with every row
    ignored, 0 everywhere (no NaN from the count of 0)."""
    from tile_mlir.kernels import loss as L

    rng = np.random.default_rng([M, 37])
    t = rng.integers(0, 9, M)
    t[rng.random(M) < 0.4] = 3  # the ignore_index of this test
    dloss = np.float32(rng.uniform(0.25, 4.0))
    count = int((t != 3).sum())
    for reduction, g in (("mean", float(dloss) / max(count, 1)), ("sum", float(dloss))):
        got = L._row_scale(dloss, t, 3, reduction, "interpreter")
        assert got.dtype == np.float32 and got.shape == (M,)
        want = np.where(t != 3, g, 0.0)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    everything = L._row_scale(dloss, np.full(M, 3), 3, "mean", "interpreter")
    assert not np.any(everything) and not np.isnan(everything).any()


def test_the_rows_reduction_kernel_at_no_rows_and_no_counted_row():
    from tile_mlir.kernels import loss as L

    empty = np.zeros(0, np.float32), np.zeros(0, np.int64)
    assert np.isnan(L._on_rows(*empty, -100, "mean", "interpreter")[0])  # 0 / 0, as torch
    assert L._on_rows(*empty, -100, "sum", "interpreter")[0] == 0.0
    assert L._on_rows(*empty, -100, "scale", "interpreter")[0] == 1.0
    losses, t = np.float32([0.0, 0.0, 0.0]), np.full(3, 5)
    assert np.isnan(L._on_rows(losses, t, 5, "mean", "interpreter")[0])
    assert L._on_rows(losses, t, 5, "scale", "interpreter")[0] == 1.0
    # the scale reads no loss: a NaN there (not yet written, on the device) does not reach it
    assert L._on_rows(np.float32([np.nan, np.nan]), np.int64([1, 2]), -100, "scale", "interpreter")[0] == 0.5


def test_ignore_index_is_any_int():
    rng = np.random.default_rng(8)
    x, t = inputs(rng, 3, 50, "f32", ignored=())
    t[0] = 7
    loss, _ = K.cross_entropy(x, t, ignore_index=7, reduction="none")
    assert loss[0] == 0.0
    assert_close(loss, ref.cross_entropy(as_f64(x), t, ignore_index=7, reduction="none")[0])


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_special_rows_as_torch(dtype):
    """-inf logits away from the target change nothing; a target at -inf gives an infinite
    loss; an all -inf row NaN (as torch's log_softmax); +inf or NaN anywhere NaN."""
    rng = np.random.default_rng(9)
    M, V = 7, 129
    x = 3 * rng.standard_normal((M, V))
    t = rng.integers(1, V, M)
    x[0, ::3] = -np.inf
    x[0, t[0]] = 1.0
    x[1, t[1]] = -np.inf
    x[2] = -np.inf
    x[3, 5] = np.inf
    x[4, 6] = np.nan
    x[5, :] = -np.inf
    x[5, 0] = 2.0  # one finite logit: probability 1 there
    t[5] = 0
    x = to_dtype(x, dtype)
    x64 = as_f64(x)
    for smoothing in (0.0, 0.2):
        loss, lse = K.cross_entropy(x, t, label_smoothing=smoothing, reduction="none")
        want, want_lse = ref.cross_entropy(x64, t, smoothing=smoothing, reduction="none")
        assert np.isinf(want[1]) and np.isnan(want[2]) and np.isnan(want[3]) and np.isnan(want[4])
        assert want[5] == (np.inf if smoothing else 0.0)
        assert_close(loss, want)
        assert_close(lse, want_lse)
        dloss = np.ones(M, np.float32)
        dx = K.cross_entropy_backward(x, t, lse, dloss, label_smoothing=smoothing, reduction="none")
        assert_close(dx, ref.cross_entropy_backward(x64, t, dloss, smoothing=smoothing, reduction="none"), dtype)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_backward_in_place_writes_over_the_logits(dtype):
    rng = np.random.default_rng(10)
    x, t = inputs(rng, 4, 300, dtype)
    want = K.cross_entropy_backward(x, t, K.cross_entropy(x, t)[1], np.float32(1.5))
    _, lse = K.cross_entropy(x, t)
    with global_races():  # each thread reads and writes its own columns only
        out = K.cross_entropy_backward(x, t, lse, np.float32(1.5), inplace=True)
    assert out is x
    np.testing.assert_array_equal(x, want)
    assert np.max(np.abs(as_f64(x))) < 1.5 * RTOL["f32"] + 1.5  # a gradient, not logits


def test_bad_arguments_are_reported():
    x, t = inputs(np.random.default_rng(11), 3, 20, "f32")
    with pytest.raises(OptionError, match="reduction must be one of mean, sum, none"):
        K.cross_entropy(x, t, reduction="avg")
    with pytest.raises(OptionError, match="label_smoothing must be in"):
        K.cross_entropy(x, t, label_smoothing=1.5)
    with pytest.raises(LaunchError, match=r"target\[2\] = 20 is not a class of \[0, 20\)"):
        K.cross_entropy(x, np.array([0, 1, 20]))
    with pytest.raises(LaunchError, match=r"target must have shape \(3,\)"):
        K.cross_entropy(x, t[:2])
    with pytest.raises(LaunchError, match="target must hold integers"):
        K.cross_entropy(x, t.astype(np.float32))
    with pytest.raises(LaunchError, match=r"logits must be an \(M, V\) array"):
        K.cross_entropy(x[0], t)
    with pytest.raises(LaunchError, match="f32 or bf16"):
        K.cross_entropy(x.astype(np.float64), t)
    _, lse = K.cross_entropy(x, t)
    with pytest.raises(LaunchError, match=r"dloss must have shape \(3,\) \(reduction 'none'\)"):
        K.cross_entropy_backward(x, t, lse, np.float32(1.0), reduction="none")


def test_the_kernels_are_in_the_library_and_serve_every_row_count():
    assert K.SPECS["cross_entropy"].signature == ("cross_entropy(logits, target, loss, lse, ignore_index,"
                                                  " label_smoothing, rows)")
    text = K.kernel_text("cross_entropy_backward", 8, 1000, "bf16")
    assert text == K.kernel_text("cross_entropy_backward", 3000, 1000, "bf16")  # M is an argument
    assert "gpu.func @cross_entropy_backward" in text and "memref<?xi64>" in text and "tile.dims = [6]" in text
    from tile_mlir.kernels import library, loss

    assert loss.bytes_moved(8192, 131072, "bf16") == {"forward": 8192 * 131072 * 2 + 18 * 8192,
                                                      "backward": 2 * 8192 * 131072 * 2 + 16 * 8192}
    rng = np.random.default_rng(12)
    K.cross_entropy(*inputs(rng, 9, 77, "f32"))
    before = library._compiled.cache_info().misses
    for M in (1, 2, 5, 13):  # a changing batch: no compile, and right answers
        x, t = inputs(rng, M, 77, "f32", ignored=())
        loss, lse = K.cross_entropy(x, t, reduction="none")
        assert_close(loss, ref.cross_entropy(as_f64(x), t, reduction="none")[0])
    assert library._compiled.cache_info().misses == before


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_the_loss_kernels_take_the_plans_measured_for_the_fused_one(dtype):
    """measured_plans.json keeps cross-entropy's plans under ``cross_entropy_fused``
    (``benchmarks.plan_search --kernels cross_entropy_fused``): at each searched vocabulary
    the three kernels take the fastest measured plan, (max, sum) exchanges included, and
    say so, one plan for all three (the loss alone and the fused kernel give the same lse
    bits); every V from above half the shortest searched one to the longest gets a
    measured plan that holds the row; shorter rows, and forced plans, take softmax's."""
    from tile_mlir.kernels.library import LOSS_SEARCHED, _plan
    from tile_mlir.kernels.plan import measured_table

    names = ("cross_entropy", "cross_entropy_fused", "cross_entropy_backward")
    entries = measured_table()[LOSS_SEARCHED][dtype]
    assert [e["N"] for e in entries] == sorted(e["N"] for e in entries) and len(entries) >= 3
    for e in entries:
        plans = {_plan(name, 64, e["N"], dtype, {}) for name in names}
        assert len(plans) == 1, plans
        (p,) = plans
        assert p.label() == e["label"] and f"measured at N = {e['N']}" in p.why, (e, p)
        assert p.pair is e["pair"] and p.packs_pair(True) is e["pair"]
    first, last = entries[0]["N"], entries[-1]["N"]
    for V in [first // 2 + 1, 32000, 50257, 128256, 256000, last]:
        p = _plan("cross_entropy_fused", 8, V, dtype, {})
        assert "measured" in p.why and p.CH * p.CL >= V and p.C == -(-V // (32 * p.W * p.CL * p.V)), (V, p.label())
    short, softmax = _plan("cross_entropy_fused", 8, first // 2, dtype, {}), K.plan(8, first // 2, dtype, "softmax")
    assert (short.R, short.W, short.CL, short.E, short.O) == (softmax.R, softmax.W, softmax.CL, softmax.E, 1)
    assert f"measured at N = {first}" not in short.why
    forced = _plan("cross_entropy_fused", 8, 131072, dtype, {"ctas": 16, "warps": 16})
    assert (forced.CL, forced.W) == (16, 16) and "measured" not in forced.why


@pytest.mark.parametrize("name", ["cross_entropy", "cross_entropy_fused"])
@pytest.mark.parametrize("V, forced", [(1000, {"warps": 1}), (131072, {})], ids=["warp", "cluster"])
def test_the_sum_of_x_crosses_the_row_only_where_smoothing_is_not_0(name, V, forced):
    """Σx serves the smoothing term alone: its reduction over the row's threads (the
    one named ``tile.reduce`` of these kernels but for the (max, sum) pair's) is the
    whole then-branch of the one ``scf.if`` on a float compared unequal (ε != 0), whose
    else-branch yields 0."""
    lines = K.kernel_text(name, 8, V, "bf16", **forced).splitlines()
    (start,) = [i for i, line in enumerate(lines)
                if re.search(r"= scf\.if %\w+ -> \(f32\) \{", line) and "arith.cmpf une" in lines[i - 1]]
    depth, end = 0, None
    for i in range(start, len(lines)):
        depth += lines[i].count("{") - lines[i].count("}")
        if depth == 0:
            end = i
            break
    branch = "\n".join(lines[start:end + 1])
    assert branch.count('"tile.reduce"(') == 1 and "} else {" in branch and 'kind = "sum"' in branch


@pytest.mark.parametrize("name", ["cross_entropy", "cross_entropy_backward", "cross_entropy_fused"])
@pytest.mark.parametrize("M, V, dtype, forced", [(64, 1000, "f32", {"warps": 1}), (8, 40000, "bf16", {}),
                                                 (4096, 262144, "bf16", {})], ids=["warp", "cluster", "256k"])
def test_ptx_reads_the_logits_once_in_vectors_and_does_not_spill(name, M, V, dtype, forced, tmp_path):
    """One 16-byte load per vector, the stores, no local memory or spill, and one
    exponential per element (the fused kernel's dlogits reuse the forward's), plus the
    forward's two per thread (its rescales exp(m0 - a) and exp(m - A))."""
    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.kernels.library import _plan
    from tile_mlir.options import Options

    p = _plan(name, M, V, dtype, forced)
    assert p.kind == ("warp" if V == 1000 else "cluster")
    ptx = lower_to_ptx(K.kernel_text(name, M, V, dtype, **forced), Options(chip="sm_90a")).ptx
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == p.C  # one pass over the chunks
    stores = re.findall(r"st\.global\.(v4\.b32|b32)", ptx)
    stats, rows = (name != "cross_entropy_backward"), (name != "cross_entropy")
    assert sorted(stores) == ["b32"] * 2 * stats + ["v4.b32"] * p.C * rows
    # over a cluster the forward's (max, sum) pair is each warp's by two named butterflies
    # (one exponential: a lane's sum rescaled to its warp's max), then one combiner reduction
    # of the warps' pairs, whose combine adds one exponential a level of the warps' tree (the
    # lanes share it: fold = "tree") and one a CTA partial after the first; the loss alone
    # then has no use for exp(m - A)
    packed = name != "cross_entropy_backward" and p.packs_pair(writes_row=True)
    combines = 1 + (p.W.bit_length() - 1) + (p.CL - 1) - (name == "cross_entropy") if packed else 0
    assert ptx.count("ex2.approx") == p.E + (2 if name != "cross_entropy_backward" else 0) + combines
    assert ".local" not in ptx
    if shutil.which("ptxas"):
        (tmp_path / "k.ptx").write_text(ptx)
        info = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                              check=False, capture_output=True, text=True).stderr
        assert " 0 bytes spill stores" in info and " 0 bytes stack frame" in info, info


@pytest.mark.parametrize("M, V, overrides", SHAPES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_loss_and_gradient_from_one_read_against_float64(M, V, overrides, dtype):
    """cross_entropy_with_grad: the loss, lse and dlogits of one kernel (for dloss = 1; for
    ``none`` each row's own gradient) against the float64 formulas, with ignored rows and
    label smoothing, in every kind of plan; in place too."""
    overrides = plan_overrides(overrides, M, V, dtype)
    rng = np.random.default_rng([M, V, len(dtype), 7])
    x, t = inputs(rng, M, V, dtype, ignored=(0, M - 1))
    x64 = as_f64(x)
    for reduction, smoothing in (("mean", 0.0), ("sum", 0.1), ("none", 0.25)):
        loss, lse, dx = K.cross_entropy_with_grad(x, t, label_smoothing=smoothing, reduction=reduction, **overrides)
        want, want_lse = ref.cross_entropy(x64, t, smoothing=smoothing, reduction=reduction)
        assert_close(loss, want)
        assert_close(lse, want_lse)
        ones = np.ones(M if reduction == "none" else (), np.float32)
        assert dx.dtype == x.dtype and dx.shape == x.shape
        assert_close(dx, ref.cross_entropy_backward(x64, t, ones, smoothing=smoothing, reduction=reduction), dtype)
        assert not np.any(as_f64(dx)[[0, M - 1]])  # the ignored rows
    # in place, on every plan: the same loss, lse and dlogits bits, and the logits array
    # now holds dlogits; the race check on global memory finds no access to an element
    # of X/DX unordered with another thread's write of it
    for reduction, smoothing in (("mean", 0.1), ("none", 0.0)):
        want = K.cross_entropy_with_grad(x, t, label_smoothing=smoothing, reduction=reduction, **overrides)
        y = x.copy()
        with global_races():
            got = K.cross_entropy_with_grad(y, t, label_smoothing=smoothing, reduction=reduction, inplace=True,
                                            **overrides)
        assert got[2] is y and not np.array_equal(as_f64(y), as_f64(x))
        for a, b in zip(got, want):
            assert np.array_equal(as_f64(a), as_f64(b), equal_nan=True)


def test_loss_and_gradient_of_special_rows():
    """Every row ignored (the mean is NaN, the gradient 0), and rows of -inf, +inf and NaN
    as the two-kernel path gives them: the loss and lse bit for bit, the gradient's NaNs
    where it has them and its finite values to f32 rounding (the fused kernel reuses the
    forward's e = exp(x - m): e · exp(m - A) / S, where the backward computes exp(x - lse))."""
    rng = np.random.default_rng(11)
    x, t = inputs(rng, 4, 3001, "f32", ignored=(0, 1, 2, 3))
    loss, _, dx = K.cross_entropy_with_grad(x, t)
    assert np.isnan(loss) and not np.any(dx)
    x, t = inputs(rng, 4, 3001, "f32", ignored=())
    x[0, :] = -np.inf
    x[1, 5] = np.inf
    x[2, 7] = np.nan
    loss, lse, dx = K.cross_entropy_with_grad(x, t, reduction="none")
    want_loss, want_lse = K.cross_entropy(x, t, reduction="none")
    want_dx = K.cross_entropy_backward(x, t, want_lse, np.ones(4, np.float32), reduction="none")
    for got, want in ((loss, want_loss), (lse, want_lse)):
        assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.isnan(dx), np.isnan(want_dx)) and np.isnan(dx[:3]).all() and np.isfinite(dx[3]).all()
    np.testing.assert_allclose(dx, want_dx, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("M, V, dtype, kind", [(64, 1000, "f32", "warp"), (64, 2048, "bf16", "warp"),
                                               (8, 3001, "f32", "warps"), (8, 40000, "bf16", "cluster")])
def test_the_fused_kernel_orders_the_read_of_x_target_before_its_stores(M, V, dtype, kind):
    """In the PTX of cross_entropy_fused: one warp a row, one bar.warp.sync, after the
    loads of the logits began and before the first store; several warps, the CTA's
    barrier before it; a cluster, that barrier, then the push's arrive (release at cluster
    scope) and the wait on the CTA's mbarrier (acquire) too (docs/cross-entropy.md)."""
    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.options import Options

    forced = {"warp": {"warps": 1}, "warps": {"warps": 8, "rows": 1}}.get(kind, {})
    assert K.plan(M, V, dtype, **forced).kind == kind
    ptx = lower_to_ptx(K.kernel_text("cross_entropy_fused", M, V, dtype, **forced), Options(chip="sm_90a")).ptx
    store = ptx.index("st.global")
    assert ptx.count("bar.warp.sync") == (kind == "warp")
    if kind == "warp":
        assert ptx.index("ld.global") < ptx.index("bar.warp.sync") < store and "bar.sync" not in ptx
    else:
        assert re.search(r"\b(bar|barrier)\.sync\b", ptx[:store])
    if kind == "cluster":  # the first reduction's push: its arrive releases, the wait acquires
        arrive = ptx.index("mbarrier.arrive.release.cluster")
        wait = ptx.index("mbarrier.try_wait.parity.acquire.cluster")
        assert ptx.index("bar.sync") < arrive < wait < store


@pytest.mark.parametrize("mutation", ["no warp barrier", "rows past M read"])
def test_in_place_on_one_warp_a_row_needs_its_ordering(mutation, monkeypatch):
    """The fused kernel of a one-warp plan with its ordering of the x[target] read before
    the writes of dlogits removed (the bar.warp.sync; the guard that keeps a CTA's rows
    past M, clamped to the last row, from reading it) races, and the race check on
    global memory says where: the read of x[target], another lane's (or warp's) write."""
    from tile_mlir import api, build
    from tile_mlir.kernels import cross_entropy_kernels as CE

    M, V, dtype = (4, 1000, "f32") if mutation == "no warp barrier" else (6, 1000, "f32")
    p = K.plan(M, V, dtype)
    assert p.kind == "warp" and p.R == 4
    if mutation == "no warp barrier":
        monkeypatch.setattr(build.KernelBuilder, "warp_barrier", lambda self: None)
    else:
        this_row = CE._this_row
        monkeypatch.setattr(CE, "_this_row", lambda r, clamped=True: this_row(r))
    kernel = api.compile(CE.cross_entropy_fused(p, None).module, backend="interpreter")["cross_entropy_fused"]
    rng = np.random.default_rng([M, 13])
    x, t = inputs(rng, M, V, dtype, ignored=())
    loss, lse, scale = np.zeros(M, np.float32), np.zeros(M, np.float32), np.ones(1, np.float32)
    scalars = (np.int64(-100), np.float32(0.0), M)
    with global_races():  # out of place: nothing to order
        kernel.launch(p.grid(M), p.threads, x, t, loss, lse, np.empty_like(x), scale, *scalars)
    with global_races(), pytest.raises(InterpreterError) as e:
        kernel.launch(p.grid(M), p.threads, x, t, loss, lse, x, scale, *scalars)
    message = str(e.value)
    assert "a race on global memory argument 0 (float32[?, 1000]) = argument 4 (float32[?, 1000])" in message
    found = re.search(r"at index \[(\d+), (\d+)\]: thread \((\d+), 0, 0\) of block \((\d+), 0, 0\) reads it "
                      r"\(memref\.load at \S*cross_entropy_kernels\.py:\d+:\d+ \(_x_target\)\), and thread "
                      r"\((\d+), 0, 0\) of block \(\4, 0, 0\) writes it \(vector\.maskedstore at \S* \(_write_grad\)",
                      message)
    assert found, message
    row, column, reader, block, writer = (int(g) for g in found.groups())
    assert column == t[row] and writer // 32 == row % 4 and block == row // 4  # the row's warp writes x[target]
    if mutation == "no warp barrier":
        assert reader // 32 == writer // 32  # another lane of the same warp read it
    else:
        assert row == M - 1 and 4 * block + reader // 32 >= M  # a warp of a row past M read it


def _bf16_round(f32: np.ndarray) -> np.ndarray:
    """float32 values to bf16 bits, rounded to nearest even (written here, not the
    package's: the reference of the kernel's rounding); NaN stays NaN."""
    bits = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(f32), np.uint16(0x7FC0), rounded)


@pytest.mark.parametrize("M, V, overrides", [(7, 1000, {}), (3, 3001, {}), (9, 37, {}), (4, 4093, "small")])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_scale_unless_one_scales_in_place_or_leaves_the_bits(M, V, overrides, dtype):
    """x *= s in place: each product in f32 (exact in float64, then rounded to f32, then
    to bf16 for bf16), every plan kind, rows the plan's CTAs do not divide; with s == 1,
    the bits untouched, a signaling NaN's payload included (a product by 1 would quiet
    it): the kernel did not write. A NaN scale scales (every element NaN)."""
    overrides = plan_overrides(overrides, M, V, dtype)
    rng = np.random.default_rng([M, V, len(dtype), 5])
    x = to_dtype(3 * rng.standard_normal((M, V)), dtype)
    if dtype == "f32":
        x.view(np.uint32)[0, 3] = 0x7F800001  # signaling NaN
    else:
        x[0, 3] = 0x7F81
    before = x.copy()
    assert K.scale_unless_one(x, np.float32(1.0), **overrides) is x
    assert x.tobytes() == before.tobytes()
    s = np.float32(rng.uniform(0.1, 3.0))
    K.scale_unless_one(x, np.array([s]), **overrides)
    product = (as_f64(before) * np.float64(s)).astype(np.float32)
    want = _bf16_round(product) if dtype == "bf16" else product
    finite = np.isfinite(as_f64(before))
    assert np.array_equal(x[finite], want[finite])
    assert np.isnan(as_f64(x)[0, 3])
    K.scale_unless_one(x, np.float32("nan"), **overrides)
    assert np.isnan(as_f64(x)).all()


def test_scale_unless_one_reports_bad_arguments():
    x = np.ones((4, 8), np.float32)
    with pytest.raises(LaunchError, match="in place, so it must be contiguous"):
        K.scale_unless_one(x[:, ::2], np.float32(2.0))
    with pytest.raises(LaunchError, match=r"one value \(shape \(\) or \(1,\)\)"):
        K.scale_unless_one(x, np.ones(2, np.float32))
    with pytest.raises(LaunchError, match=r"an \(M, N\) array"):
        K.scale_unless_one(np.ones(8, np.float32), np.float32(2.0))
