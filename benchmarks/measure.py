"""What the bandwidth benchmarks share on the GPU: the log, the two timings, the copy, the
rates, and for the row reductions the check, the Triton peer and one measured case.

* ``log``: print() that also keeps every line (and appends it to ``raw.txt`` as it goes,
  once ``log.to(path)`` is set), with ``log.section(title)`` lines stamped with the UTC
  time and the seconds since the run started.
* ``steady(fns)``: CUDA-event median of back-to-back calls rotating through input sets
  that together are ~10x the L2; ``flushed(fn)``: ``triton.testing.do_bench`` (L2 flushed)
  (both ``benchmarks.timing``'s, which ``ceiling`` takes too).
* ``copy_times(xs)``: the copy of the same tensors, the bandwidth ceiling (both timings);
  ``add_rates(row, ...)``: every peer's GB/s and ours against them, from the times.
* ``triton_row_kernel(configs)``: one ``@triton.jit`` row reduction, wrapped in a fresh
  autotuner over ``configs`` on each call (the compiled binaries are shared).
* ``row_case(M, N, dtype, kind, triton_kernel, candidates, generate)``: every candidate
  of ours checked against float64 and timed, the fastest timed again and reported (as
  Triton's autotuner picks its configuration, then the run times it); torch, Triton and a
  copy of the same bytes checked and timed in the same way.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

from . import kernels as K
from .timing import flushed, steady  # noqa: F401 - the benchmarks take them from here too

OPTIONS = {"chip": "sm_90a"}  # what benchmarks.prepare compiled with


class Log:
    """print() that also keeps every line for raw.txt, and with ``to(path)`` appends each
    line to that file as it goes (so a run stopped part-way still leaves its log)."""

    def __init__(self):
        self.lines: list[str] = []
        self.path = None
        self.t0 = time.perf_counter()

    def to(self, path) -> None:
        self.path = path
        path.write_text("".join(line + "\n" for line in self.lines))

    def __call__(self, *parts) -> None:
        line = " ".join(str(p) for p in parts)
        self.lines.append(line)
        print(line, flush=True)
        if self.path is not None:
            with open(self.path, "a") as f:
                f.write(line + "\n")

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def section(self, title: str) -> None:
        """A progress line: the UTC time, the seconds since the run started, the title."""
        self(f"\n[{time.strftime('%H:%M:%S', time.gmtime())} UTC, {self.elapsed():6.1f} s] == {title}")


log = Log()


# One-row-per-program configurations (one warp's worth of columns or less per row, or
# several rows per program), and the multi-warp ones: num_warps 1..32 with whole-row
# blocks up to 16384 columns. Identical configurations compile once for both.
ROW_TRITON = ((1, 1024, 4), (2, 1024, 4), (1, 2048, 8), (1, 4096, 8), (2, 2048, 8),
              (8, 128, 2), (16, 128, 4), (32, 128, 4), (64, 128, 8))
MULTIWARP_TRITON = ((1, 1024, 1), (1, 2048, 2), (1, 1024, 4), (1, 2048, 4), (1, 4096, 4), (1, 2048, 8),
                    (1, 4096, 8), (1, 8192, 8), (2, 2048, 8), (1, 4096, 16), (1, 8192, 16), (1, 8192, 32),
                    (1, 16384, 32))


@functools.cache
def _triton_row_jit():
    import triton
    import triton.language as tl

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


def triton_row_kernel(configs=ROW_TRITON):
    """The Triton row reduction under a fresh autotuner over (BLOCK_M, BLOCK_N, num_warps)
    ``configs`` (those that divide the shape), keyed on M, N and the kind: a new call tunes
    again, on binaries already compiled."""
    import triton

    def prune(configs, named_args, **kwargs):
        N, M = named_args["N"], named_args["M"]
        return [c for c in configs if N % c.kwargs["BLOCK_N"] == 0 and M % c.kwargs["BLOCK_M"] == 0]

    return triton.autotune(
        configs=[triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w) for bm, bn, w in configs],
        key=["M", "N", "IS_MAX"], prune_configs_by={"early_config_prune": prune},
    )(_triton_row_jit())


def row_ok(y, ref, kind: str) -> tuple[bool, float]:
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


ROTATE_BYTES = 512 << 20  # input sets rotated through per timing loop: ~10x the 50 MB L2


def copy_times(xs) -> tuple[float, float]:
    """The bandwidth ceiling: ``dst.copy_(x)`` of every tensor in ``xs`` into a fresh one
    of its size, timed steady (rotating through them) and L2-flushed; (ms, ms)."""
    import torch

    dsts = [torch.empty_like(x) for x in xs]
    fns = [lambda d=d, x=x: d.copy_(x) for d, x in zip(dsts, xs)]
    return steady(fns), flushed(fns[0])


def add_rates(row: dict, nbytes: int, copy_bytes: int, peers=("ours", "torch", "triton")) -> None:
    """GB/s of every peer (``nbytes`` over its time) and of the copy (``copy_bytes``, read
    + written, over its time), and ours against them: % of the copy's rate, x Triton,
    x torch; each steady and L2-flushed (keys with ``flushed``)."""
    for mode in ("", "flushed_"):
        for who in peers:
            row[f"{who}_{mode}GBs"] = nbytes / row[f"{who}_{mode}ms"] / 1e6
        row[f"copy_{mode}GBs"] = copy_bytes / row[f"copy_{mode}ms"] / 1e6
        row[f"pct_copy_{mode}".rstrip("_")] = 100 * row[f"ours_{mode}GBs"] / row[f"copy_{mode}GBs"]
        row[f"vs_triton_{mode}".rstrip("_")] = row[f"triton_{mode}ms"] / row[f"ours_{mode}ms"]
        row[f"vs_torch_{mode}".rstrip("_")] = row[f"torch_{mode}ms"] / row[f"ours_{mode}ms"]


# The row-reduction shapes whose target is the pure-read kernel's rate (``ceiling``).
READ_SHAPES = ((16384, 4096), (65536, 1024), (4096, 16384), (1024, 65536))


def add_read(row: dict, xs, nbytes: int) -> None:
    """The pure-read kernel on ``xs`` (``ceiling.read_times``): its times, its GB/s
    (``nbytes`` of one input) and ours as % of it (``pct_read``), steady and flushed; or
    ``read_missing`` with why, never a figure."""
    from .ceiling import read_times

    try:
        row["read_ms"], row["read_flushed_ms"], row["read_cfg"] = read_times(xs)
    except Exception as e:  # noqa: BLE001 - the ceiling is missing here: say why
        row["read_missing"] = f"{type(e).__name__}: {e}"
        log(f"  pure-read kernel: missing ({row['read_missing']})")
        return
    for mode in ("", "flushed_"):
        row[f"read_{mode}GBs"] = nbytes / row[f"read_{mode}ms"] / 1e6
        row[f"pct_read_{mode}".rstrip("_")] = 100 * row[f"read_{mode}ms"] / row[f"ours_{mode}ms"]


def row_case(M: int, N: int, dtype: str, kind: str, triton_kernel, candidates=None, generate=K.row_reduce) -> dict:
    """One shape, dtype and kind: ours (every config in ``candidates``, by default
    ``row_candidates``; kernels from ``generate(config)``), torch, ``triton_kernel`` and a
    copy, each checked then timed steady and L2-flushed. Returns the row of results."""
    import tile_mlir
    import torch

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
        ok, err = row_ok(y, ref, kind)
        if not ok:
            raise AssertionError(f"{name}: wrong result (error {err})")

    # ours: every candidate configuration, checked, then timed; the fastest is reported
    cands = []
    for cfg in candidates if candidates is not None else K.row_candidates(M, N, dtype, kind):
        kern = tile_mlir.compile(generate(cfg), OPTIONS, backend="cuda")[cfg.name]
        bound = [kern.bind(cfg.grid, cfg.block, xs[i], ys[i]) for i in range(nbuf)]
        try:
            checked(f"tile-mlir {cfg.label()}", bound[0])
        except AssertionError as e:
            log(f"  FAIL {e}")
            continue
        cands.append((steady(bound), cfg, bound))
        log(f"  {M}x{N} {dtype} {kind}: tile-mlir [{cfg.label()}] {cands[-1][0] * 1e3:8.1f} us")
    t_sweep, best, best_bound = min(cands, key=lambda c: c[0])
    # timed again, as Triton's choice is: the fastest of several noisy timings is biased low
    t_ours = steady(best_bound)
    row |= {"ours_ms": t_ours, "ours_sweep_ms": t_sweep, "ours_cfg": best.label(), "ours_kernel": best.name,
            "ours_candidates": {c.label(): t for t, c, _ in cands}, "ours_flushed_ms": flushed(best_bound[0])}

    # torch
    if kind == "sum":
        kw = {} if dtype == "f32" else {"dtype": torch.float32}
        torch_fns = [lambda i=i: torch.sum(xs[i], dim=1, **kw) for i in range(nbuf)]
    else:
        torch_fns = [lambda i=i: torch.amax(xs[i], dim=1) for i in range(nbuf)]
    ok, err = row_ok(torch_fns[0]().float(), ref, kind)
    assert ok, f"torch wrong ({err})"
    row["torch_ms"], row["torch_flushed_ms"] = steady(torch_fns), flushed(torch_fns[0])

    # Triton (autotuned, with its do_bench, on the first call)
    def tri(i):
        return triton_kernel[lambda meta: (M // meta["BLOCK_M"],)](xs[i], ys[i], M, N, IS_MAX=kind == "max")

    checked("triton", lambda: tri(0))
    tri_fns = [lambda i=i: tri(i) for i in range(nbuf)]
    row["triton_ms"], row["triton_flushed_ms"] = steady(tri_fns), flushed(tri_fns[0])
    bc = triton_kernel.best_config
    row["triton_cfg"] = f"BM{bc.kwargs['BLOCK_M']} BN{bc.kwargs['BLOCK_N']} w{bc.num_warps}"

    # the bandwidth ceilings: a device-to-device copy of the same tensors, and (at the
    # shapes of the read targets) the pure-read kernel
    row["copy_ms"], row["copy_flushed_ms"] = copy_times(xs)
    add_rates(row, nbytes, 2 * nbytes)
    if (M, N) in READ_SHAPES:
        add_read(row, xs, nbytes)
    log(f"  {M}x{N} {dtype} {kind}: ours {row['ours_GBs']:7.0f} GB/s [{best.label()}]  torch {row['torch_GBs']:7.0f}"
        f"  triton {row['triton_GBs']:7.0f} [{row['triton_cfg']}]  copy {row['copy_GBs']:7.0f}"
        f"  -> {row['pct_copy']:.1f}% of copy, {row['vs_triton']:.3f}x triton, {row['vs_torch']:.3f}x torch"
        + (f", {row['pct_read']:.1f}% of pure read ({row['read_GBs']:.0f} GB/s)" if "pct_read" in row else "")
        + f"  | L2 flushed: ours {row['ours_flushed_GBs']:.0f} torch {row['torch_flushed_GBs']:.0f}"
        f" triton {row['triton_flushed_GBs']:.0f} copy {row['copy_flushed_GBs']:.0f}")
    return row


def run_cuda(source: str, *args) -> list[dict]:
    """Build ``benchmarks/<source>`` with nvcc for sm_90a, run it with ``args`` and return
    the JSON objects it prints, one a line."""
    import json
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / Path(source).stem
        for cmd in ([nvcc, "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a", "-o", str(exe), str(Path(__file__).with_name(source))],
                    [str(exe), *map(str, args)]):
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode:
                raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return [json.loads(line) for line in done.stdout.strip().splitlines()]


def prepare_or_run(prog: str, doc: str, prepare, run, argv=None, out: str | None = None) -> int:
    """The command line of a benchmark that is compiled here and timed there:
    ``--prepare [--cache DIR]`` calls ``prepare`` (where MLIR is; a count it returns is
    printed), otherwise ``run``; with ``out`` (what the run writes), ``--out DIR`` too,
    which ``run`` takes (None without it)."""
    import argparse
    import os

    parser = argparse.ArgumentParser(prog=prog, description=doc.split("\n\n")[0])
    parser.add_argument("--prepare", action="store_true", help="compile the kernels into the cache (where MLIR is)")
    parser.add_argument("--cache", help="the compile cache directory (with --prepare)")
    if out:
        parser.add_argument("--out", help=f"write {out} there")
    args = parser.parse_args(argv)
    if args.cache:
        os.environ["TILE_MLIR_CACHE_DIR"] = str(Path(args.cache).resolve())
    if args.prepare:
        count = prepare()
        if isinstance(count, int):
            print(f"compiled {count} kernels into {args.cache or 'the default compile cache'}")
    elif out:
        run(args.out)
    else:
        run()
    return 0

