"""Make ``python/`` importable, so the tests run from a plain checkout; the fake-CUDA
fixtures (``fakecuda.py``) that the launch-half tests share."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import pytest  # noqa: E402

from fakecuda import FakeDriver, fake_artifact, install  # noqa: E402
from tile_mlir import runtime  # noqa: E402


@pytest.fixture
def kernels():
    """The kernels of ``fakecuda.fake_artifact()``: add_one, fill, half."""
    return runtime.cuda_kernels(fake_artifact())


@pytest.fixture
def fake(monkeypatch):
    """Launch on a ``fakecuda.FakeDriver`` (returned), for this test only."""
    driver = FakeDriver()
    install(monkeypatch, driver)
    return driver


@pytest.fixture
def no_driver(monkeypatch):
    """Fail the test if anything touches the CUDA driver."""

    def touched():
        raise AssertionError("the CUDA driver was touched")

    monkeypatch.setattr(runtime, "_driver", touched)


# The per-case sweeps: the conformance matrix's (every case of tile_mlir.testing.matrix:
# test_cases.py, test_conformance_interpreter.py, parametrized by ``case``), the
# differential suite's random modules (test_differential.py, by ``batch`` and ``case``), the
# combiner cases (test_combiners.py), and the dtype sweeps of test_dynamic_rows.py,
# test_backward.py, test_cross_entropy.py, test_fused.py and test_selection.py (by
# ``dtype``), and the cases of Triton's ported tests (test_triton_reduce_port.py) and of the
# shared-memory variant (test_shared_interpreter.py), by ``case``. The README's test command
# runs one item in SWEEP_SAMPLE[file] of each test function (in the parameters' order,
# which interleaves scopes, kinds, dtypes and layouts, so every class keeps items), and
# ``pytest -m sweep`` runs the rest, with the checks of every benchmark kernel in the
# interpreter (test_benchmarks.py, test_benchmarks_argmax.py, test_benchmarks_cluster.py:
# marked there) and 450 more random invalid ops (test_invalid.py). .ci/run runs both.
SWEEP_SAMPLE = {"test_cases.py": 32, "test_conformance_interpreter.py": 32, "test_differential.py": 32,
                "test_combiners.py": 8, "test_dynamic_rows.py": 4, "test_backward.py": 8,
                "test_cross_entropy.py": 8, "test_fused.py": 8, "test_selection.py": 2,
                "test_triton_reduce_port.py": 4, "test_shared_interpreter.py": 8}
SWEEP_PARAMS = ("case", "batch", "dtype")


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the marks
def pytest_collection_modifyitems(config, items):
    seen: dict = {}
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        sample = SWEEP_SAMPLE.get(Path(str(item.fspath)).name)
        if sample is None or not any(p in params for p in SWEEP_PARAMS):
            continue
        function = item.originalname
        index = seen[function] = seen.get(function, -1) + 1
        if index % sample:
            item.add_marker(pytest.mark.sweep)


def pytest_terminal_summary(terminalreporter):
    """Say how many random differential kernels ran (test_differential.py records them in
    each report's user properties, so the sum holds under pytest-xdist too)."""
    ran = [value for report in terminalreporter.stats.get("passed", []) + terminalreporter.stats.get("failed", [])
           for name, value in getattr(report, "user_properties", ()) if name == "differential"]
    if ran:
        terminalreporter.write_line(
            f"differential: {sum(k for k, _ in ran)} random kernels ({sum(o for _, o in ran)} ops) run in the "
            "interpreter against the reference")
