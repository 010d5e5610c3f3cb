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


def cross_entropy_rows(x: np.ndarray, target: np.ndarray, ignore_index: int = -100, smoothing: float = 0.0) -> tuple:
    """torch.nn.functional.cross_entropy's per-row losses (reduction ``none``) and the
    rows' lse (the max shifted to 0 only where it is -inf, so that a row holding +inf has
    a NaN lse and loss, as torch's log_softmax gives), from the log-probabilities x - lse."""
    m = x.max(axis=-1, keepdims=True)
    m = np.where(m == -np.inf, 0.0, m)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        lse = (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[:, 0]
        logp = x - lse[:, None]
        valid = target != ignore_index
        picked = logp[np.arange(len(x)), np.where(valid, target, 0)]
        loss = -(1 - smoothing) * picked
        if smoothing:
            loss = loss - smoothing * logp.mean(axis=-1)
    return np.where(valid, loss, 0.0), lse


def cross_entropy(x, target, ignore_index=-100, smoothing=0.0, reduction="mean") -> tuple:
    """(loss, lse) as ``tile_mlir.kernels.cross_entropy`` gives them; the mean divides by
    the count of rows not ignored."""
    loss, lse = cross_entropy_rows(x, target, ignore_index, smoothing)
    if reduction == "none":
        return loss, lse
    with np.errstate(invalid="ignore", divide="ignore"):
        total = loss.sum() / (np.sum(target != ignore_index) if reduction == "mean" else 1)
    return np.asarray(total), lse


def cross_entropy_backward(x, target, dloss, ignore_index=-100, smoothing=0.0, reduction="mean") -> np.ndarray:
    """dlogits: g · (softmax(x) - (1 - ε)·onehot(target) - ε / V), g the row's dloss
    (over the count of rows not ignored for a mean), 0 for an ignored row."""
    M, V = x.shape
    _, lse = cross_entropy_rows(x, target, ignore_index, smoothing)
    valid = target != ignore_index
    g = np.broadcast_to(np.asarray(dloss, np.float64), (M,)).copy()
    if reduction == "mean":
        g = g / max(int(valid.sum()), 1)
    g = np.where(valid, g, 0.0)
    onehot = np.zeros_like(x)
    onehot[np.arange(M)[valid], target[valid]] = 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        return g[:, None] * (np.exp(x - lse[:, None]) - (1 - smoothing) * onehot - smoothing / V)


REFERENCES = {"softmax": softmax, "logsumexp": logsumexp, "rmsnorm": rmsnorm, "layernorm": layernorm}
