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
   ``w = compress(t, Lw)`` and ``k = compress(t, K)``;
4. the barrier of the scope: ``gpu.barrier`` for a cta, a named barrier over the
   warpgroup's own 128 threads for a warpgroup;
5. every thread reads the ``2^|Lw|`` partials of its ``k`` and folds them in ascending
   ``w`` (``fold=tree``: pairwise, level by level), so every replica holder computes the
   same bits;
6. ``accum`` once, and the store (``registers.finish``).

The scratch is the op's own (``threads.Site.scratch``): ``2^|K| * 2^|Lw| * S`` elements
per instance of the scope (8 warpgroup instances, or as many as ``known_block_size``
allows), a kept element's partials side by side (so one slot's partials load as one
vector when S is 1), doubled for an op that may run more than once. Then a phase counter alternates
the halves: a thread can only write a half again after the next barrier, which every
thread reaches only after reading that half. So one barrier per op is enough, and the
op never races on its scratch, in a loop or not.
"""

from __future__ import annotations

import numpy as np
from mlir.dialects import arith, memref, scf

from ..analysis import known_block_size
from ..dispatch import predicate, register_dispatch
from ..ir import ir
from ..vocab import WARP_SIZE, WARPGROUP_SIZE
from . import emit
from .local import match_storage_scope, reduce_info, validate_op
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
    replica_mask = sum(1 << b for b in info.src_replica_bits)
    for d in info.spatial_dims:
        if int(np.bitwise_or.reduce(info.src_layout.thread_offsets(d), initial=0)) & replica_mask:
            problems.append(f"kept dim {d} moves a src replica bit")
    return not problems, "; ".join(problems)


@register_dispatch(
    "tile.reduce",
    "cuda",
    variant="cross_warp",
    priority=10,
    when=[
        predicate("storage_scope", match_storage_scope, expected_scope=["local"]),
        predicate("valid", validate_op),
        predicate("cross_warp_applies", cross_warp_applies),
    ],
    copyable=False,
)
def lower_cross_warp(op, ctx, rewriter):
    site = Site.of(op)
    block = known_block_size(op)
    lower_with(op, ctx, rewriter, lambda plan, dst, src: _emit(plan, dst, src, site, block))


def _instances(scope: str, block: tuple[int, ...] | None) -> int:
    """How many instances of the scope a block holds: 1 cta; up to 8 warpgroups."""
    if scope == "cta":
        return 1
    threads = int(np.prod(block)) if block else 1024
    return max(1, -(-threads // WARPGROUP_SIZE))


def _emit(plan: Plan, dst, src, site: Site, block) -> None:
    info = plan.info
    lane_bits, warp_bits = info.reduced_lane_bits, info.reduced_warp_bits
    threads = WARPGROUP_SIZE if info.exec_scope == "warpgroup" else WARP_SIZE * (info.src_layout.reach("warpid") + 1)
    nbits = (threads - 1).bit_length()
    k_bits = [b for b in range(nbits) if b not in (*lane_bits, *warp_bits, *info.src_replica_bits)]
    W, K, S = 1 << len(warp_bits), 1 << len(k_bits), plan.S
    per_instance = W * K * S
    instances = _instances(info.exec_scope, block)
    phases = 2 if site.repeats else 1

    def across(values: list[ir.Value]) -> list[ir.Value]:
        values = lane_butterfly(info.kind, values, lane_bits)
        elem = values[0].type
        with name("tile.reduce.exchange"):
            what = (f"cross_warp {info.exec_scope} reduce: {phases} phase(s) x {instances} instance(s) x "
                    f"{K} x {W} warp partial(s) x {S} slot(s) of {elem}")
            scratch = site.scratch(elem, phases * instances * per_instance, what)
            t, instance = scope_thread(info.exec_scope, block)
            base = emit.add_slots(_times(instance, per_instance), _times(site.phase(), instances * per_instance) if phases > 1 else 0)
            row = emit.add_slots(base, _times(compress(t, k_bits), W * S))  # [k][w][s]
            mine = emit.add_slots(row, _times(compress(t, warp_bits), S))
            writer_mask = sum(1 << b for b in (*lane_bits, *info.src_replica_bits))
            writer = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(t, emit.index(writer_mask)), emit.index(0)) if writer_mask else None
            _store_partials(values, scratch, mine, writer)
            barrier(info.exec_scope, instance)
            out = []
            for s in range(S):
                partials = [memref.load(scratch, [_at(row, w * S + s)]) for w in range(W)]
                out.append(fold_values(info.kind, partials, plan.fold))
        return out

    emit_across_lanes(plan, dst, src, across)


def _store_partials(values, scratch, at, writer) -> None:
    """``scratch[at + s] = values[s]``, in the writer threads only (all, without a mask)."""
    if writer is None:
        for s, v in enumerate(values):
            memref.store(v, scratch, [_at(at, s)])
        return
    branch = scf.IfOp(writer)
    with ir.InsertionPoint(branch.then_block):
        for s, v in enumerate(values):
            memref.store(v, scratch, [_at(at, s)])
        scf.yield_([])


def _times(v, n: int):
    """``v * n`` for an int or an index value."""
    if isinstance(v, int):
        return v * n
    return v if n == 1 else arith.muli(v, emit.index(n))


def _at(base, offset: int) -> ir.Value:
    v = emit.add_slots(base, offset)
    return emit.index(v) if isinstance(v, int) else v
