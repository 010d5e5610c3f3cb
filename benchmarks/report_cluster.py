"""The report's part for benchmark 1c (long rows, a thread-block cluster per row).

``targets`` adds the section's targets (per shape, sum and max: >= 95% of the copy's
rate and >= 1.2x torch), ``markdown`` gives its section of results.md, and ``plot``
writes ``cluster.png`` (GB/s against the number of rows at a fixed total size).
"""

from __future__ import annotations

PCT_COPY, VS_TORCH = 95.0, 1.2


def targets(results: dict, add) -> None:
    """Add (key, target, figure, met) for every shape the run measured."""
    rows = results.get("cluster", {}).get("rows", [])
    for M, N in dict.fromkeys((r["M"], r["N"]) for r in rows):
        case = [r for r in rows if (r["M"], r["N"]) == (M, N)]
        pct = min(case, key=lambda r: r["pct_copy"])
        tor = min(case, key=lambda r: r["vs_torch"])
        kinds = " and ".join(r["kind"] for r in case)
        add(f"cluster-{M}x{N}", f"a cluster per row, {M}x{N} f32 ({kinds}): >= {PCT_COPY:.0f}% of copy and >= {VS_TORCH}x torch",
            f"worst {pct['pct_copy']:.1f}% of copy ({pct['kind']}: ours {pct['ours_GBs']:.0f} GB/s [{pct['ours_cfg']}], copy "
            f"{pct['copy_GBs']:.0f}), {tor['vs_torch']:.3f}x torch ({tor['kind']}: torch {tor['torch_GBs']:.0f} GB/s); "
            f"one CTA per row: {min(r['single_GBs'] for r in case):.0f}-{max(r['single_GBs'] for r in case):.0f} GB/s",
            pct["pct_copy"] >= PCT_COPY and tor["vs_torch"] >= VS_TORCH)


def markdown(results: dict, sass: dict, ptxas: dict) -> list[str]:
    """The lines of section 1c of results.md."""
    section = results.get("cluster", {})
    rows = section.get("rows", [])
    if not rows and not section.get("plot"):
        return []
    L = ["", "## 1c. Long rows, a thread-block cluster per row", "",
         ("M x N f32 row-major -> M f32 results (2^26 elements, 256 MB, each). Ours: a cluster of CL CTAs of W warps per row "
         "(sm_90 thread-block clusters), CTA r of the cluster reading the r-th CL-th of the row with 16-byte loads "
         "(C in flight per thread, P: chunk k+1 loaded before chunk k is folded), a thread-scope `tile.reduce` per chunk, "
         "and one cluster-scope `tile.reduce` per row, lowered by the `cluster` variant "
         "([docs/lowering-cluster.md](../lowering-cluster.md)): lane butterfly, the W warps' partials through the "
         "CTA's scratch (`bar.sync`), then the CL CTA partials through distributed shared memory (`barrier.cluster`, "
         "`mapa`, `ld.shared::cluster`), folded in CTA order. No second kernel, no atomics. Ours is the fastest "
         "(steady) of the sweep over (CL, W), each configuration checked in the CPU interpreter on small shapes "
         "(`benchmarks.prepare`) and against float64 on the GPU before it is timed; *one CTA per row* is the fastest "
         "of `kernels.cta_row_reduce` (16 or 32 warps per row, the cross_warp lowering); Triton's is the row kernel "
         "with one program per row (BLOCK_M = 1), autotuned over (BLOCK_N, num_warps) in "
         + ", ".join(f"({bn}, {w})" for _, bn, w in section.get("triton_configs", [])) + ". *% copy*: our read GB/s "
         "over the copy's read + write GB/s, as in section 1."), ""]
    if rows:
        L += ["| shape | kind | tile-mlir GB/s | config | one CTA per row GB/s | config | torch GB/s | Triton GB/s | "
              "Triton config | copy GB/s | % copy | vs torch | vs one CTA per row | vs Triton |",
              "|---|---|---:|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|"]
        for r in rows:
            L.append(f"| {r['M']}x{r['N']} | {r['kind']} | {r['ours_GBs']:.0f} | {r['ours_cfg']} | {r['single_GBs']:.0f} | "
                     f"{r['single_cfg']} | {r['torch_GBs']:.0f} | {r['triton_GBs']:.0f} | {r['triton_cfg']} | "
                     f"{r['copy_GBs']:.0f} | {r['pct_copy']:.1f} | {r['vs_torch']:.2f}x | {r['vs_single']:.2f}x | "
                     f"{r['vs_triton']:.2f}x |")
        L += ["", "L2 flushed (`do_bench`), the same kernels:", "",
              "| shape | kind | tile-mlir GB/s | one CTA per row GB/s | torch GB/s | Triton GB/s | copy GB/s | % copy | vs torch |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            L.append(f"| {r['M']}x{r['N']} | {r['kind']} | {r['ours_flushed_GBs']:.0f} | {r['single_flushed_GBs']:.0f} | "
                     f"{r['torch_flushed_GBs']:.0f} | {r['triton_flushed_GBs']:.0f} | {r['copy_flushed_GBs']:.0f} | "
                     f"{r['pct_copy_flushed']:.1f} | {r['vs_torch_flushed']:.2f}x |")
        L += ["", "The sweeps (steady µs per call; the chosen one in bold):", "", "| case | clusters (ours) | one CTA per row |",
              "|---|---|---|"]
        for r in rows:
            cells = [", ".join(f"{'**' if c == r[f'{who}_cfg'] else ''}{c}: {1e3 * t:.1f}{'**' if c == r[f'{who}_cfg'] else ''}"
                               for c, t in r[f"{who}_candidates"].items()) for who in ("ours", "single")]
            L.append(f"| {r['M']}x{r['N']} {r['kind']} | {cells[0]} | {cells[1]} |")
        L += ["", "Chosen kernels, from `cuobjdump --dump-sass` (sass.txt) and `ptxas -v`:", "",
              "| kernel | registers | LDG.128 / all LDG | BAR | MAPA | cluster barriers (UCGABAR_*) | local (LDL/STL) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
        for label in dict.fromkeys(f"{r['ours_kernel']} [{r['ours_cfg']}]" for r in rows):
            s, px = sass.get(label, {}), ptxas.get(label, {})
            L.append(f"| {label} | {px.get('registers', '')} | {s.get('LDG.128', '')} / {s.get('LDG', '')} | "
                     f"{s.get('BAR', '')} | {s.get('MAPA', '')} | {s.get('CGABAR', '')} | {s.get('local', '')} |")
    tries = section.get("triton_num_ctas", [])
    if tries:
        L += ["", "Triton's row kernel with `num_ctas` > 1 (64x1048576 f32 sum, in a subprocess): " + "; ".join(
            f"num_ctas={t['num_ctas']}: " + (f"compiled and ran (relative error {t['error']:.1e})" if t["compiled"]
                                             else f"failed ({t['message']})") for t in tries) + "."]
    if section.get("plot"):
        L += ["", "![GB/s against the number of rows](cluster.png)", "",
              "| rows x columns | tile-mlir, clusters | config | one CTA per row | torch |", "|---|---:|---|---:|---:|"]
        for p in section["plot"]:
            L.append(f"| {p['M']}x{p['N']} | {p.get('ours_GBs', 0):.0f} | {p.get('ours_cfg', '')} | "
                     f"{p.get('single_GBs', 0):.0f} | {p['torch_GBs']:.0f} |")
    return L


def plot(results: dict, out, plt) -> list[str]:
    """cluster.png: read GB/s against the number of rows, f32 sums of a fixed total size."""
    points = results.get("cluster", {}).get("plot", [])
    if not points:
        return []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    rows = [p["M"] for p in points]
    for key, label, style in (("ours_GBs", "tile-mlir, a cluster per row", "o-"),
                              ("single_GBs", "tile-mlir, one CTA (16 warps) per row", "s--"),
                              ("torch_GBs", "torch.sum", "^:")):
        ax.semilogx([p["M"] for p in points if key in p], [p[key] for p in points if key in p], style, label=label, base=2)
    copies = [r["copy_GBs"] for r in results.get("cluster", {}).get("rows", [])]
    if copies:
        ax.axhline(0.95 * min(copies), color="k", lw=1, ls="--", label="95% of the copy's rate")
    ax.set_xticks(rows, [str(m) for m in rows])
    ax.set_xlabel(f"rows (f32 sum of {points[0]['M'] * points[0]['N']} elements)")
    ax.set_ylabel("read GB/s")
    ax.set_title("Where clusters start to pay")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "cluster.png", dpi=110)
    plt.close(fig)
    return ["cluster.png"]
