"""Every case of the shared variant's matrix, compiled, launched, and checked against numpy.

For each case (``tile_mlir.testing.shared_cases.SHARED_CASES``): fresh random inputs
(and, for the special cases, every NaN / infinity / signed-zero scenario), B poisoned
(holding the old values with accum), one launch of one block of ``case.threads()``
threads, in which the case's scope instance runs the op on workgroup tiles; then
``case.check`` must find nothing: the rules of ``cases.ReduceCase.check`` (NaN, -0 < +0,
sum bounds, poison) and the bits of the documented fold order. See conftest.py for the
command (``python -m tile_mlir.testing.prepare`` compiles these cases too).
"""

import os
import zlib

import numpy as np
import pytest
import tile_mlir
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.shared_cases import SHARED_CASES, run

CHIP = "sm_90a"  # what tile_mlir.testing.prepare compiles for by default
BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("case", SHARED_CASES, ids=lambda case: case.name)
def test_conformance_shared(case, seed):
    kernel = tile_mlir.compile(case.kernel_text(CHIP), {"chip": CHIP}, backend=BACKEND)[case.name]
    # One stream per case, so that any case repeats alone with the run's seed.
    problems = run(case, kernel, np.random.default_rng([seed, zlib.crc32(case.name.encode())]))
    shown = "\n".join(problems[:20])
    more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
    assert not problems, f"{case.name} (seed {seed}, TILE_MLIR_SEED={seed} repeats it):\n{shown}{more}"
