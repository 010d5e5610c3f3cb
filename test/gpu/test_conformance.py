"""Every case of the conformance matrix, compiled, launched, and checked against numpy.

For each case (``tile_mlir.testing.matrix.CASES``), ``tile_mlir.testing.conformance.run_case``:
fresh random inputs (and, for the special cases, every NaN / infinity / signed-zero
scenario), a poisoned output buffer (holding the old values with accum), one launch of
one block of ``case.threads()`` threads, then ``case.check`` must find nothing. See
conftest.py for the command. test/python/test_conformance_interpreter.py runs the same
cases in the CPU interpreter on CI.
"""

import os

import pytest

from tile_mlir.runtime import gpu_available
from tile_mlir.testing.conformance import failure_message, run_case
from tile_mlir.testing.matrix import CASES

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_conformance(case, seed):
    problems = run_case(case, BACKEND, seed)
    assert not problems, failure_message(case, seed, problems)
