"""Row plans that keep part of the row in dynamic shared memory (``registers+shared``)
against the registers-only plans, on the GPU: does a fuller CTA (fewer CTAs per row, the
rest of its part in shared memory) read long rows faster?

    PYTHONPATH=python python3 -m benchmarks.shared_plans --prepare --cache DIR   # here, where MLIR is
    PYTHONPATH=python TILE_MLIR_CACHE_DIR=DIR python3 -m benchmarks.shared_plans [--out DIR]

For softmax and RMSNorm at 64 x 262144 and 1024 x 65536, f32 and bf16: the default plan
(measured or the table's), and the same rows over half, or a quarter, of the CTAs with 1
or 3 times their registers' share in shared memory (``plan(..., ctas=, warps=32,
shared=)``). GB/s count x read and y written (and w); ``copy`` is torch's ``y.copy_(x)``
in the same run; each timing rotates two inputs (``measure.steady``), and each output is
checked against the default plan's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SHAPES = [(64, 262144), (1024, 65536)]
KERNELS = ("softmax", "rmsnorm")
DTYPES = ("f32", "bf16")


def variants(M: int, N: int, dtype: str, kernel: str) -> dict:
    """Name -> plan overrides: the default plan, then its rows over fewer CTAs with the
    rest in shared memory."""
    from tile_mlir.kernels import plan

    CL = plan(M, N, dtype, kernel).CL
    out = {"default": {}}
    for fewer, shared in ((2, 1), (4, 3)):
        if CL // fewer >= 1:
            overrides = {"ctas": CL // fewer, "warps": 32, "shared": shared}
            try:
                plan(M, N, dtype, kernel, **overrides)
            except ValueError:
                continue
            out[f"CL{CL // fewer} S{shared}"] = overrides
    return out


def prepare() -> int:
    from tile_mlir.kernels import compiled

    count = 0
    for M, N in SHAPES:
        for dtype in DTYPES:
            for kernel in KERNELS:
                for overrides in variants(M, N, dtype, kernel).values():
                    compiled(kernel, M, N, dtype, backend="cuda", **overrides)
                    count += 1
    return count


def run() -> list[dict]:
    import torch

    from benchmarks.measure import steady
    from tile_mlir import kernels as K

    rows = []
    for M, N in SHAPES:
        for dtype in DTYPES:
            td = torch.float32 if dtype == "f32" else torch.bfloat16
            xs = [torch.randn(M, N, device="cuda").to(td) for _ in range(2)]
            w = (1 + 0.1 * torch.randn(N, device="cuda")).to(td)
            ys = [torch.empty_like(x) for x in xs]
            size = xs[0].element_size()
            copy_ms = steady([lambda i=i: ys[i].copy_(xs[i]) for i in range(2)])
            for kernel in KERNELS:
                spec, params = K.SPECS[kernel], ((w,) if kernel == "rmsnorm" else ())
                scalars = (float(spec.eps),) if spec.eps is not None else ()
                base = None
                row = {"shape": f"{M}x{N}", "dtype": dtype, "kernel": kernel, "copy_gbps": 2 * M * N * size / copy_ms / 1e6,
                       "gbps": {}, "plans": {}, "same": {}}
                for label, overrides in variants(M, N, dtype, kernel).items():
                    y = K.run(kernel, xs[0], *params, **overrides)[0]
                    base = y if base is None else base
                    row["same"][label] = bool(torch.equal(y, base)) or float((y.float() - base.float()).abs().max())
                    c = K.compiled(kernel, M, N, dtype, backend="cuda", **overrides)
                    bound = []
                    for x in xs:  # the kernel alone: bound launches, no per-call host path
                        outs = [torch.empty_like(x) if role == "rows" else torch.empty(M, device="cuda")
                                for _, role in spec.outputs]
                        bound.append(c.kernel.bind(c.grid, c.block, x, *params, *outs, *scalars, M,
                                                   shared_mem=c.plan.shared_bytes))
                    ms = steady(bound)
                    row["gbps"][label] = round((2 * M * N + (N if params else 0)) * size / ms / 1e6)
                    row["plans"][label] = c.plan.label()
                rows.append(row)
                cols = "  ".join(f"{k} [{row['plans'][k]}] {v} GB/s ({100 * v / row['copy_gbps']:.1f}%)"
                                 for k, v in row["gbps"].items())
                print(f"{kernel} {M}x{N} {dtype}: copy {row['copy_gbps']:.0f}  {cols}", flush=True)
                print(f"  outputs against the default plan's (True: the same bits, else max abs difference): "
                      f"{row['same']}", flush=True)
    return rows


def main(argv=None) -> int:
    from benchmarks.measure import prepare_or_run

    def run_and_write(out):
        rows = run()
        if out:
            Path(out).mkdir(parents=True, exist_ok=True)
            (Path(out) / "shared_plans.json").write_text(json.dumps(rows, indent=1))

    return prepare_or_run("python -m benchmarks.shared_plans", __doc__, prepare, run_and_write, argv,
                          out="shared_plans.json")


if __name__ == "__main__":
    sys.exit(main())
