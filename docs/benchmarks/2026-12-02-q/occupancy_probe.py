"""Occupancy probe: our best argmax kernels capped at k CTAs an SM (dynamic shared memory
per CTA), timed in turns against Triton's best and the pure read."""
import sys, json
import torch
import tile_mlir
from benchmarks import ceiling
from benchmarks.argmax import candidates, _triton_argmax
from benchmarks.argmax_kernels import argmax_rows
from benchmarks.measure import OPTIONS
from benchmarks.timing import interleaved

SMEM = 227 * 1024
out = {}
for (M, N), labels, tri in (((16384, 4096), ["W8 RB1 C4", "W8 RB1 C4 F I"], (2048, 8)),
                            ((4096, 16384), ["W4 RB1 C8 P F I", "W32 RB1 C4 F I", "W8 RB1 C4 F I"], (16384, 32))):
    xs = [torch.randn(M, N, device="cuda") for _ in range(2)]
    ref = torch.argmax(xs[0], dim=1)
    ys = [torch.empty(M, device="cuda", dtype=torch.int32) for _ in range(2)]
    groups = {}
    for c in candidates(M, N, "f32"):
        if c.label() not in labels:
            continue
        kern = tile_mlir.compile(argmax_rows(c), OPTIONS, backend="cuda")[c.name]
        for k in (0, 2, 3, 4, 5, 6):
            if k and c.block * k > 2048:
                continue
            smem = 0 if not k else (228 * 1024) // k - 2048
            bound = [kern.bind(c.grid, c.block, x, y, shared_mem=smem) for x, y in zip(xs, ys)]
            ys[0].fill_(-1); bound[0](); torch.cuda.synchronize()
            assert torch.equal(ys[0].long(), ref), (c.label(), k)
            groups[f"{c.label()} k{k}"] = bound
    kernel = _triton_argmax()
    bn, w = tri
    fns = [lambda i=i: kernel[(M,)](xs[i], ys[i], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w) for i in range(2)]
    groups[f"triton BN{bn} w{w}"] = fns
    groups["read"] = ceiling.fastest_read(xs)[0]
    t = interleaved(groups, rounds=9)
    out[f"{M}x{N}"] = t
    for name, ms in sorted(t.items(), key=lambda kv: kv[1]):
        print(f"{M}x{N} {name:28s} {ms * 1e3:7.2f} us {M * N * 4 / ms / 1e6:6.0f} GB/s", flush=True)
    # the Triton kernel's registers, PTX and SASS facts
    ck = kernel[(M,)](xs[0], ys[0], N, BLOCK_N=bn, ONE_PASS=bn == N, num_warps=w)
    try:
        open(f"{sys.argv[1]}/triton_{M}x{N}.ptx", "w").write(ck.asm["ptx"])
        print("triton regs", ck.n_regs, "spills", ck.n_spills, flush=True)
    except Exception as e:
        print("no asm", e)
json.dump(out, open(f"{sys.argv[1]}/probe.json", "w"), indent=1)
