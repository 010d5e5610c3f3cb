"""Cross-entropy of a linear layer's output, without its logits: an LM head and its loss.

``loss = linear_cross_entropy(h, weight, target, ...)`` is ``cross_entropy(h @ weight.T,
target, ...)``, and ``loss, dh, dweight = linear_cross_entropy_with_grad(h, weight,
target, ...)`` adds its gradients for dloss = 1: h is (M, D), weight (V, D), target (M,),
the options those of ``tile_mlir.kernels.loss`` (``ignore_index``, ``label_smoothing``,
``reduction`` ``mean`` or ``sum``).

**Why.** An LM head's logits are the largest tensor of a training step (4096 tokens
over 128k classes in f32: 2 GiB), and a loss over them keeps them, and their gradient,
until the backward. Here the M x V logits never exist whole. For each chunk of
``chunk_rows`` rows:

1. the chunk's logits, h[chunk] @ weight.T, one matmul into one buffer (2048 rows where
   they fit in 1 GiB: ``chunk_rows``);
2. ``cross_entropy_fused`` (``cross_entropy_with_grad``'s kernel) reads them once, writes
   each row's loss and, over the logits themselves, their gradient, scaled for the whole
   batch's reduction (1 over the rows not ignored for a mean: counted once, on the device);
3. dh[chunk] = dlogits @ weight and dweight += dlogits.T @ h[chunk], two matmuls.

So the forward costs three matmuls (the head's forward and both of its backward's) and one
kernel over the logits, and holds one chunk of them; the backward is the product of dh
and dweight by dloss (Liger's FusedLinearCrossEntropy does the same). ``reduction="none"``
is refused: its dloss, one per row, would have to scale each row of dlogits before the
matmuls, in the forward.

**Numerics.** Each chunk's logits and dlogits are in the inputs' dtype, as torch's
``F.linear`` would give them; the cross-entropy kernel's math is f32. dh is one matmul per
chunk of rows. dweight is summed over the chunks in the weight's dtype: each chunk's
product computed in f32 (cuBLAS's accumulation) and added to the sum so far, rounded once
(``addmm_``, as Liger's), so a bf16 weight's gradient takes one bf16 rounding per chunk,
where one matmul over all the rows takes one. An f32 accumulator would keep a second copy
of the weight in f32 (2 GiB for a bf16 head of 4096 x 256000) and, without an f32-output
bf16 matmul, run the products on CUDA cores: measured on the H200 at 8192 x 4096 -> 128256,
232.7 ms a step against 39.3 for ``torch.compile``. The loss is reduced over all M rows
by ``cross_entropy_reduce`` (one CTA, a fixed order), as ``cross_entropy``'s.

**Where it runs.** On torch CUDA tensors, the matmuls are torch's (cuBLAS) and the kernels
launch on torch's current stream. Otherwise (numpy, or CPU tensors) the matmuls are
numpy's in f32, each chunk's logits rounded to bf16 for bf16 inputs, and the kernels run
in the CPU interpreter: what CI tests, at small shapes.
"""

from __future__ import annotations

import numpy as np

from .. import api, bf16
from ..errors import LaunchError, OptionError
from ..vocab import DTYPE_BYTES
from . import library as L
from .loss import _arguments, _fused, _host_targets, _numpy, _on_rows, _reduce, cross_entropy

__all__ = ["CHUNK_BYTES", "CHUNK_ROWS", "chunk_rows", "linear_cross_entropy", "linear_cross_entropy_with_grad"]

CHUNK_ROWS = 2048  # rows per chunk, where they fit in CHUNK_BYTES
CHUNK_BYTES = 1 << 30  # the most a chunk's logits take
ROWS_MULTIPLE = 8  # a chunk's row count: a multiple of 8 (16-byte aligned slices of f32 and int64 rows)


def chunk_rows(M: int, V: int, dtype: str) -> int:
    """Rows per chunk: 2048 (``CHUNK_ROWS``), or as many as fit in 1 GiB of logits
    (``CHUNK_BYTES``, at least 8), spread evenly over the chunks M needs, in whole 8s.
    Fewer rows made the matmuls slower on the H200 (a step of the 4096 x 512 -> 32000 f32
    head: 11.2 ms in chunks of 128 rows, 9.2 of 512, 8.4 of 2048, 8.5 in one; of a bf16
    8192 x 4096 -> 128256 head: 89.6, 44.6, 40.3 and 40.0 ms; docs/cross-entropy.md)."""
    fit = max(ROWS_MULTIPLE, CHUNK_BYTES // (V * DTYPE_BYTES[dtype]) // ROWS_MULTIPLE * ROWS_MULTIPLE)
    rows = min(CHUNK_ROWS, fit)
    chunks = -(-max(M, 1) // rows)
    return -(-(-(-max(M, 1) // chunks)) // ROWS_MULTIPLE) * ROWS_MULTIPLE


def linear_cross_entropy(h, weight, target, ignore_index: int = -100, label_smoothing: float = 0.0,
                         reduction: str = "mean", *, chunk_rows: int | None = None, backend: str = "auto"):
    """The loss of ``cross_entropy(h @ weight.T, target, ...)`` (module docstring), a 0-d
    f32 array of h's kind, one chunk of the logits held at a time."""
    return _run("linear_cross_entropy", h, weight, target, ignore_index, label_smoothing, reduction, chunk_rows,
                backend, grad=False)[0]


def linear_cross_entropy_with_grad(h, weight, target, ignore_index: int = -100, label_smoothing: float = 0.0,
                                   reduction: str = "mean", *, chunk_rows: int | None = None,
                                   backend: str = "auto"):
    """(loss, dh, dweight): ``linear_cross_entropy`` and its gradients for dloss = 1, dh
    of h's shape and dtype, dweight of weight's (module docstring). A dloss other than 1
    is both times dloss."""
    return _run("linear_cross_entropy_with_grad", h, weight, target, ignore_index, label_smoothing, reduction,
                chunk_rows, backend, grad=True)


def _run(name, h, weight, target, ignore_index, label_smoothing, reduction, rows, backend, grad: bool):
    if reduction not in ("mean", "sum"):
        raise OptionError(f"{name}: reduction must be mean or sum, got {reduction!r} (a loss per row would need"
                          " its dloss before the matmuls: use cross_entropy on the logits)")
    torch_in = L._is_torch(h)
    if torch_in != L._is_torch(weight) or (torch_in and h.device != weight.device):
        raise LaunchError(f"{name}: h and weight must be of one kind and device, got {L._summary(h)} and"
                          f" {L._summary(weight)}")
    h = h if torch_in or isinstance(h, np.ndarray) else np.asarray(h)
    weight = weight if torch_in or isinstance(weight, np.ndarray) else np.asarray(weight)
    if getattr(h, "ndim", 0) != 2 or getattr(weight, "ndim", 0) != 2 or h.shape[1] != weight.shape[1]:
        raise LaunchError(f"{name}: h must be (M, D) and weight (V, D), got {L._summary(h)} and {L._summary(weight)}")
    dtype = L._torch_dtype(h) if torch_in else L._numpy_dtype(h)
    wdtype = L._torch_dtype(weight) if torch_in else L._numpy_dtype(weight)
    if dtype != wdtype:
        raise LaunchError(f"{name}: h and weight must have one dtype, got {L._summary(h)} and {L._summary(weight)}")
    M, V = int(h.shape[0]), int(weight.shape[0])
    if V < 1:
        raise LaunchError(f"{name}: weight needs at least one class (row), got {L._summary(weight)}")
    rows = chunk_rows(M, V, dtype) if rows is None else rows
    if type(rows) is not int or rows < ROWS_MULTIPLE or rows % ROWS_MULTIPLE:
        raise OptionError(f"{name}: chunk_rows must be a positive multiple of {ROWS_MULTIPLE}, got {rows}")
    backend = api.choose_backend(backend)
    on_device = torch_in and h.is_cuda and backend == "cuda"
    # the targets and options, checked as cross_entropy checks them, against an (M, 1)
    # stand-in for the logits of h's kind
    stand_in = h.new_empty((M, 1)) if on_device else np.empty((M, 1), np.float32)
    target = target if on_device or not torch_in else _numpy(target)
    _, t, _, _, _, eps = _arguments(name, stand_in, target, ignore_index, label_smoothing, reduction)
    run = _device if on_device else _host
    return run(h, weight, t, M, V, dtype, rows, ignore_index, eps, reduction, backend, grad)


def _device(h, weight, t, M, V, dtype, rows, ignore_index, eps, reduction, backend, grad):
    """The chunks on torch CUDA tensors: cuBLAS's matmuls, the kernels on torch's stream."""
    import torch

    h, weight = h.contiguous(), weight.contiguous()
    loss = torch.empty(M, dtype=torch.float32, device=h.device)
    scale = (_on_rows(loss, t, ignore_index, "scale", backend) if reduction == "mean" else
             torch.ones(1, dtype=torch.float32, device=h.device))
    buf = h.new_empty((min(rows, M), V))
    dh = torch.empty_like(h) if grad else None
    dw = torch.zeros_like(weight) if grad else None
    for s in range(0, M, rows):
        e = min(M, s + rows)
        b, hs = buf[:e - s], h[s:e]
        torch.mm(hs, weight.t(), out=b)
        loss[s:e] = _chunk(b, t[s:e], dtype, eps, ignore_index, backend, scale, grad)[0]
        if grad:
            torch.mm(b, weight, out=dh[s:e])
            dw.addmm_(b.t(), hs)  # each chunk's product in f32 (cuBLAS), added and rounded once
    total = _reduce(loss, t, ignore_index, reduction, backend)
    return (total, dh, dw) if grad else (total,)


def _host(h, weight, t, M, V, dtype, rows, ignore_index, eps, reduction, backend, grad):
    """The chunks on the host: numpy's matmuls in f32, the kernels in the interpreter."""
    torch_in = L._is_torch(h)
    hf, wf = (_values(a, dtype) for a in (h, weight))
    ht = _host_targets("linear_cross_entropy", t, ignore_index, V)
    loss = np.zeros(M, np.float32)
    scale = (_on_rows(loss, ht, ignore_index, "scale", backend) if reduction == "mean" else np.ones(1, np.float32))
    dh = np.zeros(hf.shape, np.float32) if grad else None
    dw = np.zeros(wf.shape, np.float32) if grad else None
    for s in range(0, M, rows):
        e = min(M, s + rows)
        logits = hf[s:e] @ wf.T
        b = bf16.to_bits(logits) if dtype == "bf16" else np.ascontiguousarray(logits, np.float32)
        loss[s:e], dx = _chunk(b, ht[s:e], dtype, eps, ignore_index, backend, scale, grad)
        if grad:
            g = bf16.from_bits(dx) if dtype == "bf16" else dx
            dh[s:e] = g @ wf
            dw += g.T @ hf[s:e]
            if dtype == "bf16":  # the weight's dtype after each chunk, as the GPU's addmm
                dw = bf16.from_bits(bf16.to_bits(dw))
    total = _reduce(loss, ht, ignore_index, reduction, backend)
    out = [total] + ([_like(dh, h, dtype), _like(dw, weight, dtype)] if grad else [])
    if torch_in:
        out[0] = L._to_torch(np.asarray(total), h)
    return tuple(out)


def _chunk(logits, t, dtype, eps, ignore_index, backend, scale, grad: bool):
    """One chunk's (losses, dlogits): ``cross_entropy_fused`` writing dlogits (times
    ``scale``) over the chunk's logits, or, without ``grad``, the forward kernel alone
    (dlogits None)."""
    M, V = (int(d) for d in logits.shape)
    if not grad:
        return cross_entropy(logits, t, ignore_index, float(eps), "none", backend=backend)[0], None
    loss, _, dx, _ = _fused(logits, t, M, V, dtype, eps, ignore_index, "sum", True, backend, scale, {})
    return loss, dx


def _values(a, dtype: str) -> np.ndarray:
    """An f32 numpy array of ``a``'s values (bf16 exactly: its bits widened; a bf16 torch
    tensor through its bits, which numpy cannot hold otherwise)."""
    if L._is_torch(a) and dtype == "bf16":
        import torch

        return bf16.from_bits(a.detach().cpu().contiguous().view(torch.int16).numpy().view(np.uint16))
    host = _numpy(a)
    return bf16.from_bits(bf16.bits_of(host)) if dtype == "bf16" else np.ascontiguousarray(host, np.float32)


def _like(values: np.ndarray, a, dtype: str):
    """f32 ``values`` in the kind and dtype of ``a`` (bf16 rounded once)."""
    if dtype == "bf16":
        bits = bf16.to_bits(values)
        if L._is_torch(a):
            return L._to_torch(bits, a)
        return bits if _numpy(a).dtype == np.uint16 else bf16.as_ml_dtypes(bits)
    return L._to_torch(values, a) if L._is_torch(a) else values
