"""LayerNorm over the last dim, fused: ``layernorm(x, weight, bias)`` = (x - mean) / sqrt(var + eps) · weight + bias.

The kernel is examples/layernorm.mlir (a template: ``kernel_text`` fills it in for a
shape); ``plan``, ``compiled`` and ``kernel_text`` are ``_rowwise.RowKernel``'s. Three
passes over the row, as Triton's layer-norm tutorial: its sum (the mean), the sum of
(x - mean)² over the columns inside the row (the biased variance, with no cancellation),
then the output; each pass starts with the chunk the previous one ended with, still in
registers, so a row that fits in registers is read once. All math in f32.

eps defaults to torch.nn.functional.layer_norm's, 1e-5. Special values, as torch: a row of
zeros gives bias (x - mean = 0); an infinite or NaN element makes the row NaN.

    python -m tile_mlir.examples.layernorm [--shape 37x1000] [--dtype f32|bf16]
"""

import sys

import numpy as np

from ._rowwise import RowKernel

KERNEL = RowKernel("layernorm", params=("weight", "bias"), default_eps=1e-5)
plan, kernel_text, compiled = KERNEL.plan, KERNEL.kernel_text, KERNEL.compiled


def layernorm(x, weight, bias, *, eps: float = 1e-5, backend: str = "auto"):
    """LayerNorm of each row of x (..., N) with weight and bias (N,), f32 or bf16 (math in f32)."""
    return KERNEL(x, weight, bias, eps=eps, backend=backend)


def reference(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """torch.nn.functional.layer_norm's result, in float64."""
    with np.errstate(invalid="ignore"):
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * weight + bias


if __name__ == "__main__":
    sys.exit(KERNEL.main(reference))
