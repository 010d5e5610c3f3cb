"""The norms' backward against the size of its persistent grid (``ctas``): what
``training.default_ctas`` should be (docs/training-kernels.md, "Clusters in flight").

    python -m benchmarks.backward_grid --prepare --cache .tile-cache/grid   # here (MLIR)
    PYTHONPATH=python TILE_MLIR_CACHE_DIR=.tile-cache/grid python3 -m benchmarks.backward_grid

For RMSNorm and LayerNorm backward at 4096 x 4096, 4096 x 16384 and 1024 x 65536, f32
and bf16, and G = each of ``CLUSTERS`` clusters (``ctas`` = G·CL) where the plan takes a
cluster of CL CTAs a row, else ``ctas`` = 132 times each of ``PER_SM``, it prints one
JSON line: the plan, G, the row kernel's ``cuOccupancyMaxActiveClusters`` (how many of
its clusters the GPU holds at once: a G above it runs in more than one wave) and
``cuOccupancyMaxActiveBlocksPerMultiprocessor`` (CTAs an SM holds), and the time of the
row kernel and the column sums together (``measure.flushed``, CUDA events, L2 flushed)
with the GB/s of ``training.traffic``. The default G is marked.
``--prepare`` compiles every kernel into the cache for the GPU machine, which has no MLIR.
"""

from __future__ import annotations

import json

from .training import traffic

CASES = [(name, M, N, dtype) for name in ("rmsnorm_backward", "layernorm_backward")
         for M, N in ((4096, 4096), (4096, 16384), (1024, 65536)) for dtype in ("f32", "bf16")]
CLUSTERS = (4, 8, 12, 14, 16, 24, 32, 64)
PER_SM = (1, 2, 3, 4, 6, 8)  # CTAs an SM, where a row takes one CTA


def grids(name: str, M: int, N: int, dtype: str) -> tuple[object, list[int], int]:
    """(the backward's plan, the ``ctas`` to time, the default ``ctas``): G clusters of
    ``CLUSTERS`` where a row takes a cluster, else SMS times ``PER_SM``."""
    from tile_mlir.kernels.training import SMS, backward_plan, default_ctas

    p = backward_plan(name, M, N, dtype)
    sizes = [g * p.CL for g in CLUSTERS] if p.CL > 1 else [SMS * k for k in PER_SM]
    return p, sizes, default_ctas(M, p)


def prepare() -> None:
    from tile_mlir.kernels import compiled_backward

    for name, M, N, dtype in CASES:
        _, sizes, default = grids(name, M, N, dtype)
        every = sorted({*sizes, default})
        for ctas in every:
            compiled_backward(name, M, N, dtype, backend="cuda", chip="sm_90a", ctas=ctas)
        print(f"{name} {dtype} {M}x{N}: {len(every)} grids compiled", flush=True)


def max_clusters(compiled) -> int | None:
    """cuOccupancyMaxActiveClusters of the row kernel at its launch (None where the driver
    does not say): ``CudaKernel.max_active_clusters``, what ``default_ctas`` is capped by."""
    return compiled.kernel.max_active_clusters(compiled.block)


def inputs(name: str, M: int, N: int, dtype: str):
    """(the ``K`` call of norm backward ``name``, its inputs on the GPU: dy, x, w, then the
    statistics), random: x and dy normal, w about 1, the statistics in [0.5, 1.5)."""
    import torch

    from tile_mlir import kernels as K

    T = torch.float32 if dtype == "f32" else torch.bfloat16
    x, dy = (torch.randn(M, N, device="cuda").to(T) for _ in range(2))
    w = (1 + 0.5 * torch.randn(N, device="cuda")).to(T)
    stats = [torch.rand(M, device="cuda") + 0.5 for _ in range(2 if name == "layernorm_backward" else 1)]
    call = K.layer_norm_backward if name == "layernorm_backward" else K.rms_norm_backward
    return call, (dy, x, w, *stats)


def run() -> None:
    from tile_mlir import kernels as K

    from .measure import flushed

    for name, M, N, dtype in CASES:
        p, sizes, default = grids(name, M, N, dtype)
        call, (dy, x, w, *stats) = inputs(name, M, N, dtype)
        for ctas in sorted({*sizes, default}):
            run_once = lambda: call(dy, x, w, *stats, ctas=ctas)  # noqa: E731
            run_once()
            torch.cuda.synchronize()
            ms = flushed(run_once)
            rows, _ = K.compiled_backward(name, M, N, dtype, backend="cuda", ctas=ctas)
            print(json.dumps({"kernel": name, "dtype": dtype, "shape": f"{M}x{N}", "plan": p.label(),
                              "clusters": ctas // p.CL, "ctas": ctas, "default": ctas == default,
                              "max_active_clusters": max_clusters(rows),
                              "max_active_blocks": rows.kernel.max_active_blocks(rows.block), "ms": round(ms, 4),
                              "GB/s": round(traffic(name, M, N, dtype) / ms / 1e6, 1)}), flush=True)


def main(argv=None) -> int:
    from .measure import prepare_or_run

    return prepare_or_run("python -m benchmarks.backward_grid", __doc__, prepare, run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
