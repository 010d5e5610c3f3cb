"""What limits a kernel, from Nsight Compute: the figures behind a missed target.

    PYTHONPATH=python python3 -m benchmarks.ncu_limits [--cache .bench-cache] [--out DIR]
        [--kernels rmsnorm,layernorm,logsumexp] [--shapes 4096x4096,16384x1024,16384x1000]
        [--dtypes f32,bf16] [--no-triton] [--argmax results.json] [--softmax]

On the GPU machine, with the compile cache ``benchmarks.prepare`` filled. Like
``benchmarks.ncu_bytes`` (whose child process launches the kernels, one each between
``cudaProfilerStart`` and ``cudaProfilerStop``), with more metrics (``LIMITS``): the
kernel's duration, DRAM and SM throughput as a share of the peak, the issue slots used,
achieved and theoretical occupancy, registers, and the warp stall reasons (warps stalled
per issued instruction, the largest first). The cases, in order, for each shape and dtype:

* ``copy`` (``torch.add(x, 0, out=y)``) and ``read`` (the pure-read kernel), the ceilings;
* ours (``tile_mlir.kernels``'s kernel on the plan the library chooses) and, unless
  ``--no-triton``, the Triton peer of benchmark 5 (autotuned before the profiled launch),
  for every kernel asked for;
* with ``--backward``, each backward of ``tile_mlir.kernels`` asked for (its row kernel,
  then, for the norms, the column sums: two kernels a call);
* with ``--argmax results.json`` (a ``benchmarks.run`` output holding benchmark 7), for
  each argmax shape and dtype of it: the fastest configuration of ours and of Triton's;
* with ``--softmax``, for each dtype, benchmark 7's softmax forms at its shape (one
  1024-thread CTA a row: ``softmax:two``, ``softmax:packed``, ``softmax:packed_lanes``,
  ``softmax:packed_named``), then the library's ``K.softmax`` and ``K.logsumexp`` on their
  plans with the (max, sum) pair in two exchanges and in one (``pair:softmax:two``, ...),
  after the copy and the pure read at that shape: where the one exchange's time goes.

It prints one line per case and writes ``DIR/ncu-limits.txt`` (with ncu's CSV) and
``DIR/ncu-limits.json``. About 1-3 minutes for 40 kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import fused
from .ncu_bytes import METRICS, ROOT, parse_csv

# name in the report -> ncu metric
FIGURES = {
    "us": "gpu__time_duration.sum",
    "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "issue_pct": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "theoretical_pct": "sm__maximum_warps_per_active_cycle_pct",
    "registers": "launch__registers_per_thread",
    "grid": "launch__grid_size",
    "block": "launch__block_size",
    "instructions": "smsp__inst_executed.sum",  # warp instructions executed (reported in millions)
}
STALLS = ("long_scoreboard", "barrier", "membar", "short_scoreboard", "wait", "lg_throttle", "mio_throttle",
          "math_pipe_throttle", "no_instruction", "not_selected", "selected", "dispatch_stall", "drain",
          "branch_resolving", "sleeping", "imc_miss", "misc")
STALL_METRIC = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
BACKWARD = ("softmax_backward", "rmsnorm_backward", "layernorm_backward")
LIMITS = (*METRICS, *FIGURES.values(), *(STALL_METRIC.format(s) for s in STALLS))


def cases(kernels, dtypes, shapes, triton: bool = True, argmax: dict | None = None, backward=(),
          softmax: bool = False) -> list[dict]:
    """What the child launches, in order: one call each (module docstring)."""
    out = []
    for dtype in dtypes:
        for M, N in shapes:
            out += [{"what": "copy", "M": M, "N": N, "dtype": dtype}, {"what": "read", "M": M, "N": N, "dtype": dtype}]
            for name in kernels:
                out.append({"what": name, "M": M, "N": N, "dtype": dtype})
                if triton:
                    out.append({"what": f"triton:{name}", "M": M, "N": N, "dtype": dtype})
            out += [{"what": f"backward:{name}", "M": M, "N": N, "dtype": dtype} for name in backward]
    for row in (argmax or {}).get("argmax", {}).get("rows", []):
        M, N, dtype = row["M"], row["N"], row["dtype"]
        out += [{"what": "read", "M": M, "N": N, "dtype": dtype},
                {"what": f"argmax:{row['ours_cfg']}", "M": M, "N": N, "dtype": dtype},
                {"what": f"argmax-triton:{row['triton_cfg']}", "M": M, "N": N, "dtype": dtype}]
    if softmax:
        from .argmax import SOFTMAX_SHAPE, softmax_configs

        M, N = SOFTMAX_SHAPE
        for dtype in dtypes:
            out += [{"what": w, "M": M, "N": N, "dtype": dtype} for w in ("copy", "read")]
            out += [{"what": f"softmax:{c.who}", "M": M, "N": N, "dtype": dtype} for c in softmax_configs(dtype)]
            out += [{"what": f"pair:{name}:{who}", "M": M, "N": N, "dtype": dtype}
                    for name in ("softmax", "logsumexp") for who in ("two", "packed")]
    return out


def figures(kernel: dict) -> dict:
    """One profiled kernel's figures: ``FIGURES``' names, DRAM GB/s, and the stall reasons
    (warps stalled per issued instruction) from the largest."""
    out = {name: kernel.get(metric) for name, metric in FIGURES.items()}
    rd, wr, t = kernel.get(METRICS[0]), kernel.get(METRICS[1]), out["us"]
    out["us"] = None if t is None else t / 1e3
    out["instructions"] = None if out["instructions"] is None else out["instructions"] / 1e6  # millions, all warps
    out["dram_GBs"] = None if None in (rd, wr, t) or not t else (rd + wr) / t
    stalls = {s: kernel[STALL_METRIC.format(s)] for s in STALLS if STALL_METRIC.format(s) in kernel}
    out["stalls"] = dict(sorted(stalls.items(), key=lambda kv: -kv[1]))
    return out


def line(c: dict, f: dict) -> str:
    """A case's figures in one line."""
    def num(key, fmt):
        return "n/a" if f.get(key) is None else fmt.format(f[key])

    what = c["what"] + (f" [{c['plan']}]" if "plan" in c else "")
    top = ", ".join(f"{s} {v:.2f}" for s, v in list(f["stalls"].items())[:4])
    return (f"{what:<44} {c['M']}x{c['N']} {c['dtype']:<4} {num('us', '{:7.2f}')} us  DRAM {num('dram_GBs', '{:5.0f}')} GB/s "
            f"{num('dram_pct', '{:4.1f}')}% of peak  SM {num('sm_pct', '{:4.1f}')}%  issue {num('issue_pct', '{:4.1f}')}%  "
            f"warps {num('occupancy_pct', '{:4.1f}')}% (max {num('theoretical_pct', '{:4.1f}')}%)  "
            f"{num('registers', '{:.0f}')} regs  {num('instructions', '{:.1f}M')} instructions  "
            f"grid {num('grid', '{:.0f}')} x {num('block', '{:.0f}')}  stalls: {top}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ncu_limits", description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", default=str(ROOT / ".bench-cache"))
    p.add_argument("--out", help="write ncu-limits.txt and ncu-limits.json here")
    p.add_argument("--kernels", default="rmsnorm,layernorm,logsumexp")
    p.add_argument("--shapes", default="4096x4096,16384x1024,16384x1000")
    p.add_argument("--dtypes", default="f32,bf16")
    p.add_argument("--no-triton", action="store_true", help="leave out the Triton peers")
    p.add_argument("--argmax", help="a benchmarks.run results.json with benchmark 7: its fastest configurations")
    p.add_argument("--softmax", action="store_true",
                   help="benchmark 7's softmax forms and the library's pair, in one exchange and in two")
    p.add_argument("--backward", default="", help=f"of {','.join(BACKWARD)}: tile_mlir.kernels' backward at each shape")
    args = p.parse_args(argv)
    kernels = tuple(k for k in args.kernels.split(",") if k)
    backward = tuple(k for k in args.backward.split(",") if k)
    if set(backward) - set(BACKWARD):
        p.error(f"unknown backward(s) {', '.join(sorted(set(backward) - set(BACKWARD)))}")
    if set(kernels) - set(fused.KERNELS):
        p.error(f"unknown kernel(s) {', '.join(sorted(set(kernels) - set(fused.KERNELS)))}")
    try:
        shapes = tuple(tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",") if s)
    except ValueError:
        p.error(f"--shapes takes MxN,... (e.g. 4096x4096,16384x1024), got {args.shapes!r}")
    if any(len(s) != 2 for s in shapes):
        p.error(f"--shapes takes MxN,... (e.g. 4096x4096,16384x1024), got {args.shapes!r}")
    argmax = None
    if args.argmax:
        try:
            argmax = json.loads(Path(args.argmax).read_text())
        except (OSError, ValueError) as e:
            p.error(f"--argmax: {args.argmax} is not a readable benchmarks.run results.json ({e})")
        if "argmax" not in argmax:
            p.error(f"--argmax: {args.argmax} has no benchmark 7 (argmax) section")
    os.environ["TILE_MLIR_CACHE_DIR"] = str(Path(args.cache).resolve())
    todo = cases(kernels, tuple(args.dtypes.split(",")), shapes, not args.no_triton, argmax, backward, args.softmax)
    run = profile(todo, args.cache)
    if run is None:
        print("ncu is not on PATH: no figures", file=sys.stderr)
        return 1
    print(run["text"])
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "ncu-limits.txt").write_text(f"{run['text']}\n\n--- ncu stdout\n{run['stdout']}\n--- stderr\n{run['stderr']}\n")
        (out / "ncu-limits.json").write_text(json.dumps(run["rows"], indent=1))
    return 0 if run["ok"] else 1


def profile(todo: list[dict], cache) -> dict | None:
    """Profile the cases ``todo`` (``cases``' form) under ncu, each launched once by a child
    process; None where ncu is not on PATH. Returns ``rows`` (a case with its kernel's
    ``figures``), ``text`` (a line each), ncu's ``stdout`` and ``stderr``, and ``ok``.
    ``benchmarks.run --ncu`` calls it for the kernels of the targets a run missed."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return None
    metrics = list(LIMITS)
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "cases.json"
        for _ in range(3):  # a metric this ncu does not know fails the whole run: left out, and said so
            manifest.write_text(json.dumps(todo))
            cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", ",".join(metrics),
                   "--csv", "--print-units", "base", sys.executable, "-m", "benchmarks.ncu_bytes", "--cache",
                   str(cache), "--child", str(manifest)]
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                                  env={**os.environ, "TILE_MLIR_CACHE_DIR": str(Path(cache).resolve()),
                                       "PYTHONPATH": f"{ROOT / 'python'}:{os.environ.get('PYTHONPATH', '')}"})
            errors = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.startswith("==ERROR==")]
            unknown = [m for m in metrics if any(m in ln for ln in errors)]
            if done.returncode == 0 or not unknown:
                break
            print(f"ncu does not know {', '.join(unknown)}: run again without", file=sys.stderr, flush=True)
            metrics = [m for m in metrics if m not in unknown]
        todo = json.loads(manifest.read_text())
    launched = [c for c in todo if "error" not in c]
    try:
        kernels_seen = parse_csv(done.stdout, metrics)
    except ValueError as e:
        kernels_seen = []
        print(f"ncu's output did not parse ({e}); ncu exited {done.returncode}\n{done.stderr[-3000:]}", file=sys.stderr)
    lines, rows = [], []
    expected = sum(c.get("kernels", 1) for c in launched)
    if len(kernels_seen) != expected:
        lines.append(f"warning: ncu profiled {len(kernels_seen)} kernel(s) for {expected} launch(es): the pairing "
                     "below follows launch order and may be off")
    seen = iter(kernels_seen)
    for c in launched:
        for i, k in zip(range(c.get("kernels", 1)), seen):
            part = c if c.get("kernels", 1) == 1 else {**c, "what": f"{c['what']} #{i + 1} {k['name'][:24]}"}
            f = figures(k)
            rows.append({**part, "kernel": k["name"], **f})
            lines.append(line(part, f))
    lines += [f"{c['what']} {c['M']}x{c['N']} {c['dtype']}: not launched ({c['error']})" for c in todo if "error" in c]
    text = "\n".join([f"What limits each kernel (ncu {' '.join(cmd[1:5])}; stalls: warps stalled per issued "
                      "instruction, the 4 largest):", *lines])
    return {"rows": rows, "text": text, "stdout": done.stdout, "stderr": done.stderr,
            "ok": done.returncode == 0 and bool(kernels_seen)}

if __name__ == "__main__":
    sys.exit(main())
