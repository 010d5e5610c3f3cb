"""Fused row kernels, as a library: softmax, logsumexp, RMSNorm and LayerNorm.

The functional API (``from tile_mlir import kernels as K``), on numpy arrays (f32, or
bf16 as ``uint16`` bits or ``ml_dtypes.bfloat16``) or torch tensors, x of shape (..., N)
with the leading dims as rows::

    y = K.softmax(x)
    l = K.logsumexp(x)
    y, rstd = K.rms_norm(x, w, eps=1e-6)
    y, mean, rstd = K.layer_norm(x, w, b, eps=1e-5)

Outputs have x's kind, and x's dtype, except ``mean`` and ``rstd``: f32, one per row
(what the backward passes need). Every reduction and all math is f32. Each call runs on
the GPU when there is one (``backend="auto"``), in the CPU interpreter otherwise; a
kernel is compiled once per process for each shape, dtype and plan.

The kernels are written with the builder (``tile_mlir.kernels.forward``, over the row
frame of ``tile_mlir.kernels.rows``); ``plan`` says how a row is spread over threads and
why (``tile_mlir.kernels.plan``); ``compiled`` and ``kernel_text`` give one kernel for
benchmarks and tools (``tile_mlir.kernels.library``). ``python -m tile_mlir.kernels
softmax`` runs one on a random matrix and checks it against numpy.
"""

from __future__ import annotations

from .library import SPECS, Compiled, compiled, kernel_text, run
from .plan import KERNELS, RowPlan, plan

__all__ = ["KERNELS", "SPECS", "Compiled", "RowPlan", "compiled", "kernel_text", "layer_norm", "logsumexp", "plan",
           "rms_norm", "run", "softmax"]


def softmax(x, *, backend: str = "auto"):
    """softmax over the last dim: exp(x - max) / sum(exp(x - max))."""
    return run("softmax", x, backend=backend)[0]


def logsumexp(x, *, backend: str = "auto"):
    """log(sum(exp(x))) over the last dim, one value per row, in x's dtype."""
    return run("logsumexp", x, backend=backend)[0]


def rms_norm(x, weight, eps: float = 1e-6, *, backend: str = "auto"):
    """(y, rstd): y = x · rstd · weight, rstd = 1 / sqrt(mean(x²) + eps), f32 per row."""
    return run("rmsnorm", x, weight, eps=eps, backend=backend)


def layer_norm(x, weight, bias, eps: float = 1e-5, *, backend: str = "auto"):
    """(y, mean, rstd): y = (x - mean) · rstd · weight + bias, rstd = 1 / sqrt(var + eps)
    (the biased variance); mean and rstd f32 per row."""
    return run("layernorm", x, weight, bias, eps=eps, backend=backend)
