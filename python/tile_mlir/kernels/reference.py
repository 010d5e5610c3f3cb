"""What each fused kernel computes, in float64 numpy: torch's formulas, for the checks of
``python -m tile_mlir.kernels`` and the tests (test/python/test_fused.py, and
test/gpu/test_fused_gpu.py where torch is missing). Each takes float64 arrays and returns
the kernel's outputs as a tuple, in the order of ``library.SPECS``."""

from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray) -> tuple:
    """torch.softmax's result."""
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True),)


def logsumexp(x: np.ndarray) -> tuple:
    """torch.logsumexp's result (the max shifted to 0 where it is infinite)."""
    m = x.max(axis=-1, keepdims=True)
    m = np.where(np.isinf(m), 0.0, m)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return ((m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0],)


def rmsnorm(x: np.ndarray, weight: np.ndarray, eps: float) -> tuple:
    """torch.nn.functional.rms_norm's result, and rstd = 1 / sqrt(mean(x²) + eps)."""
    with np.errstate(invalid="ignore", over="ignore"):
        rstd = 1 / np.sqrt(np.mean(x * x, axis=-1) + eps)
        return x * rstd[..., None] * weight, rstd


def layernorm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> tuple:
    """torch.nn.functional.layer_norm's result, the mean and rstd = 1 / sqrt(var + eps)
    (the biased variance)."""
    with np.errstate(invalid="ignore", over="ignore"):
        mean = x.mean(axis=-1)
        rstd = 1 / np.sqrt(((x - mean[..., None]) ** 2).mean(axis=-1) + eps)
        return (x - mean[..., None]) * rstd[..., None] * weight + bias, mean, rstd


REFERENCES = {"softmax": softmax, "logsumexp": logsumexp, "rmsnorm": rmsnorm, "layernorm": layernorm}
