"""The fused row kernels (examples/softmax, rmsnorm, layernorm, logsumexp) on the GPU, on
the shapes of issue 10 (16384x1024, 4096x4096, 4096x16384, 1024x65536) and one with
N = 1000, f32 and bf16: checked against torch in float64 (numpy in float64 without
torch), with the special-value rows of test/python/test_fused.py in the first rows.

With torch, the inputs are CUDA tensors, passed to the kernel by pointer (the zero-copy
path); without it, numpy arrays (copied in and out). The kernels come from the compile
cache that ``python -m tile_mlir.testing.prepare`` fills (``_rowwise.gpu_kernel_texts``);
see conftest.py for the commands. ``TILE_MLIR_CONFORMANCE_BACKEND=interpreter`` runs the
first block of each in the CPU interpreter instead.
"""

import os
import zlib

import numpy as np
import pytest
from tile_mlir.examples import _rowwise as rw
from tile_mlir.examples import layernorm, logsumexp, rmsnorm, softmax
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.fused import check_expected, special_rows

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
MODULES = {m.KERNEL.name: m for m in (softmax, rmsnorm, layernorm, logsumexp)}

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


def inputs(name, M, N, dtype, seed):
    """x (random rows, the special rows first) and the kernel's per-column params, in dtype."""
    rng = np.random.default_rng([seed, zlib.crc32(f"{name} {M}x{N} {dtype}".encode())])
    x, *params = rw.random_inputs(rng, M, N, dtype, len(MODULES[name].KERNEL.params))
    rows = special_rows(rng, N, huge=not params)
    x[: len(rows)] = rw.to_dtype(np.stack(list(rows.values())), dtype)
    return x, params, list(rows)


# torch's CUDA rms_norm gives NaN in every element of a row that holds an infinity, where
# its formula (and torch on the CPU) gives 0 for the finite ones (docs/fused-kernels.md,
# "Special values"): our kernel follows the formula, and its special rows are checked
# against the float64 formula; the random rows against torch.
FORMULA_ROWS = ("rmsnorm",)


def to_torch(a, dtype):
    t = torch.from_numpy(a.view(np.int16) if dtype == "bf16" else a)
    return (t.view(torch.bfloat16) if dtype == "bf16" else t).cuda()


def torch_reference(name, x, params, eps):
    x, params = x.double(), [p.double() for p in params]
    if name == "softmax":
        return torch.softmax(x, -1)
    if name == "logsumexp":
        return torch.logsumexp(x, -1)
    if name == "rmsnorm":
        return F.rms_norm(x, (x.shape[-1],), params[0], eps)
    return F.layer_norm(x, (x.shape[-1],), params[0], params[1], eps)


def to_bits(t, dtype):
    """A torch result as the numpy array a numpy run returns (bf16: uint16 bits)."""
    t = t.cpu()
    return t.view(torch.int16).numpy().view(np.uint16) if dtype == "bf16" else t.numpy()


@pytest.mark.parametrize("dtype", list(rw.ITEMSIZE))
@pytest.mark.parametrize("M, N", rw.GPU_SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("name", list(MODULES))
def test_fused_kernel(name, M, N, dtype, seed):
    kernel = MODULES[name].KERNEL
    x, params, labels = inputs(name, M, N, dtype, seed)
    eps = {"eps": kernel.eps(dtype)} if params else {}
    if BACKEND != "cuda":  # the interpreter: the first block only
        c = kernel.compiled(M, N, dtype, backend=BACKEND)
        y = np.full((M,) if kernel.per_row else (M, N), 0xFFFF if dtype == "bf16" else np.nan, x.dtype)
        c.kernel.launch(1, c.block, x, *params, y, *eps.values())
        rows = c.plan.R
        ref = MODULES[name].reference(*(rw.as_f64(a) for a in (x[:rows], *params)), **eps)
        y = y[:rows]
    elif torch is not None:
        xt, pt = to_torch(x, dtype), [to_torch(p, dtype) for p in params]
        y = to_bits(kernel(xt, *pt, **eps), dtype)
        ref = torch_reference(name, xt, pt, eps.get("eps")).cpu().numpy()
        if name in FORMULA_ROWS:  # the special rows where torch's CUDA kernel departs from its formula
            ref[: len(labels)] = MODULES[name].reference(*(rw.as_f64(a) for a in (x[: len(labels)], *params)), **eps)
    else:
        y = kernel(x, *params, **eps)
        ref = MODULES[name].reference(*(rw.as_f64(a) for a in (x, *params)), **eps)
    error, ok = rw.check(y, ref, dtype)
    check_expected(name, labels, rw.as_f64(y))
    assert ok, f"{name} {M}x{N} {dtype}: max abs error {error:.3g} against float64 (seed {seed})"
