"""A ``tile.reduce`` that runs again (inside ``scf.for``), at every scope and variant, in
the CPU interpreter, whose race detector sees any reuse of scratch that the lowering's
barriers do not protect (python/tile_mlir/testing/loops.py says what each case computes).
test/gpu/test_loops_gpu.py runs the same kernels on the GPU.
"""

import numpy as np
import pytest
import tile_mlir
from tile_mlir.testing.loops import CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_an_op_in_a_loop_runs_clean_and_right(case):
    kernel = tile_mlir.compile(case.kernel_text(), backend="interpreter")[case.name]
    a = np.random.default_rng().integers(-1000, 1000, size=case.threads, dtype=np.int32)
    b = np.full(case.threads, -7777777, np.int32)
    kernel.launch(case.grid, case.block, a, b)  # a race or a barrier error raises here
    np.testing.assert_array_equal(b.astype(np.int64), case.expected(a))
