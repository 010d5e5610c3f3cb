"""Triton's own reduction tests (``test_reduce1d``, ``test_reduce``, ``test_generic_reduction``
and the combiners of ``test_scan2d``, from Triton's python/test/unit/language/test_core.py),
ported to ``tile.reduce`` kernels and run in the CPU interpreter against numpy: argmax and
argmin with their ties, NaN and infinities, and combiner regions over tuples.
python/tile_mlir/testing/triton_port.py lists the cases, says what each ports and where
tile-mlir's contract is stricter than Triton's; test/gpu/test_triton_reduce_port_gpu.py
runs the same kernels on the GPU.

Every case runs. The reference of a case folds in numpy's row-major order of the reduced
coordinates, except for the ``out_of_order`` cases (test_scan2d's linear_recurrence and
cummax, associative but not commutative, over lanes or over registers outside the warps):
docs/spec.md ("The lower coordinates go left", "Associativity is the user's contract")
fixes their fold in another sequence, so their reference folds the combiner's numpy
formula (triton_port's ``COMBINERS``) over the partials in that sequence
(``combiner_cases.fold_sequence``, from the layout), and the test also asserts that
row-major order would give a different result on the same inputs: a fold that went
row-major fails it.

The inputs' seed is drawn per run (``TILE_MLIR_SEED`` repeats one) and named in every failure.
"""

import numpy as np
import pytest

from tile_mlir.testing.conformance import session_seed
from tile_mlir.testing.triton_port import CASES, run_case

SEED = session_seed()


@pytest.mark.parametrize("case", [c for c in CASES if not c.out_of_order], ids=lambda case: case.name)
def test_triton_case_in_the_interpreter(case):
    """Against numpy, the reduced coordinates in row-major order."""
    problems = run_case(case, "interpreter", SEED)
    assert not problems, f"{case.name} ({case.upstream}; TILE_MLIR_SEED={SEED} repeats it):\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("case", [c for c in CASES if c.out_of_order], ids=lambda case: case.name)
def test_out_of_order_case_folds_in_the_documented_sequence(case):
    """Against the combiner's numpy formula folded in docs/spec.md's sequence, on inputs
    where row-major order gives another result."""
    problems = run_case(case, "interpreter", SEED)
    assert not problems, (f"{case.name} ({case.upstream}; TILE_MLIR_SEED={SEED} repeats it), against the "
                          "documented fold sequence:\n" + "\n".join(problems[:20]))


def test_out_of_order_marks_the_layouts_whose_sequence_is_not_row_major():
    """A non-commutative combiner's case is ``out_of_order`` exactly when its documented
    sequence is not row-major, so the row-major reference of the other cases is the
    documented one too; ``first``'s reference, the lowest coordinate, comes first on
    every layout (docs/spec.md)."""
    for case in CASES:
        if case.combiner in ("linear_recurrence", "cummax", "first"):
            row_major = (case.sequence == np.arange(case.sequence.shape[1])).all()
            assert case.out_of_order == (not row_major and case.combiner != "first"), case.name
            assert (case.sequence[:, 0] == 0).all(), case.name
    assert sum(case.out_of_order for case in CASES) == 8


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
