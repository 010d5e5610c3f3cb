"""The cluster exchange's two protocols on the fused kernels: ``cluster_push`` (each CTA
pushes its partial into the others' shared memory and signals their mbarrier) against
``cluster`` (each CTA reads the others' partials between two cluster barriers), the
same kernels otherwise (``dispatch = "cluster"`` forced on every cluster-scope
``tile.reduce`` for the second).

``python -m benchmarks.exchange_protocols --prepare --cache DIR`` compiles them here;
``TILE_MLIR_CACHE_DIR=DIR python -m benchmarks.exchange_protocols`` times them on the GPU
(CUDA events, steady, fresh ``torch.randn`` inputs, checked against float64), one JSON
line per kernel, shape and dtype.
"""

from __future__ import annotations

import json
import re

CASES = [(name, M, N, dtype) for dtype in ("f32", "bf16") for M, N in ((1024, 65536), (64, 262144))
         for name in ("softmax", "rmsnorm", "layernorm", "logsumexp")]
PROTOCOLS = ("cluster_push", "cluster")


def text(name: str, M: int, N: int, dtype: str, protocol: str) -> str:
    from tile_mlir import kernels as K

    t = K.kernel_text(name, M, N, dtype)
    if protocol == "cluster":
        t = re.sub(r'exec_scope = "cluster"', 'dispatch = "cluster", exec_scope = "cluster"', t)
    return t


def prepare() -> None:
    import tile_mlir

    for case in CASES:
        for protocol in PROTOCOLS:
            t = text(*case, protocol)
            tile_mlir.cache.remember(f"exchange_protocols/{'_'.join(map(str, case))}_{protocol}", t)
            tile_mlir.compile(t, backend="cuda")
            print("compiled", case, protocol, flush=True)


def run() -> None:
    import torch
    import tile_mlir
    from tile_mlir import kernels as K

    from .fused import EPS, PARAMS, STATS, reference, traffic

    torch.manual_seed(0)
    for name, M, N, dtype in CASES:
        tdt = torch.float32 if dtype == "f32" else torch.bfloat16
        p = K.plan(M, N, dtype, name)
        xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(max(2, (512 << 20) // (M * N * tdt.itemsize)))]
        params = [torch.randn(N, device="cuda", dtype=tdt) for _ in PARAMS[name]]
        ref = reference(name, xs[0], params, EPS)
        row = {"kernel": name, "M": M, "N": N, "dtype": dtype, "plan": p.label()}
        for protocol in PROTOCOLS:
            kernel = tile_mlir.compile(tile_mlir.cache.recall(f"exchange_protocols/{name}_{M}_{N}_{dtype}_{protocol}"))[name]
            ys = [torch.empty(M, N, device="cuda", dtype=tdt) if name != "logsumexp" else
                  torch.empty(M, device="cuda", dtype=tdt) for _ in xs]
            stats = [[torch.empty(M, device="cuda", dtype=torch.float32) for _ in STATS.get(name, ())] for _ in xs]
            eps = [EPS] if name in STATS else []
            calls = [kernel.bind(p.grid(M), p.threads, x, *params, y, *s, *eps, M) for x, y, s in zip(xs, ys, stats)]
            calls[0]()
            torch.cuda.synchronize()
            err = float(((ys[0].double() - ref).norm() / ref.norm()).item())
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            best = float("inf")
            for _ in range(5):
                start.record()
                for i in range(40):
                    calls[i % len(calls)]()
                end.record()
                end.synchronize()
                best = min(best, start.elapsed_time(end) / 40)
            row[protocol] = {"us": round(1e3 * best, 2), "GBs": round(traffic(name, M, N, dtype) / best / 1e6),
                             "rel_err": err}
        row["push_speedup"] = round(row["cluster"]["us"] / row["cluster_push"]["us"], 3)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    from .measure import prepare_or_run

    raise SystemExit(prepare_or_run("python -m benchmarks.exchange_protocols", __doc__, prepare, run))
