"""Benchmark 5 on the GPU: the fused kernels against their peers, the copy and the pure read.

Our kernels are ``tile_mlir.kernels``'s, for ``name`` in ``KERNELS``:
``kernels.compiled(name, M, N, dtype)`` gives the kernel, its grid and its block
(``Compiled``), launched as ``kernel.bind(grid, block, x, [weight, [bias,]] y, [mean,]
[rstd,] [eps,] M)()`` (one kernel for every M, the grid M's; the norms also write their
per-row statistics, f32: 4 or 8 bytes a row that ``traffic`` does not count), and ``kernels.kernel_text(name, M, N, dtype)`` is what
``benchmarks.prepare`` compiled into the cache. For every case of ``CASES``
(``SHAPES`` x ``DTYPES`` x ``KERNELS``; bf16 in, f32 math, bf16 out), ``fused_case``

1. draws fresh ``torch.randn`` inputs (input sets that together are ~512 MB, each with
   its own output; the weight and bias once), and the float64 reference from the first;
2. checks ours and each peer of ``PEERS`` against it, each into a NaN-poisoned output (or
   on what it returns): ||y - ref|| / ||ref|| under ``TOLERANCE`` (f32: 1e-5; bf16 out:
   4e-3, twice the worst rounding of a result to bf16), no NaN. The peers: the Triton
   kernel (``triton_fused``, autotuned on its first call), torch (``torch.softmax``,
   ``F.rms_norm``, ``F.layer_norm``, ``torch.logsumexp``), ``torch.compile`` of the same
   torch expression, and Liger-Kernel (``peers``: softmax, RMSNorm, LayerNorm). A peer
   that is missing, refuses the shape or fails gets a ``status`` and no figure; a peer
   whose check fails is still timed, and its status says ``wrong``;
3. times each steady (rotating through the input sets) and L2-flushed (``do_bench``),
   as ``measure.row_case`` does; the copy (``x.copy_``, bytes read + written) and the
   pure-read kernel (``ceiling``, bytes of x) once per shape and dtype.

GB/s = bytes read + written (``traffic``: the input, the output, the weight and bias
once) / time. ``best_peer`` is the fastest peer of the case (steady), ``vs_best`` ours
against it. ``bench_fused`` runs the cases under the run's deadline. Importing this
module needs neither torch, Triton nor the fused kernels.
"""

from __future__ import annotations

import time
import traceback

from . import peers, triton_fused
from .measure import ROTATE_BYTES, copy_times, flushed, log, steady

KERNELS = ("softmax", "rmsnorm", "layernorm", "logsumexp")
TITLES = {"softmax": "softmax", "rmsnorm": "RMSNorm (with weight)", "layernorm": "LayerNorm (with weight and bias)",
          "logsumexp": "logsumexp"}
SHAPES = ((64, 262144), (16384, 1024), (4096, 4096), (4096, 16384), (1024, 65536), (16384, 1000))
PEERS = ("triton", "torch", "compile", "liger")
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


def error(y, ref) -> float:
    """||y - ref|| / ||ref|| in float64; NaN if y holds a NaN (an unwritten element)."""
    import torch

    y = y.double()
    if torch.isnan(y).any():
        return float("nan")
    return ((y - ref).norm() / ref.norm()).item()


def ours(name: str, M: int, N: int, dtype: str):
    """(kernel, grid, block, shared) of our kernel for the case, from the compile cache:
    ``shared``, the dynamic shared memory its launch gives (``shared_mem=``; a plan that
    keeps part of the row there)."""
    c = kernels().compiled(name, M, N, dtype)
    return c.kernel, c.grid, c.block, c.plan.shared_bytes


def selected(kernels=KERNELS, shapes=None, dtypes=None) -> list[tuple]:
    """The cases of ``CASES`` with a kernel of ``kernels``, a shape of ``shapes`` ((M, N)
    pairs) and a dtype of ``dtypes`` (None: all)."""
    return [c for c in CASES if c[0] in kernels and (shapes is None or (c[1], c[2]) in shapes)
            and (dtypes is None or c[3] in dtypes)]


def fused_case(name: str, M: int, N: int, dtype: str, triton_kernel, ceilings=None) -> dict:
    """One kernel, shape and dtype: ours and every peer, each checked then timed; the
    copy's and the pure read's times come from ``ceilings`` (a dict kept over the cases:
    measured here on this case's inputs the first time a shape and dtype comes). Returns
    the row of results."""
    import torch

    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    nbuf = max(2, -(-ROTATE_BYTES // (M * N * ITEMSIZE[dtype])))
    xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(nbuf)]  # fresh for every case
    params = [torch.randn(N, device="cuda", dtype=tdt) for _ in PARAMS[name]]
    ys = [torch.empty((M,) if name in PER_ROW else (M, N), device="cuda", dtype=tdt) for _ in range(nbuf)]
    eps = eps_of(name, dtype)
    ref = reference(name, xs[0], params, eps)
    row = {"kernel": name, "M": M, "N": N, "dtype": dtype, "bytes": traffic(name, M, N, dtype), "input_sets": nbuf,
           "eps": eps, "errors": {}, "status": {}}

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

    def peer(who: str, make) -> None:
        """``make()`` gives the peer's calls, one per input set, each returning its result;
        checked (a wrong result is still timed, and said), then timed. A peer that is
        missing, refuses the shape or fails is recorded in ``status``, without a figure."""
        try:
            fns = make()
            try:
                checked(who, fns[0], returns=True)
            except AssertionError as e:
                row["status"][who] = f"wrong: {e}"
            timed(who, fns)
            row["status"].setdefault(who, "ok")
        except peers.Unavailable as e:
            row["status"][who] = str(e)
        except Exception as e:  # noqa: BLE001 - one peer failing must not lose the case
            row["status"][who] = f"failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
            log(f"  {label(name, M, N, dtype)}: {who} failed\n{traceback.format_exc()}")
        torch.cuda.synchronize()

    def returning(call):
        """One call per input set; each set's result kept until that set comes round
        again, so that the outputs rotate through memory as ours do."""
        outs = [None] * nbuf

        def fn(i):
            outs[i] = call(xs[i], params)
            return outs[i]
        return [lambda i=i: fn(i) for i in range(nbuf)]

    # ours: the kernel compiled() picks, from the cache
    kern, grid, block, shared = ours(name, M, N, dtype)
    scalars = (eps,) if PARAMS[name] else ()  # the norms take eps last: (x, weight, [bias,] y, [mean,] rstd, eps)
    stats = [[torch.empty(M, device="cuda", dtype=torch.float32) for _ in STATS.get(name, ())] for _ in range(nbuf)]
    bound = [kern.bind(grid, block, xs[i], *params, ys[i], *stats[i], *scalars, M, shared_mem=shared)
             for i in range(nbuf)]
    checked("tile-mlir", bound[0])
    timed("ours", bound)
    row |= {"ours_grid": grid, "ours_block": block}

    # Triton: the first call tunes (compiling its configurations), then the check
    def triton_calls():
        tri = [lambda i=i: (triton_fused.launch(name, triton_kernel, xs[i], params, ys[i], eps), ys[i])[1]
               for i in range(nbuf)]
        t0 = time.perf_counter()
        tri[0]()
        torch.cuda.synchronize()
        row["triton_tune_s"] = time.perf_counter() - t0
        row["triton_cfg"], row["triton_candidates_us"] = triton_fused.chosen(triton_kernel)
        return tri

    peer("triton", triton_calls)
    peer("torch", lambda: returning(peers.torch_forward(name, eps)))

    def compile_calls():
        fn = peers.fresh_compile(peers.torch_forward(name, eps))
        t0 = time.perf_counter()
        fn(xs[0], params)
        torch.cuda.synchronize()
        row["compile_s"] = time.perf_counter() - t0
        return returning(fn)

    peer("compile", compile_calls)
    peer("liger", lambda: returning(peers.guarded(peers.liger_forward(name, N, eps), N)))

    key = (M, N, dtype)
    ceilings = {} if ceilings is None else ceilings
    if key not in ceilings:
        from .ceiling import read_times

        try:
            read = read_times(xs)
        except Exception as e:  # noqa: BLE001 - context only: said missing, never a figure
            read = f"missing: {type(e).__name__}: {e}"
        ceilings[key] = (*copy_times(xs), read)
    row["copy_ms"], row["copy_flushed_ms"], read = ceilings[key]
    if isinstance(read, str):
        row["read_missing"] = read
    else:
        row["read_ms"], row["read_flushed_ms"], row["read_cfg"] = read
    rates(row, M * N * ITEMSIZE[dtype])
    log(summary(row))
    return row


def rates(row: dict, x_bytes: int) -> None:
    """GB/s of ours, every timed peer (``bytes`` over its time), the copy (2 x ``x_bytes``)
    and the pure read (``x_bytes``); ours as % of the copy and x each peer, the best peer
    (the fastest timed one) and ours against it; steady and L2-flushed (``flushed`` keys)."""
    for mode in ("", "flushed_"):
        for who in ("ours", *PEERS):
            if f"{who}_{mode}ms" in row:
                row[f"{who}_{mode}GBs"] = row["bytes"] / row[f"{who}_{mode}ms"] / 1e6
        row[f"copy_{mode}GBs"] = 2 * x_bytes / row[f"copy_{mode}ms"] / 1e6
        if f"read_{mode}ms" in row:
            row[f"read_{mode}GBs"] = x_bytes / row[f"read_{mode}ms"] / 1e6
        suffix = "_flushed" if mode else ""
        row[f"pct_copy{suffix}"] = 100 * row[f"ours_{mode}GBs"] / row[f"copy_{mode}GBs"]
        timed = [who for who in PEERS if f"{who}_{mode}ms" in row]
        for who in timed:
            row[f"vs_{who}{suffix}"] = row[f"{who}_{mode}ms"] / row[f"ours_{mode}ms"]
        if timed:
            best = min(timed, key=lambda who: row[f"{who}_{mode}ms"])
            row[f"best_peer{suffix}"] = best
            row[f"vs_best{suffix}"] = row[f"vs_{best}{suffix}"]


def summary(row: dict) -> str:
    """The case's log line."""
    head = f"  {label(row['kernel'], row['M'], row['N'], row['dtype'])}: ours {row['ours_GBs']:7.0f} GB/s " \
           f"[grid {row.get('ours_grid')}, block {row.get('ours_block')}]"
    parts = []
    for who in PEERS:
        status = row["status"].get(who, "not run")
        if f"{who}_GBs" in row:
            parts.append(f"{who} {row[who + '_GBs']:7.0f}" + ("" if status == "ok" else f" ({status[:60]})"))
        else:
            parts.append(f"{who} -- ({status[:80]})")
    read = f"{row['read_GBs']:.0f}" if "read_GBs" in row else row.get("read_missing", "n/a")[:60]
    best = (f"{row['vs_best']:.3f}x best peer ({row['best_peer']})" if "vs_best" in row else "no peer timed")
    return (f"{head}  {'  '.join(parts)}  copy {row['copy_GBs']:7.0f}  read {read}  -> {row['pct_copy']:.1f}% of copy, "
            f"{best}")


def bench_fused(deadline: float | None = None, kernels=KERNELS, shapes=None, dtypes=None) -> dict:
    """Every case of ``selected(kernels, shapes, dtypes)``. No case starts that the previous
    one's time says would end after ``deadline`` seconds of the run; those are listed as
    skipped. A case that fails (our result wrong, an error) is logged and listed."""
    import torch

    log.section("5. fused kernels: softmax, RMSNorm, LayerNorm, logsumexp against Triton, torch, torch.compile, "
                "Liger (GB/s = bytes read + written / median time)")
    cases = selected(kernels, shapes, dtypes)
    out = {"kernels": list(kernels), "shapes": sorted({(M, N) for _, M, N, _ in cases}),
           "dtypes": sorted({dt for *_, dt in cases}), "rows": [], "failed": [], "skipped": [], "tolerance": TOLERANCE,
           "liger": peers.liger_version(),
           "triton_configs": {str(block): list(triton_fused.warps_for(block))
                              for block in sorted({triton_fused.next_pow2(N) for _, N in SHAPES})}}
    log(f"  Liger-Kernel: {out['liger']}")
    absent = out["absent"] = missing(kernels)
    for name, why in absent.items():
        log(f"  {name}: not run, the module does not load: {why}")
    tuners = {name: triton_fused.autotuned(name) for name in kernels if name not in absent}
    ceilings: dict[tuple, tuple] = {}
    last = 0.0
    for name, M, N, dtype in cases:
        if name not in tuners:
            continue
        if deadline is not None and log.elapsed() + last > deadline:
            out["skipped"].append({"kernel": name, "M": M, "N": N, "dtype": dtype})
            continue
        t0 = log.elapsed()
        try:
            out["rows"].append(fused_case(name, M, N, dtype, tuners[name], ceilings))
        except Exception as e:  # noqa: BLE001 - report the case and go on
            log(f"  {label(name, M, N, dtype)}: failed\n{traceback.format_exc()}")
            out["failed"].append({"kernel": name, "M": M, "N": N, "dtype": dtype, "error": f"{type(e).__name__}: {e}"})
        torch.cuda.empty_cache()
        last = log.elapsed() - t0
    if out["skipped"]:
        log(f"  skipped, as they would end past the run's {deadline:.0f} s deadline: "
            f"{', '.join(label(s['kernel'], s['M'], s['N'], s['dtype']) for s in out['skipped'])}")
    return out
