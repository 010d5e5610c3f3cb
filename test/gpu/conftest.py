"""The GPU suite: conformance of compiled ``tile.reduce`` kernels on a real GPU.

One documented command, in two halves (compile here, launch there)::

    # where MLIR and ptxas are (the development machine):
    python -m tile_mlir.testing.prepare --cache .tile-cache
    # on the GPU machine, with the working tree and .tile-cache/ copied over:
    TILE_MLIR_CACHE_DIR=.tile-cache PYTHONPATH=python python3 -m pytest test/gpu -q

Without a GPU every test skips ("no GPU"). ``TILE_MLIR_CONFORMANCE_BACKEND=interpreter``
runs the same suite on the CPU interpreter instead (it needs MLIR).

Inputs are random, from a seed drawn per run and printed in the header and in every
failure; ``TILE_MLIR_SEED=<seed>`` repeats a run. The last line of the terminal summary
is ``conformance: N passed, M failed``.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from tile_mlir.testing.conformance import session_seed  # noqa: E402

SEED = session_seed()


@pytest.fixture(scope="session")
def seed() -> int:
    return SEED


def pytest_report_header(config):
    return f"conformance seed: {SEED} (TILE_MLIR_SEED={SEED} repeats this run)"


def pytest_terminal_summary(terminalreporter):
    def count(*outcomes):
        return sum(
            1
            for outcome in outcomes
            for report in terminalreporter.stats.get(outcome, [])
            if "test_conformance.py::" in getattr(report, "nodeid", "")
        )

    passed, failed, skipped = count("passed"), count("failed", "error"), count("skipped")
    if passed or failed or skipped:
        extra = f", {skipped} skipped" if skipped else ""
        terminalreporter.write_line(f"conformance: {passed} passed, {failed} failed{extra} (seed {SEED})")
