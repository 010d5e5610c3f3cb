"""The ``cluster`` variant of ``tile.reduce``: register tiles reduced across the CTAs of
a thread-block cluster (sm_90+), through distributed shared memory.

Accepts: both operands in registers (``#gpu.address_space<private>``), a valid op at
``cluster`` scope (every one: the other register variants leave this scope to it), kept
dims that move no src replica bit, and a chip of sm_90 or newer.
docs/lowering-cluster.md has the generated IR and PTX.

The thread index of the scope is ``t = linear id + 1024 * cta`` (``cta``: the CTA's rank
in its cluster, ``%cluster_ctarank``). Its bits split into ``Ll`` (reduced lane bits),
``Lw`` (reduced warp bits, 5-9), ``Lc`` (reduced CTA bits, 10-13), ``R`` (src replica
bits) and the kept bits. Per dst slot ``s``:

1. the in-thread fold and the lane butterfly over ``Ll`` (``registers``), as ``local``;
2. with ``Lw``: ``cross_warp``'s exchange inside each CTA (``exchange_warps``): the
   warps' partials through the CTA's own scratch, the CTA's barrier (``gpu.barrier``),
   folded in ascending warp order. Every thread of the CTA now holds its CTA's partial;
3. with ``Lc``, the exchange between CTAs:

   a. the writers (no ``Ll``, ``Lw`` or in-CTA ``R`` bit set: one per kept element and
      CTA) store the CTA's partial into its own *cluster scratch*, at ``[k][s]`` (all the
      op's operands: ``combiner.Words``);
   b. a cluster barrier (``nvvm.cluster.arrive`` + ``nvvm.cluster.wait``: PTX
      ``barrier.cluster.arrive`` with release and ``barrier.cluster.wait`` with acquire
      semantics), so that every CTA's partials are written and visible;
   c. every thread reads the partials of its ``k`` from the CTAs that differ from its own
      in the ``Lc`` bits only, in ascending order of those bits: the address of
      ``[k][s]`` in its own shared memory (``memref.extract_aligned_pointer_as_index`` and
      ``llvm.inttoptr`` to ``!llvm.ptr<3>``), mapped to the other CTA's copy by
      ``nvvm.mapa`` (``!llvm.ptr<7>``, PTX ``mapa.shared::cluster``) and loaded with
      ``llvm.load`` (``ld.shared::cluster``); then folds them in that order, so every
      replica holder computes the same bits from the same values;
   d. a second cluster barrier: no CTA goes on (exits, or runs the op again and
      rewrites its scratch) while another may still read its shared memory;

4. ``accum`` once, and the store (``registers.finish``).

No second kernel and no atomics. The scratch is static: the CTA-level exchange holds
``K x W x S`` partials, the cluster scratch ``K x S`` (``K``: the kept elements of a CTA).
With reduced CTA bits, one phase of each is enough even for an op that runs again: a
run's writes come after the previous run's second cluster barrier, which every thread of
the cluster reaches only after all its reads of both scratches. Without them (a cluster
of one CTA, or CTAs that hold different elements) there is no cluster barrier, so an op
that may run again gets two phases of warp scratch and a phase counter, as ``cross_warp``.
"""

from __future__ import annotations

from mlir.dialects import arith, llvm, memref, nvvm

from ..ir import ir
from ..vocab import CTA_BITS_BASE, WARP_SIZE
from . import emit
from .combiner import Words
from .cross_warp import (
    exchange_warps,
    kept_replica_problems,
    register_exchange,
    store_partials,
    writer_of,
)
from .local import chip_problem, reduce_info
from .registers import Plan, emit_across_lanes, fold_values, lane_butterfly, name
from .threads import Site, compress, linear_thread_id

MIN_SM = 90  # thread-block clusters and distributed shared memory: sm_90 and newer

# NVPTX's address spaces: a CTA's own shared memory, and the cluster's (mapa's result).
SHARED_CTA, SHARED_CLUSTER = 3, 7


def cluster_applies(op, ctx):
    """Cluster scope, sm_90 or newer, and kept dims clear of replica bits where partials
    cross warps or CTAs (an exchange's writers are the threads with no replica bit set;
    the lane butterfly alone, as at warp scope, needs no such rule)."""
    info = reduce_info(op, ctx)
    if info is None:
        return False, "the op is not valid (see valid)"
    scope = [] if info.exec_scope == "cluster" else [f"exec_scope {info.exec_scope}: the variant reduces at cluster scope"]
    chip = chip_problem(ctx, MIN_SM)
    exchanges = info.reduced_warp_bits or info.reduced_cta_bits
    problems = (scope + (kept_replica_problems(info) if exchanges else [])
                + ([f"{chip}: thread-block clusters need sm_90 or newer"] if chip else []))
    return not problems, "; ".join(problems)


def _emit(plan: Plan, dsts, srcs, site: Site, block) -> None:
    info = plan.info

    def ctas(partials, threads: int, replica) -> list[list[ir.Value]]:
        if not info.reduced_cta_bits:
            return partials
        with name("tile.reduce.cluster"):
            return _exchange_ctas(plan, partials, site, block, threads, replica)

    # The CTA exchange's second cluster barrier keeps a rerun off the warp scratch until
    # every read of it is done; without CTA bits there is no such barrier, so an op that
    # may run again alternates two phases of warp scratch, as cross_warp does.
    emit_in_ctas(plan, dsts, srcs, site, block, 2 if site.repeats and not info.reduced_cta_bits else 1, ctas)


def emit_in_ctas(plan: Plan, dsts, srcs, site: Site, block, phases: int, ctas) -> None:
    """What both cluster variants do in each CTA (steps 1 and 2 of the module docstring:
    the fold, the lane butterfly, the warps' exchange with ``phases`` of warp scratch),
    then ``ctas(partials, threads, replica)``, the exchange between CTAs (``threads``: the
    block's; ``replica``: the src replica bits inside a CTA); accum and the store."""
    info = plan.info
    threads = WARP_SIZE * (info.src_layout.reach("warpid") + 1)  # the block's (tile-verify checks it)
    replica = tuple(b for b in info.src_replica_bits if b < CTA_BITS_BASE)  # the in-CTA ones

    def across(partials: list[list[ir.Value]]) -> list[list[ir.Value]]:
        partials = lane_butterfly(plan.combiner, partials, info.reduced_lane_bits)
        if info.reduced_warp_bits:
            with name("tile.reduce.exchange"):
                partials = exchange_warps(plan, partials, site, lambda: (linear_thread_id(block), 0), 1, threads,
                                          replica, phases, "cluster reduce, the warps of each CTA")
        return ctas(partials, threads, replica)

    emit_across_lanes(plan, dsts, srcs, across)


def _exchange_ctas(plan: Plan, partials, site: Site, block, threads: int, replica) -> list[list[ir.Value]]:
    """Step 3 of the module docstring: the CTA partials (one per dst slot, in every
    thread; all the op's operands, as ``combiner.Words``) exchanged through distributed
    shared memory; returns the folded partials."""
    info = plan.info
    in_cta = (*info.reduced_lane_bits, *info.reduced_warp_bits, *replica)
    k_bits = [b for b in range((threads - 1).bit_length()) if b not in in_cta]
    words = Words(plan.combiner.types)
    K, S, n, elem = 1 << len(k_bits), plan.S, words.size, words.elem
    scratch = site.scratch(elem, K * S * n, f"cluster reduce, the CTA partials: {K} x {S} slot(s) of {words.describe()}")
    t = linear_thread_id(block)
    row = compress(t, k_bits)
    row = row * S * n if isinstance(row, int) else (row if S * n == 1 else arith.muli(row, emit.index(S * n)))
    store_partials([w for p in partials for w in words.pack(p)], scratch, row, writer_of(t, in_cta))
    cluster_barrier()  # every CTA's partials are written, and visible to the cluster
    ranks = _ranks([b - CTA_BITS_BASE for b in info.reduced_cta_bits], info.cluster_ctas)
    base = memref.extract_aligned_pointer_as_index(scratch)
    nbytes = emit.bit_width(elem) // 8
    out = []
    for s in range(S):
        local = [_shared_pointer(base, emit.add_slots(row, s * n + j), nbytes) for j in range(n)]
        read = [words.unpack([llvm.load(elem, nvvm.mapa(_pointer(SHARED_CLUSTER), p, rank)) for p in local])
                for rank in ranks]
        out.append(fold_values(plan.combiner, read, plan.fold))
    cluster_barrier()  # no CTA goes on while another may still read its scratch
    return out


def cluster_barrier() -> None:
    """All threads of the cluster meet: ``barrier.cluster.arrive`` (release) then
    ``barrier.cluster.wait`` (acquire)."""
    nvvm.cluster_arrive()
    nvvm.cluster_wait()


def _ranks(bits: list[int], ctas: int) -> list[ir.Value]:
    """The ranks (i32) of the CTAs whose partials this CTA folds, in ascending order of
    the reduced CTA ``bits`` (of the rank): this CTA's rank with those bits replaced by
    0, 1, 2, ... spread over them."""
    rank_mask = sum(1 << b for b in bits)
    if rank_mask == ctas - 1:  # every CTA of the cluster: the ranks are constants
        others = 0
    else:
        rank = nvvm.read_ptx_sreg_cluster_ctarank(ir.IntegerType.get_signless(32))
        others = arith.andi(rank, emit.i32(~rank_mask))
    out = []
    for j in range(1 << len(bits)):
        spread = sum(1 << b for k, b in enumerate(bits) if j >> k & 1)
        if isinstance(others, int):
            out.append(emit.i32(spread))
        else:
            out.append(arith.ori(others, emit.i32(spread)) if spread else others)
    return out


def _pointer(space: int) -> ir.Type:
    return ir.Type.parse(f"!llvm.ptr<{space}>")


def _shared_pointer(base: ir.Value, slot, nbytes: int) -> ir.Value:
    """``!llvm.ptr<3>`` to element ``slot`` of the scratch whose address is ``base``."""
    offset = slot * nbytes if isinstance(slot, int) else arith.muli(slot, emit.index(nbytes))
    address = emit.add_slots(base, offset)
    i64 = ir.IntegerType.get_signless(64)
    return llvm.inttoptr(_pointer(SHARED_CTA), arith.index_cast(i64, address))


lower_cluster = register_exchange("cluster", cluster_applies, _emit)
