"""The example of docs/lowering-cluster.md on the GPU: a thread-block cluster of 4 CTAs per
row sums each row in the documented order, bit for bit (each thread's registers, the lane
butterfly highest bit first, the warps' partials, then the CTAs' in rank order; float32),
and every thread of the cluster holds the same bits.

The kernel comes from the compile cache that ``python -m tile_mlir.testing.prepare`` fills
(it compiles every file of examples/); see conftest.py for the command.
``TILE_MLIR_CONFORMANCE_BACKEND=interpreter`` runs it on the CPU interpreter instead.
"""

import os
from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.examples import cluster_row_sums

CHIP = "sm_90a"  # what tile_mlir.testing.prepare compiles for by default
BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster_row_sum.mlir"

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("trial", range(3))
def test_cluster_row_sum(seed, trial):
    rng = np.random.default_rng([seed, trial])
    a = rng.uniform(-1, 1, (2, 1024)).astype(np.float32)
    s, b = np.full(2, np.nan, np.float32), np.full(512, np.nan, np.float32)
    kernel = tile_mlir.compile(EXAMPLE.read_text(), {"chip": CHIP}, backend=BACKEND)["cluster_row_sum"]
    kernel.launch(8, 64, a, s, b)
    want = cluster_row_sums(a)
    assert s.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert b.reshape(2, 256).view(np.uint32).tolist() == np.repeat(want, 256).reshape(2, 256).view(np.uint32).tolist()
