"""Benchmark 5 on the GPU: the fused kernels against Triton, torch and a copy.

Our kernels are ``tile_mlir.kernels``'s, for ``name`` in ``KERNELS``:
``kernels.compiled(name, M, N, dtype)`` gives the kernel, its grid and its block
(``Compiled``), launched as ``kernel.bind(grid, block, x, [weight, [bias,]] y, [mean,]
[rstd,] [eps])()`` (the norms also write their per-row statistics, f32: 4 or 8 bytes a row
that ``traffic`` does not count), and ``kernels.kernel_text(name, M, N, dtype)`` is what
``benchmarks.prepare`` compiled into the cache. For every case of ``CASES``
(``SHAPES`` x ``DTYPES`` x ``KERNELS``; bf16 in, f32 math, bf16 out), ``fused_case``

1. draws fresh ``torch.randn`` inputs (input sets that together are ~512 MB, each with
   its own output; the weight and bias once), and the float64 reference from the first;
2. checks ours, the Triton kernel (``triton_fused``, autotuned on its first call) and
   torch (``torch.softmax``, ``F.rms_norm``, ``F.layer_norm``, ``torch.logsumexp``)
   against it, each into a NaN-poisoned output: ||y - ref|| / ||ref|| under
   ``TOLERANCE`` (f32: 1e-5; bf16 out: 4e-3, twice the worst rounding of a result to
   bf16), no NaN;
3. times each steady (rotating through the input sets) and L2-flushed (``do_bench``),
   as ``measure.row_case`` does; the copy (``x.copy_``, bytes read + written) once per
   shape and dtype.

GB/s = bytes read + written (``traffic``: the input, the output, the weight and bias
once) / time. ``bench_fused`` runs the cases under the run's deadline. Importing this
module needs neither torch, Triton nor the fused kernels.
"""

from __future__ import annotations

import inspect
import time
import traceback

from . import triton_fused
from .measure import ROTATE_BYTES, add_rates, copy_times, flushed, log, steady

KERNELS = ("softmax", "rmsnorm", "layernorm", "logsumexp")
TITLES = {"softmax": "softmax", "rmsnorm": "RMSNorm (with weight)", "layernorm": "LayerNorm (with weight and bias)",
          "logsumexp": "logsumexp"}
SHAPES = ((16384, 1024), (4096, 4096), (4096, 16384), (1024, 65536), (16384, 1000))
DTYPES = ("f32", "bf16")
CASES = [(name, M, N, dtype) for dtype in DTYPES for M, N in SHAPES for name in KERNELS]
PARAMS = {"softmax": (), "rmsnorm": ("weight",), "layernorm": ("weight", "bias"), "logsumexp": ()}
PER_ROW = ("logsumexp",)  # one result per row; the others write an M x N output
STATS = {"rmsnorm": ("rstd",), "layernorm": ("mean", "rstd")}  # per-row f32 outputs after y
ITEMSIZE = {"f32": 4, "bf16": 2}
TOLERANCE = {"f32": 1e-5, "bf16": 4e-3}
EPS = 1e-5  # where our kernel's module does not say (``eps_of``)


def label(name: str, M: int, N: int, dtype: str) -> str:
    """The kernel's label in compile.json, sass.txt and the report."""
    return f"{name}_{dtype}_{M}x{N}"


def kernels():
    """``tile_mlir.kernels``, the fused kernels."""
    from tile_mlir import kernels as K

    return K


def missing(names=KERNELS) -> dict[str, str]:
    """The fused kernels that do not load here, with why."""
    try:
        specs = kernels().SPECS
    except Exception as e:  # noqa: BLE001 - reported, not raised
        return {name: f"{type(e).__name__}: {e}" for name in names}
    return {name: "tile_mlir.kernels has no such kernel" for name in names if name not in specs}


def kernel_text(name: str, M: int, N: int, dtype: str) -> str:
    """Our kernel's MLIR for the case: what the cache holds it by."""
    return kernels().kernel_text(name, M, N, dtype)


def remember_texts() -> None:
    """Keep every case's kernel text in the compile cache by name, where MLIR is: the GPU
    machine, which cannot build them, reads them there (``kernel_text``)."""
    absent = missing()
    for name, M, N, dtype in CASES:
        if name not in absent:
            kernels().kernel_text(name, M, N, dtype, remember=True)


def eps_of(name: str, dtype: str) -> float:
    """The epsilon our kernel adds to the variance by default (``kernels.SPECS``); torch
    and Triton get the same."""
    eps = kernels().SPECS[name].eps
    return float(eps) if eps is not None else EPS


def traffic(name: str, M: int, N: int, dtype: str) -> int:
    """Bytes a kernel must move: the input read, the output written, the weight and the
    bias read once."""
    s = ITEMSIZE[dtype]
    out = M if name in PER_ROW else M * N
    return (M * N + out + len(PARAMS[name]) * N) * s


def reference(name: str, x, params, eps: float):
    """The float64 result of kernel ``name`` on ``x`` (torch, on the GPU)."""
    import torch

    xd = x.double()
    if name == "softmax":
        return torch.softmax(xd, dim=1)
    if name == "logsumexp":
        return torch.logsumexp(xd, dim=1)
    w = params[0].double()
    if name == "rmsnorm":
        return xd * torch.rsqrt(xd.square().mean(1, keepdim=True) + eps) * w
    xc = xd - xd.mean(1, keepdim=True)
    return xc * torch.rsqrt(xc.square().mean(1, keepdim=True) + eps) * w + params[1].double()


def torch_peer(name: str, eps: float):
    """torch's call for kernel ``name``: f(x, params) -> the result."""
    import torch
    import torch.nn.functional as F

    return {"softmax": lambda x, p: torch.softmax(x, dim=-1),
            "rmsnorm": lambda x, p: F.rms_norm(x, (x.shape[1],), p[0], eps),
            "layernorm": lambda x, p: F.layer_norm(x, (x.shape[1],), p[0], p[1], eps),
            "logsumexp": lambda x, p: torch.logsumexp(x, dim=1)}[name]


def error(y, ref) -> float:
    """||y - ref|| / ||ref|| in float64; NaN if y holds a NaN (an unwritten element)."""
    import torch

    y = y.double()
    if torch.isnan(y).any():
        return float("nan")
    return ((y - ref).norm() / ref.norm()).item()


def ours(name: str, M: int, N: int, dtype: str):
    """(kernel, grid, block) of our kernel for the case, from the compile cache."""
    c = kernels().compiled(name, M, N, dtype)
    return c.kernel, c.grid, c.block


def fused_case(name: str, M: int, N: int, dtype: str, triton_kernel, copy=None) -> dict:
    """One kernel, shape and dtype: ours, Triton's ``triton_kernel`` and torch, each
    checked then timed; the copy's times are ``copy`` (ms steady, ms flushed), or measured
    here on this case's inputs when None. Returns the row of results."""
    import torch

    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    nbuf = max(2, -(-ROTATE_BYTES // (M * N * ITEMSIZE[dtype])))
    xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(nbuf)]  # fresh for every case
    params = [torch.randn(N, device="cuda", dtype=tdt) for _ in PARAMS[name]]
    ys = [torch.empty((M,) if name in PER_ROW else (M, N), device="cuda", dtype=tdt) for _ in range(nbuf)]
    eps = eps_of(name, dtype)
    ref = reference(name, xs[0], params, eps)
    row = {"kernel": name, "M": M, "N": N, "dtype": dtype, "bytes": traffic(name, M, N, dtype), "input_sets": nbuf,
           "eps": eps, "errors": {}}

    def checked(who: str, fn, returns: bool = False) -> None:
        """fn() into the poisoned ys[0] (or, with ``returns``, its result) against ref."""
        ys[0].fill_(float("nan"))
        got = fn()
        torch.cuda.synchronize()
        err = row["errors"][who] = error(got if returns else ys[0], ref)
        if not err < TOLERANCE[dtype]:
            raise AssertionError(f"{who}: wrong result ({label(name, M, N, dtype)}: error {err:.3g}, "
                                 f"tolerance {TOLERANCE[dtype]:g})")

    def timed(who: str, fns) -> None:
        row[f"{who}_ms"], row[f"{who}_flushed_ms"] = steady(fns), flushed(fns[0])

    # ours: the kernel compiled() picks, from the cache
    kern, grid, block = ours(name, M, N, dtype)
    scalars = (eps,) if PARAMS[name] else ()  # the norms take eps last: (x, weight, [bias,] y, [mean,] rstd, eps)
    stats = [[torch.empty(M, device="cuda", dtype=torch.float32) for _ in STATS.get(name, ())] for _ in range(nbuf)]
    bound = [kern.bind(grid, block, xs[i], *params, ys[i], *stats[i], *scalars) for i in range(nbuf)]
    checked("tile-mlir", bound[0])
    timed("ours", bound)
    row |= {"ours_grid": grid, "ours_block": block}

    # Triton: the first call tunes (compiling its configurations), then the check
    tri = [lambda i=i: triton_fused.launch(name, triton_kernel, xs[i], params, ys[i], eps) for i in range(nbuf)]
    t0 = time.perf_counter()
    tri[0]()
    torch.cuda.synchronize()
    row["triton_tune_s"] = time.perf_counter() - t0
    checked("triton", tri[0])
    timed("triton", tri)
    row["triton_cfg"], row["triton_candidates_us"] = triton_fused.chosen(triton_kernel)

    # torch: each input set's result kept until that set comes round again, so that its
    # outputs rotate through memory as ours do
    call, outs = torch_peer(name, eps), [None] * nbuf

    def torch_fn(i):
        outs[i] = call(xs[i], params)
        return outs[i]

    checked("torch", lambda: torch_fn(0), returns=True)
    timed("torch", [lambda i=i: torch_fn(i) for i in range(nbuf)])
    del outs[:]

    row["copy_ms"], row["copy_flushed_ms"] = copy if copy is not None else copy_times(xs)
    add_rates(row, row["bytes"], 2 * M * N * ITEMSIZE[dtype])
    log(f"  {label(name, M, N, dtype)}: ours {row['ours_GBs']:7.0f} GB/s [grid {grid}, block {block}]  "
        f"triton {row['triton_GBs']:7.0f} [{row['triton_cfg']}, tuned in {row['triton_tune_s']:.1f} s]  "
        f"torch {row['torch_GBs']:7.0f}  copy {row['copy_GBs']:7.0f}  -> {row['pct_copy']:.1f}% of copy, "
        f"{row['vs_triton']:.3f}x triton, {row['vs_torch']:.3f}x torch  | L2 flushed: ours {row['ours_flushed_GBs']:.0f} "
        f"triton {row['triton_flushed_GBs']:.0f} torch {row['torch_flushed_GBs']:.0f} copy {row['copy_flushed_GBs']:.0f}")
    return row


def bench_fused(deadline: float | None = None, kernels=KERNELS) -> dict:
    """Every case of ``CASES`` whose kernel is in ``kernels``. No case starts that the
    previous one's time says would end after ``deadline`` seconds of the run; those are
    listed as skipped. A case that fails (a wrong result, an error) is logged and listed."""
    import torch

    log.section("5. fused kernels: softmax, RMSNorm, LayerNorm, logsumexp (GB/s = bytes read + written / median time)")
    out = {"kernels": list(kernels), "rows": [], "failed": [], "skipped": [], "tolerance": TOLERANCE,
           "triton_configs": {str(block): list(triton_fused.warps_for(block))
                              for block in sorted({triton_fused.next_pow2(N) for _, N in SHAPES})}}
    absent = out["absent"] = missing(kernels)
    for name, why in absent.items():
        log(f"  {name}: not run, the module does not load: {why}")
    tuners = {name: triton_fused.autotuned(name) for name in kernels if name not in absent}
    copies: dict[tuple, tuple[float, float]] = {}
    last = 0.0
    for name, M, N, dtype in CASES:
        if name not in tuners:
            continue
        if deadline is not None and log.elapsed() + last > deadline:
            out["skipped"].append({"kernel": name, "M": M, "N": N, "dtype": dtype})
            continue
        t0 = log.elapsed()
        try:
            row = fused_case(name, M, N, dtype, tuners[name], copies.get((M, N, dtype)))
            copies.setdefault((M, N, dtype), (row["copy_ms"], row["copy_flushed_ms"]))
            out["rows"].append(row)
        except Exception as e:  # noqa: BLE001 - report the case and go on
            log(f"  {label(name, M, N, dtype)}: failed\n{traceback.format_exc()}")
            out["failed"].append({"kernel": name, "M": M, "N": N, "dtype": dtype, "error": f"{type(e).__name__}: {e}"})
        torch.cuda.empty_cache()
        last = log.elapsed() - t0
    if out["skipped"]:
        log(f"  skipped, as they would end past the run's {deadline:.0f} s deadline: "
            f"{', '.join(label(s['kernel'], s['M'], s['N'], s['dtype']) for s in out['skipped'])}")
    return out
