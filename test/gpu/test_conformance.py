"""Every case of the conformance matrix, compiled, launched, and checked against numpy.

For each case (``tile_mlir.testing.matrix.CASES``): fresh random inputs (and, for the
special cases, every NaN / infinity / signed-zero scenario), a poisoned output buffer
(holding the old values with accum), one launch of one block of ``case.threads()``
threads, then ``case.check`` must find nothing. See conftest.py for the command.
"""

import os
import zlib

import numpy as np
import pytest

import tile_mlir
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.cases import special_inputs
from tile_mlir.testing.matrix import CASES

CHIP = "sm_90a"  # what tile_mlir.testing.prepare compiles for by default
BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_conformance(case, seed):
    kernel = tile_mlir.compile(case.kernel_text(CHIP), {"chip": CHIP}, backend=BACKEND)[case.name]
    # One stream per case, so that any case repeats alone with the run's seed.
    rng = np.random.default_rng([seed, zlib.crc32(case.name.encode())])
    inputs = [("random", *case.random_inputs(rng))]
    if case.special:
        inputs += special_inputs(case, rng)
    problems = []
    for scenario, x, old in inputs:
        a, b = case.pack(x), case.output_buffer(old)
        kernel.launch(1, case.threads(), a, b)
        problems += [f"[{scenario}] {p}" for p in case.check(x, old, b)]
    shown = "\n".join(problems[:20])
    more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
    assert not problems, f"{case.name} (seed {seed}, TILE_MLIR_SEED={seed} repeats it):\n{shown}{more}"
