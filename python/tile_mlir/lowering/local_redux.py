"""The ``local_redux`` variant of ``tile.reduce``: a full-warp i32 reduction in one ``redux.sync``.

A higher-priority sibling of ``local`` (priority 15 over 10). Where it applies,
it replaces ``local``'s 5-step shuffle butterfly with one ``redux.sync``, which
reduces a 32-bit integer over the whole warp in hardware and leaves the result
in every lane (sm_80 and newer; 44.8 cycles against 146.5 for the butterfly on
an H200, docs/benchmarks/results.md).

Accepts what ``local`` accepts (its ``storage_scope`` and ``local_valid``
predicates) and, checked by ``redux_applies``:

* dtype i32 (redux.sync has no float add, and no 64-bit form);
* warp scope, with the reduced lane bits all 5 lane bits {0, 1, 2, 3, 4};
* a chip of sm_80 or newer (the gpu.module's ``#nvvm.target`` or the pass
  option ``chip``).

Every kind maps onto one redux kind: sum -> ``add`` (wraps), max and maximum ->
``max``, min and minimum -> ``min`` (signed; an integer has no NaN, so the NaN
kinds coincide).

The lowering folds each dst slot's own registers exactly as ``local`` does
(``registers.fold_registers``), reduces each slot with
``nvvm.redux.sync <kind> %v, -1`` (full member mask) instead of the butterfly,
then applies ``accum`` once and stores. ``convert-gpu-to-nvvm`` passes the
nvvm op through; it becomes PTX ``redux.sync.<kind>.s32 d, a, -1``.
"""

from __future__ import annotations

from mlir.dialects import nvvm

from ..ir import ir
from . import emit
from .local import named_only, reduce_info, register_sibling, verdict
from .registers import emit_across_lanes, lower_with, name

FULL_WARP = (0, 1, 2, 3, 4)
MIN_SM = 80

REDUX_KIND = {
    "sum": nvvm.ReduxKind.ADD,
    "max": nvvm.ReduxKind.MAX,
    "min": nvvm.ReduxKind.MIN,
    "maximum": nvvm.ReduxKind.MAX,
    "minimum": nvvm.ReduxKind.MIN,
}


def _dtype_problem(dtype: str, kind: str) -> str | None:
    """Why ``redux.sync`` cannot reduce ``dtype`` with ``kind`` here; None for i32."""
    if dtype == "i32":
        return None
    if dtype == "i64":
        return "dtype i64: redux.sync is 32-bit only"
    if kind == "sum":
        return f"dtype {dtype}: redux.sync has no float add"
    return f"dtype {dtype}: this variant's redux.sync min/max is i32 only"


def redux_applies(op, ctx):
    """i32, warp scope, all 32 lanes reduced, sm_80+; the reason names every failure."""
    info = reduce_info(op, ctx)
    if info is None:
        return False, "the op is not valid (see local_valid)"
    problems = named_only(info, "redux.sync")
    dtype = None if problems else _dtype_problem(info.dtype, info.kind)
    if dtype:
        problems.append(dtype)
    if info.exec_scope != "warp":
        problems.append(f"exec_scope {info.exec_scope}: redux.sync is a warp-scope instruction")
    elif info.reduced_thread_bits != FULL_WARP:
        bits = "{" + ", ".join(map(str, info.reduced_thread_bits)) + "}"
        problems.append(f"lane bits {bits} are not the full warp")
    return verdict(problems, ctx, MIN_SM)


@register_sibling("local_redux", 15, redux_applies)
def lower_local_redux(op, ctx, rewriter):
    lower_with(op, ctx, rewriter, _emit_redux)


def _emit_redux(plan, dsts, srcs) -> None:
    kind = REDUX_KIND[plan.info.kind]

    def redux(partials: list[list[ir.Value]]) -> list[list[ir.Value]]:
        with name("tile.reduce.redux"):
            full_mask = emit.i32(-1)
            return [[nvvm.redux_sync(v.type, v, kind, full_mask)] for (v,) in partials]

    emit_across_lanes(plan, dsts, srcs, redux)
