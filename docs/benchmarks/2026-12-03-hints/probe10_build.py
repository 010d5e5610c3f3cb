"""Probe 10, built here (no GPU): benchmark 7's four softmax forms with their second pass
taking the exponentials again (exp(x - A) / S: two an element) or multiplying those of the
first pass by exp(m - A) / S (argmax_kernels.REUSE_EXP: one an element), into artifacts under
.cache/probe10 that probe10.py times on the H200. Run from the repository root:
PYTHONPATH=python:. python docs/benchmarks/2026-12-03-hints/probe10_build.py"""
import dataclasses, json
from pathlib import Path
import tile_mlir
from benchmarks import argmax_kernels as ak
from benchmarks.argmax import softmax_configs
from benchmarks.measure import OPTIONS

OUT = Path(".cache/probe10")
index = {}
for dtype in ("f32", "bf16"):
    for c in softmax_configs(dtype):
        variants = {}
        for v, reuse in (("again", False), ("reuse", True)):
            ak.REUSE_EXP = reuse
            art = tile_mlir.compile(ak.softmax_rows(c), OPTIONS | {"fold": c.fold}, backend="cuda")[c.name]._module.artifact
            art.save(OUT / c.name / v)
            variants[v] = str(OUT / c.name / v)
        index[f"{dtype} {c.who}"] = {"config": dataclasses.asdict(c), "kernel": c.name, "variants": variants}
(OUT / "index.json").write_text(json.dumps(index, indent=1))
print(sum(len(v["variants"]) for v in index.values()), "artifacts")
