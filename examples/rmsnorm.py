"""RMSNorm over the last dim, fused: ``rmsnorm(x, weight)`` = x / sqrt(mean(x²) + eps) * weight.

The kernel is examples/rmsnorm.mlir (a template: ``kernel_text`` fills it in for a
shape); ``plan``, ``compiled`` and ``kernel_text`` are ``_rowwise.RowKernel``'s. Each
thread sums the squares of its elements, one cta- or warp-scope ``tile.reduce`` sums the
row's, and the output pass writes x · rsqrt(mean + eps) · weight, all in f32.

eps defaults to torch.nn.functional.rms_norm's: the dtype's machine epsilon
(1.19e-7 for f32, 0.0078125 for bf16). Special values, as torch: a row of zeros gives
zeros; an infinite element makes the mean infinite, so the row is 0 where x is finite and
NaN where it is infinite (0 · inf); a NaN makes the row NaN.

    python -m tile_mlir.examples.rmsnorm [--shape 37x1000] [--dtype f32|bf16]
"""

import sys

import numpy as np

from ._rowwise import RowKernel

KERNEL = RowKernel("rmsnorm", params=("weight",))
plan, kernel_text, compiled = KERNEL.plan, KERNEL.kernel_text, KERNEL.compiled


def rmsnorm(x, weight, *, eps=None, backend: str = "auto"):
    """RMSNorm of each row of x (..., N) with weight (N,), f32 or bf16 (math in f32)."""
    return KERNEL(x, weight, eps=eps, backend=backend)


def reference(x: np.ndarray, weight: np.ndarray, eps: float = 1.1920928955078125e-07) -> np.ndarray:
    """torch.nn.functional.rms_norm's result, in float64."""
    with np.errstate(invalid="ignore", over="ignore"):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


if __name__ == "__main__":
    sys.exit(KERNEL.main(reference))
