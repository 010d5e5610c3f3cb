"""Cross-entropy of a linear layer's output without its logits (``K.linear_cross_entropy``,
``K.linear_cross_entropy_with_grad``) in the CPU interpreter, against the formulas in
float64 numpy written here from the meaning (logits = h · weightᵀ, torch's cross-entropy
of them, and its gradients dh = g · weight, dweight = gᵀ · h for g = dloss/dlogits): f32
and bf16, chunks of 8 rows up to all of them (M not a multiple of the chunk), both
reductions, label smoothing, ignored rows, and bad input."""

import numpy as np
import pytest
from tile_mlir import kernels as K
from tile_mlir.errors import LaunchError, OptionError
from tile_mlir.kernels.linear_loss import chunk_rows
from tile_mlir.testing.fused import as_f64, to_dtype


def expected(h, w, t, smoothing, reduction, ignore_index=-100):
    """(loss, dh, dweight) in float64 for dloss = 1, from the definitions (not from the
    kernels' reference module): a row's loss (1 - ε)(lse - x_t) + ε(lse - mean x), 0 where
    ignored; its gradient softmax(x) - ε/V - (1 - ε)·onehot(t), 0 where ignored; a mean
    divides both by the rows not ignored."""
    x = h @ w.T
    M, V = x.shape
    top = x.max(axis=1, keepdims=True)
    lse = (top + np.log(np.exp(x - top).sum(axis=1, keepdims=True)))[:, 0]
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    rows = np.where(valid, (1 - smoothing) * (lse - x[np.arange(M), tc]) + smoothing * (lse - x.mean(axis=1)), 0)
    g = np.exp(x - lse[:, None]) - smoothing / V
    g[np.arange(M), tc] -= 1 - smoothing
    g[~valid] = 0
    n = valid.sum() if reduction == "mean" else 1
    return rows.sum() / n, g @ w / n, g.T @ h / n


def rel(got, want):
    return float(np.linalg.norm(as_f64(got) - want) / np.linalg.norm(want))


def inputs(rng, M, D, V, dtype):
    h = to_dtype(rng.standard_normal((M, D)), dtype)
    w = to_dtype(rng.standard_normal((V, D)) / np.sqrt(D) * 3, dtype)
    t = rng.integers(0, V, M)
    t[1::5] = -100
    return h, w, t


# (M, D, V, chunk rows): several chunks with a short last one; one chunk of all the rows;
# a chunk longer than M; V over one warp's row (several warps per row).
CASES = [(21, 8, 50, 8), (19, 16, 300, None), (9, 4, 37, 64), (12, 8, 3001, 8)]


@pytest.mark.parametrize("M, D, V, rows", CASES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_loss_and_gradients_against_float64(M, D, V, rows, dtype):
    rng = np.random.default_rng([M, D, V, len(dtype)])
    h, w, t = inputs(rng, M, D, V, dtype)
    h64, w64 = as_f64(h), as_f64(w)
    # f32: the spec's 1e-5; bf16: the logits and dlogits rounded to bf16 (2^-8 relative
    # each), so within a few of bf16's roundings
    tol = 1e-5 if dtype == "f32" else 2.0**-6
    for reduction, smoothing in (("mean", 0.0), ("sum", 0.1), ("mean", 0.25)):
        loss, dh, dw = K.linear_cross_entropy_with_grad(h, w, t, label_smoothing=smoothing, reduction=reduction,
                                                        chunk_rows=rows)
        want, want_dh, want_dw = expected(h64, w64, t, smoothing, reduction)
        assert loss.shape == () and loss.dtype == np.float32
        assert dh.shape == h.shape and dh.dtype == h.dtype and dw.shape == w.shape and dw.dtype == w.dtype
        assert abs(float(loss) - want) <= tol * abs(want), (float(loss), want)
        assert rel(dh, want_dh) < tol and rel(dw, want_dw) < tol, (rel(dh, want_dh), rel(dw, want_dw))
        assert not np.any(as_f64(dh)[1::5]), "an ignored row has no gradient"
        only = K.linear_cross_entropy(h, w, t, label_smoothing=smoothing, reduction=reduction, chunk_rows=rows)
        assert only.shape == () and abs(float(only) - want) <= tol * abs(want)


def test_the_loss_does_not_depend_on_the_chunks():
    """Each row's loss is its own, and the rows' losses are reduced over all M in one fixed
    order: the same bits whatever the chunk."""
    rng = np.random.default_rng(7)
    h, w, t = inputs(rng, 37, 8, 90, "f32")
    losses = {float(K.linear_cross_entropy_with_grad(h, w, t, chunk_rows=r)[0]) for r in (8, 16, 40)}
    losses |= {float(K.linear_cross_entropy(h, w, t, chunk_rows=r)) for r in (8, 40)}
    assert len(losses) == 1, losses


def test_every_row_ignored():
    """A mean over no rows is NaN (as torch's), and no row has a gradient."""
    rng = np.random.default_rng(3)
    h, w, _ = inputs(rng, 10, 4, 20, "f32")
    t = np.full(10, -100)
    loss, dh, dw = K.linear_cross_entropy_with_grad(h, w, t, chunk_rows=8)
    assert np.isnan(loss) and not np.any(dh) and not np.any(dw)
    assert float(K.linear_cross_entropy_with_grad(h, w, t, reduction="sum")[0]) == 0.0


def test_no_rows():
    h, w = np.zeros((0, 4), np.float32), np.ones((20, 4), np.float32)
    loss, dh, dw = K.linear_cross_entropy_with_grad(h, w, np.zeros(0, np.int64), reduction="sum")
    assert float(loss) == 0.0 and dh.shape == (0, 4) and dw.shape == (20, 4) and not np.any(dw)


def test_chunk_rows_rule():
    assert chunk_rows(4096, 32000, "f32") == chunk_rows(8192, 256000, "bf16") == 2048
    assert chunk_rows(5000, 32000, "f32") == 1672  # three chunks of 1667 rows, in whole 8s
    assert chunk_rows(100, 32000, "f32") == 104  # no more than M needs
    assert chunk_rows(4096, 256000, "f32") == 1024  # 1 GiB holds 1048 rows: four chunks of 1024
    assert chunk_rows(4096, 10**9, "f32") == 8  # at least 8 rows


@pytest.mark.parametrize("call, error, match", [
    (lambda h, w, t: K.linear_cross_entropy(h, w, t, reduction="none"), OptionError, "mean or sum"),
    (lambda h, w, t: K.linear_cross_entropy(h, w, t, chunk_rows=12), OptionError, "multiple of 8"),
    (lambda h, w, t: K.linear_cross_entropy(h, w, t, chunk_rows=16.5), OptionError, "multiple of 8"),
    (lambda h, w, t: K.linear_cross_entropy(h, w[:, :3], t), LaunchError, r"weight \(V, D\)"),
    (lambda h, w, t: K.linear_cross_entropy(h, w[:0], t), LaunchError, "at least one class"),
    (lambda h, w, t: K.linear_cross_entropy(h, w.astype(np.float64), t), LaunchError, "f32 or bf16"),
    (lambda h, w, t: K.linear_cross_entropy(h, to_dtype(w, "bf16"), t), LaunchError, "one dtype"),
    (lambda h, w, t: K.linear_cross_entropy(h, w, t[:-1]), LaunchError, "target must have shape"),
    (lambda h, w, t: K.linear_cross_entropy(h, w, np.where(t == 2, 20, t)), LaunchError, "not a class"),
    (lambda h, w, t: K.linear_cross_entropy(h, w, t, label_smoothing=2.0), OptionError, "label_smoothing"),
])
def test_bad_input_is_refused_with_what_is_wrong(call, error, match):
    rng = np.random.default_rng(0)
    h, w, t = inputs(rng, 10, 4, 20, "f32")
    t[:] = np.arange(10) % 20
    with pytest.raises(error, match=match):
        call(h, w, t)
