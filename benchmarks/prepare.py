"""Compile every benchmark kernel into the compile cache, and measure compile cost.

    python -m benchmarks.prepare [--cache .tile-cache/bench] [--jobs N] [--repeat 7]

Run it where MLIR and ptxas are (the development machine). It

0. checks small versions of the row-kernel generators (and section 7's argmax, pure-read
   and softmax kernels) in tile-mlir's CPU interpreter;
1. compiles every kernel ``benchmarks.run`` launches (all row-reduction candidates, the
   warp-latency kernels, the launch probe, and the fused kernels of every shape and dtype
   of ``fused.CASES``, from their modules' ``kernel_text``, and the training kernels of
   ``training.CASES`` whose specs ``tile_mlir.kernels`` has) through ``tile_mlir.compile``
   into the cache, as ``tile_mlir.testing.prepare`` does for the tests;
2. records ``ptxas -v`` (registers, stack, spills) of each kernel, and its PTX's barriers,
   exponentials and shuffles (``ptx_facts``);
3. measures compile cost here (benchmark 4): IR -> cubin for the demonstration and a
   row-reduction kernel (``compiler.build_artifact``, each sample in a fresh process),
   a cache hit (``tile_mlir.compile`` on a warm cache), and ``tile-lower-reduction`` on
   modules of 1, 10, 100 and 1000 reduce ops.

Everything goes to ``<cache>/compile.json``, which ``benchmarks.run`` reads on the GPU.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from . import argmax, cluster, fused, training
from . import kernels as K

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = ROOT / ".tile-cache" / "bench"
CHIP = "sm_90a"
DEMO = ROOT / "examples" / "demo.mlir"


def all_kernels() -> dict[str, tuple[str, str]]:
    """Every kernel the GPU run needs, by a unique label: (text, fold option)."""
    texts = {}
    for case in K.ROW_CASES:
        for cfg in K.row_candidates(*case):
            texts[f"{cfg.name} [{cfg.label()}]"] = (K.row_reduce(cfg), "linear")
    for case in K.CTA_ROW_CASES:
        for cfg in K.cta_row_candidates(*case):
            texts[f"{cfg.name} [{cfg.label()}]"] = (K.cta_row_reduce(cfg), "linear")
    for cfg in K.LATENCY_CASES:
        texts[cfg.name] = (K.warp_latency(cfg), "linear")
    for fold in K.XWARP_FOLDS:
        texts[f"xwarp_lat_sum_f32_w{K.XWARP_WARPS} [{fold}]"] = (K.cross_warp_latency(), fold)
    texts["add_one"] = (K.launch_probe(), "linear")
    absent = fused.missing()
    for name, M, N, dtype in fused.CASES:
        if name not in absent:
            texts[fused.label(name, M, N, dtype)] = (fused.kernel_text(name, M, N, dtype), "linear")
    texts.update(cluster.all_kernels())
    texts.update((label, (text, "linear")) for label, text in training.kernel_texts()[0].items())
    texts.update(argmax.all_kernels())
    return texts


# Small versions of every row-kernel family (one row per warp with rolled, unrolled and
# prefetched chunk loops; several rows per warp in groups of 8 and 16 lanes; f32, bf16),
# run in the CPU interpreter (vector loads included) against numpy.
CHECKS = (
    K.RowConfig(16, 1024, "f32", "sum", C=2, W=2, R=2),
    K.RowConfig(16, 1024, "f32", "max", C=2, W=1, prefetch=True),
    K.RowConfig(16, 512, "f32", "sum", C=1, W=2, unroll_chunks=True),
    K.RowConfig(16, 2048, "bf16", "max", C=2, W=2, prefetch=True),
    K.RowConfig(64, 128, "f32", "sum", G=8, S=2, C=4, W=2, R=2),
    K.RowConfig(64, 128, "bf16", "max", G=16, S=4, C=1, W=2),
)


def small(cfg: K.CtaRowConfig) -> K.CtaRowConfig:
    """``cfg`` on a small matrix: the same W, S, C, R and flags (so the same loops and the
    same cross-warp reduce), 2 blocks (R > 1: 2 per step) and at most 3 chunks per row."""
    per_chunk = cfg.threads * cfg.V * cfg.C
    return dataclasses.replace(cfg, M=cfg.S * cfg.R * 2, N=per_chunk * min(cfg.chunks, 3))


def cta_checks() -> list[K.CtaRowConfig]:
    """Every multi-warp configuration the GPU run may time, each on a small matrix."""
    return list(dict.fromkeys(small(c) for case in K.CTA_ROW_CASES for c in K.cta_row_candidates(*case)))


def check_generators(seed: int | None = 0) -> None:
    """Run CHECKS, ``cta_checks()`` and the cross-warp latency kernel in tile-mlir's CPU
    interpreter on fresh random inputs; raise if one is wrong."""
    import numpy as np

    import tile_mlir

    rng = np.random.default_rng(seed)
    ctas = cta_checks()
    for cfg in (*CHECKS, *ctas):
        text = K.row_reduce(cfg) if isinstance(cfg, K.RowConfig) else K.cta_row_reduce(cfg)
        kernel = tile_mlir.compile(text, backend="interpreter")[cfg.name]
        x = rng.standard_normal((cfg.M, cfg.N)).astype(np.float32)
        arg = x
        if cfg.dtype == "bf16":  # round to bf16 (truncating is fine here) and pass the bits
            arg = (x.view(np.uint32) >> 16).astype(np.uint16)
            x = (arg.astype(np.uint32) << 16).view(np.float32)
        y = np.full(cfg.M, np.nan, np.float32)
        kernel.launch(cfg.grid, cfg.block, arg, y)
        # sums: each row's error against float64, over the sum of its magnitudes (the scale of
        # f32 rounding, which a row's own sum, near 0 by cancellation, is not); maxima: exact
        ref = x.astype(np.float64).sum(1) if cfg.kind == "sum" else x.max(1).astype(np.float64)
        scale = np.abs(x).astype(np.float64).sum(1) if cfg.kind == "sum" else 1.0
        err = (np.abs(y - ref) / scale).max()
        if not (err < 1e-6 if cfg.kind == "sum" else err == 0):
            raise AssertionError(f"{cfg.name} [{cfg.label()}]: wrong in the interpreter (max error {err})")
    for fold in K.XWARP_FOLDS:
        check_cross_warp_latency(rng, fold)
    clusters = cluster.check_generators(rng)
    argmaxes = argmax.check_generators(rng)
    print(f"checked {len(CHECKS)} one-warp, {len(ctas)} multi-warp and {clusters} cluster row-kernel configurations, "
          f"{argmaxes} argmax, pure-read and softmax kernels and the cross-warp latency kernel "
          f"({', '.join(K.XWARP_FOLDS)} fold) in the CPU interpreter")


def check_cross_warp_latency(rng, fold: str) -> None:
    """The latency kernel (its clock reads replaced by 0), K = 1 and K = 3: every thread
    holds sum(A) / 32 after one step, and the mean of A after three."""
    import numpy as np

    import tile_mlir

    W = K.XWARP_WARPS
    kernel = tile_mlir.compile(K.cross_warp_latency(clock=False), {"fold": fold}, backend="interpreter")[f"xwarp_lat_sum_f32_w{W}"]
    a = rng.standard_normal(W).astype(np.float32)
    for steps in (1, 3):
        b, t = np.full(32 * W, np.nan, np.float32), np.zeros(32 * W, np.int64)
        kernel.launch(1, 32 * W, a, b, t, steps)
        want = a.astype(np.float64).sum() / W if steps == 1 else a.astype(np.float64).mean()
        if not (np.all(b == b[0]) and abs(b[0] - want) <= 1e-6 * np.abs(a).sum()):
            raise AssertionError(f"xwarp_lat_sum_f32_w{W} ({fold} fold, K={steps}): wrong in the interpreter: "
                                 f"{b[:3]}..., want {want}")


def _use_cache(path: str) -> None:
    os.environ["TILE_MLIR_CACHE_DIR"] = path


def _compile_one(item: tuple[str, str]) -> dict:
    """Compile (text, fold) into the cache; return ptxas -v's resource line for the kernel,
    and ``ptx_facts``."""
    import tile_mlir
    from tile_mlir import cache

    text, fold = item
    options = tile_mlir.Options(chip=CHIP, fold=fold)
    hit = cache.lookup(text, options) is not None
    tile_mlir.compile(text, options, backend="cuda")
    artifact = cache.lookup(text, options)
    return {"built": not hit, **ptxas_resources(artifact.ptx), **ptx_facts(artifact.ptx)}


def ptx_facts(ptx: str) -> dict:
    """What the PTX holds of a reduction's cost: the CTA barriers (``bar.sync`` /
    ``barrier.sync``; not ``bar.warp.sync``, not the cluster's), the exponentials
    (``ex2.approx``) and the shuffles (``shfl.sync``), each counted once where it is
    written (a loop's body once)."""
    return {"ptx_bar": len(re.findall(r"\b(?:bar|barrier)(?:\.cta)?\.sync\b", ptx)),
            "ptx_ex2": len(re.findall(r"\bex2\.approx\b", ptx)), "ptx_shfl": len(re.findall(r"\bshfl\.sync\b", ptx))}


def ptxas_resources(ptx: str) -> dict:
    """Registers, stack frame and spill bytes from ``ptxas -v``."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        err = subprocess.run([ptxas, "-v", f"-arch={CHIP}", "-o", os.devnull, str(src)],
                             capture_output=True, text=True).stderr
    info = {}
    for key, pattern in (("registers", r"Used (\d+) registers"), ("stack", r"(\d+) bytes stack frame"),
                         ("spill_stores", r"(\d+) bytes spill stores"), ("spill_loads", r"(\d+) bytes spill loads")):
        m = re.search(pattern, err)
        if m:
            info[key] = int(m.group(1))
    return info


# --- compile cost --------------------------------------------------------------------

_FRESH = r"""
import json, sys, time
sys.path.insert(0, {python!r})
from tile_mlir import compiler                      # imports MLIR: not timed
from tile_mlir.options import Options
text, options = open({path!r}).read(), Options(chip={chip!r})
t0 = time.perf_counter(); lowered = compiler.lower_to_ptx(text, options)
t1 = time.perf_counter(); cubin = compiler.ptx_to_cubin(lowered.ptx, lowered.chip)
t2 = time.perf_counter(); compiler.build_artifact(text, options)
t3 = time.perf_counter()
print(json.dumps({{"first": t2 - t0, "to_ptx": t1 - t0, "ptxas": t2 - t1, "warm": t3 - t2}}))
"""


def fresh_build_times(text: str, repeat: int) -> dict:
    """IR -> cubin (compiler.build_artifact's two steps) in a fresh process per sample:
    the first compile of the process; then a second compile in the same process (warm)."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
    code = _FRESH.format(python=str(ROOT / "python"), path=f.name, chip=CHIP)
    samples = [json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                         text=True).stdout.strip().splitlines()[-1]) for _ in range(repeat)]
    os.unlink(f.name)
    return {k: _ms(statistics.median(s[k] for s in samples)) for k in samples[0]} | {"samples": repeat}


def cache_hit_times(text: str, repeat: int) -> dict:
    """tile_mlir.compile on a warm cache: the first hit of a fresh process (which also
    fingerprints the compiler: digest of its source, ptxas --version), then later hits."""
    code = f"""
import json, sys, time, statistics
sys.path.insert(0, {str(ROOT / 'python')!r})
import tile_mlir
text = open({str(DEMO)!r}).read()
options = tile_mlir.Options(chip={CHIP!r})
t0 = time.perf_counter(); tile_mlir.compile(text, options, backend="cuda"); t1 = time.perf_counter()
warm = []
for _ in range(200):
    a = time.perf_counter(); tile_mlir.compile(text, options, backend="cuda"); warm.append(time.perf_counter() - a)
print(json.dumps({{"first": t1 - t0, "warm": statistics.median(warm)}}))
"""
    runs = [json.loads(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                      text=True).stdout.strip().splitlines()[-1]) for _ in range(repeat)]
    return {"first_in_process": _ms(statistics.median(r["first"] for r in runs)),
            "warm": _ms(statistics.median(r["warm"] for r in runs)), "samples": repeat}


def lowering_scaling(counts=(1, 10, 100, 1000), repeat: int = 5) -> list[dict]:
    """tile-lower-reduction alone (parse not timed) on modules of n reduce ops, after one
    untimed run (the first in a process also pays for lazy imports and the first template).
    Wall time and the process's CPU time: on a shared machine the wall time also counts
    the waits for a core, the CPU time does not."""
    from mlir.passmanager import PassManager

    from tile_mlir.ir import ir, make_context
    from tile_mlir.passes import add_pass

    def lower(text: str) -> tuple[float, float]:
        with make_context(), ir.Location.unknown():
            module = ir.Module.parse(text)
            pm = PassManager()
            add_pass(pm, "tile-lower-reduction")
            t0, c0 = time.perf_counter(), time.process_time()
            pm.run(module.operation)
            t, c = time.perf_counter() - t0, time.process_time() - c0
            assert "tile.reduce" not in str(module)
        return t, c

    lower(K.many_reduces(1))
    rows = []
    for n in counts:
        text = K.many_reduces(n)
        samples = [lower(text) for _ in range(repeat if n < 1000 else max(3, repeat // 2))]
        t, c = statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)
        rows.append({"ops": n, "ms": _ms(t), "ms_per_op": _ms(t / n), "cpu_ms_per_op": _ms(c / n), "samples": len(samples)})
        print(f"  tile-lower-reduction, {n:5d} ops: {t * 1e3:9.2f} ms ({t * 1e3 / n:.3f} ms/op; CPU {c * 1e3 / n:.3f} ms/op)",
              flush=True)
    return rows


def _ms(seconds: float) -> float:
    return round(seconds * 1e3, 3)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.prepare", description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", default=str(DEFAULT_CACHE), help="compile cache directory (default: .tile-cache/bench)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--repeat", type=int, default=7, help="samples per compile-cost figure")
    p.add_argument("--skip-cost", action="store_true", help="only fill the cache")
    p.add_argument("--no-check", action="store_true", help="skip the interpreter check of the generators")
    args = p.parse_args(argv)
    cache_path = str(Path(args.cache).resolve())
    _use_cache(cache_path)
    sys.path.insert(0, str(ROOT / "python"))

    if not args.no_check:
        check_generators()
    texts = all_kernels()
    fused.remember_texts()  # for the GPU machine, which cannot build them
    _, not_there = training.kernel_texts(remember=True)
    if not_there:
        print(f"training kernels not compiled ({len(not_there)}): {not_there[0]}" + (" ..." if len(not_there) > 1 else ""),
              flush=True)
    for name, why in fused.missing().items():
        print(f"the fused kernel {name} is left out: its module does not load ({why})", flush=True)
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), mp_context=multiprocessing.get_context("spawn"),
                             initializer=_use_cache, initargs=(cache_path,)) as pool:
        results = dict(zip(texts, pool.map(_compile_one, texts.values())))
    built = sum(r.pop("built") for r in results.values())
    print(f"compiled {len(texts)} kernels into {cache_path} ({built} built) in {time.perf_counter() - t0:.1f} s")

    out_path = Path(cache_path) / "compile.json"
    report = json.loads(out_path.read_text()) if out_path.exists() else {}
    report |= {"machine": machine(), "ptxas": results,
               "lowering_variants": _lowering_variants()}
    if not args.skip_cost:
        row_text = K.row_reduce(K.RowConfig(16384, 4096, "f32", "sum"))
        print("compile cost (here):", flush=True)
        report["demo_to_cubin"] = fresh_build_times(DEMO.read_text(), args.repeat)
        print("  demo -> cubin:", report["demo_to_cubin"], flush=True)
        report["row_to_cubin"] = fresh_build_times(row_text, args.repeat)
        print("  row reduction -> cubin:", report["row_to_cubin"], flush=True)
        report["cache_hit"] = cache_hit_times(DEMO.read_text(), args.repeat)
        print("  cache hit:", report["cache_hit"], flush=True)
        report["lowering_scaling"] = lowering_scaling()
    out_path.write_text(json.dumps(report, indent=1))
    print(f"wrote {out_path}")
    return 0


def _lowering_variants() -> list[str]:
    """The registered tile.reduce variants when the cache was filled (is redux there?)."""
    from tile_mlir import dispatch
    from tile_mlir import lowering  # noqa: F401  (registers the variants)

    return [c.title for c in dispatch.cases("tile.reduce", "cuda")]


if __name__ == "__main__":
    sys.exit(main())
