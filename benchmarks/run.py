"""Run the benchmarks on the GPU and write the tables, the plots and the raw log.

    python -m benchmarks.run [--out DIR] [--cache .tile-cache/bench]
                             [--only xwarp,multiwarp,latency,launch,fused,training,rows,cluster,argmax]
                             [--repeats 3] [--deadline 520] [--kernels softmax,...,cross_entropy]
                             [--shapes 64x262144,4096x16384] [--dtypes f32,bf16] [--ncu]

Needs torch, triton, cuda-python, numpy, matplotlib and nvcc (for the CUDA references of
the latency benchmarks); no MLIR: every tile-mlir kernel comes from the compile cache
that ``python -m benchmarks.prepare`` filled, and so do the compile-cost figures
(``<cache>/compile.json``); the fused kernels are ``tile_mlir.kernels``'s, whose
kernels (and their texts, by name) are in that cache too. The sections run in the order of ``SECTIONS``: the
cross-warp step latency, the multi-warp rows (``--repeats`` times), the warp-reduce
latency, the launch overhead, the fused kernels (``--kernels``, ``--shapes``, ``--dtypes``),
the training kernels (``training.py``: backward passes, cross-entropy; the same filters),
the one-warp rows, the long rows over thread-block clusters (``cluster.py``), argmax over
rows and softmax's packed exchange (``argmax.py``); then
the SASS of every reported kernel and the report. Each section starts with a line stamped
with the time. Writes into ``--out`` up to nine files:
``results.md``, ``results.json`` (rewritten after each section), ``raw.txt`` (appended
line by line), ``sass.txt`` and the plots ``rows.png`` (one and several warps per row),
``fused.png``, ``latency.png``, ``overhead.png`` and ``cluster.png``. With ``--ncu`` (ncu on
PATH), the kernels of the targets the run missed are then profiled, one launch each
(``report_limits``): their figures go into ``results["ncu"]``, ``ncu-limits.txt`` and each
missed target's note in results.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from . import fused, training
from . import kernels as K
from . import argmax, cluster, multiwarp, ncu_limits, report, report_limits
from .measure import OPTIONS, log, row_case, run_cuda, triton_row_kernel

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("xwarp", "multiwarp", "latency", "launch", "fused", "training", "rows", "cluster", "argmax")  # in the order they run
DTYPES = ("f32", "bf16")


# --- 1. row reduction, one warp per row -------------------------------------------------


def bench_rows(deadline: float | None = None) -> list[dict]:
    import torch

    triton_kernel = triton_row_kernel()
    results = []
    log.section("1. row reduction, one warp per row or less (read GB/s = M*N*itemsize / median time)")
    last = 0.0
    for case in K.ROW_CASES:
        if deadline is not None and log.elapsed() + last > deadline:
            log(f"  {case} and the cases after it skipped: they would end past the run's {deadline:.0f} s deadline")
            break
        t0 = log.elapsed()
        try:
            results.append(row_case(*case, triton_kernel))
        except Exception:  # noqa: BLE001 - report the case and go on
            log(f"  {case}: failed\n{traceback.format_exc()}")
        torch.cuda.empty_cache()
        last = log.elapsed() - t0
    return results


# --- 2. warp-reduce latency -------------------------------------------------------------

K1, K2 = 100, 1100


def _latency_ours(cfg: K.LatencyConfig) -> dict:
    import torch
    import tile_mlir

    kern = tile_mlir.compile(K.warp_latency(cfg), OPTIONS, backend="cuda")[cfg.name]
    n = 32 * cfg.rows
    if cfg.dtype == "f32":
        a = torch.randn(n, device="cuda")
    else:
        a = torch.randint(-1000, 1000, (n,), device="cuda", dtype=torch.int32)
    b = torch.empty_like(a)
    tm = torch.zeros(32, device="cuda", dtype=torch.int64)
    # one reduction (K = 1) against float64/int64: every lane of a group holds the group's value
    b.fill_(-7)
    kern.launch(1, 32, a, b, tm, 1)
    torch.cuda.synchronize()
    grid = a.view(32, cfg.rows).double() if cfg.dtype == "f32" else a.view(32, cfg.rows).long()
    groups = grid.view(32 // cfg.lanes, cfg.lanes, cfg.rows).sum(1, keepdim=True).expand(-1, cfg.lanes, -1).reshape(32, cfg.rows)
    got = b.view(32, cfg.rows)
    ok = bool(torch.allclose(got.double(), groups.double(), rtol=1e-5, atol=1e-5)) if cfg.dtype == "f32" \
        else bool(torch.equal(got.long(), groups))

    def timed(k: int) -> float:
        samples = []
        for _ in range(7):
            kern.launch(1, 32, a, b, tm, k)
            samples.append(int(tm[0].item()))
        return statistics.median(samples)

    timed(K1)
    cycles = (timed(K2) - timed(K1)) / (K2 - K1)
    return {"name": cfg.name, "cycles": cycles, "ok": ok}


def bench_latency() -> list[dict]:
    log.section("2. warp-reduce latency (cycles per dependent reduction, clock64, 1 warp)")
    try:
        cuda = {r["name"]: r for r in run_cuda("warp_latency.cu")}
    except Exception as e:  # noqa: BLE001 - report and go on without the reference
        log(f"  CUDA reference failed: {e}")
        cuda = {}
    results = []
    for cfg in K.LATENCY_CASES:
        r = _latency_ours(cfg)
        tail = cfg.name.removeprefix("lat_sum_")
        r |= {"dtype": cfg.dtype, "lanes": cfg.lanes, "rows": cfg.rows,
              "cuda_shfl": cuda.get(f"cuda_shfl_{tail}", {}).get("cycles"),
              "cuda_redux": cuda.get(f"cuda_redux_{tail}", {}).get("cycles")}
        r["cuda_ok"] = all(v.get("ok", False) for k, v in cuda.items() if k.endswith(tail))
        log(f"  {cfg.name}: tile-mlir {r['cycles']:6.1f}  cuda shfl {r['cuda_shfl']}  cuda redux {r['cuda_redux']}"
            f"  (checked: ours {r['ok']}, cuda {r['cuda_ok']})")
        results.append(r)
    return results


# --- 3. launch overhead ---------------------------------------------------------------


def bench_launch(n: int = 20000, repeat: int = 5) -> dict:
    import torch
    import triton
    import triton.language as tl
    import tile_mlir

    @triton.jit
    def add_one(A, B, BLOCK: tl.constexpr):
        i = tl.arange(0, BLOCK)
        tl.store(B + i, tl.load(A + i) + 1.0)

    log.section(f"3. launch overhead (host wall time per launch of a 2-array kernel, mean of {n} launches, median of {repeat})")
    kern = tile_mlir.compile(K.launch_probe(), OPTIONS, backend="cuda")["add_one"]
    a = torch.randn(K.LAUNCH_N, device="cuda")
    b = torch.full_like(a, float("nan"))
    bound = kern.bind(1, K.LAUNCH_N, a, b)
    bound()
    torch.cuda.synchronize()
    assert torch.equal(b, a + 1), "add_one is wrong"
    b.fill_(float("nan"))
    add_one[(1,)](a, b, BLOCK=K.LAUNCH_N)
    torch.cuda.synchronize()
    assert torch.equal(b, a + 1), "triton add_one is wrong"

    ways = {
        "tile-mlir bind()() ": bound,
        "tile-mlir launch()": lambda: kern.launch(1, K.LAUNCH_N, a, b),
        "triton launch": lambda: add_one[(1,)](a, b, BLOCK=K.LAUNCH_N),
        "torch a.add_(1)": lambda: a.add_(1.0),
    }
    out = {}
    for name, fn in ways.items():
        for _ in range(1000):
            fn()
        torch.cuda.synchronize()
        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t0) / n * 1e6)
        out[name.strip()] = statistics.median(samples)
        log(f"  {name}: {out[name.strip()]:6.2f} us")
    return out


# --- SASS of the kernels that were reported --------------------------------------------


def _reported_kernels(results: dict) -> dict[str, tuple[str, dict]]:
    """The kernels the results report, by label: (text, compile options)."""
    texts = {}
    for r in results.get("rows", []):
        cfg = next(c for c in K.row_candidates(r["M"], r["N"], r["dtype"], r["kind"]) if c.label() == r["ours_cfg"])
        texts[f"{cfg.name} [{cfg.label()}]"] = (K.row_reduce(cfg), OPTIONS)
    for rows in results.get("multiwarp", {}).get("repeats", []):
        for r in rows:
            cfg = next(c for c in K.cta_row_candidates(r["M"], r["N"], r["dtype"], r["kind"]) if c.label() == r["ours_cfg"])
            texts[f"{cfg.name} [{cfg.label()}]"] = (K.cta_row_reduce(cfg), OPTIONS)
    for cfg in K.LATENCY_CASES:
        texts[cfg.name] = (K.warp_latency(cfg), OPTIONS)
    for fold in K.XWARP_FOLDS:
        texts[f"xwarp_lat_sum_f32_w{K.XWARP_WARPS} [{fold}]"] = (K.cross_warp_latency(), {**OPTIONS, "fold": fold})
    for r in results.get("fused", {}).get("rows", []):
        texts[fused.label(r["kernel"], r["M"], r["N"], r["dtype"])] = (
            fused.kernel_text(r["kernel"], r["M"], r["N"], r["dtype"]), OPTIONS)
    texts.update((label, (text, OPTIONS)) for label, text in cluster.reported_kernels(results).items())
    texts.update((label, (text, {**OPTIONS, "fold": fold})) for label, (text, fold) in argmax.reported_kernels(results).items())
    return texts


def sass_summary(results: dict) -> tuple[dict, str]:
    """cuobjdump --dump-sass of the reported kernels: instruction counts, and the text."""
    import tile_mlir
    from tile_mlir import cache

    tool = shutil.which("cuobjdump")
    if tool is None:
        return {}, "cuobjdump is not on PATH\n"
    summary, dump = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for label, (text, options) in _reported_kernels(results).items():
            art = cache.lookup(text, tile_mlir.Options(**options))
            if art is None or not art.cubin:
                dump.append(f"===== {label}\nnot in the compile cache with options {options}\n")
                continue
            path = Path(tmp) / "k.cubin"
            path.write_bytes(art.cubin)
            sass = subprocess.run([tool, "--dump-sass", str(path)], capture_output=True, text=True).stdout
            ins = [ln for ln in sass.splitlines() if ln.strip().startswith("/*") and "*/" in ln and ";" in ln]
            count = lambda *keys: sum(any(k in ln for k in keys) for ln in ins)  # noqa: E731
            summary[label] = {"instructions": len(ins), "LDG.128": count("LDG.E.128", "LDG.E.ENL2.128"),
                              "LDG": count("LDG"), "STG.128": count("STG.E.128"), "STG": count("STG"),
                              "SHFL": count("SHFL"), "REDUX": count("REDUX"), "BAR": count("BAR."),
                              "LDS": count("LDS"), "STS": count("STS"), "MUFU": count("MUFU"),
                              "MAPA": count("MAPA"), "CGABAR": count("CGABAR"),
                              "local": count("LDL", "STL")}
            dump.append(f"===== {label}\n{sass}")
    return summary, "\n".join(dump)


# --- main -------------------------------------------------------------------------------


def preflight(fused_kernels=(), shapes=None, dtypes=None) -> list[str]:
    """What is wrong with the compile cache, before any GPU time is spent: every kernel of
    ``prepare.all_kernels()`` must be there, built from this tree's compiler source; the
    modules of ``fused_kernels`` must load, and their ``compiled()`` must find every case's
    kernel in the cache (it needs no MLIR, and no CUDA call, to do so)."""
    from tile_mlir import cache
    from tile_mlir.options import Options

    from .prepare import all_kernels

    digest = cache.toolchain_versions()["tile_mlir_source"]
    missing, stale = [], []
    for label, (text, fold) in all_kernels().items():
        art = cache.lookup(text, Options(chip=OPTIONS["chip"], fold=fold))
        if art is None:
            missing.append(label)
        elif art.meta.get("toolchain", {}).get("tile_mlir_source") != digest:
            stale.append(label)
    problems = []
    if missing:
        problems.append(f"{len(missing)} kernel(s) missing from the cache, e.g. {missing[0]}")
    if stale:
        problems.append(f"{len(stale)} kernel(s) built from another version of python/tile_mlir, e.g. {stale[0]}")
    absent = fused.missing(fused_kernels)
    problems += [f"the fused kernel {name} does not load ({why})" for name, why in absent.items()]
    if not problems:
        for name, M, N, dtype in fused.selected(fused_kernels, shapes, dtypes):
            try:
                fused.ours(name, M, N, dtype)
            except Exception as e:  # noqa: BLE001 - reported before the run
                problems.append(f"tile_mlir.kernels.compiled({name!r}, {M}, {N}, {dtype!r}) failed: "
                                f"{type(e).__name__}: {e}")
                break
    return problems


def environment() -> dict:
    import torch
    import triton

    from . import peers

    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
           "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "liger_kernel": peers.liger_version()}
    try:
        import cupy

        env["cupy"] = cupy.__version__
    except Exception as e:  # noqa: BLE001 - the pure-read kernel will say it is missing
        env["cupy"] = f"missing: {type(e).__name__}: {e}"
    try:
        q = "driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu"
        env["nvidia-smi"] = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                                           capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    return env


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "benchmarks"), help="where the results go (default: docs/benchmarks)")
    p.add_argument("--cache", default=str(ROOT / ".tile-cache" / "bench"), help="the compile cache benchmarks.prepare filled")
    p.add_argument("--only", default=",".join(SECTIONS),
                   help=f"sections to run, comma-separated, in this order: {','.join(SECTIONS)} (default: all)")
    p.add_argument("--repeats", type=int, default=3, help="repetitions of the multi-warp section (default 3)")
    p.add_argument("--deadline", type=float, default=520.0,
                   help="seconds: no multi-warp repetition, fused-kernel case or one-warp row case starts that the "
                        "previous one's time says would end after this (default 520); SASS and the report follow")
    every = (*fused.KERNELS, *training.KERNELS)
    p.add_argument("--kernels", default=",".join(every),
                   help="the kernels the sections 'fused' and 'training' run, comma-separated (default: all: "
                        f"{','.join(every)})")
    p.add_argument("--shapes", default=None,
                   help="MxN,MxN,...: the shapes the sections 'fused' and 'training' run (default: all of theirs)")
    p.add_argument("--dtypes", default=",".join(DTYPES), help="f32,bf16: the dtypes of 'fused' and 'training' (default: both)")
    p.add_argument("--ncu", action="store_true",
                   help="then profile the kernels of the missed targets with ncu, for the report (report_limits)")
    args = p.parse_args(argv)
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        p.error(f"unknown section(s) {', '.join(sorted(only - set(SECTIONS)))}; choose from {', '.join(SECTIONS)}")
    asked = args.kernels.split(",")
    if set(asked) - set(every):
        p.error(f"unknown kernel(s) {', '.join(sorted(set(asked) - set(every)))}; choose from {', '.join(every)}")
    kernels = tuple(k for k in fused.KERNELS if k in asked)
    train_kernels = tuple(k for k in training.KERNELS if k in asked)
    dtypes = tuple(d for d in DTYPES if d in args.dtypes.split(","))
    if set(args.dtypes.split(",")) - set(DTYPES) or not dtypes:
        p.error(f"--dtypes takes f32 and/or bf16, got {args.dtypes!r}")
    shapes = None
    if args.shapes:
        try:
            shapes = tuple(tuple(int(v) for v in s.lower().split("x")) for s in args.shapes.split(","))
        except ValueError:
            p.error(f"--shapes takes MxN,MxN,..., got {args.shapes!r}")
        if any(len(s) != 2 for s in shapes):
            p.error(f"--shapes takes MxN,MxN,..., got {args.shapes!r}")
        known = {(M, N) for _, M, N, _ in (*fused.CASES, *training.CASES)}
        if set(shapes) - known:
            p.error(f"unknown shape(s) {', '.join(f'{M}x{N}' for M, N in sorted(set(shapes) - known))}; choose from "
                    f"{', '.join(f'{M}x{N}' for M, N in sorted(known))}")
    os.environ["TILE_MLIR_CACHE_DIR"] = str(Path(args.cache).resolve())
    sys.path.insert(0, str(ROOT / "python"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log.to(out / "raw.txt")

    problems = preflight(kernels if "fused" in only else (), shapes, dtypes)
    if problems:
        log(f"not started: the compile cache {args.cache} or the fused kernels do not fit this tree: "
            f"{'; '.join(problems)}. Run `python -m benchmarks.prepare` where MLIR is, after the last change to "
            "python/, and carry the cache.")
        return 1
    env = environment()
    log("environment:", json.dumps(env))
    log(f"sections: {', '.join(s for s in SECTIONS if s in only)}; multi-warp repetitions: {args.repeats}; "
        f"fused kernels: {', '.join(kernels)}; training kernels: {', '.join(train_kernels)}; shapes: "
        f"{args.shapes or 'all'}; dtypes: {', '.join(dtypes)}; deadline {args.deadline:.0f} s; output: {out}")
    compile_report = json.loads((Path(args.cache) / "compile.json").read_text())
    results = {"env": env, "compile": compile_report}
    benches = {"xwarp": multiwarp.bench_cross_warp, "multiwarp": lambda: multiwarp.bench_multiwarp(args.repeats, args.deadline),
               "latency": bench_latency, "launch": bench_launch, "fused": lambda: fused.bench_fused(args.deadline, kernels, shapes, dtypes),
               "training": lambda: training.bench_training(args.deadline, train_kernels, shapes, dtypes),
               "rows": lambda: bench_rows(args.deadline),
               "cluster": lambda: cluster.bench_cluster(args.deadline),
               "argmax": lambda: argmax.bench_argmax(args.deadline)}
    for name in SECTIONS:
        if name in only:
            try:
                results[name] = benches[name]()
            except Exception:  # noqa: BLE001 - one failing benchmark must not lose the others
                log(f"benchmark {name} failed:\n{traceback.format_exc()}")
            (out / "results.json").write_text(json.dumps(results, indent=1))  # what there is so far
    try:
        results["sass"], sass_text = sass_summary(results)
        (out / "sass.txt").write_text(sass_text)
        log.section("SASS of the reported kernels (instruction counts)")
        for label, s in results["sass"].items():
            log(f"  {label}: {s}")
    except Exception:  # noqa: BLE001
        log(f"SASS summary failed:\n{traceback.format_exc()}")

    (out / "results.json").write_text(json.dumps(results, indent=1))
    if args.ncu:
        profile_misses(results, args.cache, out)
    try:
        report.write(results, out, log)
        targets = report.targets(results)
    except Exception:  # noqa: BLE001 - results.json is written: `python -m benchmarks.report` can retry
        log(f"report failed:\n{traceback.format_exc()}")
        return 1
    log.section("targets")
    for t in targets:
        log(f"  {'met   ' if t['met'] else 'MISSED'} {t['target']}: {t['figure']}")
    log(f"\nsummary: {sum(t['met'] for t in targets)}/{len(targets)} targets met in {log.elapsed():.0f} s; "
        f"wrote {out}/results.md")
    return 0


def profile_misses(results: dict, cache: str, out: Path) -> None:
    """ncu figures of the kernels behind the targets this run missed (``report_limits``):
    into ``results["ncu"]`` and ``out/ncu-limits.txt``."""
    try:
        todo = report_limits.cases([t["key"] for t in report.targets(results) if not t["met"]], results)
        log.section(f"ncu: the kernels of the missed targets ({len(todo)} launches)")
        run = ncu_limits.profile(todo, cache) if todo else None
        if run is None:
            log("no profile: " + ("ncu is not on PATH" if todo else "no missed target has a kernel to profile"))
            return
        log(run["text"])
        results["ncu"] = run["rows"]
        (out / "ncu-limits.txt").write_text(f"{run['text']}\n\n--- ncu stdout\n{run['stdout']}\n--- stderr\n{run['stderr']}\n")
        (out / "results.json").write_text(json.dumps(results, indent=1))
    except Exception:  # noqa: BLE001 - the timings stand without the profile
        log(f"ncu profile failed:\n{traceback.format_exc()}")


if __name__ == "__main__":
    sys.exit(main())
