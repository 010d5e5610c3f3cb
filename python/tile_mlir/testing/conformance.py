"""Running one conformance case, the same way on the GPU and in the CPU interpreter.

``run_case(case, backend, seed)`` compiles the case's kernel for ``CHIP`` with
``tile_mlir.compile`` (``backend="cuda"``: from the compile cache where
``tile_mlir.testing.prepare`` put it; ``"interpreter"``: lowered here, run on the CPU),
and launches it once per input set: fresh random inputs, then, for a special case, every
NaN / infinity / signed-zero scenario (``cases.special_inputs``). Each launch is one block
of ``case.threads()`` threads (a cluster case: one cluster of ``case.grid()`` blocks) on a
poisoned output buffer (holding the old values with accum); ``case.check`` judges it. The result is the list of problems, empty when right.

Inputs come from one numpy stream per case, seeded with ``[seed, crc32(case name)]``, so a
case repeats alone with the run's seed. ``session_seed()`` is ``$TILE_MLIR_SEED`` when set,
else a fresh one. ``test/gpu/test_conformance.py`` (the GPU suite) and
``test/python/test_conformance_interpreter.py`` (the same cases on CI) both call
``run_case``. Importing this module does not import MLIR.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from ..vocab import DEFAULT_CHIP
from .cases import ReduceCase, special_inputs

CHIP = DEFAULT_CHIP  # what tile_mlir.testing.prepare compiles for by default


def session_seed() -> int:
    """``$TILE_MLIR_SEED``, else a fresh seed (print it: it repeats the run)."""
    return int(os.environ.get("TILE_MLIR_SEED") or np.random.SeedSequence().entropy)


def case_inputs(case: ReduceCase, seed: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(scenario, x, old)``: random inputs, then the special scenarios of a special case."""
    rng = np.random.default_rng([seed, zlib.crc32(case.name.encode())])
    inputs = [("random", *case.random_inputs(rng))]
    if case.special:
        inputs += special_inputs(case, rng)
    return inputs


def run_case(case: ReduceCase, backend: str, seed: int) -> list[str]:
    """Compile, launch and check ``case`` on ``backend``; every problem, prefixed by its
    scenario."""
    import tile_mlir

    kernel = tile_mlir.compile(case.kernel_text(CHIP), {"chip": CHIP}, backend=backend)[case.name]
    problems = []
    for scenario, x, old in case_inputs(case, seed):
        a, b = case.pack(x), case.output_buffer(old)
        kernel.launch(case.grid(), case.block(), a, b)
        problems += [f"[{scenario}] {p}" for p in case.check(x, old, b)]
    return problems


def failure_message(case: ReduceCase, seed: int, problems: list[str], shown: int = 20) -> str:
    """The first ``shown`` problems, under the case's name and the seed that repeats it."""
    more = f"\n... and {len(problems) - shown} more" if len(problems) > shown else ""
    return f"{case.name} (seed {seed}, TILE_MLIR_SEED={seed} repeats it):\n" + "\n".join(problems[:shown]) + more
