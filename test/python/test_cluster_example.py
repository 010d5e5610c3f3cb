"""The example of docs/lowering-cluster.md (examples/cluster_row_sum.mlir) computes what
its comment says, bit for bit, in the CPU interpreter: each thread's 4 registers in order,
the lane butterfly highest bit first, the 2 warps' partials of each CTA in order, then
the 4 CTAs' partials in rank order; all in float32. test/gpu/test_cluster_example_gpu.py
checks the same bits on the GPU."""

from pathlib import Path

import numpy as np
import tile_mlir
from tile_mlir.testing.examples import cluster_row_sums

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cluster_row_sum.mlir"


def test_the_example_sums_each_row_over_its_cluster_in_the_documented_order():
    rng = np.random.default_rng()
    a = rng.uniform(-1, 1, (2, 1024)).astype(np.float32)
    s, b = np.full(2, np.nan, np.float32), np.full(512, np.nan, np.float32)
    kernel = tile_mlir.compile(EXAMPLE.read_text(), backend="interpreter", cache=False)["cluster_row_sum"]
    assert kernel.signature.cluster == (4, 1, 1) and kernel.signature.cluster_fixed
    kernel.launch(8, 64, a, s, b)
    want = cluster_row_sums(a)
    assert s.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert b.reshape(2, 256).view(np.uint32).tolist() == np.repeat(want, 256).reshape(2, 256).view(np.uint32).tolist()
    assert abs(float(s[0]) - a[0].astype(np.float64).sum()) <= 1e-4
