"""The compile entry points (tile_mlir.compiler): verification before lowering, located
errors, the lowering options."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import tile_mlir
from tile_mlir import vocab
from tile_mlir.compiler import lower_tile_ops, parse
from tile_mlir.diagnostics import irdl_dialects
from tile_mlir.errors import CompileError
from tile_mlir.ir import DIALECT_FILE, ir, make_context
from tile_mlir.options import Options
from tile_mlir.pipeline.stages import REPRO_KEEP

REPO = Path(__file__).resolve().parents[2]
TILE_OPT = REPO / "tools" / "tile-opt"

PRIVATE = "#gpu.address_space<private>"


def kernel(attrs: str, src: str = "4") -> str:
    """A launchable module whose kernel reduces a private buffer with ``attrs``."""
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @k(%out: memref<1xf32>) kernel {{
      %src = memref.alloca() : memref<{src}xf32, {PRIVATE}>
      %dst = memref.alloca() : memref<1xf32, {PRIVATE}>
      "tile.reduce"(%dst, %src) {{{attrs}}} : (memref<1xf32, {PRIVATE}>, memref<{src}xf32, {PRIVATE}>) -> ()
      gpu.return
    }}
  }}
}}
"""


BAD_AXES = kernel('kind = "sum", exec_scope = "thread", axes = array<i64: 3>')
OP_LINE, OP_COL = 6, 7  # where "tile.reduce" starts in BAD_AXES


def test_the_op_position_is_where_the_test_says():
    assert BAD_AXES.split("\n")[OP_LINE - 1][OP_COL - 1:].startswith('"tile.reduce"')


@pytest.mark.parametrize("compile_", [
    lambda text: lower_tile_ops(text),
    lambda text: tile_mlir.compile(text, backend="interpreter", cache=False),
], ids=["lower_tile_ops", "tile_mlir.compile"])
def test_an_invalid_op_is_one_tile_verify_error_at_the_op(compile_):
    with pytest.raises(CompileError) as info:
        compile_(BAD_AXES)
    e = info.value
    assert e.stage == "tile-verify"
    assert e.message.startswith(
        f"<source>:{OP_LINE}:{OP_COL}: error: 'tile.reduce' op axes: 3 is out of range for a rank-1 source")
    assert e.message.count("error:") == 1
    assert "no variant" not in str(e)
    # the user's line and a caret under the op
    assert e.message.split("\n")[1:] == [BAD_AXES.split("\n")[OP_LINE - 1], " " * (OP_COL - 1) + "^"]


def test_a_syntax_error_is_a_located_parse_error():
    text = BAD_AXES.replace("gpu.return", "gpu.return %")
    with make_context(), ir.Location.unknown(), pytest.raises(CompileError) as info:
        parse(text, source_name="kernel.mlir")
    assert info.value.stage == "parse"
    assert re.match(r"kernel\.mlir:7:\d+: error: ", info.value.message)


def test_a_valid_module_parses_and_lowers_with_the_options():
    text = kernel('kind = "sum", exec_scope = "thread"', src="8")
    linear, signatures = lower_tile_ops(text, Options(fold="linear"))
    tree, _ = lower_tile_ops(text, Options(fold="tree"))
    assert [s.name for s in signatures] == ["k"]
    assert "\"tile.reduce\"" not in linear and linear != tree


# --- repro files -------------------------------------------------------------------


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def repro_path(error: CompileError) -> Path:
    return Path(re.search(r"tile-opt (\S+)", error.repro).group(1))


def test_repro_files_go_under_the_cache_and_reproduce(cache_root):
    with pytest.raises(CompileError) as info:
        lower_tile_ops(BAD_AXES)
    path = repro_path(info.value)
    assert path.parent == cache_root / "repro"
    assert path.read_text() == BAD_AXES
    run = subprocess.run([sys.executable, str(TILE_OPT), str(path)], capture_output=True, text=True, check=False)
    assert run.returncode == 1 and "axes: 3 is out of range" in run.stderr


def test_the_same_failure_saves_one_file(cache_root):
    for _ in range(3):
        with pytest.raises(CompileError):
            lower_tile_ops(BAD_AXES)
    assert len(list((cache_root / "repro").iterdir())) == 1


def test_repro_files_are_pruned_to_the_newest(cache_root):
    paths = []
    for i in range(REPRO_KEEP + 5):
        with pytest.raises(CompileError) as info:
            lower_tile_ops(BAD_AXES.replace("@k(", f"@k{i}("))
        paths.append(repro_path(info.value))
    kept = sorted((cache_root / "repro").iterdir())
    assert kept == sorted(paths[-REPRO_KEEP:])


# --- IRDL's messages -----------------------------------------------------------------


@pytest.mark.parametrize("path", [REPO / "dialect" / "tile.irdl.mlir", DIALECT_FILE],
                         ids=["dialect/", "package"])
def test_the_vocabulary_is_the_dialects(path):
    """vocab.SCOPES and the IRDL constraints that the verifier enforces cannot drift, for
    every tile.reduce op (tile.reduce, tile.reduce2 ...); the kind is tile-verify's (IRDL
    has no optional attribute, and a combiner op has none)."""
    dialect = irdl_dialects(path.read_text())["tile"]
    assert [op for op in dialect.operations if op.startswith("tile.reduce")] == list(vocab.REDUCE_OPS)
    for op in vocab.REDUCE_OPS:
        assert dialect.allowed(op) == {"exec_scope": tuple(f'"{s}"' for s in vocab.SCOPES)}


def test_the_library_rephrases_irdl_errors_too():
    text = kernel('kind = "sum", exec_scope = "grid"')
    with pytest.raises(CompileError) as info:
        lower_tile_ops(text)
    assert info.value.stage == "parse"
    assert info.value.message.split("\n")[0] == (
        f"<source>:{OP_LINE}:{OP_COL}: error: 'tile.reduce' op exec_scope must be one of "
        '"thread", "warp", "warpgroup", "cta", "cluster"; got "grid"')
    assert "see current operation" not in info.value.message


def test_the_pass_registry_raises_tile_errors():
    """An unknown pass is an UnknownPass (a KeyError), an unknown option an OptionError
    (a ValueError): each a TileError that lists what exists."""
    from mlir.passmanager import PassManager
    from tile_mlir.errors import OptionError, TileError, UnknownPass
    from tile_mlir.passes import add_pass, make_pass

    with make_context() as ctx:
        with pytest.raises(UnknownPass, match="no tile pass is named 'tile-verfy'; the tile passes are: .*tile-verify") as info:
            add_pass(PassManager("any", ctx), "tile-verfy")
        assert isinstance(info.value, KeyError) and isinstance(info.value, TileError)
        assert str(info.value).startswith("no tile pass")  # not KeyError's quoted repr
    with pytest.raises(OptionError, match="pass tile-lower-reduction has no option") as info:
        make_pass("tile-lower-reduction", fould="tree")
    assert isinstance(info.value, ValueError)
