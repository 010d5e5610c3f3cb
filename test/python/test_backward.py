"""The backward kernels (``K.softmax_backward``, ``K.logsumexp_backward``,
``K.rms_norm_backward``, ``K.add_rms_norm_backward``, ``K.layer_norm_backward``) in the CPU interpreter: against their
float64 formulas on fresh random inputs (f32: relative L2 error < 1e-5; bf16: within
twice bf16's rounding), N not a power of two, in each kind of row plan; against finite
differences of the float64 forward; rows of special values; and dw, db deterministic:
the same bits on two runs, and bit for bit the documented two-level order of the sums
(docs/training-kernels.md), modelled in numpy f32."""

import importlib
import inspect

import numpy as np
import pytest
from tile_mlir import LaunchError, OptionError
from tile_mlir import kernels as K
from tile_mlir.kernels.plan import registers_table
from tile_mlir.kernels.training import backward_plan, column_sums_grid, run_backward
from tile_mlir.testing.fused import as_f64, model_sums, to_dtype

I = {"backend": "interpreter"}
BF16_ROUNDING = 2.0**-9  # bf16's unit roundoff: 8 bits of significand
SHAPES = {"one warp per row": ((3, 4, 257), {}), "several warps per row": ((2, 3001), {}),
          "16 warps (the second pass reads again)": ((2, 3001), {"warps": 16})}
# Plan tables scaled down (a thread keeps 4 f32 or 8 bf16, at most 2 warps a CTA): a CTA
# holds 256 f32 or 512 bf16 columns, so a few hundred columns need a cluster.
SMALL = {dtype: registers_table(dtype, data_bytes=16, max_warps=2) for dtype in ("f32", "bf16")}
# (shape, CTAs of the persistent grid) -> the cluster plans: f32 CL4, CL8 and CL16, bf16
# CL2, CL4 and CL8; odd N (the last CTA's columns partly or wholly past N); grids of 2
# clusters over 3..7 row groups, so a cluster takes several rows, and of 1 cluster.
CLUSTER_SHAPES = {"f32": [((7, 997), 2), ((3, 1999), 1), ((5, 3001), 2)],
                  "bf16": [((7, 997), 2), ((3, 1999), 1), ((5, 3001), 2)]}


def formulas(name, *a):
    """The backward's outputs in float64, from its inputs (in float64)."""
    if name == "softmax_backward":
        y, dy = a
        return (y * (dy - (dy * y).sum(-1, keepdims=True)),)
    if name == "logsumexp_backward":
        x, l, dl = a
        return (dl[..., None] * np.exp(x - l[..., None]),)
    if name == "add_rmsnorm_backward":  # the norm's, of h, and the gradient that reached h itself
        dy, dh, h, w, rstd = a
        dx, dw = formulas("rmsnorm_backward", dy, h, w, rstd)
        return dx + dh, dw
    if name == "rmsnorm_backward":
        dy, x, w, rstd = a
        xhat, g = x * rstd[..., None], dy * w
        dx = rstd[..., None] * (g - xhat * (g * xhat).mean(-1, keepdims=True))
        return dx, (dy * xhat).reshape(-1, x.shape[-1]).sum(0)
    dy, x, w, mean, rstd = a
    xhat, g = (x - mean[..., None]) * rstd[..., None], dy * w
    dx = rstd[..., None] * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).reshape(-1, x.shape[-1]).sum(0), dy.reshape(-1, x.shape[-1]).sum(0)


def inputs(rng, name, shape, dtype):
    """The backward's inputs, its statistics from the forward kernels (as in training)."""
    x, dy = (to_dtype(rng.standard_normal(shape) * 2 + 0.3, dtype) for _ in range(2))
    w, b = to_dtype(1 + 0.5 * rng.standard_normal(shape[-1]), dtype), to_dtype(rng.standard_normal(shape[-1]), dtype)
    if name == "softmax_backward":
        return K.softmax(x, **I), dy
    if name == "logsumexp_backward":
        return x, K.logsumexp(x, **I), to_dtype(rng.standard_normal(shape[:-1]), dtype)
    if name == "rmsnorm_backward":
        return (dy, x, w, K.rms_norm(x, w, **I)[1])
    if name == "add_rmsnorm_backward":
        r, dh = (to_dtype(rng.standard_normal(shape), dtype) for _ in range(2))
        h, _, rstd = K.add_rms_norm(x, r, w, **I)
        return (dy, dh, h, w, rstd)
    return (dy, x, w, *K.layer_norm(x, w, b, **I)[1:])


def agrees(got, want, dtype):
    got = as_f64(got)
    assert got.shape == want.shape
    error = np.linalg.norm(got - want) / np.linalg.norm(want)
    if dtype == "f32":
        assert error < 1e-5, error
    else:  # one rounding of each output to bf16, the math in f32
        assert error < 2 * BF16_ROUNDING, error
        assert np.all(np.abs(got - want) <= 2 * BF16_ROUNDING * np.abs(want) + 1e-6 * np.abs(want).max())


@pytest.mark.parametrize("plan", list(SHAPES))
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", list(K.BACKWARD))
def test_backward_against_float64(name, dtype, plan):
    shape, overrides = SHAPES[plan]
    args = inputs(np.random.default_rng(), name, shape, dtype)
    outs = run_backward(name, *args, **I, **overrides)
    outs = outs if isinstance(outs, tuple) else (outs,)
    wants = formulas(name, *(as_f64(a) for a in args))
    assert outs[0].dtype == args[0].dtype and outs[0].shape == shape
    for got, want in zip(outs, wants):
        assert got.dtype == args[0].dtype
        agrees(got, want, dtype)


@pytest.mark.parametrize("which", range(3), ids=["7x997", "3x1999", "5x3001"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", list(K.BACKWARD))
def test_cluster_plans_against_float64(name, dtype, which):
    """A row split over a cluster of 2..16 CTAs (the plan's CTAs per row), the norms on a
    persistent grid of whole clusters: dx, dw, db against the float64 formulas."""
    shape, groups = CLUSTER_SHAPES[dtype][which]
    p = K.plan(shape[0], shape[1], dtype, BACKWARD_FORWARD[name], table=SMALL[dtype])
    assert p.CL > 1
    args = inputs(np.random.default_rng(), name, shape, dtype)
    outs = run_backward(name, *args, **I, table=SMALL[dtype], ctas=groups * p.CL)
    outs = outs if isinstance(outs, tuple) else (outs,)
    for got, want in zip(outs, formulas(name, *(as_f64(a) for a in args))):
        assert got.dtype == args[0].dtype
        agrees(got, want, dtype)


BACKWARD_FORWARD = {name: spec.forward for name, spec in K.BACKWARD.items()}
NORMS = [name for name, spec in K.BACKWARD.items() if spec.sums]


@pytest.mark.parametrize("where", ["one CTA a row", "a cluster"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", NORMS)
def test_the_next_row_loaded_early_gives_the_same_bits(name, dtype, where):
    """A norm's persistent loop with the next row loaded before this one is reduced
    (``prefetch``): dx, dw (db) bit for bit those of the loop without it (only the loads
    move), and against the float64 formulas; 7 rows on grids of 3 CTAs or 2 clusters, so
    a CTA takes 2 or 3 rows and the last row's prefetch is past M (its copies skip it;
    the interpreter stops at any access out of bounds)."""
    shape, table = ((7, 300), None) if where == "one CTA a row" else ((7, 997), SMALL[dtype])
    p = K.plan(*shape, dtype, BACKWARD_FORWARD[name], table=table)
    assert (p.CL > 1) == (where == "a cluster")
    args = inputs(np.random.default_rng(), name, shape, dtype)
    more = {"table": table} if table else {}
    runs = {on: run_backward(name, *args, **I, ctas=(2 * p.CL if table else 3), prefetch=on, **more)
            for on in (False, True)}
    for on, off in zip(runs[True], runs[False]):
        assert on.tobytes() == off.tobytes()
    for got, want in zip(runs[True], formulas(name, *(as_f64(a) for a in args))):
        agrees(got, want, dtype)


def test_prefetch_is_a_plan_choice_of_the_norms():
    """``prefetch`` forces the choice (the plan says it: `` P``); it is the norms' alone
    (the other backwards run a CTA a row, no loop), and a bool."""
    p = backward_plan("rmsnorm_backward", 64, 4096, "f32", prefetch=True)
    assert p.prefetch is True and p.label().endswith(" P") and "forced: prefetch = True" in p.why
    assert backward_plan("rmsnorm_backward", 64, 4096, "f32", prefetch=False).prefetch is False
    with pytest.raises(OptionError, match="prefetch is for the norms' persistent row loops; softmax_backward"):
        backward_plan("softmax_backward", 64, 4096, "f32", prefetch=True)
    with pytest.raises(OptionError, match="prefetch must be True, False or None, got 1"):
        backward_plan("layernorm_backward", 64, 4096, "f32", prefetch=1)


def test_a_forward_cluster_gives_the_backward_its_own_cluster(monkeypatch):
    """Where the forward's plan is a cluster and nothing is forced, the backward takes the
    cluster of BACKWARD_TABLES (fewer elements a thread): scaled down, the forward a
    cluster of 2 at N = 997 (8 f32 a thread), the backward one of 4 (4 a thread); the
    default API runs it, against the float64 formulas."""
    from tile_mlir.kernels.plan import TABLES
    from tile_mlir.kernels import training

    monkeypatch.setitem(TABLES, "f32", registers_table("f32", data_bytes=32, max_warps=2))
    monkeypatch.setitem(training.BACKWARD_TABLES, "f32", SMALL["f32"])
    monkeypatch.setattr(importlib.import_module("tile_mlir.kernels.plan"), "measured_table", lambda: {})  # the tables alone
    assert K.plan(5, 997, "f32", "layernorm").label() == "cluster R1 W2 E8 CL2"
    # `` P``: on a cluster the backward loads its next row early where its tiles fit
    assert training.backward_plan("layernorm_backward", 5, 997, "f32").label() == "cluster R1 W2 E4 CL4 P"
    args = inputs(np.random.default_rng(), "layernorm_backward", (5, 997), "f32")
    for got, want in zip(K.layer_norm_backward(*args, **I), formulas("layernorm_backward", *map(as_f64, args))):
        agrees(got, want, "f32")


def test_the_api_is_the_contract():
    """SPEC's names and argument order; one output for softmax and logsumexp, (dx, dw) and
    (dx, dw, db) for the norms."""
    params = {f: list(inspect.signature(getattr(K, f)).parameters)[:5] for f in
              ("softmax_backward", "logsumexp_backward", "rms_norm_backward", "layer_norm_backward")}
    assert params["softmax_backward"][:2] == ["y", "dy"]
    assert params["logsumexp_backward"][:3] == ["x", "l", "dl"]
    assert params["rms_norm_backward"][:4] == ["dy", "x", "weight", "rstd"]
    assert params["layer_norm_backward"] == ["dy", "x", "weight", "mean", "rstd"]


# --- finite differences of the float64 forward ------------------------------------------------


def numeric_gradient(f, a, h=1e-6):
    """d f / d a by central differences (f: float64 array -> float)."""
    grad = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (f(up) - f(down)) / (2 * h)
    return grad


def test_finite_differences_of_each_forward():
    """Each backward (f32 kernel) against d/dθ Σ dy · forward(θ), the forward in float64
    numpy and perturbed: dx, dw and db."""
    rng = np.random.default_rng()
    M, N, eps = 3, 7, 1e-5
    x, dy = rng.standard_normal((M, N)), rng.standard_normal((M, N))
    w, b = 1 + 0.5 * rng.standard_normal(N), rng.standard_normal(N)
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731
    x, dy, w, b = (f32(a).astype(np.float64) for a in (x, dy, w, b))  # exactly representable in f32

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def rms(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w

    def layer(x, w, b):
        m = x.mean(-1, keepdims=True)
        return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + eps) * w + b

    def close(got, want):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())

    close(K.softmax_backward(f32(softmax(x)), f32(dy), **I), numeric_gradient(lambda a: (dy * softmax(a)).sum(), x))
    lse = np.log(np.exp(x).sum(-1))
    dl = dy[:, 0]
    close(K.logsumexp_backward(f32(x), f32(lse), f32(dl), **I),
          numeric_gradient(lambda a: (dl * np.log(np.exp(a).sum(-1))).sum(), x))
    rstd = 1 / np.sqrt((x * x).mean(-1) + eps)
    dx, dw = K.rms_norm_backward(f32(dy), f32(x), f32(w), f32(rstd), **I)
    close(dx, numeric_gradient(lambda a: (dy * rms(a, w)).sum(), x))
    close(dw, numeric_gradient(lambda a: (dy * rms(x, a)).sum(), w))
    mean = x.mean(-1)
    rstd = 1 / np.sqrt(((x - mean[:, None]) ** 2).mean(-1) + eps)
    dx, dw, db = K.layer_norm_backward(f32(dy), f32(x), f32(w), f32(mean), f32(rstd), **I)
    close(dx, numeric_gradient(lambda a: (dy * layer(a, w, b)).sum(), x))
    close(dw, numeric_gradient(lambda a: (dy * layer(x, a, b)).sum(), w))
    close(db, numeric_gradient(lambda a: (dy * layer(x, w, a)).sum(), b))


# --- special values ------------------------------------------------------------------------------


def test_special_rows_follow_the_formulas():
    """Rows holding NaN, ±inf, only -inf, zeros, as torch's backward formulas give them
    (computed here in float64): NaN exactly where the formula gives NaN."""
    rng = np.random.default_rng()
    N = 40
    x = rng.standard_normal((6, N))
    x[1, 3], x[2, 5], x[3, [1, 9]] = np.nan, np.inf, -np.inf
    x[4], x[5] = -np.inf, 0.0
    x, dy = to_dtype(x, "f32"), to_dtype(rng.standard_normal((6, N)), "f32")
    for name, args in [("softmax_backward", (K.softmax(x, **I), dy)),
                       ("logsumexp_backward", (x, K.logsumexp(x, **I), dy[:, 0].copy()))]:
        got = as_f64(run_backward(name, *args, **I))
        with np.errstate(invalid="ignore"):
            (want,) = formulas(name, *(as_f64(a) for a in args))
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-6)
    # a NaN in a row of x makes its dx NaN, and every column of dw and db NaN
    w = to_dtype(1 + 0.5 * rng.standard_normal(N), "f32")
    clean = x.copy()
    clean[2:5] = 1.0
    dx, dw = K.rms_norm_backward(dy, clean, w, K.rms_norm(clean, w, **I)[1], **I)
    assert np.isnan(dx[1]).all() and np.isfinite(np.delete(dx, 1, 0)).all() and np.isnan(dw).all()
    mean, rstd = K.layer_norm(clean, w, w, **I)[1:]
    dx, dw, db = K.layer_norm_backward(dy, clean, w, mean, rstd, **I)
    assert np.isnan(dx[1]).all() and np.isnan(dw).all() and np.isfinite(db).all()


# --- the column sums: deterministic, in the documented order -----------------------------------------


def model_column_sums(dy, xhat, R, ctas):
    """dW as docs/training-kernels.md orders it, in numpy f32: with ``ctas`` clusters (or
    CTAs, one per row), partial row b·R + s sums fma(dy, x̂, acc) over rows (g·R + s) for
    g = b, b + ctas, ... from +0; then ``model_sums`` of the ctas·R partial rows."""
    M, N = dy.shape
    partials = np.zeros((ctas * R, N), np.float32)
    for group in range(-(-M // R)):
        for s in range(R):
            row = group * R + s
            if row < M:
                p = (group % ctas) * R + s
                exact = dy[row].astype(np.float64) * xhat[row].astype(np.float64) + partials[p].astype(np.float64)
                partials[p] = exact.astype(np.float32)  # an fma: one rounding (from float64)
    return model_sums(partials, column_sums_grid(N).row_warps)


# (N, P, row warps, column warps): 16 row warps with P = 40 (segments of 32: the second
# short, 14 empty), 600 (of 64: the tenth short, 6 empty) and 1056 (of 96: 11 full, 5
# empty); 8 over 300 rows (of 64: 4 full, the fifth short); 2 with 2 column warps; 1 (one
# chain of P rows, 4 column warps). LayerNorm's sums (dw and db) where it says so, bf16
# once.
SUMS_CASES = [(300, 40, 16, 1, "rmsnorm_backward", "f32"), (300, 600, 16, 1, "layernorm_backward", "f32"),
              (300, 1056, 16, 1, "layernorm_backward", "bf16"), (5000, 300, 8, 1, "rmsnorm_backward", "f32"),
              (20000, 100, 2, 2, "rmsnorm_backward", "f32"), (40000, 70, 1, 4, "rmsnorm_backward", "f32")]


@pytest.mark.parametrize("N, P, row_warps, column_warps, name, dtype", SUMS_CASES,
                         ids=[f"{n}x{p} {d}" for n, p, *_, d in SUMS_CASES])
def test_column_sums_add_segments_of_rows_in_the_documented_order(N, P, row_warps, column_warps, name, dtype):
    """The column sums alone on fresh random partial rows (with NaN, ±inf and −0.0 in
    some columns), dw and db: bit for bit ``model_sums``, where the order of the
    segments matters (the model with segments 1 and 2 swapped differs); a column of −0.0
    sums to +0."""
    shape = column_sums_grid(N)
    assert (shape.row_warps, shape.column_warps) == (row_warps, column_warps)
    rng = np.random.default_rng()
    _, sums = K.compiled_backward(name, 8, N, dtype, **I)
    assert (sums.grid, sums.block) == (-(-N // (32 * column_warps)), 32 * row_warps * column_warps)
    partials = [(rng.standard_normal((P, N)) * rng.uniform(0.5, 8, (P, 1))).astype(np.float32) for _ in range(2)]
    partials[0][:, 1] = -0.0
    partials[0][P // 3, 2], partials[0][P - 1, 3], partials[0][[0, P - 1], 4] = np.nan, np.inf, (np.inf, -np.inf)
    partials[0][P // 2, 5] = -np.inf
    arrays = partials[: 2 if name == "layernorm_backward" else 1]
    outs = [np.empty(N, np.uint16 if dtype == "bf16" else np.float32) for _ in arrays]
    sums.kernel.launch(sums.grid, sums.block, *arrays, *outs, P)
    for got, part in zip(outs, arrays):
        with np.errstate(invalid="ignore"):
            got, want = as_f64(got), as_f64(to_dtype(model_sums(part, row_warps), dtype))
        assert np.array_equal(np.isnan(got), np.isnan(want))
        keep = ~np.isnan(want)
        assert got[keep].tobytes() == want[keep].tobytes()
    first = as_f64(outs[0])
    assert np.isnan(first[[2, 4]]).all() and first[3] == np.inf and first[5] == -np.inf
    assert first[1] == 0 and not np.signbit(first[1])
    S = -(-P // (row_warps * 32)) * 32
    if dtype == "f32" and P > 2 * S:  # three segments: the order of the last two shows in the bits
        swapped = np.concatenate([partials[0][:S], partials[0][2 * S: 3 * S], partials[0][S: 2 * S],
                                  partials[0][3 * S:]])
        with np.errstate(invalid="ignore"):
            assert model_sums(swapped, row_warps)[6:].tobytes() != outs[0][6:].tobytes()


@pytest.mark.parametrize("overrides", [{}, {"warps": 2, "rows": 1}, {"warps": 16, "rows": 1}],
                         ids=["registers", "several warps", "16 warps"])
def test_column_sums_are_the_documented_order_bit_for_bit(overrides):
    rng = np.random.default_rng()
    M, N, ctas = 22, 300, 3
    R = backward_plan("rmsnorm_backward", M, N, "f32", **overrides).R  # the rows of a CTA: its partial rows
    x, dy = (to_dtype(rng.standard_normal((M, N)) * 2, "f32") for _ in range(2))
    w = to_dtype(1 + 0.5 * rng.standard_normal(N), "f32")
    rstd = K.rms_norm(x, w, **I)[1]
    _, dw = run_backward("rmsnorm_backward", dy, x, w, rstd, ctas=ctas, **I, **overrides)
    assert dw.tobytes() == model_column_sums(dy, x * rstd[:, None], R, ctas).tobytes()
    mean, rstd = K.layer_norm(x, w, w, **I)[1:]
    _, dw, db = run_backward("layernorm_backward", dy, x, w, mean, rstd, ctas=ctas, **I, **overrides)
    xhat = (x - mean[:, None]) * rstd[:, None]  # f32, as the kernel: (x - mean), then · rstd
    assert dw.tobytes() == model_column_sums(dy, xhat, R, ctas).tobytes()
    assert db.tobytes() == model_column_sums(dy, np.ones_like(dy), R, ctas).tobytes()


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_cluster_column_sums_are_the_documented_order_bit_for_bit(dtype):
    """With a cluster per row, each CTA of cluster b adds its columns of the rows of b's
    row groups into partial row b (the same order as one CTA per row): dw and db bit for
    bit the model, over 3 clusters of 4 (f32) or 2 (bf16) CTAs, and the same bits on a
    second run."""
    rng = np.random.default_rng()
    M, N, groups = 10, 1001, 3
    x, dy = (to_dtype(rng.standard_normal((M, N)) * 2, dtype) for _ in range(2))
    w = to_dtype(1 + 0.5 * rng.standard_normal(N), dtype)
    p = K.plan(M, N, dtype, "layernorm", table=SMALL[dtype])
    assert p.CL == {"f32": 4, "bf16": 2}[dtype]
    f32 = [as_f64(a).astype(np.float32) for a in (x, dy)]  # bf16 widens to f32 exactly
    mean, rstd = K.layer_norm(x, w, w, **I)[1:]
    runs = [run_backward("layernorm_backward", dy, x, w, mean, rstd, ctas=groups * p.CL, **I, table=SMALL[dtype])
            for _ in range(2)]
    assert all(a.tobytes() == b.tobytes() for a, b in zip(*runs))
    xhat = (f32[0] - mean[:, None]) * rstd[:, None]
    for got, want in zip(runs[0][1:], (model_column_sums(f32[1], xhat, p.R, groups),
                                       model_column_sums(f32[1], np.ones_like(f32[1]), p.R, groups))):
        assert as_f64(got).tobytes() == as_f64(to_dtype(want, dtype)).tobytes()
    rstd = K.rms_norm(x, w, **I)[1]
    _, dw = run_backward("rmsnorm_backward", dy, x, w, rstd, ctas=groups * p.CL, **I, table=SMALL[dtype])
    want = model_column_sums(f32[1], f32[0] * rstd[:, None], p.R, groups)
    assert as_f64(dw).tobytes() == as_f64(to_dtype(want, dtype)).tobytes()


def test_two_runs_give_the_same_bits_and_ctas_changes_only_the_rounding():
    rng = np.random.default_rng()
    x, dy = (to_dtype(rng.standard_normal((37, 500)), "f32") for _ in range(2))
    w = to_dtype(1 + 0.5 * rng.standard_normal(500), "f32")
    rstd = K.rms_norm(x, w, **I)[1]
    runs = [K.rms_norm_backward(dy, x, w, rstd, **I) for _ in range(2)]
    assert all(a.tobytes() == b.tobytes() for a, b in zip(*runs))
    _, other = K.rms_norm_backward(dy, x, w, rstd, ctas=2, **I)
    np.testing.assert_allclose(other, runs[0][1], rtol=1e-5, atol=1e-5)


def test_bad_arrays_are_reported():
    x = np.ones((4, 10), np.float32)
    with pytest.raises(LaunchError, match=r"rstd must have shape \(4,\)"):
        K.rms_norm_backward(x, x, x[0], np.ones(3, np.float32), **I)
    with pytest.raises(LaunchError, match="f32"):
        K.rms_norm_backward(x, x, x[0], np.ones(4, np.float64), **I)
    with pytest.raises(LaunchError, match="takes 2 arrays"):
        run_backward("softmax_backward", x, **I)
    with pytest.raises(LaunchError, match=r"weight must have shape \(10,\)"):
        K.layer_norm_backward(x, x, x[0, :5], x[:, 0], x[:, 0], **I)


def test_torch_tensors_give_torch_tensors():
    torch = pytest.importorskip("torch")
    x, dy, w = torch.randn(3, 200), torch.randn(3, 200), torch.rand(200) + 0.5
    xr, wr = x.double().requires_grad_(), w.double().requires_grad_()
    torch.nn.functional.rms_norm(xr, (200,), wr, 1e-6).backward(dy.double())
    dx, dw = K.rms_norm_backward(dy, x, w, K.rms_norm(x, w, **I)[1], **I)
    assert isinstance(dx, torch.Tensor) and isinstance(dw, torch.Tensor)
    torch.testing.assert_close(dx.double(), xr.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(dw.double(), wr.grad, rtol=1e-5, atol=1e-5)


# --- the generated code, and a GPU machine without MLIR -------------------------------------------


@pytest.mark.parametrize("N, one_cta", [(4096, True), (16384, True), (65536, False)])
def test_layernorm_backward_sums_cross_the_warps_once_a_row(N, one_cta):
    """LayerNorm's backward: on one CTA a row, Σg and Σg·x̂ are one combiner reduction of
    the pair (one exchange, one barrier a row); over a cluster, two sum reductions (the
    pair spilled there, docs/training-kernels.md)."""
    text = K.text_backward("layernorm_backward", 64, N, "f32")[0]
    assert (backward_plan("layernorm_backward", 64, N, "f32").CL == 1) is one_cta
    assert text.count('"tile.reduce2"') == (1 if one_cta else 0)
    assert text.count('"tile.reduce"') == (0 if one_cta else 2)


@pytest.mark.parametrize("name", list(K.BACKWARD))
def test_ptx_has_vector_accesses_and_no_local_memory(name, tmp_path):
    """At 64 x 1000 f32 (one warp per row): 16-byte loads and stores of the rows, no local
    memory; ptxas: no spill, no stack. The column sums likewise."""
    import re
    import shutil
    import subprocess

    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.kernels.training import text_backward
    from tile_mlir.options import Options

    for text in text_backward(name, 64, 1000, "f32"):
        ptx = lower_to_ptx(text, Options(chip="sm_90a")).ptx
        assert ".local" not in ptx
        if ".entry column_sums" not in ptx:
            assert re.search(r"ld\.global\.v4\.b32", ptx) and re.search(r"st\.global\.v4\.b32", ptx)
        if shutil.which("ptxas"):
            source = tmp_path / "k.ptx"
            source.write_text(ptx)
            info = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(source), "-o", str(tmp_path / "k.cubin")],
                                  check=False, capture_output=True, text=True).stderr
            assert "0 bytes spill stores" in info and "0 bytes stack frame" in info, info


def test_a_machine_without_mlir_finds_both_kernels_by_name(tmp_path, monkeypatch):
    """text_backward(remember=True) (what prepare runs) keeps the row kernel's and the
    column sums' MLIR by name; where MLIR is missing, they are read back by that name."""
    from tile_mlir.kernels import library
    from tile_mlir.kernels.training import text_backward

    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    library._text.cache_clear()
    made = text_backward("layernorm_backward", 40, 700, "bf16", remember=True)
    assert len(made) == 2 and "column_sums" in made[1]
    assert len(list((tmp_path / "by-name").iterdir())) == 2
    library._text.cache_clear()

    def no_mlir(*args):
        raise ImportError("No module named 'mlir'")

    monkeypatch.setattr(library, "_built", no_mlir)
    assert text_backward("layernorm_backward", 40, 700, "bf16") == made
    library._text.cache_clear()


def test_compiled_backward_binds_device_arrays_in_the_documented_order(fake, tmp_path, monkeypatch):
    """What a benchmark does, on a fake CUDA driver (test/python/fakecuda.py): the row
    kernel on ``ctas`` CTAs takes (dy, x, weight, rstd, dx, dw_partials, partial_rows,
    rows) and the column sums (dw_partials, dw, P), in that order; both are compiled here
    and remembered by name, once for every M and ctas."""
    import ctypes

    from fakecuda import DeviceArray, param

    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    rows, sums = K.compiled_backward("rmsnorm_backward", 64, 1000, "bf16", backend="cuda", ctas=5, warps=1, rows=4)
    assert (rows.grid, rows.block, rows.signature) == (
        5, 128, "rmsnorm_backward(dy, x, weight, rstd, dx, dw_partials, partial_rows, rows)")
    # the column sums at N = 1000: 32 CTAs of 32 columns, 16 warps over the partial rows
    assert (sums.grid, sums.block, sums.signature) == (32, 512, "column_sums(dw_partials, dw, P)")
    assert len(list((tmp_path / "by-name").iterdir())) == 2
    other, _ = K.compiled_backward("rmsnorm_backward", 9, 1000, "bf16", backend="cuda", ctas=3, warps=1, rows=4)
    assert other.kernel is rows.kernel and other.grid == 3  # another M and ctas: the same kernel
    assert len(list((tmp_path / "by-name").iterdir())) == 2
    dy, x, dx = (DeviceArray(np.zeros((64, 1000), np.uint16), "<V2") for _ in range(3))
    w, dw = (DeviceArray(np.zeros(1000, np.uint16), "<V2") for _ in range(2))
    rstd, partials = DeviceArray(np.zeros(64, np.float32), "<f4"), DeviceArray(np.zeros((20, 1000), np.float32), "<f4")
    seen = []
    fake.kernels["rmsnorm_backward"] = lambda p: seen.append(
        [param(p, i, ctypes.c_uint64) for i in range(6)] + [param(p, i, ctypes.c_int64) for i in (6, 7)])
    fake.kernels["column_sums"] = lambda p: seen.append(
        [param(p, i, ctypes.c_uint64) for i in range(2)] + [param(p, 2, ctypes.c_int64)])
    rows.kernel.bind(rows.grid, rows.block, dy, x, w, rstd, dx, partials, 20, 64)()
    sums.kernel.bind(sums.grid, sums.block, partials, dw, 20)()
    pointers = [a.host.ctypes.data for a in (dy, x, w, rstd, dx, partials)]
    assert seen == [[*pointers, 20, 64], [partials.host.ctypes.data, dw.host.ctypes.data, 20]]
    assert [launch[:2] for launch in fake.launches[-2:]] == [((5, 1, 1), (128, 1, 1)), ((32, 1, 1), (512, 1, 1))]


def test_no_rows_give_an_empty_dx_and_zero_sums():
    x, w, stat = np.ones((0, 10), np.float32), np.ones(10, np.float32), np.ones(0, np.float32)
    dx, dw, db = K.layer_norm_backward(x, x, w, stat, stat, **I)
    assert dx.shape == (0, 10) and dw.tolist() == [0.0] * 10 and db.tolist() == [0.0] * 10


def test_rows_past_the_plan_table_and_a_grid_of_part_clusters_are_refused():
    """A row longer than a cluster of 16 holds (4096 f32 columns in the small table;
    262144 by the default one) is an OptionError naming the limit; a persistent grid that
    is not whole clusters, one naming the cluster."""
    x = np.random.default_rng().standard_normal((3, 4097)).astype(np.float32)
    with pytest.raises(OptionError, match=r"N = 4097 is longer than the longest row the plan table holds on chip"
                                          r" \(4096 f32 columns: 16 CTAs"):
        run_backward("softmax_backward", x, x, table=SMALL["f32"], **I)
    with pytest.raises(OptionError, match="N = 262145 is longer .* [(]262144 f32 columns: 16 CTAs"):
        K.compiled_backward("rmsnorm_backward", 4, 262145, "f32", backend="interpreter")
    x = x[:, :997]
    with pytest.raises(OptionError, match=r"ctas must be a positive int, a multiple of the plan's 4 CTA\(s\) per row"
                                          r" \(cluster R1 W2 E4 CL4 P\), got 6"):
        run_backward("rmsnorm_backward", x, x, x[0], x[:, 0], ctas=6, table=SMALL["f32"], **I)


def test_long_rows_take_cluster_plans_on_a_grid_of_whole_clusters():
    """At the benchmark's 1024 x 65536 the backward takes the measured cluster of 8 (16
    elements a thread: measured_plans.json), at 262144 one of 16 (the largest); the norms' row
    kernel runs on whole clusters (default_ctas), its column sums on R partial rows a
    cluster; both build (the MLIR text; the GPU runs them), the partial rows a dynamic
    dim (one kernel for every M and grid)."""
    from tile_mlir.kernels.training import backward_plan, default_ctas, partial_rows, text_backward

    for N, dtype, CL, E in [(65536, "f32", 8, 16), (65536, "bf16", 8, 16), (262144, "f32", 16, 16),
                            (262144, "bf16", 16, 32)]:
        p = backward_plan("layernorm_backward", 1024, N, dtype)
        G = default_ctas(1024, p)
        assert (p.CL, p.E) == (CL, E) and p.CL * p.CH >= N and G % CL == 0 and G <= 2 * 132
        row_kernel, sums = text_backward("layernorm_backward", 1024, N, dtype)
        assert partial_rows(G, p) == G // CL * p.R
        assert f"memref<?x{N}xf32>" in row_kernel and "cluster" in row_kernel
        assert f"memref<?x{N}xf32>" in sums


def test_the_grid_of_clusters_is_no_more_than_the_gpu_holds(fake, tmp_path, monkeypatch):
    """On the GPU (a fake driver here), the norms' default grid of clusters is capped by
    cuOccupancyMaxActiveClusters of the row kernel: a cluster over it would run alone in
    a second wave. A GPU that holds 3 clusters gets 3; one that does not say keeps
    default_ctas; ctas given is kept."""
    from tile_mlir.kernels.training import backward_plan, compiled_backward, default_ctas

    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    p = backward_plan("rmsnorm_backward", 64, 997, "f32", table=SMALL["f32"])
    assert p.CL > 1 and default_ctas(64, p) > 3 * p.CL
    fake.sm_threads = 3 * p.threads * 2  # the fake's cluster of a fixed size is 2 CTAs
    rows, _ = compiled_backward("rmsnorm_backward", 64, 997, "f32", backend="cuda", table=SMALL["f32"])
    assert rows.grid == 3 * p.CL
    rows, _ = compiled_backward("rmsnorm_backward", 64, 997, "f32", backend="cuda", table=SMALL["f32"], ctas=5 * p.CL)
    assert rows.grid == 5 * p.CL
    fake.fail["cuOccupancyMaxActiveClusters"] = 1
    rows, _ = compiled_backward("rmsnorm_backward", 65, 997, "f32", backend="cuda", table=SMALL["f32"])
    assert rows.grid == default_ctas(65, p)


def test_a_grid_of_one_cta_rows_is_one_wave_of_what_the_sms_hold(fake, tmp_path, monkeypatch):
    """On the GPU (a fake driver here, whose SM holds 2048 threads), where a row takes one
    CTA, the default grid is 132 x cuOccupancyMaxActiveBlocksPerMultiprocessor (one full
    wave), at most one CTA per row; a driver that does not say keeps default_ctas; ctas
    given is kept; a plan of several one-warp rows a CTA keeps default_ctas."""
    from tile_mlir.kernels.training import SMS, backward_plan, compiled_backward, default_ctas

    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    one = {"warps": 8, "rows": 1}  # one CTA of 256 threads a row
    p = backward_plan("rmsnorm_backward", 40000, 4096, "f32", **one)
    assert (p.CL, p.R, p.threads) == (1, 1, 256) and default_ctas(40000, p) == 2 * SMS
    rows, _ = compiled_backward("rmsnorm_backward", 40000, 4096, "f32", backend="cuda", **one)
    assert rows.grid == SMS * (2048 // 256)
    rows, _ = compiled_backward("rmsnorm_backward", 41, 4096, "f32", backend="cuda", **one)
    assert rows.grid == 41  # one CTA per row at most
    rows, _ = compiled_backward("rmsnorm_backward", 40001, 4096, "f32", backend="cuda", ctas=7, **one)
    assert rows.grid == 7
    measured = backward_plan("rmsnorm_backward", 40000, 4096, "f32")  # the measured plan: the same rule
    rows, _ = compiled_backward("rmsnorm_backward", 40000, 4096, "f32", backend="cuda")
    assert measured.R == 1 and rows.grid == SMS * (2048 // measured.threads)
    several = {"warps": 1, "rows": 4}
    q = backward_plan("rmsnorm_backward", 40000, 512, "f32", **several)
    assert q.R > 1
    rows, _ = compiled_backward("rmsnorm_backward", 40000, 512, "f32", backend="cuda", **several)
    assert rows.grid == default_ctas(40000, q)
    fake.fail["cuOccupancyMaxActiveBlocksPerMultiprocessor"] = 1
    rows, _ = compiled_backward("rmsnorm_backward", 40002, 4096, "f32", backend="cuda", **one)
    assert rows.grid == default_ctas(40002, p)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", ["rmsnorm_backward", "layernorm_backward"])
def test_the_norms_backward_plans_are_the_measured_ones(name, dtype):
    """measured_plans.json keeps the norms' backward plans under their own names
    (benchmarks.plan_search --kernels rmsnorm_backward,layernorm_backward): at each
    searched N the backward's plan is the fastest measured one and says so; every N from
    above half the shortest searched length to the longest gets a measured plan within its
    forward's register budget: one CTA a row up to the longest searched on one CTA, a
    cluster past it; longer rows keep the cluster rule, and a forced plan is the forced
    one."""
    from tile_mlir.kernels.plan import measured_table

    entries = measured_table()[name][dtype]
    assert [e["N"] for e in entries] == sorted(e["N"] for e in entries) and len(entries) >= 3
    for e in entries:
        p = backward_plan(name, 4096, e["N"], dtype)
        assert p.label() == e["label"] and p.why.startswith("backward: ") and f"measured at N = {e['N']}" in p.why
    first, last = entries[0]["N"], entries[-1]["N"]
    one_cta = max(e["N"] for e in entries if e["ctas"] == 1)  # the longest searched on one CTA
    for N in [first // 2 + 1, *range(first, last + 1, 2999), last]:
        p = backward_plan(name, 64, N, dtype)
        assert "measured" in p.why and (p.CL == 1) == (N <= one_cta) and p.CL * p.CH >= N, (N, p.label())
        assert p.E <= K.registers_table(dtype).elements(p.threads) and p.threads * p.O <= 2048
    assert "measured" not in backward_plan(name, 64, first // 2, dtype).why
    assert "measured" not in backward_plan(name, 64, last + 1, dtype).why
    assert backward_plan(name, 64, 4096, dtype, warps=8, rows=1).label().startswith("warps R1 W8 ")
