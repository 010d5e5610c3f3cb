"""Make ``python/`` importable, so the tests run from a plain checkout."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
