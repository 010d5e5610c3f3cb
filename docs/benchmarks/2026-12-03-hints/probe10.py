"""Probe 10 on the H200: the artifacts of probe10_build.py (softmax's forms, the second pass's
exponentials taken again or kept), each checked against torch in float64 and timed in turns
(benchmarks.timing.interleaved), three times. Run from the repository root:
PYTHONPATH=python:. python3 docs/benchmarks/2026-12-03-hints/probe10.py OUT"""
import json, statistics, sys
import torch
from tile_mlir.cache import Artifact
from tile_mlir.runtime import cuda_kernels
from benchmarks.timing import interleaved

OUT = sys.argv[1]
index = json.load(open(".cache/probe10/index.json"))
DT = {"f32": torch.float32, "bf16": torch.bfloat16}
M, N = 4096, 16384
out = {}
for dtype in ("f32", "bf16"):
    xs = [(torch.randn(M, N, device="cuda") * 3).to(DT[dtype]) for _ in range(2)]
    refs = [torch.softmax(x.double(), dim=1) for x in xs]
    ys = [torch.empty(M, N, device="cuda", dtype=DT[dtype]) for _ in range(2)]
    groups = {}
    for key, entry in index.items():
        if not key.startswith(dtype + " "):
            continue
        for v, path in entry["variants"].items():
            k = cuda_kernels(Artifact.load(path))[entry["kernel"]]
            fns = [k.bind(M, 1024, x, y) for x, y in zip(xs, ys)]
            for f, y, ref in zip(fns, ys, refs):
                y.fill_(float("nan")); f(); torch.cuda.synchronize()
                err = ((y.double() - ref).norm() / ref.norm()).item()
                assert err < (1e-5 if dtype == "f32" else 4e-3), (key, v, err)
            groups[f"{key.split(' ', 1)[1]} {v}"] = fns
    for rep in range(3):
        t = interleaved(groups, rounds=7)
        out.setdefault(dtype, []).append(t)
        for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
            print(f"softmax {M}x{N} {dtype} {name:32s} {ms * 1e3:8.2f} us", flush=True)
    del xs, ys, groups; torch.cuda.empty_cache()
json.dump(out, open(f"{OUT}/probe10.json", "w"), indent=1)
print("probe10 done", flush=True)
