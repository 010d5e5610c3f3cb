"""The norms' backward with and without the next row loaded early (``RowPlan.prefetch``):
where a norm backward's plan should have it (``tile_mlir.kernels.training.backward_plan``,
docs/training-kernels.md, "The next row, early").

    python -m benchmarks.backward_prefetch --prepare --cache .tile-cache   # here (MLIR)
    PYTHONPATH=python TILE_MLIR_CACHE_DIR=.tile-cache python3 -m benchmarks.backward_prefetch

For RMSNorm and LayerNorm backward at the shapes of ``benchmarks.backward_grid`` (f32 and
bf16), on the backward's plan, it runs the call with ``prefetch`` False and True on the
same inputs and the same persistent grid, checks that both give the same bits (dx, dw,
db: the same arithmetic in the same order, only the loads move; the default grids may
differ, as the registers change how many CTAs an SM holds, and the grid orders dw's sum),
and times each on its default grid, steady (``timing.steady``: two input sets rotating),
printing one JSON line a case: the plan, both times, their GB/s (``training.traffic``)
and the ratio.
``--prepare`` compiles both kernels of every case into the cache for the GPU machine.
"""

from __future__ import annotations

import json

from .backward_grid import CASES, inputs
from .training import traffic

VARIANTS = (False, True)


def prepare() -> int:
    from tile_mlir.kernels import compiled_backward

    count = 0
    for name, M, N, dtype in CASES:
        for prefetch in VARIANTS:
            compiled_backward(name, M, N, dtype, backend="cuda", chip="sm_90a", prefetch=prefetch)
            count += 2  # the row kernel and the column sums, for every grid
    return count


def run() -> None:
    import torch

    from tile_mlir.kernels.training import backward_plan, compiled_backward, run_backward

    from .timing import steady

    for name, M, N, dtype in CASES:
        sets = [inputs(name, M, N, dtype)[1] for _ in range(2)]
        outs, ms = {}, {}
        ctas = compiled_backward(name, M, N, dtype, backend="cuda", prefetch=False)[0].grid
        for prefetch in VARIANTS:
            outs[prefetch] = run_backward(name, *sets[0], prefetch=prefetch, ctas=ctas)
            ms[prefetch] = steady([lambda a=a, pf=prefetch: run_backward(name, *a, prefetch=pf) for a in sets])
        same = all(torch.equal(a, b) for a, b in zip(outs[False], outs[True]))
        gb = traffic(name, M, N, dtype) / 1e6
        print(json.dumps({"kernel": name, "dtype": dtype, "shape": f"{M}x{N}",
                          "plan": backward_plan(name, M, N, dtype, prefetch=True).label(), "same_bits": same,
                          "ctas": ctas,
                          "ms": {str(k): round(v, 4) for k, v in ms.items()},
                          "GB/s": {str(k): round(gb / v, 1) for k, v in ms.items()},
                          "speedup": round(ms[False] / ms[True], 3)}), flush=True)
        del sets, outs
        torch.cuda.empty_cache()


def main(argv=None) -> int:
    from .measure import prepare_or_run

    return prepare_or_run("python -m benchmarks.backward_prefetch", __doc__, prepare, run, argv)


if __name__ == "__main__":
    raise SystemExit(main())
