"""Benchmarks 1b and 2b on the GPU: rows reduced by several warps each, and one cross-warp step.

* ``bench_multiwarp(repeats)``: for every ``kernels.CTA_ROW_CASES`` shape, dtype and kind,
  ``measure.row_case`` over the multi-warp candidates (``cta_row_candidates``: W warps per
  row, a cta-scope ``tile.reduce``), against torch, the Triton row kernel autotuned over
  ``MULTIWARP_TRITON`` (num_warps 1..32) and a copy. The whole section runs ``repeats``
  times in this process; each repetition draws fresh inputs, times every candidate of
  ours again and tunes Triton again (a fresh autotuner over the compiled binaries), so the
  spread covers both tunings. ``report_multiwarp.summarize`` gives min/median/max.
* ``bench_cross_warp()``: cycles (clock64) and microseconds (CUDA events over a long loop)
  per dependent cross-warp step of ``kernels.cross_warp_latency`` (32 warps, f32 sum), for
  each fold order, against ``cross_warp_latency.cu`` built here with nvcc.
"""

from __future__ import annotations

import statistics
import traceback

from . import kernels as K
from . import report_multiwarp
from .measure import (
    MULTIWARP_TRITON,
    OPTIONS,
    log,
    row_case,
    run_cuda,
    triton_row_kernel,
)


def bench_multiwarp(repeats: int = 3, deadline: float | None = None) -> dict:
    """Every multi-warp case, ``repeats`` times. A repetition after the first is skipped,
    and says so, when the previous one's time says it would end after ``deadline``
    seconds of the run."""
    import torch

    reps: list[list[dict]] = []
    last = 0.0
    for r in range(repeats):
        if deadline is not None and r > 0 and log.elapsed() + last > deadline:
            log(f"  repetitions {r + 1}..{repeats} skipped: they would end past the run's {deadline:.0f} s deadline")
            break
        t0 = log.elapsed()
        log.section(f"1b. several warps per row, repetition {r + 1}/{repeats} (read GB/s = M*N*itemsize / median time)")
        tri = triton_row_kernel(MULTIWARP_TRITON)  # a fresh autotuner: Triton tunes again
        rows = []
        for case in K.CTA_ROW_CASES:
            try:
                rows.append(row_case(*case, tri, K.cta_row_candidates(*case), K.cta_row_reduce) | {"repeat": r})
            except Exception:  # noqa: BLE001 - report the case and go on
                log(f"  {case}: failed\n{traceback.format_exc()}")
            torch.cuda.empty_cache()
        reps.append(rows)
        last = log.elapsed() - t0
        log(f"  repetition {r + 1} took {last:.0f} s")
    out = {"repeats": reps, "how": "one process; each repetition: fresh inputs, ours and Triton tuned again"}
    log.section("1b. spread over the repetitions (steady timing)")
    for s in report_multiwarp.summarize(out):
        log(f"  {s['M']}x{s['N']} {s['dtype']} {s['kind']}: vs Triton {s['vs_triton_min']:.3f} / {s['vs_triton_med']:.3f} / "
            f"{s['vs_triton_max']:.3f}x (min / median / max of {s['n']}), % copy {s['pct_copy_min']:.1f} / "
            f"{s['pct_copy_med']:.1f} / {s['pct_copy_max']:.1f}, vs torch {s['vs_torch_med']:.3f}x; "
            f"ours [{', '.join(s['ours_cfgs'])}], Triton [{', '.join(s['triton_cfgs'])}]")
    return out


# --- 2b. cross-warp step latency --------------------------------------------------------

XK1, XK2, XK_LONG = 100, 1100, 100_000


def _xwarp_ours(fold: str) -> dict:
    import tile_mlir
    import torch

    W = K.XWARP_WARPS
    name = f"xwarp_lat_sum_f32_w{W}"
    kern = tile_mlir.compile(K.cross_warp_latency(), {**OPTIONS, "fold": fold}, backend="cuda")[name]
    a = torch.randn(W, device="cuda")
    b = torch.empty(32 * W, device="cuda")
    t = torch.zeros(32 * W, device="cuda", dtype=torch.int64)

    def run(k: int):
        b.fill_(float("nan"))
        kern.launch(1, 32 * W, a, b, t, k)
        torch.cuda.synchronize()
        return b.double(), int(t[0].item())

    a64 = a.double()
    one, _ = run(1)
    many, _ = run(XK2)
    ok = (bool((one == one[0]).all()) and abs(one[0].item() - a64.sum().item() / W) <= 1e-6 * a64.abs().sum().item()
          and bool((many == many[0]).all()) and abs(many[0].item() - a64.mean().item()) <= 1e-4 * a64.abs().mean().item())

    def cycles(k: int) -> float:
        return statistics.median(run(k)[1] for _ in range(7))

    cycles(XK1)
    per_step = (cycles(XK2) - cycles(XK1)) / (XK2 - XK1)
    us = []
    for _ in range(3):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        kern.launch(1, 32 * W, a, b, t, XK_LONG)
        end.record()
        end.synchronize()
        us.append(start.elapsed_time(end) * 1e3 / XK_LONG)
    return {"name": f"tile-mlir ({fold} fold)", "cycles": per_step, "us": statistics.median(us), "ok": ok,
            "k1": XK1, "k2": XK2, "k_long": XK_LONG}


def bench_cross_warp() -> list[dict]:
    log.section(f"2b. cross-warp step latency (one block of {K.XWARP_WARPS} warps, f32 sum; per dependent step: "
                f"clock64 (T({XK2}) - T({XK1})) / {XK2 - XK1}, and CUDA events over {XK_LONG} steps)")
    results = []
    for fold in K.XWARP_FOLDS:
        results.append(_xwarp_ours(fold))
    try:
        results += run_cuda("cross_warp_latency.cu", XK1, XK2, XK_LONG)
    except Exception as e:  # noqa: BLE001 - report and go on without the reference
        log(f"  CUDA reference failed: {e}")
    for r in results:
        log(f"  {r['name']:40s} {r['cycles']:7.1f} cycles  {r['us']:6.3f} us  (checked: {r['ok']})")
    return results
