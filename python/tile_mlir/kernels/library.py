"""The fused kernels as a library: compile each once, run it on arrays.

``compiled(name, M, N, dtype)`` is one kernel (``forward.<name>``, built for the plan of
N and dtype) with its launch configuration for M rows, compiled once per process for
each (name, N, dtype, plan), whatever M: the row count is the kernel's last argument
(``rows``: ``tile_mlir.dynamic_dims``), so a changing batch compiles nothing, and the grid
is M's. ``kernel_text`` is its MLIR. ``run(name, x,
*params)`` runs it on arrays: a numpy array (f32, or bf16 as ``uint16`` bits or an
``ml_dtypes.bfloat16`` array) through copies (or in the interpreter), a torch tensor on
the GPU by pointer on torch's current stream (zero copy), a torch tensor on the CPU
through numpy. x has any shape (..., N); the leading dims are the rows.

A kernel is built from Python, with MLIR; a GPU machine without MLIR cannot build it, so
where it is compiled for the GPU its text is also remembered in the compile cache under a
name that says what it is (``cache.remember``: kernel, ``?x<N>``, dtype, plan, chip), and
read back by that name there (``cache.recall``). ``python -m tile_mlir.testing.prepare`` makes the
kernels of the GPU tests; ``benchmarks.prepare`` those of the benchmarks.

Importing this module imports neither MLIR nor CUDA; building a kernel imports
``tile_mlir.kernels.forward`` (the builders), which needs MLIR.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import math
import sys
from dataclasses import dataclass

import numpy as np

from .. import api, cache
from ..arrays import torch_stream
from ..errors import BindingsTooOld, LaunchError, OptionError
from ..options import Options
from ..vocab import DEFAULT_CHIP
from .plan import KERNELS, RowPlan, measured_plan, plan

__all__ = ["SPECS", "Compiled", "Kernel", "compiled", "kernel_text", "run"]


@dataclass(frozen=True)
class Kernel:
    """What a kernel takes and gives: x, then the ``rows_params`` (arrays of x's shape), the
    per-column ``params`` (N each), the
    ``outputs`` as (name, role) (``rows``: like x; ``row``: one value per row of x's
    dtype; ``stat``: one f32 per row), then ``eps`` if it has a default. A kernel of
    another ``module`` than ``forward`` (its ``BUILDERS`` build it) has its own functional
    API, and its arguments are ``args`` (``signature``). Every kernel serves any M: its last
    argument is the row count (``rows``)."""

    name: str
    params: tuple[str, ...] = ()
    outputs: tuple[tuple[str, str], ...] = (("y", "rows"),)
    eps: float | None = None
    module: str = "forward"
    args: tuple[str, ...] = ()
    rows_params: tuple[str, ...] = ()

    @property
    def signature(self) -> str:
        names = self.args or ("x", *self.rows_params, *self.params, *(n for n, _ in self.outputs),
                              *(("eps",) if self.eps is not None else ()), "rows")
        return f"{self.name}({', '.join(names)})"


SPECS = {
    "softmax": Kernel("softmax"),
    "logsumexp": Kernel("logsumexp", outputs=(("y", "row"),)),
    "rmsnorm": Kernel("rmsnorm", ("weight",), (("y", "rows"), ("rstd", "stat")), 1e-6),
    "add_rmsnorm": Kernel("add_rmsnorm", ("weight",), (("h", "rows"), ("y", "rows"), ("rstd", "stat")), 1e-6,
                          rows_params=("residual",)),
    "layernorm": Kernel("layernorm", ("weight", "bias"), (("y", "rows"), ("mean", "stat"), ("rstd", "stat")), 1e-5),
    "cross_entropy": Kernel("cross_entropy", module="cross_entropy_kernels",
                            args=("logits", "target", "loss", "lse", "ignore_index", "label_smoothing", "rows")),
    "cross_entropy_fused": Kernel("cross_entropy_fused", module="cross_entropy_kernels",
                                  args=("logits", "target", "loss", "lse", "dlogits", "scale", "ignore_index",
                                        "label_smoothing", "rows")),
    "cross_entropy_backward": Kernel("cross_entropy_backward", module="cross_entropy_kernels",
                                     args=("logits", "target", "lse", "scale", "dlogits", "label_smoothing", "rows")),
    "scale_unless_one": Kernel("scale_unless_one", module="cross_entropy_kernels", args=("x", "scale", "rows")),
    "cross_entropy_reduce": Kernel("cross_entropy_reduce", module="cross_entropy_kernels",
                                   args=("loss", "target", "out", "ignore_index", "mode", "rows")),
    "cross_entropy_row_scale": Kernel("cross_entropy_row_scale", module="cross_entropy_kernels",
                                      args=("target", "dloss", "scale", "ignore_index", "mode", "rows")),
    "argmax": Kernel("argmax", module="selection_kernels", args=("x", "indices", "rows")),
    "argmin": Kernel("argmin", module="selection_kernels", args=("x", "indices", "rows")),
}


@dataclass(frozen=True)
class Compiled:
    """What a launch needs: ``kernel.launch(grid, block, *args)`` or, for benchmarks,
    ``kernel.bind(grid, block, *args)``; ``args`` in the order ``signature`` gives."""

    kernel: object
    grid: int
    block: int
    plan: RowPlan
    backend: str
    signature: str


def _spec(name: str) -> Kernel:
    if name not in SPECS:
        raise OptionError(f"kernel must be one of {', '.join(SPECS)}, got {name!r}")
    return SPECS[name]


def kernel_text(name: str, M: int, N: int, dtype: str = "f32", *, chip: str = DEFAULT_CHIP, remember: bool = False,
                **overrides) -> str:
    """The MLIR of kernel ``name`` for an M x N matrix of ``dtype`` (``plan`` takes the
    ``overrides``; the kernel is the same for every M), with the Python line of each op as
    its location. Without MLIR, the
    text the compile cache remembers for it; with ``remember``, the cache remembers this
    one (what the prepare scripts do, for a GPU machine without MLIR)."""
    name, p = _spec(name).name, _plan(name, M, N, dtype, overrides)
    text = _text(name, None, p, chip)
    if remember:
        cache.remember(_name(name, None, p, chip), text)
    return text


def compiled(name: str, M: int, N: int, dtype: str = "f32", *, backend: str = "auto", chip: str = DEFAULT_CHIP,
             **overrides) -> Compiled:
    """Kernel ``name`` compiled for an M x N matrix of ``dtype``, with its grid (for M) and
    block: once per process for each (name, plan, backend, chip), whatever M (a changing
    M compiles nothing); launched with M as its last argument."""
    return _compiled_for(name, M, N, dtype, api.choose_backend(backend), chip, tuple(sorted(overrides.items())))


@functools.lru_cache(maxsize=1024)
def _compiled_for(name: str, M: int, N: int, dtype: str, backend: str, chip: str, overrides: tuple) -> Compiled:
    """``compiled``, remembered for each shape (the one kernel for every M, with M's
    grid): a call with a shape seen before costs a dictionary lookup (the plan and the
    kernel are not looked for again)."""
    spec, p = _spec(name), _plan(name, M, N, dtype, dict(overrides))
    return dataclasses.replace(_compiled(spec.name, p, backend, chip), grid=p.grid(M))


LOSS_SEARCHED = "cross_entropy_fused"  # the measured table's name for cross-entropy's plans
PLANS_OF = {"add_rmsnorm": "rmsnorm"}  # a forward that takes the plans (table, measured) of another
SELECTION = ("argmax", "argmin")  # logsumexp's plans, registers only (``_plan``)
# ``cross_entropy_reduce`` and ``cross_entropy_row_scale`` (``ROW_KERNELS``: the loss's
# sum, mean or the mean's scale over the rows, the backward's per-row scale, on the device:
# ``cross_entropy_kernels``): one CTA of 8 warps whatever the shape (the plan gives only the
# CTA's layouts), and their modes
REDUCE_PLAN = {"ctas": 1, "rows": 1, "warps": 8}
REDUCE_MODES = {"scale": 0, "mean": 1, "sum": 2}
ROW_KERNELS = ("cross_entropy_reduce", "cross_entropy_row_scale")


def _plan(name: str, M: int, N: int, dtype: str, overrides) -> RowPlan:
    """The row plan of kernel ``name``: the forward kernels' names select their tables
    and measured plans (``add_rmsnorm`` RMSNorm's: ``PLANS_OF``). Cross-entropy's three
    kernels take the plan measured for the fused one (``LOSS_SEARCHED``, ``benchmarks.plan_search``) at the vocabularies it searched,
    on softmax's register budget: the same plan for all three, so that the loss alone and
    the fused kernel give the same lse bits. Elsewhere they, and the other kernels, take
    softmax's plan (one pass over the row with a little more), without its demand of
    several CTAs an SM (``per_sm``), which caps a thread's registers to what softmax
    needs: the fused kernel keeps more (the exponentials in f32 and dlogits' terms) and
    would spill. argmax and argmin (``SELECTION``) take logsumexp's plans, registers
    only: like logsumexp they read the row once and write one value a row.
    ``ROW_KERNELS`` have one plan (``REDUCE_PLAN``), whatever the shape."""
    if name in SELECTION:
        return plan(M, N, dtype, "logsumexp", **{"shared": 0, **overrides})
    if name in KERNELS or name in PLANS_OF:
        return plan(M, N, dtype, PLANS_OF.get(name, name), **overrides)
    if name in ROW_KERNELS:
        return plan(1, 2048, "f32", "softmax", **REDUCE_PLAN)
    if name.startswith("cross_entropy") and not overrides:
        p = measured_plan("softmax", N, dtype, searched=LOSS_SEARCHED)
        if p is not None:
            return p
    p = plan(M, N, dtype, "softmax", **{"shared": 0, **overrides})  # their rows in registers only
    if p.O > 1 and "per_sm" not in overrides:
        p = dataclasses.replace(p, ctas_per_sm=1, why=f"{p.why}; one CTA an SM asked (softmax's plan asks {p.O})")
    return p


@functools.lru_cache(maxsize=256)
def _compiled(name: str, p: RowPlan, backend: str, chip: str) -> Compiled:
    """The kernel for every M (its grid here is one row's: ``_compiled_for`` gives M's)."""
    return Compiled(_kernel(name, None, p, backend, chip), p.grid(1), p.threads, p, backend, SPECS[name].signature)


@functools.lru_cache(maxsize=256)
def _kernel(name: str, M: int, p: RowPlan, backend: str, chip: str, extra: tuple = ()):
    """Kernel ``name`` (a builder of ``forward`` or ``backward``) for M rows of plan ``p``
    (None: any M), compiled for ``backend``; ``extra``: more (keyword, value) pairs its
    builder takes. Every compile goes through here (tests count them: ``cache_info``)."""
    if backend == "interpreter":
        kernels = api.compile(_built(name, M, p, chip, extra), backend="interpreter")
    else:
        text = _text(name, M, p, chip, extra)
        kernels = api.compile(text, Options(chip=chip), backend="cuda")
        cache.remember(_name(name, M, p, chip, extra), text)
    return kernels[name]


def _name(name: str, M: int, p: RowPlan, chip: str, extra: tuple = ()) -> str:
    """What the compile cache remembers the kernel's text by (``cache.remember``)."""
    more = "".join(f" {key}={value}" for key, value in extra)
    return f"tile_mlir.kernels.{name} {'?' if M is None else M}x{p.N} {p.dtype} {p.label()}{more} {chip}"


@functools.lru_cache(maxsize=256)
def _text(name: str, M: int, p: RowPlan, chip: str, extra: tuple = ()) -> str:
    try:
        return _built(name, M, p, chip, extra).operation.get_asm(enable_debug_info=True)
    except ImportError as e:  # no MLIR here: the text the cache remembers
        text = cache.recall(_name(name, M, p, chip, extra))
        if text is None:
            raise BindingsTooOld(
                f"building kernel {name} for {M}x{p.N} {p.dtype} ({p.label()}) needs the MLIR Python bindings ({e}),"
                f" and the compile cache at {cache.cache_dir()} does not have it: make it where MLIR is, with"
                " python -m tile_mlir.testing.prepare (or benchmarks.prepare), and copy the cache here") from e
        return text


def _built(name: str, M: int, p: RowPlan, chip: str, extra: tuple = ()):
    """The module of kernel ``name``: a builder of the module its spec names, else of
    ``forward`` or ``backward`` (needs MLIR)."""
    spec = SPECS.get(name)
    for module in (spec.module,) if spec is not None else ("forward", "backward"):
        builders = importlib.import_module(f".{module}", __package__).BUILDERS
        if name in builders:
            return builders[name](p, M, chip, **dict(extra)).module
    raise OptionError(f"no kernel named {name!r}")


# --- arrays -----------------------------------------------------------------------------


def rows_of(name: str, x) -> tuple[bool, str, int, int]:
    """(whether x is a torch tensor, its dtype, M rows, N columns) of kernel ``name``'s
    array x of shape (..., N); a LaunchError or OptionError names what is wrong."""
    if getattr(x, "ndim", 0) < 1:
        raise LaunchError(f"{name} needs an array of at least one dim, got {_summary(x)}")
    torch_in = _is_torch(x)
    dtype = _torch_dtype(x) if torch_in else _numpy_dtype(np.asarray(x))
    N, M = x.shape[-1], math.prod(x.shape[:-1])
    if N < 1:
        raise OptionError(f"{name} needs rows of at least one column, got shape {tuple(x.shape)}")
    return torch_in, dtype, M, N


def run(name: str, x, *params, eps: float | None = None, backend: str = "auto", **overrides) -> tuple:
    """Run kernel ``name`` on x (..., N) and its per-column ``params`` (N each); return
    its outputs (``SPECS[name].outputs``): arrays of x's kind (numpy, or torch on x's
    device), the rows' of x's shape and dtype, one value per row of x's leading shape
    (in x's dtype, or f32 for a statistic)."""
    if type(x) in _PLAIN and backend == "auto" and not overrides and api.choose_backend(backend) == "cuda":
        fast = _FAST.get((name, x.shape, x.dtype))
        if fast is not None:
            out = fast.run(x, params, eps)
            if out is not None:
                return out
    spec = _spec(name)
    if spec.module != "forward":
        raise LaunchError(f"{name} is not run by run(): call tile_mlir.kernels.{name}")
    wanted = (*spec.rows_params, *spec.params)
    if len(params) != len(wanted):
        raise LaunchError(f"{name} takes x and {len(wanted)} more array(s) {wanted}, got {len(params)}")
    torch_in, dtype, M, N = rows_of(name, x)
    for a, what in zip(params, spec.rows_params):
        if tuple(getattr(a, "shape", ())) != tuple(x.shape):
            raise LaunchError(f"{name}: {what} must have x's shape {tuple(x.shape)}, got {_summary(a)}")
    scalars = (float(spec.eps if eps is None else eps),) if spec.eps is not None else ()
    backend = api.choose_backend(backend)
    if torch_in and x.is_cuda and backend == "cuda":
        return _on_device(spec, x, params, scalars, M, N, dtype, overrides)
    host = [_host(spec, a, dtype) for a in (x, *params)]
    outs = [np.empty((M, N) if role == "rows" else (M,), np.float32 if role == "stat" else host[0].dtype)
            for _, role in spec.outputs]
    if M:
        c = compiled(name, M, N, dtype, backend=backend, **overrides)
        rows_in = len(spec.rows_params)
        inputs = [h.reshape(M, N) for h in host[: 1 + rows_in]] + [_param(spec, a, N) for a in host[1 + rows_in:]]
        c.kernel.launch(c.grid, c.block, *inputs, *outs, *scalars, M, shared_mem=c.plan.shared_bytes)
    outs = [o.reshape(_shape(x, role)) for o, (_, role) in zip(outs, spec.outputs)]
    if torch_in:
        return tuple(_to_torch(o, x) for o in outs)
    return tuple(outs)


def _shape(x, role: str) -> tuple:
    return tuple(x.shape) if role == "rows" else tuple(x.shape[:-1])


def _on_device(spec: Kernel, x, params, scalars, M, N, dtype, overrides) -> tuple:
    """Launch on torch CUDA tensors, on torch's current stream: the per-call path, kept
    short (issue 19: no view of a 2-D x, outputs made as x's, the stream read raw)."""
    torch = sys.modules["torch"]  # x is a torch tensor: torch is imported
    _PLAIN.update((torch.Tensor, torch.nn.Parameter))
    for a in params:
        if not (_is_torch(a) and a.is_cuda and a.dtype == x.dtype):
            names = ", ".join((*spec.rows_params, *spec.params))
            raise LaunchError(f"{spec.name}: with a CUDA x, {names} must be CUDA tensors of {x.dtype},"
                              f" got {_summary(a)}")
    shape = x.shape
    flat = len(shape) == 2  # (M, N) already: no views
    x = x.contiguous() if flat else x.reshape(M, N).contiguous()
    outs = [torch.empty_like(x) if role == "rows" else
            x.new_empty((M,), dtype=torch.float32 if role == "stat" else x.dtype) for _, role in spec.outputs]
    if M:
        c = _compiled_for(spec.name, M, N, dtype, "cuda", DEFAULT_CHIP, tuple(sorted(overrides.items())))
        rows_in = len(spec.rows_params)
        inputs = [x, *(a.contiguous() if flat else a.reshape(M, N).contiguous() for a in params[:rows_in]),
                  *(_param(spec, a.contiguous(), N) for a in params[rows_in:])]
        c.kernel.launch(c.grid, c.block, *inputs, *outs, *scalars, M, shared_mem=c.plan.shared_bytes,
                        stream=torch_stream(x.get_device()))
        if not overrides and hasattr(c.kernel, "launch_trusted") and not c.plan.S:  # its path has no shared_mem
            _FAST[(spec.name, shape, x.dtype)] = _Fast(spec, c, shape, torch, x.device)
    if flat:
        return tuple(outs)
    return tuple(o.view(shape if role == "rows" else shape[:-1]) for o, (_, role) in zip(outs, spec.outputs))


# The per-call path of torch CUDA tensors (issue 19: the host's cost of a call). After a
# first call of a kernel on a shape went the whole way (``_on_device``: every check, the
# plan, the compile), the same call on a tensor of that shape and dtype finds its kernel
# and grid here, checks what can differ between calls (the tensors' device, layout,
# alignment and the params' dtype and shape), makes the outputs and launches
# (``CudaKernel.launch_trusted``). Whatever it does not take goes the whole way.
_FAST: dict = {}  # (kernel name, x's shape, x's torch dtype) -> _Fast
_PLAIN: set = set()  # torch.Tensor and torch.nn.Parameter: exact types, never a subclass


class _Fast:
    __slots__ = ("align", "block", "device", "eps", "grid", "kernel", "M", "nparams", "nrows", "outputs", "row_shape",
                 "stat", "torch")

    def __init__(self, spec: Kernel, c: Compiled, shape, torch, device):
        self.kernel, self.grid, self.block = c.kernel, c.grid, c.block
        self.M, self.eps = math.prod(shape[:-1]), spec.eps
        self.nrows, self.nparams = len(spec.rows_params), len(spec.rows_params) + len(spec.params)
        self.outputs = tuple(role for _, role in spec.outputs)
        self.align = c.kernel.memref_align
        self.stat, self.torch, self.device = torch.float32, torch, device
        self.row_shape = None if len(shape) == 2 else shape[:-1]  # a statistic's shape, where not (M,)

    def run(self, x, params, eps):
        """The outputs, launched; None where this path does not take the call."""
        pointer = _pointer(x, self.align) if len(params) == self.nparams and x.is_cuda else None
        if pointer is None:
            return None
        values = [pointer]
        N = x.shape[-1]
        for j, a in enumerate(params):
            if not (type(a) in _PLAIN and a.dtype is x.dtype and a.is_cuda):
                return None
            if not (a.shape == x.shape if j < self.nrows else a.dim() == 1 and a.shape[0] == N):
                return None
            pointer = _pointer(a, self.align)
            if pointer is None:
                return None
            values.append(pointer)
        outs, torch = [], self.torch
        for role in self.outputs:
            out = (torch.empty_like(x) if role == "rows" else
                   torch.empty(self.M, dtype=self.stat if role == "stat" else x.dtype, device=self.device))
            outs.append(out)
            values.append(out.data_ptr())
        if self.eps is not None:
            values.append(float(self.eps if eps is None else eps))
        if self.M:
            values.append(self.M)
            self.kernel.launch_trusted(self.grid, self.block, torch_stream(0), values)
        if self.row_shape is not None:
            return tuple(o if role == "rows" else o.view(self.row_shape) for o, role in zip(outs, self.outputs))
        return tuple(outs)


def launch_tensors(kernel, grid: int, block: int, stream: int, args) -> None:
    """``kernel.launch(grid, block, *args, stream=stream)`` for torch CUDA tensors whose
    dtypes and shapes the caller has checked (or made) and Python numbers of the scalars'
    kinds: through ``CudaKernel.launch_trusted`` where every tensor is on device 0,
    contiguous and aligned as the kernel asks, else the whole launch and its checks."""
    trusted = getattr(kernel, "launch_trusted", None)
    if trusted is not None:
        values = []
        for a in args:
            value = a if type(a) is int or type(a) is float else _pointer(a, kernel.memref_align)
            if value is None:
                break
            values.append(value)
        else:
            return trusted(grid, block, stream, values)
    kernel.launch(grid, block, *args, stream=stream)


def _pointer(t, align: int) -> int | None:
    """The data pointer of torch tensor t where it is on device 0, contiguous and aligned
    to ``align`` bytes (what ``launch_trusted`` takes), else None."""
    if t.get_device() or not t.is_contiguous():
        return None
    pointer = t.data_ptr()
    return None if pointer % align else pointer


def _numpy_dtype(a: np.ndarray) -> str:
    if a.dtype == np.float32:
        return "f32"
    if a.dtype == np.uint16 or a.dtype.name == "bfloat16":
        return "bf16"
    raise LaunchError("the fused kernels take f32 or bf16 arrays (bf16 as uint16 bits or ml_dtypes.bfloat16);"
                      f" got {_summary(a)}")


def _torch_dtype(t) -> str:
    name = str(t.dtype).removeprefix("torch.")
    if name not in ("float32", "bfloat16"):
        raise LaunchError(f"the fused kernels take float32 or bfloat16 tensors; got {_summary(t)}")
    return "f32" if name == "float32" else "bf16"


def _is_torch(a) -> bool:
    return type(a).__module__.startswith("torch")


def _summary(a) -> str:
    """What an argument is, without its data: its type, shape and dtype."""
    shape, dtype = getattr(a, "shape", None), getattr(a, "dtype", None)
    if shape is None:
        return type(a).__name__
    return f"{type(a).__module__.split('.')[0]}.{type(a).__name__} of shape {tuple(shape)} and dtype {dtype}"


def _host(spec: Kernel, a, dtype: str) -> np.ndarray:
    if _is_torch(a):
        import torch

        a = a.detach().cpu().contiguous()
        a = a.view(torch.int16).numpy().view(np.uint16) if dtype == "bf16" else a.numpy()
    if not isinstance(a, np.ndarray):
        raise LaunchError(f"{spec.name}: the arrays are numpy arrays or torch tensors, got {_summary(a)}")
    a = np.ascontiguousarray(a)
    if _numpy_dtype(a) != dtype:
        raise LaunchError(f"{spec.name}: every array must have x's dtype ({dtype}); got {_summary(a)}")
    return a


def _param(spec: Kernel, a, N: int):
    if tuple(a.shape) != (N,):
        raise LaunchError(f"{spec.name}: {', '.join(spec.params)} must have shape ({N},), got {_summary(a)}")
    return a


def _to_torch(a: np.ndarray, x):
    import torch

    if a.dtype == np.uint16 or a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).to(x.device)
    return torch.from_numpy(a).to(x.device)
