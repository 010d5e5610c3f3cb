"""The report's part for benchmark 6, the training kernels: targets and section 6 of
results.md, from ``results["training"]`` (``training.bench_training``).

Targets, per kernel, shape and dtype (steady timing):

* backward passes (softmax, RMSNorm, LayerNorm): >= 90% of the copy's rate and >= 1.3x the
  best peer (torch, torch.compile, Liger: the fastest that gave a figure);
* cross-entropy fwd+bwd: >= 1.8x Liger and >= 85% of the copy's rate.

Ours "not built" (the functional API lacks the function), failed or not run misses the
target, and the figure says why; the peers' figures are in the table all the same.
``NOTES`` (keys ``train-<kernel>[-<M>x<N>[-<dtype>]]``) holds what limits each miss.
"""

from __future__ import annotations

from . import training as T
from .report_fused import PEER_TITLES, liger_line, peer_cell

BWD_PCT_COPY, BWD_VS_BEST = 90.0, 1.3
CE_VS_LIGER, CE_PCT_COPY = 1.8, 85.0
_NCU_BWD = (
    "ncu (2026-12-02-m/ncu-limits-backward.txt, one call each, the measured plans of that run): the norms' row "
    "kernels are bound by the loads they keep in flight, not by DRAM's peak: they hold 62-168 registers a thread, "
    "one or two CTAs an SM, so 18-50% of the warp slots are filled, and waiting on a load (long scoreboard) or on "
    "a barrier is the largest stall; DRAM runs at 57-81% of its peak where the copy reaches 74-85%. At 4096x4096 "
    "f32 RMSNorm 49.3 us at 78.8% (the copy 30.8 us for two thirds of the bytes); at 4096x16384 bf16 RMSNorm "
    "136.4 us at 60.5%, LayerNorm 144.5 us at 57.0% (128 registers, one 512-thread CTA an SM). The column sums "
    "add 3.5-8.4 us a call (reading the partial rows at 11-44% of the DRAM peak).")
_PLANS = (
    "Up to the run of 2026-12-02-b the backward's plans were its forward's registers tables; from 2026-12-02-f "
    "they are the plans benchmarks.plan_search measured fastest for the backward itself at N = 512, 4096 and "
    "16384, and from 2026-12-02-m at 65536 too, each with and without the next row loaded early "
    "(docs/training-kernels.md, 'Measured backward plans', 'The next row, early').")
NOTES: dict[str, str] = {
    "train-cross_entropy": (
        "Ours is K.cross_entropy_with_grad: the loss and dlogits from one read of the logits (2 x M x V x b bytes, "
        "as Liger), on the plans plan_search measured for it (docs/cross-entropy.md, 'Measured plans': clusters of "
        "8-16 CTAs of 256-512 threads at these vocabularies, 32 f32 or 64 bf16 logits a thread, one exp a logit, the "
        "(max, sum) pair in one exchange or two, no exchange of the sum of x at label smoothing 0). What limits it: "
        "each CTA loads its part, waits on the row's cluster exchanges, then computes and stores, with nothing of "
        "another row in flight; the exchanges are the fixed cost (leaving out one, Σx's, gave 7-11%), and the bf16 "
        "kernels keep 127 registers (two CTAs of 256 threads an SM), so the search found the shortest rows of a "
        "cluster fastest at 77% (bf16) and 93% (f32) of copy, and 61-69% / 74-85% at 131072-262144 columns. "
        "benchmarks/long_rows.cu bounds this load-reduce-store structure at 72-87.5% of cudaMemcpy; a persistent "
        "cluster that loads the next row while it reduces this one is not built. 'ours_two' (the forward kernel, "
        "then the backward's) is in the run for comparison."),
    "train-rmsnorm_backward-1024x65536": (
        "The measured plans (benchmarks.plan_search at 65536): clusters of 8 CTAs, f32 512 threads with the next "
        "row loaded early, bf16 256 threads without; 2546 and 2003 GB/s the run before, on the rule's CL8 W32 E8 "
        "with nothing of the next row in flight. ncu (2026-12-02-m/ncu-limits-backward.txt): f32 217.5 us at 75.5% "
        "of the DRAM peak, on 120 CTAs (15 clusters of 8, what cuOccupancyMaxActiveClusters allows: 12 SMs idle), "
        "118 registers, one CTA an SM, 25% of the warp slots; bf16 131.8 us at 61.8%, 240 CTAs of 256 threads at "
        "128 registers. Waiting on a load is the largest stall: a thread holds its row and the next and no more "
        "fit in its registers. Loads that hold no registers (cp.async or TMA into shared memory) would keep more "
        "in flight; not built."),
    "train-layernorm_backward-1024x65536": (
        "As RMSNorm's backward at this shape (the measured clusters of 8, the next row early; f32 two exchanges a "
        "row, bf16 its two sums in one), with the mean's subtraction and a second sum: ncu f32 253.1 us at 65.1% "
        "of the DRAM peak (128 registers), bf16 156.0 us at 52.3% (125 registers), 25% of the warp slots."),
    "train-layernorm_backward": (
        _NCU_BWD + " LayerNorm's row kernel keeps x, dy, the weight and the partial dw and db rows of its columns "
        "in registers: 4096x16384 f32 128 registers and 12 bytes spilled (16 warps of 32 elements, one CTA an SM: "
        "226.7 us at 73.9% of the DRAM peak), bf16 128 registers. " + _PLANS),
    "train-rmsnorm_backward": (
        _NCU_BWD + " "
        "ptxas (sm_90a): 4096x16384 f32 62 registers, no spill (1024-thread CTAs, one an SM). " + _PLANS + " The dw "
        "column sums now split the partial rows over 16 warps a CTA where N is short (docs/training-kernels.md): "
        "9.6-11.9 us at 4096x512 (20.5 before), 7.7-8.3 us at 4096x4096 (benchmarks.column_sums)."),
    "train-softmax_backward": (
        "f32 is at the copy's rate (102%) and ties Liger and torch.compile (1.02x): at the ceiling no kernel can "
        "be 1.3x another that is also there. bf16: 48 bytes spilled by the two-rows plan in this run (one row a "
        "CTA now, no spill)."),
    "train-rmsnorm_backward-4096x16384-bf16": (
        "One row of 16 warps a CTA with the next row loaded early (the search's fastest within its spill rule: 60 "
        "bytes; the fastest of all, W8 E64, spilled 120); bf16 moves half the bytes of f32 for the same f32 math and "
        "reductions a row, so the per-row fixed cost (the CTA barriers, the loads' latency) is twice the share: "
        "ncu 136.4 us at 60.5% of the DRAM peak, barrier the largest stall."),
}


def _rows(results: dict) -> list[dict]:
    return results.get("training", {}).get("rows", [])


def targets(results: dict, add) -> None:
    tr = results.get("training")
    if not tr:
        return
    why = {(f["kernel"], f["M"], f["N"], f["dtype"]): f"failed ({f['error'][:120]})" for f in tr.get("failed", [])}
    why |= {(f["kernel"], f["M"], f["N"], f["dtype"]): "skipped (deadline)" for f in tr.get("skipped", [])}
    for name, M, N, dtype in (tuple(c) for c in tr.get("cases", T.CASES)):
        key = f"train-{name}-{M}x{N}-{dtype}"
        if name == "cross_entropy":
            target = f"cross-entropy fwd+bwd {M}x{N} {dtype}: >= {CE_VS_LIGER}x Liger and >= {CE_PCT_COPY:.0f}% of copy"
        else:
            target = (f"{T.TITLES[name]} {M}x{N} {dtype}: >= {BWD_PCT_COPY:.0f}% of copy and >= {BWD_VS_BEST}x the "
                      "best peer")
        r = next((r for r in _rows(results) if (r["kernel"], r["M"], r["N"], r["dtype"]) == (name, M, N, dtype)), None)
        if r is None:
            add(key, target, f"not measured: {why.get((name, M, N, dtype), 'not run')}", False)
            continue
        add(key, target, *figure(r))


def figure(r: dict) -> tuple[str, bool]:
    """(figure, met) of one case."""
    status = r.get("status", {})
    peers = ", ".join(f"{PEER_TITLES[w]} {peer_cell(r, w)}" for w in T.PEERS)
    if "ours_ms" not in r:
        return f"ours: {status.get('ours', 'not run')} (peers, GB/s: {peers})", False
    ok = status.get("ours", "ok") == "ok"
    text = f"{r['pct_copy']:.1f}% of copy (ours {r['ours_GBs']:.0f} GB/s, copy {r['copy_GBs']:.0f})"
    if r["kernel"] == "cross_entropy":
        if "vs_liger" in r:
            text += f", {r['vs_liger']:.2f}x Liger ({r['liger_GBs']:.0f} GB/s)"
            met = r["vs_liger"] >= CE_VS_LIGER and r["pct_copy"] >= CE_PCT_COPY
        else:
            text += f", Liger: {status.get('liger', 'not run')}"
            met = False
    elif "vs_best" in r:
        text += f", {r['vs_best']:.2f}x the best peer ({PEER_TITLES[r['best_peer']]}, {r[r['best_peer'] + '_GBs']:.0f} GB/s)"
        met = r["vs_best"] >= BWD_VS_BEST and r["pct_copy"] >= BWD_PCT_COPY
    else:
        text += ", no peer gave a figure"
        met = False
    text += f" (L2-flushed: {r.get('pct_copy_flushed', float('nan')):.1f}%)"
    if "pct_copy_kernels" in r:  # the same kernels as bound launches: without the API call's host work
        text += (f"; the kernels alone (bound launches): {r['ours_kernels_GBs']:.0f} GB/s, "
                 f"{r['pct_copy_kernels']:.1f}% of copy")
    text += f"; peers, GB/s: {peers}"
    if not ok:
        text += f"; ours {status['ours']}"
    return text, met and ok


def markdown(results: dict) -> list[str]:
    tr = results.get("training")
    if not tr:
        return []
    rows = _rows(results)
    tol = tr.get("tolerance", {})
    L = ["", "## 6. Training kernels", "",
         "Backward passes of softmax, RMSNorm (dx, dw) and LayerNorm (dx, dw, db), and cross-entropy forward + "
         "backward (mean over the rows, int64 targets), f32 and bf16. GB/s = bytes / time: backward: x (softmax: y) "
         "and dy read, dx written, the weight (and bias) read and dw (and db) written once; cross-entropy: the logits "
         "read once and dlogits written once. *copy* = `y.copy_(x)` of x (read + written).", "",
         "- **tile-mlir**: the functional API on torch tensors (`K.softmax_backward`, `K.rms_norm_backward`, "
         "`K.layer_norm_backward`, `K.cross_entropy` + `K.cross_entropy_backward`), the norms' statistics from torch; "
         "*not built* where the API lacks the function.",
         "- **torch**: autograd's backward of `torch.softmax`, `F.rms_norm`, `F.layer_norm` (the forward once, the "
         "backward per timed call, `retain_graph=True`); `F.cross_entropy` forward and backward per call.",
         "- **torch.compile**: the same forward under `torch.compile(dynamic=False)`, its compiled backward "
         "(AOTAutograd's donated buffers off, which `retain_graph` needs).",
         f"- **Liger**: {liger_line(tr.get('liger', '?'))}: `LigerSoftmaxFunction`, `LigerRMSNormFunction` "
         "(`in_place=False`), `LigerLayerNormFunction`, `liger_cross_entropy` (its gradient is computed in the forward "
         "and written over the logits); it refuses rows over 65536 columns in the norms and softmax.", "",
         f"Every implementation was checked against float64 on every output (relative L2 error < {tol.get('f32', '?')} "
         f"in f32, < {tol.get('bf16', '?')} in bf16; cross-entropy: the loss and dlogits); *wrong* marks a peer off "
         "the reference (still timed and counted).", "",
         "| kernel | shape | dtype | tile-mlir GB/s | torch GB/s | torch.compile GB/s | Liger GB/s | copy GB/s | % copy | "
         "best peer | vs best | L2-flushed: ours / best peer |",
         "|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in rows:
        ours = peer_cell(r, "ours") if "ours_GBs" in r else r.get("status", {}).get("ours", "not run")
        best = r.get("best_peer")
        flushed = (f"{r['ours_flushed_GBs']:.0f} / {r[best + '_flushed_GBs']:.0f}"
                   if "ours_flushed_GBs" in r and best and f"{best}_flushed_GBs" in r else "n/a")
        L.append(f"| {T.TITLES[r['kernel']]} | {r['M']}x{r['N']} | {r['dtype']} | {ours} | "
                 + " | ".join(peer_cell(r, w) for w in T.PEERS)
                 + f" | {r['copy_GBs']:.0f} | {_num(r.get('pct_copy'), '{:.1f}')} | {PEER_TITLES.get(best, 'none')} | "
                 f"{_num(r.get('vs_best'), '{:.2f}x')} | {flushed} |")
    statuses = sorted({f"{'tile-mlir' if w == 'ours' else PEER_TITLES[w]}: {st}" for r in rows
                       for w, st in r.get("status", {}).items() if st != "ok"})
    if statuses:
        L += ["", "Without a figure, or off the reference, and why:", "", *[f"- {st}" for st in statuses]]
    gaps = [f"- **{T.label(f['kernel'], f['M'], f['N'], f['dtype'])} failed**: {f['error']}" for f in tr.get("failed", [])]
    if tr.get("skipped"):
        gaps.append("- skipped, past the run's deadline: "
                    + ", ".join(T.label(f["kernel"], f["M"], f["N"], f["dtype"]) for f in tr["skipped"]))
    if gaps:
        L += ["", "Not measured:", "", *gaps]
    return L


def _num(x, fmt="{:.0f}") -> str:
    return "n/a" if x is None else fmt.format(x)
