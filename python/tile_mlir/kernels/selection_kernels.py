"""The argmax and argmin row kernels, written with the builder over the row frame of
``tile_mlir.kernels.rows``. Needs MLIR; the functional API is
``tile_mlir.kernels.selection``.

Y[r] (int64) = the column of the greatest (``argmax``) or smallest (``argmin``) element
of row r: the first such column; where the row holds a NaN, the first NaN's; -0 and +0
equal (``torch.argmax``'s rule, docs/spec.md, "argmax and argmin"). One read of the row:

1. the CTA's part of the row is loaded into registers (``tile.copy``, the plan's ``ROWS``
   layout; the columns past N padded with -inf for argmax, +inf for argmin, which no
   column of the row loses a tie to: the lower column wins);
2. each thread takes the best of its own elements (a thread-scope ``tile.reduce`` with
   ``kind = "argmax"``: the value and its slot, the first of equals, a NaN first), and
   turns the slot into its column;
3. one ``tile.reduce`` of the threads' (value, column) pairs over the row's threads, at
   cta scope, or cluster scope where the plan spreads the row over a cluster's CTAs
   (``pick``: the better value, a NaN over a number, and between equals the lower
   column);
4. the row's first CTA stores the column.
"""

from __future__ import annotations

from mlir.dialects import arith

from .. import ops
from ..vocab import DEFAULT_CHIP, WARP_SIZE
from .plan import RowPlan
from .rows import row_kernel

__all__ = ["BUILDERS", "argmax", "argmin", "pick"]


def pick(kind: str):
    """The combine of two (value f32, column i32) pairs for ``kind``: the greater value
    (argmin: the smaller), a NaN over a number, and between equal values (or two NaNs)
    the lower column. Commutative and associative, so the order of the combines does not
    change the result."""
    better = arith.CmpFPredicate.OGT if kind == "argmax" else arith.CmpFPredicate.OLT

    def combine(left, right):
        (lv, lc), (rv, rc) = left, right
        wins = arith.cmpf(better, rv, lv)
        right_nan = arith.cmpf(arith.CmpFPredicate.UNO, rv, rv)
        left_nan = arith.cmpf(arith.CmpFPredicate.UNO, lv, lv)
        nan_first = arith.andi(right_nan, arith.cmpf(arith.CmpFPredicate.ORD, lv, lv))
        same = arith.ori(arith.cmpf(arith.CmpFPredicate.OEQ, rv, lv), arith.andi(right_nan, left_nan))
        lower = arith.andi(same, arith.cmpi(arith.CmpIPredicate.slt, rc, lc))
        take = arith.ori(arith.ori(wins, nan_first), lower)
        return [arith.select(take, rv, lv), arith.select(take, rc, lc)]

    combine.__name__ = f"pick_{kind}"
    return combine


def _selection(kind: str, p: RowPlan, M: int | None, chip: str):
    padding = float("-inf") if kind == "argmax" else float("inf")
    with row_kernel(kind, p, M, [("X", "rows"), ("Y", "targets")], chip) as r:
        k, V = r.k, p.V
        x = r.tile()
        r.load(x, "X", padding=padding, cache="streaming")  # read once: ld.global.cs (docs/spec.md)
        value, slot = k.registers([1], p.dtype), k.registers([1], "i32")
        # the thread's E elements folded pairwise (log2 E dependent steps, not E - 1): the
        # same (value, slot) whatever the order, by argmax's meaning
        ops.reduce([value, slot], [x], kind=kind, exec_scope="thread", axes=[0], fold="tree")
        # slot i holds column col + (i div V)·32·W·V + (thread mod 32·W)·V + i mod V (ROWS)
        i = k.load(slot, [0])
        iv = k.constant(V, "i32")
        first = k.cast(arith.addi(r.col, r.thread_column()), "i32")
        step = arith.muli(arith.divui(i, iv), k.constant(WARP_SIZE * p.W * V, "i32"))
        column = arith.addi(arith.addi(first, step), arith.remui(i, iv))
        one_v, one_c = k.registers([1], "f32"), k.registers([1], "i32")
        best_v, best_c = k.registers([1], "f32"), k.registers([1], "i32")
        k.store(k.cast(k.load(value, [0]), "f32"), one_v, [0])
        k.store(column, one_c, [0])
        ops.reduce([best_v, best_c], [one_v, one_c], combine=pick(kind),
                   exec_scope="cluster" if p.CL > 1 else "cta", axes=[1],
                   src_layout=r.layout["PARTIALS"], dst_layout=r.layout["RESULT"])
        r.store_row("Y", k.load(best_c, [0]))
    return r.k


def argmax(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """Y[r] = the first column of row r's greatest element, or of its first NaN."""
    return _selection("argmax", p, M, chip)


def argmin(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """Y[r] = the first column of row r's smallest element, or of its first NaN."""
    return _selection("argmin", p, M, chip)


BUILDERS = {"argmax": argmax, "argmin": argmin}
