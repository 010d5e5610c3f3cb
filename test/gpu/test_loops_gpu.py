"""The ops-in-loops cases of python/tile_mlir/testing/loops.py on the GPU: a
``tile.reduce`` run three times with accum, at every scope and variant, checked against
the groups its layouts define. The kernels come from the cache that
``python -m tile_mlir.testing.prepare`` fills (conftest.py has the command).
"""

import os

import numpy as np
import pytest
import tile_mlir
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.loops import CASES
from tile_mlir.vocab import DEFAULT_CHIP

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("trial", range(3))
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_an_op_in_a_loop_on_the_gpu(case, seed, trial):
    kernel = tile_mlir.compile(case.kernel_text(), {"chip": DEFAULT_CHIP}, backend=BACKEND)[case.name]
    a = np.random.default_rng([seed, trial]).integers(-1000, 1000, size=case.threads, dtype=np.int32)
    b = np.full(case.threads, -7777777, np.int32)
    kernel.launch(case.grid, case.block, a, b)
    np.testing.assert_array_equal(b.astype(np.int64), case.expected(a))
