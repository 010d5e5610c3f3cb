"""Differential property tests: lowered kernels in the CPU interpreter vs numpy float64.

Each example draws a random valid ``tile.reduce`` configuration
(``tile_mlir.testing.differential.random_case``: layouts with random lane-bit
assignments and registers, shapes, positive and negative axes, kind, dtype,
accum, thread or warp scope), lowers it with ``tile-lower-reduction`` (a quarter of
the cases with ``fold=tree``), runs it in
the interpreter on fresh random inputs and checks every dst place against the
numpy reference (``ReduceCase.check``: integers exact, max/min exact with docs/spec.md's
NaN rules, sums within n * eps * sum|x| for n terms, replicas bit-identical).

hypothesis drives the configuration through ``randoms()``, so a failure shrinks to
a small configuration; the failure message carries the case and its lowered IR.
The number of cases run is printed at the end of the session.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tile_mlir.interpreter import interpreted_kernels
from tile_mlir.compiler import lower_tile_ops
from tile_mlir.options import Options
from tile_mlir.testing.differential import random_case

EXAMPLES = 2000
RUN = {"cases": 0}  # read by conftest's terminal summary


@settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(0, 2**32 - 1))
def test_interpreter_matches_numpy(rng, seed):
    case = random_case(rng, "diff")
    fold = "tree" if rng.random() < 0.25 else "linear"
    lowered, signatures = lower_tile_ops(case.kernel_text(), Options(fold=fold))
    x, old = case.random_inputs(np.random.default_rng(seed))
    old = old if case.accum else None
    a, b = case.pack(x), case.output_buffer(old)
    interpreted_kernels(lowered, signatures)[case.name].launch(1, case.threads(), a, b)
    RUN["cases"] += 1
    problems = case.check(x, old, b)
    assert not problems, f"{case} fold={fold}\n" + "\n".join(problems[:5]) + f"\nlowered IR:\n{lowered}"
