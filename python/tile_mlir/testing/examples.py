"""What the reduction examples of examples/ compute, bit for bit, in numpy: the documented
fold order (docs/spec.md, "Fold order") of each one's comment, in float32. Shared by the
interpreter tests (test/python/test_cross_warp_examples.py, test_cluster_example.py) and
their GPU twins in test/gpu. Pure numpy: it runs on the GPU machine.
"""

from __future__ import annotations

import numpy as np


def butterfly(op, lanes: np.ndarray) -> np.ndarray:
    """Every lane's value after the butterfly over a warp (the last axis: 32 lanes),
    highest lane bit first."""
    index = np.arange(32)
    for bit in (16, 8, 4, 2, 1):
        lanes = op(lanes, lanes[..., index ^ bit])
    return lanes


def in_order(op, partials):
    """The partials folded in ascending order."""
    acc = partials[0]
    for p in partials[1:]:
        acc = op(acc, p)
    return acc


def bits(x) -> list[int]:
    """float32 values as their bits, for exact comparisons (NaN and -0.0 included)."""
    return np.asarray(x, np.float32).view(np.uint32).tolist()


def cta_row_max(a: np.ndarray) -> np.ndarray:
    """examples/cross_warp_cta_rows.mlir: B (256) for A (512): two rows of 4 warps."""
    per_thread = np.maximum(a[0::2], a[1::2])  # thread t holds A[2t], A[2t+1]
    warps = butterfly(np.maximum, per_thread.reshape(8, 32))[:, 0]
    return np.repeat([in_order(np.maximum, warps[4 * r : 4 * r + 4]) for r in range(2)], 128)


def cta_loop_sum(a: np.ndarray) -> np.ndarray:
    """examples/cross_warp_loop.mlir: B (128) for A (384): 3 runs of a 4-warp sum, accum."""
    acc = np.float32(0)
    for i in range(3):
        warps = butterfly(np.add, a[128 * i : 128 * i + 128].reshape(4, 32))[:, 0]
        acc = acc + in_order(np.add, warps)  # accum: op(old, result)
    return np.full(128, acc, np.float32)


def warpgroup_sum(a: np.ndarray) -> np.ndarray:
    """examples/cross_warp_warpgroup.mlir: B (256) for A (256): two warpgroups' sums."""
    warps = butterfly(np.add, a.reshape(8, 32))[:, 0]
    return np.repeat([in_order(np.add, warps[4 * g : 4 * g + 4]) for g in range(2)], 128)


def cluster_row_sums(a: np.ndarray) -> np.ndarray:
    """examples/cluster_row_sum.mlir: the two rows' sums of A (2 x 1024), a cluster of 4
    CTAs of 2 warps per row: each thread's 4 registers, the lane butterfly, the 2 warps'
    partials of each CTA, then the 4 CTAs' in rank order."""
    x = a.reshape(2, 4, 2, 32, 4)  # row, CTA, warp, lane, register
    acc = in_order(np.add, [x[..., k] for k in range(4)])
    warps = butterfly(np.add, acc)[..., 0]  # every lane of a warp holds the same bits
    ctas = warps[..., 0] + warps[..., 1]
    return in_order(np.add, [ctas[:, c] for c in range(4)])
