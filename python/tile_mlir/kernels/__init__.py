"""Fused row kernels, as a library: softmax, logsumexp, RMSNorm and LayerNorm.

The functional API (``from tile_mlir import kernels as K``), on numpy arrays (f32, or
bf16 as ``uint16`` bits or ``ml_dtypes.bfloat16``) or torch tensors, x of shape (..., N)
with the leading dims as rows::

    y = K.softmax(x)
    l = K.logsumexp(x)
    y, rstd = K.rms_norm(x, w, eps=1e-6)
    h, y, rstd = K.add_rms_norm(x, residual, w, eps=1e-6)   # h = x + residual, y = rms_norm(h)
    y, mean, rstd = K.layer_norm(x, w, b, eps=1e-5)
    loss, lse = K.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean")
    dlogits = K.cross_entropy_backward(logits, target, lse, dloss, ignore_index=-100, label_smoothing=0.0,
                                       reduction="mean", inplace=False)
    loss, lse, dlogits = K.cross_entropy_with_grad(logits, target, ...)   # one read of the logits
    loss = K.linear_cross_entropy(h, weight, target, ...)              # cross_entropy(h @ weight.T, ...),
    loss, dh, dweight = K.linear_cross_entropy_with_grad(h, weight, target, ...)  # chunk by chunk
    K.scale_unless_one(dlogits, dloss)    # in place; where dloss is 1, decided on the device: no pass
    i = K.argmax(x);  i = K.argmin(x)      # int64 columns, torch.argmax's rule (first of equals, NaN first)

and their backward passes (``tile_mlir.kernels.backward``, ``tile_mlir.kernels.training``)::

    dx = K.softmax_backward(y, dy)
    dx = K.logsumexp_backward(x, l, dl)
    dx, dw = K.rms_norm_backward(dy, x, w, rstd)
    dx, dw = K.add_rms_norm_backward(dy, dh, h, w, rstd)   # dx: of x and of residual alike
    dx, dw, db = K.layer_norm_backward(dy, x, w, mean, rstd)

Outputs have x's kind, and x's dtype, except ``mean`` and ``rstd``: f32, one per row
(what the backward passes need). Every reduction and all math is f32. Each call runs on
the GPU when there is one (``backend="auto"``), in the CPU interpreter otherwise; a
kernel is compiled once per process for each (N, dtype, plan), whatever the row count M
(an argument of the kernel: a changing batch compiles nothing). dw and db are column
sums over the rows, deterministic: partial rows from a persistent grid of ``ctas`` CTAs,
then a sum over them in a fixed order (docs/training-kernels.md).

The kernels are written with the builder (``tile_mlir.kernels.forward``, over the row
frame of ``tile_mlir.kernels.rows``); ``plan`` says how a row is spread over threads (and a
cluster's CTAs) and why, from a plan table (``TABLES``, ``Table``, ``Tier``:
``tile_mlir.kernels.plan``); ``compiled`` and ``kernel_text`` give one kernel for
benchmarks and tools (``tile_mlir.kernels.library``). ``python -m tile_mlir.kernels
softmax`` runs one on a random matrix and checks it against numpy.
"""

from __future__ import annotations

from .loss import cross_entropy, cross_entropy_backward, cross_entropy_with_grad, scale_unless_one
from .linear_loss import linear_cross_entropy, linear_cross_entropy_with_grad
from .selection import argmax, argmin
from .library import SPECS, Compiled, compiled, kernel_text, run
from .plan import KERNELS, TABLES, RowPlan, Table, Tier, candidates, plan, registers_table
from .training import BACKWARD, compiled_backward, run_backward, text_backward

__all__ = ["BACKWARD", "KERNELS", "SPECS", "TABLES", "Compiled", "RowPlan", "Table", "Tier", "add_rms_norm",
           "add_rms_norm_backward", "argmax", "argmin",
           "candidates", "compiled",
           "compiled_backward", "cross_entropy", "cross_entropy_backward", "cross_entropy_with_grad", "kernel_text",
           "layer_norm",
           "layer_norm_backward", "linear_cross_entropy", "linear_cross_entropy_with_grad", "logsumexp", "logsumexp_backward", "plan", "registers_table", "rms_norm",
           "rms_norm_backward", "run", "run_backward", "scale_unless_one", "softmax", "softmax_backward", "text_backward"]


def softmax(x, *, backend: str = "auto"):
    """softmax over the last dim: exp(x - max) / sum(exp(x - max))."""
    return run("softmax", x, backend=backend)[0]


def logsumexp(x, *, backend: str = "auto"):
    """log(sum(exp(x))) over the last dim, one value per row, in x's dtype."""
    return run("logsumexp", x, backend=backend)[0]


def rms_norm(x, weight, eps: float = 1e-6, *, backend: str = "auto"):
    """(y, rstd): y = x · rstd · weight, rstd = 1 / sqrt(mean(x²) + eps), f32 per row."""
    return run("rmsnorm", x, weight, eps=eps, backend=backend)


def add_rms_norm(x, residual, weight, eps: float = 1e-6, *, backend: str = "auto"):
    """(h, y, rstd): h = x + residual (in x's dtype, each sum rounded once, as torch's
    ``x + residual``), then ``rms_norm`` of h: a transformer block's residual add and the
    next norm in one pass over the row (h is written once, not written then read again)."""
    return run("add_rmsnorm", x, residual, weight, eps=eps, backend=backend)


def layer_norm(x, weight, bias, eps: float = 1e-5, *, backend: str = "auto"):
    """(y, mean, rstd): y = (x - mean) · rstd · weight + bias, rstd = 1 / sqrt(var + eps)
    (the biased variance); mean and rstd f32 per row."""
    return run("layernorm", x, weight, bias, eps=eps, backend=backend)


def softmax_backward(y, dy, *, backend: str = "auto"):
    """dx = y · (dy − Σ dy·y) over the last dim, from softmax's output y."""
    return run_backward("softmax_backward", y, dy, backend=backend)


def logsumexp_backward(x, l, dl, *, backend: str = "auto"):
    """dx = dl · exp(x − l), from logsumexp's output l (one value per row, x's dtype)."""
    return run_backward("logsumexp_backward", x, l, dl, backend=backend)


def rms_norm_backward(dy, x, weight, rstd, *, backend: str = "auto", ctas: int | None = None):
    """(dx, dw) of rms_norm from rms_norm's rstd (f32 per row): x̂ = x · rstd, g = dy · w,
    dx = rstd · (g − x̂ · mean(g · x̂)), dw = Σ over rows of dy · x̂ (deterministic)."""
    return run_backward("rmsnorm_backward", dy, x, weight, rstd, backend=backend, ctas=ctas)


def add_rms_norm_backward(dy, dh, h, weight, rstd, *, backend: str = "auto", ctas: int | None = None):
    """(dx, dw) of ``add_rms_norm`` from its h and rstd: dy and dh the gradients of y and h;
    dx = dh + rms_norm_backward's dx of h (the gradient of x and of residual alike), dw as
    ``rms_norm_backward``'s. One pass over the row, as rms_norm_backward's, reading dh too."""
    return run_backward("add_rmsnorm_backward", dy, dh, h, weight, rstd, backend=backend, ctas=ctas)


def layer_norm_backward(dy, x, weight, mean, rstd, *, backend: str = "auto", ctas: int | None = None):
    """(dx, dw, db) of layer_norm from its mean and rstd (f32 per row): x̂ = (x − mean) ·
    rstd, g = dy · w, dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)), dw = Σ dy · x̂ and
    db = Σ dy over the rows (deterministic)."""
    return run_backward("layernorm_backward", dy, x, weight, mean, rstd, backend=backend, ctas=ctas)
