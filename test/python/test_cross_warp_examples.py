"""The examples of docs/lowering-cross-warp.md compute what their comments say, bit for bit,
in the CPU interpreter; and the phase counter that the page explains is what keeps the
op in a loop free of races.

The expected bits follow the documented order (docs/spec.md, "Fold order"): each thread's
registers in order, the lane butterfly highest bit first, the warps' partials in
ascending order, accum last; all in float32.
"""

from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from tile_mlir.lowering import threads

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def kernels(name: str):
    return tile_mlir.compile((EXAMPLES / f"{name}.mlir").read_text(), backend="interpreter", cache=False)


def butterfly(op, lanes: np.ndarray) -> np.ndarray:
    """Every lane's value after the butterfly over a warp (rows of 32 lanes)."""
    index = np.arange(32)
    for bit in (16, 8, 4, 2, 1):
        lanes = op(lanes, lanes[:, index ^ bit])
    return lanes


def in_order(op, partials: np.ndarray) -> np.ndarray:
    acc = partials[0]
    for p in partials[1:]:
        acc = op(acc, p)
    return acc


@pytest.fixture
def rng():
    return np.random.default_rng()


def test_cta_row_max(rng):
    a = rng.standard_normal(512).astype(np.float32)
    b = np.full(256, np.nan, np.float32)
    kernels("cross_warp_cta_rows").cta_row_max.launch(1, 256, a, b)
    per_thread = np.maximum(a[0::2], a[1::2])  # thread t holds A[2t], A[2t+1]
    warps = butterfly(np.maximum, per_thread.reshape(8, 32))[:, 0]
    rows = [in_order(np.maximum, warps[4 * r : 4 * r + 4]) for r in range(2)]
    assert np.array_equal(b, np.repeat(rows, 128))
    assert np.array_equal(b, np.repeat([a[:256].max(), a[256:].max()], 128))


def test_cta_loop_sum(rng):
    a = rng.standard_normal(384).astype(np.float32)
    b = np.full(128, np.nan, np.float32)
    kernels("cross_warp_loop").cta_loop_sum.launch(1, 128, a, b)
    acc = np.float32(0)
    for i in range(3):
        warps = butterfly(np.add, a[128 * i : 128 * i + 128].reshape(4, 32))[:, 0]
        acc = acc + in_order(np.add, warps)  # accum: op(old, result)
    assert b.view(np.uint32).tolist() == [np.float32(acc).view(np.uint32)] * 128
    assert abs(float(b[0]) - a.astype(np.float64).sum()) < 1e-4 * np.abs(a).sum()


def test_one_phase_in_a_loop_races(rng, monkeypatch):
    """Without the second half of scratch, run 2's writer overwrites what a reader of
    run 1 has not read yet: the interpreter's race check reports it."""
    site_of = threads.Site.of

    def once(op):
        site = site_of(op)
        site.repeats = False
        return site

    monkeypatch.setattr(threads.Site, "of", staticmethod(once))
    kernel = kernels("cross_warp_loop").cta_loop_sum
    with pytest.raises(tile_mlir.InterpreterError, match="a race on workgroup memory"):
        kernel.launch(1, 128, rng.standard_normal(384).astype(np.float32), np.zeros(128, np.float32))


def test_warpgroup_sum_in_a_block_of_two_warpgroups(rng):
    a = rng.standard_normal(256).astype(np.float32)
    b = np.full(256, np.nan, np.float32)
    kernels("cross_warp_warpgroup").warpgroup_sum.launch(1, 256, a, b)
    warps = butterfly(np.add, a.reshape(8, 32))[:, 0]
    groups = [in_order(np.add, warps[4 * g : 4 * g + 4]) for g in range(2)]
    assert np.array_equal(b, np.repeat(groups, 128))
