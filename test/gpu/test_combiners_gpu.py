"""Combiner reductions on the GPU: every case of
``tile_mlir.testing.combiner_matrix.COMBINER_CASES`` (argmax/argmin at every scope and
dtype with ties, NaN and infinities; first, last, online softmax, Welford and a 2x2
matrix product against the documented order), compiled into the cache by
``python -m tile_mlir.testing.prepare`` and checked as test/python/test_combiners.py
checks them in the interpreter: bit for bit, but for the online softmax, whose
``math.exp`` is the GPU's (within ``combiners.GPU_EXP_ULPS`` ulps of the interpreter's).
See conftest.py for the command; ``TILE_MLIR_CONFORMANCE_BACKEND=interpreter`` runs them
on the CPU.
"""

import os

import pytest

from tile_mlir.runtime import gpu_available
from tile_mlir.testing.combiner_matrix import COMBINER_CASES, run_case

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("case", COMBINER_CASES, ids=lambda case: case.name)
def test_combiner(case, seed):
    problems = run_case(case, BACKEND, seed)
    assert not problems, f"{case.name} (TILE_MLIR_SEED={seed} repeats it):\n" + "\n".join(problems[:20])
