"""The backward passes on arrays: ``softmax_backward``, ``logsumexp_backward``,
``rmsnorm_backward``, ``layernorm_backward`` (what ``K.softmax_backward`` and its
siblings call), and ``compiled_backward`` for benchmarks.

Each runs the row kernel of ``tile_mlir.kernels.backward`` (dX, on the forward's row
plan) and, for the norms, ``column_sums`` over the partial rows it writes (dW, dB), as
``library.run`` runs a forward: numpy arrays (f32, or bf16 as ``uint16`` bits or
``ml_dtypes.bfloat16``) through copies or in the interpreter, torch CUDA tensors by
pointer on torch's current stream (zero copy), torch CPU tensors through numpy. The
arrays' roles: ``rows`` (..., N, x's dtype), ``row`` (one value per row, x's dtype),
``cols`` (N, x's dtype), ``stat`` (one f32 per row).

Each kernel is compiled once per (name, N, dtype, plan), whatever M: the row count is its
last argument (``rows``) and the grid is M's. The norms' row kernel runs on ``ctas`` CTAs,
whole clusters where the plan splits a row over CL CTAs (``default_ctas``:
``CTAS_PER_SM`` per SM of an H200, one where a CTA is 1024 threads, at most one cluster
per row group), a launch parameter too (the kernel strides its row groups by the grid's
clusters; the partial rows' count, ``partial_rows(ctas, plan)``, is its argument
``partial_rows``, and the column sums' last, ``P``); the partial rows, so the bits of dW
and dB, depend on it and on nothing else: the same inputs and ``ctas`` give the same bits
on every run (docs/training-kernels.md).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from .. import api
from ..arrays import torch_stream
from ..errors import LaunchError, OptionError
from ..vocab import DEFAULT_CHIP, DTYPE_BYTES, MAX_CLUSTER_CTAS, WARP_SIZE
from . import library
from .library import _PLAIN, Compiled, _host, _is_torch, _pointer, _summary, _to_torch, launch_tensors, rows_of
from .plan import TABLES, RowPlan, measured_plan, plan, registers_table

__all__ = ["BACKWARD", "BACKWARD_ELEMENTS", "BACKWARD_TABLES", "CTAS_PER_SM", "SMS", "Sums", "backward_plan",
           "column_sums_grid", "compiled_backward", "default_ctas", "partial_rows", "run_backward", "text_backward"]

SMS = 132  # the H200's streaming multiprocessors
CTAS_PER_SM = 2  # of up to 512 threads; one of 1024 (it holds the SM's registers)

# The column sums' CTA (``backward.column_sums``): each thread SUM_V f32 columns,
# SUM_ROWS partial rows loaded at once (their adds in order): 32 loads in flight per
# thread, so a chain of S partial rows takes S / 32 round trips to memory. A CTA's warps
# lie over its columns (``Sums.column_warps``) and over the partial rows
# (``Sums.row_warps``: each sums its own segment, docs/training-kernels.md); the grid
# aims at SUM_GRID_WARPS warps in all, with at most SUM_MAX_WARPS a CTA.
SUM_WARPS, SUM_V, SUM_ROWS = 4, 1, 32
SUM_MAX_WARPS = 16  # 512 threads: 128 registers a thread (two arrays take 64 for their tiles)
SUM_GRID_WARPS = 16 * SMS


@dataclass(frozen=True)
class Sums:
    """The column sums' shape over N columns: ``column_warps`` warps side by side over a
    CTA's columns (SUM_V a thread), ``row_warps`` over the partial rows (each its own
    segment of them), warp w of the CTA at column warp w mod column_warps and row warp
    w // column_warps."""

    N: int
    column_warps: int
    row_warps: int

    @property
    def columns(self) -> int:
        """The columns of a CTA."""
        return self.column_warps * WARP_SIZE * SUM_V

    @property
    def grid(self) -> int:
        return -(-self.N // self.columns)

    @property
    def threads(self) -> int:
        return self.column_warps * self.row_warps * WARP_SIZE

    def segment(self, P: int) -> int:
        """The partial rows of each row warp's segment: P split in ``row_warps`` runs of
        whole SUM_ROWS (the last ones short, or empty, where P is short)."""
        return -(-P // (self.row_warps * SUM_ROWS)) * SUM_ROWS


def column_sums_grid(N: int) -> Sums:
    """The column sums' shape over N columns: row warps, the largest power of two up to
    SUM_MAX_WARPS that keeps the grid's warps (one warp of columns per 32 · SUM_V
    columns, times the row warps) within SUM_GRID_WARPS; SUM_WARPS warps a CTA where
    they fit over the columns (row warps 1 over 4 column warps: long rows keep one
    chain per column), else 1 column warp."""
    warp_columns = -(-N // (WARP_SIZE * SUM_V))
    row_warps = 1
    while row_warps < SUM_MAX_WARPS and warp_columns * row_warps * 2 <= SUM_GRID_WARPS:
        row_warps *= 2
    return Sums(N, max(1, SUM_WARPS // row_warps), row_warps)


@dataclass(frozen=True)
class Backward:
    """A backward kernel: its inputs as (name, role), the forward whose plan it takes, and
    how many column sums it ends with (0; 1: dW; 2: dW and dB); ``searched``: whose
    measured plans it takes, if not its own (``add_rmsnorm_backward``: RMSNorm's)."""

    name: str
    forward: str
    inputs: tuple[tuple[str, str], ...]
    sums: int = 0
    searched: str = ""  # the measured table's name for its plans, if not its own

    @property
    def plans(self) -> str:
        return self.searched or self.name

    @property
    def signature(self) -> str:
        partials = [*("dw_partials", "db_partials")[: self.sums], *(("partial_rows",) if self.sums else ())]
        return f"{self.name}({', '.join([*(n for n, _ in self.inputs), 'dx', *partials, 'rows'])})"


BACKWARD = {
    "softmax_backward": Backward("softmax_backward", "softmax", (("y", "rows"), ("dy", "rows"))),
    "logsumexp_backward": Backward("logsumexp_backward", "logsumexp", (("x", "rows"), ("l", "row"), ("dl", "row"))),
    "rmsnorm_backward": Backward("rmsnorm_backward", "rmsnorm",
                                 (("dy", "rows"), ("x", "rows"), ("weight", "cols"), ("rstd", "stat")), 1),
    "add_rmsnorm_backward": Backward("add_rmsnorm_backward", "rmsnorm",
                                     (("dy", "rows"), ("dh", "rows"), ("x", "rows"), ("weight", "cols"),
                                      ("rstd", "stat")), 1, searched="rmsnorm_backward"),
    "layernorm_backward": Backward("layernorm_backward", "layernorm",
                                   (("dy", "rows"), ("x", "rows"), ("weight", "cols"), ("mean", "stat"),
                                    ("rstd", "stat")), 2),
}


def default_ctas(M: int, p: RowPlan) -> int:
    """The persistent grid: CTAS_PER_SM CTAs per SM (one of 1024 threads), in whole
    clusters of the plan's CL CTAs (at least one), at most one cluster per group of R rows."""
    per_sm = 1 if p.threads >= 1024 else CTAS_PER_SM
    return p.CL * max(1, min(SMS * per_sm // p.CL, -(-M // p.R)))


def partial_rows(ctas: int, p: RowPlan) -> int:
    """The partial rows of a persistent grid of ``ctas`` CTAs: R per cluster of CL."""
    return ctas // p.CL * p.R


# A backward keeps more tiles of its row part than the forward (the norms: x, dy, w and
# f32 accumulators), so where the forward splits a row over a cluster, the backward takes
# a cluster large enough that a thread keeps at most BACKWARD_ELEMENTS of the row (half
# that in a CTA of 1024 threads: 8, 64 registers a thread), whatever the dtype: the
# cluster tiers of these tables, where they hold the row (no spill at 1024 x 65536 by
# ptxas: docs/training-kernels.md). Longer rows take the largest cluster, 16 CTAs.
BACKWARD_ELEMENTS = 16
BACKWARD_TABLES = {dtype: registers_table(dtype, data_bytes=BACKWARD_ELEMENTS * DTYPE_BYTES[dtype])
                   for dtype in ("f32", "bf16")}


def backward_plan(name: str, M: int, N: int, dtype: str = "f32", *, prefetch: bool | None = None,
                  cluster: int | None = None, **overrides) -> RowPlan:
    """The row plan of backward ``name``: its forward's (with ``overrides``), one CTA or
    a cluster of CL CTAs per row, up to the plan table's longest row (``plan`` refuses a
    longer one); where that is a cluster and nothing is forced, the cluster of
    ``BACKWARD_TABLES`` if that holds the row, else one of MAX_CLUSTER_CTAS. ``prefetch``
    (the norms' persistent loop loads its next row before it reduces this one:
    ``RowPlan.prefetch``; None: the measured table's choice, else on a cluster where the
    tiles fit, ``_prefetch_fits``) is the norms' alone. ``cluster`` forces
    the CTAs a row (``plan``'s ``ctas``: the backward calls' ``ctas`` is the norms'
    persistent grid)."""
    spec = _spec(name)
    if cluster is not None:
        if "ctas" in overrides:
            raise OptionError("give the CTAs a row as cluster=, not both cluster= and ctas=")
        overrides["ctas"] = cluster
    if prefetch is not None and not isinstance(prefetch, bool):
        raise OptionError(f"prefetch must be True, False or None, got {prefetch!r}")
    if prefetch and not spec.sums:
        raise OptionError(f"prefetch is for the norms' persistent row loops; {name} runs a CTA (or cluster) a row")
    p = _backward_plan(spec, M, N, dtype, **overrides)
    if not spec.sums:
        return p
    if prefetch is not None:
        return replace(p, prefetch=prefetch, why=f"{p.why}; forced: prefetch = {prefetch}")
    fits = _prefetch_fits(p, spec)
    if p.prefetch is not None and not (p.prefetch and spec.searched and not fits):
        return p  # the measured table's choice (another kernel's: where its tiles fit)
    on = p.CL > 1 and fits
    return replace(p, prefetch=on, why=p.why + ("; the next row loaded early" if on else ""))


# The registers a norm backward's thread keeps beside its row's tiles (addresses, indices,
# the loop's state): ptxas gave the prefetching RMSNorm backward of 8 f32 a thread 64
# registers, with no spill (1024 x 65536, a cluster of 8 CTAs of 1024 threads).
BACKWARD_OTHER_REGISTERS = 24


def _prefetch_fits(p: RowPlan, spec: Backward) -> bool:
    """Whether the next row's x and dy fit in a thread's registers beside this row's
    tiles: its rows (x, dy; dh for ``add_rmsnorm_backward``), the two prefetched, and
    the f32 accumulators (one a column sum), E registers each (bf16 held widened, as ptxas
    keeps it), within ``max_registers`` less ``BACKWARD_OTHER_REGISTERS``.

    Where the measured table does not say (``benchmarks.plan_search``), a norm backward
    loads its next row early on a cluster a row where this holds: there every row waits
    on an exchange between the CTAs, and the H200 measured 1.02-1.40x at 1024 x 65536
    (``benchmarks.backward_prefetch``). With a CTA a row the second set of tiles costs
    registers its plans lack (0.47-0.99x there, with spills); the table decides those, plan
    by plan, and for ``add_rmsnorm_backward`` (on RMSNorm's plans, one tile more) only
    where this holds too."""
    rows = sum(1 for _, role in spec.inputs if role == "rows")
    return (rows + 2 + spec.sums) * p.E <= p.max_registers - BACKWARD_OTHER_REGISTERS


def _backward_plan(spec: Backward, M: int, N: int, dtype: str, **overrides) -> RowPlan:
    """``backward_plan`` but for ``prefetch``."""
    name = spec.name
    forward = spec.forward
    if not overrides:  # the measured search of the backward (benchmarks.plan_search), where it covers N
        chosen = measured_plan(forward, N, dtype, searched=spec.plans)
        if chosen is not None and spec.searched and chosen.O > 1:
            # another kernel's plan: its occupancy demand caps the registers at what that
            # kernel needs (ptxas then spilled add_rmsnorm_backward's one more tile)
            return replace(chosen, ctas_per_sm=1, why=f"backward, {spec.searched}'s plan without its demand of"
                                                      f" {chosen.O} CTAs an SM: {chosen.why}")
        if chosen is not None:
            return replace(chosen, why=f"backward: {chosen.why}")
    # the forward's registers table, not its measured plans (measured on the forwards), one
    # row per CTA for several warps a row: two rows a CTA (the bf16 tier of 8193..16384)
    # spilled 48-604 bytes here
    table_f = TABLES.get((forward, dtype), TABLES[dtype])
    # shared=0: the backward kernels keep their rows in registers only
    p = plan(M, N, dtype, forward, **{"shared": 0, **overrides}) if overrides else plan(M, N, dtype, table=table_f,
                                                                                         shared=0)
    if p.kind == "warps" and p.R > 1 and not overrides:
        q = plan(M, N, dtype, rows=1, warps=p.W, table=table_f)
        p = replace(q, why=f"backward, one row per CTA ({p.R} spill here): {p.why}")
    table = BACKWARD_TABLES[dtype]
    if p.CL == 1 or overrides:
        return p
    if N <= table.longest:
        q = plan(M, N, dtype, table=table)
        return replace(q, why=f"backward, at most {table.elements(q.threads)} elements a thread: {q.why}")
    q = plan(M, N, dtype, forward, ctas=MAX_CLUSTER_CTAS, shared=0)
    return replace(q, why=f"backward: N = {N} is longer than a cluster of {BACKWARD_ELEMENTS // 2}-element threads"
                          f" holds ({table.longest}), so the largest cluster, {MAX_CLUSTER_CTAS} CTAs")


def _ctas(M: int, p: RowPlan, ctas) -> int:
    """The persistent grid's CTAs: ``ctas``, or ``default_ctas``; whole clusters."""
    G = default_ctas(M, p) if ctas is None else ctas
    if not isinstance(G, int) or isinstance(G, bool) or G < 1 or G % p.CL:
        raise OptionError(f"ctas must be a positive int, a multiple of the plan's {p.CL} CTA(s) per row"
                          f" ({p.label()}), got {G!r}")
    return G


def compiled_backward(name: str, M: int, N: int, dtype: str = "f32", *, backend: str = "auto",
                      chip: str = DEFAULT_CHIP, ctas: int | None = None, **overrides):
    """(the row kernel, the column sums or None), each a ``Compiled``: the row kernel's
    arguments ``BACKWARD[name].signature`` (partials: ``partial_rows(ctas, plan)`` × N
    f32, then that count and M), the column sums' ``(dw_partials[, db_partials], dw[, db],
    P)`` (P: that count). Each kernel is compiled once for every M and ctas; the grids
    are theirs. Remembered for each shape: a call with a shape seen before costs a
    dictionary lookup (the plan is not looked for again)."""
    key = (_spec(name), M, N, dtype, api.choose_backend(backend), chip, ctas, tuple(sorted(overrides.items())))
    if ctas is None or type(ctas) is int:
        return _compiled_backward(*key)
    return _compiled_backward.__wrapped__(*key)  # not a key: _ctas says what is wrong with it


@functools.lru_cache(maxsize=1024)
def _compiled_backward(spec: Backward, M: int, N: int, dtype: str, backend: str, chip: str, ctas, overrides: tuple):
    name, p = spec.name, backward_plan(spec.name, M, N, dtype, **dict(overrides))
    if not spec.sums:
        return Compiled(library._kernel(name, None, p, backend, chip), p.grid(M), p.threads, p, backend,
                        spec.signature), None
    G = _ctas(M, p, ctas)
    rows = library._kernel(name, None, p, backend, chip)
    if ctas is None and p.CL > 1 and backend == "cuda":
        # no more clusters than the GPU holds at once: one over it runs alone in a second
        # wave (the H200 holds 15 clusters of 8 such CTAs, not 132 / 8 = 16: 1.45x the time)
        most = rows.max_active_clusters(p.threads)
        if most:
            G = min(G, most * p.CL)
    elif ctas is None and backend == "cuda" and p.R == 1:
        # one CTA a row: one full wave, as many CTAs as the SMs hold at once by the kernel's
        # registers (cuOccupancyMaxActiveBlocksPerMultiprocessor), not a fixed 2 an SM:
        # 512-thread bf16 CTAs of 128 registers fit one an SM, and 264 of them ran in two
        # waves, 4-8% slower (benchmarks.backward_grid, docs/training-kernels.md). Not for
        # plans of several one-warp rows a CTA (short rows): there a full wave is many
        # times the partial rows (4096 x 512: 4096, not 1056), and it was not measured.
        most = rows.max_active_blocks(p.threads)
        if most:
            G = max(1, min(SMS * most, -(-M // p.R)))
    sums = library._kernel("column_sums", None, p, backend, chip, (("arrays", spec.sums),))
    shape = column_sums_grid(N)
    outs = ", ".join([*("dw_partials", "db_partials")[: spec.sums], *("dw", "db")[: spec.sums], "P"])
    return (Compiled(rows, G, p.threads, p, backend, spec.signature),
            Compiled(sums, shape.grid, shape.threads, p, backend, f"column_sums({outs})"))


def text_backward(name: str, M: int, N: int, dtype: str = "f32", *, chip: str = DEFAULT_CHIP,
                  remember: bool = False, ctas: int | None = None, **overrides) -> list[str]:
    """The MLIR of the kernels ``compiled_backward`` compiles (what prepare compiles ahead;
    with ``remember`` the compile cache remembers each by name, for a GPU without MLIR):
    the same for every M and ``ctas`` (taken for ``compiled_backward``'s signature)."""
    spec = _spec(name)
    p = backward_plan(name, M, N, dtype, **overrides)
    keys = [(name, None, ())]
    if spec.sums:
        keys.append(("column_sums", None, (("arrays", spec.sums),)))
    texts = []
    for kernel, rows, extra in keys:
        texts.append(library._text(kernel, rows, p, chip, extra))
        if remember:
            library.cache.remember(library._name(kernel, rows, p, chip, extra), texts[-1])
    return texts


def run_backward(name: str, *arrays, backend: str = "auto", ctas: int | None = None, **overrides):
    """Run backward ``name`` on its arrays (``BACKWARD[name].inputs``); return dx, or
    (dx, dw), or (dx, dw, db): arrays of the first array's kind, dtype and shape (dw, db:
    (N,))."""
    if backend == "auto" and ctas is None and not overrides and arrays and type(arrays[0]) in _PLAIN:
        fast = _FAST.get((name, arrays[0].shape, arrays[0].dtype))
        if fast is not None and api.choose_backend(backend) == "cuda":
            out = fast.run(arrays)
            if out is not None:
                return out
    spec = _spec(name)
    if len(arrays) != len(spec.inputs):
        names = ", ".join(n for n, _ in spec.inputs)
        raise LaunchError(f"{name} takes {len(spec.inputs)} arrays ({names}), got {len(arrays)}")
    x = arrays[0]
    torch_in, dtype, M, N = rows_of(name, x)
    for a, (arg, role) in zip(arrays, spec.inputs):
        want = {"rows": tuple(x.shape), "cols": (N,)}.get(role, tuple(x.shape[:-1]))
        if tuple(getattr(a, "shape", ())) != want:
            raise LaunchError(f"{name}: {arg} must have shape {want}, got {_summary(a)}")
    backend = api.choose_backend(backend)
    if torch_in and x.is_cuda and backend == "cuda":
        return _on_device(spec, arrays, M, N, dtype, ctas, overrides)
    host = [_host(spec, a, "f32" if role == "stat" else dtype) for a, (_, role) in zip(arrays, spec.inputs)]
    dx = np.empty((M, N), host[0].dtype)
    sums = [np.zeros(N, host[0].dtype) for _ in range(spec.sums)]
    if M:
        rows, total = compiled_backward(name, M, N, dtype, backend=backend, ctas=ctas, **overrides)
        flat = [a.reshape(M, N) if role == "rows" else a.reshape(-1) for a, (_, role) in zip(host, spec.inputs)]
        P = partial_rows(rows.grid, rows.plan)
        partials = [np.empty((P, N), np.float32) for _ in sums]
        rows.kernel.launch(rows.grid, rows.block, *flat, dx, *partials, *((P,) if sums else ()), M)
        if total is not None:
            total.kernel.launch(total.grid, total.block, *partials, *sums, P)
    outs = [dx.reshape(x.shape), *sums]
    if torch_in:
        outs = [_to_torch(o, x) for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _on_device(spec: Backward, arrays, M, N, dtype, ctas, overrides):
    import torch

    x = arrays[0]
    for a, (arg, role) in zip(arrays, spec.inputs):
        want = torch.float32 if role == "stat" else x.dtype
        if not (_is_torch(a) and a.is_cuda and a.dtype == want):
            raise LaunchError(f"{spec.name}: with a CUDA {spec.inputs[0][0]}, {arg} must be a CUDA tensor of {want},"
                              f" got {_summary(a)}")
    dx = torch.empty_like(x, memory_format=torch.contiguous_format)
    make = torch.empty if M else torch.zeros  # the column sums write every column; no rows: 0
    sums = [make(N, dtype=x.dtype, device=x.device) for _ in range(spec.sums)]
    if M:
        rows, total = compiled_backward(spec.name, M, N, dtype, backend="cuda", ctas=ctas, **overrides)
        flat = [_flat(a.contiguous(), (M, N) if role == "rows" else (-1,), 2 if role == "rows" else 1)
                for a, (_, role) in zip(arrays, spec.inputs)]
        P = partial_rows(rows.grid, rows.plan)
        partials = [x.new_empty((P, N), dtype=torch.float32) for _ in sums]
        stream = torch_stream(x.get_device())
        # checked above (dtypes, shapes), made contiguous, or made here
        args = (*flat, _flat(dx, (M, N), 2), *partials, *((P,) if sums else ()), M)
        launch_tensors(rows.kernel, rows.grid, rows.block, stream, args)
        if total is not None:
            launch_tensors(total.kernel, total.grid, total.block, stream, (*partials, *sums, P))
        if ctas is None and not overrides and all(hasattr(c.kernel, "launch_trusted") for c in (rows, total) if c):
            _PLAIN.update((torch.Tensor, torch.nn.Parameter))
            _FAST[(spec.name, x.shape, x.dtype)] = _Fast(spec, rows, total, x, torch)
    return dx if not sums else (dx, *sums)


# The per-call path of torch CUDA tensors (issue 19: the host's cost of a call), as
# ``library``'s for the forwards: after a first call of a backward on a shape went the
# whole way (``_on_device``: every check, the plan, the compile, the grid), the same call
# on tensors of that shape and dtype finds its two kernels, grids and partial rows here,
# checks what can differ between calls (each tensor's exact type, device, dtype, shape,
# layout and alignment), makes the outputs and launches both (``launch_trusted``).
# Whatever it does not take goes the whole way.
_FAST: dict = {}  # (backward name, x's shape, x's torch dtype) -> _Fast; _PLAIN: library's (exact types)


class _Fast:
    __slots__ = ("P", "align", "device", "f32", "M", "N", "rows", "shapes", "sums", "torch", "total", "want")

    def __init__(self, spec: Backward, rows: Compiled, total, x, torch):
        self.rows, self.total, self.torch, self.device = rows, total, torch, x.device
        self.M, self.N, self.sums, self.f32 = math.prod(x.shape[:-1]), x.shape[-1], spec.sums, torch.float32
        self.P = partial_rows(rows.grid, rows.plan) if spec.sums else 0
        self.align = max(c.kernel.memref_align for c in (rows, total) if c is not None)
        # per input: its shape and whether it is a statistic (f32) or of x's dtype
        self.shapes = tuple({"rows": x.shape, "cols": (self.N,)}.get(role, x.shape[:-1]) for _, role in spec.inputs)
        self.want = tuple(role == "stat" for _, role in spec.inputs)

    def run(self, arrays):
        """dx (and the column sums), launched; None where this path does not take the call."""
        if len(arrays) != len(self.shapes):
            return None
        dtype, values = arrays[0].dtype, []
        for a, shape, stat in zip(arrays, self.shapes, self.want):
            if not (type(a) in _PLAIN and a.is_cuda and a.dtype is (self.f32 if stat else dtype) and a.shape == shape):
                return None
            pointer = _pointer(a, self.align)
            if pointer is None:
                return None
            values.append(pointer)
        torch = self.torch
        dx = torch.empty_like(arrays[0])
        sums = [torch.empty(self.N, dtype=dtype, device=self.device) for _ in range(self.sums)]
        partials = [torch.empty((self.P, self.N), dtype=self.f32, device=self.device) for _ in sums]
        values.append(dx.data_ptr())
        values += [p.data_ptr() for p in partials]
        if sums:
            values.append(self.P)
        values.append(self.M)
        stream, rows = torch_stream(0), self.rows
        rows.kernel.launch_trusted(rows.grid, rows.block, stream, values)
        if sums:
            total = self.total
            total.kernel.launch_trusted(total.grid, total.block, stream,
                                        [*(p.data_ptr() for p in partials), *(t.data_ptr() for t in sums), self.P])
            return (dx, *sums)
        return dx


def _flat(a, shape: tuple, dims: int):
    """``a.view(shape)``, or ``a`` itself where it has ``dims`` dims already (a view costs
    about a µs on the host)."""
    return a if a.dim() == dims else a.view(shape)


def _spec(name: str) -> Backward:
    if name not in BACKWARD:
        raise OptionError(f"backward kernel must be one of {', '.join(BACKWARD)}, got {name!r}")
    return BACKWARD[name]
