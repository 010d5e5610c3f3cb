"""Cross-entropy over a vocabulary, forward and backward: the functional API.

``loss, lse = cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0,
reduction="mean")`` and ``dlogits = cross_entropy_backward(logits, target, lse, dloss,
...)``, on numpy arrays (logits f32, or bf16 as ``uint16`` bits or ``ml_dtypes.bfloat16``;
integer targets) or torch tensors (float32 or bfloat16 logits, int64 targets): logits
(M, V), target (M,). As torch's ``F.cross_entropy``:

* a row's loss is (1 - ε)(lse - x[target]) + ε(lse - mean(x)), ε the label smoothing,
  and 0 where target == ignore_index;
* ``reduction``: ``none`` gives the M losses, ``sum`` their sum, ``mean`` their sum over
  the count of rows not ignored (NaN when every row is), each a 0-d array for the last two;
  ``dloss`` has the loss's shape;
* ``lse`` (f32, one per row) is what the backward needs: it reads the logits once more
  and writes dlogits once, over the logits themselves with ``inplace``.

One kernel of each serves every M (the row count is an argument:
``tile_mlir.dynamic_dims``), so a changing batch compiles nothing. The loss and lse are
f32 (``tile_mlir.torch`` gives the loss in the logits' dtype, as torch). The kernels are
``tile_mlir.kernels.cross_entropy_kernels``'s, compiled and launched as the other fused
kernels (``tile_mlir.kernels.library``). The per-row work (loss, lse, dlogits) is on the
device, and so are the reductions over the M rows (``sum``, ``mean`` and the mean's
count: ``cross_entropy_reduce``, one CTA in a fixed order, so one launch where torch's
ops took four, and the same bits on every run) and the backward's per-row scale (dloss
over the count: ``cross_entropy_row_scale``). A target outside [0, V) other than
ignore_index is an error on numpy and CPU tensors; on a CUDA tensor it is not checked
(that would wait for the device): its row's x[target] is read at the target clamped into
[0, V), and its dlogits have no -(1 - ε) at any column.
"""

from __future__ import annotations

import numpy as np

from .. import api
from ..arrays import torch_stream
from ..errors import LaunchError, OptionError
from . import library as L

REDUCTIONS = ("mean", "sum", "none")

__all__ = ["REDUCTIONS", "bytes_moved", "cross_entropy", "cross_entropy_backward", "cross_entropy_with_grad",
           "scale_unless_one"]


def cross_entropy(logits, target, ignore_index: int = -100, label_smoothing: float = 0.0, reduction: str = "mean",
                  *, backend: str = "auto", **overrides):
    """(loss, lse): module docstring. ``overrides`` (``warps``, ``vectors``) go to the
    row plan (``tile_mlir.kernels.plan``), for tests and tuning."""
    x, t, M, V, dtype, eps = _arguments("cross_entropy", logits, target, ignore_index, label_smoothing, reduction)
    backend = api.choose_backend(backend)
    if L._is_torch(x) and x.is_cuda and backend == "cuda":
        import torch

        loss = torch.empty(M, dtype=torch.float32, device=x.device)
        lse = torch.empty(M, dtype=torch.float32, device=x.device)
        if M:
            c = L.compiled("cross_entropy", M, V, dtype, backend="cuda", **overrides)
            # Python numbers, not numpy's: they take the launch's fast path (params.Packer)
            L.launch_tensors(c.kernel, c.grid, c.block, torch_stream(x.get_device()),
                             (x, t, loss, lse, int(ignore_index), float(eps), M))
        return _reduce(loss, t, ignore_index, reduction, backend), lse
    hx, ht = _host_arrays("cross_entropy", x, t, dtype, ignore_index, V)
    loss, lse = np.zeros(M, np.float32), np.zeros(M, np.float32)
    if M:
        c = L.compiled("cross_entropy", M, V, dtype, backend=backend, **overrides)
        c.kernel.launch(c.grid, c.block, hx, ht, loss, lse, np.int64(ignore_index), eps, M)
    out = _reduce(loss, ht, ignore_index, reduction, backend), lse
    return tuple(L._to_torch(np.asarray(o), x) for o in out) if L._is_torch(x) else out


def cross_entropy_with_grad(logits, target, ignore_index: int = -100, label_smoothing: float = 0.0,
                            reduction: str = "mean", inplace: bool = False, *, backend: str = "auto", **overrides):
    """(loss, lse, dlogits): ``cross_entropy`` and, from the same read of the logits,
    dlogits = d(loss)/d(logits) for dloss = 1 (for ``none``, each row's own loss's
    gradient), which ``cross_entropy_backward`` would give: one kernel, the logits read
    once and dlogits written once (over the logits with ``inplace``, on every plan: the
    kernel orders each read of x[target] before the writes, ``cross_entropy_kernels``).
    A dloss other than 1 is dlogits times dloss."""
    x, t, M, V, dtype, eps = _arguments("cross_entropy", logits, target, ignore_index, label_smoothing, reduction)
    backend = api.choose_backend(backend)
    loss, lse, dx, t = _fused(x, t, M, V, dtype, eps, ignore_index, reduction, inplace, backend, None, overrides)
    out = _reduce(loss, t, ignore_index, reduction, backend), lse
    if L._is_torch(x) and not L._is_torch(loss):  # a CPU tensor, run on the host
        out = tuple(L._to_torch(np.asarray(o), x) for o in out)
    return (*out, dx)


def _fused(x, t, M, V, dtype, eps, ignore_index, reduction, inplace, backend, scale, overrides):
    """``cross_entropy_with_grad`` on checked arguments, the rows' losses not reduced:
    (loss, lse, dlogits, target): dlogits of x's kind; loss, lse and target CUDA tensors
    on the GPU, else numpy (the host's). dlogits are for dloss = 1 of ``reduction`` times
    ``scale`` (a 1-element f32 array of the kind of x, None: 1 over the count of rows not
    ignored for a mean, else 1); ``linear_cross_entropy`` passes its whole batch's."""
    name = "cross_entropy_fused"
    if L._is_torch(x) and x.is_cuda and backend == "cuda":
        import torch

        loss = torch.empty(M, dtype=torch.float32, device=x.device)
        lse = torch.empty(M, dtype=torch.float32, device=x.device)
        if scale is None:  # 1 / max(count, 1) for a mean (counted on the device), else 1
            scale = (_on_rows(loss, t, ignore_index, "scale", backend) if reduction == "mean" else
                     torch.ones(1, dtype=torch.float32, device=x.device))
        dx = x if inplace else torch.empty_like(x)
        if M:
            c = L.compiled(name, M, V, dtype, backend="cuda", **overrides)
            L.launch_tensors(c.kernel, c.grid, c.block, torch_stream(x.get_device()),
                             (x, t, loss, lse, dx, scale, int(ignore_index), float(eps), M))
        return loss, lse, dx, t
    hx, ht = _host_arrays("cross_entropy", x, t, dtype, ignore_index, V)
    if inplace and not L._is_torch(x) and not (isinstance(x, np.ndarray) and x.flags.c_contiguous):
        raise LaunchError(f"{name}: inplace needs a C-contiguous numpy array of logits, got {L._summary(x)}")
    loss, lse = np.zeros(M, np.float32), np.zeros(M, np.float32)
    if scale is None:
        scale = (_on_rows(loss, ht, ignore_index, "scale", backend) if reduction == "mean" else
                 np.ones(1, np.float32))
    dx = hx if inplace else np.empty_like(hx)
    if M:
        c = L.compiled(name, M, V, dtype, backend=backend, **overrides)
        c.kernel.launch(c.grid, c.block, hx, ht, loss, lse, dx, np.asarray(_numpy(scale), np.float32).reshape(1),
                        np.int64(ignore_index), eps, M)
    if L._is_torch(x):
        dx = x.copy_(L._to_torch(dx, x)) if inplace else L._to_torch(dx, x)
    return loss, lse, dx, ht


def cross_entropy_backward(logits, target, lse, dloss, ignore_index: int = -100, label_smoothing: float = 0.0,
                           reduction: str = "mean", inplace: bool = False, *, backend: str = "auto",
                           **overrides):
    """dlogits = dloss · d(loss)/d(logits), of the logits' kind, shape and dtype; with
    ``inplace``, written over ``logits`` (which is returned)."""
    name = "cross_entropy_backward"
    x, t, M, V, dtype, eps = _arguments(name, logits, target, ignore_index, label_smoothing, reduction)
    want = (M,) if reduction == "none" else ()
    for what, a, shape in (("lse", lse, (M,)), ("dloss", dloss, want)):
        if tuple(getattr(a, "shape", np.shape(a))) != shape:
            raise LaunchError(f"{name}: {what} must have shape {shape} (reduction {reduction!r}), got {L._summary(a)}")
    backend = api.choose_backend(backend)
    if L._is_torch(x) and x.is_cuda and backend == "cuda":
        import torch

        g = _row_scale(torch.as_tensor(dloss, dtype=torch.float32, device=x.device), t, ignore_index, reduction,
                       backend)
        out = x if inplace else torch.empty_like(x)
        if M:
            c = L.compiled(name, M, V, dtype, backend="cuda", **overrides)
            lse32 = lse.to(device=x.device, dtype=torch.float32).contiguous()
            L.launch_tensors(c.kernel, c.grid, c.block, torch_stream(x.get_device()),
                             (x, t, lse32, g, out, float(eps), M))
        return out
    hx, ht = _host_arrays(name, x, t, dtype, ignore_index, V)
    if inplace and not L._is_torch(x) and not (isinstance(x, np.ndarray) and x.flags.c_contiguous):
        raise LaunchError(f"{name}: inplace needs a C-contiguous numpy array of logits, got {L._summary(x)}")
    g = _row_scale(np.asarray(_numpy(dloss), np.float32), ht, ignore_index, reduction, backend)
    out = hx if inplace else np.empty_like(hx)
    if M:
        c = L.compiled(name, M, V, dtype, backend=backend, **overrides)
        c.kernel.launch(c.grid, c.block, hx, ht, np.ascontiguousarray(_numpy(lse), np.float32), g, out, eps, M)
    if L._is_torch(x):
        result = L._to_torch(out, x)
        return x.copy_(result) if inplace else result
    return out


def scale_unless_one(x, scale, *, backend: str = "auto", **overrides):
    """x *= scale, in place, unless scale is exactly 1, and x itself returned: x an (M, N)
    C-contiguous array (f32 or bf16, numpy or torch), ``scale`` one f32 value (shape ()
    or (1,), an array or tensor: on a CUDA x, a CUDA tensor). Each product is taken in f32
    and rounded once to x's dtype. Where scale is 1, x is not read nor written (a NaN in
    it keeps its bits); a NaN scale scales. The test is made on the device, so a CUDA call
    neither waits for the GPU nor breaks a CUDA graph: ``cross_entropy_with_grad``'s
    dlogits (for dloss = 1) times the dloss a graph learns only on the device."""
    name = "scale_unless_one"
    torch_in = L._is_torch(x)
    if getattr(x, "ndim", 0) != 2:
        raise LaunchError(f"{name}: x must be an (M, N) array, got {L._summary(x)}")
    dtype = L._torch_dtype(x) if torch_in else L._numpy_dtype(x)
    if not (x.is_contiguous() if torch_in else isinstance(x, np.ndarray) and x.flags.c_contiguous):
        raise LaunchError(f"{name}: x is scaled in place, so it must be contiguous, got {L._summary(x)}")
    if tuple(getattr(scale, "shape", np.shape(scale))) not in ((), (1,)):
        raise LaunchError(f"{name}: scale must be one value (shape () or (1,)), got {L._summary(scale)}")
    M, N = (int(d) for d in x.shape)
    if N < 1:
        raise LaunchError(f"{name}: x needs at least one column, got {L._summary(x)}")
    backend = api.choose_backend(backend)
    if torch_in and x.is_cuda and backend == "cuda":
        import torch

        if not (L._is_torch(scale) and scale.device == x.device):
            raise LaunchError(f"{name}: with a CUDA x, scale must be a tensor on {x.device}, got {L._summary(scale)}")
        g = scale.to(torch.float32).reshape(1).contiguous()
        if M:
            c = L.compiled(name, M, N, dtype, backend="cuda", **overrides)
            L.launch_tensors(c.kernel, c.grid, c.block, torch_stream(x.get_device()), (x, g, M))
        return x
    g = np.asarray(_numpy(scale), np.float32).reshape(1)
    hx = L._host(L.SPECS[name], x, dtype) if torch_in else x
    if M:
        c = L.compiled(name, M, N, dtype, backend=backend, **overrides)
        c.kernel.launch(c.grid, c.block, hx, g, M)
    return x.copy_(L._to_torch(hx, x)) if torch_in else x


def _arguments(name, logits, target, ignore_index, label_smoothing, reduction):
    """(logits, target, M, V, dtype, ε), checked."""
    if reduction not in REDUCTIONS:
        raise OptionError(f"{name}: reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")
    eps = float(label_smoothing)
    if not 0.0 <= eps <= 1.0:
        raise OptionError(f"{name}: label_smoothing must be in [0, 1], got {label_smoothing!r}")
    if not isinstance(ignore_index, (int, np.integer)):
        raise OptionError(f"{name}: ignore_index must be an int, got {ignore_index!r}")
    torch_in = L._is_torch(logits)
    if not torch_in:
        logits = np.asarray(logits) if not isinstance(logits, np.ndarray) else logits
    if getattr(logits, "ndim", 0) != 2:
        raise LaunchError(f"{name}: logits must be an (M, V) array, got {L._summary(logits)}")
    dtype = L._torch_dtype(logits) if torch_in else L._numpy_dtype(logits)
    M, V = (int(d) for d in logits.shape)
    if V < 1:
        raise LaunchError(f"{name}: logits need at least one class, got {L._summary(logits)}")
    if tuple(getattr(target, "shape", np.shape(target))) != (M,):
        raise LaunchError(f"{name}: target must have shape ({M},), one class per row, got {L._summary(target)}")
    if torch_in:
        if not L._is_torch(target) or str(target.dtype) != "torch.int64" or target.device != logits.device:
            raise LaunchError(f"{name}: with torch logits, target must be an int64 tensor on {logits.device},"
                              f" got {L._summary(target)}")
        if logits.is_cuda:
            logits, target = logits.contiguous(), target.contiguous()
    elif not np.issubdtype(np.asarray(target).dtype, np.integer):
        raise LaunchError(f"{name}: target must hold integers, got {L._summary(target)}")
    return logits, target, M, V, dtype, np.float32(eps)


def _numpy(a) -> np.ndarray:
    return a.detach().cpu().numpy() if L._is_torch(a) else np.asarray(a)


def _host_arrays(name: str, x, t, dtype: str, ignore_index: int, V: int):
    """The logits and targets as contiguous numpy arrays; every target in [0, V) or
    ignore_index."""
    return L._host(L.SPECS[name], x, dtype), _host_targets(name, t, ignore_index, V)


def _host_targets(name: str, t, ignore_index: int, V: int) -> np.ndarray:
    """The targets as a contiguous int64 numpy array, each in [0, V) or ignore_index."""
    ht = np.ascontiguousarray(_numpy(t), np.int64)
    bad = np.flatnonzero((ht != ignore_index) & ((ht < 0) | (ht >= V)))
    if bad.size:
        raise LaunchError(f"{name}: target[{bad[0]}] = {ht[bad[0]]} is not a class of [0, {V}) nor ignore_index"
                          f" ({ignore_index})")
    return ht


def _reduce(loss, target, ignore_index: int, reduction: str, backend: str):
    """The rows' losses reduced as ``reduction`` says: ``none``, the losses themselves;
    ``sum`` and ``mean`` (over the rows whose target is not ``ignore_index``), a 0-d f32
    array of the losses' kind, from ``cross_entropy_reduce`` (``_on_rows``)."""
    if reduction == "none":
        return loss
    return _on_rows(loss, target, ignore_index, reduction, backend, shape=())


def _on_rows(loss, target, ignore_index: int, mode: str, backend: str, shape: tuple = (1,)):
    """``cross_entropy_reduce`` in ``mode`` (``REDUCE_MODES``) of the M rows' f32 ``loss``
    and int64 ``target``: one f32, in an array of ``shape`` (``(1,)`` or ``()``) of the kind
    of ``loss`` (a CUDA tensor on the device, on torch's stream; numpy on ``backend``). A
    0-d tensor is made as such, not as a view (a loss that autograd returns must not be
    one: the caller may write over it). The loss is not read for the scale."""
    c = L.compiled("cross_entropy_reduce", 1, 1, backend=backend)  # one plan whatever the shape
    M = int(loss.shape[0])
    if L._is_torch(loss):
        out = loss.new_empty(shape)
        L.launch_tensors(c.kernel, 1, c.block, torch_stream(loss.get_device()),
                         (loss, target, out.view(1) if shape == () else out, int(ignore_index),
                          L.REDUCE_MODES[mode], M))
        return out
    out = np.empty(1, np.float32)
    c.kernel.launch(1, c.block, loss, target, out, np.int64(ignore_index), np.int32(L.REDUCE_MODES[mode]), M)
    return out.reshape(shape)


def _row_scale(dloss, target, ignore_index: int, reduction: str, backend: str):
    """Each row's factor of the backward, f32, an array of the kind of ``dloss`` (a torch
    tensor on the logits' device, or numpy): dloss over the count of rows not ignored for
    ``mean``, dloss for ``sum`` (both from ``cross_entropy_row_scale``, one launch), the
    row's own dloss for ``none``; 0 for an ignored row."""
    if reduction == "none":
        valid = target != ignore_index
        if L._is_torch(dloss):
            return dloss.where(valid, 0.0).contiguous()
        return np.where(valid, dloss, np.float32(0)).astype(np.float32)
    c = L.compiled("cross_entropy_row_scale", 1, 1, backend=backend)  # one plan whatever the shape
    M, mode = int(target.shape[0]), L.REDUCE_MODES[reduction]
    if L._is_torch(dloss):
        g = dloss.new_empty(M)
        L.launch_tensors(c.kernel, 1, c.block, torch_stream(dloss.get_device()),
                         (target, dloss.reshape(1), g, int(ignore_index), mode, M))
        return g
    g = np.empty(M, np.float32)
    c.kernel.launch(1, c.block, target, dloss.reshape(1), g, np.int64(ignore_index), np.int32(mode), M)
    return g


def bytes_moved(M: int, V: int, dtype: str) -> dict[str, int]:
    """The bytes each phase moves to and from memory (docs/cross-entropy.md): the forward
    reads the logits once, the targets and x[target], and writes loss and lse; the
    backward reads the logits, targets, lse and the per-row scale, and writes dlogits."""
    s = 2 if dtype == "bf16" else 4
    return {"forward": M * V * s + (16 + s) * M, "backward": 2 * M * V * s + 16 * M}

