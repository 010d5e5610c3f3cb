"""The fused kernels as ``torch.library`` custom ops, with fake (meta) kernels and autograd.

Each op (``torch.ops.tile_mlir.<name>``) runs the functional API (``tile_mlir.kernels``)
on its tensors: on a CUDA tensor by pointer on torch's current stream (zero copy), on a
CPU tensor in the CPU interpreter through numpy. Its fake kernel gives the outputs'
shapes and dtypes without running anything, so ``torch.compile(fullgraph=True)`` traces
it and keeps it in the graph as one node; ``register_autograd`` gives it its backward,
itself a custom op. The ops:

=====================================  =================================================
forward                                backward
=====================================  =================================================
``softmax(x) -> y``                    ``softmax_backward(y, dy) -> dx``
``logsumexp(x) -> l``                  ``logsumexp_backward(x, l, dl) -> dx``
``rms_norm(x, w, eps) -> (y, rstd)``   ``rms_norm_backward(dy, x, w, rstd) -> (dx, dw)``
``layer_norm(x, w, b, eps) ->          ``layer_norm_backward(dy, x, w, mean, rstd) ->
(y, mean, rstd)``                      (dx, dw, db)``
``cross_entropy(logits, target,        ``cross_entropy_backward(logits, target, lse,
ignore_index, label_smoothing,         dloss, ignore_index, label_smoothing, reduction)
reduction) -> (loss, lse)``            -> dlogits``
=====================================  =================================================

Every tensor is made contiguous first. ``mean``, ``rstd``, ``lse`` and the loss are f32.
A backward whose kernel ``tile_mlir.kernels`` does not have yet (``BACKWARD``) is torch's
formula in f32 (``_formula``), named in ``formula_backwards()``.
"""

from __future__ import annotations

import torch

from tile_mlir import kernels as K

__all__ = ["BACKWARD", "formula_backwards"]

LIB = "tile_mlir"

# The backward kernels of the functional API the ops call, by op name.
BACKWARD = {"softmax": "softmax_backward", "logsumexp": "logsumexp_backward", "rms_norm": "rms_norm_backward",
            "layer_norm": "layer_norm_backward"}


def formula_backwards() -> list[str]:
    """The backwards that run torch's formula, not a kernel: those ``tile_mlir.kernels``
    does not have."""
    return [op for op, fn in BACKWARD.items() if not hasattr(K, fn)]


def _c(t):
    return t.contiguous()


def _stat_like(x):
    return x.new_empty(x.shape[:-1], dtype=torch.float32)


# --- softmax --------------------------------------------------------------------------


@torch.library.custom_op(f"{LIB}::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    return K.softmax(_c(x))


@softmax.register_fake
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op(f"{LIB}::softmax_backward", mutates_args=())
def softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    if hasattr(K, "softmax_backward"):
        return K.softmax_backward(_c(y), _c(dy)).to(y.dtype)
    y32, dy32 = y.float(), dy.float()
    return (y32 * (dy32 - (dy32 * y32).sum(-1, keepdim=True))).to(y.dtype)


@softmax_backward.register_fake
def _(y, dy):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


def _softmax_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _softmax_grad(ctx, dy):
    (y,) = ctx.saved_tensors
    return softmax_backward(y, dy.to(y.dtype))


softmax.register_autograd(_softmax_grad, setup_context=_softmax_setup)


# --- logsumexp ------------------------------------------------------------------------


@torch.library.custom_op(f"{LIB}::logsumexp", mutates_args=())
def logsumexp(x: torch.Tensor) -> torch.Tensor:
    return K.logsumexp(_c(x))


@logsumexp.register_fake
def _(x):
    return x.new_empty(x.shape[:-1])


@torch.library.custom_op(f"{LIB}::logsumexp_backward", mutates_args=())
def logsumexp_backward(x: torch.Tensor, l: torch.Tensor, dl: torch.Tensor) -> torch.Tensor:  # noqa: E741
    if hasattr(K, "logsumexp_backward"):
        return K.logsumexp_backward(_c(x), _c(l), _c(dl)).to(x.dtype)
    return (dl.float()[..., None] * torch.exp(x.float() - l.float()[..., None])).to(x.dtype)


@logsumexp_backward.register_fake
def _(x, l, dl):  # noqa: E741
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _logsumexp_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], output)


def _logsumexp_grad(ctx, dl):
    x, l = ctx.saved_tensors  # noqa: E741
    return logsumexp_backward(x, l, dl.to(l.dtype))


logsumexp.register_autograd(_logsumexp_grad, setup_context=_logsumexp_setup)


# --- RMSNorm --------------------------------------------------------------------------


@torch.library.custom_op(f"{LIB}::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return K.rms_norm(_c(x), _c(weight), eps)


@rms_norm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format), _stat_like(x)


@torch.library.custom_op(f"{LIB}::rms_norm_backward", mutates_args=())
def rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                      rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if hasattr(K, "rms_norm_backward"):
        dx, dw = K.rms_norm_backward(_c(dy), _c(x), _c(weight), _c(rstd))
        return dx.to(x.dtype), dw.to(weight.dtype)
    dy32, x32, w32, r = dy.float(), x.float(), weight.float(), rstd[..., None]
    xhat, g = x32 * r, dy32 * w32
    dx = r * (g - xhat * (g * xhat).mean(-1, keepdim=True))
    dw = (dy32 * xhat).reshape(-1, x.shape[-1]).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype)


@rms_norm_backward.register_fake
def _(dy, x, weight, rstd):
    return torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight)


def _rms_norm_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1], output[1])


def _rms_norm_grad(ctx, dy, _drstd):
    x, w, rstd = ctx.saved_tensors
    dx, dw = rms_norm_backward(dy.to(x.dtype), x, w, rstd)
    return dx, dw, None


rms_norm.register_autograd(_rms_norm_grad, setup_context=_rms_norm_setup)


# --- LayerNorm ------------------------------------------------------------------------


@torch.library.custom_op(f"{LIB}::layer_norm", mutates_args=())
def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
               eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return K.layer_norm(_c(x), _c(weight), _c(bias), eps)


@layer_norm.register_fake
def _(x, weight, bias, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format), _stat_like(x), _stat_like(x)


@torch.library.custom_op(f"{LIB}::layer_norm_backward", mutates_args=())
def layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
                        rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if hasattr(K, "layer_norm_backward"):
        dx, dw, db = K.layer_norm_backward(_c(dy), _c(x), _c(weight), _c(mean), _c(rstd))
        return dx.to(x.dtype), dw.to(weight.dtype), db.to(weight.dtype)
    dy32, w32, r = dy.float(), weight.float(), rstd[..., None]
    xhat = (x.float() - mean[..., None]) * r
    g = dy32 * w32
    dx = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    N = x.shape[-1]
    dw, db = (dy32 * xhat).reshape(-1, N).sum(0), dy32.reshape(-1, N).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype), db.to(weight.dtype)


@layer_norm_backward.register_fake
def _(dy, x, weight, mean, rstd):
    return (torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight),
            torch.empty_like(weight))


def _layer_norm_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1], output[1], output[2])


def _layer_norm_grad(ctx, dy, _dmean, _drstd):
    x, w, mean, rstd = ctx.saved_tensors
    dx, dw, db = layer_norm_backward(dy.to(x.dtype), x, w, mean, rstd)
    return dx, dw, db, None


layer_norm.register_autograd(_layer_norm_grad, setup_context=_layer_norm_setup)


# --- cross-entropy --------------------------------------------------------------------


@torch.library.custom_op(f"{LIB}::cross_entropy", mutates_args=())
def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int, label_smoothing: float,
                  reduction: str) -> tuple[torch.Tensor, torch.Tensor]:
    return K.cross_entropy(_c(logits), _c(target), ignore_index, label_smoothing, reduction)


@cross_entropy.register_fake
def _(logits, target, ignore_index, label_smoothing, reduction):
    shape = logits.shape[:1] if reduction == "none" else ()
    return logits.new_empty(shape, dtype=torch.float32), _stat_like(logits)


@torch.library.custom_op(f"{LIB}::cross_entropy_backward", mutates_args=())
def cross_entropy_backward(logits: torch.Tensor, target: torch.Tensor, lse: torch.Tensor, dloss: torch.Tensor,
                           ignore_index: int, label_smoothing: float, reduction: str) -> torch.Tensor:
    return K.cross_entropy_backward(_c(logits), _c(target), _c(lse), _c(dloss.float()), ignore_index,
                                    label_smoothing, reduction)


@cross_entropy_backward.register_fake
def _(logits, target, lse, dloss, ignore_index, label_smoothing, reduction):
    return torch.empty_like(logits, memory_format=torch.contiguous_format)


def _cross_entropy_setup(ctx, inputs, output):
    logits, target, ctx.ignore_index, ctx.label_smoothing, ctx.reduction = inputs
    ctx.save_for_backward(logits, target, output[1])


def _cross_entropy_grad(ctx, dloss, _dlse):
    logits, target, lse = ctx.saved_tensors
    dx = cross_entropy_backward(logits, target, lse, dloss, ctx.ignore_index, ctx.label_smoothing, ctx.reduction)
    return dx, None, None, None, None


cross_entropy.register_autograd(_cross_entropy_grad, setup_context=_cross_entropy_setup)
