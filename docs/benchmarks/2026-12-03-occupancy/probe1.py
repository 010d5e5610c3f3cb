"""Probe: argmax f32 at 16384x4096 and 4096x16384: Triton's access layout in ours (C1, I),
timed in turns against Triton's best and the pure read; Triton's PTX/SASS dumped."""
import sys, json, dataclasses, subprocess, os
import torch
import tile_mlir
from benchmarks import ceiling
from benchmarks.argmax import _triton_argmax
from benchmarks.argmax_kernels import ArgmaxConfig, argmax_rows
from benchmarks.measure import OPTIONS
from benchmarks.timing import interleaved

OUT = sys.argv[1]
VARIANTS = {
    (16384, 4096): ([(8, 1, 2, True), (8, 1, 1, True), (4, 1, 1, True), (4, 1, 2, True), (16, 1, 1, True), (2, 2, 4, True),
                     (8, 1, 4, False), (4, 1, 4, True)],
                    [(2048, 8), (1024, 4), (4096, 8)]),
    (4096, 16384): ([(8, 1, 4, True), (8, 1, 1, True), (16, 1, 1, True), (32, 1, 1, True), (4, 1, 8, True), (8, 1, 2, True)],
                    [(16384, 32), (2048, 8), (4096, 8)]),
}
def config(M, N, W, RB, C, P):
    c = ArgmaxConfig(M, N, "f32", W=W, RB=RB, C=C, P=P, F=True, I=W > 1)
    return dataclasses.replace(c, P=P and c.K >= 2)
out = {}
for (M, N), (ours, tri) in VARIANTS.items():
    xs = [torch.randn(M, N, device="cuda") for _ in range(3)]
    ref = torch.argmax(xs[0], dim=1)
    ys = [torch.empty(M, device="cuda", dtype=torch.int32) for _ in range(3)]
    groups = {}
    for v in ours:
        c = config(M, N, *v)
        kern = tile_mlir.compile(argmax_rows(c), OPTIONS, backend="cuda")[c.name]
        bound = [kern.bind(c.grid, c.block, x, y) for x, y in zip(xs, ys)]
        ys[0].fill_(-1); bound[0](); torch.cuda.synchronize()
        if not torch.equal(ys[0].long(), ref):
            print("WRONG", c.label(), flush=True); continue
        groups[c.label()] = bound
    kernel = _triton_argmax()
    for bn, w in tri:
        fns = [lambda i=i, bn=bn, w=w: kernel[(M,)](xs[i], ys[i], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w) for i in range(3)]
        ys[0].fill_(-1); fns[0](); torch.cuda.synchronize()
        assert torch.equal(ys[0].long(), ref)
        groups[f"triton BN{bn} w{w}"] = fns
        ck = kernel[(M,)](xs[0], ys[0], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w)
        stem = f"{OUT}/triton_{M}x{N}_BN{bn}_w{w}"
        open(stem + ".ptx", "w").write(ck.asm["ptx"])
        open(stem + ".cubin", "wb").write(ck.asm["cubin"])
        subprocess.run(f"cuobjdump -sass {stem}.cubin > {stem}.sass", shell=True)
        os.remove(stem + ".cubin")
        print(f"triton BN{bn} w{w} regs {ck.n_regs} spills {ck.n_spills}", flush=True)
    read, cfg = ceiling.fastest_read(xs)
    groups["read " + cfg] = read
    t = interleaved(groups, rounds=9)
    out[f"{M}x{N}"] = t
    for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
        print(f"{M}x{N} {name:28s} {ms * 1e3:7.2f} us {M * N * 4 / ms / 1e6:6.0f} GB/s", flush=True)
    del xs, ys; torch.cuda.empty_cache()
json.dump(out, open(f"{OUT}/probe.json", "w"), indent=1)
