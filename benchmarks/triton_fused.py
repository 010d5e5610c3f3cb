"""The Triton peers of the fused kernels (benchmark 5), modelled on Triton's tutorials.

Softmax is the fused-softmax tutorial's kernel and LayerNorm the layer-norm tutorial's
forward kernel; RMSNorm and logsumexp are written in the same style. Each is one program
per row with the whole row in registers: ``BLOCK = next_pow2(N)`` columns, masked past
``N``, loaded once, reduced with ``tl.max`` / ``tl.sum`` in f32, and stored (bf16 inputs are
converted to f32 after the load and the result back to the output's dtype before the
store). Two departures from the tutorials, both in Triton's favour or neutral: the
layer-norm tutorial walks the row in ``BLOCK``-column loops three times (mean, variance,
output), which with ``BLOCK >= N`` is one load of the row; here the row is loaded once
and kept. And it stores each row's mean and 1/std for the backward pass, which these
kernels do not (ours and torch's forward calls do not either).

``autotuned(name)`` wraps a kernel in a fresh ``triton.autotune`` over ``num_warps``: the
tutorials' one knob for these kernels besides ``BLOCK`` (the softmax tutorial's
``num_stages`` only pipelines its persistent row loop, which a one-row program does not
have). The list is short on purpose, because every configuration is one more Triton
compile per kernel, dtype and N (about 110 compiles for the whole section): three values
around the tutorials' choice for each ``BLOCK`` (``warps_for``), two for the longest rows,
where fewer than 16 warps hold more than 128 values of the row per thread and spill.
``launch`` calls a kernel on one input set. Importing this module needs neither torch nor
Triton; building the kernels does.
"""

from __future__ import annotations

import functools


def warps_for(block: int) -> tuple[int, ...]:
    """The num_warps the autotuner tries for a row of ``block`` columns."""
    if block <= 1024:
        return (2, 4, 8)
    if block <= 4096:
        return (4, 8, 16)
    if block <= 16384:
        return (8, 16, 32)
    if block <= 131072:
        return (16, 32)
    return (32,)  # 262144: one configuration (a compile each, and every one spills)


BLOCKS = tuple(1 << k for k in range(4, 19))  # 16 .. 262144 columns; pruned to next_pow2(N)


def next_pow2(n: int) -> int:
    """The BLOCK of a row of n columns (``triton.next_power_of_2``)."""
    return 1 << max(0, n - 1).bit_length()


@functools.cache
def _kernels() -> dict:
    import triton
    import triton.language as tl

    @triton.jit
    def softmax(Y, X, stride, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        z = x - tl.max(x, axis=0)
        num = tl.exp(z)
        y = num / tl.sum(num, axis=0)
        tl.store(Y + row * stride + cols, y.to(Y.dtype.element_ty), mask=mask)

    @triton.jit
    def rmsnorm(Y, X, W, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)

    @triton.jit
    def layernorm(Y, X, W, B, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(mask, x - mean, 0.0)
        rstd = 1 / tl.sqrt(tl.sum(xc * xc, axis=0) / N + eps)
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        tl.store(Y + row * stride + cols, (xc * rstd * w + b).to(Y.dtype.element_ty), mask=mask)

    @triton.jit
    def logsumexp(Y, X, stride, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(X + row * stride + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m = tl.max(x, axis=0)
        lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
        tl.store(Y + row, lse.to(Y.dtype.element_ty))

    return {"softmax": softmax, "rmsnorm": rmsnorm, "layernorm": layernorm, "logsumexp": logsumexp}


def configs() -> list[tuple[int, int]]:
    """Every (BLOCK, num_warps) the autotuners know; a call keeps those of next_pow2(N)."""
    return [(block, w) for block in BLOCKS for w in warps_for(block)]


def autotuned(name: str):
    """Kernel ``name`` under a fresh autotuner over ``configs()``, pruned to the BLOCK of
    the call's N and keyed on N (and, as Triton does, the tensors' dtypes)."""
    import triton

    def prune(configs, named_args, **kwargs):
        block = next_pow2(named_args["N"])
        return [c for c in configs if c.kwargs["BLOCK"] == block]

    return triton.autotune(
        configs=[triton.Config({"BLOCK": block}, num_warps=w) for block, w in configs()],
        key=["N"], prune_configs_by={"early_config_prune": prune},
    )(_kernels()[name])


def launch(name: str, kernel, x, params, y, eps: float) -> None:
    """One call of ``kernel`` (from ``autotuned(name)``): x (M x N, contiguous), the
    weight (and bias) in ``params``, into y."""
    M, N = x.shape
    if params:
        kernel[(M,)](y, x, *params, x.stride(0), N, eps)
    else:
        kernel[(M,)](y, x, x.stride(0), N)


def chosen(kernel) -> tuple[str, dict]:
    """The configuration the autotuner chose (``w<num_warps>``), and each configuration's
    median time in µs where Triton kept them."""
    best = kernel.best_config
    timings = {f"w{c.num_warps}": 1e3 * (t[0] if isinstance(t, (list, tuple)) else t)
               for c, t in (getattr(kernel, "configs_timings", None) or {}).items()}
    return f"w{best.num_warps}", timings
