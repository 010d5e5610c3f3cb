"""The functional API of the fused kernels (``from tile_mlir import kernels as K``), in the
CPU interpreter, against numpy in float64 on fresh random inputs: x of shape (..., N)
with the leading dims as rows, N not a power of two, f32 and bf16 (``ml_dtypes.bfloat16``
arrays and ``uint16`` bits), and the per-row statistics the backward passes need: rms_norm's
rstd, layer_norm's mean and rstd, f32 whatever x's dtype."""

import numpy as np
import pytest
from tile_mlir import kernels as K
from tile_mlir.kernels import library
from tile_mlir.testing.fused import ATOL, RTOL, as_f64, to_dtype

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = ml_dtypes.bfloat16


def close(got, want, dtype):
    """``got`` (f32, bf16 bits or ml_dtypes bf16) agrees with the float64 ``want``, NaN for NaN."""
    got = as_f64(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=ATOL[dtype], equal_nan=True)


def inputs(rng, shape, dtype):
    x = rng.standard_normal(shape) * 3 + 0.5
    w, b = 1 + 0.5 * rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
    cast = (lambda a: np.asarray(a, np.float32).astype(BF16)) if dtype == "bf16" else (lambda a: np.asarray(a, np.float32))
    return cast(x), cast(w), cast(b)


@pytest.mark.parametrize("shape", [(3, 4, 257), (2, 3001)], ids=["one warp per row", "several warps per row"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_the_four_forwards_against_float64(shape, dtype):
    rng = np.random.default_rng()
    x, w, b = inputs(rng, shape, dtype)
    xd, wd, bd = (as_f64(a) for a in (x, w, b))

    y = K.softmax(x, backend="interpreter")
    assert y.dtype == x.dtype and y.shape == shape
    e = np.exp(xd - xd.max(-1, keepdims=True))
    close(y, e / e.sum(-1, keepdims=True), dtype)

    lse = K.logsumexp(x, backend="interpreter")
    assert lse.dtype == x.dtype and lse.shape == shape[:-1]
    close(lse, np.log(np.exp(xd).sum(-1)), dtype)

    y, rstd = K.rms_norm(x, w, eps=1e-6, backend="interpreter")
    want_rstd = 1 / np.sqrt((xd * xd).mean(-1) + 1e-6)
    assert y.dtype == x.dtype and y.shape == shape and rstd.dtype == np.float32 and rstd.shape == shape[:-1]
    close(y, xd * want_rstd[..., None] * wd, dtype)
    close(rstd, want_rstd, "f32")

    y, mean, rstd = K.layer_norm(x, w, b, eps=1e-5, backend="interpreter")
    want_mean = xd.mean(-1)
    want_rstd = 1 / np.sqrt(((xd - want_mean[..., None]) ** 2).mean(-1) + 1e-5)
    assert (mean.dtype, rstd.dtype) == (np.float32, np.float32) and mean.shape == rstd.shape == shape[:-1]
    close(y, (xd - want_mean[..., None]) * want_rstd[..., None] * wd + bd, dtype)
    close(mean, want_mean, "f32")
    close(rstd, want_rstd, "f32")


def test_eps_reaches_the_kernel_and_its_defaults_are_the_contract():
    """rms_norm's eps defaults to 1e-6, layer_norm's to 1e-5; a row of zeros shows eps
    alone in rstd (1 / sqrt(eps))."""
    x = np.zeros((2, 100), np.float32)
    w, b = np.ones(100, np.float32), np.zeros(100, np.float32)
    for call, eps in [(lambda **e: K.rms_norm(x, w, backend="interpreter", **e)[1], 1e-6),
                      (lambda **e: K.layer_norm(x, w, b, backend="interpreter", **e)[2], 1e-5)]:
        np.testing.assert_allclose(call(), 1 / np.sqrt(eps), rtol=1e-6)
        np.testing.assert_allclose(call(eps=0.25), 2.0, rtol=1e-6)


def test_bf16_as_uint16_bits_gives_bits_back():
    rng = np.random.default_rng()
    x = to_dtype(rng.standard_normal((5, 300)), "bf16")
    w = to_dtype(1 + 0.5 * rng.standard_normal(300), "bf16")
    y, rstd = K.rms_norm(x, w, backend="interpreter")
    assert y.dtype == np.uint16 and rstd.dtype == np.float32
    xd, wd = as_f64(x), as_f64(w)
    want = 1 / np.sqrt((xd * xd).mean(-1) + 1e-6)
    close(y, xd * want[:, None] * wd, "bf16")
    close(rstd, want, "f32")


def test_the_statistics_of_special_rows():
    """A NaN makes the row's mean and rstd NaN; an infinity makes rms_norm's rstd 0 (the
    mean of squares is infinite) and layer_norm's statistics NaN or infinite, as the
    float64 formulas give."""
    rng = np.random.default_rng()
    x = rng.standard_normal((4, 64)).astype(np.float32)
    x[1, 7], x[2, 3], x[3, 5] = np.nan, np.inf, -np.inf
    w, b = np.ones(64, np.float32), np.zeros(64, np.float32)
    _, rstd = K.rms_norm(x, w, backend="interpreter")
    assert np.isnan(rstd[1]) and rstd[2] == 0.0 and rstd[3] == 0.0 and 0 < rstd[0] < np.inf
    _, mean, rstd = K.layer_norm(x, w, b, backend="interpreter")
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        want_mean = xd.mean(-1)
        want_rstd = 1 / np.sqrt(((xd - want_mean[:, None]) ** 2).mean(-1) + 1e-5)
    np.testing.assert_allclose(mean, want_mean, rtol=1e-5, equal_nan=True)
    np.testing.assert_allclose(rstd, want_rstd, rtol=1e-5, equal_nan=True)


def test_each_shape_is_compiled_once_per_process():
    rng = np.random.default_rng()
    x = rng.standard_normal((7, 130)).astype(np.float32)
    K.softmax(x, backend="interpreter")
    before = library._compiled.cache_info()
    K.softmax(rng.standard_normal((7, 130)).astype(np.float32), backend="interpreter")
    after = library._compiled.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses


def test_torch_tensors_give_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 200)
    w, b = torch.rand(200) + 0.5, torch.randn(200)
    y, mean, rstd = K.layer_norm(x, w, b, backend="interpreter")
    assert isinstance(y, torch.Tensor) and mean.dtype == torch.float32
    ref = torch.nn.functional.layer_norm(x.double(), (200,), w.double(), b.double(), 1e-5)
    torch.testing.assert_close(y.double(), ref, rtol=2e-5, atol=1e-6)
