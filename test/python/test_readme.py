"""The README's Python examples run as written: each ```python block, verbatim, from the
repository root (here, without a GPU, in the CPU interpreter)."""

import re
from pathlib import Path

import pytest

from tile_mlir.errors import BuildError

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"^```python\n(.*?)^```$", README, re.M | re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2
    assert any("build.kernel(" in block and ".launch(" in block for block in BLOCKS)


def test_the_readme_builds_a_whole_kernel_and_shows_its_error_as_raised(monkeypatch, tmp_path):
    """The builder's example has a copy, a loop and a reduction; with kind="prod" it raises
    the error the README quotes, at the line it names."""
    (block,) = [b for b in BLOCKS if "ops.copy(" in b and ".range(" in b and "ops.reduce(" in b and ".launch(" in b]
    quoted = re.search(r"`(row_sumsq\.py:\d+:\d+: error: [^`]*)`", " ".join(README.split())).group(1)
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(BuildError) as info:
        exec(compile(block.replace('kind="sum"', 'kind="prod"'), "row_sumsq.py", "exec"), {"__name__": "__readme__"})
    assert str(info.value).splitlines()[0] == quoted


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_a_readme_python_block_runs_as_written(block, monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    exec(compile(block, "README.md", "exec"), {"__name__": "__readme__"})
