"""The four forward row kernels, written with the builder: softmax, logsumexp, RMSNorm,
LayerNorm.

Each function builds one kernel over M rows of a plan (``tile_mlir.kernels.plan``), from
the steps of ``tile_mlir.kernels.rows`` (chunks loaded with ``tile.copy``, vectors,
``tile.reduce`` over the row's threads) and the upstream arith/math builders; all math is
f32 (bf16 in, f32 math, bf16 out). Each returns the ``build.KernelBuilder``, whose
``module`` ``tile_mlir.compile`` takes. docs/fused-kernels.md describes them, their
passes over the row and their special values; docs/builder.md walks through the softmax.
"""

from __future__ import annotations

from mlir.dialects import arith, math

from ..vocab import DEFAULT_CHIP
from .plan import RowPlan
from .rows import Rows, row_kernel

NEG_INF, INF = float("-inf"), float("inf")


def softmax(p: RowPlan, M: int, chip: str = DEFAULT_CHIP):
    """Y = exp(X - max) / sum(exp(X - max)), row by row. One pass keeps each thread's
    running max m and sum s of exp(x - m), rescaled when m grows; the row's max and sum
    combine them; the output pass writes exp(x - max) / sum."""
    with row_kernel("softmax", p, M, [("X", "rows"), ("Y", "rows")], chip) as r:
        k, x, zero = r.k, r.tile(), r.f32(0.0)
        m, s = online_max_sum(r, x, shift_zero=lambda m: r.eq(m, r.f32(NEG_INF)))
        # The row's max and sum over its threads; the shift A is 0 for a row of -inf.
        top = r.reduce(m, "maximum")
        A = arith.select(r.eq(top, r.f32(NEG_INF)), zero, top)
        S = r.reduce(arith.mulf(s, math.exp(arith.subf(m, A))), "sum")
        shift, scale = r.splat(A), r.splat(arith.divf(r.f32(1.0), S))
        # Pass 2, last chunk first (it is still in registers): Y = exp(x - A) / S.
        for col in r.chunks(x, reverse=True, kept=True, padding=NEG_INF):
            for i, v in r.vectors(x):
                r.put(x, i, arith.mulf(math.exp(arith.subf(v, shift)), scale))
            r.store("Y", x, col)
    return k


def logsumexp(p: RowPlan, M: int, chip: str = DEFAULT_CHIP):
    """Y[r] = A + log(sum(exp(X[r] - A))), A the row's max, or 0 where it is infinite (as
    torch.logsumexp): one pass over the row, and one value per row."""
    with row_kernel("logsumexp", p, M, [("X", "rows"), ("Y", "row")], chip) as r:
        k, x, zero = r.k, r.tile(), r.f32(0.0)
        infinite = lambda m: r.eq(math.absf(m), r.f32(INF))  # noqa: E731
        m, s = online_max_sum(r, x, shift_zero=infinite)
        top = r.reduce(m, "maximum")
        A = arith.select(infinite(top), zero, top)
        S = r.reduce(arith.mulf(s, math.exp(arith.subf(m, A))), "sum")
        r.store_row("Y", arith.addf(A, math.log(S)))
    return k


def online_max_sum(r: Rows, x, shift_zero):
    """softmax's and logsumexp's first pass, chunk by chunk: each thread's running max m
    and sum s of exp(x - a), where the shift a is m, or 0 where ``shift_zero(m)`` (a row
    that is all -inf so far, or an infinite max); s is rescaled by exp(m_old - a) as m
    grows. Returns (m, s)."""
    k, zero = r.k, r.f32(0.0)
    for col, (m0, s0), (m, s) in r.chunks(x, padding=NEG_INF, carry=[r.f32(NEG_INF), zero]):
        m1 = arith.maximumf(m0, r.max(x))
        a = arith.select(shift_zero(m1), zero, m1)
        shift = r.splat(a)
        for i, v, acc, s1 in r.vectors(x, carry=arith.mulf(s0, math.exp(arith.subf(m0, a)))):
            k.yield_(k.reduction("add", math.exp(arith.subf(v, shift)), acc))
        k.yield_(m1, s1)
    return m, s


def rmsnorm(p: RowPlan, M: int, chip: str = DEFAULT_CHIP):
    """Y = X / sqrt(mean(X²) + eps) · W, and RSTD = 1 / sqrt(mean(X²) + eps) per row."""
    args = [("X", "rows"), ("W", "cols"), ("Y", "rows"), ("RSTD", "stat"), ("eps", "f32")]
    with row_kernel("rmsnorm", p, M, args, chip) as r:
        k, x, w = r.k, r.tile(), r.tile()
        # Pass 1: each thread's sum of squares, then the row's.
        for col, s0, ss in r.chunks(x, carry=r.f32(0.0)):
            for i, v, acc, s1 in r.vectors(x, carry=s0):
                k.yield_(k.reduction("add", arith.mulf(v, v), acc))
            k.yield_(s1)
        mean = arith.divf(r.reduce(ss, "sum"), r.f32(float(p.N)))
        rstd = math.rsqrt(arith.addf(mean, k.args["eps"]))
        r.store_row("RSTD", rstd)
        scale = r.splat(rstd)
        # Pass 2, last chunk first (it is still in registers): Y = x · rstd · w.
        for col in r.chunks(x, reverse=True, kept=True):
            r.load_cols(w, "W", col)
            for i, v in r.vectors(x):
                wv = k.cast(k.vload(w, i, r.V), "f32")
                r.put(x, i, arith.mulf(arith.mulf(v, scale), wv))
            r.store("Y", x, col)
    return k


def layernorm(p: RowPlan, M: int, chip: str = DEFAULT_CHIP):
    """Y = (X - mean) / sqrt(var + eps) · W + B, with MEAN and RSTD = 1 / sqrt(var + eps)
    per row. Three passes: the sum, the sum of (x - mean)² over the columns inside the
    row (the biased variance, no cancellation; the padding is 0, not the mean, so it is
    masked out), the output."""
    args = [("X", "rows"), ("W", "cols"), ("B", "cols"), ("Y", "rows"), ("MEAN", "stat"), ("RSTD", "stat"),
            ("eps", "f32")]
    with row_kernel("layernorm", p, M, args, chip) as r:
        k, x, w, b, V = r.k, r.tile(), r.tile(), r.tile(), r.V
        n, zero = r.f32(float(p.N)), r.f32(0.0)
        for col, s0, s in r.chunks(x, carry=zero):
            for i, v, acc, s1 in r.vectors(x, carry=s0):
                k.yield_(k.reduction("add", v, acc))
            k.yield_(s1)
        mean = arith.divf(r.reduce(s, "sum"), n)
        center = r.splat(mean)
        # The thread's first column in a chunk, and the lanes of a vector: the mask.
        lead = arith.muli(arith.remui(k.thread_id(), k.index(32 * p.W)), k.index(V))
        lanes, none = k.constant(list(range(V)), f"vector<{V}xindex>"), r.splat(zero)
        for col, s0, d2 in r.chunks(x, reverse=True, kept=True, carry=zero):
            first = arith.addi(col, lead)
            for c, acc, s1 in k.range(p.C, carry=s0, unroll=True):
                d = arith.subf(k.cast(k.vload(x, arith.muli(c, k.index(V)), V), "f32"), center)
                room = arith.subi(k.index(p.N), arith.addi(first, arith.muli(c, k.index(32 * p.W * V))))
                inside = arith.cmpi(arith.CmpIPredicate.slt, lanes, k.splat(room, V))
                k.yield_(k.reduction("add", arith.select(inside, arith.mulf(d, d), none), acc))
            k.yield_(s1)
        rstd = math.rsqrt(arith.addf(arith.divf(r.reduce(d2, "sum"), n), k.args["eps"]))
        scale = r.splat(rstd)
        # Pass 3, first chunk first (still in registers): Y = (x - mean) · rstd · w + b.
        for col in r.chunks(x, kept=True):
            r.load_cols(w, "W", col)
            r.load_cols(b, "B", col)
            for i, v in r.vectors(x):
                wv, bv = (k.cast(k.vload(t, i, V), "f32") for t in (w, b))
                r.put(x, i, math.fma(arith.mulf(arith.subf(v, center), scale), wv, bv))
            r.store("Y", x, col)
        r.store_row("MEAN", mean)
        r.store_row("RSTD", rstd)
    return k


BUILDERS = {"softmax": softmax, "logsumexp": logsumexp, "rmsnorm": rmsnorm, "layernorm": layernorm}
