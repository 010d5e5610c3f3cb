"""Probe 6: softmax 4096x16384, one 1024-thread CTA a row: two exchanges, the pair across
the warps (combiner), at every step, and the warps' pairs exchanged once and combined by
named warp reductions; timed in turns (benchmarks.argmax._softmax), three times."""
import sys, json
import torch
from benchmarks.argmax import _softmax
from benchmarks.measure import log
out = []
for rep in range(3):
    for dtype in ("f32", "bf16"):
        r = _softmax(dtype, log)
        out.append(r)
        print(rep, dtype, {k: round(v * 1e3, 2) for k, v in r.items() if k.endswith("_ms")}, flush=True)
        torch.cuda.empty_cache()
json.dump(out, open(f"{sys.argv[1]}/probe6.json", "w"), indent=1)
