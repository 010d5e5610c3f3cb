"""``python -m tile_mlir.kernels KERNEL [--shape MxN] [--dtype f32|bf16] [--backend ...]``:
run one fused kernel on a fresh random matrix (on the GPU when there is one, else in the
CPU interpreter), compare each of its outputs with numpy in float64, print the plan and
one line per output, and exit 0 if they agree.

With ``--emit``, print the kernel's MLIR instead (without locations, after a comment that
says what it is): examples/softmax.mlir and its siblings are this, for the default shape.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .. import api
from ..testing.fused import MAIN_SHAPE, as_f64, check, random_inputs
from ..vocab import DEFAULT_CHIP
from .library import SPECS, _built, run
from .plan import DTYPES, plan
from .reference import REFERENCES


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tile_mlir.kernels", description=__doc__.split("\n\n")[0])
    parser.add_argument("kernel", choices=list(SPECS))
    parser.add_argument("--shape", default="{}x{}".format(*MAIN_SHAPE), help="M x N (default %(default)s)")
    parser.add_argument("--dtype", default="f32", choices=DTYPES)
    parser.add_argument("--backend", default="auto", choices=api.BACKENDS)
    parser.add_argument("--emit", action="store_true", help="print the kernel's MLIR instead of running it")
    args = parser.parse_args(argv)
    M, N = (int(n) for n in args.shape.lower().split("x"))
    if args.emit:
        print(emitted(args.kernel, M, N, args.dtype), end="")
        return 0
    spec, backend = SPECS[args.kernel], api.choose_backend(args.backend)
    x, *params = random_inputs(np.random.default_rng(), M, N, args.dtype, len(spec.params))
    eps = {"eps": spec.eps} if spec.eps is not None else {}
    outputs = run(spec.name, x, *params, backend=backend, **eps)
    refs = REFERENCES[spec.name](*(as_f64(a) for a in (x, *params)), **eps)
    print(f"plan: {plan(M, N, args.dtype, spec.name)}")
    ok = True
    for (name, role), got, ref in zip(spec.outputs, outputs, refs):
        error, agrees = check(got, ref, "f32" if role == "stat" else args.dtype)
        ok &= agrees
        print(f"{spec.name} {M}x{N} {args.dtype} ({backend}): {name}: max abs error {error:.1e}"
              f" vs numpy float64: {'OK' if agrees else 'FAILED'}")
    return 0 if ok else 1


def emitted(name: str, M: int, N: int, dtype: str) -> str:
    """The kernel's MLIR for an M x N matrix of ``dtype``, as ``--emit`` prints it."""
    p = plan(M, N, dtype, name)
    module = _built(name, M, p, DEFAULT_CHIP)
    func = module.body.operations[0].regions[0].blocks[0].operations[0]
    args = ", ".join(f"%arg{i} = {str(a.location)[5:-2]}" for i, a in enumerate(func.regions[0].blocks[0].arguments))
    return (f"// {name} over the rows of a {M} x {N} {dtype} matrix, as tile_mlir.kernels builds it with the plan\n"
            f"// {p.describe()}.\n"
            f"// Arguments: {args}.\n"
            f"// Written by python/tile_mlir/kernels/forward.py; regenerate with\n"
            f"//   python -m tile_mlir.kernels {name} --shape {M}x{N} --dtype {dtype} --emit > examples/{name}.mlir\n"
            f"{module.operation.get_asm()}")


if __name__ == "__main__":
    sys.exit(main())
