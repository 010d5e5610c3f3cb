"""A lowering option, followed from the front door to the lowering's plan: ``fold`` enters
``tile_mlir/options.py`` once (``Options.from_mapping``, where the user's dict is read)
and never becomes text on the way: no pipeline text is parsed, no pass options are
spelled or read back, and the plan gets the very ``Fold`` the user asked for."""

import sys
from pathlib import Path

import pytest
import tile_mlir
from tile_mlir import options as options_module
from tile_mlir.lowering import registers
from tile_mlir.options import Options
from tile_mlir.passes import common
from tile_mlir.pipeline import manager, text
from tile_mlir.vocab import Fold

DEMO = (Path(__file__).resolve().parents[2] / "examples" / "demo.mlir").read_text()
OPTIONS_FILE = options_module.__file__


def _entries_into_options(run) -> list[tuple[str, str]]:
    """The calls into options.py made while ``run()`` runs, counting only those with no
    options.py frame below them (a call inside options.py is part of the same entry):
    (function, caller's file:line)."""
    entries = []

    def profile(frame, event, arg):
        if event != "call" or frame.f_code.co_filename != OPTIONS_FILE:
            return
        caller = frame.f_back
        below = caller
        while below is not None:
            if below.f_code.co_filename == OPTIONS_FILE:
                return
            below = below.f_back
        entries.append((frame.f_code.co_name, f"{caller.f_code.co_filename}:{caller.f_lineno}"))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return entries


@pytest.fixture
def no_text(monkeypatch):
    """Every road through text fails the test; the plan's folds are recorded."""
    def forbidden(*args, **kwargs):
        raise AssertionError("an option went through text")

    monkeypatch.setattr(text, "parse_pipeline", forbidden)
    monkeypatch.setattr(manager, "parse_pipeline", forbidden)
    monkeypatch.setattr(common, "parse_options", forbidden)
    monkeypatch.setattr(common.TilePass, "from_text", classmethod(forbidden))
    monkeypatch.setattr(common.TilePass, "from_strings", classmethod(forbidden))
    monkeypatch.setattr(Options, "spelled", forbidden)
    folds = []
    real = registers.Plan.__init__

    def plan(self, info, fold=registers.DEFAULT_FOLD, *rest, **named):
        folds.append(fold)
        real(self, info, fold, *rest, **named)

    monkeypatch.setattr(registers.Plan, "__init__", plan)
    return folds


@pytest.mark.parametrize("backend,cache", [("interpreter", False), ("cuda", False), ("cuda", True)])
def test_fold_enters_options_once_and_never_as_text(no_text, backend, cache, tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    entries = _entries_into_options(
        lambda: tile_mlir.compile(DEMO, {"fold": "tree"}, backend=backend, cache=cache))
    assert [name for name, _ in entries] == ["from_mapping"], entries
    assert entries[0][1].rsplit(":", 1)[0].endswith("tile_mlir/api.py")  # the front door
    assert no_text == [Fold.TREE] and type(no_text[0]) is Fold


def test_the_plan_gets_the_fold_the_user_asked_for(no_text):
    tile_mlir.compile(DEMO, Options(fold="tree"), backend="interpreter")
    tile_mlir.compile(DEMO, {"fold": "linear"}, backend="interpreter")
    assert no_text == [Fold.TREE, Fold.LINEAR]
