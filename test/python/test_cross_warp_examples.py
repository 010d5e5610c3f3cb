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
from tile_mlir.testing.examples import bits, cta_loop_sum, cta_row_max, warpgroup_sum

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def kernels(name: str):
    return tile_mlir.compile((EXAMPLES / f"{name}.mlir").read_text(), backend="interpreter", cache=False)


@pytest.fixture
def rng():
    return np.random.default_rng()


def test_cta_row_max(rng):
    a = rng.standard_normal(512).astype(np.float32)
    b = np.full(256, np.nan, np.float32)
    kernels("cross_warp_cta_rows").cta_row_max.launch(1, 256, a, b)
    assert bits(b) == bits(cta_row_max(a))
    assert np.array_equal(b, np.repeat([a[:256].max(), a[256:].max()], 128))


def test_cta_loop_sum(rng):
    a = rng.standard_normal(384).astype(np.float32)
    b = np.full(128, np.nan, np.float32)
    kernels("cross_warp_loop").cta_loop_sum.launch(1, 128, a, b)
    assert bits(b) == bits(cta_loop_sum(a))
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
    assert bits(b) == bits(warpgroup_sum(a))
