"""The README's Python examples run as written: each ```python block, verbatim, from the
repository root (here, without a GPU, in the CPU interpreter)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"^```python\n(.*?)^```$", (ROOT / "README.md").read_text(), re.M | re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2
    assert any("build.kernel(" in block and ".launch(" in block for block in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_a_readme_python_block_runs_as_written(block, monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
