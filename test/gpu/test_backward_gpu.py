"""The backward kernels (K.softmax_backward, K.logsumexp_backward, K.rms_norm_backward,
K.layer_norm_backward) on the GPU, at issue 19's benchmark shapes (4096x4096,
4096x16384; 1024x65536 and 256x262144 on cluster plans, a row over 8 or 16 CTAs), f32
and bf16, on CUDA tensors (zero copy): against torch's autograd of the
forward in float64 (relative L2 error < 1e-5 for f32, < twice bf16's rounding for bf16),
softmax's and logsumexp's special rows (first rows) against their float64 formulas, and
dw, db the same bits on two runs; and the column sums alone bit for bit their documented
order (``testing.fused.model_sums``) on random partial rows.

The statistics the backward takes (y, l, rstd, mean) come from torch in f32, rounded to
the dtype where the contract has them in it (y, l). logsumexp's l in bf16 carries bf16's
rounding of l into exp(x − l) (|l| · 2^-9, as torch's own bf16 backward), so its bf16
rows are checked against the formula with that l, in float64. The kernels come from the
compile cache ``python -m tile_mlir.testing.prepare`` fills (``testing.fused.BACKWARD_CASES``).
"""

import os
import zlib

import numpy as np
import pytest
from tile_mlir import kernels as K
from tile_mlir.runtime import gpu_available
from tile_mlir.kernels.training import column_sums_grid, partial_rows
from tile_mlir.testing.fused import BACKWARD_SHAPES, DTYPES, TORCH_GPU_SHAPES, model_sums, special_rows, to_dtype

torch = pytest.importorskip("torch")
F = torch.nn.functional

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
pytestmark = pytest.mark.skipif(BACKEND != "cuda" or not gpu_available(), reason="no GPU (the interpreter is too"
                                " slow at these shapes: test/python/test_backward.py runs small ones)")
BF16_ROUNDING = 2.0**-9
TORCH = {"f32": torch.float32, "bf16": torch.bfloat16}


def rel_l2(got, want):
    return float((got.double() - want).norm() / want.norm())


def limit(dtype):
    return 1e-5 if dtype == "f32" else 2 * BF16_ROUNDING


def generator(name, M, N, dtype, seed):
    return torch.Generator(device="cuda").manual_seed((seed ^ zlib.crc32(f"{name} {M}x{N} {dtype}".encode())) % 2**63)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M, N", BACKWARD_SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("name", ["softmax", "logsumexp"])
def test_softmax_and_logsumexp_backward(name, M, N, dtype, seed):
    g, T = generator(name, M, N, dtype, seed), TORCH[dtype]
    x = torch.randn(M, N, generator=g, device="cuda", dtype=torch.float32)
    rows = special_rows(np.random.default_rng(seed), N)
    x[: len(rows)] = torch.from_numpy(np.stack(list(rows.values()))).float().cuda()
    x = x.to(T)
    special = len(rows)
    x64 = x.double().requires_grad_()
    if name == "softmax":
        dy = torch.randn(M, N, generator=g, device="cuda").to(T)
        y = torch.softmax(x.float(), -1).to(T)
        dx = K.softmax_backward(y, dy)
        torch.softmax(x64, -1).backward(dy.double())
        formula = y.double() * (dy.double() - (dy.double() * y.double()).sum(-1, keepdim=True))
    else:
        dl = torch.randn(M, generator=g, device="cuda").to(T)
        l = torch.logsumexp(x.float(), -1).to(T)
        dx = K.logsumexp_backward(x, l, dl)
        torch.logsumexp(x64, -1).backward(dl.double())
        formula = dl.double()[:, None] * torch.exp(x.double() - l.double()[:, None])
    assert dx.dtype == T and dx.shape == (M, N)
    # the special rows: NaN where the formula gives NaN, the rest close
    got, want = dx[:special].double(), formula[:special]
    assert torch.equal(got.isnan(), want.isnan()), f"{name}: NaN rows differ (seed {seed})"
    finite = want.isfinite()
    torch.testing.assert_close(got[finite], want[finite], rtol=4 * BF16_ROUNDING if dtype == "bf16" else 1e-5,
                               atol=1e-6)
    reference = x64.grad if (name == "softmax" or dtype == "f32") else formula
    error = rel_l2(dx[special:], reference[special:])
    assert error < limit(dtype), f"{name} {M}x{N} {dtype}: relative L2 error {error:.3g} (seed {seed})"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M, N", BACKWARD_SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("name", ["rms_norm", "layer_norm"])
def test_norm_backward_against_autograd_and_the_same_bits_twice(name, M, N, dtype, seed):
    g, T = generator(name, M, N, dtype, seed), TORCH[dtype]
    x, dy = (torch.randn(M, N, generator=g, device="cuda").to(T) for _ in range(2))
    w = (1 + 0.5 * torch.randn(N, generator=g, device="cuda")).to(T)
    b = torch.randn(N, generator=g, device="cuda").to(T)
    xf = x.float()
    x64, w64, b64 = (a.double().requires_grad_() for a in (x, w, b))
    if name == "rms_norm":
        rstd = torch.rsqrt(xf.square().mean(-1) + 1e-6)
        run = lambda: K.rms_norm_backward(dy, x, w, rstd)  # noqa: E731
        F.rms_norm(x64, (N,), w64, 1e-6).backward(dy.double())
        wants = (x64.grad, w64.grad)
    else:
        mean, rstd = xf.mean(-1), torch.rsqrt(xf.var(-1, unbiased=False) + 1e-5)
        run = lambda: K.layer_norm_backward(dy, x, w, mean, rstd)  # noqa: E731
        F.layer_norm(x64, (N,), w64, b64, 1e-5).backward(dy.double())
        wants = (x64.grad, w64.grad, b64.grad)
    first, second = run(), run()
    torch.cuda.synchronize()
    for label, got, again, want in zip(("dx", "dw", "db"), first, second, wants):
        assert got.dtype == T
        error = rel_l2(got, want)
        assert error < limit(dtype), f"{name} {M}x{N} {dtype} {label}: relative L2 error {error:.3g} (seed {seed})"
        if label != "dx":
            assert torch.equal(got.view(torch.int16 if dtype == "bf16" else torch.int32),
                               again.view(torch.int16 if dtype == "bf16" else torch.int32)), f"{label}: bits differ"


# The shapes whose column sums prepare compiles: issue 19's and tile_mlir.torch's (4096 x
# 512: the RMSNorm of benchmarks/train_step.py).
SUMS_SHAPES = [(M, N, dtype) for M, N in BACKWARD_SHAPES for dtype in DTYPES] + list(TORCH_GPU_SHAPES)


@pytest.mark.parametrize("M, N, dtype", SUMS_SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("name", ["rmsnorm_backward", "layernorm_backward"])
def test_column_sums_are_the_documented_order_bit_for_bit(name, M, N, dtype, seed):
    """The column sums alone, on random f32 partial rows (a column of −0.0, one with NaN,
    one with +inf): P of the default grid, and a P that ends inside a segment, dw (and
    db) bit for bit ``model_sums`` (NaN where it is NaN)."""
    rows, sums = K.compiled_backward(name, M, N, dtype, backend="cuda")
    shape = column_sums_grid(N)
    assert (sums.grid, sums.block) == (shape.grid, shape.threads)
    g = generator(name, M, N, dtype, seed)
    for P in (partial_rows(rows.grid, rows.plan), 777 if N <= 16384 else 77):
        arrays = 2 if name == "layernorm_backward" else 1
        partials = [torch.randn(P, N, generator=g, device="cuda") * 4 for _ in range(arrays)]
        partials[0][:, 1], partials[0][P // 2, 2], partials[0][P - 1, 3] = -0.0, float("nan"), float("inf")
        outs = [torch.empty(N, device="cuda", dtype=TORCH[dtype]) for _ in partials]
        sums.kernel.launch(sums.grid, sums.block, *partials, *outs, P)
        torch.cuda.synchronize()
        for part, out in zip(partials, outs):
            want = model_sums(part.cpu().numpy(), shape.row_warps)
            got = out.float().cpu().numpy()
            assert np.array_equal(np.isnan(got), np.isnan(want)), f"{name} {N} P={P}: NaN columns differ (seed {seed})"
            keep, unsigned = ~np.isnan(want), np.uint16 if dtype == "bf16" else np.uint32
            got_bits = out.view(torch.int16 if dtype == "bf16" else torch.int32).cpu().numpy().view(unsigned)
            want_bits = to_dtype(want, dtype).view(unsigned)
            assert np.array_equal(got_bits[keep], want_bits[keep]), f"{name} {N} {dtype} P={P}: bits (seed {seed})"
