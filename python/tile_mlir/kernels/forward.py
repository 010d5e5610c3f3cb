"""The forward row kernels, written with the builder: softmax, logsumexp, RMSNorm,
LayerNorm, and RMSNorm after a residual add (``add_rmsnorm``).

Each function builds one kernel over M rows of a plan (``tile_mlir.kernels.plan``), from
the steps of ``tile_mlir.kernels.rows`` (the CTA's part of a row loaded once with
``tile.copy`` and held in registers, vectors, ``tile.reduce`` over the row's threads,
across a cluster's CTAs where the plan spreads a row over several) and the upstream arith/math builders; all math is
f32 (bf16 in, f32 math, bf16 out). Each returns the ``build.KernelBuilder``, whose
``module`` ``tile_mlir.compile`` takes. M None builds the kernel for every M: the row
count is its last argument, ``rows`` (``tile_mlir.kernels.rows.row_kernel``), and a CTA's
rows past it are neither read nor written (``tile.copy`` tests each row against it).
docs/fused-kernels.md describes them, their passes over the row and their special
values; docs/builder.md walks through the softmax.
"""

from __future__ import annotations

from mlir.dialects import arith, math

from ..ir import ir
from ..vocab import DEFAULT_CHIP, LOG2E
from .plan import RowPlan
from .rows import Rows, row_kernel

NEG_INF, INF = float("-inf"), float("inf")


def softmax(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """Y = exp(X - max) / sum(exp(X - max)), row by row, the row held on chip: its max A
    and sum S (``max_sum``), then Y = e · exp(m - A) / S from the e = exp(x - a) that
    ``max_sum`` kept in f32 (a the thread's own shift: one exponential per element); or,
    where E f32 would take more than half the plan's registers (bf16 under a ``per_sm``
    cap) or the plan keeps part of the row in shared memory, Y = exp(x - A) / S again
    from the row."""
    with row_kernel("softmax", p, M, [("X", "rows"), ("Y", "rows")], chip, shared=True) as r:
        x = r.tile()
        r.load(x, "X", padding=NEG_INF)
        e = r.tile("f32") if not p.S and (r.T == "f32" or p.E <= p.max_registers // 2) else None
        A, S, rescale = max_sum(r, x, shift_zero=lambda m: r.eq(m, r.f32(NEG_INF)), keep=e, writes_row=True)
        if e is not None:
            scale = r.splat(arith.divf(rescale, S))
            for i, v in r.vectors(e):
                r.put(x, i, arith.mulf(v, scale))
        else:
            shift, scale = r.splat(A), r.splat(arith.divf(r.f32(1.0), S))
            for i, v in r.vectors(x, nth=1):
                r.put(x, i, arith.mulf(r.exp(v, shift), scale))
        r.store("Y", x)
    return r.k


def logsumexp(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """Y[r] = A + log(sum(exp(X[r] - A))), A the row's max, or 0 where it is infinite (as
    torch.logsumexp): one value per row."""
    with row_kernel("logsumexp", p, M, [("X", "rows"), ("Y", "row")], chip, shared=True) as r:
        x = r.tile()
        r.load(x, "X", padding=NEG_INF)
        A, S, _ = max_sum(r, x, shift_zero=lambda m: r.eq(math.absf(m), r.f32(INF)))
        r.store_row("Y", arith.addf(A, math.log(S)))
    return r.k


def max_sum(r: Rows, x, shift_zero, keep=None, writes_row: bool = False):
    """softmax's and logsumexp's statistics of the row in ``x``: its max A, the sum S of
    exp(x - A), and this thread's exp(m - A), where the shift is 0 instead where
    ``shift_zero`` (a row of -inf; for logsumexp an infinite max). Each thread takes the
    max m of its elements and the sum s of e = exp(x - a) (a: m, or 0 where
    ``shift_zero(m)``), keeping each e in the f32 tile ``keep`` if given (so that
    exp(x - A) is e · exp(m - A): one exponential per element); the row's threads then
    combine their (m, s) pairs: A = max m, S = sum s · exp(m - A) (``row_max_sum``, which
    takes ``writes_row``: the kernel writes the row after)."""
    k = r.k
    m = r.max(x)
    a = arith.select(shift_zero(m), r.f32(0.0), m)
    shift = r.splat(a)
    for i, v, acc, s in r.vectors(x, carry=r.f32(0.0)):
        e = r.exp(v, shift)
        if keep is not None:
            r.put(keep, i, e)
        k.yield_(k.reduction("add", e, acc))
    return row_max_sum(r, m, s, shift_zero, writes_row)


def row_max_sum(r: Rows, m, s, shift_zero, writes_row: bool = False):
    """The row's (A, S), and exp(m - A), from each thread's max m and sum s.

    Where the plan packs the pair (``RowPlan.packs_pair``: over a cluster, but for a bf16
    kernel that ``writes_row`` after): each warp first takes its own pair by two named
    butterflies over its lanes, the max, then the sum of s · exp(m - a) (a: that max, or 0
    where ``shift_zero``), with no exchange; then one combiner reduction of the warps'
    pairs (``online_softmax``), so the pair crosses the warps and CTAs in one exchange and
    the combine, an exponential and a dozen instructions, runs only after it, not in every
    butterfly step (QuACK's ``online_softmax_reduce`` splits it the same way). S is then the
    sum of exp(x - max), which is the sum of exp(x - A) wherever it matters (A is the max,
    or 0 where ``shift_zero``: a row of -inf, where S is 0 either way; logsumexp's
    infinite max, where S is infinite either way). Otherwise two reductions over the
    row's threads, the max, then the sum of s · exp(m - A) (m, not the shift a: a thread
    of only -inf, padding included, has a = 0, s = 0 and exp(m - A) = 0, where
    exp(a - A) would overflow for a row far below 0)."""
    pair = r.p.packs_pair(writes_row)
    reduce = r.reduce_lanes if pair else r.reduce  # the pair: each warp's first, no exchange
    top = reduce(m, "maximum")
    A = arith.select(shift_zero(top), r.f32(0.0), top)
    rescale = r.exp(m, A)
    S = reduce(arith.mulf(s, rescale), "sum")
    if pair:  # then the warps' pairs in one combiner reduction: one exchange
        top, S = r.reduce_many([top, S], online_softmax, per_warp=True)
        A = arith.select(shift_zero(top), r.f32(0.0), top)
        rescale = r.exp(m, A)
    return A, S, rescale


def online_softmax(left, right):
    """The combine of two (max m, sum s of exp(x - m)) pairs: (max(m1, m2), s_big +
    s_small · exp(-|m1 - m2|)), the pair of the smaller max rescaled (one exponential,
    ``Rows.exp``'s form); equal maxima (two -inf or two +inf included, where m1 - m2 is
    NaN) add, s1 + s2; a NaN max gives NaN. The same bits whichever side is left, so
    the lowering's left/right order does not change them."""
    (lm, ls), (rm, rs) = left, right
    f32 = ir.F32Type.get()
    same = arith.cmpf(arith.CmpFPredicate.OEQ, lm, rm)
    gap = arith.select(same, arith.constant(f32, 0.0), math.absf(arith.subf(lm, rm)))
    e = math.exp2(arith.mulf(gap, arith.constant(f32, -LOG2E)))
    left_big = arith.cmpf(arith.CmpFPredicate.OGT, lm, rm)
    big, small = arith.select(left_big, ls, rs), arith.select(left_big, rs, ls)
    return [arith.maximumf(lm, rm), math.fma(small, e, big)]


def rmsnorm(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP, residual: bool = False):
    """Y = X / sqrt(mean(X²) + eps) · W, and RSTD = 1 / sqrt(mean(X²) + eps) per row.
    With ``residual`` (the kernel ``add_rmsnorm``): H = X + R first, in the dtype (each
    sum rounded once, as torch's ``x + r``), written out, and the norm is H's."""
    names = ["X", "R", "W", "H"] if residual else ["X", "W"]
    roles = {"X": "rows", "R": "rows", "W": "cols", "H": "rows"}
    args = [*((n, roles[n]) for n in names), ("Y", "rows"), ("RSTD", "stat"), ("eps", "f32")]
    with row_kernel("add_rmsnorm" if residual else "rmsnorm", p, M, args, chip, shared=not residual) as r:
        k, x = r.k, r.tile()
        r.load(x, "X")
        first = 0
        if residual:
            res = r.tile()
            r.load(res, "R")
            for i, v in r.vectors(x):
                r.put(x, i, arith.addf(v, r.widen(k.vload(res, i, r.V))))
            r.store("H", x)
            first = 1
        for i, v, acc, ss in r.vectors(x, carry=r.f32(0.0), nth=first):
            k.yield_(k.reduction("add", arith.mulf(v, v), acc))
        mean = arith.divf(r.reduce(ss, "sum"), r.f32(float(p.N)))
        rstd = math.rsqrt(arith.addf(mean, k.args["eps"]))
        r.store_row("RSTD", rstd)
        scale = r.splat(rstd)
        for i, v in r.vectors(x, nth=first + 1):
            r.store_vector("Y", i, arith.mulf(arith.mulf(v, scale), r.col_vector("W", i)))
    return k


def add_rmsnorm(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """H = X + R, then RMSNorm of H (``rmsnorm`` with ``residual``): a transformer block's
    residual add and the next norm in one pass, on RMSNorm's plans."""
    return rmsnorm(p, M, chip, residual=True)


def layernorm(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """Y = (X - mean) / sqrt(var + eps) · W + B, with MEAN and RSTD = 1 / sqrt(var + eps)
    per row, an exact two-pass over the row held on chip: the sum, then the sum of
    (x - mean)² over the columns inside the row (the biased variance, no cancellation;
    the padding is 0, not the mean, so it is masked out), then the output."""
    args = [("X", "rows"), ("W", "cols"), ("B", "cols"), ("Y", "rows"), ("MEAN", "stat"), ("RSTD", "stat"),
            ("eps", "f32")]
    with row_kernel("layernorm", p, M, args, chip, shared=True) as r:
        k, x = r.k, r.tile()
        n, zero = r.f32(float(p.N)), r.f32(0.0)
        r.load(x, "X")
        for i, v, acc, s in r.vectors(x, carry=zero):
            k.yield_(k.reduction("add", v, acc))
        mean = arith.divf(r.reduce(s, "sum"), n)
        r.store_row("MEAN", mean)
        center, none = r.splat(mean), r.splat(zero)
        for i, v, acc, d2 in r.vectors(x, carry=zero, nth=1):
            d = arith.subf(v, center)
            k.yield_(k.reduction("add", arith.select(r.inside(i), arith.mulf(d, d), none), acc))
        rstd = math.rsqrt(arith.addf(arith.divf(r.reduce(d2, "sum"), n), k.args["eps"]))
        r.store_row("RSTD", rstd)
        scale = r.splat(rstd)
        for i, v in r.vectors(x, nth=2):
            wv, bv = r.col_vector("W", i), r.col_vector("B", i)
            r.store_vector("Y", i, math.fma(arith.mulf(arith.subf(v, center), scale), wv, bv))
    return k


BUILDERS = {"softmax": softmax, "logsumexp": logsumexp, "rmsnorm": rmsnorm, "layernorm": layernorm,
            "add_rmsnorm": add_rmsnorm}
