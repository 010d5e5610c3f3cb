"""The ``cluster_push`` variant of ``tile.reduce``: across the CTAs of a thread-block
cluster, each CTA pushes its partials into the shared memory of the others and signals
their mbarrier; no cluster barrier per run.

Accepts what ``cluster`` accepts, where the op reduces some CTA bits, inside a kernel
(its mbarriers are set up once, at the kernel's entry). It takes precedence over
``cluster`` (priority 20), which stays for device functions and for ``dispatch =
"cluster"``. docs/lowering-cluster.md describes both protocols.

Per dst slot, steps 1 and 2 are ``cluster``'s (the in-thread fold, the lane butterfly,
the warps of each CTA through its scratch and ``gpu.barrier``). Then, with ``G`` the CTAs
of a reduction group (those that differ in the reduced CTA bits ``Lc`` only) and ``K``
the kept elements of a CTA:

3. **push**: for each kept element, the CTA's partial (all the op's operands, as
   ``combiner.Words``) is stored into slot ``[q][m][k]`` of the *receive buffer* of every
   CTA of the group, itself included (``nvvm.mapa`` + ``llvm.store``: PTX
   ``st.shared::cluster``), ``m`` the pushing CTA's place in its group; then an arrive
   on that CTA's mbarrier ``q`` (``nvvm.mbarrier.arrive``, release at cluster scope: the
   stores before it are visible to whoever sees the phase complete). Where at least
   ``log2 G`` lane bits are reduced or replica bits (lanes that hold the same partial), the
   lanes share the pushes, one target each; otherwise one thread per kept element pushes
   to all ``G``;
4. **wait**: every thread waits until its CTA's mbarrier ``q`` completes the run's phase
   (``nvvm.mbarrier.try_wait`` on the phase's parity, acquire at cluster scope, in an
   ``scf.while``): ``G x K`` arrivals, one per pushing thread of the group;
5. **fold**: every thread folds the ``G`` partials of its kept element in ascending
   order of ``m`` (the order of the ``Lc`` bits), as ``cluster`` does: the same bits.

**The mbarriers** (``i64`` scratch, one per phase) are initialized at the kernel's
entry by thread 0 of each CTA with the count ``G x K`` (``nvvm.mbarrier.init`` with a
predicate: a branch there would move the kernel's register tiles out of the entry
block, where LLVM no longer keeps them in registers), fenced
(``nvvm.fence.mbarrier.init``, release at cluster scope), and the cluster meets once
(``nvvm.cluster.arrive.relaxed`` + ``nvvm.cluster.wait``, marked ``tile.mbarrier_init``
and shared by every op of the kernel) before any CTA pushes.

**An op that runs again** has two phases of receive buffer and mbarrier, ``q = r mod 2``
of run ``r``, waited on with parity ``(r / 2) mod 2`` (a counter at the function's
entry, ``Site.runs(4)``), and two phases of warp scratch. A push of run ``r + 2`` into
phase ``q`` comes after every read of run ``r`` there: the pushing CTA has completed run
``r + 1``, which took the receiving CTA's push of run ``r + 1``, made after a
``gpu.barrier`` that each of its threads reached after its reads of run ``r`` (the warp
exchange's barrier, or one of its own where the op reduces no warp bits). A CTA may exit
once its last wait completes: every push into its memory has landed by then.
"""

from __future__ import annotations

from mlir.dialects import arith, gpu, llvm, memref, nvvm, scf

from ..ir import ir
from ..vocab import CTA_BITS_BASE, LANE_BITS
from . import emit
from .cluster import SHARED_CLUSTER, _pointer, _ranks, _shared_pointer, cluster_applies, emit_in_ctas
from .combiner import Words
from .cross_warp import _times, at_slot, register_exchange, writer_of
from .local import reduce_info
from .registers import Plan, fold_values, name
from .threads import Site, compress, linear_thread_id

PRIORITY = 20  # before cluster's 10
MBARRIER_BYTES = 8
INIT_MARK = "tile.mbarrier_init"  # the entry's cluster barrier after the mbarriers' init


def push_applies(op, ctx):
    """``cluster``'s conditions, then some reduced CTA bits and a kernel to set up in."""
    ok, why = cluster_applies(op, ctx)
    if not ok:
        return False, why
    problems = []
    if not reduce_info(op, ctx).reduced_cta_bits:
        problems.append("no reduced CTA bits: no partial crosses CTAs (see cluster)")
    if "gpu.kernel" not in Site.of(op).function.attributes:
        problems.append("the op is not in a kernel: its mbarriers are set up at a kernel's entry (see cluster)")
    return not problems, "; ".join(problems)


def _emit(plan: Plan, dsts, srcs, site: Site, block) -> None:
    phases = 2 if site.repeats else 1

    def ctas(partials, threads: int, replica) -> list[list[ir.Value]]:
        if site.repeats and not plan.info.reduced_warp_bits:
            gpu.barrier()  # the CTA's reads of the previous run are done before it pushes again
        with name("tile.reduce.cluster"):
            return _push_and_fold(plan, partials, site, block, threads, replica, phases)

    emit_in_ctas(plan, dsts, srcs, site, block, phases, ctas)


def _push_and_fold(plan: Plan, partials, site: Site, block, threads: int, replica, phases: int):
    """Steps 3-5 of the module docstring; returns the folded partials, one per dst slot."""
    info = plan.info
    in_cta = (*info.reduced_lane_bits, *info.reduced_warp_bits, *replica)
    lanes = sorted(b for b in in_cta if b < LANE_BITS)  # lanes that hold the same partial
    k_bits = [b for b in range((threads - 1).bit_length()) if b not in in_cta]
    cta_bits = [b - CTA_BITS_BASE for b in info.reduced_cta_bits]
    words = Words(plan.combiner.types)
    K, S, n, elem, G = 1 << len(k_bits), plan.S, words.size, words.elem, 1 << len(cta_bits)
    part = K * S * n  # the partials one CTA pushes to each CTA of its group
    recv = site.scratch(elem, phases * G * part, f"cluster push, the partials received: {phases} phase(s) x {G} CTA(s)"
                                                 f" x {K} x {S} slot(s) of {words.describe()}")
    i64 = ir.IntegerType.get_signless(64)
    bars = site.scratch(i64, phases, f"cluster push, {phases} mbarrier(s), one per phase")
    _init_at_entry(site, block, bars, phases, G * K)

    if phases == 1:
        q, parity = 0, emit.i32(0)
    else:
        run = site.runs(4)
        q = arith.index_cast(ir.IndexType.get(), arith.andi(run, emit.i32(1)))
        parity = arith.shrui(run, emit.i32(1))
    i32 = ir.IntegerType.get_signless(32)
    t = linear_thread_id(block)
    k = compress(t, k_bits)
    rank = arith.index_cast(ir.IndexType.get(), nvvm.read_ptx_sreg_cluster_ctarank(i32))
    member = compress(rank, cta_bits)
    recv_base = memref.extract_aligned_pointer_as_index(recv)
    bar = _shared_pointer(memref.extract_aligned_pointer_as_index(bars), q, MBARRIER_BYTES)
    mine = emit.add_slots(_times(emit.add_slots(_times(q, G), member), K), k)  # [q][member][k]
    at = _times(mine, S * n)
    packed = [w for p in partials for w in words.pack(p)]
    nbytes = emit.bit_width(elem) // 8
    local = [_shared_pointer(recv_base, emit.add_slots(at, i), nbytes) for i in range(S * n)]

    def push(target) -> None:
        for word, p in zip(packed, local):
            llvm.store(word, nvvm.mapa(_pointer(SHARED_CLUSTER), p, target))
        nvvm.mbarrier_arrive(None, nvvm.mapa(_pointer(SHARED_CLUSTER), bar, target), scope=_CLUSTER())

    if len(lanes) >= len(cta_bits):  # lane j of the group's pushers pushes to CTA j
        spread = lanes[: len(cta_bits)]
        pusher = writer_of(t, [b for b in in_cta if b not in spread])
        with _when(pusher):
            push(_deposit(rank, compress(t, spread), cta_bits, info.cluster_ctas))
    else:
        with _when(writer_of(t, in_cta)):
            for target in _ranks(cta_bits, info.cluster_ctas):
                push(target)

    _wait(bar, parity)
    out = []
    for s in range(S):
        read = []
        for m in range(G):
            slot = _times(emit.add_slots(_times(emit.add_slots(_times(q, G), m), K), k), S * n)
            read.append(words.unpack([memref.load(recv, [at_slot(slot, s * n + j)])
                                      for j in range(n)]))
        out.append(fold_values(plan.combiner, read, plan.fold))
    return out


def _init_at_entry(site: Site, block, bars: ir.Value, phases: int, count: int) -> None:
    """At the kernel's entry: thread 0 of each CTA initializes the op's mbarriers with
    ``count`` arrivals and fences the init; then, once per kernel, the cluster meets
    (module docstring)."""
    entry = site.function.regions[0].blocks[0]
    marked = any(op.operation.name == "nvvm.cluster.wait" and INIT_MARK in op.operation.attributes
                 for op in entry.operations)
    symbol = ir.FlatSymbolRefAttr(bars.owner.attributes["name"]).value
    with ir.InsertionPoint.at_block_begin(entry), emit.constant_cache():
        memory = memref.get_global(bars.type, symbol)
        first = arith.cmpi(arith.CmpIPredicate.eq, linear_thread_id(block), emit.index(0))
        base = memref.extract_aligned_pointer_as_index(memory)
        for q in range(phases):  # predicated, not branched: LLVM keeps registers only of the entry block's allocas
            nvvm.mbarrier_init(_shared_pointer(base, q, MBARRIER_BYTES), emit.i32(count), predicate=first)
        nvvm.fence_mbarrier_init()
        if not marked:
            nvvm.cluster_arrive_relaxed()
            wait = nvvm.ClusterWaitOp()
            wait.operation.attributes[INIT_MARK] = ir.UnitAttr.get()


def _wait(bar: ir.Value, parity: ir.Value) -> None:
    """Until the mbarrier at ``bar`` completes the phase of ``parity``: ``try_wait`` in a
    loop (each try may time out)."""
    loop = scf.WhileOp([], [])
    before = loop.before.blocks.append()
    with ir.InsertionPoint(before):
        done = nvvm.mbarrier_try_wait(ir.IntegerType.get_signless(1), bar, parity, scope=_CLUSTER())
        scf.condition(arith.xori(done, emit.constant(ir.IntegerType.get_signless(1), 1)), [])
    with ir.InsertionPoint(loop.after.blocks.append()):
        scf.yield_([])


def _deposit(rank: ir.Value, j, bits: list[int], ctas: int) -> ir.Value:
    """The i32 rank of the group's CTA ``j``: ``rank`` with ``bits`` replaced by ``j``'s
    bits 0, 1, ... (the inverse of ``compress``; ``j`` has no other bits). Where the
    bits are all of the cluster's (``ctas``), that is ``j``'s bits alone."""
    mask, at = sum(1 << b for b in bits), 0
    out = None if mask == ctas - 1 else arith.andi(rank, emit.index(~mask))
    while at < len(bits):  # runs of consecutive bits, each moved at once
        n = 1
        while at + n < len(bits) and bits[at + n] == bits[at] + n:
            n += 1
        part = arith.shrui(j, emit.index(at)) if at else j
        if at + n < len(bits):
            part = arith.andi(part, emit.index((1 << n) - 1))
        part = arith.shli(part, emit.index(bits[at])) if bits[at] else part
        out = part if out is None else arith.ori(out, part)
        at += n
    return arith.index_cast(ir.IntegerType.get_signless(32), out)


class _when:
    """``with _when(condition):`` builds inside ``scf.if condition`` (no branch for None)."""

    def __init__(self, condition):
        self.condition = condition

    def __enter__(self):
        if self.condition is None:
            return
        self.branch = scf.IfOp(self.condition)
        self.ip = ir.InsertionPoint(self.branch.then_block)
        self.ip.__enter__()

    def __exit__(self, *exc):
        if self.condition is None:
            return False
        if exc[0] is None:
            scf.yield_([])
        self.ip.__exit__(*exc)
        return False


def _CLUSTER() -> ir.Attribute:
    return ir.Attribute.parse("#nvvm.mem_scope<cluster>")


lower_cluster_push = register_exchange("cluster_push", push_applies, _emit, priority=PRIORITY)
