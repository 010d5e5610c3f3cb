"""tile_mlir.torch calls captured in a CUDA graph (issue 19): each function, and its
forward and backward through autograd, captured with ``torch.cuda.graph`` (after a
warm-up on a side stream, as torch asks), then replayed twice with fresh random inputs
copied into the static ones; the outputs and gradients are checked against torch's in
float64 after each replay. The kernels are those of test_torch_gpu.py and
test_cross_entropy_gpu.py (``python -m tile_mlir.testing.prepare``: 256 x 1024 f32 and
bf16, cross-entropy 37 x 1000; ``python -m benchmarks.host_overhead --prepare`` compiles
just these); see conftest.py for the commands. Needs torch and a GPU."""

import pytest
from tile_mlir.runtime import gpu_available

torch = pytest.importorskip("torch")
F = torch.nn.functional
tt = pytest.importorskip("tile_mlir.torch")

pytestmark = pytest.mark.skipif(not gpu_available() or not torch.cuda.is_available(), reason="no GPU")

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
TOLERANCE = {"f32": 1e-5, "bf16": 2.0**-7}
M, N = 256, 1024  # testing.fused.TORCH_GPU_SHAPES
CE_M, CE_V = 37, 1000  # testing.fused.CE_GPU_SHAPES
IGNORE = -100


def rel(got, want):
    return ((got.double() - want).norm() / want.norm()).item()


class Inputs:
    """Fresh random inputs of each function, from one generator: x (M, N), weight and
    bias (N), logits (CE_M, CE_V), targets (a few ignored), dy."""

    def __init__(self, seed: int):
        self.g = torch.Generator(device="cuda").manual_seed(seed)

    def rand(self, *shape, dtype, scale=1.0, shift=0.0):
        return (shift + scale * torch.randn(shape, generator=self.g, device="cuda")).to(dtype)

    def make(self, name: str, dtype):
        if name == "cross_entropy":
            t = torch.randint(0, CE_V, (CE_M,), generator=self.g, device="cuda")
            t[::5] = IGNORE
            return [self.rand(CE_M, CE_V, dtype=dtype, scale=2.0), t]
        arity = {"softmax": 1, "logsumexp": 1, "rms_norm": 2, "layer_norm": 3}[name]
        return [self.rand(M, N, dtype=dtype)] + [self.rand(N, dtype=dtype, scale=0.3, shift=1.0)
                                                  for _ in range(arity - 1)]


OURS = {
    "softmax": tt.softmax,
    "logsumexp": tt.logsumexp,
    "rms_norm": lambda x, w: tt.rms_norm(x, w, 1e-6),
    "layer_norm": lambda x, w, b: tt.layer_norm(x, w, b, 1e-5),
    "cross_entropy": lambda x, t: tt.cross_entropy(x, t, IGNORE, 0.1, "mean"),
}
THEIRS = {
    "softmax": lambda x: torch.softmax(x, -1),
    "logsumexp": lambda x: torch.logsumexp(x, -1),
    "rms_norm": lambda x, w: F.rms_norm(x, (N,), w, 1e-6),
    "layer_norm": lambda x, w, b: F.layer_norm(x, (N,), w, b, 1e-5),
    "cross_entropy": lambda x, t: F.cross_entropy(x, t, ignore_index=IGNORE, label_smoothing=0.1),
}


def captured(step, static):
    """(the graph of ``step(*static)``, its static outputs): warmed up on a side stream
    (module loads, compiled plans, checked launch configurations), then captured."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(*static)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step(*static)
    return graph, out


def floats(args):
    return [a for a in args if a.is_floating_point()]


@pytest.mark.parametrize("name", list(OURS))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_forward_captured_and_replayed(name, dtype):
    tdt, gen = DTYPES[dtype], Inputs(seed=19)
    static = gen.make(name, tdt)
    graph, out = captured(OURS[name], static)
    for _ in range(2):  # new data each replay: the graph reads the static inputs
        fresh = gen.make(name, tdt)
        for s, f in zip(static, fresh):
            s.copy_(f)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        want = THEIRS[name](*(a.double() if a.is_floating_point() else a for a in fresh))
        assert out.dtype == tdt and rel(out, want) < TOLERANCE[dtype], name


@pytest.mark.parametrize("name", list(OURS))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_forward_and_backward_captured_and_replayed(name, dtype):
    tdt, gen = DTYPES[dtype], Inputs(seed=29)
    static = [a.requires_grad_() if a.is_floating_point() else a for a in gen.make(name, tdt)]
    shape = OURS[name](*static).shape
    static_dy = gen.rand(*shape, dtype=tdt)

    def step(*args):
        y = OURS[name](*args)
        return (y, *torch.autograd.grad(y, floats(args), static_dy))

    graph, outs = captured(step, static)
    for _ in range(2):
        fresh, dy = gen.make(name, tdt), gen.rand(*shape, dtype=tdt)
        with torch.no_grad():
            for s, f in zip(static, fresh):
                s.copy_(f)
            static_dy.copy_(dy)
            for o in outs:
                o.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref = [a.double().requires_grad_() if a.is_floating_point() else a for a in fresh]
        y_ref = THEIRS[name](*ref)
        g_ref = torch.autograd.grad(y_ref, floats(ref), dy.double())
        assert rel(outs[0], y_ref.detach()) < TOLERANCE[dtype], name
        for got, want in zip(outs[1:], g_ref):
            assert got.dtype == tdt and rel(got, want) < 2 * TOLERANCE[dtype], name
