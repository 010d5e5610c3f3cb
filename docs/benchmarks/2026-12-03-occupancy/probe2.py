"""Probe 2: argmax f32, our kernels capped at k CTAs an SM by dynamic shared memory with the
smallest shared-memory carveout that holds k CTAs (L1 keeps the rest), timed in turns against
Triton's best and the pure read."""
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
# k -> (carveout KB, dynamic smem KB)
CAPS = {0: (None, 0), "c8": (8, 0), 6: (64, 9), 5: (64, 11), 4: (64, 14), 3: (64, 19), "5b": (100, 18)}
VARIANTS = {
    (16384, 4096): ([(8, 1, 2, True), (8, 1, 4, False), (2, 2, 4, True), (4, 1, 2, True)], [(2048, 8), (1024, 4)]),
    (4096, 16384): ([(8, 1, 2, True), (8, 1, 4, True), (4, 1, 8, True)], [(16384, 32)]),
}
def config(M, N, W, RB, C, P):
    c = ArgmaxConfig(M, N, "f32", W=W, RB=RB, C=C, P=P, F=True, I=W > 1)
    return dataclasses.replace(c, P=P and c.K >= 2)
def check(r):
    err = r[0] if isinstance(r, tuple) else r
    assert int(err) == 0, r
    return r[1] if isinstance(r, tuple) and len(r) > 1 else None
out = {}
for (M, N), (ours, tri) in VARIANTS.items():
    xs = [torch.randn(M, N, device="cuda") for _ in range(3)]
    ref = torch.argmax(xs[0], dim=1)
    ys = [torch.empty(M, device="cuda", dtype=torch.int32) for _ in range(3)]
    groups = {}
    for v in ours:
        c = config(M, N, *v)
        for k, (carve, smem_kb) in CAPS.items():
            # a fresh kernel object per cap: the carveout is the function's attribute
            kern = tile_mlir.compile(argmax_rows(c), OPTIONS, backend="cuda", cache=True)[c.name]
            fn = kern._cu_function()
            pct = -1
            if carve is not None:
                pct = int(carve * 100 / 228) + (0 if carve * 100 % 228 == 0 else 1)
                check(cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, pct))
            smem = smem_kb * 1024
            occ = check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, c.block, smem))
            bound = [kern.bind(c.grid, c.block, x, y, shared_mem=smem) for x, y in zip(xs, ys)]
            ys[0].fill_(-1); bound[0](); torch.cuda.synchronize()
            if not torch.equal(ys[0].long(), ref):
                print("WRONG", c.label(), k, flush=True); continue
            def with_carve(b, fn=fn, pct=pct if carve is not None else -1):
                def f():
                    cu.cuFuncSetAttribute(fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, pct)
                    b()
                return f
            groups[f"{c.label()} k{k} (occ {occ})"] = [with_carve(b) for b in bound]
            print(f"{M}x{N} {c.label():22s} k{k!s:3s} carve {carve} smem {smem_kb}KB occ {occ}", flush=True)
    kernel = _triton_argmax()
    tg = groups
    for bn, w in tri:
        fns = [lambda i=i, bn=bn, w=w: kernel[(M,)](xs[i], ys[i], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w) for i in range(3)]
        fns[0](); torch.cuda.synchronize()
        tg[f"triton BN{bn} w{w}"] = fns
    read, cfg = ceiling.fastest_read(xs)
    tg["read " + cfg] = read
    t = interleaved(tg, rounds=7)
    for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
        print(f"{M}x{N} {name:28s} {ms * 1e3:7.2f} us", flush=True)
    out[f"{M}x{N}"] = t
    del xs, ys; torch.cuda.empty_cache()
json.dump(out, open(f"{OUT}/probe2.json", "w"), indent=1)
