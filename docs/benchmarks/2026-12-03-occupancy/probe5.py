"""Probe 3: our argmax kernels capped at k CTAs an SM by the smallest shared-memory carveout
and dynamic shared memory that give exactly k (cuOccupancyMaxActiveBlocksPerMultiprocessor
checked), so L1 keeps the most; timed in turns against Triton and the pure read, twice."""
import sys, json, dataclasses
import torch
import tile_mlir
from cuda.bindings import driver as cu
from benchmarks import ceiling
from benchmarks.argmax import _triton_argmax
from benchmarks.argmax_kernels import ArgmaxConfig, argmax_rows
from benchmarks.measure import OPTIONS
from benchmarks.timing import interleaved

OUT = sys.argv[1]
CARVE = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)
ATTR = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
VARIANTS = {
    (16384, 4096): ([(8, 1, 4, False), (8, 1, 2, True)], (0, (6, 100), (6, 132), (5, 64), (5, 100), (5, 132), (4, 100)),
                    [(2048, 8), (1024, 4)]),
}
def ok(r):
    assert int(r[0]) == 0, r
    return r[1] if len(r) > 1 else None
def config(M, N, W, RB, C, P):
    c = ArgmaxConfig(M, N, "f32", W=W, RB=RB, C=C, P=P, F=True, I=W > 1)
    return dataclasses.replace(c, P=P and c.K >= 2)
def cap(fn, block, k, C):
    """(pct, smem bytes, carveout KB) giving exactly k CTAs an SM at carveout C KB."""
    for C in (C,):
        pct = (C * 100) // 228
        ok(cu.cuFuncSetAttribute(fn, ATTR, pct))
        for s in range(0, C * 1024 + 1, 128):
            occ = ok(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, block, s))
            if occ == k:
                return pct, s, C
            if occ < k:
                break
    raise ValueError(f"no carveout gives {k} CTAs")
out = {}
for (M, N), (ours, caps, tri) in VARIANTS.items():
    xs = [torch.randn(M, N, device="cuda") for _ in range(3)]
    ref = torch.argmax(xs[0], dim=1)
    ys = [torch.empty(M, device="cuda", dtype=torch.int32) for _ in range(3)]
    groups = {}
    for v in ours:
        c = config(M, N, *v)
        kern = tile_mlir.compile(argmax_rows(c), OPTIONS, backend="cuda")[c.name]
        fn = kern._cu_function()
        ok(cu.cuFuncSetAttribute(fn, ATTR, -1))
        natural = ok(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, c.block, 0))
        for kc in caps:
            k = kc if kc == 0 else kc[0]
            pct, smem, C = (-1, 0, None) if k == 0 else cap(fn, c.block, *kc)
            bound = [kern.bind(c.grid, c.block, x, y, shared_mem=smem) for x, y in zip(xs, ys)]
            def with_carve(b, fn=fn, pct=pct):
                def f():
                    cu.cuFuncSetAttribute(fn, ATTR, pct)
                    b()
                return f
            fns = [with_carve(b) for b in bound]
            ys[0].fill_(-1); fns[0](); torch.cuda.synchronize()
            if not torch.equal(ys[0].long(), ref):
                print("WRONG", c.label(), k, flush=True); continue
            name = f"{c.label()} " + (f"natural {natural}/SM" if k == 0 else f"cap {k}/SM (carve {C} KB, smem {smem} B)")
            groups[name] = fns
            print(M, N, name, flush=True)
    kernel = _triton_argmax()
    for bn, w in tri:
        fns = [lambda i=i, bn=bn, w=w: kernel[(M,)](xs[i], ys[i], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w) for i in range(3)]
        fns[0](); torch.cuda.synchronize()
        groups[f"triton BN{bn} w{w}"] = fns
    read, cfg = ceiling.fastest_read(xs)
    groups["read " + cfg] = read
    out[f"{M}x{N}"] = []
    for rep in range(3):
        t = interleaved(groups, rounds=9)
        out[f"{M}x{N}"].append(t)
        print(f"--- {M}x{N} repetition {rep}", flush=True)
        for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
            print(f"{M}x{N} {name:55s} {ms * 1e3:7.2f} us", flush=True)
    del xs, ys; torch.cuda.empty_cache()
json.dump(out, open(f"{OUT}/probe3.json", "w"), indent=1)
