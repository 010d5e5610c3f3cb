"""Probe 9 on the H200: the artifacts of probe9_build.py (benchmark 7's kernels through the
compiler, with tile.copy's cache = "streaming" and without), each checked against torch and
timed in turns (benchmarks.timing.interleaved) with Triton's argmax and the pure read, three
times. Run from the repository root: PYTHONPATH=python:. python3 docs/benchmarks/2026-12-03-hints/probe9.py OUT"""
import bisect, json, sys
import torch
from tile_mlir.cache import Artifact
from tile_mlir.runtime import cuda_kernels
from benchmarks import ceiling
from benchmarks.argmax import CARVEOUT, _triton_argmax
from benchmarks.timing import interleaved

OUT = sys.argv[1]
index = json.load(open(".cache/probe9/index.json"))
TRITON = {(16384, 4096): (2048, 8), (4096, 16384): (16384, 32), (1024, 65536): (4096, 8)}
DT = {"f32": torch.float32, "bf16": torch.bfloat16}


def capped(kern, block, O):
    """argmax.bind's search: the fewest bytes of shared memory giving exactly O CTAs an SM."""
    sizes = range(0, CARVEOUT * 228 * 1024 // 100, 128)
    at = bisect.bisect_left(sizes, True, key=lambda s: (kern.max_active_blocks(block, s, carveout=CARVEOUT) or 0) <= O)
    assert kern.max_active_blocks(block, sizes[at], carveout=CARVEOUT) == O
    return {"shared_mem": sizes[at], "carveout": CARVEOUT}


def timed(key, groups, out, rounds=7):
    for rep in range(3):
        t = interleaved(groups, rounds=rounds)
        out.setdefault(key, []).append(t)
        for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
            print(f"{key} {name:48s} {ms * 1e3:8.2f} us", flush=True)


out = {}
for (M, N), (bn, w) in TRITON.items():
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
            k = cuda_kernels(Artifact.load(path))[entry["kernel"]]
            extra = capped(k, block, c["O"]) if c["O"] else {}
            fns = [k.bind(grid, block, x, y, **extra) for x, y in zip(xs, ys)]
            for f, y, ref in zip(fns, ys, refs):
                y.fill_(-1); f(); torch.cuda.synchronize()
                assert torch.equal(y.long(), ref), (key, v)
            groups[f"{key.split(' ', 1)[1]} {v}"] = fns
    tk = _triton_argmax()
    groups[f"triton BN{bn} w{w}"] = [lambda i=i: tk[(M,)](xs[i], ys[i], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w)
                                     for i in range(2)]
    read, cfg = ceiling.fastest_read(xs)
    groups["read " + cfg] = read
    timed(f"argmax {M}x{N} f32", groups, out)
    del xs, ys, groups; torch.cuda.empty_cache()

M, N = 4096, 16384
for dtype in ("f32", "bf16"):
    xs = [(torch.randn(M, N, device="cuda") * 3).to(DT[dtype]) for _ in range(2)]
    refs = [torch.softmax(x.double(), dim=1) for x in xs]
    ys = [torch.empty(M, N, device="cuda", dtype=DT[dtype]) for _ in range(2)]
    groups = {}
    for key, entry in index["softmax"].items():
        if not key.startswith(dtype + " "):
            continue
        for v, path in entry["variants"].items():
            k = cuda_kernels(Artifact.load(path))[entry["kernel"]]
            fns = [k.bind(M, 1024, x, y) for x, y in zip(xs, ys)]
            for f, y, ref in zip(fns, ys, refs):
                y.fill_(float("nan")); f(); torch.cuda.synchronize()
                assert (y.double() - ref).abs().max().item() < (1e-5 if dtype == "f32" else 1e-2), (key, v)
            groups[f"{key.split(' ', 1)[1]} {v}"] = fns
    timed(f"softmax {M}x{N} {dtype}", groups, out)
    del xs, ys, groups; torch.cuda.empty_cache()
json.dump(out, open(f"{OUT}/probe9.json", "w"), indent=1)
print("probe9 done", flush=True)
