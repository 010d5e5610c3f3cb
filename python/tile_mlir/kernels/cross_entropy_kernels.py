"""Cross-entropy's two kernels, written with the builder over the row frame of
``tile_mlir.kernels.rows``: the forward (loss and lse per row, one read of the logits)
and the backward (dlogits, one read of the logits and one write). Needs MLIR; the
functional API is ``tile_mlir.kernels.loss``, and docs/fused-kernels.md
("Cross-entropy") says what each moves.

* ``cross_entropy``: one pass over the row's chunks keeps, per thread, the running max m
  and the sum s of exp(x - m) (rescaled when m grows, as softmax's first pass), the sum of
  the row's x (for label smoothing); x[target] is one load; reductions over the row's
  threads then give lse = max + log(sum) (the max and the sum, or the pair in one
  combiner reduction: ``RowPlan.packs_pair``), Σx where ε != 0, and the loss
  (1 - ε)(lse - x[t]) + ε(lse - Σx / V), 0 for a row whose target is ``ignore``.
* ``cross_entropy_fused``: ``cross_entropy`` that also writes dX (below) from the row it
  holds, with g the rows' scale given at the launch: the loss and its gradient for one
  read of the logits and one write of dX (what Liger's cross-entropy does);
* ``cross_entropy_backward``: dX = g · (exp(x - lse) - ε / V - (1 - ε)·[col = t]),
  with g the row's scale (dloss, over the count of rows for a mean; 0 for an ignored row:
  ``tile_mlir.kernels.loss`` computes it), chunk by chunk: each chunk is read
  and written once, so dX may be X itself (in place).
* ``cross_entropy_reduce``: what the loss needs over the M rows, on the device, in one
  CTA: by ``mode``, the mean's scale 1 / max(count, 1) (the fused kernel's g), the mean
  Σ loss / count, or the sum Σ loss, where count is the rows whose target is not
  ``ignore``. Each thread sums the rows i = t, t + T, t + 2T, ... in ascending order (T
  the CTA's threads), then a reduction over the CTA of the counts and one of the sums:
  the same bits on every run for a given M, and one launch where torch's ops took four.
* ``cross_entropy_row_scale``: the backward's per-row scale G (dloss over the count for a
  mean, dloss for a sum, 0 for an ignored row), in one CTA as ``cross_entropy_reduce``.
* ``scale_unless_one``: X *= SCALE[0], in place, where SCALE[0] is not 1; where it is,
  each CTA reads that one value and stops. The backward of ``cross_entropy_fused`` in a
  graph (``tile_mlir.torch``): dlogits were written for dloss = 1, and dloss is known on
  the device only, so the pass over them is skipped there, without a host sync.
"""

from __future__ import annotations

from mlir.dialects import arith, math

from ..vocab import DEFAULT_CHIP
from .forward import row_max_sum
from .library import REDUCE_MODES
from .plan import RowPlan
from .rows import Rows, row_kernel

NEG_INF = float("-inf")


def _columns(r: Rows, col):
    """(vector<V x index> of the lanes 0..V-1, this thread's first column of the chunk at
    ``col``): vector c of the thread's tile starts at first + c·32·W·V."""
    k, p = r.k, r.p
    lead = r.thread_column()
    lanes = k.constant(list(range(p.V)), f"vector<{p.V}xindex>")
    return lanes, arith.addi(col, lead)


def _this_row(r: Rows, clamped: bool = True):
    """The row this thread works on (``Rows.thread_row``: its warp's row slot, in a plan
    of several rows per CTA), clamped to the last row so that a CTA's rows past it read a
    valid target (their results are not stored)."""
    k = r.k
    row = r.thread_row()
    return arith.minui(row, arith.subi(r.rows(), k.index(1))) if clamped else row


def _x_target(r: Rows, row, column, grad: bool):
    """X[row, column] (x[target]) in f32, this thread's load. With ``grad``, DX may be X
    itself (in place), and the lane or CTA that holds column ``column`` writes it there:
    every read of it must be ordered before that write (the PTX memory model's data
    race, else). The write comes after the row's reductions; how each plan orders the
    read before it:

    * ``warps``: the first reduction's exchange between warps ends with the CTA's
      barrier (``bar.sync``), which performs the memory accesses each thread made before
      it relative to every thread of the CTA (PTX ISA, ``bar``/``barrier``);
    * ``cluster``: the first reduction's cluster barrier, ``barrier.cluster.arrive``
      (release) then ``barrier.cluster.wait`` (acquire), reached by every thread of the
      cluster: the read is before the release, every CTA's writes after the acquire;
    * ``warp``: the reductions are lane butterflies (``shfl.sync``), which move
      registers and order no memory access, so ``bar.warp.sync`` after the read: it
      "also guarantee[s] memory ordering among threads participating in barrier" (PTX
      ISA, ``bar.warp.sync``). The interpreter's race check on global memory
      (``tile_mlir.interpreter.global_races``) models all three.

    A CTA's rows past M (``_this_row`` clamps them to the last row, whose DX another
    warp writes) read nothing: their x[target] is 0, and their results are not stored."""
    k, p, X = r.k, r.p, r.k.args["X"]
    if not (grad and p.R > 1):
        x_t = k.cast(k.load(X, [row, column]), "f32")
    else:
        choice = k.if_(arith.cmpi(arith.CmpIPredicate.ult, _this_row(r, clamped=False), r.rows()), ["f32"])
        with choice:
            k.yield_(k.cast(k.load(X, [row, column]), "f32"))
        with choice.else_():
            k.yield_(r.f32(0.0))
        x_t = choice.results[0]
    if grad and p.kind == "warp":
        k.warp_barrier()
    return x_t


def _frame(name: str, p: RowPlan, M, args, chip: str):
    """``row_kernel`` with the argument ``rows`` (index) last, whatever M: the row count
    (and, for M None, the extent of every per-row argument: one kernel for every M)."""
    return row_kernel(name, p, M, [*args, ("rows", "index")], chip)


def cross_entropy(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP, grad: bool = False):
    """LOSS[r] and LSE[r] (f32) from the logits X and the int64 targets T: module
    docstring. ``ignore`` (i64), ``smoothing`` (ε, f32) and ``rows`` (M) are scalars;
    M None: any M. With ``grad`` (the kernel ``cross_entropy_fused``), also DX, the
    backward's dlogits with the rows' scale g = SCALE[0] (0 for an ignored row), from the
    row still in registers: the logits read once for the loss and its gradient."""
    args = [("X", "rows"), ("T", "targets"), ("LOSS", "stat"), ("LSE", "stat"), ("ignore", "i64"),
            ("smoothing", "f32")]
    if grad:
        args[4:4] = [("DX", "rows"), ("SCALE", "memref<1xf32>")]
    with _frame("cross_entropy_fused" if grad else "cross_entropy", p, M, args, chip) as r:
        k, x, V = r.k, r.tile(), r.V
        e = r.tile("f32") if grad else None  # exp(x - a), for dX: one exponential per element
        zero, none = r.f32(0.0), r.splat(r.f32(0.0))
        row = _this_row(r)
        target = k.load(k.args["T"], [row])
        # x[target], one load per thread (an ignored row's target is clamped into the row:
        # its loss is 0 whatever is read).
        inside_row = arith.minsi(arith.maxsi(target, k.constant(0, "i64")), k.constant(p.N - 1, "i64"))
        x_t = _x_target(r, row, k.cast(inside_row, "index"), grad)
        edge = k.splat(k.index(p.N), V)
        padded = p.CH * p.CL > p.N  # else every lane holds a column of the row: no test for Σx
        carry = [r.f32(NEG_INF), zero, zero]
        for col, (m0, s0, sx0), (m, s, sx) in r.chunks(x, padding=NEG_INF, carry=carry):
            m1 = arith.maximumf(m0, r.max(x))
            a = arith.select(r.eq(m1, r.f32(NEG_INF)), zero, m1)
            shift = r.splat(a)
            lanes, first = _columns(r, col)
            step = k.index(32 * p.W * V)
            inner = [arith.mulf(s0, r.exp(m0, a)), sx0]
            for c, (s_, sx_), (s1, sx1) in k.range(p.C, carry=inner, unroll=True):
                v = k.cast(k.vload(x, arith.muli(c, k.index(V)), V), "f32")
                if padded:
                    cols = arith.addi(lanes, k.splat(arith.addi(first, arith.muli(c, step)), V))
                    v_sum = arith.select(arith.cmpi(arith.CmpIPredicate.slt, cols, edge), v, none)
                else:
                    v_sum = v
                ev = r.exp(v, shift)
                if grad:
                    r.put(e, arith.muli(c, k.index(V)), ev)
                k.yield_(k.reduction("add", ev, s_), k.reduction("add", v_sum, sx_))
            k.yield_(m1, s1, sx1)
        # writes_row for both kernels: the loss alone combines as the fused kernel does, so the
        # two give the same lse bits
        A, S, rescale = row_max_sum(r, m, s, shift_zero=lambda top: r.eq(top, r.f32(NEG_INF)), writes_row=True)
        lse = arith.addf(A, math.log(S))
        eps = k.args["smoothing"]
        # Σx serves the smoothing term only: its reduction over the row's threads (an
        # exchange between the warps, and between the CTAs of a cluster) runs where ε != 0,
        # a branch every thread of the row takes the same way (ε is the launch's).
        smoothing = k.if_(arith.cmpf(arith.CmpFPredicate.UNE, eps, zero), ["f32"])
        with smoothing:
            k.yield_(r.reduce(sx, "sum"))
        with smoothing.else_():
            k.yield_(zero)
        sum_x = smoothing.results[0]
        nll = arith.mulf(arith.subf(r.f32(1.0), eps), arith.subf(lse, x_t))
        smooth = arith.mulf(eps, arith.subf(lse, arith.divf(sum_x, r.f32(float(p.N)))))
        # With ε = 0 the smoothing term is left out, not multiplied by 0 (lse - mean(x)
        # may be infinite or NaN where the loss is not).
        loss = arith.addf(nll, arith.select(r.eq(eps, zero), zero, smooth))
        ignored = arith.cmpi(arith.CmpIPredicate.eq, target, k.args["ignore"])
        r.store_row("LOSS", arith.select(ignored, zero, loss))
        r.store_row("LSE", lse)
        if grad:  # the row is whole in x (one chunk: the plan holds the row on chip)
            g = arith.select(ignored, zero, k.load(k.args["SCALE"], [k.index(0)]))
            _write_grad(r, x, target, lse, g, eps, r.col, kept=(e, arith.divf(rescale, S)))
    return k


def _write_grad(r: Rows, x, target, lse, g, eps, col, kept=None) -> None:
    """DX = g·(exp(x - lse) - ε/V) - g·(1 - ε)·[col = t] from the chunk in ``x`` (at column
    ``col``), written over ``x`` then stored: the backward's formula, one pass. With
    ``kept`` = (e, exp(m - A) / S), the forward's e = exp(x - a) (f32, a the thread's
    shift) and its thread's exp(m - lse) (``forward.row_max_sum``): exp(x - lse) is their
    product, no exponential per element.

    Each element is one fused multiply-add, g·exp(x - lse) + low, with low = -g·ε/V, or
    -g·ε/V - g·(1 - ε) at the target's column: two per-thread constants, one rounding.
    Which element is the target's column is one 32-bit compare of the element's offset
    from the thread's first column (a constant once LLVM unrolls the loop) with the
    target's offset (``_target_offset``), not 64-bit column arithmetic per element."""
    k, p, V = r.k, r.p, r.V
    step = 32 * p.W * V
    gv, lsev = (r.splat(g), r.splat(lse)) if kept is None else (r.splat(arith.mulf(g, kept[1])), None)
    floor = arith.mulf(g, arith.divf(eps, r.f32(float(p.N))))
    peak = arith.mulf(g, arith.subf(r.f32(1.0), eps))
    low, low_t = r.splat(arith.negf(floor)), r.splat(arith.negf(arith.addf(floor, peak)))
    _, first = _columns(r, col)
    t = k.splat(_target_offset(r, target, first, (p.C - 1) * step + V), V)
    offsets = k.constant(list(range(V)), f"vector<{V}xi32>")
    for c in k.range(p.C, unroll=True):
        i = arith.muli(c, k.index(V))
        hit = arith.cmpi(arith.CmpIPredicate.eq, arith.addi(offsets, k.splat(k.cast(arith.muli(c, k.index(step)),
                                                                                    "i32"), V)), t)
        # g · exp(x - lse), or e · (g · exp(m - lse))
        term = r.exp(k.cast(k.vload(x, i, V), "f32"), lsev) if kept is None else k.vload(kept[0], i, V)
        r.put(x, i, math.fma(term, gv, arith.select(hit, low_t, low)))
    r.store("DX", x, col)


def _target_offset(r: Rows, target, first, span: int):
    """The target's column less this thread's first column ``first`` (an i32), where that
    is one of the thread's ``span`` columns from it, else -1 (no element's offset): the
    target may be any i64 (ignore_index, or out of the row on a CUDA tensor)."""
    k = r.k
    offset = arith.subi(target, k.cast(first, "i64"))
    ge = arith.cmpi(arith.CmpIPredicate.sge, offset, k.constant(0, "i64"))
    lt = arith.cmpi(arith.CmpIPredicate.slt, offset, k.constant(span, "i64"))
    return k.cast(arith.select(arith.andi(ge, lt), offset, k.constant(-1, "i64")), "i32")


def cross_entropy_backward(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """DX from the logits X, the targets T, LSE and the rows' scales G: module docstring."""
    args = [("X", "rows"), ("T", "targets"), ("LSE", "stat"), ("G", "stat"), ("DX", "rows"), ("smoothing", "f32")]
    with _frame("cross_entropy_backward", p, M, args, chip) as r:
        k, x = r.k, r.tile()
        row = _this_row(r)
        target, lse, g = k.load(k.args["T"], [row]), k.load(k.args["LSE"], [row]), k.load(k.args["G"], [row])
        for col in r.chunks(x):
            _write_grad(r, x, target, lse, g, k.args["smoothing"], col)
    return k


def cross_entropy_fused(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """``cross_entropy`` that also writes the backward's dlogits (module docstring)."""
    return cross_entropy(p, M, chip, grad=True)


def _rows_counted(r: Rows):
    """(count, steps, row_of) of a one-CTA kernel over the M rows (``cross_entropy_reduce``,
    ``cross_entropy_row_scale``): every thread runs the same ceil(M / T) steps (a loop's
    bounds are uniform), at step j on row j·T + t where that is a row (``row_of(j)``: the
    row, clamped into [0, M), and whether it is one); ``count``: the rows whose target is
    not ``ignore``, an f32 sum of ones over the CTA (exact below 2**24 rows), on every
    thread."""
    k, zero, one = r.k, r.f32(0.0), r.f32(1.0)
    first, rows, step = k.thread_id(), r.rows(), k.index(r.p.threads)
    steps = arith.ceildivui(rows, step)

    def row_of(j):
        i = arith.addi(arith.muli(j, step), first)
        inside = arith.cmpi(arith.CmpIPredicate.ult, i, rows)
        return arith.minui(i, arith.subi(rows, k.index(1))), inside

    for j, c, count in k.range(steps, carry=zero):
        i, inside = row_of(j)
        counted = arith.cmpi(arith.CmpIPredicate.ne, k.load(k.args["T"], [i]), k.args["ignore"])
        k.yield_(arith.addf(c, arith.select(arith.andi(inside, counted), one, zero)))
    return r.reduce(count, "sum"), steps, row_of


def cross_entropy_reduce(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """OUT[0] from the rows' LOSS and targets T, by ``mode`` (``REDUCE_MODES``; module
    docstring): one CTA, launched alone (a grid of 1). A mean of no counted row is 0 / 0,
    NaN, as torch's."""
    args = [("LOSS", "stat"), ("T", "targets"), ("OUT", "memref<1xf32>"), ("ignore", "i64"), ("mode", "i32"),
            ("rows", "index")]
    with row_kernel("cross_entropy_reduce", p, M, args, chip) as r:
        k, mode = r.k, r.k.args["mode"]
        zero, one = r.f32(0.0), r.f32(1.0)
        count, steps, row_of = _rows_counted(r)
        is_scale = arith.cmpi(arith.CmpIPredicate.eq, mode, k.constant(REDUCE_MODES["scale"], "i32"))
        summed = k.if_(is_scale, ["f32"])  # the scale reads no loss (it is not written yet)
        with summed:
            k.yield_(zero)
        with summed.else_():
            for j, s, total in k.range(steps, carry=zero):
                i, inside = row_of(j)
                k.yield_(arith.addf(s, arith.select(inside, k.load(k.args["LOSS"], [i]), zero)))
            k.yield_(r.reduce(total, "sum"))
        total = summed.results[0]
        scale = arith.divf(one, arith.maximumf(count, one))
        is_mean = arith.cmpi(arith.CmpIPredicate.eq, mode, k.constant(REDUCE_MODES["mean"], "i32"))
        value = arith.select(is_scale, scale, arith.select(is_mean, arith.divf(total, count), total))
        with k.if_(arith.cmpi(arith.CmpIPredicate.eq, k.thread_id(), k.index(0))):
            k.store(value, k.args["OUT"], [k.index(0)])
    return k


def cross_entropy_row_scale(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """G[r], the backward's scale of row r, from DLOSS[0] (the loss's dloss, a ``mean``'s
    or a ``sum``'s) and the targets T: DLOSS[0] / count for ``mode`` = ``REDUCE_MODES
    ["mean"]``, DLOSS[0] for ``"sum"``; 0 for a row whose target is ``ignore``. One CTA,
    a grid of 1: the division torch's formula makes (dloss / count), one launch."""
    args = [("T", "targets"), ("DLOSS", "memref<1xf32>"), ("G", "stat"), ("ignore", "i64"), ("mode", "i32"),
            ("rows", "index")]
    with row_kernel("cross_entropy_row_scale", p, M, args, chip) as r:
        k = r.k
        count, steps, row_of = _rows_counted(r)
        dloss = k.load(k.args["DLOSS"], [k.index(0)])
        is_mean = arith.cmpi(arith.CmpIPredicate.eq, k.args["mode"], k.constant(REDUCE_MODES["mean"], "i32"))
        g = arith.select(is_mean, arith.divf(dloss, count), dloss)
        for j in k.range(steps):
            i, inside = row_of(j)
            with k.if_(inside):
                counted = arith.cmpi(arith.CmpIPredicate.ne, k.load(k.args["T"], [i]), k.args["ignore"])
                k.store(arith.select(counted, g, r.f32(0.0)), k.args["G"], [i])
    return k


def scale_unless_one(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """X = X · SCALE[0] (f32 product, rounded once to the dtype) where SCALE[0] != 1 (a NaN
    scale included); X untouched, and not read, where it is 1 (module docstring). The
    condition is one value for the whole grid, so each CTA takes one branch."""
    args = [("X", "rows"), ("SCALE", "memref<1xf32>")]
    with _frame("scale_unless_one", p, M, args, chip) as r:
        k, x = r.k, r.tile()
        g = k.load(k.args["SCALE"], [k.index(0)])
        with k.if_(arith.cmpf(arith.CmpFPredicate.UNE, g, r.f32(1.0))):
            gv = r.splat(g)
            for col in r.chunks(x):
                for i, v in r.vectors(x):
                    r.put(x, i, arith.mulf(v, gv))
                r.store("X", x, col)
    return k


BUILDERS = {"cross_entropy": cross_entropy, "cross_entropy_backward": cross_entropy_backward,
            "cross_entropy_fused": cross_entropy_fused, "scale_unless_one": scale_unless_one,
            "cross_entropy_reduce": cross_entropy_reduce, "cross_entropy_row_scale": cross_entropy_row_scale}
