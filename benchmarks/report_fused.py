"""The report's part for benchmark 5, the fused kernels: targets, section 5 of results.md
and ``fused.png`` (a panel per kernel), from ``results["fused"]`` (``fused.bench_fused``).

Targets, per kernel, shape and dtype (steady timing): >= 95% of the copy's rate (GB/s
counting bytes read + written) and >= 1.0x the best peer of the same run (Triton, torch,
torch.compile, Liger: the fastest that gave a figure); at 64x262144, >= 2x the best peer.
A case that was not measured (failed, skipped, not run) counts as missed, and the figure
says which. ``NOTES`` holds what limits each missed target, keyed
``fused-<kernel>-<M>x<N>[-<dtype>]`` (the longest prefix of a target's key that has one).
"""

from __future__ import annotations

from . import fused as F

PCT_COPY, VS_BEST = 95.0, 1.0
VS_BEST_AT = {(64, 262144): 2.0}  # shapes with their own bar against the best peer
PEER_TITLES = {"triton": "Triton", "torch": "torch", "compile": "torch.compile", "liger": "Liger"}

# What limits each missed fused-kernel target (keys: fused-<kernel>-<M>x<N>[-<dtype>]),
# shown under the target table only for targets the run missed; from the plan search and
# the runs of 2026-12-01 (docs/runs/2026-12-01-h200-d.md).
_LONG_ROWS = (
    "Rows over one CTA's registers are a thread-block cluster per row (the measured plans, "
    "python/tile_mlir/kernels/measured_plans.json, searched again with the push exchange and one exp: softmax "
    "f32 65536 3772 GB/s, 91% of copy). Each reduction stops the CTA at its barrier and its mbarrier wait while "
    "none of its loads is in flight; the CTAs of a wave load, reduce and store in lockstep. A hand-written CUDA "
    "softmax of the same structure (benchmarks/long_rows.cu, H200) bounds it: with the push, 86-87.5% of "
    "cudaMemcpy at 1024x65536 even with one reduction and no exp; a persistent grid with the next row in flight "
    "through shared memory (cp.async) was no faster. bf16 has twice the elements a byte: its exps and "
    "conversions (MUFU, 16 a clock an SM) weigh twice as much."
)
_WIDE_CTA = (
    "4096x16384 is one CTA per row (softmax and logsumexp f32: 32 warps asking for 2 CTAs per SM, "
    ".minnctapersm, 32 registers; the others 8-32 warps of 16-64 elements a thread, the search's fastest). "
    "At 94-98% of copy the remaining differences to the best peer are 0.2-4% (run-to-run spread is about 1%). "
    "logsumexp bf16 writes one value a row: its traffic is the read, and the copy's rate counts a write too."
)
_NCU = "ncu (2026-12-02-e/ncu-limits.txt: one launch each, clocks not locked)"
_READ_ONLY = (
    "logsumexp writes one value a row: its traffic is the read, whose ceiling is the pure-read kernel of the same "
    "run, not the copy. At these shapes (16-64 MB, kernels of 5-20 us) the pure read ran at 87-88% of the copy's "
    "rate in bf16 and 96% in f32 (2026-12-02-c, -d), and logsumexp at 87-88% of the pure read in bf16, 98% in f32. "
    f"{_NCU}: in bf16 logsumexp takes 11.4-11.6 us against the pure read's 10.5-10.7, and it is bound by "
    "instruction issue, not by memory: 67-71% of the issue slots are busy (the pure read's: 10%). A bf16 byte "
    "holds twice the elements of an f32 byte, and each element costs an unpack, the subtraction and product of "
    "the exponent, an ex2 on the MUFU pipe (16 a clock an SM; math-pipe-throttle stalls show) and an add. "
    "Triton's logsumexp keeps 68-83% of its issue slots busy and takes 13.5-18.4 us.")
_SHORT_ROWS = (
    f"{_NCU}: at 16-64 MB a kernel lasts 11-33 us, and even the copy kernel (torch.add(x, 0, out=y)) keeps only "
    "55-58% (bf16) and 71-74% (f32) of the DRAM peak over its duration: ramp-up and the last wave weigh. In that "
    "run ours take about the copy kernel's time: RMSNorm bf16 16.2-16.9 us against the copy's 16.2-17.0, f32 "
    "30.7-32.9 against 30.6-32.0 (Triton's RMSNorm 16.7-29.9 and 30.6-35.9). On the plans of the registers "
    "table two kernels took longer, each for its own reason. LayerNorm bf16 (17.9-18.6 us) is bound by "
    "instruction issue: 67-70% of the issue slots are busy, against RMSNorm's 40-43% (a mean and a centred "
    "variance before the output, each element unpacked and converted); the measured plans leave that as it is "
    "(17.8-18.6 us, 67-70%). The f32 rows of 1000-1024 columns took one warp a row (32 elements a thread, 48-62 "
    "registers), so 45-54% of the warp slots were filled, and stalled on their loads (long scoreboard: 16-56 "
    "stalled warps per issued instruction): LayerNorm f32 16384x1024 took 33.1 us against Triton's 31.6. The "
    "short-row search (2026-12-02-g) gives them four warps a row, 8 elements a thread: 22-37 registers, 68-91% "
    "of the warp slots filled, LayerNorm f32 16384x1024 31.2 us against the copy kernel's 31.0 "
    "(2026-12-02-e/ncu-limits-short-plans.txt).")
NOTES: dict[str, str] = {f"fused-logsumexp-{M}x{N}": _READ_ONLY for M, N in ((4096, 4096), (16384, 1024), (16384, 1000))}
for _k in ("softmax", "rmsnorm", "layernorm"):
    for _M, _N in ((4096, 4096), (16384, 1024), (16384, 1000)):
        NOTES[f"fused-{_k}-{_M}x{_N}"] = _SHORT_ROWS
for _k in F.KERNELS:
    NOTES[f"fused-{_k}-4096x16384"] = _WIDE_CTA
    NOTES[f"fused-{_k}-1024x65536"] = _LONG_ROWS
    NOTES[f"fused-{_k}-64x262144"] = _LONG_ROWS + (
        " At 64 rows of 1 MiB the GPU holds 14 clusters of 16 CTAs at once (112 of 132 SMs): 4.6 rounds, each "
        "loading, reducing and storing in lockstep; the hand-written kernel reaches 72% of cudaMemcpy there with one "
        "reduction and no exp, the structure's ceiling, not the code's.")


def _rows(results: dict) -> list[dict]:
    return results.get("fused", {}).get("rows", [])


def _shape(r: dict) -> str:
    return f"{r['M']}x{r['N']}"


def bar(M: int, N: int) -> float:
    """The shape's bar against the best peer."""
    return VS_BEST_AT.get((M, N), VS_BEST)


def liger_line(version: str) -> str:
    """Which Liger-Kernel the run had: its version (from the wheel), or why none."""
    if version.startswith("missing"):
        return f"Liger-Kernel (**{version}**)"
    return f"Liger-Kernel {version} (from its wheel)"


def peer_cell(r: dict, who: str, mode: str = "") -> str:
    """A peer's GB/s, or why it has none (missing, refused, failed), as a table cell."""
    status = r.get("status", {}).get(who, "not run")
    if f"{who}_{mode}GBs" in r:
        return f"{r[f'{who}_{mode}GBs']:.0f}" + ("" if status == "ok" else " (wrong)" if status.startswith("wrong") else "")
    return status.split(":")[0]


def targets(results: dict, add) -> None:
    """Add (key, target, figure, met) for every kernel, shape and dtype the section was asked for."""
    fz = results.get("fused")
    if not fz:
        return
    why = {(f["kernel"], f["dtype"], f["M"], f["N"]): f"failed ({f['error'][:120]})" for f in fz.get("failed", [])}
    why |= {(f["kernel"], f["dtype"], f["M"], f["N"]): "skipped (deadline)" for f in fz.get("skipped", [])}
    shapes = [tuple(s) for s in fz.get("shapes", F.SHAPES)]
    for name in fz.get("kernels", F.KERNELS):
        for dtype in fz.get("dtypes", F.DTYPES):
            for M, N in shapes:
                r = next((r for r in _rows(results) if (r["kernel"], r["dtype"], r["M"], r["N"]) == (name, dtype, M, N)), None)
                need = bar(M, N)
                target = (f"{F.TITLES[name]} {M}x{N} {dtype}: >= {PCT_COPY:.0f}% of copy and >= {need:.1f}x the best "
                          "peer")
                key = f"fused-{name}-{M}x{N}-{dtype}"
                if r is None:
                    add(key, target, f"not measured: {why.get((name, dtype, M, N), 'not run')}", False)
                    continue
                add(key, target, *figure(r, need))


def figure(r: dict, need: float) -> tuple[str, bool]:
    """(figure, met) of one case's target."""
    unavailable = [f"{PEER_TITLES[w]} {r['status'][w][:100]}" for w in F.PEERS
                   if f"{w}_ms" not in r and w in r.get("status", {})]
    wrong = [f"{PEER_TITLES[w]} {r['status'][w][:80]}" for w in F.PEERS if r.get("status", {}).get(w, "").startswith("wrong")]
    text = f"{r['pct_copy']:.1f}% of copy (ours {r['ours_GBs']:.0f} GB/s, copy {r['copy_GBs']:.0f}"
    text += f", pure read {r['read_GBs']:.0f})" if "read_GBs" in r else ")"
    if "vs_best" in r:
        best = r["best_peer"]
        text += f", {r['vs_best']:.3f}x the best peer ({PEER_TITLES[best]}, {r[best + '_GBs']:.0f} GB/s)"
        text += f" (L2-flushed: {r['pct_copy_flushed']:.1f}%, {r.get('vs_best_flushed', float('nan')):.3f}x)"
    else:
        text += ", no peer gave a figure"
    if unavailable:
        text += "; no figure: " + "; ".join(unavailable)
    if wrong:
        text += "; timed but off the reference: " + "; ".join(wrong)
    met = r["pct_copy"] >= PCT_COPY and r.get("vs_best", 0.0) >= need
    return text, met


def markdown(results: dict, sass: dict, ptxas: dict) -> list[str]:
    """The lines of section 5 of results.md."""
    fz = results.get("fused")
    if not fz:
        return []
    rows = _rows(results)
    tol = fz.get("tolerance", F.TOLERANCE)
    tri = fz.get("triton_configs", {})
    eps = sorted({f"{r['eps']:g}" for r in rows if r["kernel"] in ("rmsnorm", "layernorm")})
    L = ["", "## 5. Fused kernels", "",
         "Softmax, RMSNorm (with weight), LayerNorm (with weight and bias) and logsumexp over the rows of an M x N "
         "row-major matrix, f32 and bf16 (bf16 in, f32 math, bf16 out; logsumexp writes one value per row). "
         "GB/s = bytes read + written / time: the input, the output, the weight and bias once. *copy* = `y.copy_(x)` "
         "of the input, its GB/s counting bytes read + written; *% copy* = our GB/s over the copy's.", "",
         "- **tile-mlir**: `tile_mlir.kernels` (built with `tile.copy` + `tile.reduce` + arith/math), the kernel its "
         "`compiled(kernel, M, N, dtype)` picks for the shape, from the compile cache; its grid and block are listed. "
         "The norms also write their per-row statistics (4 or 8 bytes a row, not counted).",
         "- **Triton**: one program per row with the whole row in registers (`BLOCK = next_pow2(N)`), modelled on "
         "Triton's fused-softmax and layer-norm tutorials, RMSNorm and logsumexp in the same style "
         "(benchmarks/triton_fused.py), autotuned over num_warps by BLOCK: "
         + ", ".join(f"{b}: {'/'.join(map(str, ws))}" for b, ws in tri.items()) + ".",
         "- **torch**: `torch.softmax`, `F.rms_norm`, `F.layer_norm`, `torch.logsumexp`"
         + (f" (the norms with our epsilon, {', '.join(eps)})" if eps else "") + ".",
         "- **torch.compile**: the same torch expression under `torch.compile(dynamic=False)`, compiled once per case "
         "(after `torch._dynamo.reset()`), the compile outside the timing.",
         f"- **Liger**: {liger_line(fz.get('liger', '?'))}, `LigerSoftmaxFunction`, "
         "`LigerRMSNormFunction` (casting mode `llama`), `LigerLayerNormFunction`; it has no logsumexp and refuses "
         "rows over 65536 columns: *missing* / *refused* in the tables, never a figure.",
         "- **pure read**: the CUDA kernel of benchmarks/ceiling.py on the same inputs (GB/s of one read of x).", "",
         "A peer's cell says *wrong* when its result is off the reference by more than the tolerance (it is still timed "
         "and counted). *best peer* is the fastest peer with a figure.", "",
         "Every implementation was checked against torch in float64 on fresh `torch.randn` inputs (weights and bias "
         "too) with a NaN-poisoned output before timing: ||y − ref|| / ||ref|| < "
         f"{tol.get('f32', '?')} in f32, < {tol.get('bf16', '?')} with bf16 outputs (twice the worst rounding to "
         "bf16), no NaN. Timings as in section 1: **steady** (rotating input sets of ≥ 512 MB, each with its own "
         "output; the targets use it) and **L2 flushed** (`do_bench`).", ""]
    for name in F.KERNELS:
        mine = [r for r in rows if r["kernel"] == name]
        if not mine:
            continue
        L += ["", f"### {F.TITLES[name]}", "",
              "| shape | dtype | tile-mlir GB/s | grid x block | Triton GB/s (config) | torch GB/s | torch.compile GB/s | "
              "Liger GB/s | copy GB/s | pure read GB/s | % copy | best peer | vs best |",
              "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
        for r in mine:
            L.append(f"| {_shape(r)} | {r['dtype']} | {r['ours_GBs']:.0f} | {_dims(r['ours_grid'])} x {_dims(r['ours_block'])} | "
                     f"{peer_cell(r, 'triton')} ({_tuned(r)}) | {peer_cell(r, 'torch')} | {peer_cell(r, 'compile')} | "
                     f"{peer_cell(r, 'liger')} | {r['copy_GBs']:.0f} | {_num(r.get('read_GBs'))} | {r['pct_copy']:.1f} | "
                     f"{PEER_TITLES.get(r.get('best_peer'), 'none')} | {_num(r.get('vs_best'), '{:.3f}x')} |")
    if rows:
        L += ["", "L2 flushed (`do_bench`), the same kernels:", "",
              "| kernel | shape | dtype | tile-mlir | Triton | torch | torch.compile | Liger | copy | pure read | % copy | "
              "vs best |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        L += [f"| {r['kernel']} | {_shape(r)} | {r['dtype']} | {r['ours_flushed_GBs']:.0f} | "
              + " | ".join(peer_cell(r, w, "flushed_") for w in F.PEERS)
              + f" | {r['copy_flushed_GBs']:.0f} | {_num(r.get('read_flushed_GBs'))} | {r['pct_copy_flushed']:.1f} | "
              f"{_num(r.get('vs_best_flushed'), '{:.3f}x')} |" for r in rows]
        statuses = sorted({f"{PEER_TITLES[w]}: {st}" for r in rows for w, st in r.get("status", {}).items()
                           if st != "ok" and not st.startswith("wrong")})
        if statuses:
            L += ["", "Peers without a figure, and why:", "", *[f"- {st}" for st in statuses]]
        L += ["", "![fused kernels](fused.png)", "",
              "Our kernels, from `cuobjdump --dump-sass` (sass.txt) and `ptxas -v`; the errors against float64 of the "
              "checks, ours / Triton / torch / torch.compile / Liger:", "",
              "| kernel | registers | stack | LDG.128 / all LDG | STG.128 / all STG | SHFL | BAR | MUFU | local (LDL/STL) | "
              "errors |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in rows:
            label = F.label(r["kernel"], r["M"], r["N"], r["dtype"])
            s, px = sass.get(label, {}), ptxas.get(label, {})
            g = lambda d, k: "n/a" if d.get(k) is None else str(d[k])  # noqa: E731
            errs = " / ".join(f"{r['errors'].get(who, float('nan')):.1e}" for who in ("tile-mlir", *F.PEERS))
            L.append(f"| {label} | {g(px, 'registers')} | {g(px, 'stack')} | {g(s, 'LDG.128')} / {g(s, 'LDG')} | "
                     f"{g(s, 'STG.128')} / {g(s, 'STG')} | {g(s, 'SHFL')} | {g(s, 'BAR')} | {g(s, 'MUFU')} | "
                     f"{g(s, 'local')} | {errs} |")
        tune = [r["triton_tune_s"] for r in rows if "triton_tune_s" in r]
        if tune:
            L += ["", f"Triton's autotuning (its compiles and timings, on the first call of each case) took "
                  f"{sum(tune):.0f} s over the {len(tune)} cases ({min(tune):.1f}-{max(tune):.1f} s each)."]
    gaps = [f"- **{F.label(f['kernel'], f['M'], f['N'], f['dtype'])} failed**: {f['error']}" for f in fz.get("failed", [])]
    gaps += [f"- **{name}** not run: its module does not load ({why})" for name, why in fz.get("absent", {}).items()]
    if fz.get("skipped"):
        gaps.append("- skipped, past the run's deadline: "
                    + ", ".join(F.label(f["kernel"], f["M"], f["N"], f["dtype"]) for f in fz["skipped"]))
    if gaps:
        L += ["", "Not measured:", "", *gaps]
    return L


def _num(x, fmt="{:.0f}") -> str:
    return "n/a" if x is None else fmt.format(x)


def _tuned(r: dict) -> str:
    """Triton's chosen num_warps, and the autotuner's time for each it tried."""
    times = r.get("triton_candidates_us") or {}
    if "triton_cfg" not in r:
        return "n/a"
    return r["triton_cfg"] + (f" ({', '.join(f'{c}: {t:.1f}' for c, t in times.items())})" if times else "")


def _dims(d) -> str:
    """A grid or block size as the report writes it: 1024, or 64x2."""
    if isinstance(d, (list, tuple)):
        d = [int(v) for v in d]
        while len(d) > 1 and d[-1] == 1:
            d.pop()
        return "x".join(map(str, d))
    return str(d)


def plot(results: dict, out, plt) -> list[str]:
    """fused.png: a panel per kernel, TB/s (read + written) of ours, Triton and torch per
    shape and dtype, and the copy's rate."""
    rows = _rows(results)
    names = [n for n in F.KERNELS if any(r["kernel"] == n for r in rows)]
    if not names:
        return []
    fig, axes = plt.subplots(len(names), 1, figsize=(12, 3.6 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        mine = [r for r in rows if r["kernel"] == name]
        xs = range(len(mine))
        w = 0.16
        bars = (("ours_GBs", "tile-mlir"), *((f"{p}_GBs", PEER_TITLES[p]) for p in F.PEERS))
        for i, (key, who) in enumerate(bars):
            ax.bar([x + (i - 2) * w for x in xs], [r.get(key, 0.0) / 1e3 for r in mine], w, label=who)
        ax.plot(list(xs), [r.get("read_GBs", float("nan")) / 1e3 for r in mine], "r_", markersize=22, mew=2,
                label="pure read (one read of x)")
        ax.plot(list(xs), [r["copy_GBs"] / 1e3 for r in mine], "k_", markersize=22, mew=2, label="copy")
        ax.set_xticks(list(xs), [f"{_shape(r)}\n{r['dtype']}" for r in mine], fontsize=7)
        ax.set_ylabel("TB/s read + written")
        ax.set_title(F.TITLES[name], fontsize=10)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(out / "fused.png", dpi=100)
    plt.close(fig)
    return ["fused.png"]
