"""Random ``tile.reduce`` configurations, and the GPU-vs-interpreter bitwise comparison.

``random_case(rng)`` draws one valid configuration from a ``random.Random``:

* the exec scope, thread, warp, warpgroup, cta or cluster; a kind; a dtype; accum or
  not; for a cta, its warps (``WARPS``: mostly 2-8, sometimes 1, 16 or 32); for a
  cluster, its CTAs and their warps (``CLUSTERS``), and whether the kernel declares
  its cluster size (``known_cluster_size``) or the launch gives it;
* a src layout of rank 1-3: every thread bit of the scope (lane bits 0-4 at warp
  scope, thread bits 0-6 at warpgroup scope, lane bits and one bit per doubling of the
  warps at cta scope, and one more bit from bit 10 up per doubling of the CTAs at
  cluster scope) goes to a random dim, reduced or kept, to the src replica, or
  stays unused (not a CTA bit: the layouts span the whole cluster); the bits of a dim or of the replica become iters of runs of
  consecutive bits, split at random: ``laneid`` below bit 5, ``wid_in_wg`` (warpgroup)
  or ``warpid`` (cta, cluster) from bit 5 up, ``cta_in_cluster`` from bit 10 up, or at
  warpgroup scope ``tid_in_wg`` (which may cross bit 5). So reduced dims carry warp bits (the ``cross_warp`` variant), and
  replicas sometimes do too. Sometimes a kept dim gets a lane iter of 3, 5, 6 or 7
  lanes on free bits; every dim gets 0-2 register iters of extent 1-4 (fewer registers
  in blocks of 16 or 32 warps: ``FEWER_REGISTERS``), the iters of a dim in random order,
  and the register strides are row-major over a random permutation of the register
  iters (sometimes with a gap, so span > size); sometimes a register replica on slots
  past the span;
* the reduced axes, a random non-empty set, each written positive or negative,
  sometimes twice;
* the dst layout the rules ask for: the kept dims with the same thread iters and
  register extents (its own compact random strides), each reduced dim dropped or kept
  with extent 1 on its own, replicated over the src replica bits and every reduced
  thread bit (lane and warp bits), sometimes with a register replica;
* at thread scope, half the cases have no layouts at all (multi-dim memrefs).

A draw whose reduction across warps would need more workgroup scratch than a block
has statically (``SCRATCH_LIMIT``; the cross_warp lowering's sizes) is drawn again, so
that every case also runs on the GPU. A cta case's block is its src layout's warps
(``ReduceCase.threads``); a cluster case's launch is one cluster (``ReduceCase.grid``
blocks of ``ReduceCase.block`` threads). ``tile_mlir.testing.invalid`` breaks these
draws one rule at a time.

``_draw`` also serves ``tile_mlir.testing.random_kernels``, which puts several draws of
one scope and launch into a kernel: with a fixed ``scope`` and ``geometry``, and with
``wild`` kept thread iters (``_wild_iters``). Those kernels are judged bit for bit by
``tile_mlir.testing.reference``, which shares nothing with the lowering; in CI by
``test/python/test_differential.py``, and on the GPU by two commands (compile here,
launch there)::

    python -m tile_mlir.testing.random_kernels prepare --count 300 --copies 60 --seed 0 --dir DIR  # here (+150 combiner ops)
    python -m tile_mlir.testing.random_kernels compare --dir DIR                                   # on the GPU

``prepare`` draws the seeded sample (``random_kernels.sample``: at least ``count`` reductions
that the reference computes and the compiler must accept, and ``copies`` tile.copy kernels),
runs it in the interpreter, compiles its modules into the compile cache under
``DIR/cache`` (dropping the entries an older compiler left there), and saves the modules,
the kernels, their inputs and the interpreter's outputs in ``DIR`` (``reference.json``,
``reference.npz``); it prints a NOTE for each kernel that already fails here. ``compare``
(numpy and cuda-python only, no MLIR, no ml_dtypes) launches every kernel on the GPU with
the same inputs and judges every dst place against the reference, bit for bit (NaNs
canonical), and against the interpreter's output. Kernels the reference cannot compute
but the compiler accepted run too, and are reported apart. The last line printed is the
summary: ``reference: N cases, M mismatches (per scope ..., per family: named,
argmax/argmin, combiner); the interpreter differs in
K kernel(s); ...``. ``show NAME`` prints one kernel of the sample, its module and its
verdict in the interpreter: the reproducer of a failure.
"""

from __future__ import annotations

import math
import random

from ..layout import Iter, TileLayout
from ..vocab import CTA_BITS_BASE, DTYPE_BYTES, DTYPES, KINDS, LANE_BITS
from . import reference
from .cases import ReduceCase

SCOPES = ("thread", "warp", "warp", "warpgroup", "cta", "cluster")  # drawn uniformly: warp twice as often
WARPS = (1, 2, 2, 4, 4, 8, 8, 16, 32)  # a cta's warps (the interpreter's time grows with them)
CLUSTERS = ((2, 1), (2, 2), (2, 4), (4, 1), (4, 2), (8, 1), (8, 2), (16, 1))  # a cluster's (CTAs, warps)
SRC_REGISTERS = 64  # registers per thread in one random src tile
# Fewer in a block of 16 or 32 warps (by the scope's thread bits): there a thread has at
# most 128 or 64 hardware registers.
FEWER_REGISTERS = {9: 16, 10: 8}
SCRATCH_LIMIT = 48 * 1024  # bytes of static workgroup memory a block may declare
_WARP_AXIS = {"warpgroup": "wid_in_wg", "cta": "warpid", "cluster": "warpid"}


def _thread_iters(bits: list[int], scope: str, rng: random.Random) -> list[Iter]:
    """Thread iters moving exactly ``bits`` of the thread index: runs of consecutive bits,
    split at random. A run below bit 5 is a ``laneid`` iter, one from bit 5 up a
    ``wid_in_wg`` or ``warpid`` iter; at warpgroup scope a run may instead be a
    ``tid_in_wg`` iter, which may cross bit 5."""
    runs, run = [], []
    for b in sorted(bits):
        split = (b == LANE_BITS and (scope in ("cta", "cluster") or (scope == "warpgroup" and rng.random() < 0.5))
                 or b == CTA_BITS_BASE)
        if run and (b != run[-1] + 1 or rng.random() < 0.3 or split):
            runs.append(run)
            run = []
        run.append(b)
    if run:
        runs.append(run)
    iters = []
    for r in runs:
        if scope == "warpgroup" and (r[0] < LANE_BITS <= r[-1] or rng.random() < 0.5):
            iters.append(Iter(1 << len(r), 1 << r[0], "tid_in_wg"))
        elif r[0] >= CTA_BITS_BASE:
            iters.append(Iter(1 << len(r), 1 << (r[0] - CTA_BITS_BASE), "cta_in_cluster"))
        elif r[0] >= LANE_BITS:
            iters.append(Iter(1 << len(r), 1 << (r[0] - LANE_BITS), _WARP_AXIS[scope]))
        else:
            iters.append(Iter(1 << len(r), 1 << r[0], "laneid"))
    return iters


def iter_bits(it: Iter) -> list[int]:
    """The thread-index bits a power-of-two thread iter moves (warp axes from bit 5, the
    CTA axis from bit 10)."""
    if it.axis == "m" or it.extent == 1:
        return []
    base = {"wid_in_wg": LANE_BITS, "warpid": LANE_BITS, "cta_in_cluster": CTA_BITS_BASE}.get(it.axis, 0)
    low = base + it.stride.bit_length() - 1
    return list(range(low, low + it.extent.bit_length() - 1))


def _uneven_lane_iter(free: list[int], rng: random.Random) -> tuple[Iter, list[int]] | None:
    """A ``laneid`` iter of a non-power-of-two extent on two or three consecutive free lane
    bits, and the bits it takes; None when no such run is free."""
    starts = [b for b in free if b + 1 in free and b + 1 < LANE_BITS]
    if not starts:
        return None
    b = rng.choice(starts)
    width = 3 if b + 2 in free and b + 2 < LANE_BITS and rng.random() < 0.5 else 2
    extent = rng.choice([e for e in range(1 << (width - 1), 1 << width) if e & (e - 1) and e > 2])
    return Iter(extent, 1 << b, "laneid"), list(range(b, b + width))


def _assign_strides(dims: list[list[Iter]], rng: random.Random, gap: bool) -> list[list[Iter]]:
    """Give the register iters row-major strides over a random order of them."""
    where = [(d, k) for d, its in enumerate(dims) for k, it in enumerate(its) if it.axis == "m"]
    rng.shuffle(where)
    stride = 1
    out = [list(its) for its in dims]
    for d, k in reversed(where):  # the last in the order is innermost
        it = out[d][k]
        out[d][k] = Iter(it.extent, stride, "m")
        stride *= it.extent
        if gap and rng.random() < 0.3:
            stride += 1  # an unused slot: span > size
    return out


def _with_register_replica(layout: TileLayout, rng: random.Random) -> TileLayout:
    """Sometimes: the same layout with a register replica on slots past its span."""
    if rng.random() >= 0.2:
        return layout
    copies = Iter(rng.choice((2, 3)), layout.span + rng.choice((0, 0, 1)), "m")
    return TileLayout(layout.shard, (*layout.replica, copies))


def random_case(rng: random.Random, name: str = "diff") -> ReduceCase:
    """One valid random configuration (module docstring)."""
    while True:
        case = _draw(rng, name)
        if case is not None:
            return case


def _draw(rng: random.Random, name: str, scope: str | None = None, geometry: tuple[int, int] | None = None,
          wild: bool = False, limit: int = SCRATCH_LIMIT) -> ReduceCase | None:
    """A random configuration, or None when its scratch would not fit (module docstring).
    ``scope`` and ``geometry`` (the warps of a block and the CTAs of a cluster, as their
    thread bits: (lane + warp bits, CTA bits)) fix what is drawn otherwise; with ``wild``,
    kept dims also get thread iters of any extent and stride (``_wild_iters``)."""
    scope = scope or rng.choice(SCOPES)
    kind, dtype, accum = rng.choice(KINDS), rng.choice(DTYPES), rng.random() < 0.5
    rank = rng.randint(2 if wild else 1, 3)
    axes_set = sorted(rng.sample(range(rank), rng.randint(1, rank - wild)))  # wild: some dim kept
    axes = [a - rank if rng.random() < 0.5 else a for a in axes_set]
    if rng.random() < 0.2:
        axes.append(rng.choice(axes))  # duplicates collapse
    # Each reduced dim is kept with extent 1 or dropped, on its own.
    keep = {d for d in axes_set if rng.random() < 0.3}

    if scope == "thread" and rng.random() < 0.5:
        shape = tuple(rng.randint(1, 4) for _ in range(rank))
        dst = tuple(1 if d in keep else e for d, e in enumerate(shape) if d not in axes_set or d in keep)
        return ReduceCase(name, kind, dtype, scope, tuple(axes), accum, shape, dst or (1,))

    # The src layout: thread bits, then register iters, in a random order per dim.
    dims: list[list[Iter]] = [[] for _ in range(rank)]
    replica_bits: list[int] = []
    nbits = {"thread": 0, "warp": LANE_BITS, "warpgroup": LANE_BITS + 2}.get(scope)
    bits = None
    if scope == "cta":
        nbits = geometry[0] if geometry else LANE_BITS + rng.choice(WARPS).bit_length() - 1
    elif scope == "cluster":
        if geometry:
            nbits, cta_bits = geometry
        else:
            ctas, warps = rng.choice(CLUSTERS)
            nbits, cta_bits = LANE_BITS + warps.bit_length() - 1, ctas.bit_length() - 1
        bits = [*range(nbits), *range(CTA_BITS_BASE, CTA_BITS_BASE + cta_bits)]
    kept = [d for d in range(rank) if d not in axes_set]
    owner: dict[int, list[int]] = {}
    free = []
    # With ``wild``, the lowest lane bits (and at cta or cluster scope sometimes the lowest
    # warp bits) are left to the wild iters.
    reserved = set(range(rng.randint(2, 4))) if wild else set()
    if wild and scope in ("cta", "cluster") and nbits > LANE_BITS + 1 and rng.random() < 0.4:
        reserved |= set(range(LANE_BITS, LANE_BITS + rng.randint(1, nbits - LANE_BITS - 1)))
    above = {max(r for r in reserved if r < LANE_BITS) + 1} | {max(reserved) + 1} if reserved else set()
    for b in bits if bits is not None else range(nbits):
        # Every CTA bit is used, so that the layouts span the whole cluster: a power of two.
        choice = rng.choice([*range(rank), *range(rank), "replica", *(["unused"] if b < CTA_BITS_BASE else [])])
        choice = "unused" if b in reserved else choice
        if b in above and rng.random() < 0.6:  # a bit just above the wild iters' room
            choice = rng.choice([*axes_set, "replica"])
        if choice == "replica":
            replica_bits.append(b)
        elif choice == "unused":
            free.append(b)
        else:
            owner.setdefault(choice, []).append(b)
    for d, moved in owner.items():
        dims[d] += _thread_iters(moved, scope, rng)
    if scope != "thread" and kept and rng.random() < 0.3:
        uneven = _uneven_lane_iter([b for b in free if b < LANE_BITS], rng)  # rows on 3, 5, 6 or 7 lanes
        if uneven:
            dims[rng.choice(kept)].append(uneven[0])
    if wild and scope != "thread" and kept:
        iters, more_replica = _wild_iters(scope, reserved, rng)
        order = rng.sample(kept, len(kept))
        for k, it in enumerate(iters):  # on different kept dims where there are
            dims[order[k % len(order)]].append(it)
        replica_bits += more_replica
    budget = FEWER_REGISTERS.get(nbits, SRC_REGISTERS)
    for d in range(rank):
        for _ in range(rng.randint(0 if dims[d] else 1, 2)):
            extent = rng.randint(1, min(4, budget))
            budget //= extent
            dims[d].append(Iter(extent, 1, "m"))
        rng.shuffle(dims[d])
    dims = _assign_strides(dims, rng, gap=True)
    src = TileLayout(tuple(map(tuple, dims)), tuple(_thread_iters(replica_bits, scope, rng)))
    src = _with_register_replica(src, rng)

    # The dst layout the rules ask for: the kept dims on the same threads with the same
    # register extents (compact strides of its own), each reduced dim dropped or kept
    # with extent 1, replicated over the src replica bits and the reduced thread bits.
    reduced_bits = sorted(b for d in axes_set for it in dims[d] for b in iter_bits(it))
    dst_dims = []
    for d in range(rank):
        if d in keep:
            dst_dims.append([Iter(1, 1, "m")])
        elif d not in axes_set:
            dst_dims.append(list(dims[d]))
    dst_dims = _assign_strides(dst_dims, rng, gap=False) if dst_dims else [[Iter(1, 1, "m")]]
    dst = TileLayout(tuple(map(tuple, dst_dims)), tuple(_thread_iters(replica_bits + reduced_bits, scope, rng)))
    dst = _with_register_replica(dst, rng)
    case = ReduceCase(
        name, kind, dtype, scope, tuple(axes), accum, (max(src.span, 1),), (max(dst.span, 1),),
        str(src), str(dst), cluster_fixed=scope == "cluster" and rng.random() < 0.5,
    )
    slots = math.prod(it.extent for d in kept for it in dims[d] if it.axis == "m")
    if scratch_bytes(case, reduced_bits, replica_bits, slots) > limit:
        return None
    if wild and reference.problems(as_op(case)):
        return None  # a wild iter broke a rule of the spec (two coordinates on one place, mostly)
    return case


def _wild_iters(scope: str, reserved: set[int], rng: random.Random) -> tuple[list[Iter], list[int]]:
    """Thread iters of any extent (2-7) and stride for kept dims, on the ``reserved`` low
    lane (or warp) bits, which nothing else uses, and maybe a replica bit among them. Their
    sums, with each other and with the replica's offsets, may stay below the reserved bits,
    or reach a bit that a reduced dim or the replica moves: the draw is kept when the spec's
    rules hold (the caller checks), and the reference then says whether the exchange is
    defined for it. Three ways: a chain of iters, each stride past what the ones before
    reach (so they never collide among themselves); two iters that each stay inside the
    reserved bits alone (meant for two kept dims: only their sum may leave them); one
    such iter and a replica bit inside the reserved bits. Returns the iters and the
    replica bits."""
    lanes = max(b for b in reserved if b < LANE_BITS) + 1
    warp_bits = sorted(b for b in reserved if b >= LANE_BITS)
    lane_axis = {"warpgroup": ("laneid", "tid_in_wg")}.get(scope, ("laneid",))
    if warp_bits and rng.random() < 0.4:
        axes, room, region = ("wid_in_wg" if scope == "warpgroup" else "warpid",), 1 << len(warp_bits), warp_bits
    else:
        axes, room, region = lane_axis, 1 << lanes, list(range(lanes))

    def inside() -> Iter:  # one iter reaching from half the room to all of it
        extent = rng.choice((2, 3, 3, 5, 6, 7))
        top = max(1, (room - 1) // (extent - 1))
        return Iter(extent, rng.randint(max(1, top // 2), top), rng.choice(axes))

    mode = rng.choice(("chain", "split", "split", "replica"))
    if mode == "split":
        return [inside(), inside()], []
    if mode == "replica":
        return [inside()], [rng.choice(region)]
    out, reach = [], 0
    for _ in range(rng.choice((1, 2, 2, 3))):
        extent, stride = rng.choice((2, 3, 3, 5, 6, 7)), reach + 1 + rng.choice((0, 0, 1, 2))
        if reach + (extent - 1) * stride >= 3 * room:
            break
        reach += (extent - 1) * stride
        out.append(Iter(extent, stride, rng.choice(axes)))
    return out, []


def as_op(case: ReduceCase, fold: str = "linear") -> reference.ReduceOp:
    """A drawn configuration as the reference's plain data."""
    return reference.ReduceOp(
        case.exec_scope, case.axes, (case.dtype,), case.src_shape, case.dst_shape, case.kind,
        case.src_layout, case.dst_layout, case.accum, fold)


def scratch_bytes(case: ReduceCase, reduced_bits, replica_bits, slots: int) -> int:
    """The workgroup scratch the cross_warp lowering gives the op (lowering/cross_warp.py):
    a partial per reduced warp-bit combination, kept thread-bit combination and dst slot
    of a thread, for each of 8 warpgroups a block may hold (one cta); 0 within warps."""
    if all(b < LANE_BITS for b in reduced_bits):
        return 0
    threads = case.block()
    reduced_bits = [b for b in reduced_bits if b < CTA_BITS_BASE]  # a cluster's CTA partials: no more
    replica_bits = [b for b in replica_bits if b < CTA_BITS_BASE]
    partials = 1 << ((threads - 1).bit_length() - sum(b < LANE_BITS for b in reduced_bits) - len(replica_bits))
    instances = 8 if case.exec_scope == "warpgroup" else 1
    return instances * partials * slots * DTYPE_BYTES[case.dtype]
