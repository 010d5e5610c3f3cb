"""The examples of docs/lowering-cross-warp.md on the GPU: each computes what its comment
says, bit for bit, in the documented order (each thread's registers, the lane butterfly
highest bit first, the warps' partials in ascending order, accum last; float32).

The kernels come from the compile cache that ``python -m tile_mlir.testing.prepare``
fills (it compiles every file of examples/); see conftest.py for the command.
``TILE_MLIR_CONFORMANCE_BACKEND=interpreter`` runs them on the CPU interpreter instead.
"""

import os
from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.examples import bits, cta_loop_sum, cta_row_max, warpgroup_sum

CHIP = "sm_90a"  # what tile_mlir.testing.prepare compiles for by default
BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


def kernels(name: str):
    return tile_mlir.compile((EXAMPLES / f"{name}.mlir").read_text(), {"chip": CHIP}, backend=BACKEND)


@pytest.fixture
def rng(seed):
    return np.random.default_rng([seed, 9])


def test_warpgroup_sum_in_a_block_of_two_warpgroups(rng):
    a = rng.standard_normal(256).astype(np.float32)
    b = np.full(256, np.nan, np.float32)
    kernels("cross_warp_warpgroup").warpgroup_sum.launch(1, 256, a, b)
    assert bits(b) == bits(warpgroup_sum(a))


def test_cta_row_max(rng):
    a = rng.standard_normal(512).astype(np.float32)
    b = np.full(256, np.nan, np.float32)
    kernels("cross_warp_cta_rows").cta_row_max.launch(1, 256, a, b)
    assert bits(b) == bits(cta_row_max(a))


def test_cta_loop_sum(rng):
    a = rng.standard_normal(384).astype(np.float32)
    b = np.full(128, np.nan, np.float32)
    kernels("cross_warp_loop").cta_loop_sum.launch(1, 128, a, b)
    assert bits(b) == bits(cta_loop_sum(a))
