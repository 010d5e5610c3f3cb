"""logsumexp over the last dim, fused: ``logsumexp(x)`` = M + log(sum(exp(x - M))), M the row's max.

The kernel is examples/logsumexp.mlir (a template: ``kernel_text`` fills it in for a
shape); ``plan``, ``compiled`` and ``kernel_text`` are ``_rowwise.RowKernel``'s. One pass:
each thread keeps a running max m and a rescaled sum s of exp(x - m), the row's max and
sum combine them (two cta- or warp-scope ``tile.reduce``), and lane 0 of the row stores
one value. Every form reads each byte once.

Special values, as torch.logsumexp: a row of only -inf gives -inf; a row holding +inf
gives +inf (the shift is 0 where the max is infinite); a NaN gives NaN.

    python -m tile_mlir.examples.logsumexp [--shape 37x1000] [--dtype f32|bf16]
"""

import sys

import numpy as np

from ._rowwise import RowKernel

KERNEL = RowKernel("logsumexp", per_row=True)
plan, kernel_text, compiled = KERNEL.plan, KERNEL.kernel_text, KERNEL.compiled


def logsumexp(x, *, backend: str = "auto"):
    """logsumexp of each row of x (..., N) -> (...), f32 or bf16 (math in f32)."""
    return KERNEL(x, backend=backend)


def reference(x: np.ndarray) -> np.ndarray:
    """torch.logsumexp's result, in float64 (the max shifted to 0 where it is infinite)."""
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]


if __name__ == "__main__":
    sys.exit(KERNEL.main(reference))
