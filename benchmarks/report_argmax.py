"""The report's part for benchmark 7 (argmax over rows; softmax's pair in one exchange).

``targets`` adds the section's targets (per shape, f32 and bf16: >= 95% of the pure-read
kernel's rate, >= 1.0x torch.argmax and >= 1.0x Triton; softmax: the packed exchange is
faster than two), and ``markdown`` gives its section of results.md.
"""

from __future__ import annotations

import re

PCT_READ, VS_TORCH, VS_TRITON = 95.0, 1.0, 1.0


def targets(results: dict, add) -> None:
    """Add (key, target, figure, met) for every shape the run measured."""
    section = results.get("argmax", {})
    rows = section.get("rows", [])
    for M, N in dict.fromkeys((r["M"], r["N"]) for r in rows):
        case = [r for r in rows if (r["M"], r["N"]) == (M, N)]
        pct = min(case, key=lambda r: r["pct_read"])
        tor = min(case, key=lambda r: r["vs_torch"])
        tri = min(case, key=lambda r: r["vs_triton"])
        dtypes = " and ".join(r["dtype"] for r in case)
        add(f"argmax-{M}x{N}", f"argmax over rows, {M}x{N} {dtypes}: >= {PCT_READ:.0f}% of the pure read, >= {VS_TORCH}x "
            f"torch.argmax and >= {VS_TRITON}x Triton",
            f"worst {pct['pct_read']:.1f}% of the pure read ({pct['dtype']}: ours {pct['ours_GBs']:.0f} GB/s "
            f"[{pct['ours_cfg']}], read {pct['read_GBs']:.0f}), {tor['vs_torch']:.3f}x torch ({tor['dtype']}: "
            f"{tor['torch_GBs']:.0f} GB/s), {_ratio(tri['vs_triton'])}x Triton ({tri['dtype']}: {tri['triton_GBs']:.0f} GB/s "
            f"[{tri['triton_cfg']}])",
            pct["pct_read"] >= PCT_READ and tor["vs_torch"] >= VS_TORCH and tri["vs_triton"] >= VS_TRITON)
    for s in section.get("softmax", []):
        add(f"softmax-packed-{s['dtype']}", f"softmax {s['M']}x{s['N']} {s['dtype']}, one 1024-thread block per row: "
            "the (max, sum) pair in one exchange is faster than two",
            f"two exchanges {1e3 * s['two_ms']:.1f} us, one {1e3 * s['packed_ms']:.1f} us (the warps' pairs by the "
            f"combiner; the pair at every step: {_ms(s, 'packed_lanes')} us; the warps' pairs, then named reductions: "
            f"{_ms(s, 'packed_named')} us): the fastest one ({s.get('saved_by', 'packed')}) saves {s['saved_us']:.1f} us "
            f"({s['saved_pct']:.1f}%)", s["saved_us"] > 0)
    for s in section.get("library_pair", []):
        add(f"pair-{s['kernel']}-{s['M']}x{s['N']}-{s['dtype']}",
            f"K.{s['kernel']} {s['M']}x{s['N']} {s['dtype']} on its plan ({s['plan']}): the (max, sum) pair in one "
            "exchange is faster than two",
            f"two exchanges {1e3 * s['two_ms']:.1f} us, one {1e3 * s['packed_ms']:.1f} us: saves {s['saved_us']:.1f} us "
            f"({s['saved_pct']:.1f}%)", s["saved_us"] > 0)


def _ratio(x: float) -> str:
    """A ratio to 3 decimals, or 4 where 3 would round a miss of 1.0 up to it (0.9997 is not 1.000)."""
    return f"{x:.4f}" if x < 1.0 <= round(x, 3) else f"{x:.3f}"


def _ms(s: dict, who: str) -> str:
    """``who``'s µs in the softmax case ``s``, or "-" where the run did not time it."""
    return f"{1e3 * s[who + '_ms']:.1f}" if who + "_ms" in s else "-"


def markdown(results: dict, sass: dict, ptxas: dict) -> list[str]:
    """The lines of section 7 of results.md."""
    section = results.get("argmax", {})
    rows, soft = section.get("rows", []), section.get("softmax", [])
    if not rows and not soft:
        return []
    L = ["", "## 7. Argmax over rows", "",
         ("M x N row-major -> the M row argmax indices; read GB/s = M·N·itemsize / time (steady, as section 1). Ours "
          "(`benchmarks/argmax_kernels.py`): W warps per row, warp w reading the w-th W-th of the row in chunks of "
          "32 lanes x C 16-byte vectors (`tile.copy`, P: chunk k+1 loaded before chunk k is reduced), one warp-scope "
          '`tile.reduce` with `kind = "argmax"` per chunk (the chunk\'s maximum and its position, the first of equals), '
          "the warp's running best over its chunks (the first maximum, the first NaN), or (F) a thread-scope one per "
          "chunk, each lane keeping its running best, and one warp-scope combiner reduction of the lanes' (value, "
          'column) a row; then one cta-scope `kind = "argmax"` over the W warps\' bests, or (I, with F) the warps\' '
          "chunks interleaved, so that the block reads its row front to back (chunk k of warp w at columns "
          "(k·W + w)·32·C·V), and one cta-scope combiner reduction of the warps' (value, column); the fastest of a "
          "sweep over (W, RB rows per block, C, F, I), its three fastest also launched capped at O CTAs an SM (O4, O5: "
          "dynamic shared memory at a 100 KB shared-memory carveout, `argmax.bind`). *K.argmax*: the library's kernel (`tile_mlir.kernels.selection_kernels`: the "
          "row in registers on logsumexp's plan, one reduction of the threads' (value, column) a row). "
          "*Pure read*: `benchmarks/ceiling.py`'s kernel (16-byte loads, nothing written) on the same inputs, the "
          "fastest of its configurations; *% read* = its time over ours. torch: `torch.argmax(x, dim=1)`. "
          "Triton: one program per row, `tl.argmax` over the row where one block holds it, else a running "
          "(value, index) per position over chunks and one `tl.reduce` of the pairs (ties to the lower index), the "
          "fastest of (BLOCK_N, num_warps) in " + "; ".join(
              f"N={n}: " + ", ".join(f"({b}, {w})" for b, w in cs) for n, cs in section.get("triton_configs", {}).items())
          + ". Every implementation's indices equal torch's (the first maximum; bf16 rows hold many tied maxima) on "
          "fresh `torch.randn` inputs before it is timed."), ""]
    if rows:
        L += ["| shape | dtype | tile-mlir GB/s | config | pure read GB/s | config | % read | torch GB/s | vs torch | "
              "Triton GB/s | Triton config | vs Triton | K.argmax GB/s | plan | tied maxima |",
              "|---|---|---:|---|---:|---|---:|---:|---:|---:|---|---:|---:|---|---:|"]
        for r in rows:
            lib = f"{r['library_GBs']:.0f} | {r['library_cfg']}" if "library_GBs" in r else " | "
            L.append(f"| {r['M']}x{r['N']} | {r['dtype']} | {r['ours_GBs']:.0f} | {r['ours_cfg']} | {r['read_GBs']:.0f} | "
                     f"{r['read_cfg']} | {r['pct_read']:.1f} | {r['torch_GBs']:.0f} | {r['vs_torch']:.2f}x | "
                     f"{r['triton_GBs']:.0f} | {r['triton_cfg']} | {r['vs_triton']:.2f}x | {lib} | {r['ties']} |")
        L += ["", "L2 flushed (`do_bench`), the same kernels:", "",
              "| shape | dtype | tile-mlir GB/s | pure read GB/s | % read | torch GB/s | Triton GB/s | vs torch | vs Triton |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            L.append(f"| {r['M']}x{r['N']} | {r['dtype']} | {r['ours_flushed_GBs']:.0f} | {r['read_flushed_GBs']:.0f} | "
                     f"{r['pct_read_flushed']:.1f} | {r['torch_flushed_GBs']:.0f} | {r['triton_flushed_GBs']:.0f} | "
                     f"{r['vs_torch_flushed']:.2f}x | {r['vs_triton_flushed']:.2f}x |")
        L += ["", "The sweeps (steady µs per call; the chosen one in bold):", "",
              "| case | tile-mlir argmax | Triton |", "|---|---|---|"]
        for r in rows:
            swept = {who: r[f"{who}_candidates"] | (r.get("ours_capped", {}) if who == "ours" else {})
                     for who in ("ours", "triton")}  # ours: the finalists capped (O4, O5) too
            cells = [", ".join(f"{'**' if c == r[f'{who}_cfg'] else ''}{c}: {1e3 * t:.1f}{'**' if c == r[f'{who}_cfg'] else ''}"
                               for c, t in swept[who].items()) for who in ("ours", "triton")]
            L.append(f"| {r['M']}x{r['N']} {r['dtype']} | {cells[0]} | {cells[1]} |")
        L += ["", "Chosen kernels, from `cuobjdump --dump-sass` (sass.txt) and `ptxas -v`:", "",
              "| kernel | registers | LDG.128 / all LDG | SHFL | BAR | local (LDL/STL) |", "|---|---:|---:|---:|---:|---:|"]
        labels = [f"{r['ours_kernel']} [{r['ours_cfg']}]" for r in rows]
        for label in dict.fromkeys(labels):
            s, px = sass.get(label, {}), ptxas.get(re.sub(r" O\d+\]$", "]", label), {})  # a cap: the same kernel
            L.append(f"| {label} | {px.get('registers', '')} | {s.get('LDG.128', '')} / {s.get('LDG', '')} | "
                     f"{s.get('SHFL', '')} | {s.get('BAR', '')} | {s.get('local', '')} |")
    if soft:
        L += ["", "### Softmax: the (max, sum of exp) pair in one exchange or two", "",
              ("Softmax of each row, one block of 1024 threads (32 warps) per row, the row in registers "
               "(`argmax_kernels.softmax_rows`): each thread's max and sum of exp, then the row's, either by two "
               'cta-scope reductions (`kind = "maximum"`, then `"sum"` of the rescaled sums: two exchanges through '
               "scratch, two barriers) or by one combiner reduction (one exchange): of the warps' (max, sum) pairs, "
               "each warp's own by two named butterflies first (the library's form, `forward.row_max_sum`), or of "
               "the threads' pairs, the pair's combine in every butterfly step too; or the warps' pairs written once "
               "to shared memory, one barrier, then lane l takes warp l's pair and named warp reductions finish "
               "(the max, then the rescaled sums: QuACK's block reduction); then the output. Steady µs per "
               "call, the four timed in turns (`timing.interleaved`); GB/s = bytes read + written / time; BAR: the "
               "CTA barriers in the PTX (`bar.sync`, from `benchmarks.prepare`) / in the SASS (`BAR.`, from "
               "`cuobjdump`); saved: two exchanges' time less the fastest one-exchange form's."), "",
              "| shape | dtype | two exchanges µs | GB/s | BAR | one: the warps' pairs µs | GB/s | BAR | "
              "one: the pair at every step µs | BAR | one: then named µs | BAR | saved µs | saved % |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for s in soft:
            b2, b1, bl, bn = (_barriers(ptxas.get(s.get(f"{who}_kernel"), {}), sass.get(s.get(f"{who}_kernel"), {}))
                              for who in ("two", "packed", "packed_lanes", "packed_named"))
            L.append(f"| {s['M']}x{s['N']} | {s['dtype']} | {1e3 * s['two_ms']:.1f} | {s['two_GBs']:.0f} | {b2} | "
                     f"{1e3 * s['packed_ms']:.1f} | {s['packed_GBs']:.0f} | {b1} | {_ms(s, 'packed_lanes')} | {bl} | "
                     f"{_ms(s, 'packed_named')} | {bn} | {s['saved_us']:.1f} | {s['saved_pct']:.1f} |")
    lib = section.get("library_pair", [])
    if lib:
        L += ["", "### The library's kernels: the pair in one exchange or two", "",
              ("`K.softmax` and `K.logsumexp` (`tile_mlir.kernels.forward`) on their plans, a cluster of CTAs a row or "
               "one CTA of several warps, built with `pair=False` (a `maximum` over the row's threads, then a `sum` of "
               "the rescaled sums: two exchanges through scratch, and over a cluster through distributed shared "
               "memory) and `pair=True` (each warp's (max, sum) by "
               "two named butterflies, then one combiner reduction of the warps' pairs, `forward.online_softmax`: one "
               "exchange; `RowPlan.packs_pair` says where it is the default). "
               "Steady µs per call, the two timed in turns; GB/s = bytes read + written / time; BAR: the CTA "
               "barriers in the PTX, two exchanges / one (`benchmarks.prepare`)."), "",
              "| kernel | shape | dtype | plan | two exchanges µs | GB/s | one exchange µs | GB/s | BAR | saved µs | saved % |",
              "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for s in lib:
            bars = [ptxas.get(s.get(f"{who}_kernel"), {}).get("ptx_bar", "") for who in ("two", "packed")]
            L.append(f"| {s['kernel']} | {s['M']}x{s['N']} | {s['dtype']} | {s['plan']} | {1e3 * s['two_ms']:.1f} | "
                     f"{s['two_GBs']:.0f} | {1e3 * s['packed_ms']:.1f} | {s['packed_GBs']:.0f} | "
                     f"{bars[0]} / {bars[1]} | {s['saved_us']:.1f} | {s['saved_pct']:.1f} |")
    return L


def _barriers(ptx: dict, sass: dict) -> str:
    """A kernel's CTA barriers, ``PTX / SASS``; a blank side where the run has no figure."""
    return f"{ptx.get('ptx_bar', '')} / {sass.get('BAR', '')}"
