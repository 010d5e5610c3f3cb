"""tile_mlir.torch on CPU tensors (the kernels in the CPU interpreter): the functions and
their gradients against torch's own in float64, gradcheck at tiny shapes, the modules as
drop-ins (torch's state dicts load), and torch.compile(fullgraph=True) keeping the custom
ops in its graph. Skips without torch (CI has none; the functional API's numpy path is
tested in test_fused.py, test_kernels_api.py and test_cross_entropy.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tile_mlir.errors import OptionError

torch = pytest.importorskip("torch")
F = torch.nn.functional
tt = pytest.importorskip("tile_mlir.torch")
from tile_mlir import kernels as K  # noqa: E402
from tile_mlir.torch import ops  # noqa: E402

M, N = 6, 40  # rows, columns: tiny, the interpreter is slow


def rand(*shape, dtype=torch.float32, seed=0, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(shape, generator=g, dtype=torch.float64)).to(dtype)


def rel(got, want):
    return ((got.double() - want).norm() / want.norm()).item()


def grads(fn, *inputs, dy_seed=9):
    """fn's output and the gradients of <fn(inputs), dy> with respect to the inputs."""
    leaves = [a.detach().requires_grad_() for a in inputs]
    y = fn(*leaves)
    dy = rand(*y.shape, dtype=y.dtype, seed=dy_seed)
    return y, torch.autograd.grad(y, leaves, dy)


CASES = {
    "softmax": (tt.softmax, lambda x: torch.softmax(x, -1), 1),
    "logsumexp": (tt.logsumexp, lambda x: torch.logsumexp(x, -1), 1),
    "rms_norm": (lambda x, w: tt.rms_norm(x, w, 1e-6), lambda x, w: F.rms_norm(x, (N,), w, 1e-6), 2),
    "layer_norm": (lambda x, w, b: tt.layer_norm(x, w, b, 1e-5), lambda x, w, b: F.layer_norm(x, (N,), w, b, 1e-5), 3),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_functions_and_gradients_against_torch_in_float64(name, dtype):
    ours, theirs, arity = CASES[name]
    inputs = [rand(2, M // 2, N, dtype=dtype, seed=1)] + [1 + rand(N, dtype=dtype, seed=2 + i, scale=0.3)
                                                         for i in range(arity - 1)]
    y, g = grads(ours, *inputs)
    y_ref, g_ref = grads(theirs, *(a.double() for a in inputs))
    assert y.dtype == dtype and y.shape == y_ref.shape
    tol = 1e-5 if dtype == torch.float32 else 2.0**-7
    assert rel(y, y_ref) < tol
    for a, b in zip(g, g_ref):
        assert a.dtype == dtype and a.shape == b.shape
        assert rel(a, b) < (tol if dtype == torch.float32 else 2.0**-6)  # bf16: the rounded dy and y


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_add_rms_norm_and_its_gradients_against_torch_in_float64(dtype):
    """``tt.add_rms_norm(x, r, w) -> (y, h)``: h = x + r, y = F.rms_norm(h), and the
    gradients of x, r and w from both outputs' (each alone, and together) against torch's
    autograd in float64; the module ``RMSNorm(x, residual)`` gives the same."""
    x, r = rand(M, N, dtype=dtype, seed=40), rand(M, N, dtype=dtype, seed=41)
    w = 1 + rand(N, dtype=dtype, seed=42, scale=0.3)
    dy, dh = rand(M, N, dtype=dtype, seed=43), rand(M, N, dtype=dtype, seed=44)
    tol, gtol = (1e-5, 1e-5) if dtype == torch.float32 else (2.0**-7, 2.0**-6)

    def run(fn, inputs, uses):
        leaves = [a.detach().requires_grad_() for a in inputs]
        y, h = fn(*leaves)
        total = sum(((y * dy.to(y.dtype)).sum(), (h * dh.to(h.dtype)).sum())[i] for i in uses)
        return (y, h), torch.autograd.grad(total, leaves, allow_unused=True)

    def theirs(x, r, w):
        h = x + r
        return F.rms_norm(h, (N,), w, 1e-6), h

    for uses in ((0, 1), (0,), (1,)):
        (y, h), g = run(lambda x, r, w: tt.add_rms_norm(x, r, w, 1e-6), (x, r, w), uses)
        (y64, h64), g64 = run(theirs, (x.double(), r.double(), w.double()), uses)
        assert y.dtype == h.dtype == dtype and rel(y, y64) < tol and torch.equal(h, x + r)
        for a, b in zip(g, g64):
            if b is None:  # h alone: w has no gradient
                assert a is None or not a.any()
                continue
            assert a.dtype == dtype and rel(a, b) < gtol, uses
    norm = tt.RMSNorm(N, dtype=dtype)
    assert all(torch.equal(a, b) for a, b in zip(norm(x, r), tt.add_rms_norm(x, r, norm.weight, 1e-6)))


@pytest.mark.parametrize("reduction, smoothing", [("mean", 0.0), ("sum", 0.1), ("none", 0.2)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_cross_entropy_against_torch_in_float64(reduction, smoothing, dtype):
    x = rand(M, 37, dtype=dtype, seed=3, scale=3.0)
    t = torch.randint(0, 37, (M,), generator=torch.Generator().manual_seed(4))
    t[2] = -100

    def ours(x):
        return tt.cross_entropy(x, t, label_smoothing=smoothing, reduction=reduction)

    def theirs(x):
        return F.cross_entropy(x, t, label_smoothing=smoothing, reduction=reduction)

    loss, (dx,) = grads(ours, x)
    loss_ref, (dx_ref,) = grads(theirs, x.double())
    assert loss.dtype == dtype and loss.shape == loss_ref.shape
    tol = 1e-5 if dtype == torch.float32 else 2.0**-7
    assert rel(loss, loss_ref) < tol and rel(dx, dx_ref) < tol
    assert not dx[2].any()


class Watch(torch.utils._python_dispatch.TorchDispatchMode):
    """A dispatch mode that records the ops it sees and lets them through: with one
    active, the functions must call the ops' twins (torch's dispatcher), not their
    implementations."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("name", [*CASES, "cross_entropy"])
def test_eager_path_gives_the_custom_ops_bits_and_skips_the_dispatcher(name):
    """Called eagerly, a function runs the op's implementation itself (its autograd an
    autograd.Function named ``<op>_autograd``: ops.call); under a mode, the same Function
    around the op's twin (``tile_mlir_raw.<op>``) and its backward's, through the
    dispatcher. Both give the same bits, forward and backward, and no grad records
    nothing."""
    if name == "cross_entropy":
        t = torch.randint(0, N, (M,), generator=torch.Generator().manual_seed(21))
        t[1] = -100
        fn, inputs = (lambda x: tt.cross_entropy(x, t, label_smoothing=0.1)), [rand(M, N, seed=20, scale=2.0)]
    else:
        fn, _, arity = CASES[name]
        inputs = [rand(M, N, seed=20)] + [1 + rand(N, seed=22 + i, scale=0.3) for i in range(arity - 1)]
    op = "cross_entropy_with_grad" if name == "cross_entropy" else name  # the logits require grad
    y, g = grads(fn, *inputs)
    assert y.grad_fn.name().startswith(f"{op}_autograd")
    with Watch() as watch:
        y_op, g_op = grads(fn, *inputs)
    assert f"tile_mlir_raw.{op}" in watch.seen  # the twin, through the dispatcher
    if op in ops.BACKWARD and op not in ops.formula_backwards():
        assert f"tile_mlir_raw.{ops.BACKWARD[op]}" in watch.seen
    assert not any(s.startswith("tile_mlir.") for s in watch.seen)  # never the ops with autograd
    assert torch.equal(y, y_op) and all(torch.equal(a, b) for a, b in zip(g, g_op))
    with torch.no_grad():
        assert fn(*(a.requires_grad_() for a in inputs)).grad_fn is None


def test_the_ops_with_autograd_give_the_functions_bits():
    """``torch.ops.tile_mlir.<op>`` (register_autograd) differentiates as the functions do."""
    x, w = rand(M, N, seed=30).requires_grad_(), (1 + rand(N, seed=31, scale=0.3)).requires_grad_()
    y, (gx, gw) = grads(lambda x, w: tt.rms_norm(x, w), x, w)
    y_op, (gx_op, gw_op) = grads(lambda x, w: torch.ops.tile_mlir.rms_norm(x, w, 1e-6)[0], x, w)
    assert torch.equal(y, y_op) and torch.equal(gx, gx_op) and torch.equal(gw, gw_op)


def test_eager_path_is_differentiable_once():
    x = rand(M, N, seed=23).requires_grad_()
    dy = rand(M, N, seed=24).requires_grad_()
    (dx,) = torch.autograd.grad(tt.softmax(x), x, dy, create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        dx.sum().backward()


def test_gradcheck_at_tiny_shapes():
    """Finite differences in float32 (the kernels' precision): a step of 1e-3, tolerances
    to match."""
    kw = dict(eps=1e-3, atol=2e-3, rtol=2e-2, nondet_tol=0.0)
    x = rand(3, 8, seed=5).requires_grad_()
    w = (1 + rand(8, seed=6, scale=0.3)).requires_grad_()
    b = rand(8, seed=7, scale=0.3).requires_grad_()
    t = torch.tensor([1, -100, 7])
    with pytest.warns(UserWarning, match="not a double precision"):
        assert torch.autograd.gradcheck(tt.softmax, (x,), **kw)
        assert torch.autograd.gradcheck(lambda x, w: tt.rms_norm(x, w), (x, w), **kw)
        assert torch.autograd.gradcheck(lambda x, w, b: tt.layer_norm(x, w, b), (x, w, b), **kw)
        assert torch.autograd.gradcheck(lambda x: tt.cross_entropy(x, t, label_smoothing=0.1), (x,), **kw)


def test_modules_are_drop_ins_whose_state_dicts_load_torchs():
    x = rand(M, N, seed=8)
    norm, ref = tt.RMSNorm(N, eps=1e-6), torch.nn.RMSNorm(N, eps=1e-6)
    with torch.no_grad():
        ref.weight.copy_(1 + rand(N, seed=10, scale=0.3))
    norm.load_state_dict(ref.state_dict())
    assert rel(norm(x), F.rms_norm(x.double(), (N,), ref.weight.double(), 1e-6)) < 1e-5
    ln, ln_ref = tt.LayerNorm(N), torch.nn.LayerNorm(N)
    with torch.no_grad():
        ln_ref.bias.copy_(rand(N, seed=11))
    ln.load_state_dict(ln_ref.state_dict())
    assert rel(ln(x), F.layer_norm(x.double(), (N,), ln_ref.weight.double(), ln_ref.bias.double())) < 1e-5
    t = torch.randint(0, N, (M,), generator=torch.Generator().manual_seed(12))
    loss_fn = tt.CrossEntropyLoss(label_smoothing=0.1)
    assert rel(loss_fn(x, t), F.cross_entropy(x.double(), t, label_smoothing=0.1)) < 1e-5
    with pytest.raises(OptionError, match=r"takes \(M, V\) logits"):
        loss_fn(x[None], t[None])


def test_torch_compile_fullgraph_keeps_the_custom_ops():
    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.proj, self.loss = tt.RMSNorm(N), torch.nn.Linear(N, 24), tt.CrossEntropyLoss()
            self.first = tt.RMSNorm(N)

        def forward(self, x, t):
            y, h = self.first(x, x * 2)  # a residual add and the next norm: add_rms_norm
            return self.loss(self.proj(self.norm(y + h)), t)

    torch.manual_seed(0)
    model, x = Head(), rand(M, N, seed=13)
    t = torch.randint(0, 24, (M,), generator=torch.Generator().manual_seed(14))
    seen = []

    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def record(gm, example_inputs):  # AOTAutograd's forward and backward graphs
        seen.extend(str(n.target).removesuffix(".default") for n in gm.graph.nodes if n.op == "call_function")
        return make_boxed_func(gm)

    backend = aot_autograd(fw_compiler=record, bw_compiler=record)

    torch._dynamo.reset()
    compiled = torch.compile(model, backend=backend, fullgraph=True)
    loss = compiled(x, t)
    loss.backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    eager = model(x, t)
    eager.backward()
    assert torch.equal(loss, eager)
    # the gradients agree to rounding, not bit for bit: eagerly, cross-entropy's dlogits come
    # from the fused kernel (exp(x - lse) as the forward's kept exponential times the row's
    # factor), in the graph from the backward kernel (exp(x - lse) itself)
    assert all(rel(a, p.grad.double()) <= 1e-6 for a, p in zip(got, model.parameters()))
    # one node each, not traced through: the ops' twins without autograd (their dispatch is
    # C++ alone), the backward's in the backward graph; in a graph, cross-entropy is the
    # forward kernel (and the backward's), not the loss and dlogits of one kernel, whose
    # dloss pass a graph cannot skip
    assert {"tile_mlir_raw.rms_norm", "tile_mlir_raw.cross_entropy", "tile_mlir_raw.rms_norm_backward",
            "tile_mlir_raw.cross_entropy_backward", "tile_mlir_raw.add_rms_norm",
            "tile_mlir_raw.add_rms_norm_backward"} <= set(seen), seen
    assert not any(s.startswith("tile_mlir.") for s in seen), seen  # no op's Python autograd layer
    assert "tile_mlir_raw.cross_entropy_with_grad" not in seen


def test_import_tile_mlir_does_not_import_torch():
    code = ("import sys, tile_mlir, tile_mlir.kernels; from tile_mlir import kernels as K; K.plan(4, 100);"
            " assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": ":".join(sys.path)})


def test_the_host_overhead_benchmark_runs_on_the_fake_driver(tmp_path):
    """benchmarks/host_overhead.py --fake (CPU tensors that say CUDA, a driver that does
    nothing), for softmax: each way and layer it times, in µs per call; and the device
    path's outputs have x's leading dims. A subprocess: the fake changes torch.Tensor for
    the process."""
    root = Path(__file__).resolve().parents[2]
    script = ("import json, benchmarks.host_overhead as b; "
              "r = b.measure(n=50, repeat=1, fake=True, functions=('softmax',)); "
              # the device path keeps x's leading dims: (2, 4) rows of the same kernels
              "import torch; from tile_mlir import kernels as K; x = torch.randn(2, 4, 128); "
              "assert K.softmax(x).shape == x.shape and K.logsumexp(x).shape == (2, 4); "
              "y, rstd = K.rms_norm(x, torch.ones(128)); assert y.shape == x.shape and rstd.shape == (2, 4); "
              "dx = K.softmax_backward(x, x); assert dx.shape == x.shape; "
              "print(json.dumps(r))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "python"), str(root), *sys.path]),
           "TILE_MLIR_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(results["functions"]) == {"softmax: call", "softmax: call, grad", "softmax: fwd+bwd"}
    assert len(results["breakdown"]) == 6  # the op, its twin, K.softmax, launch, bound launch, empty_like
    assert "torch.ops.tile_mlir_raw.softmax (the twin a graph calls)" in results["breakdown"]
    assert all(0 < r["ours_us"] < 10000 and 0 < r["torch_us"] < 10000 for r in results["functions"].values())


def test_cross_entropy_backward_of_one_is_the_kernels_dlogits():
    """loss.backward() (dloss = 1): the gradient is the dlogits the forward's kernel wrote,
    bit for bit; dloss = 3: three times them (in the logits' dtype)."""
    x = rand(M, 37, seed=31, scale=3.0)
    t = torch.randint(0, 37, (M,), generator=torch.Generator().manual_seed(32))
    _, _, want = K.cross_entropy_with_grad(x, t, label_smoothing=0.1)
    for dloss in (1.0, 3.0):
        leaf = x.detach().requires_grad_()
        (tt.cross_entropy(leaf, t, label_smoothing=0.1) * dloss).backward()
        assert torch.equal(leaf.grad, want if dloss == 1.0 else (want * 3.0).to(want.dtype))


KERNELS_OF = {"softmax": 2, "logsumexp": 2, "rms_norm": 3, "layer_norm": 3}  # forward, backward[, column sums]


@pytest.mark.parametrize("name", list(CASES))
def test_a_changing_batch_compiles_nothing(name):
    """The function and its gradients at M = 1, 3, 7, 64 rows: right at every M (against
    torch in float64), and its kernels (forward, backward, the norms' column sums) compiled
    at the first M only (the library's compiles: ``library._kernel``)."""
    from tile_mlir.kernels import library

    ours, theirs, arity = CASES[name]
    for cached in (library._kernel, library._compiled, library._compiled_for):
        cached.cache_clear()
    for i, rows in enumerate((1, 3, 7, 64)):
        inputs = [rand(rows, N, seed=20 + rows)] + [1 + rand(N, seed=2 + j, scale=0.3) for j in range(arity - 1)]
        y, g = grads(ours, *inputs)
        y_ref, g_ref = grads(theirs, *(a.double() for a in inputs))
        assert rel(y, y_ref) < 1e-5 and all(rel(a, b) < 1e-5 for a, b in zip(g, g_ref))
        assert library._kernel.cache_info().misses == KERNELS_OF[name], rows


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "aot_eager"])
def test_cross_entropy_inplace_writes_dlogits_over_the_logits(compiled):
    """inplace=True: the same loss and gradients as torch (float64), eagerly and in a traced
    graph (whose backward mutates the saved logits through cross_entropy_backward_), and the
    logits tensor then holds dlogits."""
    torch.manual_seed(3)
    head = torch.nn.Linear(N, 24)
    x = rand(M, N, seed=21)
    t = torch.randint(0, 24, (M,), generator=torch.Generator().manual_seed(22))
    t[2] = -100
    kept = {}

    def step(x, t):
        logits = head(x)
        kept["logits"] = logits
        return tt.cross_entropy(logits, t, label_smoothing=0.1, inplace=True)

    torch._dynamo.reset()
    fn = torch.compile(step, backend="aot_eager", fullgraph=True) if compiled else step
    loss = fn(x, t)
    loss.backward()
    got = [p.grad.clone() for p in head.parameters()]
    head64 = torch.nn.Linear(N, 24).double()
    head64.load_state_dict(head.state_dict())
    logits64 = head64(x.double())
    logits64.retain_grad()
    ref = torch.nn.functional.cross_entropy(logits64, t, label_smoothing=0.1)
    ref.backward()
    assert abs(loss.item() - ref.item()) <= 1e-5 * abs(ref.item())
    for a, p in zip(got, head64.parameters()):
        assert torch.linalg.norm(a.double() - p.grad) <= 1e-5 * torch.linalg.norm(p.grad)
    if not compiled:  # a graph's logits are its own intermediate
        dl = kept["logits"].detach().double()
        assert torch.linalg.norm(dl - logits64.grad) <= 1e-5 * torch.linalg.norm(logits64.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_inplace_backward_scales_by_any_dloss_once(reduction):
    """inplace=True, eagerly: the backward scales the dlogits it left over the logits by a
    dloss other than 1 (K.scale_unless_one, or torch's product per row for "none"), as
    torch's gradient in float64; a second backward raises rather than scale them twice
    (our message on CUDA; on CPU tensors the numpy path's copy back bumps the saved
    tensor's version first, and torch's own check raises)."""
    x = rand(M, N, seed=31, scale=3.0)
    t = torch.randint(0, N, (M,), generator=torch.Generator().manual_seed(32))
    t[1] = -100
    w = rand(*((M,) if reduction == "none" else ()), seed=33) + 2.0  # dloss, away from 1
    logits = x.clone().requires_grad_()
    held = logits * 1.0  # a non-leaf, as an LM head's output
    loss = tt.cross_entropy(held, t, label_smoothing=0.1, reduction=reduction, inplace=True)
    (loss * w).sum().backward(retain_graph=True)
    x64 = x.double().requires_grad_()
    ref = F.cross_entropy(x64, t, label_smoothing=0.1, reduction=reduction)
    (ref * w.double()).sum().backward()
    assert rel(logits.grad, x64.grad) <= 1e-5
    with pytest.raises(RuntimeError, match="its backward runs once|modified by an inplace operation"):
        (loss * w).sum().backward()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_argmax_and_argmin_as_torch(dtype):
    """tt.argmax / tt.argmin on CPU tensors equal torch.argmax / torch.argmin over the last
    dim (ties, a NaN row, leading dims), and torch.compile(fullgraph=True) keeps the ops."""
    g = torch.Generator().manual_seed(41)
    x = torch.randint(-3, 4, (2, M, N), generator=g).to(dtype)
    x[0, 1, 5] = float("nan")
    x[1, 2, :] = float("-inf")
    for ours, theirs in ((tt.argmax, torch.argmax), (tt.argmin, torch.argmin)):
        got = ours(x)
        assert got.dtype == torch.int64 and torch.equal(got, theirs(x, dim=-1))
    seen = []

    def backend(gm, example_inputs):
        seen.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    torch._dynamo.reset()
    fn = torch.compile(lambda t: tt.argmax(t * 2), backend=backend, fullgraph=True)
    assert torch.equal(fn(x), torch.argmax(x * 2, dim=-1)) and "tile_mlir_raw.argmax" in seen, seen


@pytest.mark.parametrize("reduction, dtype", [("mean", torch.float32), ("sum", torch.float32),
                                              ("mean", torch.bfloat16)])
def test_linear_cross_entropy_and_its_gradients_against_torch_in_float64(reduction, dtype):
    """tt.linear_cross_entropy (and the module) against F.cross_entropy(F.linear(h, w)) and
    its gradients in float64, with a dloss other than 1, in chunks of 8 rows (3 chunks);
    without grad, the forward op alone. bf16: the logits and dlogits rounded to bf16, so
    within a few of its roundings."""
    M_, D, V = 19, 8, 40
    tol = 1e-5 if dtype == torch.float32 else 2.0**-6
    loss_tol = 1e-6 if dtype == torch.float32 else 2.0**-8  # the loss: f32, rounded once to the dtype
    h, w = rand(M_, D, seed=30, dtype=dtype), rand(V, D, seed=31, scale=0.5, dtype=dtype)
    t = torch.randint(0, V, (M_,), generator=torch.Generator().manual_seed(32))
    t[2::6] = -100

    def ours(h, w):
        return 1.75 * tt.LinearCrossEntropyLoss(reduction=reduction, label_smoothing=0.1, chunk_rows=8)(h, w, t)

    def theirs(h, w):
        return 1.75 * F.cross_entropy(F.linear(h, w), t, label_smoothing=0.1, reduction=reduction)

    got, (dh, dw) = grads(ours, h, w)
    want, (want_dh, want_dw) = grads(theirs, h.double(), w.double())
    assert got.dtype == dtype and dh.dtype == dw.dtype == dtype and rel(got, want) < loss_tol
    assert rel(dh, want_dh) < tol and rel(dw, want_dw) < tol
    with torch.no_grad():
        assert rel(tt.linear_cross_entropy(h, w, t, -100, 0.1, reduction, 8) * 1.75, want) < loss_tol


def test_linear_cross_entropy_stays_whole_in_a_compiled_graph():
    """Under torch.compile(fullgraph=True), the loss of a head is one node, the op with its
    gradients, and the backward only scales them: the same loss bits as eagerly."""
    M_, D, V = 16, 8, 24
    head = torch.nn.Linear(D, V, bias=False)
    h = rand(M_, D, seed=33).requires_grad_()
    t = torch.randint(0, V, (M_,), generator=torch.Generator().manual_seed(34))
    seen = []

    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    def record(gm, example_inputs):
        seen.extend(str(n.target).removesuffix(".default") for n in gm.graph.nodes if n.op == "call_function")
        return make_boxed_func(gm)

    def step(h):
        return tt.linear_cross_entropy(h * 2, head.weight, t)

    torch._dynamo.reset()
    loss = torch.compile(step, backend=aot_autograd(fw_compiler=record, bw_compiler=record), fullgraph=True)(h)
    loss.backward()
    got = (h.grad.clone(), head.weight.grad.clone())
    h.grad = head.weight.grad = None
    eager = step(h)
    eager.backward()
    assert torch.equal(loss, eager)
    assert torch.equal(got[0], h.grad) and torch.equal(got[1], head.weight.grad)
    assert "tile_mlir_raw.linear_cross_entropy_with_grad" in seen, seen
    assert "aten.mm" not in seen, seen  # no logits in the graph: the matmuls are the op's


def test_linear_cross_entropy_refuses_a_loss_per_row():
    with pytest.raises(OptionError, match="mean or sum"):
        tt.LinearCrossEntropyLoss(reduction="none")
    with pytest.raises(OptionError, match=r"\(M, D\)"):
        tt.LinearCrossEntropyLoss()(rand(2, 3, 4), rand(5, 4), torch.zeros(6, dtype=torch.int64))


@pytest.mark.parametrize("flags", [["--fused-linear", "--fused-residual"], ["--inplace"]])
def test_the_training_step_script_trains_both_models_alike(tmp_path, flags):
    """benchmarks/train_step.py at its tiny size on the CPU (eager): tile_mlir's model, with
    the head's loss in one module or the logits' loss in place, gives torch's losses."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks import train_step

    assert train_step.main(["--tiny", "--device", "cpu", "--no-compile", "--out", str(tmp_path), *flags]) == 0
    summary = json.loads((tmp_path / "train_step.json").read_text())
    assert summary["not_built"] is None and len(summary["tile_mlir"]["losses"]) == 2
    assert summary["worst_rel_diff"] <= 1e-5, summary["worst_rel_diff"]
