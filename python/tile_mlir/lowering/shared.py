"""The ``shared`` variant of ``tile.reduce``: a tile in workgroup memory, reduced into one.

Accepts: both operands in workgroup memory (``#gpu.address_space<workgroup>``, TIRx's
``shared`` scope), a valid op, plain row-major tiles (no layout, or one with no thread
axis, no replica and row-major strides), at ``thread``, ``warp``, ``warpgroup`` or
``cta`` scope; at cta scope the function's ``known_block_size``, since the number of
threads decides the groups. docs/lowering-shared.md has the generated IR and PTX.

Every thread of the scope's instance cooperates: T threads, 1 (thread), 32 (warp), 128
(warpgroup) or the block's (cta). Call E the number of dst elements and R the number of
src elements each one folds. Each dst element is reduced by a *group* of G lanes:

    G = the smallest power of two with E * G >= T (every thread gets work), but at most
        32 (a group stays in one warp), at most R (every lane has an element), and a
        divisor of T (no thread is left over)             (``vocab.shared_group_size``)

Thread ``t`` (its index in the scope) is lane ``j = t % G`` of group ``k = t / G``; the
``NG = T / G`` groups hold lanes ``k*G .. k*G+G-1`` of one warp each (G divides 32).
Group k takes the dst elements ``e = k, k + NG, k + 2*NG, ... < E``, one after the other.
For each:

1. lane j folds the src elements ``r = j, j + G, j + 2G, ... < R`` of e (row-major
   order of the reduced coordinates), in increasing r: ``acc = x_j; acc = op(acc,
   x_(j+G)); ...`` (``fold=tree``: pairwise, level by level, over the same elements);
   a combiner function instead folds a contiguous run per lane (``_lane_fold``), so that
   the lower lane of each butterfly step holds the lower coordinates;
2. a butterfly over the group, highest bit first: ``v = op(v, shfl.sync.bfly(v, 1 << b,
   mask))``, whose member ``mask`` names exactly the group's G lanes
   (``((1 << G) - 1) << (t % 32 & (32 - G))``; the full mask only when G = 32);
3. lane 0 of the group applies ``accum`` once (``op(old, v)``), makes an f64 NaN (or an
   element copied without a combine) canonical, and stores dst[e] (``registers.finish``).

Then the barrier of the scope makes dst visible to all its threads
(``threads.barrier``): none at thread scope, ``nvvm.bar.warp.sync`` for a warp, the
warpgroup's own named barrier, ``gpu.barrier`` for a cta. At thread scope (T = G = 1)
this is TIRx's serial nest: ``for e: acc = src[e, 0]; for r in 1..R: acc = op(acc,
src[e, r])``, then accum and the store.

The caller makes src (and, with accum, dst) visible to the scope's threads before the
op, as for any workgroup data. The lowering allocates nothing and emits no identity.
It depends on the function's block size (the linear thread id; T at cta scope), which a
template copied between functions would not see: each op is lowered in place.
"""

from __future__ import annotations

import math

from mlir.dialects import arith, scf

from ..analysis import known_block_size
from ..dispatch import predicate, register_dispatch
from ..ir import ir
from ..layout import TileLayout
from ..vocab import SCOPE_THREADS, WARP_SIZE, shared_group_size
from . import emit
from .local import match_storage_scope, reduce_info, validate_op
from .registers import Plan, finish, fold_values, lane_butterfly, lower_with, name
from .threads import barrier, scope_thread

SCOPES = ("thread", "warp", "warpgroup", "cta")


def shared_applies(op, ctx):
    """Plain row-major tiles, a scope the variant runs at, and a known block at cta scope."""
    info = reduce_info(op, ctx)
    if info is None:
        return False, "the op is not valid (see valid)"
    layouts = (("src", info.src_layout), ("dst", info.dst_layout))
    bent = [f"{role}_layout {layout}" for role, layout in layouts if layout.canonical() != _plain(layout)]
    problems = []
    if bent:
        problems.append(
            f"{' and '.join(bent)} {'is not a plain row-major tile' if len(bent) == 1 else 'are not plain row-major tiles'}"
            ": the shared variant reads workgroup memory row-major, with no thread axes, replicas or strides"
        )
    if info.exec_scope not in SCOPES:
        problems.append(f"exec_scope {info.exec_scope}: the variant runs at {', '.join(SCOPES)} scope")
    if info.exec_scope == "cta" and known_block_size(op) is None:
        problems.append(
            "cta scope needs the block size (known_block_size on the gpu.func): the number of "
            "threads decides the groups"
        )
    return not problems, "; ".join(problems)


def _plain(layout: TileLayout) -> TileLayout:
    """The row-major layout of ``layout``'s shape, registers only (canonical)."""
    return TileLayout.row_major(layout.shape).canonical()


SHARED_PREDICATES = (
    predicate("storage_scope", match_storage_scope, expected_scope=["shared"]),
    predicate("valid", validate_op),
    predicate("shared_applies", shared_applies),
)


@register_dispatch("tile.reduce", "cuda", variant="shared", priority=10, when=SHARED_PREDICATES, copyable=False)
def lower_shared(op, ctx, rewriter):
    block = known_block_size(op)
    lower_with(op, ctx, rewriter, lambda plan, dsts, srcs: _emit(plan, dsts, srcs, block))


def scope_threads(scope: str, block: tuple[int, ...] | None) -> int:
    """T: the threads of one instance of ``scope`` (a cta's from ``block``)."""
    return math.prod(block) if scope == "cta" else SCOPE_THREADS[scope]


def _coalesced(iters: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(extent, stride) iters, outer first, with each contiguous pair merged into one, so
    that a row-major index needs fewer divisions: ``[(2, 22), (22, 1)]`` is ``[(44, 1)]``."""
    out: list[tuple[int, int]] = []
    for extent, stride in iters:
        if extent == 1:
            continue
        if out and out[-1][1] == extent * stride:
            out[-1] = (out[-1][0] * extent, stride)
        else:
            out.append((extent, stride))
    return out


def _emit(plan: Plan, dsts, srcs, block) -> None:
    info = plan.info
    plan.src_spatial, plan.dst_spatial = _coalesced(plan.src_spatial), _coalesced(plan.dst_spatial)
    plan.reduced = _coalesced(plan.reduced)
    E, R = plan.S, plan.R
    T = scope_threads(info.exec_scope, block)
    G = shared_group_size(E, R, T)
    groups = T // G
    with name("tile.reduce.groups"):
        t, instance = (0, 0) if T == 1 else scope_thread(info.exec_scope, block)
        k = t if G == 1 else arith.divui(t, emit.index(G))
        j = 0 if G == 1 else arith.remui(t, emit.index(G))
        mask = None if G == 1 else _group_mask(t, G)

    def reduce_element(e) -> None:
        partial = _lane_fold(plan, srcs, e, j, G)
        if G > 1:
            (partial,) = lane_butterfly(plan.combiner, [partial], range(G.bit_length() - 1), member_mask=mask)
        with name("tile.reduce.write"):
            _when(None if G == 1 else arith.cmpi(arith.CmpIPredicate.eq, j, emit.index(0)),
                  lambda: finish(plan, dsts, e, partial))

    def element(e) -> None:
        """Reduce dst element ``e`` (an int or an index), when it exists (e < E)."""
        inside = None
        if E % groups:
            e_value = emit.index(e) if isinstance(e, int) else e
            inside = arith.cmpi(arith.CmpIPredicate.ult, e_value, emit.index(E))
        _when(inside, lambda: reduce_element(e))

    rounds = -(-E // groups)
    with name("tile.reduce.elements"):
        if rounds == 1:
            element(k)
        else:
            loop = scf.ForOp(emit.index(0), emit.index(rounds), emit.index(1))
            with ir.InsertionPoint(loop.body):
                i = loop.induction_variable
                element(emit.add_slots(k, i if groups == 1 else arith.muli(i, emit.index(groups))))
                scf.yield_([])
    with name("tile.reduce.barrier"):
        barrier(info.exec_scope, instance)


def _group_mask(t: ir.Value, G: int) -> ir.Value:
    """The member mask of the group of thread ``t``: its G lanes, ``(2^G - 1) << first``."""
    if G == WARP_SIZE:
        return emit.i32(-1)
    i32 = ir.IntegerType.get_signless(32)
    first = arith.index_cast(i32, arith.andi(t, emit.index(WARP_SIZE - G)))
    return arith.shli(emit.i32((1 << G) - 1), first)


def _when(condition, body) -> None:
    """``body()`` under ``scf.if condition``, or plainly when ``condition`` is None."""
    if condition is None:
        body()
        return
    branch = scf.IfOp(condition)
    with ir.InsertionPoint(branch.then_block):
        body()
        scf.yield_([])


def _lane_fold(plan: Plan, srcs, e, j, G: int) -> list[ir.Value]:
    """Lane j's fold of dst element e: its src elements r = j, j + G, ... < R, in order,
    the accumulator left (a partial: one value per operand).

    Every lane has ``q = R // G`` of them; lanes ``j < R % G`` one more. ``linear``: a
    loop over the q, then the extra one under ``scf.if``. ``tree``: the pairwise tree of
    q (or q + 1) loads.

    A combiner that is not commutative (a combiner function) takes *contiguous* elements
    instead: lane j the q (or q + 1) from ``r = j q + min(j, R % G)`` on. Then every
    element of a butterfly step's lower lane precedes its partner's, so the upper lane
    holds the highest coordinate (with the strided elements, lane R % G - 1 would).
    """
    comb, R = plan.combiner, plan.R
    q, extra = divmod(R, G)
    base = plan.src_base(e)
    contiguous = not comb.commutative and G > 1
    if contiguous:
        start = arith.muli(j, emit.index(q)) if q != 1 else j
        start = arith.addi(start, arith.minui(j, emit.index(extra))) if extra else start

    def x(i) -> list[ir.Value]:
        """The lane's i-th element, r = j + i * G (contiguous: start + i; i an int or an index)."""
        if contiguous:
            return plan.element(srcs, base, emit.add_slots(start, i))
        step = i * G if isinstance(i, int) else (i if G == 1 else arith.muli(i, emit.index(G)))
        return plan.element(srcs, base, emit.add_slots(j, step))

    def with_extra(fold_q, fold_more) -> list[ir.Value]:
        if not extra:
            return fold_q()
        more = arith.cmpi(arith.CmpIPredicate.ult, j, emit.index(extra))
        branch = scf.IfOp(more, comb.types, has_else=True)
        with ir.InsertionPoint(branch.then_block):
            scf.yield_(fold_more())
        with ir.InsertionPoint(branch.else_block):
            scf.yield_(fold_q())
        return list(branch.results)

    if plan.fold == "tree":
        with name("tile.reduce.tree"):
            return with_extra(
                lambda: fold_values(comb, [x(i) for i in range(q)], "tree"),
                lambda: fold_values(comb, [x(i) for i in range(q + 1)], "tree"),
            )
    with name("tile.reduce.fold"):
        acc = x(0)
        if q > 1:
            loop = scf.ForOp(emit.index(1), emit.index(q), emit.index(1), acc)
            with ir.InsertionPoint(loop.body):
                scf.yield_(comb.combine(list(loop.inner_iter_args), x(loop.induction_variable)))
            acc = list(loop.results)
        return with_extra(lambda: acc, lambda: comb.combine(acc, x(q)))
