"""Probe 9, built here (no GPU): the kernels of benchmark 7 compiled with and without
tile.copy's cache = "streaming" (tile-cache-hints: ld/st.global.cs), into artifacts under
.cache/probe9/<kernel>/<variant> that probe9.py times on the H200: the argmax finalists of
the 2026-12-03 runs, and softmax's two-exchange and QuACK forms with the hint on neither,
the loads, the stores or both. Run from the repository root:
PYTHONPATH=python:. python docs/benchmarks/2026-12-03-hints/probe9_build.py"""
import dataclasses, json
from pathlib import Path
import tile_mlir
from benchmarks import argmax_kernels as ak
from benchmarks.argmax import config_of, softmax_configs
from benchmarks.measure import OPTIONS

OUT = Path(".cache/probe9")
ARGMAX = [(16384, 4096, "W8 RB1 C2 P F I O4"), (16384, 4096, "W8 RB1 C4 F I O4"), (16384, 4096, "W4 RB1 C8 O5"),
          (4096, 16384, "W4 RB1 C8 P F I O5"), (1024, 65536, "W4 RB1 C8 P F I")]
HINT = 'cache = "streaming",'


def save(text, name, options, path):
    art = tile_mlir.compile(text, options, backend="cuda")[name]._module.artifact
    art.save(path)
    return str(path)


index = {"argmax": {}, "softmax": {}}
for M, N, label in ARGMAX:
    c = config_of(M, N, "f32", label)
    variants = {}
    for v, hint in (("plain", ""), ("cs", HINT)):
        ak.CACHE = hint
        variants[v] = save(ak.argmax_rows(c), c.name, OPTIONS, OUT / f"{c.name}_{label.replace(' ', '')}" / v)
    index["argmax"][f"{M}x{N} {label}"] = {"config": dataclasses.asdict(c), "kernel": c.name, "variants": variants}
for dtype in ("f32", "bf16"):
    for c in softmax_configs(dtype):
        if c.who not in ("two", "packed_named"):
            continue
        variants = {}
        for v, (load, store) in {"plain": ("", ""), "cs_loads": (HINT, ""), "cs_stores": ("", HINT),
                                 "cs_both": (HINT, HINT)}.items():
            ak.SOFTMAX_CACHE = HINT
            text = ak.softmax_rows(c)
            # the row's load has padding, the store none: the hint on each as asked
            text = text.replace(f'exec_scope = "cta", {HINT} layout', 'exec_scope = "cta", LAYOUT', 2)
            first, second = text.split("LAYOUT", 1)[0], text.split("LAYOUT", 1)[1]
            text = first + f"{load} layout" + second.replace("LAYOUT", f"{store} layout", 1)
            assert text.count(HINT) == bool(load) + bool(store), (v, text.count(HINT))
            variants[v] = save(text, c.name, OPTIONS | {"fold": c.fold}, OUT / c.name / v)
        index["softmax"][f"{dtype} {c.who}"] = {"config": dataclasses.asdict(c), "kernel": c.name, "variants": variants}
(OUT / "index.json").write_text(json.dumps(index, indent=1))
print(sum(len(v["variants"]) for k in index.values() for v in k.values()), "artifacts")
