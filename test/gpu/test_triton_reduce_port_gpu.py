"""The Triton port of python/tile_mlir/testing/triton_port.py on the GPU: argmax/argmin and
combiner reductions, the same kernels and checks as test/python/test_triton_reduce_port.py.
Every case runs: against numpy's row-major reference, and the ``out_of_order`` cases
against the combiner's numpy formula folded in docs/spec.md's sequence, on inputs where
row-major order gives another result. The kernels come from the cache that
``python -m tile_mlir.testing.prepare`` fills (conftest.py has the command).
"""

import os

import pytest
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.triton_port import CASES, run_case

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("case", [c for c in CASES if not c.out_of_order], ids=lambda case: case.name)
def test_triton_case_on_the_gpu(case, seed):
    """Against numpy, the reduced coordinates in row-major order."""
    problems = run_case(case, BACKEND, seed)
    assert not problems, f"{case.name} ({case.upstream}; TILE_MLIR_SEED={seed} repeats it):\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("case", [c for c in CASES if c.out_of_order], ids=lambda case: case.name)
def test_out_of_order_case_folds_in_the_documented_sequence_on_the_gpu(case, seed):
    """Against the combiner's numpy formula folded in docs/spec.md's sequence, on inputs
    where row-major order gives another result."""
    problems = run_case(case, BACKEND, seed)
    assert not problems, (f"{case.name} ({case.upstream}; TILE_MLIR_SEED={seed} repeats it), against the "
                          "documented fold sequence:\n" + "\n".join(problems[:20]))
