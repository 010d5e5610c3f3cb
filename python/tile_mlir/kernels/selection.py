"""argmax and argmin over the last dim: the functional API.

``i = argmax(x)`` and ``i = argmin(x)``, on a numpy array (f32, or bf16 as ``uint16``
bits or ``ml_dtypes.bfloat16``) or a torch tensor (float32 or bfloat16), x of shape
(..., N) with the leading dims as rows: the int64 column of each row's greatest
(smallest) element, of shape x.shape[:-1], as ``torch.argmax(x, dim=-1)`` gives it: the
first of equal extrema, the first NaN where the row holds one, -0 equal to +0. One read
of x; one kernel per (N, dtype, plan), whatever the row count (the kernels:
``tile_mlir.kernels.selection_kernels``). On a CUDA tensor it runs by pointer on torch's
current stream; on numpy arrays and CPU tensors on the GPU through copies, or in the CPU
interpreter where there is no GPU.
"""

from __future__ import annotations

import numpy as np

from .. import api
from ..arrays import torch_stream
from . import library as L

__all__ = ["argmax", "argmin"]


def argmax(x, *, backend: str = "auto", **overrides):
    """The first column of each row's greatest element (module docstring). ``overrides``
    (``warps``, ``vectors``, ``ctas``, ``table``) go to the row plan, for tests and tuning."""
    return _select("argmax", x, backend, overrides)


def argmin(x, *, backend: str = "auto", **overrides):
    """The first column of each row's smallest element (module docstring)."""
    return _select("argmin", x, backend, overrides)


def _select(name: str, x, backend: str, overrides):
    if not L._is_torch(x) and not isinstance(x, np.ndarray):
        x = np.asarray(x)
    torch_in, dtype, M, N = L.rows_of(name, x)
    shape = tuple(x.shape[:-1])
    backend = api.choose_backend(backend)
    if torch_in and x.is_cuda and backend == "cuda":
        import torch

        out = torch.empty(M, dtype=torch.int64, device=x.device)
        if M:
            c = L.compiled(name, M, N, dtype, backend="cuda", **overrides)
            L.launch_tensors(c.kernel, c.grid, c.block, torch_stream(x.get_device()),
                             (x.reshape(M, N).contiguous(), out, M))
        return out.view(shape)
    host = L._host(L.SPECS[name], x, dtype).reshape(M, N)
    out = np.zeros(M, np.int64)
    if M:
        c = L.compiled(name, M, N, dtype, backend=backend, **overrides)
        c.kernel.launch(c.grid, c.block, host, out, M)
    out = out.reshape(shape)
    if torch_in:
        import torch

        return torch.from_numpy(out).to(x.device)
    return out
