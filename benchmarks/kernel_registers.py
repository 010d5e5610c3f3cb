"""Registers, spill bytes and exponentials of the fused forward kernels, from ptxas:

    PYTHONPATH=python python -m benchmarks.kernel_registers [--kernels softmax,...] [--dtypes f32,bf16] [--n 16384,65536]

Here, on the development machine (MLIR and ptxas; no GPU). For each kernel, dtype and row
length N, the kernel of its plan (``tile_mlir.kernels.plan``: the measured plans at N =
16384 and 65536) is lowered to PTX for sm_90a (``compiler.lower_to_ptx``) and assembled
with ``ptxas -v``; one line each: the plan, ptxas's registers per thread and spill
bytes (stores + loads), and the ``ex2.approx`` instructions in the PTX (each exponential
is one; nothing in these kernels is in a loop, so it is the count a thread executes).
About 30 s on a quiet core.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

from tile_mlir.compiler import lower_to_ptx
from tile_mlir.kernels import KERNELS, kernel_text, plan

CHIP = "sm_90a"
USAGE = re.compile(r"Used (\d+) registers")
SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def measure(kernel: str, N: int, dtype: str) -> dict:
    """ptxas's registers and spill bytes, and the PTX's ``ex2.approx`` count, of one kernel."""
    ptx = lower_to_ptx(kernel_text(kernel, 1, N, dtype, chip=CHIP)).ptx
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx)
        r = subprocess.run(["ptxas", "-v", f"-arch={CHIP}", "-o", str(Path(tmp) / "k.cubin"), str(src)],
                           capture_output=True, text=True, check=True)
    spill = SPILL.search(r.stderr)
    return {"plan": plan(1, N, dtype, kernel).label(), "registers": int(USAGE.search(r.stderr).group(1)),
            "spill": int(spill.group(1)) + int(spill.group(2)), "ex2": ptx.count("ex2.approx")}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default=",".join(KERNELS))
    ap.add_argument("--dtypes", default="f32,bf16")
    ap.add_argument("--n", default="16384,65536")
    a = ap.parse_args(argv)
    print("| kernel | dtype | N | plan | registers | spill bytes | ex2.approx |\n|---|---|---:|---|---:|---:|---:|")
    for kernel in a.kernels.split(","):
        for dtype in a.dtypes.split(","):
            for N in map(int, a.n.split(",")):
                m = measure(kernel, N, dtype)
                print(f"| {kernel} | {dtype} | {N} | {m['plan']} | {m['registers']} | {m['spill']} | {m['ex2']} |",
                      flush=True)


if __name__ == "__main__":
    main()
