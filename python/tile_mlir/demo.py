"""The demonstration, end to end: ``python -m tile_mlir.demo``.

One thread reduces a 4-element f32 register vector to a scalar (docs/spec.md, "The
demonstration"; ``examples/demo.mlir``). The demo parses and verifies the program, shows the
IR after ``tile-lower-reduction``, lowers it to PTX and (where ptxas is on
PATH) a cubin, then runs it: on the GPU when one is present, otherwise in the
CPU interpreter, and checks ``B == sum(A)``.

``B == sum(A)`` is checked bit for bit against the fold order the lowering
documents: ``((A0 + A1) + A2) + A3`` in f32; the float64 sum is shown beside it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from . import api
from .errors import TileError
from .options import Options
from .vocab import DEFAULT_CHIP

DEMO = Path(__file__).resolve().parent / "examples" / "demo.mlir"


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def _compile_steps(text: str, chip: str) -> None:
    """Show the verified input, the lowered IR and the PTX (needs MLIR)."""
    from mlir.passmanager import PassManager

    from .ir import ir, make_context
    from .passes import add_pass
    from .compiler import lower_to_ptx, ptx_to_cubin
    from .options import Options

    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        pm = PassManager()
        add_pass(pm, "tile-verify")
        add_pass(pm, "tile-lower-reduction")
        pm.run(module.operation)
        _section("after tile-verify, tile-lower-reduction")
        print(module)
    lowered = lower_to_ptx(text, Options(chip=chip))
    _section(f"PTX ({chip})")
    print(lowered.ptx)
    cubin = ptx_to_cubin(lowered.ptx, lowered.chip)
    _section("cubin")
    print(f"{len(cubin)} bytes from ptxas -arch={chip}" if cubin else "ptxas is not on PATH: no cubin")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tile_mlir.demo", description=__doc__.split("\n")[0])
    ap.add_argument("--chip", default=DEFAULT_CHIP, help=f"the chip to compile for (default: {DEFAULT_CHIP})")
    ap.add_argument("--backend", choices=api.BACKENDS, default="auto")
    ap.add_argument("--seed", type=int, default=None, help="RNG seed (default: fresh)")
    args = ap.parse_args(argv)

    text = DEMO.read_text()
    _section(f"input: {DEMO.name}")
    print(text)
    try:
        _compile_steps(text, args.chip)
    except ImportError:
        print("(the MLIR bindings are not installed: using the compile cache)")

    backend = api.choose_backend(args.backend)
    _section(f"run ({backend})")
    if backend == "interpreter":
        print("no GPU here: running the kernel in the CPU interpreter" if args.backend == "auto"
              else "running the kernel in the CPU interpreter")
    rng = np.random.default_rng(args.seed)
    a = rng.uniform(-1, 1, 4).astype(np.float32)
    b = np.full(1, np.nan, np.float32)  # poisoned: a launch that writes nothing fails
    try:
        kernels = api.compile(text, Options(chip=args.chip), backend=backend)
        kernels.demo.launch(1, 1, a, b)
    except (TileError, ImportError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    expected = np.float32(np.float32(np.float32(a[0] + a[1]) + a[2]) + a[3])
    print(f"A = {a}")
    print(f"B = {b[0]!r}   sum(A) = {expected!r} (f32, fold order)   {a.astype(np.float64).sum()!r} (f64)")
    ok = b[0].tobytes() == expected.tobytes()
    print("B == sum(A): " + ("OK" if ok else "MISMATCH"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
