"""tile_mlir.torch on CUDA tensors (zero copy, torch's current stream): the functions and
their gradients against torch's in float64, f32 and bf16; the cross-entropy module at the
training step's shape; torch.compile(fullgraph=True) (Inductor) of a model using the
custom ops, against eager; and the same bits on two backward runs (dw of RMSNorm and
LayerNorm). The kernels come from the compile cache that ``python -m
tile_mlir.testing.prepare`` fills (``testing.fused.TORCH_GPU_SHAPES``, ``CE_GPU_SHAPES``);
see conftest.py for the commands. Needs torch and a GPU."""

import pytest
from tile_mlir.runtime import gpu_available

torch = pytest.importorskip("torch")
F = torch.nn.functional
tt = pytest.importorskip("tile_mlir.torch")

pytestmark = pytest.mark.skipif(not gpu_available() or not torch.cuda.is_available(), reason="no GPU")

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
TOLERANCE = {"f32": 1e-5, "bf16": 2.0**-7}


def rand(*shape, dtype=torch.float32, seed=0, scale=1.0):
    g = torch.Generator(device="cuda").manual_seed(seed % 2**63)
    return (scale * torch.randn(shape, generator=g, device="cuda")).to(dtype)


def rel(got, want):
    return ((got.double() - want).norm() / want.norm()).item()


def grads(fn, *inputs, seed=9):
    leaves = [a.detach().requires_grad_() for a in inputs]
    y = fn(*leaves)
    return y, torch.autograd.grad(y, leaves, rand(*y.shape, dtype=y.dtype, seed=seed))


N = 1024
CASES = {
    "softmax": (tt.softmax, lambda x: torch.softmax(x, -1), 1),
    "logsumexp": (tt.logsumexp, lambda x: torch.logsumexp(x, -1), 1),
    "rms_norm": (lambda x, w: tt.rms_norm(x, w, 1e-6), lambda x, w: F.rms_norm(x, (N,), w, 1e-6), 2),
    "layer_norm": (lambda x, w, b: tt.layer_norm(x, w, b, 1e-5), lambda x, w, b: F.layer_norm(x, (N,), w, b, 1e-5), 3),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_functions_and_gradients_against_torch(name, dtype):
    ours, theirs, arity = CASES[name]
    tdt = DTYPES[dtype]
    inputs = [rand(4, 64, N, dtype=tdt, seed=1)] + [1 + rand(N, dtype=tdt, seed=2 + i, scale=0.3)
                                                   for i in range(arity - 1)]
    y, g = grads(ours, *inputs)
    y_ref, g_ref = grads(theirs, *(a.double() for a in inputs))
    assert y.dtype == tdt and y.is_cuda and rel(y, y_ref) < TOLERANCE[dtype]
    for a, b in zip(g, g_ref):
        assert a.dtype == tdt and rel(a, b) < 2 * TOLERANCE[dtype]
    if arity > 1:  # dw (and db): the same bits on a second run
        _, again = grads(ours, *inputs)
        assert all(torch.equal(a, b) for a, b in zip(g[1:], again[1:]))


@pytest.mark.parametrize("shape, dtype", [((4, 64, N), "f32"), ((4, 64, N), "bf16"), ((8, 512, 512), "f32")],
                         ids=["f32", "bf16", "train-step-f32"])
def test_add_rms_norm_and_its_gradients_against_torch(shape, dtype):
    """``tt.add_rms_norm(x, r, w) -> (y, h)`` (h = x + r, y its RMSNorm) and the gradients of
    x, r and w from both outputs against torch's autograd in float64; h bit for bit torch's
    ``x + r``; dw the same bits on a second run. The shapes: TORCH_GPU_SHAPES (the last,
    benchmarks/train_step.py's)."""
    tdt, n = DTYPES[dtype], shape[-1]
    x, r = rand(*shape, dtype=tdt, seed=50), rand(*shape, dtype=tdt, seed=51)
    w = 1 + rand(n, dtype=tdt, seed=52, scale=0.3)
    dy, dh = rand(*shape, dtype=tdt, seed=53), rand(*shape, dtype=tdt, seed=54)

    def run(fn, inputs):
        leaves = [a.detach().requires_grad_() for a in inputs]
        y, h = fn(*leaves)
        return (y, h), torch.autograd.grad((y * dy.to(y.dtype)).sum() + (h * dh.to(h.dtype)).sum(), leaves)

    def theirs(x, r, w):
        h = x + r
        return F.rms_norm(h, (n,), w, 1e-6), h

    (y, h), g = run(lambda x, r, w: tt.add_rms_norm(x, r, w, 1e-6), (x, r, w))
    (y64, _), g64 = run(theirs, (x.double(), r.double(), w.double()))
    assert y.dtype == h.dtype == tdt and y.is_cuda and torch.equal(h, x + r) and rel(y, y64) < TOLERANCE[dtype]
    for a, b in zip(g, g64):
        assert a.dtype == tdt and rel(a, b) < 2 * TOLERANCE[dtype]
    _, again = run(lambda x, r, w: tt.add_rms_norm(x, r, w, 1e-6), (x, r, w))
    assert torch.equal(g[2], again[2])


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_cross_entropy_loss_module(dtype):
    x = rand(4096, 32000, dtype=DTYPES[dtype], seed=3, scale=2.0)
    t = torch.randint(0, 32000, (4096,), device="cuda", generator=torch.Generator(device="cuda").manual_seed(4))
    t[::11] = -100
    xl = x.detach().requires_grad_()
    loss = tt.CrossEntropyLoss(label_smoothing=0.1)(xl, t)
    loss.backward()
    x64 = x.double().requires_grad_()
    ref = F.cross_entropy(x64, t, label_smoothing=0.1)
    ref.backward()
    assert loss.dtype == x.dtype and rel(loss, ref.detach()) < TOLERANCE[dtype]
    assert rel(xl.grad, x64.grad) < TOLERANCE[dtype]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_inplace_backward_by_any_dloss(dtype, reduction):
    """inplace=True at the training step's shape: dloss 1 (loss.backward(), the device
    skips the pass) and dloss 0.37 (K.scale_unless_one scales; per row for "none"), each
    against torch's gradient in float64; a second backward raises."""
    x = rand(4096, 32000, dtype=DTYPES[dtype], seed=5, scale=2.0)
    t = torch.randint(0, 32000, (4096,), device="cuda", generator=torch.Generator(device="cuda").manual_seed(6))
    t[::13] = -100
    for w in (1.0, 0.37):
        held = x.detach().requires_grad_()
        logits = held * 1  # a non-leaf, as an LM head's output: its buffer becomes dlogits
        loss = tt.cross_entropy(logits, t, label_smoothing=0.1, reduction=reduction, inplace=True)
        (loss.sum() * w).backward(retain_graph=True)
        x64 = x.double().requires_grad_()
        (F.cross_entropy(x64, t, label_smoothing=0.1, reduction=reduction).sum() * w).backward()
        assert rel(held.grad, x64.grad) < TOLERANCE[dtype], (w, reduction)
        with pytest.raises(RuntimeError, match="its backward runs once|modified by an inplace operation"):
            loss.sum().backward()  # ours; for "none", torch's check of mul_'s version first


def test_torch_compile_fullgraph_matches_eager():
    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.proj, self.loss = tt.RMSNorm(512), torch.nn.Linear(512, 32000), tt.CrossEntropyLoss()

        def forward(self, x, t):
            return self.loss(self.proj(self.norm(x)), t)

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    model = Head().cuda()
    x = rand(4096, 512, seed=5)
    t = torch.randint(0, 32000, (4096,), device="cuda")
    compiled = torch.compile(model, fullgraph=True)
    loss = compiled(x, t)
    loss.backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    eager = model(x, t)
    eager.backward()
    assert abs(loss.item() - eager.item()) <= 1e-5 * abs(eager.item())
    assert all(rel(a, p.grad.double()) < 1e-4 for a, p in zip(got, model.parameters()))


@pytest.mark.parametrize("name", list(CASES))
def test_a_changing_batch_compiles_nothing(name):
    """The function and its gradients at M = 1, 3, 7, 64, 1000 rows on CUDA tensors: right
    at every M (against torch in float64), and its kernels (forward, backward, the norms'
    column sums: 2 or 3) compiled at the first M only (``library._kernel``: one kernel
    for every M, from the compile cache)."""
    from tile_mlir.kernels import library

    ours, theirs, arity = CASES[name]
    for cached in (library._kernel, library._compiled, library._compiled_for):
        cached.cache_clear()
    for rows in (1, 3, 7, 64, 1000):
        inputs = [rand(rows, N, seed=20 + rows)] + [1 + rand(N, seed=2 + j, scale=0.3) for j in range(arity - 1)]
        y, g = grads(ours, *inputs)
        y_ref, g_ref = grads(theirs, *(a.double() for a in inputs))
        assert rel(y, y_ref) < TOLERANCE["f32"] and all(rel(a, b) < 2 * TOLERANCE["f32"] for a, b in zip(g, g_ref))
        assert library._kernel.cache_info().misses == (3 if "norm" in name else 2), rows
