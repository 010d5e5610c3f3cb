"""Softmax over the last dim, fused: ``softmax(x)`` = exp(x - max) / sum(exp(x - max)), row by row.

The kernel is examples/softmax.mlir (a template: ``kernel_text`` fills it in for a
shape); ``plan``, ``compiled`` and ``kernel_text`` are ``_rowwise.RowKernel``'s. Each
thread keeps a running max m of its elements and a sum s of exp(x - m), rescaled when m
grows; the row's max M and sum S combine them (two cta- or warp-scope ``tile.reduce``),
and the output pass writes exp(x - M) / S.

Special values, as torch.softmax: a row holding NaN or +inf, and a row of only -inf,
give NaN everywhere in the row; -inf elements of an otherwise finite row give 0.

    python -m tile_mlir.examples.softmax [--shape 37x1000] [--dtype f32|bf16]
"""

import sys

import numpy as np

from ._rowwise import RowKernel

KERNEL = RowKernel("softmax")
plan, kernel_text, compiled = KERNEL.plan, KERNEL.kernel_text, KERNEL.compiled


def softmax(x, *, backend: str = "auto"):
    """Softmax of each row of x (..., N), f32 or bf16 (math in f32), as x's kind and dtype."""
    return KERNEL(x, backend=backend)


def reference(x: np.ndarray) -> np.ndarray:
    """torch.softmax's result, in float64."""
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


if __name__ == "__main__":
    sys.exit(KERNEL.main(reference))
