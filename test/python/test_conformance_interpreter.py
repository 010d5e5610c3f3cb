"""The GPU conformance suite on CI: every case of ``tile_mlir.testing.matrix.CASES`` run
in the CPU interpreter and checked against numpy, by the same code as test/gpu
(``tile_mlir.testing.conformance.run_case``), so what the H200 checks, CI checks too.

The inputs' seed is drawn per run (``TILE_MLIR_SEED`` repeats one) and named in every
failure.

And the loop cases catch a lowering that forgets that its op runs again: without the
phase counter (``Site.repeats`` forced to False) the op's one scratch buffer is written
by the next iteration while other warps still read it, which the interpreter reports as
a race. A cluster reduction without its second cluster barrier (the pull protocol) lets a CTA
exit while another still reads its shared memory, and one whose push protocol waits at
cta scope reads the other CTAs' pushes unordered: the interpreter reports both.
"""

import dataclasses

import pytest

from tile_mlir.compiler import lower_tile_ops
from tile_mlir.interpreter import InterpreterError
from tile_mlir.lowering import cluster as cluster_lowering
from tile_mlir.lowering import cluster_push
from tile_mlir.lowering.threads import Site
from tile_mlir.options import Options
from tile_mlir.testing.conformance import CHIP, failure_message, run_case, session_seed
from tile_mlir.testing.cluster_cases import cluster_case
from tile_mlir.testing.matrix import CASES, pattern_case

SEED = session_seed()


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_case_in_the_interpreter(case):
    problems = run_case(case, "interpreter", SEED)
    assert not problems, failure_message(case, SEED, problems)


@pytest.mark.parametrize("tag", ["loop3_cta4", "loop3_wg", "loop3_cl4"])
def test_a_loop_without_the_phase_counter_races(tag, monkeypatch):
    case = pattern_case(tag, "sum", "f32", True) if tag != "loop3_cl4" else cluster_case(tag, "sum", "f32", True)
    assert case.repeat == 3
    assert "2 phase(s)" in lower_tile_ops(case.kernel_text(CHIP), Options(chip=CHIP))[0]

    of = Site.of.__func__
    monkeypatch.setattr(Site, "of", classmethod(lambda cls, op: dataclasses.replace(of(cls, op), repeats=False)))
    assert "1 phase(s)" in lower_tile_ops(case.kernel_text(CHIP), Options(chip=CHIP))[0]
    with pytest.raises(InterpreterError, match=r"a race on workgroup memory .* with no barrier between them"):
        run_case(case, "interpreter", SEED)


@pytest.mark.parametrize("tag", ["cl4_all", "loop3_cl4"])
def test_a_cluster_reduce_without_its_second_barrier_reads_an_exited_cta(tag, monkeypatch):
    case = cluster_case(tag, "sum", "f32", True, dispatch="cluster")
    assert not run_case(case, "interpreter", SEED)
    calls = []

    def first_of_each_pair():
        calls.append(None)
        if len(calls) % 2:
            barrier()

    barrier = cluster_lowering.cluster_barrier
    monkeypatch.setattr(cluster_lowering, "cluster_barrier", first_of_each_pair)
    assert lower_tile_ops(case.kernel_text(CHIP), Options(chip=CHIP))[0].count("nvvm.cluster.wait") == 1
    message = r"which has exited|a race on workgroup memory .* reads it \(llvm\.load"
    with pytest.raises(InterpreterError, match=message):
        run_case(case, "interpreter", SEED)


@pytest.mark.parametrize("tag", ["cl4_all", "cl4_rows", "loop3_cl4"])
def test_a_cluster_push_waiting_at_cta_scope_races(tag, monkeypatch):
    """cluster_push's wait acquires at cluster scope: at cta scope (the PTX default), it
    does not order the other CTAs' pushes before the reads, and the interpreter says so."""
    case = cluster_case(tag, "sum", "f32", True)
    assert not run_case(case, "interpreter", SEED)
    try_wait = cluster_push.nvvm.mbarrier_try_wait
    monkeypatch.setattr(cluster_push.nvvm, "mbarrier_try_wait",
                        lambda res, bar, parity, scope: try_wait(res, bar, parity))
    text = lower_tile_ops(case.kernel_text(CHIP), Options(chip=CHIP))[0]
    waits = [line for line in text.splitlines() if "nvvm.mbarrier.try_wait" in line]
    assert waits and not any("mem_scope<cluster>" in line for line in waits)
    with pytest.raises(InterpreterError, match=r"a race on workgroup memory"):
        run_case(case, "interpreter", SEED)
