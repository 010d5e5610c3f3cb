"""The shared variant's conformance matrix (tile_mlir.testing.shared_cases) in the CPU
interpreter, on every CI run: what test/gpu/test_conformance_shared.py runs on the GPU.

* Every case runs on fresh random inputs (and the special scenarios), and must meet the
  rules of ``cases.ReduceCase.check`` and the bits of the documented fold order. The
  interpreter also fails a case on a race on workgroup memory (a missing or wrong
  barrier) and on a shuffle whose member mask is not its group's.
* The tree fold, on the cases whose lanes fold an uneven number of terms.
* The matrix covers what it promises; the group size follows its documented rule; the
  bit check tells the two fold orders apart; prepare compiles the shared cases.
"""

import os
import zlib

import numpy as np
import pytest
import tile_mlir
from tile_mlir import cache
from tile_mlir.options import Options
from tile_mlir.testing import prepare
from tile_mlir.testing.shared_cases import (
    SHAPES,
    SHARED_CASES,
    SUB_SCOPES,
    run,
    shared_case,
)
from tile_mlir.vocab import FLOAT_DTYPES, KINDS, shared_group_size

SEED = int(os.environ.get("TILE_MLIR_SEED") or np.random.SeedSequence().entropy)
BY_NAME = {case.name: case for case in SHARED_CASES}


def run_in_interpreter(case, fold="linear"):
    kernel = tile_mlir.compile(case.kernel_text(), {"fold": fold}, backend="interpreter")[case.name]
    rng = np.random.default_rng([SEED, zlib.crc32(case.name.encode())])
    problems = run(case, kernel, rng, fold)
    assert not problems, f"{case.name}, fold={fold} (TILE_MLIR_SEED={SEED} repeats it):\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("case", SHARED_CASES, ids=lambda case: case.name)
def test_every_shared_case_in_the_interpreter(case):
    run_in_interpreter(case)


def _uneven(case) -> bool:
    """Whether the case's lanes fold different numbers of terms (R % G != 0)."""
    e, r = np.prod(case.dst_shape), np.prod(case.src_shape) // np.prod(case.dst_shape)
    return r % shared_group_size(int(e), int(r), case.scope_threads) != 0


# The cases whose lanes fold uneven counts (the two trees under scf.if), trees of 4 and
# 7 terms, and a cta of 1024 whose 8-lane groups fold 44 terms: 6 or 5 per lane.
TREE_CASES = [c for c in SHARED_CASES if c.dtype == "f32" and _uneven(c) and not c.special]
TREE_CASES += [BY_NAME["shared_cta_f32_sum_32x32_rows"], BY_NAME["shared_thread_f32_sum_32x7"],
               shared_case("8x16x2x22", "sum", "f32", True, "cta", block=1024)]  # fmt: skip


@pytest.mark.parametrize("case", TREE_CASES, ids=lambda case: case.name)
def test_the_tree_fold(case):
    run_in_interpreter(case, "tree")


# --- the matrix -------------------------------------------------------------------------------


def test_names_are_unique_mlir_symbols():
    assert len(BY_NAME) == len(SHARED_CASES)
    assert all(name.isidentifier() for name in BY_NAME)


def test_matrix_coverage():
    combos = {(c.src_shape, c.axes, c.dtype, c.kind, c.accum) for c in SHARED_CASES if not c.special}
    for _, src, axes, _ in SHAPES:
        for dtype in ("f32", "f16"):
            for kind in ("sum", "max", "min"):
                assert {(src, axes, dtype, kind, False), (src, axes, dtype, kind, True)} <= combos
        assert {c.exec_scope for c in SHARED_CASES if c.src_shape == src and c.axes == axes} == {
            "thread", "warp", "warpgroup", "cta"}  # fmt: skip
    subs = {(c.exec_scope, c.instance, c.block) for c in SHARED_CASES if c.instance}
    assert subs == {(scope, instance, 256) for scope, instance in SUB_SCOPES.items()}
    specials = {(c.dtype, c.kind) for c in SHARED_CASES if c.special}
    assert specials == {(d, k) for d in FLOAT_DTYPES for k in KINDS}
    assert {c.exec_scope for c in SHARED_CASES if c.special} == {"thread", "warp", "warpgroup", "cta"}


@pytest.mark.parametrize(
    "elements, reduced, threads, g",
    [
        (32, 32, 256, 8),  # 32 rows of 32, a cta of 256: 32 groups of 8
        (32, 32, 32, 1),  # the same in a warp: a lane per row
        (24, 8, 32, 2),  # 24 elements in a warp: 16 groups of 2, two rounds
        (24, 8, 256, 8),  # at most R: 8 lanes for 8 terms
        (32, 7, 128, 4),  # R = 7: at most 4 lanes
        (1, 4096, 1024, 32),  # at most a warp
        (3, 40, 48, 16),  # a divisor of 48
        (5, 100, 1, 1),  # one thread
    ],
)
def test_group_size(elements, reduced, threads, g):
    assert shared_group_size(elements, reduced, threads) == g


def test_the_bit_check_tells_the_fold_orders_apart():
    """Random f32 sums in 8-lane groups of 4 terms: the linear and the tree order round
    differently somewhere, so a kernel that folded in the wrong order would fail."""
    case = shared_case("32x32_rows", "sum", "f32", False, "cta")
    x, _ = case.random_inputs(np.random.default_rng(SEED))
    assert (case.ordered(x, None, "linear") != case.ordered(x, None, "tree")).any()
    assert case.check(x, None, case.ordered(x, None, "tree"), "linear")


def test_prepare_compiles_the_shared_cases(tmp_path, monkeypatch, capsys):
    case = BY_NAME["shared_warp_f32_sum_32x32_rows"]
    monkeypatch.setattr(prepare, "CASES", ())
    monkeypatch.setattr(prepare, "SHARED_CASES", (case,))
    monkeypatch.setattr(prepare, "EXAMPLES", ())
    monkeypatch.setattr(prepare, "FUSED", ())
    monkeypatch.setattr(prepare, "BACKWARD", ())
    assert prepare.main(["--cache", str(tmp_path), "--jobs", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(f"prepared 1 kernels into {tmp_path}")
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    assert cache.lookup(case.kernel_text(), Options(chip="sm_90a")) is not None
