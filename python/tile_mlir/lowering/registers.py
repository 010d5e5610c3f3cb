"""What every register variant of ``tile.reduce`` shares: the plan, the folds, the finish.

The variants ``local``, ``local_redux`` and ``sm100_packed`` all read registers
and write registers. They differ only in how values are combined: in the
thread (``local``'s loop or tree, ``sm100_packed``'s packed pairs) and across
lanes (``local``'s butterfly, ``local_redux``'s ``redux.sync``). Everything else
lives here, once:

A *partial* is the list of the k values an op carries per element (one for a named
kind; ``combiner.py``); every fold here works on partials, with the op's ``Combiner``
(``plan.combiner``), and a left operand that covers the lower reduced coordinates.

* ``Plan``: the register iteration space. The *spatial* iters (``m`` iters of
  the kept dims) enumerate the dst slots a thread owns, as a linear index ``s``
  in ``[0, S)``; the *reduced* iters (``m`` iters of the reduced dims) enumerate
  the registers folded into each of them, ``r`` in ``[0, R)``, in row-major
  order of the reduced coordinates. The src slot is ``slot(s) + slot(r)``; the
  dst slot uses the dst layout's iters (a compact dst is normal).
* ``fold_registers``: the in-thread fold, ``linear`` (default) or ``tree`` (argmax and
  argmin in two phases: ``_fold_two_phase``);
  ``fold_values``: the same two orders over a list of values.
* ``finish``: ``accum`` (once) and the store.
* ``emit_thread_wise`` and ``emit_across_lanes``: the two shapes of a lowering,
  with the variant's own fold or lane step plugged in.
* ``lower_with``: build a lowering in place of the op and erase the op.

No identity is ever emitted: every fold starts from its first element.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir.dialects import arith, gpu, scf, vector

from ..analysis import ReduceInfo, known_block_size, thread_bits
from ..ir import ir
from ..vocab import DEFAULT_FOLD
from . import combiner as combiners
from . import emit
from .threads import scope_thread_index


class Plan:
    """The register iteration space of one op: spatial iters, reduced iters, shapes."""

    def __init__(self, info: ReduceInfo, fold: str = DEFAULT_FOLD, block=None, combiner=None):
        src_l, dst_l = info.src_layout, info.dst_layout
        spatial = info.spatial_dims
        self.info = info
        self.fold = fold
        self.block = block  # the function's known_block_size, or None
        self.combiner = combiner
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
        self.index_iters, self.thread_index_iters = _index_weights(info)

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

    def element(self, srcs, base, r) -> list[ir.Value]:
        """The partial of src register ``r`` of the dst slot at ``base``."""
        return self.combiner.element(self, srcs, base, r)

    def combine(self, left: list[ir.Value], right: list[ir.Value]) -> list[ir.Value]:
        return self.combiner.combine(left, right)

    def combine_in_order(self, left: list[ir.Value], right: list[ir.Value]) -> list[ir.Value]:
        """``combine`` in the thread's own fold, where right's coordinates follow left's."""
        return self.combiner.combine_in_order(left, right)

    def reduced_index(self, r):
        """The row-major position among the reduced coordinates of register ``r``'s
        element, less the part the thread's index adds (``thread_index_base``)."""
        return emit.slot_of(r, self.index_iters)

    def thread_index_base(self):
        """The part of the row-major position among the reduced coordinates that the
        thread's index adds (0 when the reduced dims name no thread axis): each reduced
        thread iter's digit, read from its bits of the scope's thread index, times its
        weight."""
        if not self.thread_index_iters:
            return 0
        t = scope_thread_index(self.info.exec_scope, self.block)
        total = None
        for low, extent, weight in self.thread_index_iters:
            digit = arith.andi(arith.shrui(t, emit.index(low)) if low else t, emit.index(extent - 1))
            if weight != 1:
                digit = arith.muli(digit, emit.index(weight))
            total = digit if total is None else arith.addi(total, digit)
        return total


def _index_weights(info: ReduceInfo):
    """How register r and the thread's index make the row-major position of an element
    among the reduced coordinates: ((extent, weight) of each reduced register iter, in
    ``Plan.reduced``'s order), and (low thread bit, extent, weight) of each reduced
    thread iter. An iter's weight is the product of the extents inside it: the later
    iters of its dim, and the later reduced dims."""
    shape = info.src_layout.shape
    registers, threads = [], []
    for n, d in enumerate(info.axes):
        inner = _product(shape[e] for e in info.axes[n + 1:])
        iters = info.src_layout.shard[d]
        for j, it in enumerate(iters):
            weight = inner * _product(later.extent for later in iters[j + 1:])
            if it.axis == "m":
                registers.append((it.extent, weight))
            elif it.extent > 1:
                threads.append((thread_bits((it,))[0], it.extent, weight))
    return registers, threads


def _product(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def name(text: str) -> ir.Location:
    """A named location under the op's, so generated IR maps back to the op."""
    return ir.Location.name(text, childLoc=ir.Location.current)


def fold_registers(plan: Plan, srcs, slots) -> list[list[ir.Value]]:
    """Fold the thread's own reduced registers for each spatial index in ``slots``: one
    partial per slot.

    linear: one ``scf.for`` over r in [1, R) carries every slot's partial, so the slots'
    folds interleave; each starts from its element r = 0, and folds r = 1, 2, ... in turn
    (row-major order of the reduced coordinates), the accumulator left.

    tree: unrolled; level by level, element 2k is combined with element 2k+1
    (an odd last element moves up unchanged), until one partial is left.

    argmax/argmin of bf16, f16 and integers fold in two phases instead, with the same
    bits (``_fold_two_phase``).
    """
    bases = [plan.src_base(s) for s in slots]
    if plan.R > 1 and plan.combiner.two_phase():
        return _fold_two_phase(plan, srcs, bases)
    return _fold_in_order(plan, srcs, bases)


def _fold_in_order(plan: Plan, srcs, bases) -> list[list[ir.Value]]:
    """``fold_registers``'s fold: ``combine_in_order`` element by element."""
    if plan.fold == "tree":
        return [_tree_fold(plan, srcs, base) for base in bases]
    firsts = [plan.element(srcs, base, 0) for base in bases]
    if plan.R == 1:
        return firsts
    k = plan.combiner.k
    with name("tile.reduce.fold"):
        loop = emit.unrolled_for(1, plan.R, [v for first in firsts for v in first])
        with ir.InsertionPoint(loop.body):
            r = loop.induction_variable
            accs = _chunks(list(loop.inner_iter_args), k)
            new = [plan.combine_in_order(acc, plan.element(srcs, base, r)) for base, acc in zip(bases, accs)]
            scf.yield_([v for partial in new for v in partial])
    return _chunks(list(loop.results), k)


def _fold_two_phase(plan: Plan, srcs, bases) -> list[list[ir.Value]]:
    """argmax/argmin's ``fold_registers`` (``ArgBest.two_phase``), in two phases that
    give ``_fold_in_order``'s bits. The value: ``best``, a fold of ``ArgBest.best`` in
    the fold's order (linear or tree: of numbers the best one, else a NaN, in any
    order). The index: the elements from the last to the first, ``idx =
    select(holds(x_r, best), index_r, idx)``, which leaves the first index that holds
    ``best`` (``_scan_first``). Where every slot's ``best`` is a number other than a
    zero (``ArgBest.sure``; always, for integers), the value is ``best`` and holding it
    is ``ArgBest.equal``. Else (an ``scf.if``: a NaN, or a zero of a sign that may not
    be the first zero's) holding it is ``ArgBest.holds``, and the same scan selects the
    value too."""
    comb, (src,) = plan.combiner, srcs
    with name("tile.reduce.fold.value"):
        bests = _best_values(plan, src, bases)

    def index(base, r):
        return [comb.local_index(plan, r)]

    def both(base, r):
        return [plan.load(src, base, r), comb.local_index(plan, r)]

    def sure_pairs():  # (best, idx) of each slot
        found = _scan_first(plan, src, bases, bests, index, comb.equal)
        return [[best, idx] for best, (idx,) in zip(bests, found)]

    sure = [s for s in map(comb.sure, bests) if s is not None]
    with name("tile.reduce.fold.index"):
        if not sure:
            pairs = sure_pairs()
        else:
            cond = sure[0]
            for s in sure[1:]:
                cond = arith.andi(cond, s)
            branch = scf.IfOp(cond, [t for _ in bases for t in comb.types], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.yield_([v for pair in sure_pairs() for v in pair])
            with ir.InsertionPoint(branch.else_block):
                scf.yield_([v for pair in _scan_first(plan, src, bases, bests, both, comb.holds) for v in pair])
            pairs = _chunks(list(branch.results), 2)
        return [[v, comb.with_thread(i)] for v, i in pairs]


def _scan_first(plan: Plan, src, bases, bests, pick, holds) -> list[list[ir.Value]]:
    """For each slot, ``pick(base, r)`` (a list of values) of the first element r that
    ``holds(x_r, best)`` (one does): the elements from the last to the first, ``out =
    select(holds(x_r, best), pick(base, r), out)`` from ``pick(base, R - 1)``. With
    ``_paired``, the pairs from the last to the first, the two elements of one compared
    at once (``vector<2 x T>``: PTX ``setp.eq.bf16x2``), x_(r+1) first."""
    step = 2 if _paired(plan) else 1
    vtype = ir.VectorType.get([2], plan.combiner.types[0])
    splats = [vector.broadcast(vtype, best) for best in bests] if step == 2 else bests

    def take(cond, base, r, out):
        return [arith.select(cond, new, old) for new, old in zip(pick(base, r), out)]

    def scan(base, best, out, r):  # the item at r (an element, or the pair r, r + 1)
        if step == 1:
            return take(holds(plan.load(src, base, r), best), base, r, out)
        held = holds(_pair(plan, src, base, r), best)
        out = take(vector.extract(held, [], [1]), base, emit.add_slots(r, 1), out)
        return take(vector.extract(held, [], [0]), base, r, out)

    outs = [pick(base, plan.R - 1) for base in bases]
    top = plan.R - 2  # the first item scanned (the last element is outs')
    if plan.fold == "tree":
        for r in range(top, -1, -step):
            outs = [scan(base, best, out, r) for base, best, out in zip(bases, splats, outs)]
        return outs
    n = len(outs[0])
    loop = emit.unrolled_for(0, top + 1, [v for out in outs for v in out], step=step)
    with ir.InsertionPoint(loop.body):
        r = arith.subi(emit.index(top), loop.induction_variable)
        carried = _chunks(list(loop.inner_iter_args), n)
        scf.yield_([v for base, best, out in zip(bases, splats, carried) for v in scan(base, best, out, r)])
    return _chunks(list(loop.results), n)


def _best_values(plan: Plan, src, bases) -> list[ir.Value]:
    """The value phase of ``_fold_two_phase``: each slot's fold of ``ArgBest.best``, in
    the fold's order (linear or tree), over the elements or, for 16-bit floats whose
    elements r and r + 1 (r even) sit in one 32-bit register (``_paired``), over the
    ``vector<2 x T>`` pairs (PTX ``max.NaN.bf16x2``), the two lanes combined last."""
    comb, R = plan.combiner, plan.R
    pairs = _paired(plan)
    step = 2 if pairs else 1

    def item(base, r):
        return _pair(plan, src, base, r) if pairs else plan.load(src, base, r)

    if plan.fold == "tree":
        folded = [fold_values(_Best(comb), [[item(base, r)] for r in range(0, R, step)], "tree")[0] for base in bases]
    else:
        loop = emit.unrolled_for(step, R, [item(base, 0) for base in bases], step=step)
        with ir.InsertionPoint(loop.body):
            r = loop.induction_variable
            scf.yield_([comb.best(acc, item(base, r)) for base, acc in zip(bases, loop.inner_iter_args)])
        folded = list(loop.results)
    if not pairs:
        return folded
    return [comb.best(vector.extract(v, [], [0]), vector.extract(v, [], [1])) for v in folded]


def _pair(plan: Plan, src, base, r) -> ir.Value:
    """``<x_r, x_(r+1)>``, a ``vector<2 x T>`` (``_paired``)."""
    vtype = ir.VectorType.get([2], plan.combiner.types[0])
    return vector.from_elements(vtype, [plan.load(src, base, r), plan.load(src, base, emit.add_slots(r, 1))])


def _paired(plan: Plan) -> bool:
    """Whether the value phase folds pairs: a 16-bit float, R even, and elements r and
    r + 1 (r even) in adjacent registers, the first at an even slot for every spatial
    index (so a 32-bit register holds the pair)."""
    t = plan.combiner.types[0]
    if not emit.is_float(t) or emit.bit_width(t) != 16 or plan.R % 2:
        return False
    if any(stride % 2 for extent, stride in plan.src_spatial if extent > 1):
        return False
    slots = [emit.slot_of(r, plan.reduced) for r in range(plan.R)]
    return all(slots[r] % 2 == 0 and slots[r + 1] == slots[r] + 1 for r in range(0, plan.R, 2))


class _Best:
    """``ArgBest.best`` as a one-value combiner, for ``fold_values``."""

    def __init__(self, comb):
        self.combine = self.combine_in_order = lambda a, b: [comb.best(a[0], b[0])]


def _chunks(values: list, k: int) -> list[list]:
    return [values[i:i + k] for i in range(0, len(values), k)]


def _tree_fold(plan: Plan, srcs, base) -> list[ir.Value]:
    level = [plan.element(srcs, base, r) for r in range(plan.R)]
    with name("tile.reduce.tree"):
        return fold_values(plan.combiner, level, "tree", in_order=True)


def fold_values(combiner, partials: list[list[ir.Value]], fold: str, in_order: bool = False) -> list[ir.Value]:
    """``partials`` combined in their order with ``combiner``: ``linear`` is
    op(op(op(x0, x1), x2), ...); ``tree`` is pairwise, level by level (element 2k with
    2k+1, an odd last element moving up unchanged). ``in_order``: each partial's
    coordinates follow the ones before it (``Combiner.combine_in_order``)."""
    combine = combiner.combine_in_order if in_order else combiner.combine
    if fold != "tree":
        acc = partials[0]
        for v in partials[1:]:
            acc = combine(acc, v)
        return acc
    while len(partials) > 1:
        pairs = [combine(a, b) for a, b in zip(partials[0::2], partials[1::2])]
        partials = pairs + partials[len(pairs) * 2 :]
    return partials[0]


def finish(plan: Plan, dsts, s, partial) -> None:
    """Apply accum (once, the old value left), let the combiner make a NaN canonical
    where its kind promises it (``Combiner.result``), and store the result of spatial
    index ``s`` into every slot of its dst register replica, in each dst.

    f32/f16/bf16 arithmetic on NVIDIA GPUs returns the canonical NaN; f64 arithmetic
    keeps an operand's payload, and an element that no combine touched (one element,
    no lanes, no accum) is a plain copy: a named kind makes those canonical here, once.
    """
    slot = plan.dst_slot(s)
    if plan.info.accum:  # the old value is read from the lowest slot of the replica
        partial = plan.combine([emit.load(dst, plan.dst_shape, slot) for dst in dsts], partial)
    for dst, v in zip(dsts, plan.combiner.result(plan, partial)):
        for copy in plan.dst_copies:
            emit.store(v, dst, plan.dst_shape, emit.add_slots(slot, copy))


# fold_one(plan, srcs, s) -> the folded partial of spatial index s (a Python int or an index value)
FoldOne = Callable[[Plan, list, object], list]


def fold_one_registers(plan: Plan, srcs, s) -> list[ir.Value]:
    """``fold_registers`` for one spatial index: the default ``FoldOne``."""
    (partial,) = fold_registers(plan, srcs, [s])
    return partial


def emit_thread_wise(plan: Plan, dsts, srcs, fold_one: FoldOne = fold_one_registers) -> None:
    """TIRx's thread-wise shape: a spatial loop (omitted when S == 1) whose body
    folds one dst slot's registers with ``fold_one``, then applies accum and stores."""
    if plan.S == 1:
        finish(plan, dsts, 0, fold_one(plan, srcs, 0))
        return
    with name("tile.reduce.spatial"):
        loop = emit.unrolled_for(0, plan.S)
        with ir.InsertionPoint(loop.body):
            s = loop.induction_variable
            finish(plan, dsts, s, fold_one(plan, srcs, s))
            scf.yield_([])


def lane_butterfly(combiner, partials: list[list[ir.Value]], bits,
                   member_mask: ir.Value | None = None, lowest_first: bool = False) -> list[list[ir.Value]]:
    """Combine each partial across the lanes that differ in ``bits``: for each bit b,
    highest first, the partial of the lane whose bit b is clear on the left and its
    partner's on the right (``v = op(v, shuffle xor v, 1 << b)`` in the lower lane,
    ``op(shuffle xor v, v)`` in the upper one), the partials' shuffles interleaved. So
    both lanes of a pair compute the same combine of the same values, and every lane of
    a group ends with identical bits, for any combiner. ``lowest_first``: the bits lowest
    first instead, which over 2^n lanes holding p0 .. p(2^n - 1) is the ``tree`` fold of
    them (``cross_warp.exchange_warps``). A commutative combiner (every
    named kind: NaN results are canonical, an f64 NaN is made canonical by ``finish`` in
    every lane alike; argmax/argmin) needs no select. The shuffles name every lane of
    the warp, or only those of ``member_mask`` (an i32 value; ``emit.shuffle_xor``)."""
    k, lane = combiner.k, None
    for b in sorted(bits, reverse=not lowest_first):
        with name(f"tile.reduce.butterfly.{1 << b}"):
            others = _chunks(emit.shuffle_xor_all([v for p in partials for v in p], 1 << b, member_mask), k)
            if combiner.commutative:
                partials = [combiner.combine(own, other) for own, other in zip(partials, others)]
                continue
            if lane is None:
                lane = gpu.lane_id()
            low = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(lane, emit.index(1 << b)), emit.index(0))
            out = []
            for own, other in zip(partials, others):
                left = [arith.select(low, a, o) for a, o in zip(own, other)]
                right = [arith.select(low, o, a) for a, o in zip(own, other)]
                out.append(combiner.combine(left, right))
            partials = out
    return partials


def emit_across_lanes(plan: Plan, dsts, srcs, across: Callable[[list], list]) -> None:
    """Fold every dst slot's own registers (interleaved), combine each slot's partial
    across the reduced lanes with ``across`` (partials in, partials out, in slot order),
    then apply accum once per slot and store."""
    slots = list(range(plan.S))
    partials = across(fold_registers(plan, srcs, slots))
    for s, partial in zip(slots, partials):
        finish(plan, dsts, s, partial)


def fold_of(info: ReduceInfo, ctx) -> str:
    """The op's fold order: its own ``fold`` attribute, else the pass option."""
    return info.fold or ctx.options.fold


def lower_with(op, ctx, rewriter, build: Callable[[Plan, list, list], None]) -> None:
    """Build ``build(plan, dsts, srcs)`` in place of ``op`` (at its location, with shared
    constants), then erase ``op``."""
    info = ctx.analysis.info
    plan = Plan(info, fold_of(info, ctx), known_block_size(op), combiners.of(op, info))
    operands = list(op.operands)
    dsts, srcs = operands[: len(info.dsts)], operands[len(info.dsts):]
    with rewriter.ip, op.location, emit.constant_cache():
        plan.combiner.prepare(plan)
        build(plan, dsts, srcs)
    rewriter.erase_op(op)
