"""Make ``python/`` importable, so the tests run from a plain checkout."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))


def pytest_terminal_summary(terminalreporter):
    """Say how many random differential cases ran (test_differential.py)."""
    for name, module in list(sys.modules.items()):
        if name.endswith("test_differential") and hasattr(module, "RUN"):
            terminalreporter.write_line(
                f"differential: {module.RUN['cases']} random cases run in the interpreter against numpy"
            )
