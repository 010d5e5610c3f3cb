"""Probe 8 on the H200: the artifacts of probe8_build.py (cache hints on the global loads and
stores of our f32 argmax kernels and softmax forms), each checked against torch and timed in
turns (benchmarks.timing.interleaved) with Triton's argmax and the pure read, three times.
Run from the repository root: PYTHONPATH=python:. python3 docs/benchmarks/2026-12-03-hints/probe8.py OUT"""
import bisect, json, sys
import torch
from tile_mlir.cache import Artifact
from tile_mlir.runtime import cuda_kernels
from benchmarks import ceiling
from benchmarks.argmax import CARVEOUT, _triton_argmax
from benchmarks.timing import interleaved

OUT = sys.argv[1]
index = json.load(open(".cache/probe8/index.json"))
TRITON = {(16384, 4096): (2048, 8), (4096, 16384): (16384, 32)}
CAP = {(16384, 4096): 4, (4096, 16384): 5}


def kernel(path, name):
    return cuda_kernels(Artifact.load(path))[name]


def capped(kern, block, O):
    """argmax.bind's search: the fewest bytes of shared memory giving exactly O CTAs an SM."""
    sizes = range(0, CARVEOUT * 228 * 1024 // 100, 128)
    at = bisect.bisect_left(sizes, True, key=lambda s: (kern.max_active_blocks(block, s, carveout=CARVEOUT) or 0) <= O)
    assert kern.max_active_blocks(block, sizes[at], carveout=CARVEOUT) == O
    return {"shared_mem": sizes[at], "carveout": CARVEOUT}


def report(key, t, out):
    out.setdefault(key, []).append(t)
    for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
        print(f"{key} {name:48s} {ms * 1e3:8.2f} us", flush=True)


out = {}
for (M, N) in ((16384, 4096), (4096, 16384)):
    xs = [torch.randn(M, N, device="cuda") for _ in range(2)]
    refs = [torch.argmax(x, dim=1) for x in xs]
    ys = [torch.empty(M, device="cuda", dtype=torch.int32) for _ in range(2)]
    groups = {}
    for key, entry in index["argmax"].items():
        if not key.startswith(f"{M}x{N} "):
            continue
        c = entry["config"]
        grid, block = M // c["RB"], 32 * c["W"] * c["RB"]
        for v, path in entry["variants"].items():
            k = kernel(path, entry["kernel"])
            for O in ((0, CAP[(M, N)]) if c["RB"] == 1 else (0,)):
                extra = capped(k, block, O) if O else {}
                fns = [k.bind(grid, block, x, y, **extra) for x, y in zip(xs, ys)]
                for f, y, ref in zip(fns, ys, refs):
                    y.fill_(-1); f(); torch.cuda.synchronize()
                    assert torch.equal(y.long(), ref), (key, v, O)
                groups[f"{key[len(str(M)) + len(str(N)) + 2:]} {v}" + (f" O{O}" if O else "")] = fns
    bn, w = TRITON[(M, N)]
    tk = _triton_argmax()
    groups[f"triton BN{bn} w{w}"] = [lambda i=i: tk[(M,)](xs[i], ys[i], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w)
                                     for i in range(2)]
    for f, y, ref in zip(groups[f"triton BN{bn} w{w}"], ys, refs):
        y.fill_(-1); f(); torch.cuda.synchronize(); assert torch.equal(y.long(), ref)
    read, cfg = ceiling.fastest_read(xs)
    groups["read " + cfg] = read
    for rep in range(3):
        report(f"argmax {M}x{N}", interleaved(groups, rounds=7), out)
    del xs, ys, groups; torch.cuda.empty_cache()

M, N = 4096, 16384
xs = [torch.randn(M, N, device="cuda") * 3 for _ in range(2)]
refs = [torch.softmax(x.double(), dim=1).float() for x in xs]
ys = [torch.empty(M, N, device="cuda") for _ in range(2)]
groups = {}
for who, entry in index["softmax"].items():
    for v, path in entry["variants"].items():
        k = kernel(path, entry["kernel"])
        fns = [k.bind(M, 1024, x, y) for x, y in zip(xs, ys)]
        for f, y, ref in zip(fns, ys, refs):
            y.fill_(float("nan")); f(); torch.cuda.synchronize()
            assert (y - ref).abs().max().item() < 1e-5, (who, v)
        groups[f"{who} {v}"] = fns
for rep in range(3):
    report(f"softmax {M}x{N} f32", interleaved(groups, rounds=7), out)
json.dump(out, open(f"{OUT}/probe8.json", "w"), indent=1)
print("probe8 done", flush=True)
