"""The report's parts for benchmarks 1b (several warps per row) and 2b (one cross-warp step).

``summarize`` folds the repetitions of section 1b into one row per case (min, median and
max of every figure over the repetitions); ``targets``, ``markdown_rows``,
``markdown_latency``, ``plot`` and ``plot_latency`` give ``report`` the targets, the two
sections of results.md, the several-warps panel of ``rows.png`` and the cross-warp panel
of ``latency.png``.
"""

from __future__ import annotations

import statistics

from . import kernels as K

MULTIWARP_LARGE = ((4096, 16384), (1024, 65536))
MULTIWARP_SKINNY = (256, 262144)
FIGURES = ("vs_triton", "pct_copy", "vs_torch", "ours_GBs", "triton_GBs", "torch_GBs", "copy_GBs",
           "vs_triton_flushed", "pct_copy_flushed", "vs_torch_flushed", "ours_flushed_GBs",
           "triton_flushed_GBs", "torch_flushed_GBs", "copy_flushed_GBs", "pct_read", "read_GBs", "pct_read_flushed")
PCT_READ = 97.0  # the target: >= this % of the pure-read kernel of the same run (benchmarks/ceiling.py)
XWARP_TARGET_US = 1.5


def summarize(mw: dict) -> list[dict]:
    """One row per case of section 1b: ``<figure>_min``, ``_med``, ``_max`` over the
    repetitions, the configuration each repetition chose (ours and Triton's), and each
    candidate's median time (µs)."""
    by: dict[tuple, list[dict]] = {}
    for rows in mw.get("repeats", []):
        for r in rows:
            by.setdefault((r["M"], r["N"], r["dtype"], r["kind"]), []).append(r)
    out = []
    for (M, N, dtype, kind), rs in by.items():
        s = {"M": M, "N": N, "dtype": dtype, "kind": kind, "n": len(rs),
             "ours_cfgs": [r["ours_cfg"] for r in rs], "triton_cfgs": [r["triton_cfg"] for r in rs]}
        for key in FIGURES:
            vals = [r[key] for r in rs if key in r]
            if vals:
                s[f"{key}_min"], s[f"{key}_med"], s[f"{key}_max"] = min(vals), statistics.median(vals), max(vals)
        labels = dict.fromkeys(label for r in rs for label in r.get("ours_candidates", {}))
        s["candidates_us"] = {label: 1e3 * statistics.median(r["ours_candidates"][label] for r in rs
                                                             if label in r.get("ours_candidates", {}))
                              for label in labels}
        out.append(s)
    return out


def _spread(s: dict, key: str, fmt: str) -> str:
    return f"{fmt.format(s[key + '_med'])} ({fmt.format(s[key + '_min'])}-{fmt.format(s[key + '_max'])})"


def targets(results: dict, add) -> None:
    """Add (key, target, figure, met) for every target of sections 1b and 2b that the run measured."""
    summary = summarize(results.get("multiwarp", {}))
    for M, N in MULTIWARP_LARGE:
        for dtype in ("f32", "bf16"):
            rows = [s for s in summary if (s["M"], s["N"], s["dtype"]) == (M, N, dtype)]
            if not rows:
                continue
            tri = min(rows, key=lambda s: s["vs_triton_med"])
            pct = min(rows, key=lambda s: s["pct_copy_med"])
            n = min(s["n"] for s in rows)
            context = (f"context: worst {_spread(tri, 'vs_triton', '{:.3f}')}x Triton ({tri['kind']}), "
                       f"{_spread(pct, 'pct_copy', '{:.1f}')}% of copy ({pct['kind']})")
            target = f"several warps per row, {M}x{N} {dtype} (sum and max): >= {PCT_READ:.0f}% of the pure-read kernel"
            if not all("pct_read_med" in s for s in rows):
                why = next((r.get("read_missing") for reps in results.get("multiwarp", {}).get("repeats", []) for r in reps
                            if (r["M"], r["N"], r["dtype"]) == (M, N, dtype) and r.get("read_missing")), "not measured")
                add(f"multiwarp-{M}x{N}-{dtype}", target, f"pure-read kernel missing: {why}; {context}", False)
                continue
            rd = min(rows, key=lambda s: s["pct_read_med"])
            add(f"multiwarp-{M}x{N}-{dtype}", target,
                f"worst {_spread(rd, 'pct_read', '{:.1f}')}% of pure read ({rd['kind']}: ours {rd['ours_GBs_med']:.0f} "
                f"GB/s, read {rd['read_GBs_med']:.0f}): median (min-max) of {n} repetitions; {context}",
                rd["pct_read_med"] >= PCT_READ)
    for s in summary:
        if (s["M"], s["N"], s["dtype"], s["kind"]) == (*MULTIWARP_SKINNY, "f32", "sum"):
            add("multiwarp-skinny", f"several warps per row, {s['M']}x{s['N']} f32 sum: >= 1.25x torch.sum",
                f"{_spread(s, 'vs_torch', '{:.3f}')}x torch ({s['torch_GBs_med']:.0f} GB/s; ours {s['ours_GBs_med']:.0f}, "
                f"copy {s['copy_GBs_med']:.0f}), median (min-max) of {s['n']} repetitions", s["vs_torch_med"] >= 1.25)
    xw = results.get("xwarp", [])
    ours = [r for r in xw if r["name"].startswith("tile-mlir")]
    if ours:
        lin = ours[0]
        refs = "; ".join(f"{r['name']}: {r['us']:.3f} µs" for r in xw[1:])
        add("xwarp", f"cross-warp step, 32 warps of one block, f32 sum: <= {XWARP_TARGET_US} µs per reduction",
            f"{lin['us']:.3f} µs, {lin['cycles']:.0f} cycles ({lin['name']}; {refs})",
            lin["us"] <= XWARP_TARGET_US and lin["ok"])


def markdown_rows(results: dict, sass: dict, ptxas: dict) -> list[str]:
    """The lines of section 1b of results.md."""
    L: list[str] = []
    mw = results.get("multiwarp", {})
    summary = summarize(mw)
    if summary:
        n = max(s["n"] for s in summary)
        L += ["", "## 1b. Row reduction, several warps per row", "",
              "M x N row-major -> M f32 results, W warps per row: each block of 32·W threads reduces S rows at once "
              "(R times, grid-stride), thread t loading 16-byte vectors t, t + 32·W, ... of each row (C in flight per "
              "row, twice that with P: chunk k+1 loaded before chunk k is folded). bf16 inputs are loaded 8 to a "
              "vector, converted to f32 and accumulated in f32, as in section 1. The per-thread accumulators go "
              "through one cta-scope `tile.reduce` whose src layout puts the W warps along the row "
              "(`S[(S, (32, W, C)) : (C, (1@laneid, 1@warpid, 1))]`), lowered by the `cross_warp` variant: "
              "in-thread fold, 5-step lane butterfly, lane 0 of each warp stores its partial to workgroup scratch, "
              "one `bar.sync`, every thread reads the W partials and folds them in warp order.", "",
              f"Ours is the fastest (steady) of a sweep over the configurations of `kernels.CTA_TUNING` "
              f"(W, S, C, R, P), each compiled ahead into the cache, checked on small shapes in the CPU interpreter "
              f"(`benchmarks.prepare`) and against float64 on the GPU before it is timed; the fastest is timed again "
              f"for the tables (the fastest of several noisy timings is biased low; Triton's choice is timed the same "
              f"way). Triton's kernel is the "
              f"section-1 row kernel, autotuned over (BLOCK_M, BLOCK_N, num_warps) in "
              f"{', '.join(f'({bm}, {bn}, {w})' for bm, bn, w in _triton_configs())}. "
              f"The section ran {n} times in one process ({mw.get('how', '')}); "
              "figures are medians over the repetitions, with (min-max).", "",
              "| shape | dtype | kind | tile-mlir GB/s | config per repetition | Triton GB/s | Triton config per repetition | "
              "torch GB/s | copy GB/s | % copy | vs Triton | vs torch |",
              "|---|---|---|---:|---|---:|---|---:|---:|---:|---:|---:|"]
        for s in summary:
            L.append(f"| {s['M']}x{s['N']} | {s['dtype']} | {s['kind']} | {s['ours_GBs_med']:.0f} | {', '.join(s['ours_cfgs'])} | "
                     f"{s['triton_GBs_med']:.0f} | {', '.join(s['triton_cfgs'])} | {s['torch_GBs_med']:.0f} | "
                     f"{s['copy_GBs_med']:.0f} | {_spread(s, 'pct_copy', '{:.1f}')} | {_spread(s, 'vs_triton', '{:.3f}')}x | "
                     f"{_spread(s, 'vs_torch', '{:.2f}')}x |")
        if all("ours_flushed_GBs_med" in s for s in summary):
            L += ["", "L2 flushed (`do_bench`), the same kernels, medians (min-max):", "",
                  "| shape | dtype | kind | tile-mlir GB/s | Triton GB/s | torch GB/s | copy GB/s | % copy | vs Triton | vs torch |",
                  "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
            for s in summary:
                L.append(f"| {s['M']}x{s['N']} | {s['dtype']} | {s['kind']} | {s['ours_flushed_GBs_med']:.0f} | "
                         f"{s['triton_flushed_GBs_med']:.0f} | {s['torch_flushed_GBs_med']:.0f} | {s['copy_flushed_GBs_med']:.0f} | "
                         f"{_spread(s, 'pct_copy_flushed', '{:.1f}')} | {_spread(s, 'vs_triton_flushed', '{:.3f}')}x | "
                         f"{_spread(s, 'vs_torch_flushed', '{:.2f}')}x |")
        L += ["", "![one and several warps per row](rows.png)", "",
              "The sweep (steady µs per call, median over the repetitions; the chosen one in bold):", "",
              "| case | configurations |", "|---|---|"]
        for s in summary:
            best = min(s["candidates_us"], key=s["candidates_us"].get) if s["candidates_us"] else None
            cells = ", ".join(f"{'**' if c == best else ''}{c}: {t:.1f}{'**' if c == best else ''}"
                              for c, t in s["candidates_us"].items())
            L.append(f"| {s['M']}x{s['N']} {s['dtype']} {s['kind']} | {cells} |")
        L += ["", "Chosen kernels, from `cuobjdump --dump-sass` (sass.txt) and `ptxas -v`:", "",
              "| kernel | registers | stack | LDG.128 / all LDG | SHFL | BAR | LDS / STS | local (LDL/STL) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for label in dict.fromkeys(f"cta_row_{s['kind']}_{s['dtype']}_{s['M']}x{s['N']} [{c}]" for s in summary for c in s["ours_cfgs"]):
            L.append(_sass_row(label, sass, ptxas))
    return L


def markdown_latency(results: dict, sass: dict) -> list[str]:
    """The lines of section 2b of results.md."""
    L: list[str] = []
    xw = results.get("xwarp", [])
    if xw:
        k1, k2, k_long = (xw[0].get(k, "?") for k in ("k1", "k2", "k_long"))
        L += ["", "## 2b. Cross-warp step latency", "",
              f"One block of {K.XWARP_WARPS} warps (1024 threads), f32 sum. Warp w's partial is held by all its lanes "
              f"(src layout `S[32 : 1@warpid] + R[32 : 1@laneid]`), so a cta-scope `tile.reduce` is only the exchange: "
              "lane 0's store to workgroup scratch, the barrier, the reads, the fold. K dependent steps in a loop "
              "(each result times 1/32 is the next partial: one FMUL per step, in every implementation); cycles = "
              f"(T({k2}) − T({k1})) / ({k2} − {k1}) from `clock64` in thread 0, medians of 7 launches; µs = CUDA-event "
              f"time of one launch of {k_long} steps / {k_long}. CUDA references (benchmarks/cross_warp_latency.cu, nvcc -O3, "
              "sm_90a, same run): *shfl*, each warp reads the 32 partials one per lane and folds them with a "
              "`__shfl_xor_sync` butterfly; *lds*, our algorithm by hand. Every implementation was checked (every "
              "thread holds the same value, against float64).", "",
              "| implementation | cycles per step | µs per step | checked | SASS: BAR / LDS / STS / SHFL |", "|---|---:|---:|---|---|"]
        for r in xw:
            s = {}
            if r["name"].startswith("tile-mlir"):
                fold = r["name"].split("(")[1].split()[0]
                s = sass.get(f"xwarp_lat_sum_f32_w{K.XWARP_WARPS} [{fold}]", {})
            counts = " / ".join(str(s.get(k, "n/a")) for k in ("BAR", "LDS", "STS", "SHFL")) if s else ""
            L.append(f"| {r['name']} | {r['cycles']:.1f} | {r['us']:.3f} | {r['ok']} | {counts} |")
    return L


def _triton_configs():
    from .measure import MULTIWARP_TRITON

    return MULTIWARP_TRITON


def _sass_row(label: str, sass: dict, ptxas: dict) -> str:
    s, px = sass.get(label, {}), ptxas.get(label, {})
    g = lambda d, k: "n/a" if d.get(k) is None else str(d[k])
    return (f"| {label} | {g(px, 'registers')} | {g(px, 'stack')} | {g(s, 'LDG.128')} / {g(s, 'LDG')} | {g(s, 'SHFL')} | "
            f"{g(s, 'BAR')} | {g(s, 'LDS')} / {g(s, 'STS')} | {g(s, 'local')} |")


def plot(results: dict, ax) -> None:
    """The several-warps panel of rows.png: read TB/s per case (medians, min-max bars) of
    ours, Triton and torch, and the copy's rate."""
    summary = summarize(results.get("multiwarp", {}))
    xs = range(len(summary))
    w = 0.27
    for i, (key, name) in enumerate((("ours_GBs", "tile-mlir"), ("triton_GBs", "Triton"), ("torch_GBs", "torch"))):
        med = [s[f"{key}_med"] / 1e3 for s in summary]
        err = [[m - s[f"{key}_min"] / 1e3 for m, s in zip(med, summary)], [s[f"{key}_max"] / 1e3 - m for m, s in zip(med, summary)]]
        ax.bar([x + (i - 1) * w for x in xs], med, w, yerr=err, capsize=2, label=name)
    ax.plot(list(xs), [s["copy_GBs_med"] / 1e3 for s in summary], "k_", markersize=22, mew=2, label="copy (read+write)")
    ax.set_xticks(list(xs), [f"{s['M']}x{s['N']}\n{s['dtype']} {s['kind']}" for s in summary], fontsize=7)
    ax.set_ylabel("TB/s read")
    ax.set_title(f"Row reduction, several warps per row (median and min-max of {max(s['n'] for s in summary)} repetitions)")
    ax.legend(fontsize=8, loc="lower left")


def plot_latency(results: dict, ax) -> None:
    """The cross-warp panel of latency.png: µs per step of each implementation, and the target."""
    xw = results.get("xwarp", [])
    ax.barh([r["name"].replace(": ", ":\n", 1) for r in xw], [r["us"] for r in xw], color="C0")
    ax.axvline(XWARP_TARGET_US, color="k", ls="--", lw=1, label=f"target {XWARP_TARGET_US} µs")
    ax.set_xlabel(f"µs per cross-warp step ({K.XWARP_WARPS} warps, f32 sum)")
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(fontsize=8)
