"""The ``cross_warp`` variant of ``tile.reduce``: register tiles whose reduced dims span warps.

Accepts: both operands in registers (``#gpu.address_space<private>``), a valid op at
``warpgroup`` or ``cta`` scope whose reduced thread bits include warp bits (bits 5 and
up: ``wid_in_wg``, ``tid_in_wg`` bits 5-6, ``warpid``), and kept dims that move no
replica bit. docs/lowering-cross-warp.md has the generated IR and PTX.

Call the scope's thread index ``t`` and split its bits: ``Ll`` (reduced lane bits), ``Lw``
(reduced warp bits), ``R`` (src replica bits) and ``K`` (every other bit below the
scope's thread count, rounded up to a power of two). The algorithm, per dst slot ``s``:

1. fold the thread's own registers (``registers.fold_registers``, linear or tree);
2. the lane butterfly over ``Ll``, highest bit first (``registers.lane_butterfly``);
3. the *writers*, the threads with no ``Ll`` or ``R`` bit set (one per warp and kept
   element), store the warp's partial at ``scratch[phase][instance][k][w][s]``, with
   ``w = compress(t, Lw)`` and ``k = compress(t, K)``: all the op's operands at once
   (``combiner.Words``: the values, or their bits as 32-bit words when their types
   differ), so one scratch and one barrier serve every operand;
4. the barrier of the scope: ``gpu.barrier`` for a cta, a named barrier over the
   warpgroup's own 128 threads for a warpgroup;
5. every thread reads the ``2^|Lw|`` partials of its ``k`` and folds them in ascending
   ``w``, the accumulator left (``fold=tree``: pairwise, level by level, the lower ``w``
   left), so every replica holder computes the same bits, for any combiner. With
   ``fold=tree`` and no kept bit among the lane bits, the lanes share that work: lane l
   reads partial ``l mod 2^|Lw|`` and a lane butterfly over the low ``|Lw|`` lane bits,
   lowest first, builds the same tree (``_tree_across_lanes``): |Lw| combines a thread,
   not 2^|Lw| - 1;
6. ``accum`` once, and the store (``registers.finish``).

The scratch is the op's own (``threads.Site.scratch``): ``2^|K| * 2^|Lw| * S`` partials
per instance of the scope (8 warpgroup instances, or as many as ``known_block_size``
allows), a kept element's partials side by side (so one slot's partials load as one
vector when S is 1), doubled for an op that may run more than once. Then a phase counter alternates
the halves: a thread can only write a half again after the next barrier, which every
thread reaches only after reading that half. So one barrier per op is enough, and the
op never races on its scratch, in a loop or not.
"""

from __future__ import annotations

import numpy as np
from mlir.dialects import arith, gpu, memref, scf

from ..analysis import known_block_size
from ..analysis_exchange import kept_threads
from ..dispatch import predicate, register_dispatch
from ..ir import ir
from ..vocab import LANE_BITS, MAX_BLOCK_THREADS, WARP_SIZE, WARPGROUP_SIZE
from . import emit
from .local import match_storage_scope, reduce_info, validate_op
from .combiner import Words
from .registers import Plan, emit_across_lanes, fold_values, lane_butterfly, lower_with, name
from .threads import Site, barrier, compress, scope_thread

SCOPES = ("warpgroup", "cta")


def cross_warp_applies(op, ctx):
    """Warpgroup or cta scope, some reduced warp bits, kept dims clear of replica bits."""
    info = reduce_info(op, ctx)
    if info is None:
        return False, "the op is not valid (see valid)"
    problems = []
    if info.exec_scope not in SCOPES:
        problems.append(f"exec_scope {info.exec_scope}: the variant exchanges warps at warpgroup or cta scope")
    if not info.reduced_warp_bits:
        problems.append("no reduced warp bits: the reduction stays inside warps (see local)")
    problems += kept_replica_problems(info)
    return not problems, "; ".join(problems)


def kept_replica_problems(info) -> list[str]:
    """Why some kept coordinate would have no writer: its kept thread iters add up to a
    thread with a src replica bit set (possible only with kept thread iters of a
    non-power-of-two extent or stride, alone or summed), and the writers are the threads
    with no such bit. No exchange lowers that."""
    replica_mask = sum(1 << b for b in info.src_replica_bits)
    kept = kept_threads(info.src_layout, info.axes)
    hit = kept[(kept & replica_mask) != 0] if kept is not None and replica_mask else ()
    if not len(hit):
        return []
    t = int(hit.min())
    bits = ", ".join(str(b) for b in info.src_replica_bits if t >> b & 1)
    return [f"the kept dims' thread iters reach thread {t}, which has src replica bit(s) {{{bits}}} set"]


def register_exchange(variant: str, applies, emit, priority: int = 10):
    """Register a variant that exchanges partials through scratch of its own (so lowered
    in place, op by op: not copyable), with ``local``'s two checks and ``applies``;
    ``emit(plan, dst, src, site, block)`` builds the lowering."""

    def lower(op, ctx, rewriter):
        site = Site.of(op)
        block = known_block_size(op)
        lower_with(op, ctx, rewriter, lambda plan, dsts, srcs: emit(plan, dsts, srcs, site, block))

    when = [
        predicate("storage_scope", match_storage_scope, expected_scope=["local"]),
        predicate("valid", validate_op),
        predicate(applies.__name__, applies),
    ]
    return register_dispatch("tile.reduce", "cuda", variant=variant, priority=priority, when=when, copyable=False)(lower)


def _instances(scope: str, block: tuple[int, ...] | None) -> int:
    """How many instances of the scope a block holds: 1 cta; up to 8 warpgroups."""
    if scope == "cta":
        return 1
    threads = int(np.prod(block)) if block else MAX_BLOCK_THREADS
    return max(1, -(-threads // WARPGROUP_SIZE))


def _emit(plan: Plan, dsts, srcs, site: Site, block) -> None:
    info = plan.info
    threads = WARPGROUP_SIZE if info.exec_scope == "warpgroup" else WARP_SIZE * (info.src_layout.reach("warpid") + 1)
    phases = 2 if site.repeats else 1

    def across(partials: list[list[ir.Value]]) -> list[list[ir.Value]]:
        partials = lane_butterfly(plan.combiner, partials, info.reduced_lane_bits)
        with name("tile.reduce.exchange"):
            return exchange_warps(plan, partials, site, lambda: scope_thread(info.exec_scope, block),
                                  _instances(info.exec_scope, block), threads, info.src_replica_bits, phases,
                                  f"cross_warp {info.exec_scope} reduce")

    emit_across_lanes(plan, dsts, srcs, across)


def exchange_warps(plan: Plan, partials, site: Site, thread, instances: int, threads: int, replica_bits,
                   phases: int, title: str) -> list[list[ir.Value]]:
    """Steps 3-5 of the module docstring, for the partials (one per dst slot) that the lane
    butterfly left in every thread: the writers store their warp's partials into the op's
    scratch, the scope's barrier, and every thread folds the partials of its ``k`` in
    ascending warp order. ``thread()`` builds (t, instance): the thread's index in its
    instance of the scope (of ``threads`` threads) and the instance's in the block;
    ``replica_bits``: the src replica bits among t's. The ``cluster`` variant runs it
    inside each CTA, with the CTA's barrier. Returns the folded values."""
    info = plan.info
    lane_bits, warp_bits = info.reduced_lane_bits, info.reduced_warp_bits
    nbits = (threads - 1).bit_length()
    k_bits = [b for b in range(nbits) if b not in (*lane_bits, *warp_bits, *replica_bits)]
    words = Words(plan.combiner.types)
    W, K, S, n = 1 << len(warp_bits), 1 << len(k_bits), plan.S, words.size
    per_instance = W * K * S * n
    what = (f"{title}: {phases} phase(s) x {instances} instance(s) x {K} x {W} warp partial(s) x {S} slot(s) "
            f"of {words.describe()}")
    scratch = site.scratch(words.elem, phases * instances * per_instance, what)
    t, instance = thread()
    base = emit.add_slots(_times(instance, per_instance), _times(site.phase(), instances * per_instance) if phases > 1 else 0)
    row = emit.add_slots(base, _times(compress(t, k_bits), W * S * n))  # [k][w][s][words]
    mine = emit.add_slots(row, _times(compress(t, warp_bits), S * n))
    packed = [w for p in partials for w in words.pack(p)]
    store_partials(packed, scratch, mine, writer_of(t, (*lane_bits, *replica_bits)))
    barrier("cta" if info.exec_scope == "cluster" else info.exec_scope, instance)
    if plan.fold == "tree" and W > 1 and not any(b < LANE_BITS for b in k_bits):
        return _tree_across_lanes(plan, scratch, row, W, S, words)
    out = []
    for s in range(S):
        read = [words.unpack([memref.load(scratch, [at_slot(row, (w * S + s) * n + j)]) for j in range(n)])
                for w in range(W)]
        out.append(fold_values(plan.combiner, read, plan.fold))
    return out


def _tree_across_lanes(plan: Plan, scratch, row, W: int, S: int, words: Words) -> list[list[ir.Value]]:
    """The ``tree`` fold of the W warp partials of each slot, by the lanes together: lane
    l reads partial l mod W, then a lane butterfly over the low log2(W) lane bits, lowest
    first, combines p(2i) with p(2i+1), then those pairs, and so on: the tree, level by
    level, with the lower warps left, so the same bits as folding the W partials in every
    thread, with log2(W) combines a thread instead of W - 1 (what counts when a combine
    costs, as the online-softmax pair's two exponentials). Every lane of the warp, whose k
    is one (no kept bit among the lane bits), ends with the fold."""
    n = words.size
    lane = arith.andi(gpu.lane_id(), emit.index(W - 1))
    at = emit.add_slots(row, arith.muli(lane, emit.index(S * n)))
    read = [words.unpack([memref.load(scratch, [at_slot(at, s * n + j)]) for j in range(n)]) for s in range(S)]
    return lane_butterfly(plan.combiner, read, range(W.bit_length() - 1), lowest_first=True)


def writer_of(t, bits) -> ir.Value | None:
    """Whether thread ``t`` writes: none of ``bits`` set (None: every thread writes)."""
    mask = sum(1 << b for b in bits)
    if not mask:
        return None
    return arith.cmpi(arith.CmpIPredicate.eq, arith.andi(t, emit.index(mask)), emit.index(0))


def store_partials(values, scratch, at, writer) -> None:
    """``scratch[at + s] = values[s]``, in the writer threads only (all, without a mask)."""
    if writer is None:
        for s, v in enumerate(values):
            memref.store(v, scratch, [at_slot(at, s)])
        return
    branch = scf.IfOp(writer)
    with ir.InsertionPoint(branch.then_block):
        for s, v in enumerate(values):
            memref.store(v, scratch, [at_slot(at, s)])
        scf.yield_([])


def _times(v, n: int):
    """``v * n`` for an int or an index value."""
    if isinstance(v, int):
        return v * n
    return v if n == 1 else arith.muli(v, emit.index(n))


def at_slot(base, offset: int) -> ir.Value:
    v = emit.add_slots(base, offset)
    return emit.index(v) if isinstance(v, int) else v


lower_cross_warp = register_exchange("cross_warp", cross_warp_applies, _emit)
