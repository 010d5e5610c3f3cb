"""Cross-entropy (``K.cross_entropy``, ``K.cross_entropy_backward``, ``K.cross_entropy_with_grad``) on the GPU, on CUDA
tensors (the zero-copy path, torch's current stream), against torch's ``F.cross_entropy``
and its gradient in float64: f32 and bf16, vocabularies up to 256000
(``testing.fused.CE_GPU_SHAPES``), ignore_index rows, smoothing, the three reductions,
rows of -inf / +inf / NaN first, and dlogits in place (the same bits) on every plan. The
kernels come from the compile cache that ``python -m tile_mlir.testing.prepare`` fills;
see conftest.py for the commands. Needs torch."""

import pytest
from tile_mlir import kernels as K
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.fused import CE_GPU_SHAPES, DTYPES

torch = pytest.importorskip("torch")
F = torch.nn.functional

pytestmark = pytest.mark.skipif(not gpu_available() or not torch.cuda.is_available(), reason="no GPU")

# Relative L2 error against float64 (docs/spec: 1e-5 for f32; bf16 within its rounding).
TOLERANCE = {"f32": 1e-5, "bf16": 2.0**-8}


def inputs(M, V, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed % 2**63)
    x = 3 * torch.randn(M, V, device="cuda", generator=g)
    t = torch.randint(0, V, (M,), device="cuda", generator=g)
    t[1::7] = -100
    x[2, :] = float("-inf")  # NaN loss
    x[3, t[3]] = float("-inf")  # infinite loss
    x[4, 0::5] = float("-inf")  # nothing changes
    x[4, t[4]] = 0.5
    x[5, 7] = float("inf")  # NaN
    x[6, 9] = float("nan")  # NaN
    return x.to(torch.float32 if dtype == "f32" else torch.bfloat16), t


def rel_l2(got, want):
    finite = torch.isfinite(want)
    assert torch.equal(torch.isnan(got.double()), torch.isnan(want)), "NaN where torch has NaN, and only there"
    assert torch.equal(got.double()[torch.isinf(want)], want[torch.isinf(want)])
    return ((got.double()[finite] - want[finite]).norm() / want[finite].norm().clamp_min(1e-300)).item()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M, V", CE_GPU_SHAPES, ids=lambda v: str(v))
def test_cross_entropy_against_torch(M, V, dtype, seed):
    special, t = inputs(M, V, dtype, seed)
    clean = special.clone()
    clean[2:7] = special[7:12] if M >= 12 else 0.25  # for the mean and the sum, not NaN
    runs = ((special, "none", 0.0), (special, "none", 0.2), (clean, "mean", 0.1), (clean, "sum", 0.0))
    for x, reduction, eps in runs:
        loss, lse = K.cross_entropy(x, t, label_smoothing=eps, reduction=reduction)
        x64 = x.double().requires_grad_()
        want = F.cross_entropy(x64, t, label_smoothing=eps, reduction=reduction)
        dloss = torch.rand(want.shape, device="cuda") + 0.5
        (grad,) = torch.autograd.grad(want, x64, dloss.double(), retain_graph=True)
        assert loss.shape == want.shape and loss.dtype == torch.float32
        assert rel_l2(loss, want.detach()) < 1e-5
        dx = K.cross_entropy_backward(x, t, lse, dloss, label_smoothing=eps, reduction=reduction)
        assert dx.dtype == x.dtype and dx.shape == x.shape
        assert rel_l2(dx, grad) < TOLERANCE[dtype]
        inplace = x.clone()
        out = K.cross_entropy_backward(inplace, t, lse, dloss, label_smoothing=eps, reduction=reduction, inplace=True)
        bits = torch.int16 if dtype == "bf16" else torch.int32
        assert out.data_ptr() == inplace.data_ptr() and torch.equal(out.view(bits), dx.view(bits))
        # the loss and its gradient from one read (dloss = 1), out of place and in place
        ones = torch.ones(want.shape, device="cuda", dtype=torch.float64)
        (grad1,) = torch.autograd.grad(want, x64, ones)
        loss1, lse1, dx1 = K.cross_entropy_with_grad(x, t, label_smoothing=eps, reduction=reduction)
        assert rel_l2(loss1, want.detach()) < 1e-5 and torch.allclose(lse1, lse, rtol=0, atol=0, equal_nan=True)
        assert dx1.dtype == x.dtype and rel_l2(dx1, grad1) < TOLERANCE[dtype]
        # in place on every plan (37 x 1000: one warp a row, 37 rows in CTAs of 4)
        inplace = x.clone()
        loss2, lse2, out = K.cross_entropy_with_grad(inplace, t, label_smoothing=eps, reduction=reduction,
                                                     inplace=True)
        assert out.data_ptr() == inplace.data_ptr() and torch.equal(out.view(bits), dx1.view(bits))
        assert torch.allclose(loss2, loss1, rtol=0, atol=0, equal_nan=True)  # the same loss and lse
        assert torch.equal(lse2.view(torch.int32), lse1.view(torch.int32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_one_kernel_serves_every_row_count(dtype):
    """The row count is an argument (tile_mlir.dynamic_dims): the kernels prepared for
    37 x 1000 run 1, 3, 4, 5 and 1000 rows, against torch, with no compile."""
    from tile_mlir.kernels import library

    misses = None
    for M in (37, 1, 3, 4, 5, 1000):
        x, t = inputs(max(M, 12), 1000, dtype, M)
        x, t = x[:M].contiguous(), t[:M].contiguous()
        x = torch.where(torch.isfinite(x.float()), x.float(), 0.5).to(x.dtype)
        loss, lse = K.cross_entropy(x, t, reduction="sum")
        x64 = x.double().requires_grad_()
        want = F.cross_entropy(x64, t, reduction="sum")
        want.backward()
        assert abs(loss.item() - want.item()) <= 1e-5 * max(abs(want.item()), 1e-30)
        dx = K.cross_entropy_backward(x, t, lse, torch.ones((), device="cuda"), reduction="sum")
        assert rel_l2(dx, x64.grad) < TOLERANCE[dtype]
        misses = library._compiled.cache_info().misses if misses is None else misses
        assert library._compiled.cache_info().misses == misses  # nothing compiled after the first M


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M, V", CE_GPU_SHAPES, ids=lambda v: str(v))
def test_scale_unless_one_on_the_device(M, V, dtype):
    """K.scale_unless_one on CUDA tensors: a scale of 1 leaves every bit (a signaling
    NaN's payload included: nothing was written); another scale gives torch's float64
    product rounded to f32, then to bf16 for bf16 (torch's own rounding), bit for bit.
    Captured once in a CUDA graph, it decides on the device at each replay: scale 1
    leaves the bits, 2 doubles them (no host sync: the capture would fail on one)."""
    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    bits = torch.int32 if dtype == "f32" else torch.int16
    g = torch.Generator(device="cuda").manual_seed(M * V)
    x = (3 * torch.randn(M, V, device="cuda", generator=g)).to(torch_dtype)
    x.view(bits)[0, 5] = 0x7F800001 if dtype == "f32" else 0x7F81  # signaling NaN
    before = x.clone()
    one = torch.ones((), device="cuda")
    assert K.scale_unless_one(x, one) is x
    torch.cuda.synchronize()
    assert torch.equal(x.view(bits), before.view(bits))
    s = torch.full((1,), 0.7310585, device="cuda")
    K.scale_unless_one(x, s)
    want = (before.double() * s.double()).float().to(torch_dtype)
    finite = torch.isfinite(before.float())
    assert torch.equal(x[finite].view(bits), want[finite].view(bits))
    assert torch.isnan(x[0, 5].float())
    y, scale = before.clone(), torch.ones(1, device="cuda")
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        K.scale_unless_one(y, scale)
    y.copy_(before)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y.view(bits), before.view(bits))
    scale.fill_(2.0)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y[finite].view(bits), (before.double() * 2).float().to(torch_dtype)[finite].view(bits))
