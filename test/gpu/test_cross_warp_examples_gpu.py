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

CHIP = "sm_90a"  # what tile_mlir.testing.prepare compiles for by default
BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


def kernels(name: str):
    return tile_mlir.compile((EXAMPLES / f"{name}.mlir").read_text(), {"chip": CHIP}, backend=BACKEND)


def butterfly(op, lanes: np.ndarray) -> np.ndarray:
    """Every lane's value after the butterfly over a warp (rows of 32 lanes)."""
    index = np.arange(32)
    for bit in (16, 8, 4, 2, 1):
        lanes = op(lanes, lanes[:, index ^ bit])
    return lanes


def in_order(op, partials) -> np.float32:
    acc = partials[0]
    for p in partials[1:]:
        acc = op(acc, p)
    return acc


def bits(x) -> list[int]:
    return np.asarray(x, np.float32).view(np.uint32).tolist()


@pytest.fixture
def rng(seed):
    return np.random.default_rng([seed, 9])


@pytest.mark.skipif(BACKEND == "interpreter", reason="the interpreter wants one barrier id per "
                    "nvvm.barrier op; warpgroup w waits on 8 + w (test/python/test_cross_warp_examples.py)")
def test_warpgroup_sum_in_a_block_of_two_warpgroups(rng):
    a = rng.standard_normal(256).astype(np.float32)
    b = np.full(256, np.nan, np.float32)
    kernels("cross_warp_warpgroup").warpgroup_sum.launch(1, 256, a, b)
    warps = butterfly(np.add, a.reshape(8, 32))[:, 0]
    groups = [in_order(np.add, warps[4 * g : 4 * g + 4]) for g in range(2)]
    assert bits(b) == bits(np.repeat(groups, 128))


def test_cta_row_max(rng):
    a = rng.standard_normal(512).astype(np.float32)
    b = np.full(256, np.nan, np.float32)
    kernels("cross_warp_cta_rows").cta_row_max.launch(1, 256, a, b)
    assert bits(b) == bits(np.repeat([a[:256].max(), a[256:].max()], 128))


def test_cta_loop_sum(rng):
    a = rng.standard_normal(384).astype(np.float32)
    b = np.full(128, np.nan, np.float32)
    kernels("cross_warp_loop").cta_loop_sum.launch(1, 128, a, b)
    acc = np.float32(0)
    for i in range(3):
        warps = butterfly(np.add, a[128 * i : 128 * i + 128].reshape(4, 32))[:, 0]
        acc = acc + in_order(np.add, warps)
    assert bits(b) == bits([acc] * 128)
