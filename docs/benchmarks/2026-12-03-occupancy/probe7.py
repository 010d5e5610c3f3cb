"""Probe 7: the CTAs an SM holds at once at a launch, counted by the CTAs themselves (thread 0
of each adds one to its SM's counter, keeps the peak, spins, and takes one off), against
what cuOccupancyMaxActiveBlocksPerMultiprocessor says for the same dynamic shared memory and
carveout; and the argmax kernel's O4 and O5 launches (benchmarks.argmax.bind) as timed."""
import sys, json
import torch
import tile_mlir
from cuda.bindings import driver as cu

text = open(".cache/resident.mlir").read()
k = tile_mlir.compile(text, {"chip": "sm_90a"}, backend="cuda").resident
SPIN = 40000  # cycles, about 20 us
out = []
for block in (128, 256, 1024):
    for pct, shared in ((None, 0), (0, 0), (43, 0), (43, 19456), (43, 16000), (43, 24 * 1024), (57, 18176), (57, 21504),
                        (28, 9856), (28, 19456), (3, 256), (3, 512), (100, 24 * 1024), (100, 40 * 1024)):
        active = torch.zeros(1024, dtype=torch.int32, device="cuda")
        peak = torch.zeros(1024, dtype=torch.int32, device="cuda")
        query = k.max_active_blocks(block, shared, carveout=pct)
        k.bind(132 * 40, block, active, peak, SPIN, shared_mem=shared, carveout=pct)()
        torch.cuda.synchronize()
        p = peak[:132].cpu()
        row = {"block": block, "percent": pct, "shared": shared, "query": query, "peak_max": int(p.max()),
               "peak_min": int(p.min()), "left": int(active.sum())}
        out.append(row)
        print(row, flush=True)
json.dump(out, open(f"{sys.argv[1]}/probe7.json", "w"), indent=1)
