"""Cross-entropy as ``torch.library`` custom ops (made and called by
``tile_mlir.torch.registry``, as ``tile_mlir.torch.ops``' are):
``cross_entropy`` (the loss and lse) and its backward's, ``cross_entropy_with_grad`` (the
loss and dlogits from one read of the logits) and ``cross_entropy_with_grad_``, which
writes dlogits over the logits (``inplace=True``), with its ``autograd.Function``; and
``linear_cross_entropy`` and ``linear_cross_entropy_with_grad``, the loss of a linear
layer's output without its logits (``K.linear_cross_entropy``)."""

from __future__ import annotations

import torch

from tile_mlir import kernels as K
from tile_mlir.errors import OptionError
from tile_mlir.torch.registry import _OPS, LIB, _as, _c, _eager, _fake, _register, _stat_like, _traced, call

# --- cross-entropy --------------------------------------------------------------------


def _cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int, label_smoothing: float,
                  reduction: str) -> tuple[torch.Tensor, torch.Tensor]:
    return K.cross_entropy(_c(logits), _c(target), ignore_index, label_smoothing, reduction)


cross_entropy = torch.library.custom_op(f"{LIB}::cross_entropy", _cross_entropy, mutates_args=())


@_fake(cross_entropy)
def _(logits, target, ignore_index, label_smoothing, reduction):
    shape = logits.shape[:1] if reduction == "none" else ()
    return logits.new_empty(shape, dtype=torch.float32), _stat_like(logits)


def _cross_entropy_backward(logits: torch.Tensor, target: torch.Tensor, lse: torch.Tensor, dloss: torch.Tensor,
                           ignore_index: int, label_smoothing: float, reduction: str) -> torch.Tensor:
    return K.cross_entropy_backward(_c(logits), _c(target), _c(lse), _c(_as(dloss, torch.float32)), ignore_index,
                                    label_smoothing, reduction)


cross_entropy_backward = torch.library.custom_op(f"{LIB}::cross_entropy_backward", _cross_entropy_backward,
                                                 mutates_args=())


@_fake(cross_entropy_backward)
def _(logits, target, lse, dloss, ignore_index, label_smoothing, reduction):
    return torch.empty_like(logits, memory_format=torch.contiguous_format)


def _cross_entropy_setup(ctx, inputs, output):
    logits, target, ctx.ignore_index, ctx.label_smoothing, ctx.reduction = inputs
    ctx.save_for_backward(logits, target, output[1])


def _cross_entropy_grad(ctx, dloss, _dlse):
    logits, target, lse = ctx.saved_tensors
    dx = call("cross_entropy_backward", logits, target, lse, dloss, ctx.ignore_index, ctx.label_smoothing,
              ctx.reduction)
    return dx, None, None, None, None


_register(cross_entropy, _cross_entropy, _cross_entropy_setup, _cross_entropy_grad)
_register(cross_entropy_backward, _cross_entropy_backward)


# The loss and its gradient from one read of the logits (``K.cross_entropy_with_grad``):
# what ``tile_mlir.torch.cross_entropy`` runs where the logits require grad. The backward
# scales the saved dlogits by dloss, and on the eager path, outside a CUDA graph capture,
# skips that pass where dloss is 1 (``loss.backward()``'s), as Liger does.


def _skips_product(grad, dloss) -> bool:
    """Whether a backward returns its saved gradient as it is, not times dloss: eagerly,
    outside a CUDA graph capture, where dloss is 1 (a host sync, cheaper than the pass).
    ``_traced`` first: Dynamo cannot trace the capture query, and a graph break there
    would leave the op out of the graph (which the H200's training step showed)."""
    if _traced() or (grad.is_cuda and torch.cuda.is_current_stream_capturing()):
        return False
    return bool((dloss == 1).all())


def _cross_entropy_with_grad(logits: torch.Tensor, target: torch.Tensor, ignore_index: int, label_smoothing: float,
                             reduction: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return K.cross_entropy_with_grad(_c(logits), _c(target), ignore_index, label_smoothing, reduction)


cross_entropy_with_grad = torch.library.custom_op(f"{LIB}::cross_entropy_with_grad", _cross_entropy_with_grad,
                                                  mutates_args=())


@_fake(cross_entropy_with_grad)
def _(logits, target, ignore_index, label_smoothing, reduction):
    shape = logits.shape[:1] if reduction == "none" else ()
    return (logits.new_empty(shape, dtype=torch.float32), _stat_like(logits),
            torch.empty_like(logits, memory_format=torch.contiguous_format))


def _cross_entropy_with_grad_setup(ctx, inputs, output):
    ctx.reduction = inputs[4]
    ctx.save_for_backward(output[2])


def _cross_entropy_with_grad_grad(ctx, dloss, _dlse, _ddlogits):
    (dx,) = ctx.saved_tensors
    scale = dloss[:, None] if ctx.reduction == "none" else dloss
    if _skips_product(dx, dloss):
        return dx, None, None, None, None  # one host sync, not a pass over dlogits
    return (dx * scale).to(dx.dtype), None, None, None, None


_register(cross_entropy_with_grad, _cross_entropy_with_grad, _cross_entropy_with_grad_setup,
          _cross_entropy_with_grad_grad)


# ``inplace`` (``tile_mlir.torch.cross_entropy(..., inplace=True)``, as Liger's): the same
# kernel writes dlogits over the logits themselves, an op that mutates its input, so that
# no second M x V buffer exists (in a graph, Inductor keeps the mutation in place).


def _cross_entropy_with_grad_(logits: torch.Tensor, target: torch.Tensor, ignore_index: int, label_smoothing: float,
                              reduction: str) -> tuple[torch.Tensor, torch.Tensor]:
    if not logits.is_contiguous():
        raise OptionError("tile_mlir.torch.cross_entropy(inplace=True) writes over contiguous logits only")
    loss, lse, _ = K.cross_entropy_with_grad(logits, _c(target), ignore_index, label_smoothing, reduction,
                                             inplace=True)
    return loss, lse


cross_entropy_with_grad_ = torch.library.custom_op(f"{LIB}::cross_entropy_with_grad_", _cross_entropy_with_grad_,
                                                   mutates_args=("logits",))


@_fake(cross_entropy_with_grad_)
def _(logits, target, ignore_index, label_smoothing, reduction):
    shape = logits.shape[:1] if reduction == "none" else ()
    return logits.new_empty(shape, dtype=torch.float32), _stat_like(logits)


_register(cross_entropy_with_grad_, _cross_entropy_with_grad_, mutates=("logits",))  # its autograd: below


class CrossEntropyInplace(torch.autograd.Function):
    """The autograd of ``cross_entropy_with_grad_`` (an op that mutates its input takes
    none of ``register_autograd``'s). The forward writes dlogits over the logits, which it
    keeps for the backward; the logits are not marked dirty (Dynamo of torch 2.11 breaks
    its graph at a Function that marks one), which autograd allows because nothing saved
    them before (an LM head's matmul saves its inputs, not its output). The backward
    scales them by dloss:

    * eagerly, in place, with ``K.scale_unless_one`` (a kernel that reads dloss on the
      device and, where it is 1, stops: no pass over dlogits and no host sync, so it is
      captured in a CUDA graph too), or torch's in-place product for ``reduction="none"``
      (a dloss a row). So it runs once: a second backward raises;
    * traced, as the product ``dx * dloss``, which Inductor writes into the donated
      buffer: one pass over dlogits. An op that scaled them in place would cost as much
      there: Inductor does not re-inplace a mutation of a backward graph's input, and
      copies the buffer onto itself before it (torch 2.13's ``reinplace`` pass).

    Traced (Dynamo traces a Function), it calls the op's twin; eagerly, its implementation."""

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, reduction):
        fn = _cross_entropy_with_grad_ if _eager((logits, target)) else _OPS["cross_entropy_with_grad_"][0]
        loss, lse = fn(logits, target, ignore_index, label_smoothing, reduction)
        ctx.mark_non_differentiable(lse)
        ctx.save_for_backward(logits)
        ctx.reduction = reduction
        return loss, lse

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dloss, _dlse):
        (dx,) = ctx.saved_tensors
        scale = dloss[:, None] if ctx.reduction == "none" else dloss
        if _traced():
            return (dx * scale).to(dx.dtype), None, None, None, None
        if getattr(ctx, "scaled", False):
            raise RuntimeError("tile_mlir.torch.cross_entropy(inplace=True): its backward runs once (it scales"
                               " dlogits where they lie, over the logits); call backward once, or use inplace=False")
        ctx.scaled = True
        if ctx.reduction == "none":
            dx.mul_(scale.to(dx.dtype))
        else:
            K.scale_unless_one(dx, dloss)
        return dx, None, None, None, None


# --- cross-entropy of a linear layer's output (``K.linear_cross_entropy``) ----------------
# The loss and both gradients (h's and the weight's) in the forward, chunk by chunk,
# never holding the M x V logits; the backward scales them by dloss (a pass over dh and
# dweight, skipped eagerly where dloss is 1, as ``cross_entropy_with_grad``'s).


def _linear_cross_entropy(h: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, ignore_index: int,
                          label_smoothing: float, reduction: str, chunk_rows: int) -> torch.Tensor:
    return K.linear_cross_entropy(h, weight, target, ignore_index, label_smoothing, reduction,
                                  chunk_rows=chunk_rows or None)


linear_cross_entropy = torch.library.custom_op(f"{LIB}::linear_cross_entropy", _linear_cross_entropy,
                                               mutates_args=())


@_fake(linear_cross_entropy)
def _(h, weight, target, ignore_index, label_smoothing, reduction, chunk_rows):
    return h.new_empty((), dtype=torch.float32)


_register(linear_cross_entropy, _linear_cross_entropy)


def _linear_cross_entropy_with_grad(h: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, ignore_index: int,
                                    label_smoothing: float, reduction: str,
                                    chunk_rows: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return K.linear_cross_entropy_with_grad(h, weight, target, ignore_index, label_smoothing, reduction,
                                            chunk_rows=chunk_rows or None)


linear_cross_entropy_with_grad = torch.library.custom_op(f"{LIB}::linear_cross_entropy_with_grad",
                                                         _linear_cross_entropy_with_grad, mutates_args=())


@_fake(linear_cross_entropy_with_grad)
def _(h, weight, target, ignore_index, label_smoothing, reduction, chunk_rows):
    return (h.new_empty((), dtype=torch.float32), torch.empty_like(h, memory_format=torch.contiguous_format),
            torch.empty_like(weight, memory_format=torch.contiguous_format))


def _linear_cross_entropy_setup(ctx, inputs, output):
    ctx.save_for_backward(output[1], output[2])


def _linear_cross_entropy_grad(ctx, dloss, _ddh, _ddw):
    dh, dw = ctx.saved_tensors
    if _skips_product(dh, dloss):
        return dh, dw, None, None, None, None, None  # one host sync, not a pass over dh and dweight
    return (dh * dloss).to(dh.dtype), (dw * dloss).to(dw.dtype), None, None, None, None, None


_register(linear_cross_entropy_with_grad, _linear_cross_entropy_with_grad, _linear_cross_entropy_setup,
          _linear_cross_entropy_grad)
