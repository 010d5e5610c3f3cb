"""What every register variant of ``tile.reduce`` shares: the plan, the folds, the finish.

The variants ``local``, ``local_redux`` and ``sm100_packed`` all read registers
and write registers. They differ only in how values are combined: in the
thread (``local``'s loop or tree, ``sm100_packed``'s packed pairs) and across
lanes (``local``'s butterfly, ``local_redux``'s ``redux.sync``). Everything else
lives here, once:

* ``Plan``: the register iteration space. The *spatial* iters (``m`` iters of
  the kept dims) enumerate the dst slots a thread owns, as a linear index ``s``
  in ``[0, S)``; the *reduced* iters (``m`` iters of the reduced dims) enumerate
  the registers folded into each of them, ``r`` in ``[0, R)``, in row-major
  order of the reduced coordinates. The src slot is ``slot(s) + slot(r)``; the
  dst slot uses the dst layout's iters (a compact dst is normal).
* ``fold_registers``: the in-thread fold, ``linear`` (default) or ``tree``;
  ``fold_values``: the same two orders over a list of values.
* ``finish``: ``accum`` (once) and the store.
* ``emit_thread_wise`` and ``emit_across_lanes``: the two shapes of a lowering,
  with the variant's own fold or lane step plugged in.
* ``lower_with``: build a lowering in place of the op and erase the op.

No identity is ever emitted: every fold starts from its first element.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir.dialects import scf

from ..analysis import ReduceInfo
from ..ir import ir
from ..vocab import DEFAULT_FOLD
from . import emit


class Plan:
    """The register iteration space of one op: spatial iters, reduced iters, shapes."""

    def __init__(self, info: ReduceInfo, fold: str = DEFAULT_FOLD):
        src_l, dst_l = info.src_layout, info.dst_layout
        spatial = info.spatial_dims
        self.info = info
        self.fold = fold
        self.src_spatial = [(it.extent, it.stride) for d in spatial for it in src_l.local_iters(d)]
        self.dst_spatial = [
            (it.extent, it.stride) for d in spatial for it in dst_l.local_iters(info.dst_dim[d])
        ]
        self.reduced = [(it.extent, it.stride) for d in info.axes for it in src_l.local_iters(d)]
        # A dst register replica (``R[k : n]`` over ``m``) holds the result in k slots.
        self.dst_copies = [0]
        for it in dst_l.replica:
            if it.axis == "m":
                self.dst_copies = [c + digit * it.stride for c in self.dst_copies for digit in range(it.extent)]
        self.S = _product(e for e, _ in self.src_spatial)
        self.R = _product(e for e, _ in self.reduced)
        self.src_shape = info.src.shape
        self.dst_shape = info.dst.shape

    def combines(self) -> bool:
        """Whether any combine produces a dst element (else it is a copy of one element)."""
        return self.R > 1 or self.info.reduces_across_threads() or self.info.accum

    def src_base(self, s):
        """The src slot of spatial index ``s`` at reduced index 0."""
        return emit.slot_of(s, self.src_spatial)

    def src_slot(self, base, r):
        return emit.add_slots(base, emit.slot_of(r, self.reduced))

    def dst_slot(self, s):
        return emit.slot_of(s, self.dst_spatial)

    def load(self, src, base, r) -> ir.Value:
        """The src register ``r`` (a Python int or an index value) of the dst slot at ``base``."""
        return emit.load(src, self.src_shape, self.src_slot(base, r))


def _product(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def name(text: str) -> ir.Location:
    """A named location under the op's, so generated IR maps back to the op."""
    return ir.Location.name(text, childLoc=ir.Location.current)


def fold_registers(plan: Plan, src, slots) -> list[ir.Value]:
    """Fold the thread's own reduced registers for each spatial index in ``slots``.

    linear: one ``scf.for`` over r in [1, R) carries one accumulator per slot,
    so the slots' folds interleave; each starts from its element r = 0, and
    folds r = 1, 2, ... in turn (row-major order of the reduced coordinates).

    tree: unrolled; level by level, element 2k is combined with element 2k+1
    (an odd last element moves up unchanged), until one value is left.
    """
    bases = [plan.src_base(s) for s in slots]
    if plan.fold == "tree":
        return [_tree_fold(plan, src, base) for base in bases]
    firsts = [plan.load(src, base, 0) for base in bases]
    if plan.R == 1:
        return firsts
    with name("tile.reduce.fold"):
        loop = emit.unrolled_for(1, plan.R, firsts)
        with ir.InsertionPoint(loop.body):
            r = loop.induction_variable
            new = [
                emit.combine(plan.info.kind, acc, plan.load(src, base, r))
                for base, acc in zip(bases, loop.inner_iter_args)
            ]
            scf.yield_(new)
    return list(loop.results)


def _tree_fold(plan: Plan, src, base) -> ir.Value:
    level = [plan.load(src, base, r) for r in range(plan.R)]
    with name("tile.reduce.tree"):
        return fold_values(plan.info.kind, level, "tree")


def fold_values(kind: str, values: list[ir.Value], fold: str) -> ir.Value:
    """``values`` combined in their order: ``linear`` is op(op(op(x0, x1), x2), ...);
    ``tree`` is pairwise, level by level (element 2k with 2k+1, an odd last element
    moving up unchanged)."""
    if fold != "tree":
        acc = values[0]
        for v in values[1:]:
            acc = emit.combine(kind, acc, v)
        return acc
    while len(values) > 1:
        pairs = [emit.combine(kind, a, b) for a, b in zip(values[0::2], values[1::2])]
        values = pairs + values[len(pairs) * 2 :]
    return values[0]


def finish(plan: Plan, dst, s, v) -> None:
    """Apply accum (once), make a NaN canonical where the hardware may not have, and
    store the result of spatial index ``s`` into every slot of its dst register replica.

    f32/f16/bf16 arithmetic on NVIDIA GPUs returns the canonical NaN; f64 arithmetic
    keeps an operand's payload, and an element that no combine touched (one element,
    no lanes, no accum) is a plain copy: those are made canonical here, once.
    """
    slot = plan.dst_slot(s)
    if plan.info.accum:  # the old value is read from the lowest slot of the replica
        v = emit.combine(plan.info.kind, emit.load(dst, plan.dst_shape, slot), v)
    if emit.is_float(v.type) and (str(v.type) == "f64" or not plan.combines()):
        v = emit.canonical_nan(v)
    for copy in plan.dst_copies:
        emit.store(v, dst, plan.dst_shape, emit.add_slots(slot, copy))


# fold_one(plan, src, s) -> the folded value of spatial index s (a Python int or an index value)
FoldOne = Callable[[Plan, ir.Value, object], ir.Value]


def fold_one_registers(plan: Plan, src, s) -> ir.Value:
    """``fold_registers`` for one spatial index: the default ``FoldOne``."""
    (v,) = fold_registers(plan, src, [s])
    return v


def emit_thread_wise(plan: Plan, dst, src, fold_one: FoldOne = fold_one_registers) -> None:
    """TIRx's thread-wise shape: a spatial loop (omitted when S == 1) whose body
    folds one dst slot's registers with ``fold_one``, then applies accum and stores."""
    if plan.S == 1:
        finish(plan, dst, 0, fold_one(plan, src, 0))
        return
    with name("tile.reduce.spatial"):
        loop = emit.unrolled_for(0, plan.S)
        with ir.InsertionPoint(loop.body):
            s = loop.induction_variable
            finish(plan, dst, s, fold_one(plan, src, s))
            scf.yield_([])


def lane_butterfly(kind: str, values: list[ir.Value], bits, member_mask: ir.Value | None = None) -> list[ir.Value]:
    """Combine each value across the lanes that differ in ``bits``: for each bit b,
    highest first, ``v = op(v, shuffle xor v, 1 << b)``, the values' shuffles
    interleaved. Every lane of a group ends with identical bits: lanes i and
    i ^ (1 << b) compute op(v_i, v_j) and op(v_j, v_i), and every combine here is
    commutative on PTX (NaN results are canonical; an f64 NaN is made canonical by
    ``finish``, in every lane alike). The shuffles name every lane of the warp, or
    only those of ``member_mask`` (an i32 value; ``emit.shuffle_xor``)."""
    for b in sorted(bits, reverse=True):
        with name(f"tile.reduce.butterfly.{1 << b}"):
            others = emit.shuffle_xor_all(values, 1 << b, member_mask)
            values = [emit.combine(kind, v, o) for v, o in zip(values, others)]
    return values


def emit_across_lanes(plan: Plan, dst, src, across: Callable[[list[ir.Value]], list[ir.Value]]) -> None:
    """Fold every dst slot's own registers (interleaved), combine each slot across
    the reduced lanes with ``across`` (values in, values out, in slot order), then
    apply accum once per slot and store."""
    slots = list(range(plan.S))
    values = across(fold_registers(plan, src, slots))
    for s, v in zip(slots, values):
        finish(plan, dst, s, v)


def lower_with(op, ctx, rewriter, build: Callable[[Plan, ir.Value, ir.Value], None]) -> None:
    """Build ``build(plan, dst, src)`` in place of ``op`` (at its location, with shared
    constants), then erase ``op``."""
    plan = Plan(ctx.analysis.info, ctx.options.fold)
    dst, src = op.operands
    with rewriter.ip, op.location, emit.constant_cache():
        build(plan, dst, src)
    rewriter.erase_op(op)
