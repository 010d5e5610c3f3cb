"""Cross-entropy of a linear layer's output without its logits (``K.linear_cross_entropy``,
``tt.linear_cross_entropy``) on the GPU, on CUDA tensors, against torch's
``F.cross_entropy(F.linear(h, w))`` and its gradients in float64: the training step's head
(4096 x 512 -> 32000, f32) and vocabularies of 131072 and 256000 in bf16, several chunks,
ignored rows, label smoothing; the same bits on two runs; less memory than the logits.
The cross-entropy kernels come from the compile cache of ``python -m
tile_mlir.testing.prepare`` (the vocabularies of ``CE_GPU_SHAPES``). Needs torch."""

import pytest
from tile_mlir import kernels as K
from tile_mlir.runtime import gpu_available

torch = pytest.importorskip("torch")
F = torch.nn.functional
tt = pytest.importorskip("tile_mlir.torch")

pytestmark = pytest.mark.skipif(not gpu_available() or not torch.cuda.is_available(), reason="no GPU")

# (M, D, V, dtype, chunk rows): relative L2 error against float64; bf16's logits and
# dlogits are rounded to bf16 as torch's F.linear would round them
CASES = [(4096, 512, 32000, "f32", None), (1000, 256, 131072, "bf16", 256), (300, 128, 256000, "bf16", None)]
TOLERANCE = {"f32": 1e-5, "bf16": 2.0**-6}


def inputs(M, D, V, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    h = torch.randn(M, D, device="cuda", generator=g).to(torch_dtype)
    w = (torch.randn(V, D, device="cuda", generator=g) / D**0.5 * 3).to(torch_dtype)
    t = torch.randint(0, V, (M,), device="cuda", generator=g)
    t[1::7] = -100
    return h, w, t


def rel(got, want):
    return ((got.double() - want).norm() / want.norm()).item()


@pytest.mark.parametrize("M, D, V, dtype, rows", CASES)
def test_loss_and_gradients_against_torch_in_float64(M, D, V, dtype, rows):
    torch.backends.cuda.matmul.allow_tf32 = False
    h, w, t = inputs(M, D, V, dtype, seed=M + V)
    for reduction, smoothing in (("mean", 0.0), ("sum", 0.1)):
        loss, dh, dw = K.linear_cross_entropy_with_grad(h, w, t, label_smoothing=smoothing, reduction=reduction,
                                                        chunk_rows=rows)
        h64, w64 = h.double().requires_grad_(), w.double().requires_grad_()
        want = F.cross_entropy(F.linear(h64, w64), t, label_smoothing=smoothing, reduction=reduction)
        want.backward()
        tol = TOLERANCE[dtype]
        assert abs(loss.item() - want.item()) <= tol * abs(want.item()), (loss.item(), want.item())
        assert dh.dtype == h.dtype and dw.dtype == w.dtype
        assert rel(dh, h64.grad) < tol and rel(dw, w64.grad) < tol, (rel(dh, h64.grad), rel(dw, w64.grad))
        assert not dh[1::7].any(), "an ignored row has no gradient"
        again = K.linear_cross_entropy_with_grad(h, w, t, label_smoothing=smoothing, reduction=reduction,
                                                 chunk_rows=rows)
        assert all(torch.equal(a, b) for a, b in zip(again, (loss, dh, dw))), "the same bits on a second run"
        only = K.linear_cross_entropy(h, w, t, label_smoothing=smoothing, reduction=reduction, chunk_rows=rows)
        assert torch.equal(only, loss)


def test_autograd_holds_one_chunk_of_logits_not_all():
    """tt.linear_cross_entropy's gradients are torch's, and what it allocates beyond its
    inputs is under half of the logits (8192 x 32000 f32, 1000 MiB): a chunk of 2048 rows
    (250 MiB), the gradients and their products by dloss (about 160 MiB)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    M, D, V = 8192, 512, 32000
    h, w, t = inputs(M, D, V, "f32", seed=5)
    h.requires_grad_()
    w.requires_grad_()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    loss = tt.linear_cross_entropy(h, w, t, label_smoothing=0.1)
    (loss * 0.5).backward()
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before
    logits = M * V * 4
    assert extra < logits / 2, f"{extra / 2**20:.0f} MiB over the inputs, the logits are {logits / 2**20:.0f} MiB"
    h64, w64 = h.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    (F.cross_entropy(F.linear(h64, w64), t, label_smoothing=0.1) * 0.5).backward()
    assert rel(h.grad, h64.grad) < 1e-5 and rel(w.grad, w64.grad) < 1e-5


def test_a_compiled_head_has_no_graph_break():
    """Dynamo traces tt.linear_cross_entropy on CUDA tensors, its backward included, into one
    graph (a break there once left the op, and a host sync, outside the training step's graph)."""
    torch._dynamo.reset()
    h, w, t = inputs(64, 32, 32000, "f32", seed=9)
    h.requires_grad_()

    def step(h):
        return tt.linear_cross_entropy(h * 2, w, t)

    explained = torch._dynamo.explain(step)(h)
    assert explained.graph_break_count == 0, explained.break_reasons
    torch._dynamo.reset()
    loss = torch.compile(step, fullgraph=True)(h)
    loss.backward()
    want = step(h.detach().requires_grad_())
    assert torch.equal(loss, want)
