"""Run the benchmarks on the GPU and write the table, the plots and the raw log.

    python -m benchmarks.run [--out docs/benchmarks] [--cache .tile-cache/bench] [--only rows,latency,launch]

Needs torch, triton, cuda-python, numpy, matplotlib and nvcc (for the CUDA reference of
the warp-latency benchmark); no MLIR: every tile-mlir kernel comes from the compile cache
that ``python -m benchmarks.prepare`` filled, and so do the compile-cost figures
(``<cache>/compile.json``). Writes into ``--out``: ``results.md``, ``raw.txt``, ``sass.txt``
and the PNG plots.
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

from . import kernels as K
from . import report

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = {"chip": "sm_90a"}  # what benchmarks.prepare compiled with


class Log:
    """print() that also keeps every line for raw.txt."""

    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, *parts) -> None:
        line = " ".join(str(p) for p in parts)
        self.lines.append(line)
        print(line, flush=True)


log = Log()


def _bench(fn) -> float:
    """Median time of fn in ms (triton.testing.do_bench: CUDA events, L2 flushed between runs)."""
    import triton.testing

    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


# --- 1. row reduction -----------------------------------------------------------------


def _triton_row_kernel():
    import triton
    import triton.language as tl

    configs = [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w)
        for bm, bn, w in ((1, 1024, 4), (2, 1024, 4), (1, 2048, 8), (1, 4096, 8), (2, 2048, 8),
                          (8, 128, 2), (16, 128, 4), (32, 128, 4), (64, 128, 8))
    ]

    def prune(configs, named_args, **kwargs):
        N, M = named_args["N"], named_args["M"]
        return [c for c in configs if N % c.kwargs["BLOCK_N"] == 0 and M % c.kwargs["BLOCK_M"] == 0]

    @triton.autotune(configs=configs, key=["M", "N", "IS_MAX"], prune_configs_by={"early_config_prune": prune})
    @triton.jit
    def row_reduce(X, Y, M, N, IS_MAX: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.arange(0, BLOCK_N)
        if IS_MAX:
            acc = tl.full([BLOCK_M, BLOCK_N], float("-inf"), tl.float32)
        else:
            acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for start in range(0, N, BLOCK_N):
            x = tl.load(X + rows[:, None] * N + (start + cols)[None, :]).to(tl.float32)
            if IS_MAX:
                acc = tl.maximum(acc, x)
            else:
                acc += x
        if IS_MAX:
            out = tl.max(acc, axis=1)
        else:
            out = tl.sum(acc, axis=1)
        tl.store(Y + rows, out)

    return row_reduce


def _row_ok(y, ref, kind: str) -> tuple[bool, float]:
    """(passes, error): sums by ||y - ref|| / ||ref|| < 1e-5 in float64, maxima exactly."""
    import torch

    y = y.double()
    if torch.isnan(y).any():
        return False, float("nan")
    if kind == "max":
        err = (y - ref).abs().max().item()
        return err == 0.0, err
    err = ((y - ref).norm() / ref.norm()).item()
    return err < 1e-5, err


def bench_rows() -> list[dict]:
    import torch

    triton_kernel = _triton_row_kernel()
    results = []
    log("\n== 1. row reduction (read GB/s = M*N*itemsize / median time)")
    for case in K.ROW_CASES:
        try:
            results.append(_row_case(*case, triton_kernel))
        except Exception:  # noqa: BLE001 - report the case and go on
            log(f"  {case}: failed\n{traceback.format_exc()}")
        torch.cuda.empty_cache()
    return results


ROTATE_BYTES = 512 << 20  # input sets rotated through per timing loop: ~10x the 50 MB L2


def _steady(fns, target_ms: float = 30.0, repeat: int = 5) -> float:
    """Median ms per call of back-to-back calls cycling through ``fns`` (one per input
    set, so that no input is still in L2), timed with CUDA events around the loop."""
    import torch

    for f in fns:
        f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for f in fns:
        f()
    torch.cuda.synchronize()
    per_call = (time.perf_counter() - t0) / len(fns)
    iters = len(fns) * max(2, int(target_ms / 1e3 / per_call / len(fns)))
    samples = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(iters):
            fns[i % len(fns)]()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / iters)
    return statistics.median(samples)


def _row_case(M: int, N: int, dtype: str, kind: str, triton_kernel) -> dict:
    import torch
    import tile_mlir

    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    nbytes = M * N * (4 if dtype == "f32" else 2)
    nbuf = max(2, -(-ROTATE_BYTES // nbytes))
    xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(nbuf)]  # fresh for every case
    ys = [torch.empty(M, device="cuda", dtype=torch.float32) for _ in range(nbuf)]
    x, y = xs[0], ys[0]
    ref = x.double().sum(1) if kind == "sum" else x.double().amax(1)
    row = {"M": M, "N": N, "dtype": dtype, "kind": kind, "bytes": nbytes, "input_sets": nbuf}

    def checked(name, launch):
        y.fill_(float("nan"))
        launch()
        torch.cuda.synchronize()
        ok, err = _row_ok(y, ref, kind)
        if not ok:
            raise AssertionError(f"{name}: wrong result (error {err})")

    # ours: every candidate configuration, checked, then timed; the fastest is reported
    cands = []
    for cfg in K.row_candidates(M, N, dtype, kind):
        kern = tile_mlir.compile(K.row_reduce(cfg), OPTIONS, backend="cuda")[cfg.name]
        bound = [kern.bind(cfg.grid, cfg.block, xs[i], ys[i]) for i in range(nbuf)]
        try:
            checked(f"tile-mlir {cfg.label()}", bound[0])
        except AssertionError as e:
            log(f"  FAIL {e}")
            continue
        cands.append((_steady(bound), cfg, bound))
        log(f"  {M}x{N} {dtype} {kind}: tile-mlir [{cfg.label()}] {cands[-1][0] * 1e3:8.1f} us")
    t_ours, best, best_bound = min(cands, key=lambda c: c[0])
    row |= {"ours_ms": t_ours, "ours_cfg": best.label(), "ours_kernel": best.name,
            "ours_candidates": {c.label(): t for t, c, _ in cands}, "ours_flushed_ms": _bench(best_bound[0])}

    # torch
    if kind == "sum":
        kw = {} if dtype == "f32" else {"dtype": torch.float32}
        torch_fns = [lambda i=i: torch.sum(xs[i], dim=1, **kw) for i in range(nbuf)]
    else:
        torch_fns = [lambda i=i: torch.amax(xs[i], dim=1) for i in range(nbuf)]
    ok, err = _row_ok(torch_fns[0]().float(), ref, kind)
    assert ok, f"torch wrong ({err})"
    row["torch_ms"], row["torch_flushed_ms"] = _steady(torch_fns), _bench(torch_fns[0])

    # Triton (autotuned, with its do_bench, on the first call)
    def tri(i):
        return triton_kernel[lambda meta: (M // meta["BLOCK_M"],)](xs[i], ys[i], M, N, IS_MAX=kind == "max")

    checked("triton", lambda: tri(0))
    tri_fns = [lambda i=i: tri(i) for i in range(nbuf)]
    row["triton_ms"], row["triton_flushed_ms"] = _steady(tri_fns), _bench(tri_fns[0])
    bc = triton_kernel.best_config
    row["triton_cfg"] = f"BM{bc.kwargs['BLOCK_M']} BN{bc.kwargs['BLOCK_N']} w{bc.num_warps}"

    # the bandwidth ceiling: a device-to-device copy of the same tensors
    dsts = [torch.empty_like(x) for _ in range(nbuf)]
    copy_fns = [lambda i=i: dsts[i].copy_(xs[i]) for i in range(nbuf)]
    row["copy_ms"], row["copy_flushed_ms"] = _steady(copy_fns), _bench(copy_fns[0])
    del dsts

    for mode in ("", "flushed_"):
        for who in ("ours", "torch", "triton"):
            row[f"{who}_{mode}GBs"] = nbytes / row[f"{who}_{mode}ms"] / 1e6
        row[f"copy_{mode}GBs"] = 2 * nbytes / row[f"copy_{mode}ms"] / 1e6  # bytes read + written
        row[f"pct_copy_{mode}".rstrip("_")] = 100 * row[f"ours_{mode}GBs"] / row[f"copy_{mode}GBs"]
        row[f"vs_triton_{mode}".rstrip("_")] = row[f"triton_{mode}ms"] / row[f"ours_{mode}ms"]
        row[f"vs_torch_{mode}".rstrip("_")] = row[f"torch_{mode}ms"] / row[f"ours_{mode}ms"]
    log(f"  {M}x{N} {dtype} {kind}: ours {row['ours_GBs']:7.0f} GB/s [{best.label()}]  torch {row['torch_GBs']:7.0f}"
        f"  triton {row['triton_GBs']:7.0f} [{row['triton_cfg']}]  copy {row['copy_GBs']:7.0f}"
        f"  -> {row['pct_copy']:.1f}% of copy, {row['vs_triton']:.3f}x triton, {row['vs_torch']:.3f}x torch"
        f"  | L2 flushed: ours {row['ours_flushed_GBs']:.0f} torch {row['torch_flushed_GBs']:.0f}"
        f" triton {row['triton_flushed_GBs']:.0f} copy {row['copy_flushed_GBs']:.0f}")
    return row


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


def _latency_cuda() -> dict:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "warp_latency"
        subprocess.run([nvcc, "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-o", str(exe),
                        str(Path(__file__).with_name("warp_latency.cu"))], check=True)
        out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {r["name"]: r for r in map(json.loads, out.strip().splitlines())}


def bench_latency() -> list[dict]:
    log("\n== 2. warp-reduce latency (cycles per dependent reduction, clock64, 1 warp)")
    try:
        cuda = _latency_cuda()
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

    log("\n== 3. launch overhead (host wall time per launch of a 2-array kernel, mean of", n, "launches, median of", repeat, ")")
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


def sass_summary(rows: list[dict]) -> tuple[dict, str]:
    """cuobjdump --dump-sass of the reported kernels: instruction counts, and the text."""
    import tile_mlir
    from tile_mlir import cache

    tool = shutil.which("cuobjdump")
    if tool is None:
        return {}, "cuobjdump is not on PATH\n"
    texts = {}
    for r in rows:
        cfg = next(c for c in K.row_candidates(r["M"], r["N"], r["dtype"], r["kind"]) if c.label() == r["ours_cfg"])
        texts[f"{cfg.name} [{cfg.label()}]"] = K.row_reduce(cfg)
    for cfg in K.LATENCY_CASES:
        texts[cfg.name] = K.warp_latency(cfg)
    summary, dump = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for label, text in texts.items():
            art = cache.lookup(text, tile_mlir.Options(**OPTIONS))
            path = Path(tmp) / "k.cubin"
            path.write_bytes(art.cubin)
            sass = subprocess.run([tool, "--dump-sass", str(path)], capture_output=True, text=True).stdout
            ins = [ln for ln in sass.splitlines() if ln.strip().startswith("/*") and "*/" in ln and ";" in ln]
            count = lambda *keys: sum(any(k in ln for k in keys) for ln in ins)  # noqa: E731
            summary[label] = {"instructions": len(ins), "LDG.128": count("LDG.E.128", "LDG.E.ENL2.128"),
                              "LDG": count("LDG"), "SHFL": count("SHFL"), "REDUX": count("REDUX"),
                              "local": count("LDL", "STL")}
            dump.append(f"===== {label}\n{sass}")
    return summary, "\n".join(dump)


# --- main -------------------------------------------------------------------------------


def environment() -> dict:
    import torch
    import triton

    env = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
           "python": platform.python_version(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    try:
        q = "driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu"
        env["nvidia-smi"] = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                                           capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    return env


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "docs" / "benchmarks"))
    p.add_argument("--cache", default=str(ROOT / ".tile-cache" / "bench"))
    p.add_argument("--only", default="rows,latency,launch")
    args = p.parse_args(argv)
    os.environ["TILE_MLIR_CACHE_DIR"] = str(Path(args.cache).resolve())
    sys.path.insert(0, str(ROOT / "python"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))

    env = environment()
    log("environment:", json.dumps(env))
    compile_report = json.loads((Path(args.cache) / "compile.json").read_text())
    results = {"env": env, "compile": compile_report}
    for name, fn in (("rows", bench_rows), ("latency", bench_latency), ("launch", bench_launch)):
        if name in only:
            try:
                results[name] = fn()
            except Exception:  # noqa: BLE001 - one failing benchmark must not lose the others
                log(f"benchmark {name} failed:\n{traceback.format_exc()}")
    try:
        results["sass"], sass_text = sass_summary(results.get("rows", []))
        (out / "sass.txt").write_text(sass_text)
        log("\n== SASS of the reported kernels (instruction counts)")
        for label, s in results["sass"].items():
            log(f"  {label}: {s}")
    except Exception:  # noqa: BLE001
        log(f"SASS summary failed:\n{traceback.format_exc()}")

    (out / "results.json").write_text(json.dumps(results, indent=1))
    report.write(results, out, log)
    (out / "raw.txt").write_text("\n".join(log.lines) + "\n")
    targets = report.targets(results)
    log(f"\nsummary: {sum(t['met'] for t in targets)}/{len(targets)} targets met; wrote {out}/results.md")
    (out / "raw.txt").write_text("\n".join(log.lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
