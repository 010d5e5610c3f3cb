"""DRAM bytes read per element of x, from Nsight Compute: does each kernel read x once?

    PYTHONPATH=python python3 -m benchmarks.ncu_bytes [--cache .tile-cache/bench] [--out DIR]
                                                   [--kernels softmax] [--dtypes f32,bf16] [--shapes MxN,...]

On the GPU machine, with the compile cache ``benchmarks.prepare`` filled. It runs one
child process under ``ncu --clock-control none --profile-from-start off --metrics
dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base``; the child launches,
each between ``cudaProfilerStart`` and ``cudaProfilerStop`` (so only these launches are
profiled, not the input generation), exactly one kernel per case in ``cases()``:

* ``copy``: ``torch.add(x, 0, out=y)`` of a 4096x16384 f32 matrix, the reference (1.00
  read, 1.00 written; a kernel, where ``y.copy_(x)`` is a memcpy that ncu does not profile);
* ``read``: the pure-read kernel of ``ceiling`` on the same matrix (where cupy is there);
* ours: ``tile_mlir.kernels``'s kernel for every shape of ``fused.SHAPES`` (or
  ``--shapes``), kernel and dtype asked for (by default softmax, f32 and bf16), which
  covers every plan kind the plan chooses for them (the kind is printed beside it).

It prints, per case, the DRAM bytes read and written over the bytes of x: 1.00x read means
one read of every element of x (the weight and bias add N elements, nothing at these
shapes). The output, with the child's log and ncu's CSV, also goes to ``DIR/ncu.txt``
(with ``--out``). About 30-60 s. ``parse_csv`` reads ncu's CSV in either layout (one row
per metric, ``--page details``, or one row per kernel, ``--page raw``), with or without
thousands separators and unit prefixes, and skips ncu's own ``==PROF==`` lines.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import fused

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum")
COPY_SHAPE = (4096, 16384)
_PREFIX = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "ki": 1024, "mi": 1024 ** 2, "gi": 1024 ** 3, "ti": 1024 ** 4}


def cases(kernels=("softmax",), dtypes=("f32", "bf16"), shapes=None) -> list[dict]:
    """What the child launches, in order: one kernel each."""
    out = [{"what": "copy", "M": COPY_SHAPE[0], "N": COPY_SHAPE[1], "dtype": "f32"},
           {"what": "read", "M": COPY_SHAPE[0], "N": COPY_SHAPE[1], "dtype": "f32"}]
    chosen = fused.selected(kernels, shapes, dtypes)
    if shapes is not None:  # shapes past benchmark 5's too (the plans with shared memory: 64x524288, 16x1048576)
        chosen = [(name, M, N, dtype) for dtype in dtypes for M, N in shapes for name in kernels]
    for name, M, N, dtype in chosen:
        out.append({"what": name, "M": M, "N": N, "dtype": dtype})
    return out


def to_bytes(value: str, unit: str) -> float:
    """A metric value in bytes: '1,234,567' with 'byte', '12.5' with 'Mbyte' or 'MB', ..."""
    v = float(value.replace(",", "").strip())
    u = unit.strip().lower().replace("bytes", "").replace("byte", "").replace("b", "")
    if u not in _PREFIX:
        raise ValueError(f"unknown unit {unit!r}")
    return v * _PREFIX[u]


def to_value(value: str, unit: str) -> float:
    """A metric's value: in bytes where ``unit`` is a byte unit, in nanoseconds where it is
    a time, else the number as printed ('%', 'register/thread', 'warp', ...)."""
    u = unit.strip().lower()
    if "byte" in u or u in ("b", "kb", "mb", "gb"):
        return to_bytes(value, unit)
    v = float(value.replace(",", "").strip())
    return v * {"usecond": 1e3, "msecond": 1e6, "second": 1e9}.get(u, 1.0)


def parse_csv(text: str, metrics=METRICS) -> list[dict]:
    """The kernels ncu profiled, in launch order: {"id", "name", metric: value, ...}, a
    metric in bytes where its unit is one, else the number (``to_value``)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("==")]
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        raise ValueError("no CSV header (a line starting with \"ID\") in ncu's output")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    head = rows[0]
    kernels: dict[str, dict] = {}
    if "Metric Name" in head:  # --page details: one row per kernel and metric
        col = {name: head.index(name) for name in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
        for r in rows[1:]:
            if len(r) < len(head):
                continue
            k = kernels.setdefault(r[col["ID"]], {"id": int(r[col["ID"]]), "name": r[col["Kernel Name"]]})
            if r[col["Metric Name"]] in metrics:
                k[r[col["Metric Name"]]] = to_value(r[col["Metric Value"]], r[col["Metric Unit"]])
    else:  # --page raw: one row per kernel, a metric per column, the units in the second row
        units = rows[1] if len(rows) > 1 and not rows[1][0].strip().isdigit() else [""] * len(head)
        body = rows[2:] if units is rows[1] else rows[1:]
        name_col = head.index("Kernel Name") if "Kernel Name" in head else None
        for r in body:
            if len(r) < len(head) or not r[0].strip().isdigit():
                continue
            k = {"id": int(r[0]), "name": r[name_col] if name_col is not None else "?"}
            for m in metrics:
                if m in head:
                    k[m] = to_value(r[head.index(m)], units[head.index(m)] or ("byte" if m in METRICS else ""))
            kernels[r[0]] = k
    return sorted(kernels.values(), key=lambda k: k["id"])


def child(manifest: str) -> int:
    """Launch every case of the manifest once, each alone between profiler start and stop."""
    import torch

    todo = json.loads(Path(manifest).read_text())
    done = []
    for c in todo:
        try:
            launch = _launcher(c, torch)
            launch()  # once outside the profiled range: lazy loads, first-call work
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - the case is left out, and said so
            c["error"] = f"{type(e).__name__}: {e}"
            print(f"ncu_bytes child: {c['what']} {c['M']}x{c['N']} {c['dtype']} not launched: {c['error']}",
                  file=sys.stderr, flush=True)
            continue
        torch.cuda.profiler.start()
        launch()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        done.append(c)
    Path(manifest).write_text(json.dumps(todo))
    return 0


def _launcher(c: dict, torch):
    """The call that launches case ``c``'s one kernel (``c["what"]``: copy, read, a kernel
    of ``fused.KERNELS``; for ``benchmarks.ncu_limits`` also ``triton:<kernel>``, the
    Triton peer of benchmark 5, ``argmax:<label>`` / ``argmax-triton:<label>``, a
    configuration of benchmark 7's kernels or of its Triton peer, ``softmax:<who>``, one of
    its softmax forms, ``pair:<kernel>:<two|packed>``, the library's softmax or logsumexp
    with the pair in two exchanges or one, and ``backward:<name>``,
    a backward of ``tile_mlir.kernels``, which sets ``c["kernels"]``: the kernels a call
    launches, 2 for the norms, whose column sums follow the row kernel)."""
    from tile_mlir import kernels as K  # no MLIR: the kernels come from the compile cache

    tdt = torch.float32 if c["dtype"] == "f32" else torch.bfloat16
    M, N, what = c["M"], c["N"], c["what"]
    x = torch.randn(M, N, device="cuda", dtype=tdt)
    if what == "copy":
        y = torch.empty_like(x)
        # x + 0 into y: a kernel (y.copy_(x) is a cudaMemcpy, which ncu does not
        # profile, so the launches and the profiled kernels fell out of step)
        return lambda: torch.add(x, 0.0, out=y)
    if what == "read":
        from .ceiling import CONFIGS, launcher

        return launcher(x, CONFIGS[0])
    if what.startswith("backward:"):  # tile_mlir.kernels' backward: its row kernel, then the column sums
        name, dy, w = what.split(":", 1)[1], torch.randn_like(x), torch.randn(N, device="cuda", dtype=tdt)
        x32 = x.float()
        c["kernels"] = 1 if name == "softmax_backward" else 2
        if name == "softmax_backward":
            y = torch.softmax(x32, -1).to(tdt)
            return lambda: K.softmax_backward(y, dy)
        rstd = torch.rsqrt((x32 * x32).mean(-1) + 1e-6) if name == "rmsnorm_backward" else (
            torch.rsqrt(x32.var(-1, unbiased=False) + 1e-5))
        if name == "rmsnorm_backward":
            return lambda: K.rms_norm_backward(dy, x, w, rstd)
        mean = x32.mean(-1)
        return lambda: K.layer_norm_backward(dy, x, w, mean, rstd)
    if what.startswith("softmax:"):  # benchmark 7's softmax forms, one 1024-thread CTA a row
        from .argmax import softmax_configs, softmax_kernel

        sc = next(s for s in softmax_configs(c["dtype"]) if s.who == what.split(":", 1)[1])
        return softmax_kernel(sc).bind(sc.grid, sc.block, x, torch.empty_like(x))
    if what.startswith("pair:"):  # the library's kernel with the (max, sum) pair in two exchanges or one
        _, name, who = what.split(":")
        lib = K.compiled(name, M, N, c["dtype"], pair=who == "packed")
        c["plan"] = lib.plan.label()
        y = torch.empty_like(x) if name == "softmax" else torch.empty(M, device="cuda", dtype=tdt)
        return lib.kernel.bind(lib.grid, lib.block, x, y, M)
    if what.startswith("argmax"):
        from . import argmax as A

        kind, label = what.split(":", 1)
        y = torch.empty(M, device="cuda", dtype=torch.int32)
        if kind == "argmax-triton":
            block_n, warps = (int(v.lstrip("BNw")) for v in label.split()[:2])
            kernel = A._triton_argmax()
            return lambda: kernel[(M,)](x, y, N, BLOCK_N=block_n, ONE_PASS=block_n == N, num_warps=warps)
        return A.bind(A.config_of(M, N, c["dtype"], label), [x], [y])[0]
    name = what.removeprefix("triton:")
    params = [torch.randn(N, device="cuda", dtype=tdt) for _ in fused.PARAMS[name]]
    y = torch.empty((M,) if name in fused.PER_ROW else (M, N), device="cuda", dtype=tdt)
    if what.startswith("triton:"):
        from . import triton_fused as T

        kernel = T.autotuned(name)
        eps = fused.eps_of(name, c["dtype"])
        return lambda: T.launch(name, kernel, x, params, y, eps)
    kern, grid, block, shared = fused.ours(name, M, N, c["dtype"])
    stats = [torch.empty(M, device="cuda", dtype=torch.float32) for _ in fused.STATS.get(name, ())]
    scalars = (fused.eps_of(name, c["dtype"]),) if fused.PARAMS[name] else ()
    c["plan"] = K.plan(M, N, c["dtype"], name).label()
    return kern.bind(grid, block, x, *params, y, *stats, *scalars, M, shared_mem=shared)


def report(todo: list[dict], kernels: list[dict]) -> list[str]:
    """One line per case: DRAM bytes read and written per byte of x."""
    launched = [c for c in todo if "error" not in c]
    lines = []
    if len(kernels) != len(launched):
        lines.append(f"warning: ncu profiled {len(kernels)} kernel(s) for {len(launched)} launch(es): the pairing below "
                     "follows launch order and may be off")
    for c, k in zip(launched, kernels):
        if c["what"] in fused.KERNELS and c["what"] not in k["name"]:
            lines.append(f"warning: launch {c['what']} paired with kernel {k['name'][:40]}: the pairing is off")
        x_bytes = c["M"] * c["N"] * fused.ITEMSIZE[c["dtype"]]
        rd, wr = k.get(METRICS[0]), k.get(METRICS[1])
        what = c["what"] + (f" [{c['plan']}]" if "plan" in c else "")
        lines.append(f"{what:<40} {c['M']}x{c['N']} {c['dtype']:<5} read {_ratio(rd, x_bytes)} written "
                     f"{_ratio(wr, x_bytes)} of x ({x_bytes / 1e6:.1f} MB)  kernel {k['name'][:60]}")
    lines += [f"{c['what']} {c['M']}x{c['N']} {c['dtype']}: not launched ({c['error']})" for c in todo if "error" in c]
    return lines


def _ratio(v, x_bytes) -> str:
    return "   n/a" if v is None else f"{v / x_bytes:5.2f}x"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.ncu_bytes", description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", default=str(ROOT / ".tile-cache" / "bench"))
    p.add_argument("--out", help="also write the lines, the child's log and ncu's CSV to OUT/ncu.txt")
    p.add_argument("--kernels", default="softmax", help=f"of {','.join(fused.KERNELS)} (default: softmax)")
    p.add_argument("--dtypes", default="f32,bf16")
    p.add_argument("--shapes", default=None, help="MxN,... (default: every shape of benchmark 5)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    os.environ["TILE_MLIR_CACHE_DIR"] = str(Path(args.cache).resolve())
    sys.path.insert(0, str(ROOT / "python"))
    if args.child:
        return child(args.child)
    kernels = tuple(args.kernels.split(","))
    if set(kernels) - set(fused.KERNELS):
        p.error(f"unknown kernel(s) {', '.join(sorted(set(kernels) - set(fused.KERNELS)))}")
    shapes = tuple(tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")) if args.shapes else None
    ncu = shutil.which("ncu")
    if ncu is None:
        print("ncu is not on PATH: no DRAM figures", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "cases.json"
        manifest.write_text(json.dumps(cases(kernels, tuple(args.dtypes.split(",")), shapes)))
        cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--metrics", ",".join(METRICS), "--csv",
               "--print-units", "base", sys.executable, "-m", "benchmarks.ncu_bytes", "--cache", args.cache,
               "--child", str(manifest)]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": f"{ROOT / 'python'}:{os.environ.get('PYTHONPATH', '')}"})
        todo = json.loads(manifest.read_text())
    try:
        lines = report(todo, parse_csv(done.stdout))
    except ValueError as e:
        lines = [f"ncu's output did not parse ({e}); ncu exited {done.returncode}"]
    text = "\n".join(["DRAM bytes per byte of x (ncu " + " ".join(cmd[1:8]) + "):", *lines])
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "ncu.txt").write_text(f"{text}\n\n--- ncu stdout\n{done.stdout}\n--- stderr\n{done.stderr}\n")
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
