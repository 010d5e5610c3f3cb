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
``add_rms_norm(x, r, w, eps) ->        ``add_rms_norm_backward(dy, dh, h, w, rstd) ->
(h, y, rstd)``                         (dx, dw)``
``layer_norm(x, w, b, eps) ->          ``layer_norm_backward(dy, x, w, mean, rstd) ->
(y, mean, rstd)``                      (dx, dw, db)``
``cross_entropy(logits, target,        ``cross_entropy_backward(logits, target, lse,
ignore_index, label_smoothing,         dloss, ignore_index, label_smoothing, reduction)
reduction) -> (loss, lse)``            -> dlogits``
``cross_entropy_with_grad(...) ->      the saved dlogits times dloss (no kernel)
(loss, lse, dlogits)``
=====================================  =================================================

The ops are made and called by ``tile_mlir.torch.registry`` (``_register``, ``call``: the
graph path through their twins ``torch.ops.tile_mlir_raw.<name>``, and the eager path).
Cross-entropy's ops are in ``tile_mlir.torch.loss_ops`` (imported at the end of this module).
Every tensor is made contiguous first. ``mean``, ``rstd``, ``lse`` and the loss are f32.
A backward whose kernel ``tile_mlir.kernels`` does not have yet (``BACKWARD``) is torch's
formula in f32 (``_formula``), named in ``formula_backwards()``.
"""

from __future__ import annotations

import torch

from tile_mlir import kernels as K
from tile_mlir.torch.registry import LIB, _as, _c, _fake, _register, _stat_like, call

__all__ = ["BACKWARD", "CrossEntropyInplace", "call", "formula_backwards"]

# The backward kernels of the functional API the ops call, by op name.
BACKWARD = {"softmax": "softmax_backward", "logsumexp": "logsumexp_backward", "rms_norm": "rms_norm_backward",
            "layer_norm": "layer_norm_backward", "add_rms_norm": "add_rms_norm_backward"}


def formula_backwards() -> list[str]:
    """The backwards that run torch's formula, not a kernel: those ``tile_mlir.kernels``
    does not have."""
    return [op for op, fn in BACKWARD.items() if not hasattr(K, fn)]


# --- softmax --------------------------------------------------------------------------


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return K.softmax(_c(x))


softmax = torch.library.custom_op(f"{LIB}::softmax", _softmax, mutates_args=())


@_fake(softmax)
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _softmax_backward(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    if hasattr(K, "softmax_backward"):
        return _as(K.softmax_backward(_c(y), _c(dy)), y.dtype)
    y32, dy32 = y.float(), dy.float()
    return (y32 * (dy32 - (dy32 * y32).sum(-1, keepdim=True))).to(y.dtype)


softmax_backward = torch.library.custom_op(f"{LIB}::softmax_backward", _softmax_backward, mutates_args=())


@_fake(softmax_backward)
def _(y, dy):
    return torch.empty_like(y, memory_format=torch.contiguous_format)


def _softmax_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _softmax_grad(ctx, dy):
    (y,) = ctx.saved_tensors
    return call("softmax_backward", y, _as(dy, y.dtype))


_register(softmax, _softmax, _softmax_setup, _softmax_grad)
_register(softmax_backward, _softmax_backward)


# --- logsumexp ------------------------------------------------------------------------


def _logsumexp(x: torch.Tensor) -> torch.Tensor:
    return K.logsumexp(_c(x))


logsumexp = torch.library.custom_op(f"{LIB}::logsumexp", _logsumexp, mutates_args=())


@_fake(logsumexp)
def _(x):
    return x.new_empty(x.shape[:-1])


def _logsumexp_backward(x: torch.Tensor, l: torch.Tensor, dl: torch.Tensor) -> torch.Tensor:  # noqa: E741
    if hasattr(K, "logsumexp_backward"):
        return _as(K.logsumexp_backward(_c(x), _c(l), _c(dl)), x.dtype)
    return (dl.float()[..., None] * torch.exp(x.float() - l.float()[..., None])).to(x.dtype)


logsumexp_backward = torch.library.custom_op(f"{LIB}::logsumexp_backward", _logsumexp_backward, mutates_args=())


@_fake(logsumexp_backward)
def _(x, l, dl):  # noqa: E741
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _logsumexp_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], output)


def _logsumexp_grad(ctx, dl):
    x, l = ctx.saved_tensors  # noqa: E741
    return call("logsumexp_backward", x, l, _as(dl, l.dtype))


_register(logsumexp, _logsumexp, _logsumexp_setup, _logsumexp_grad)
_register(logsumexp_backward, _logsumexp_backward)


# --- RMSNorm --------------------------------------------------------------------------


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    return K.rms_norm(_c(x), _c(weight), eps)


rms_norm = torch.library.custom_op(f"{LIB}::rms_norm", _rms_norm, mutates_args=())


@_fake(rms_norm)
def _(x, weight, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format), _stat_like(x)


def _rms_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                      rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if hasattr(K, "rms_norm_backward"):
        dx, dw = K.rms_norm_backward(_c(dy), _c(x), _c(weight), _c(rstd))
        return _as(dx, x.dtype), _as(dw, weight.dtype)
    dy32, x32, w32, r = dy.float(), x.float(), weight.float(), rstd[..., None]
    xhat, g = x32 * r, dy32 * w32
    dx = r * (g - xhat * (g * xhat).mean(-1, keepdim=True))
    dw = (dy32 * xhat).reshape(-1, x.shape[-1]).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype)


rms_norm_backward = torch.library.custom_op(f"{LIB}::rms_norm_backward", _rms_norm_backward, mutates_args=())


@_fake(rms_norm_backward)
def _(dy, x, weight, rstd):
    return torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight)


def _rms_norm_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1], output[1])


def _rms_norm_grad(ctx, dy, _drstd):
    x, w, rstd = ctx.saved_tensors
    dx, dw = call("rms_norm_backward", _as(dy, x.dtype), x, w, rstd)
    return dx, dw, None


_register(rms_norm, _rms_norm, _rms_norm_setup, _rms_norm_grad)
_register(rms_norm_backward, _rms_norm_backward)


# --- RMSNorm after a residual add: h = x + residual, y = RMSNorm of h (K.add_rms_norm) ---


def _add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                  eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(h, y, rstd), h and y differentiable: the backward kernel adds h's own gradient to
    the norm's dx, which is x's and residual's gradient alike."""
    return K.add_rms_norm(_c(x), _c(residual), _c(weight), eps)


add_rms_norm = torch.library.custom_op(f"{LIB}::add_rms_norm", _add_rms_norm, mutates_args=())


@_fake(add_rms_norm)
def _(x, residual, weight, eps):
    c = torch.contiguous_format
    return torch.empty_like(x, memory_format=c), torch.empty_like(x, memory_format=c), _stat_like(x)


def _add_rms_norm_backward(dy: torch.Tensor, dh: torch.Tensor, h: torch.Tensor, weight: torch.Tensor,
                           rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dx, dw = K.add_rms_norm_backward(_c(dy), _c(dh), _c(h), _c(weight), _c(rstd))
    return _as(dx, h.dtype), _as(dw, weight.dtype)


add_rms_norm_backward = torch.library.custom_op(f"{LIB}::add_rms_norm_backward", _add_rms_norm_backward,
                                                mutates_args=())


@_fake(add_rms_norm_backward)
def _(dy, dh, h, weight, rstd):
    return torch.empty_like(h, memory_format=torch.contiguous_format), torch.empty_like(weight)


def _add_rms_norm_setup(ctx, inputs, output):
    ctx.save_for_backward(output[0], inputs[2], output[2])  # h, weight, rstd


def _add_rms_norm_grad(ctx, dh, dy, _drstd):
    h, w, rstd = ctx.saved_tensors
    if dy is None:  # y not used: x and residual get h's gradient
        return dh, dh, None, None
    if dh is None:  # h not used (a last norm's): the norm's backward alone
        dx, dw = call("rms_norm_backward", _as(dy, h.dtype), h, w, rstd)
    else:
        dx, dw = call("add_rms_norm_backward", _as(dy, h.dtype), _as(dh, h.dtype), h, w, rstd)
    return dx, dx, dw, None


_register(add_rms_norm, _add_rms_norm, _add_rms_norm_setup, _add_rms_norm_grad, differentiable=2)
_register(add_rms_norm_backward, _add_rms_norm_backward)


# --- LayerNorm ------------------------------------------------------------------------


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
               eps: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return K.layer_norm(_c(x), _c(weight), _c(bias), eps)


layer_norm = torch.library.custom_op(f"{LIB}::layer_norm", _layer_norm, mutates_args=())


@_fake(layer_norm)
def _(x, weight, bias, eps):
    return torch.empty_like(x, memory_format=torch.contiguous_format), _stat_like(x), _stat_like(x)


def _layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
                        rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if hasattr(K, "layer_norm_backward"):
        dx, dw, db = K.layer_norm_backward(_c(dy), _c(x), _c(weight), _c(mean), _c(rstd))
        return _as(dx, x.dtype), _as(dw, weight.dtype), _as(db, weight.dtype)
    dy32, w32, r = dy.float(), weight.float(), rstd[..., None]
    xhat = (x.float() - mean[..., None]) * r
    g = dy32 * w32
    dx = r * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    N = x.shape[-1]
    dw, db = (dy32 * xhat).reshape(-1, N).sum(0), dy32.reshape(-1, N).sum(0)
    return dx.to(x.dtype), dw.to(weight.dtype), db.to(weight.dtype)


layer_norm_backward = torch.library.custom_op(f"{LIB}::layer_norm_backward", _layer_norm_backward, mutates_args=())


@_fake(layer_norm_backward)
def _(dy, x, weight, mean, rstd):
    return (torch.empty_like(x, memory_format=torch.contiguous_format), torch.empty_like(weight),
            torch.empty_like(weight))


def _layer_norm_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1], output[1], output[2])


def _layer_norm_grad(ctx, dy, _dmean, _drstd):
    x, w, mean, rstd = ctx.saved_tensors
    dx, dw, db = call("layer_norm_backward", _as(dy, x.dtype), x, w, mean, rstd)
    return dx, dw, db, None


_register(layer_norm, _layer_norm, _layer_norm_setup, _layer_norm_grad)
_register(layer_norm_backward, _layer_norm_backward)


# --- argmax, argmin ---------------------------------------------------------------------
# Integer outputs: no gradient, so no autograd (``call`` runs the implementation).


def _argmax(x: torch.Tensor) -> torch.Tensor:
    return K.argmax(_c(x))


def _argmin(x: torch.Tensor) -> torch.Tensor:
    return K.argmin(_c(x))


argmax = torch.library.custom_op(f"{LIB}::argmax", _argmax, mutates_args=())
argmin = torch.library.custom_op(f"{LIB}::argmin", _argmin, mutates_args=())


@_fake(argmax)
def _(x):
    return x.new_empty(x.shape[:-1], dtype=torch.int64)


@_fake(argmin)
def _(x):
    return x.new_empty(x.shape[:-1], dtype=torch.int64)


_register(argmax, _argmax)
_register(argmin, _argmin)


# Cross-entropy's ops are in their own module; importing it registers them (``_register``).
from tile_mlir.torch.loss_ops import CrossEntropyInplace  # noqa: E402,F401 (tile_mlir.torch uses it)
