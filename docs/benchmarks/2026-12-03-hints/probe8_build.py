"""Probe 8, built here (no GPU): our fastest f32 argmax kernels and the f32 softmax forms, their
PTX given cache hints on the global loads (and stores), each variant assembled by ptxas into an
artifact under .cache/probe8/<kernel>/<variant> (probe8.py times them on the H200).
Run from the repository root: PYTHONPATH=python:. python docs/benchmarks/2026-12-03-hints/probe8_build.py"""
import dataclasses, json, subprocess, tempfile
from pathlib import Path
import tile_mlir
from benchmarks.argmax import config_of, softmax_configs
from benchmarks.argmax_kernels import argmax_rows, softmax_rows
from benchmarks.measure import OPTIONS

OUT = Path(".cache/probe8")
LOADS = {"base": "", "na": "L1::no_allocate.", "p256": "L2::256B.", "nc": "nc.", "cs": "cs.",
         "nc_na_p256": "nc.L1::no_allocate.L2::256B.", "ef": "L1::evict_first.", "lu": "lu."}
ARGMAX = [(16384, 4096, "W8 RB1 C2 P F I"), (16384, 4096, "W2 RB2 C4 P F I"), (4096, 16384, "W4 RB1 C8 P F I")]
STORES = {"": "", "_stcs": "cs."}


def assemble(ptx: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "k.ptx").write_text(ptx)
        subprocess.run(["ptxas", "-arch=sm_90a", "-o", f"{d}/k.cubin", f"{d}/k.ptx"], check=True)
        return (Path(d) / "k.cubin").read_bytes()


def variants(art, name: str, stores: dict) -> dict:
    index = {}
    for load, hint in LOADS.items():
        for tag, st in stores.items():
            ptx = art.ptx.replace("ld.global.v4.b32", f"ld.global.{hint}v4.b32").replace("st.global.v4.b32", f"st.global.{st}v4.b32")
            v = load + tag
            dataclasses.replace(art, ptx=ptx, cubin=assemble(ptx)).save(OUT / name / v)
            index[v] = str(OUT / name / v)
    return index


index = {"argmax": {}, "softmax": {}}
for M, N, label in ARGMAX:
    c = config_of(M, N, "f32", label)
    art = tile_mlir.compile(argmax_rows(c), OPTIONS, backend="cuda")[c.name]._module.artifact
    index["argmax"][f"{M}x{N} {label}"] = {"config": dataclasses.asdict(c), "kernel": c.name,
                                           "variants": variants(art, f"{c.name}_{label.replace(' ', '')}", {"": ""})}
for c in softmax_configs("f32"):
    if c.who not in ("two", "packed_named"):
        continue
    art = tile_mlir.compile(softmax_rows(c), OPTIONS | {"fold": c.fold}, backend="cuda")[c.name]._module.artifact
    index["softmax"][c.who] = {"config": dataclasses.asdict(c), "kernel": c.name, "variants": variants(art, c.name, STORES)}
(OUT / "index.json").write_text(json.dumps(index, indent=1))
print(sum(len(v["variants"]) for k in index.values() for v in k.values()), "artifacts")
