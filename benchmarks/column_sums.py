"""The norms' column sums alone (``backward.column_sums``, docs/training-kernels.md "dw
and db: deterministic column sums"), at the partial rows of the default grid.

    python -m benchmarks.column_sums --prepare --cache .tile-cache/sums   # here (MLIR)
    PYTHONPATH=python TILE_MLIR_CACHE_DIR=.tile-cache/sums python3 -m benchmarks.column_sums

For RMSNorm's (dw) and LayerNorm's (dw, db) column sums at ``CASES`` (f32), it prints one
JSON line: the shape, P (the row kernel's partial rows on the default grid), the column
sums' shape (``training.column_sums_grid``: CTAs, column warps × row warps), and the time
of one launch in µs, the partial rows hot in L2 (as after the row kernel, which has just
written them: ``measure.steady`` over one input) and L2 flushed (``measure.flushed``).
``--prepare`` compiles the kernels into the cache for the GPU machine, which has no MLIR.
"""

from __future__ import annotations

import json

CASES = [(name, M, N, "f32") for name in ("rmsnorm_backward", "layernorm_backward")
         for M, N in ((4096, 512), (4096, 1024), (4096, 4096), (4096, 16384), (1024, 65536))]


def prepare() -> None:
    from tile_mlir.kernels import compiled_backward

    for name, M, N, dtype in CASES:
        compiled_backward(name, M, N, dtype, backend="cuda", chip="sm_90a")
        print(f"{name} {dtype} {M}x{N}: compiled", flush=True)


def run() -> None:
    import torch

    from tile_mlir import kernels as K
    from tile_mlir.kernels.training import column_sums_grid, partial_rows

    from .measure import flushed, steady

    for name, M, N, dtype in CASES:
        rows, sums = K.compiled_backward(name, M, N, dtype, backend="cuda")
        P, shape = partial_rows(rows.grid, rows.plan), column_sums_grid(N)
        arrays = 2 if name == "layernorm_backward" else 1
        partials = [torch.randn(P, N, device="cuda") for _ in range(arrays)]
        outs = [torch.empty(N, device="cuda") for _ in range(arrays)]
        launch = lambda: sums.kernel.launch(sums.grid, sums.block, *partials, *outs, P)  # noqa: E731
        launch()
        torch.cuda.synchronize()
        print(json.dumps({"kernel": name, "dtype": dtype, "shape": f"{M}x{N}", "P": P, "ctas": shape.grid,
                          "warps": f"{shape.column_warps}x{shape.row_warps}", "threads": shape.threads,
                          "hot_us": round(steady([launch]) * 1e3, 2), "flushed_us": round(flushed(launch) * 1e3, 2)}),
              flush=True)


def main(argv=None) -> int:
    from .measure import prepare_or_run

    return prepare_or_run("python -m benchmarks.column_sums", __doc__, prepare, run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
