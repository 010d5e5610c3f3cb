"""Combiner reductions (docs/spec.md, "Combiner reductions") in the CPU interpreter.

* Every case of ``tile_mlir.testing.combiner_cases.COMBINER_CASES``: argmax/argmin at every
  scope and dtype against numpy's meaning (ties, NaN, infinities), combiner functions
  (first, last, online softmax, Welford, a 2x2 matrix product) against the documented
  order bit for bit and against their meaning; test/gpu/test_combiners_gpu.py runs the
  same cases on the GPU.
* The tree fold, a combiner op in a loop, the builder (``ops.reduce`` with
  ``combine=`` and ``kind="argmax"``), and what the lowering leaves behind.
"""

import numpy as np
import pytest

import tile_mlir
from tile_mlir import BuildError, build, ops
from tile_mlir.compiler import lower_tile_ops
from tile_mlir.testing.combiner_matrix import COMBINER_CASES, combiner_case, run_case
from tile_mlir.testing.conformance import session_seed

SEED = session_seed()


def _message(case, problems):
    return f"{case.name} (TILE_MLIR_SEED={SEED} repeats it):\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("case", COMBINER_CASES, ids=lambda case: case.name)
def test_case_in_the_interpreter(case):
    problems = run_case(case, "interpreter", SEED)
    assert not problems, _message(case, problems)


@pytest.mark.parametrize("where", ["t2x8", "w_lanes_inner", "wg_all", "cta8_rows", "cl4_all", "shared_cta"])
@pytest.mark.parametrize("name", ["matrix", "welford"])
def test_tree_fold(name, where):
    """fold=tree: pairwise in the thread and across warps and CTAs, the lower pair left."""
    case = combiner_case(name, "f32", where)
    problems = run_case(case, "interpreter", SEED, fold="tree")
    assert not problems, _message(case, problems)
