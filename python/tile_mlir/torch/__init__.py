"""tile_mlir's fused kernels for torch: functions with autograd, ``torch.library`` custom
ops that ``torch.compile(fullgraph=True)`` keeps in its graph, and ``nn.Module`` drop-ins.

::

    import tile_mlir.torch as tt

    y = tt.softmax(x);  l = tt.logsumexp(x)
    y = tt.rms_norm(x, weight, eps=1e-6);  y = tt.layer_norm(x, weight, bias, eps=1e-5)
    y, h = tt.add_rms_norm(x, residual, weight, eps=1e-6)   # h = x + residual, y = rms_norm(h)
    loss = tt.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean")
    loss = tt.linear_cross_entropy(h, head.weight, target)   # cross_entropy(F.linear(h, weight), ...)
    i = tt.argmax(x);  i = tt.argmin(x)      # int64, torch.argmax(x, dim=-1)'s rule
    norm, ln, loss_fn = tt.RMSNorm(d), tt.LayerNorm(d), tt.CrossEntropyLoss()
    head_loss = tt.LinearCrossEntropyLoss()   # head_loss(h, head.weight, target)

Over the last dim, the leading dims as rows; float32 and bfloat16 (every reduction and
all math f32); the output has the input's dtype (cross-entropy's loss the logits', as
torch). Each is a custom op (``torch.ops.tile_mlir.softmax``, ...: ``tile_mlir.torch.ops``)
with its backward (called eagerly, a function skips torch's dispatcher, whose layers cost
more than the launch: ``ops.call``): a CUDA tensor goes to the kernel by pointer on torch's current stream,
with no copy; a CPU tensor runs in the CPU interpreter (small shapes). torch is an
optional extra (``pip install tile-mlir[torch]``): ``import tile_mlir`` does not import
it, this package does. The modules' parameters have torch's names (``weight``,
``bias``), so their state dicts load torch's.
"""

from __future__ import annotations

import torch

from tile_mlir.errors import OptionError
from tile_mlir.torch import ops
from tile_mlir.torch.ops import formula_backwards

__all__ = ["CrossEntropyLoss", "LayerNorm", "LinearCrossEntropyLoss", "RMSNorm", "add_rms_norm", "argmax", "argmin",
           "cross_entropy", "formula_backwards", "layer_norm", "linear_cross_entropy", "logsumexp", "ops", "rms_norm",
           "softmax"]


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.softmax(x, dim=-1) (only the last dim)."""
    _last(dim, x)
    return ops.call("softmax", x)


def logsumexp(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.logsumexp(x, dim=-1) (only the last dim), in x's dtype."""
    _last(dim, x)
    return ops.call("logsumexp", x)


def argmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.argmax(x, dim=-1) (only the last dim): int64, the first of equal maxima, the
    first NaN where a row holds one."""
    _last(dim, x)
    return ops.call("argmax", x)


def argmin(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.argmin(x, dim=-1) (only the last dim), by the same rule."""
    _last(dim, x)
    return ops.call("argmin", x)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """F.rms_norm(x, (N,), weight, eps)."""
    return ops.call("rms_norm", x, weight, float(eps))[0]


def add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                 eps: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, h): h = x + residual, y = F.rms_norm(h, (N,), weight, eps), in one kernel (a
    transformer block's residual add and the next norm; the order of vLLM's fused
    ``RMSNorm(x, residual)``). Both take gradients; x's and residual's are equal."""
    h, y, _ = ops.call("add_rms_norm", x, residual, weight, float(eps))
    return y, h


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """F.layer_norm(x, (N,), weight, bias, eps)."""
    return ops.call("layer_norm", x, weight, bias, float(eps))[0]


def cross_entropy(logits: torch.Tensor, target: torch.Tensor, ignore_index: int = -100, label_smoothing: float = 0.0,
                  reduction: str = "mean", inplace: bool = False) -> torch.Tensor:
    """F.cross_entropy(logits, target, ...) for (M, V) logits and M int64 class indices.
    Where the logits require grad, one kernel gives the loss and dlogits (one read of the
    logits: ``cross_entropy_with_grad``), and the backward scales dlogits by dloss, a pass
    it skips where dloss is 1. Traced by ``torch.compile``, where that pass cannot be
    skipped (3 passes over M x V, and the scaled copy's memory), it is the forward kernel
    and the backward's (``cross_entropy``: the logits read twice, dlogits written once).
    ``inplace`` (where the logits require grad): that kernel writes dlogits over the
    logits, as Liger's does, eagerly and in a graph: no second M x V buffer, for logits that
    nothing reads after the loss (an LM head's)."""
    args = (int(ignore_index), float(label_smoothing), reduction)
    if inplace and logits.requires_grad and torch.is_grad_enabled():
        loss = ops.CrossEntropyInplace.apply(logits, target, *args)[0]
    else:
        fused = logits.requires_grad and torch.is_grad_enabled() and not torch.compiler.is_compiling()
        loss = ops.call("cross_entropy_with_grad" if fused else "cross_entropy", logits, target, *args)[0]
    return loss if loss.dtype == logits.dtype else loss.to(logits.dtype)


def linear_cross_entropy(h: torch.Tensor, weight: torch.Tensor, target: torch.Tensor, ignore_index: int = -100,
                         label_smoothing: float = 0.0, reduction: str = "mean",
                         chunk_rows: int | None = None) -> torch.Tensor:
    """F.cross_entropy(F.linear(h, weight), target, ...) for (M, D) h, a (V, D) weight and
    M int64 class indices, without the M x V logits (``K.linear_cross_entropy``): chunk by
    chunk, their loss and, where h or the weight require grad, both gradients, which the
    backward scales by dloss (a pass it skips eagerly where dloss is 1). ``reduction`` mean
    or sum; the loss in h's dtype, as torch's."""
    args = (int(ignore_index), float(label_smoothing), reduction, int(chunk_rows or 0))
    grad = (h.requires_grad or weight.requires_grad) and torch.is_grad_enabled()
    if grad:
        loss = ops.call("linear_cross_entropy_with_grad", h, weight, target, *args)[0]
    else:
        loss = ops.call("linear_cross_entropy", h, weight, target, *args)
    return loss if loss.dtype == h.dtype else loss.to(h.dtype)


def _last(dim: int, x: torch.Tensor) -> None:
    if dim != -1 and dim != x.dim() - 1:
        raise OptionError(f"tile_mlir.torch reduces over the last dim only, got dim={dim} for {x.dim()} dims")


def _features(normalized_shape) -> int:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if len(shape) != 1:
        raise OptionError(f"tile_mlir.torch normalizes over the last dim only, got normalized_shape={shape}")
    return int(shape[0])


class RMSNorm(torch.nn.Module):
    """torch.nn.RMSNorm over the last dim, with the fused kernel: y = x / sqrt(mean(x²) +
    eps) · weight. ``eps=None`` is torch's default (the dtype's machine epsilon). Called
    with a residual, ``norm(x, residual)`` gives ``(y, h)``: h = x + residual and y its
    norm, from one kernel (``add_rms_norm``)."""

    def __init__(self, normalized_shape, eps: float | None = 1e-6, elementwise_affine: bool = True, device=None,
                 dtype=None):
        super().__init__()
        n = _features(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = (n,), eps, elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.ones(n, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: torch.Tensor, residual: torch.Tensor | None = None):
        """``rms_norm(x)``; with ``residual``, ``(y, h)`` of ``add_rms_norm(x, residual)``: h = x
        + residual, y its norm."""
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        w = ops._as(self.weight if self.weight is not None else x.new_ones(self.normalized_shape), x.dtype)
        return rms_norm(x, w, eps) if residual is None else add_rms_norm(x, residual, w, eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LayerNorm(torch.nn.Module):
    """torch.nn.LayerNorm over the last dim, with the fused kernel."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        n = _features(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = (n,), eps, elementwise_affine
        if elementwise_affine:
            self.weight = torch.nn.Parameter(torch.ones(n, device=device, dtype=dtype))
            self.bias = torch.nn.Parameter(torch.zeros(n, device=device, dtype=dtype)) if bias else None
        else:
            self.weight = self.bias = None
        if self.bias is None:
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight if self.weight is not None else x.new_ones(self.normalized_shape)
        b = self.bias if self.bias is not None else x.new_zeros(self.normalized_shape)
        return layer_norm(x, ops._as(w, x.dtype), ops._as(b, x.dtype), self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class CrossEntropyLoss(torch.nn.Module):
    """torch.nn.CrossEntropyLoss for (M, V) logits and M int64 class indices (no class
    weights, no probability targets, no (M, V, d...) logits: flatten those to rows);
    ``inplace=True``: dlogits written over the logits (``cross_entropy``)."""

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0,
                 inplace: bool = False):
        super().__init__()
        self.inplace = bool(inplace)  # dlogits written over the logits (``cross_entropy``)
        if weight is not None:
            raise OptionError("tile_mlir.torch.CrossEntropyLoss takes no class weights")
        if not 0.0 <= label_smoothing <= 1.0 or reduction not in ("mean", "sum", "none"):
            raise OptionError(f"label_smoothing must be in [0, 1] and reduction mean, sum or none; got"
                              f" {label_smoothing!r}, {reduction!r}")
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if logits.dim() != 2:
            raise OptionError(f"tile_mlir.torch.CrossEntropyLoss takes (M, V) logits, got shape {tuple(logits.shape)}:"
                              " flatten the rows first (logits.view(-1, V), target.view(-1))")
        return cross_entropy(logits, target, self.ignore_index, self.label_smoothing, self.reduction, self.inplace)


class LinearCrossEntropyLoss(torch.nn.Module):
    """The cross-entropy of a linear layer's output, ``forward(h, weight, target)``, without
    the logits (``linear_cross_entropy``): an LM head and its loss in one module, as
    Liger's ``LigerFusedLinearCrossEntropyLoss`` (the weight is the head's, passed in, so
    the head keeps its parameter and its name). ``chunk_rows``: rows per chunk (None: the
    rule of ``K.linear_cross_entropy``)."""

    def __init__(self, ignore_index: int = -100, reduction: str = "mean", label_smoothing: float = 0.0,
                 chunk_rows: int | None = None):
        super().__init__()
        if not 0.0 <= label_smoothing <= 1.0 or reduction not in ("mean", "sum"):
            raise OptionError(f"label_smoothing must be in [0, 1] and reduction mean or sum; got"
                              f" {label_smoothing!r}, {reduction!r}")
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing
        self.chunk_rows = chunk_rows

    def forward(self, h: torch.Tensor, weight: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if h.dim() != 2:
            raise OptionError(f"tile_mlir.torch.LinearCrossEntropyLoss takes (M, D) inputs, got shape"
                              f" {tuple(h.shape)}: flatten the rows first (h.view(-1, D), target.view(-1))")
        return linear_cross_entropy(h, weight, target, self.ignore_index, self.label_smoothing, self.reduction,
                                    self.chunk_rows)
