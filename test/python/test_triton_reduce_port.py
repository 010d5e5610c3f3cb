"""Triton's own reduction tests (``test_reduce1d``, ``test_reduce``, ``test_generic_reduction``
and the combiners of ``test_scan2d``, from Triton's python/test/unit/language/test_core.py),
ported to ``tile.reduce`` kernels and run in the CPU interpreter against numpy: argmax and
argmin with their ties, NaN and infinities, and combiner regions over tuples.
python/tile_mlir/testing/triton_port.py lists the cases, says what each ports and where
tile-mlir's contract is stricter than Triton's; test/gpu/test_triton_reduce_port_gpu.py
runs the same kernels on the GPU.

The ``out_of_order`` cases (an associative, non-commutative combiner over lanes, or over
registers that are not the coordinate's lowest digits: test_scan2d's linear_recurrence and
cummax) are not run: docs/spec.md documents the combiner's fold order (the lane butterfly
from the highest bit down), which equals the reduction in coordinate order only for a
commutative combiner, and these cases need the in-order fold.

The inputs' seed is drawn per run (``TILE_MLIR_SEED`` repeats one) and named in every failure.
"""

import pytest

from tile_mlir.testing.conformance import session_seed
from tile_mlir.testing.triton_port import CASES, run_case

SEED = session_seed()


@pytest.mark.parametrize("case", [c for c in CASES if not c.out_of_order], ids=lambda case: case.name)
def test_triton_case_in_the_interpreter(case):
    problems = run_case(case, "interpreter", SEED)
    assert not problems, f"{case.name} ({case.upstream}; TILE_MLIR_SEED={SEED} repeats it):\n" + "\n".join(problems[:20])


def test_every_upstream_test_is_ported():
    """The port covers each Triton test it names, each of Triton's dtypes that tile-mlir
    has, and every scope a row may take (a thread, a warp, a CTA of warps)."""
    upstream = {case.upstream.split("[")[0].split(" ")[0] for case in CASES}
    assert upstream == {"test_reduce1d", "test_reduce", "test_generic_reduction", "test_scan2d"}
    argmax = [case for case in CASES if case.kind]
    assert {case.dtype for case in argmax} == {"i32", "i64", "f16", "f32", "f64", "bf16"}
    assert {case.kind for case in argmax} == {"argmax", "argmin"}
    assert {case.exec_scope for case in CASES} == {"thread", "warp", "cta"}
    assert {case.combiner for case in CASES} - {None} == {"welford", "sum", "first", "linear_recurrence", "cummax"}
