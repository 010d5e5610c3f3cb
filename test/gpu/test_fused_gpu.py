"""The fused row kernels (tile_mlir.kernels: softmax, rmsnorm, layernorm, logsumexp) on
the GPU, on the benchmark's shapes (16384x1024, 4096x4096, 4096x16384, 1024x65536,
16384x1000 and 64x262144: every kind of plan, one warp, several, a cluster of 2, 4, 8 or
16 CTAs per row), f32 and bf16: every output (the rows, and the per-row mean and rstd of
the norms) checked against torch in float64 (numpy in float64 without torch), with the
special-value rows of test/python/test_fused.py in the first rows.

With torch, the inputs are CUDA tensors, passed to the kernel by pointer (the zero-copy
path); without it, numpy arrays (copied in and out). The kernels come from the compile
cache that ``python -m tile_mlir.testing.prepare`` fills (``testing.fused.GPU_CASES``);
see conftest.py for the commands. ``TILE_MLIR_CONFORMANCE_BACKEND=interpreter`` runs the
first CTA (the first cluster) of each in the CPU interpreter instead.
"""

import os
import zlib

import numpy as np
import pytest
from tile_mlir import kernels as K
from tile_mlir.kernels.reference import REFERENCES
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.fused import DTYPES, GPU_SHAPES, as_f64, check, check_expected, random_inputs, special_rows, to_dtype

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = None


def inputs(name, M, N, dtype, seed):
    """x (random rows, the special rows first) and the kernel's per-column params, in dtype."""
    rng = np.random.default_rng([seed, zlib.crc32(f"{name} {M}x{N} {dtype}".encode())])
    x, *params = random_inputs(rng, M, N, dtype, len(K.SPECS[name].params))
    rows = special_rows(rng, N, huge=not params)
    x[: len(rows)] = to_dtype(np.stack(list(rows.values())), dtype)
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
    """The kernel's outputs from torch in float64 (the statistics from its formulas)."""
    x, params = x.double(), [p.double() for p in params]
    if name == "softmax":
        return (torch.softmax(x, -1),)
    if name == "logsumexp":
        return (torch.logsumexp(x, -1),)
    if name == "rmsnorm":
        return F.rms_norm(x, (x.shape[-1],), params[0], eps), torch.rsqrt(x.square().mean(-1) + eps)
    mean, var = x.mean(-1), x.var(-1, unbiased=False)
    return F.layer_norm(x, (x.shape[-1],), params[0], params[1], eps), mean, torch.rsqrt(var + eps)


def to_numpy(t, dtype):
    """A torch result as the numpy array a numpy run returns (bf16: uint16 bits)."""
    t = t.cpu()
    return t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M, N", GPU_SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("name", list(K.KERNELS))
def test_fused_kernel(name, M, N, dtype, seed):
    spec = K.SPECS[name]
    x, params, labels = inputs(name, M, N, dtype, seed)
    eps = {"eps": spec.eps} if spec.eps is not None else {}
    formula = lambda rows, *ps: REFERENCES[name](*(as_f64(a) for a in (rows, *ps)), **eps)  # noqa: E731
    if BACKEND != "cuda":  # the interpreter: the first CTA (or cluster) only
        c = K.compiled(name, M, N, dtype, backend=BACKEND)
        outs = [np.full((M, N) if role == "rows" else (M,), np.nan, np.float32) if role == "stat" or dtype == "f32"
                else np.full((M, N) if role == "rows" else (M,), 0xFFFF, np.uint16) for _, role in spec.outputs]
        c.kernel.launch(c.plan.CL, c.block, x, *params, *outs, *eps.values(), M, shared_mem=c.plan.shared_bytes)
        rows = c.plan.R
        refs = formula(x[:rows], *params)
        outs = [o[:rows] for o in outs]
    elif torch is not None:
        xt, pt = to_torch(x, dtype), [to_torch(p, dtype) for p in params]
        outs = [to_numpy(o, dtype) for o in K.run(name, xt, *pt, **eps)]
        refs = [r.cpu().numpy() for r in torch_reference(name, xt, pt, eps.get("eps"))]
        if name in FORMULA_ROWS:  # the special rows where torch's CUDA kernel departs from its formula
            special = formula(x[: len(labels)], *params)
            for ref, value in zip(refs, special):
                ref[: len(labels)] = value
    else:
        outs = K.run(name, x, *params, **eps)
        refs = formula(x, *params)
    check_expected(name, labels, as_f64(outs[0]))
    for (output, role), got, ref in zip(spec.outputs, outs, refs):
        error, ok = check(got, ref, "f32" if role == "stat" else dtype)
        assert ok, f"{name} {M}x{N} {dtype}, {output}: max abs error {error:.3g} against float64 (seed {seed})"
