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
    (16384, 4096): ([(8, 1, 4, False, False), (8, 1, 2, True, False), (2, 2, 4, True, False), (8, 1, 1, False, True),
                     (8, 1, 2, False, True), (4, 1, 1, False, True), (4, 1, 2, False, True), (16, 1, 1, False, True),
                     (2, 2, 2, False, True)], (0, "max L1"), [(2048, 8), (1024, 4), (4096, 8)]),
    (4096, 16384): ([(4, 1, 8, True, False), (8, 1, 4, True, False), (32, 1, 1, False, True), (16, 1, 1, False, True),
                     (16, 1, 2, False, True), (8, 1, 2, False, True), (8, 1, 4, False, True)], (0, "max L1"),
                    [(16384, 32), (2048, 8)]),
}
def ok(r):
    assert int(r[0]) == 0, r
    return r[1] if len(r) > 1 else None
def config(M, N, W, RB, C, P, U=False):
    c = ArgmaxConfig(M, N, "f32", W=W, RB=RB, C=C, P=P, F=True, I=W > 1, U=U)
    return dataclasses.replace(c, P=P and c.K >= 2)
def cap(fn, block, k):
    """(pct, smem bytes, carveout KB) giving exactly k CTAs an SM, the smallest carveout first."""
    for C in CARVE:
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
        for k in caps:
            pct, smem, C = (-1, 0, None) if k == 0 else (0, 0, 0)
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
            if k:
                ok(cu.cuFuncSetAttribute(fn, ATTR, 0))
                occ = ok(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, c.block, 0))
            name = f"{c.label()} " + (f"natural {natural}/SM" if k == 0 else f"carveout 0 ({occ}/SM)")
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
    for rep in range(1):
        t = interleaved(groups, rounds=9)
        out[f"{M}x{N}"].append(t)
        print(f"--- {M}x{N} repetition {rep}", flush=True)
        for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
            print(f"{M}x{N} {name:55s} {ms * 1e3:7.2f} us", flush=True)
    del xs, ys; torch.cuda.empty_cache()
json.dump(out, open(f"{OUT}/probe3.json", "w"), indent=1)
# where each kernel's loads sit in its SASS: the LDG lines against the first compare
import subprocess, tempfile
from tile_mlir import cache as tcache
with open(f"{OUT}/sass-loads.txt", "w") as f:
    for (M, N), (ours, caps, tri) in VARIANTS.items():
        for v in ours:
            c = config(M, N, *v)
            a = tcache.lookup(argmax_rows(c), tile_mlir.Options(**OPTIONS))
            d = tempfile.mkdtemp()
            open(f"{d}/k.ptx", "w").write(a.ptx)
            subprocess.run(["ptxas", "-arch=sm_90a", f"{d}/k.ptx", "-o", f"{d}/k.cubin"], check=True)
            sass = subprocess.run(["cuobjdump", "-sass", f"{d}/k.cubin"], capture_output=True, text=True).stdout
            lines = [ln.split(";")[0].strip() for ln in sass.splitlines() if "/*0" in ln]
            ldg = [i for i, ln in enumerate(lines) if "LDG" in ln]
            cmp_ = [i for i, ln in enumerate(lines) if "FSETP" in ln or "FMNMX" in ln]
            f.write(f"{M}x{N} {c.label()}: {len(lines)} instructions, LDG at {ldg}, first compare at {cmp_[:1]}\n")
print(open(f"{OUT}/sass-loads.txt").read())
