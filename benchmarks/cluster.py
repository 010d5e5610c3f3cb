"""Benchmark 1c: long rows, few of them, each reduced by a thread-block cluster.

* ``ClusterRowConfig`` / ``cluster_row_reduce``: an M x N f32 matrix -> M row sums or
  maxima; a cluster of CL CTAs of W warps per row, CTA ``r`` of the cluster reading the
  r-th CL-th of the row (16-byte loads, C in flight per thread, P: chunk k+1 loaded
  before chunk k is folded), a thread-scope ``tile.reduce`` (accum) per chunk, and one
  cluster-scope ``tile.reduce`` per row (the ``cluster`` lowering: the warps of each CTA
  through its scratch, then the CTAs' partials through distributed shared memory).
* ``SHAPES``: 256x262144, 64x1048576 and 8x8388608 (256 MB each), sum and max. For each:
  ours (the fastest of ``candidates``: CL and W), the best single-CTA-per-row kernel
  (``kernels.cta_row_reduce`` over ``single_cta_candidates``), torch, Triton's row kernel
  with one program per row (autotuned over num_warps and BLOCK_N), a copy of the same
  bytes; all checked against float64, then timed steady and L2-flushed
  (``measure``). Triton with ``num_ctas`` 2, 4 and 8 is tried once, in a subprocess
  (Triton may abort in its compiler): compiled and run, or the error it gave.
* The plot: f32 sums of 2^26 elements as 8 ... 4096 rows: ours with clusters, ours with
  one CTA per row, torch (GB/s against the number of rows).

``all_kernels()`` lists what ``benchmarks.prepare`` compiles ahead (run.py's preflight
checks they are in the cache), ``check_generators(rng)`` runs small versions of every
configuration in the CPU interpreter, ``bench_cluster()`` is the GPU section
(``python -m benchmarks.run --only cluster``; about 2-3 minutes), and
``benchmarks.report_cluster`` writes its part of the report.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from . import kernels as K

SHAPES = ((256, 262144), (64, 1048576), (8, 8388608))
KINDS = ("sum", "max")
PLOT_TOTAL = 1 << 26  # elements of every matrix of the plot (256 MB of f32)
PLOT_ROWS = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
TRITON_NUM_CTAS = (2, 4, 8)


@dataclass(frozen=True)
class ClusterRowConfig(K._Rows):
    """One row-reduction kernel with a cluster of CL CTAs of W warps per row: block
    ``b`` reduces part ``b % CL`` of row ``b // CL``; its thread t loads the vectors
    (k*C + j)*32*W + t of chunk k of its part."""

    CL: int = 4
    W: int = 16
    C: int = 4
    prefetch: bool = True
    S: int = 1  # rows per block (what kernels._chunk_loops reads)
    unroll_chunks: bool = False

    @property
    def threads(self) -> int:
        return 32 * self.W

    @property
    def chunks(self) -> int:
        return self.N // (self.CL * self.threads * self.V * self.C)

    @property
    def grid(self) -> int:
        return self.M * self.CL

    @property
    def block(self) -> int:
        return self.threads

    @property
    def name(self) -> str:
        return f"cluster_row_{self.kind}_{self.dtype}_{self.M}x{self.N}"

    def label(self) -> str:
        return f"CL{self.CL} W{self.W} C{self.C}" + (" P" if self.prefetch else "")

    def check(self) -> None:
        if self.CL not in (1, 2, 4, 8, 16) or self.W not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"{self}: CL must be a power of two up to 16, W one up to 32")
        if self.N % (self.CL * self.threads * self.V * self.C) or self.chunks < (2 if self.prefetch else 1):
            raise ValueError(f"{self}: N must split into CL parts of 32*W threads x C vectors, 2+ chunks with P")


def cluster_layouts(CL: int, W: int, C: int) -> tuple[str, str]:
    """(src, dst) of the accumulators [1, C]: the row over CL CTAs x 32 lanes x W warps x C
    registers, reduced (axis 1) into a result every thread of the cluster holds."""
    return (f"S[(1, ({CL}, 32, {W}, {C})) : ({C}, (1@cta_in_cluster, 1@laneid, 1@warpid, 1))]",
            f"S[1 : 1] + R[({CL}, 32, {W}) : (1@cta_in_cluster, 1@laneid, 1@warpid)]")


def cluster_row_reduce(c: ClusterRowConfig) -> str:
    """The kernel ``c.name``(X: memref<MxNxf32>, Y: memref<Mxf32>), launched on c.grid x
    c.block; the cluster (CL, 1, 1) comes from its tile.reduce (the launch gives it)."""
    c.check()
    C, V = c.C, c.V
    X, Y = f"memref<{c.M}x{c.N}x{c.dtype}>", f"memref<{c.M}xf32>"
    src_layout, dst_layout = cluster_layouts(c.CL, c.W, C)
    combine = "sum" if c.kind == "sum" else "max"
    ind = " " * 6
    consts = K._constants(c, ("G", c.threads), ("S", 1), ("C", C), ("R", 1), ("RW", 1), ("CL", c.CL),
                          ("PV", c.N // (c.CL * c.V)))
    body = f"""    gpu.func @{c.name}(%X: {X} {{llvm.align = 16 : i64}}, %Y: {Y}) kernel
        attributes {{known_block_size = array<i32: {c.threads}, 1, 1>}} {{
{consts}      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row0 = arith.divui %bid, %cCL : index
      %part = arith.remui %bid, %cCL : index
      %pv = arith.muli %part, %cPV : index
      %gl = arith.addi %pv, %tid : index
      %t0 = arith.cmpi eq, %tid, %c0 : index
      %p0 = arith.cmpi eq, %part, %c0 : index
      %is_first = arith.andi %t0, %p0 : i1
      %tile = memref.alloca() : {K._priv((1, C, V))}
      %next = memref.alloca() : {K._priv((1, C, V))}
      %acc = memref.alloca() : {K._priv((1, C))}
      %res = memref.alloca() : {K._priv((1,))}
      scf.for %j = %c0 to %cC step %c1 {{
        memref.store %init, %acc[%c0, %j] : {K._priv((1, C))}
      }} {K.UNROLL}
{K._chunk_loops(c, ind)}{ind}"tile.reduce"(%res, %acc) {{kind = "{combine}", exec_scope = "cluster", axes = array<i64: 1>,
{ind}    src_layout = #tile.layout<"{src_layout}">, dst_layout = #tile.layout<"{dst_layout}">}}
{ind}  : ({K._priv((1,))}, {K._priv((1, C))}) -> ()
{ind}scf.if %is_first {{
{ind}  %r = memref.load %res[%c0] : {K._priv((1,))}
{ind}  memref.store %r, %Y[%row0] : {Y}
{ind}}}
      gpu.return
    }}
"""
    return K._module(body)


def _config(M, N, kind, CL, W, C=4, P=True):
    """A ClusterRowConfig, or None where the shape does not split that way."""
    try:
        c = ClusterRowConfig(M, N, "f32", kind, CL=CL, W=W, C=C, prefetch=P)
        c.check()
        return c
    except ValueError:
        return None


# (CL, W) swept per shape: enough CTAs for 132 SMs, few enough that a cluster fits a GPC.
SWEEP = {(256, 262144): ((2, 8), (2, 16), (4, 8), (4, 16)),
         (64, 1048576): ((4, 8), (4, 16), (4, 32), (8, 8), (8, 16), (8, 32)),
         (8, 8388608): ((8, 16), (8, 32), (16, 8), (16, 16), (16, 32))}


def candidates(M: int, N: int, kind: str) -> list[ClusterRowConfig]:
    """Our configurations for one shape (``SWEEP``; C = 2 with 32 warps: fewer registers)."""
    out = [_config(M, N, kind, CL, W, C=2 if W == 32 else 4) for CL, W in SWEEP[(M, N)]]
    return [c for c in out if c is not None]


def single_cta_candidates(M: int, N: int, kind: str) -> list[K.CtaRowConfig]:
    """The single-CTA-per-row kernels to beat (kernels.cta_row_reduce): 16 or 32 warps."""
    out = []
    for W, C in ((16, 4), (32, 2), (32, 4)):
        c = K.CtaRowConfig(M, N, "f32", kind, W=W, S=1, C=C, R=1, prefetch=True)
        try:
            c.check()
        except ValueError:
            continue
        out.append(c)
    return out


def plot_configs(M: int) -> tuple[list[ClusterRowConfig], list[K.CtaRowConfig]]:
    """The plot's kernels for M rows of PLOT_TOTAL / M: clusters sized so that M * CL is
    about 256 CTAs (and twice that), of 16 warps where the row is long enough, and one
    CTA of 16 warps per row."""
    N = PLOT_TOTAL // M
    first = min(16, max(2, 1 << max(0, (256 // M).bit_length() - 1)))
    ours = []
    for CL in dict.fromkeys((first, min(16, 2 * first))):  # the first (W, C, P) the row splits into
        fits = (_config(M, N, "sum", CL, W, C, P) for W, C, P in ((16, 4, True), (16, 4, False), (8, 4, False), (8, 2, False)))
        ours.append(next((c for c in fits if c is not None), None))
    single = [c for c in single_cta_candidates(M, N, "sum") if c.W == 16]
    return [c for c in ours if c is not None], single


def all_kernels() -> dict[str, tuple[str, str]]:
    """Every kernel of this section, by label: (text, fold option)."""
    texts = {}
    for M, N in SHAPES:
        for kind in KINDS:
            for c in candidates(M, N, kind):
                texts[f"{c.name} [{c.label()}]"] = (cluster_row_reduce(c), "linear")
            for c in single_cta_candidates(M, N, kind):
                texts[f"{c.name} [{c.label()}]"] = (K.cta_row_reduce(c), "linear")
    for M in PLOT_ROWS:
        ours, single = plot_configs(M)
        for c in ours:
            texts[f"{c.name} [{c.label()}]"] = (cluster_row_reduce(c), "linear")
        for c in single:
            texts[f"{c.name} [{c.label()}]"] = (K.cta_row_reduce(c), "linear")
    return texts


def small(c: ClusterRowConfig) -> ClusterRowConfig:
    """``c`` on 2 rows of 2 chunks (3 without prefetch), with 2 warps: the same loops and
    the same cluster (CL CTAs per row, 2 clusters)."""
    shrunk = dataclasses.replace(c, M=2, W=2)
    chunks = 3 if not c.prefetch else 2
    return dataclasses.replace(shrunk, N=c.CL * shrunk.threads * c.V * c.C * chunks)


def check_configs() -> list[ClusterRowConfig]:
    """Every cluster configuration the GPU run may time, each on a small matrix."""
    every = [c for M, N in SHAPES for kind in KINDS for c in candidates(M, N, kind)]
    every += [c for M in PLOT_ROWS for c in plot_configs(M)[0]]
    return list(dict.fromkeys(small(c) for c in every))


def check_generators(rng) -> int:
    """Run ``check_configs()`` in tile-mlir's CPU interpreter against numpy; raise if one
    is wrong. Returns how many ran."""
    import numpy as np
    import tile_mlir

    configs = check_configs()
    for c in configs:
        kernel = tile_mlir.compile(cluster_row_reduce(c), backend="interpreter")[c.name]
        x = rng.standard_normal((c.M, c.N)).astype(np.float32)
        y = np.full(c.M, np.nan, np.float32)
        kernel.launch(c.grid, c.block, x, y)
        ref = x.astype(np.float64).sum(1) if c.kind == "sum" else x.max(1).astype(np.float64)
        scale = np.abs(x).astype(np.float64).sum(1) if c.kind == "sum" else 1.0
        err = (np.abs(y - ref) / scale).max()
        if not (err < 1e-6 if c.kind == "sum" else err == 0):
            raise AssertionError(f"{c.name} [{c.label()}]: wrong in the interpreter (max error {err})")
    return len(configs)


# --- the GPU section ---------------------------------------------------------------------


def _best(cands, generate, xs, ys, ref, kind, log, what):
    """Each candidate checked and timed steady; the fastest, timed again: (ms, config, bound, all)."""
    import tile_mlir
    import torch

    from .measure import OPTIONS, row_ok, steady

    timed = []
    for cfg in cands:
        kern = tile_mlir.compile(generate(cfg), OPTIONS, backend="cuda")[cfg.name]
        bound = [kern.bind(cfg.grid, cfg.block, x, y) for x, y in zip(xs, ys)]
        ys[0].fill_(float("nan"))
        bound[0]()
        torch.cuda.synchronize()
        ok, err = row_ok(ys[0], ref, kind)
        if not ok:
            log(f"  FAIL {what} [{cfg.label()}]: wrong result (error {err})")
            continue
        timed.append((steady(bound), cfg, bound))
        log(f"  {cfg.M}x{cfg.N} {kind}: {what} [{cfg.label()}] {timed[-1][0] * 1e3:8.1f} us")
    if not timed:
        raise AssertionError(f"{what}: no configuration gave the right result")
    _, best, bound = min(timed, key=lambda t: t[0])
    return steady(bound), best, bound, {c.label(): t for t, c, _ in timed}


def _case(M: int, N: int, kind: str, triton_kernel, log) -> dict:
    """One shape and kind: ours, the single-CTA kernel, torch, Triton and a copy."""
    import torch

    from .measure import ROTATE_BYTES, flushed, row_ok, steady

    nbytes = M * N * 4
    nbuf = max(2, -(-ROTATE_BYTES // nbytes))
    xs = [torch.randn(M, N, device="cuda") for _ in range(nbuf)]
    ys = [torch.empty(M, device="cuda") for _ in range(nbuf)]
    ref = xs[0].double().sum(1) if kind == "sum" else xs[0].double().amax(1)
    row = {"M": M, "N": N, "dtype": "f32", "kind": kind, "bytes": nbytes, "input_sets": nbuf}
    t, cfg, bound, cands = _best(candidates(M, N, kind), cluster_row_reduce, xs, ys, ref, kind, log, "tile-mlir cluster")
    row |= {"ours_ms": t, "ours_cfg": cfg.label(), "ours_kernel": cfg.name, "ours_candidates": cands,
            "ours_flushed_ms": flushed(bound[0])}
    t, cfg, bound, cands = _best(single_cta_candidates(M, N, kind), K.cta_row_reduce, xs, ys, ref, kind, log,
                                 "tile-mlir one CTA per row")
    row |= {"single_ms": t, "single_cfg": cfg.label(), "single_kernel": cfg.name, "single_candidates": cands,
            "single_flushed_ms": flushed(bound[0])}
    fn = (lambda i: torch.sum(xs[i], dim=1)) if kind == "sum" else (lambda i: torch.amax(xs[i], dim=1))
    ok, err = row_ok(fn(0), ref, kind)
    assert ok, f"torch wrong ({err})"
    torch_fns = [lambda i=i: fn(i) for i in range(nbuf)]
    row["torch_ms"], row["torch_flushed_ms"] = steady(torch_fns), flushed(torch_fns[0])

    def tri(i):
        return triton_kernel[lambda meta: (M // meta["BLOCK_M"],)](xs[i], ys[i], M, N, IS_MAX=kind == "max")

    ys[0].fill_(float("nan"))
    tri(0)
    torch.cuda.synchronize()
    ok, err = row_ok(ys[0], ref, kind)
    assert ok, f"triton wrong ({err})"
    tri_fns = [lambda i=i: tri(i) for i in range(nbuf)]
    row["triton_ms"], row["triton_flushed_ms"] = steady(tri_fns), flushed(tri_fns[0])
    bc = triton_kernel.best_config
    row["triton_cfg"] = f"BM{bc.kwargs['BLOCK_M']} BN{bc.kwargs['BLOCK_N']} w{bc.num_warps}"
    dsts = [torch.empty_like(x) for x in xs]
    copy_fns = [lambda d=d, x=x: d.copy_(x) for d, x in zip(dsts, xs)]
    row["copy_ms"], row["copy_flushed_ms"] = steady(copy_fns), flushed(copy_fns[0])
    del dsts, copy_fns
    for mode in ("", "flushed_"):
        for who in ("ours", "single", "torch", "triton"):
            row[f"{who}_{mode}GBs"] = nbytes / row[f"{who}_{mode}ms"] / 1e6
        row[f"copy_{mode}GBs"] = 2 * nbytes / row[f"copy_{mode}ms"] / 1e6
        row[f"pct_copy_{mode}".rstrip("_")] = 100 * row[f"ours_{mode}GBs"] / row[f"copy_{mode}GBs"]
        for who in ("torch", "triton", "single"):
            row[f"vs_{who}_{mode}".rstrip("_")] = row[f"{who}_{mode}ms"] / row[f"ours_{mode}ms"]
    log(f"  {M}x{N} f32 {kind}: ours {row['ours_GBs']:6.0f} GB/s [{row['ours_cfg']}]  one CTA/row {row['single_GBs']:6.0f} "
        f"[{row['single_cfg']}]  torch {row['torch_GBs']:6.0f}  triton {row['triton_GBs']:6.0f} [{row['triton_cfg']}]  "
        f"copy {row['copy_GBs']:6.0f} -> {row['pct_copy']:.1f}% of copy, {row['vs_torch']:.3f}x torch, "
        f"{row['vs_single']:.3f}x one CTA/row | flushed: ours {row['ours_flushed_GBs']:.0f} torch {row['torch_flushed_GBs']:.0f}")
    return row


_NUM_CTAS = r"""
import json, sys, torch
sys.path.insert(0, {root!r})
from benchmarks.measure import _triton_row_jit
M, N = 64, 1048576
x = torch.randn(M, N, device="cuda"); y = torch.full((M,), float("nan"), device="cuda")
for n in {ctas!r}:
    try:
        _triton_row_jit()[(M,)](x, y, M, N, IS_MAX=False, BLOCK_M=1, BLOCK_N=4096, num_warps=8, num_ctas=n)
        torch.cuda.synchronize()
        err = ((y.double() - x.double().sum(1)).norm() / x.double().sum(1).norm()).item()
        print(json.dumps({{"num_ctas": n, "compiled": True, "error": err}}), flush=True)
    except Exception as e:
        text = (str(e).strip().splitlines() or [type(e).__name__])[-1][:300]
        print(json.dumps({{"num_ctas": n, "compiled": False, "message": f"{{type(e).__name__}}: {{text}}"}}), flush=True)
"""


def triton_num_ctas(log) -> list[dict]:
    """Triton's row kernel (one program per row, 64x1048576 f32 sum) with num_ctas > 1, in
    a subprocess: per num_ctas, whether it compiled and ran right, or the error (a
    num_ctas the subprocess did not report: it died there)."""
    code = _NUM_CTAS.format(root=str(Path(__file__).resolve().parent.parent), ctas=TRITON_NUM_CTAS)
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, check=False)
        out, tail = done.stdout, (done.stderr.strip().splitlines() or [""])[-1][:300]
        code_ = done.returncode
    except subprocess.TimeoutExpired as e:
        out, tail, code_ = e.stdout or "", "timed out after 180 s", None
        out = out.decode() if isinstance(out, bytes) else out
    seen = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for n in TRITON_NUM_CTAS[len(seen):]:
        seen.append({"num_ctas": n, "compiled": False,
                     "message": f"the process ended (exit status {code_}) before it reported: {tail}"})
    for r in seen:
        log(f"  Triton num_ctas={r['num_ctas']}: " + (f"compiled and ran, relative error {r['error']:.2e}" if r["compiled"]
                                                       else f"failed: {r['message']}"))
    return seen


def _plot(log) -> list[dict]:
    """GB/s of f32 sums of PLOT_TOTAL elements as M rows: ours with clusters, ours with
    one CTA per row, torch."""
    import torch

    from .measure import steady

    points = []
    for M in PLOT_ROWS:
        N = PLOT_TOTAL // M
        x = torch.randn(M, N, device="cuda")
        xs, ys = [x, torch.randn(M, N, device="cuda")], [torch.empty(M, device="cuda") for _ in range(2)]
        ref = x.double().sum(1)
        ours, single = plot_configs(M)
        point = {"M": M, "N": N}
        for who, cands, generate in (("ours", ours, cluster_row_reduce), ("single", single, K.cta_row_reduce)):
            try:
                t, cfg, _, _ = _best(cands, generate, xs, ys, ref, "sum", lambda *a: None, who)
                point[f"{who}_GBs"], point[f"{who}_cfg"] = M * N * 4 / t / 1e6, cfg.label()
            except Exception as e:  # noqa: BLE001 - a missing point, said in the log
                log(f"  plot {M}x{N} {who}: {type(e).__name__}: {e}")
        point["torch_GBs"] = M * N * 4 / steady([lambda a=a: torch.sum(a, 1) for a in xs]) / 1e6
        log(f"  plot {M:5d} x {N:8d}: ours {point.get('ours_GBs', 0):6.0f} GB/s [{point.get('ours_cfg')}]  one CTA/row "
            f"{point.get('single_GBs', 0):6.0f} [{point.get('single_cfg')}]  torch {point['torch_GBs']:6.0f}")
        points.append(point)
        x = ref = xs = ys = None  # free the inputs before the next shape's
        torch.cuda.empty_cache()
    return points


def bench_cluster(deadline: float | None = None) -> dict:
    """Section 1c (module docstring). A case is skipped, and the log says so, when the
    previous one's time says it would end after ``deadline`` seconds of the run."""
    import torch

    from .measure import MULTIWARP_TRITON, log, triton_row_kernel

    log.section("1c. long rows, a thread-block cluster per row (read GB/s = M*N*4 / median time)")
    one_per_row = tuple(c for c in MULTIWARP_TRITON if c[0] == 1)  # BLOCK_M = 1: one program per row
    tri = triton_row_kernel(one_per_row)
    out = {"rows": [], "plot": [], "triton_num_ctas": [], "triton_configs": [list(c) for c in one_per_row]}
    last = 0.0
    for M, N in SHAPES:
        for kind in KINDS:
            if deadline is not None and log.elapsed() + last > deadline:
                log(f"  {M}x{N} {kind} skipped: it would end past the run's {deadline:.0f} s deadline")
                continue
            t0 = log.elapsed()
            try:
                out["rows"].append(_case(M, N, kind, tri, log))
            except Exception:  # noqa: BLE001 - report the case and go on
                log(f"  {M}x{N} {kind}: failed\n{traceback.format_exc()}")
            torch.cuda.empty_cache()
            last = log.elapsed() - t0
    log.section("1c. Triton with num_ctas > 1 (one program per row over a cluster), in a subprocess")
    out["triton_num_ctas"] = triton_num_ctas(log)
    log.section(f"1c. GB/s against the number of rows, f32 sums of {PLOT_TOTAL} elements")
    try:
        out["plot"] = _plot(log)
    except Exception:  # noqa: BLE001
        log(f"  the plot's sweep failed\n{traceback.format_exc()}")
    return out


def reported_kernels(results: dict) -> dict[str, str]:
    """The section's chosen kernels by label (their text), for the SASS dump."""
    texts = {}
    for r in results.get("cluster", {}).get("rows", []):
        cfg = next(c for c in candidates(r["M"], r["N"], r["kind"]) if c.label() == r["ours_cfg"])
        texts[f"{cfg.name} [{cfg.label()}]"] = cluster_row_reduce(cfg)
    return texts
