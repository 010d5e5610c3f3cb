"""docs/builder.md's softmax runs as written (here, without a GPU, in the CPU
interpreter), and its kind="prod" raises the error the page quotes, line and caret."""

import re
from pathlib import Path

import pytest
from tile_mlir.errors import BuildError

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "builder.md").read_text()
(BLOCK,) = re.findall(r"^```python\n(.*?)^```$", DOC, re.M | re.S)


def test_the_softmax_runs_as_written(monkeypatch, tmp_path):
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    exec(compile(BLOCK, "softmax.py", "exec"), {"__name__": "__doc__"})


def test_the_kernel_is_as_long_as_the_page_says():
    body = BLOCK[BLOCK.index("with build.kernel("):BLOCK.index("kernels = tile_mlir.compile")].strip().splitlines()
    said = int(re.search(r"The kernel is (\d+) lines of Python", DOC).group(1))
    assert len([line for line in body if line.strip()]) == said <= 35


def test_a_bad_kind_is_the_quoted_error(monkeypatch, tmp_path):
    quoted = re.search(r"^```\n(softmax\.py:.*?)^```$", DOC, re.M | re.S).group(1).splitlines()
    bad = BLOCK.replace('kind=kind', 'kind="prod"')
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "softmax.py"
    path.write_text(bad)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BuildError) as info:
        exec(compile(bad, "softmax.py", "exec"), {"__name__": "__doc__"})
    assert str(info.value).splitlines() == quoted
