"""The ``sm100_packed`` variant of ``tile.reduce``: TIRx's Blackwell fast path.

Priority 20, above ``local_redux`` (15) and ``local`` (10). It takes the
thread-wise reductions that ``local`` would fold one element at a time and
folds them two at a time, with instructions that sm_100 added:

* **sum**: packed ``add.rn.f32x2``. The registers are folded in pairs as
  ``vector<2xf32>`` ``arith.addf``, which LLVM's NVPTX backend selects as
  ``add.rn.f32x2`` on sm_100 (PTX 8.6). So lane 0 of the vector accumulates
  the even elements and lane 1 the odd ones; the two partial sums are combined
  last. The order, for R elements x0 .. x(R-1) in row-major order of the
  reduced coordinates::

      even = x0 + x2 + x4 + ...   (+ x(R-1) when R is odd, added as a scalar last)
      odd  = x1 + x3 + x5 + ...
      dst  = even + odd

* **max, min, maximum, minimum**: 3-input max/min. ``local``'s linear fold
  (``registers.fold_registers``) is already a chain of ``op(op(acc, x_r), x_(r+1))``
  once LLVM has unrolled it, and LLVM 22's NVPTX backend turns each such pair of
  steps into one 3-input ``max.f32``/``min.f32`` (``max.NaN.f32``/``min.NaN.f32``
  for maximum/minimum) when the PTX ISA is 8.8 or newer (``features = "+ptx88"``
  on the ``#nvvm.target``), pairing from the last element back. At sm_100a's
  default PTX 8.6 they stay 2-input, and the PTX is ``local``'s. The result of
  these kinds does not depend on the order.

Accepts what ``local`` accepts (its ``storage_scope`` and ``local_valid``
predicates) and, checked by ``sm100_applies``: thread scope, f32, a single
reduced dim of at least 8 elements, a chip of sm_100 or newer, and for a sum
the default ``fold=linear`` (``fold=tree`` asks for the tree's order).

The spatial loop, ``accum`` and the store are ``local``'s (``registers.py``).
"""

from __future__ import annotations

import math

from mlir.dialects import arith, scf, vector

from ..ir import ir
from ..vocab import DEFAULT_FOLD
from . import emit
from .local import named_only, reduce_info, register_sibling, verdict
from .registers import Plan, emit_thread_wise, fold_of, fold_one_registers, lower_with, name

MIN_SM = 100
MIN_ELEMENTS = 8


def sm100_applies(op, ctx):
    """Thread scope, f32, one reduced dim of >= 8 elements, sm_100+; every failure named."""
    info = reduce_info(op, ctx)
    if info is None:
        return False, "the op is not valid (see local_valid)"
    problems = named_only(info, "the sm_100 fast path")
    if info.exec_scope != "thread":
        problems.append(f"exec_scope {info.exec_scope}: the fast path is thread scope only")
    if info.dtype != "f32":
        problems.append(f"{info.dtype}: fast path is f32 only")
    if len(info.axes) != 1:
        problems.append(f"{len(info.axes)} reduced dims {list(info.axes)}: the fast path reduces one dim")
    elements = math.prod(info.src_layout.shape[d] for d in info.axes)
    if elements < MIN_ELEMENTS:
        problems.append(f"{elements} elements < {MIN_ELEMENTS}")
    if info.kind == "sum" and fold_of(info, ctx) != DEFAULT_FOLD:
        problems.append("fold=tree: the packed sum has its own order (even/odd partial sums)")
    return verdict(problems, ctx, MIN_SM)


@register_sibling("sm100_packed", 20, sm100_applies)
def lower_sm100_packed(op, ctx, rewriter):
    fold_one = _packed_sum if ctx.analysis.info.kind == "sum" else fold_one_registers
    lower_with(op, ctx, rewriter, lambda plan, dsts, srcs: emit_thread_wise(plan, dsts, srcs, fold_one))


def _packed_sum(plan: Plan, srcs, s) -> list[ir.Value]:
    """The sum of one dst slot's R registers: even/odd partial sums in a vector<2xf32>."""
    (src,) = srcs
    base = plan.src_base(s)
    f32 = ir.F32Type.get()
    pair_type = ir.VectorType.get([2], f32)

    def pair(r):  # <x_r, x_(r+1)>
        first, second = plan.load(src, base, r), plan.load(src, base, emit.add_slots(r, 1))
        return vector.from_elements(pair_type, [first, second])

    with name("tile.reduce.packed"):
        loop = emit.unrolled_for(2, plan.R - plan.R % 2, [pair(0)], step=2)
        with ir.InsertionPoint(loop.body):
            (acc,) = loop.inner_iter_args
            scf.yield_([arith.addf(acc, pair(loop.induction_variable))])
        even = vector.extract(loop.results[0], [], [0])
        odd = vector.extract(loop.results[0], [], [1])
        if plan.R % 2:
            even = arith.addf(even, plan.load(src, base, plan.R - 1))
        return [arith.addf(even, odd)]
