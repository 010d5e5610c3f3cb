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
blocks of ``ReduceCase.block`` threads).

The property test ``test/python/test_differential.py`` feeds it hypothesis's
``randoms()`` (so failures shrink) and checks the interpreter against numpy.

The bitwise comparison with the hardware is two commands (compile here, launch there)::

    python -m tile_mlir.testing.differential prepare --count 300 --seed 0 --dir DIR   # here, with MLIR
    python -m tile_mlir.testing.differential compare --dir DIR                        # on the GPU

``prepare`` draws the seeded sample, draws inputs, runs every case in the
interpreter, compiles it into the compile cache under ``DIR/cache`` (dropping the
entries an older compiler left there), and saves the
cases, inputs and interpreter outputs in ``DIR``. ``compare`` (numpy and
cuda-python only) launches each kernel on the GPU with the same inputs and
compares the outputs with the interpreter's bit for bit, at every place the dst
layout gives an element (``ReduceCase.owned``): lanes outside the layout hold
whatever their poisoned, unowned inputs made, and NaN payloads are not part of
the contract. The last line printed is the summary:
``differential: N cases, M bitwise mismatches``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..layout import Iter, TileLayout
from ..vocab import CTA_BITS_BASE, DTYPES, KINDS, LANE_BITS
from . import reference
from .cases import ReduceCase
from .harness import Kernel, Run, expected, inputs, judge, module_text, rejected_reason

SCOPES = ("thread", "warp", "warp", "warpgroup", "cta", "cluster")  # drawn uniformly: warp twice as often
WARPS = (1, 2, 2, 4, 4, 8, 8, 16, 32)  # a cta's warps (the interpreter's time grows with them)
CLUSTERS = ((2, 1), (2, 2), (2, 4), (4, 1), (4, 2), (8, 1), (8, 2), (16, 1))  # a cluster's (CTAs, warps)
SRC_REGISTERS = 64  # registers per thread in one random src tile
# Fewer in a block of 16 or 32 warps (by the scope's thread bits): there a thread has at
# most 128 or 64 hardware registers.
FEWER_REGISTERS = {9: 16, 10: 8}
SCRATCH_LIMIT = 48 * 1024  # bytes of static workgroup memory a block may declare
_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "f64": 8, "i64": 8}
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
    rank = rng.randint(1, 3)
    axes_set = sorted(rng.sample(range(rank), rng.randint(1, rank)))
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
    for b in bits if bits is not None else range(nbits):
        # Every CTA bit is used, so that the layouts span the whole cluster: a power of two.
        choice = rng.choice([*range(rank), *range(rank), "replica", *(["unused"] if b < CTA_BITS_BASE else [])])
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
        for it in _wild_iters(scope, nbits, rng):
            dims[rng.choice(kept)].append(it)
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


# Thread axes of the wild iters, per scope (laneid most often).
_WILD_AXES = {"warp": ("laneid",), "warpgroup": ("laneid", "laneid", "tid_in_wg", "wid_in_wg"),
              "cta": ("laneid", "laneid", "warpid"), "cluster": ("laneid", "laneid", "warpid")}


def _wild_iters(scope: str, nbits: int, rng: random.Random) -> list[Iter]:
    """One to three thread iters of any extent (2-7) and stride, for kept dims. Their sums,
    with each other and with the replica's offsets, may reach a bit that a reduced dim or
    the replica moves: the draw is kept when the spec's rules hold (the caller checks), and
    the reference then says whether the exchange is defined for it."""
    bounds = {"laneid": 32, "tid_in_wg": 128, "wid_in_wg": 4, "warpid": 1 << max(nbits - LANE_BITS, 0)}
    out = []
    for _ in range(rng.choice((1, 1, 2, 2, 3))):
        axis = rng.choice([a for a in _WILD_AXES[scope] if bounds[a] > 2])
        extent = rng.randint(2, 7)
        out.append(Iter(extent, rng.randint(1, max(1, (bounds[axis] - 1) // (extent - 1))), axis))
    return out


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
    return instances * partials * slots * _BYTES[case.dtype]


# --- kernels for the reference: several ops, loops, workgroup operands ------------------------

KERNEL_SCOPES = ("thread", "warp", "warpgroup", "cta", "cta", "cluster", "cluster")
ONE_CTA_CLUSTERS = ((1, 2), (1, 4))  # cluster scope, one CTA: warps reduced, no CTA bit
SHARED_SHARE, LOOP_SHARE, WILD_SHARE, TREE_SHARE = 0.12, 0.3, 0.3, 0.25
SPECIAL_RATES = (0.0, 0.0, 0.1, 0.3)  # the share of NaN, infinities and zeros in float inputs


def _fixed() -> list[Kernel]:
    """The configurations found wrong by an outside fuzz campaign: kept thread iters whose
    sum (with each other, or with a replica) reaches a reduced bit, at warp and cta scope;
    and cluster-scope ops in a loop that reduce warp bits but no CTA bit."""
    def op(scope, axes, src, dst, shape=(16,), dtype="i32", accum=False):
        return reference.ReduceOp(scope, axes, (dtype,), shape, shape, "sum", src, dst, accum)

    return [
        Kernel("ref_fixed_0", "warp", (op("warp", (2,), "S[((3), (2), 2) : ((3@laneid), (4@laneid), 8@laneid)]",
                                         "S[((3), (2)) : ((3@laneid), (4@laneid))] + R[2 : 8@laneid]"),), 32),
        Kernel("ref_fixed_1", "warp", (op("warp", (1,), "S[((3), 2) : ((3@laneid), 8@laneid)] + R[2 : 4@laneid]",
                                         "S[(3) : (3@laneid)] + R[(2, 2) : (4@laneid, 8@laneid)]"),), 32),
        Kernel("ref_fixed_2", "cta", (op("cta", (2,), "S[((3), (2), 2, 32) : ((3@warpid), (4@warpid), 8@warpid, 1@laneid)]",
                                        "S[((3), (2), 32) : ((3@warpid), (4@warpid), 1@laneid)] + R[2 : 8@warpid]"),), 608),
        Kernel("ref_fixed_3", "cluster", (op("cluster", (1,), "S[(2, (2, 32)) : (1@cta_in_cluster, (1@warpid, 1@laneid))]",
                                            "S[2 : 1@cta_in_cluster] + R[(2, 32) : (1@warpid, 1@laneid)]",
                                            (1,), "f32", True),), 64, 2, 2, repeat=3),
        Kernel("ref_fixed_4", "cluster", (op("cluster", (1,), "S[(4, (2, 32)) : (1, (1@warpid, 1@laneid))]",
                                            "S[4 : 1] + R[(2, 32) : (1@warpid, 1@laneid)]", (4,), "f32", True),),
               64, repeat=3),
    ]


def random_kernel(rng: random.Random, name: str) -> Kernel:
    """A random kernel: one to three ops of one scope and launch, maybe in a loop."""
    while True:
        kernel = _shared_kernel(rng, name) if rng.random() < SHARED_SHARE else _register_kernel(rng, name)
        if kernel is not None:
            return kernel


def _register_kernel(rng: random.Random, name: str) -> Kernel | None:
    scope = rng.choice(KERNEL_SCOPES)
    repeat = 3 if rng.random() < LOOP_SHARE else 1
    fold = "tree" if rng.random() < TREE_SHARE else "linear"
    wild = rng.random() < WILD_SHARE
    geometry = None
    if scope == "cta":
        geometry = (LANE_BITS + rng.choice(WARPS).bit_length() - 1, 0)
    elif scope == "cluster":
        ctas, warps = rng.choice(CLUSTERS + ONE_CTA_CLUSTERS)
        geometry = (LANE_BITS + warps.bit_length() - 1, ctas.bit_length() - 1)
    want = rng.choice((1, 1, 1, 2, 3))
    ops, reach, fixed_cluster = [], None, False
    for _ in range(4 * want):
        case = _draw(rng, name, scope, geometry, wild, SCRATCH_LIMIT // (want * (1 + (repeat > 1))))
        if case is None:
            continue
        if repeat > 1 and rng.random() < 0.8:
            case = replace(case, accum=True)
        op = as_op(case, fold)
        here = (op.src.reach("warpid"), op.src.reach("cta_in_cluster"))
        rejected = reference.exchange_problem(op) or reference.unsupported(op)
        if ops and (here != reach or rejected):
            continue
        ops.append(op)
        reach, fixed_cluster = here, fixed_cluster or case.cluster_fixed
        if rejected or len(ops) == want:
            break  # an op the compiler must reject stands alone
    if not ops:
        return None
    warps, ctas = reach
    block, grid, cluster = {"thread": (rng.choice((1, 2, 32)), 1, 1), "warp": (32 * rng.choice((1, 1, 2)), 1, 1),
                            "warpgroup": (128 * rng.choice((1, 1, 2)), 1, 1),
                            "cta": (32 * warps, rng.choice((1, 1, 1, 2)), 1),
                            "cluster": (32 * warps, ctas * rng.choice((1,) * 9 + (2,)), ctas)}[scope]
    return Kernel(name, scope, tuple(ops), block, grid, cluster, repeat, fold,
                  known_block=scope == "cta" and rng.random() < 0.5, cluster_fixed=fixed_cluster,
                  special=rng.choice(SPECIAL_RATES))


def _shared_kernel(rng: random.Random, name: str) -> Kernel:
    """Workgroup operands: one or two ops on row-major tiles of up to 2048 elements; at
    thread, warp and warpgroup scope sometimes one instance in a bigger block."""
    scope = rng.choice(("thread", "warp", "warpgroup", "cta"))
    repeat = 3 if rng.random() < LOOP_SHARE else 1
    fold = "tree" if rng.random() < TREE_SHARE else "linear"
    if scope == "cta":
        block = threads = rng.choice((32, 48, 64, 96, 128, 256))
    else:
        threads = {"thread": 1, "warp": 32, "warpgroup": 128}[scope]
        block = threads * (rng.choice((2, 4, 32) if scope == "thread" else (2, 4)) if rng.random() < 0.3 else 1)
        block = min(block, 512)
    ops = []
    for _ in range(rng.choice((1, 1, 2))):
        rank = rng.randint(1, 3)
        shape = [rng.randint(1, 40) for _ in range(rank)]
        while math.prod(shape) > 2048:
            shape[rng.randrange(rank)] //= 2
        shape = tuple(max(e, 1) for e in shape)
        reduced = sorted(rng.sample(range(rank), rng.randint(1, rank)))
        axes = tuple(a - rank if rng.random() < 0.5 else a for a in reduced)
        dst = tuple(1 if d in reduced else e for d, e in enumerate(shape) if d not in reduced or rng.random() < 0.3)
        accum = rng.random() < (0.8 if repeat > 1 else 0.5)
        ops.append(reference.ReduceOp(scope, axes, (rng.choice(DTYPES),), shape, dst or (1,), rng.choice(KINDS),
                                      accum=accum, fold=fold, storage="shared", threads=threads))
    instance = rng.randrange(block // threads) if block != threads else None
    return Kernel(name, scope, tuple(ops), block, 1, 1, repeat, fold, known_block=True, instance=instance,
                  special=rng.choice(SPECIAL_RATES))


def sample(count: int, seed: int) -> list[Kernel]:
    """The fixed kernels, then kernel i drawn from ``random.Random(f"{seed}:{i}")``, until
    they hold ``count`` ops."""
    kernels = _fixed()
    i = 0
    while sum(len(k.ops) for k in kernels) < count:
        kernels.append(random_kernel(random.Random(f"{seed}:{i}"), f"ref_{seed}_{i}"))
        i += 1
    return kernels


# --- running kernels in the interpreter (needs MLIR) ------------------------------------------

BATCH = 16  # kernels per module: one parse, one lowering, one interpreter build for all


def batches(kernels: list[Kernel], size: int = BATCH) -> list[list[Kernel]]:
    """Kernels grouped into modules: by fold option; a kernel the compiler must reject
    (``harness.rejected_reason``) alone, so that its rejection takes no other down."""
    alone = [[k] for k in kernels if rejected_reason(k)]
    out = []
    for fold in ("linear", "tree"):
        rest = [k for k in kernels if k.fold == fold and not rejected_reason(k)]
        out += [rest[i:i + size] for i in range(0, len(rest), size)]
    return alone + out


def kernel_inputs(kernel: Kernel) -> Run:
    """The kernel's fresh random inputs, seeded by its name."""
    return inputs(kernel, np.random.default_rng(zlib.crc32(kernel.name.encode())))


def interpret(batch: list[Kernel]) -> list[tuple[str, object]]:
    """Compile the batch as one module (``tile-lower-reduction`` with the batch's fold) and run
    each kernel in the interpreter: per kernel ``("ran", Run)``, ``("rejected", message)``
    or ``("interpreter", message)``. A module that fails to compile is retried kernel by
    kernel, so that each rejection is the kernel's own."""
    from ..compiler import lower_tile_ops
    from ..errors import CompileError, TileError
    from ..interpreter import interpreted_kernels
    from ..options import Options

    try:
        lowered, signatures = lower_tile_ops(module_text(batch), Options(fold=batch[0].fold))
    except CompileError as e:
        if len(batch) == 1:
            return [("rejected", str(e))]
        return [out for k in batch for out in interpret([k])]
    built = interpreted_kernels(lowered, signatures)
    outcomes = []
    for kernel in batch:
        run = kernel_inputs(kernel)
        try:
            built[kernel.name].launch(kernel.grid, kernel.block, *run.buffers)
        except TileError as e:
            outcomes.append(("interpreter", f"{type(e).__name__}: {e}"))
            continue
        outcomes.append(("ran", run))
    return outcomes


def verdict(kernel: Kernel, outcome: tuple[str, object]) -> list[str]:
    """What is wrong with one kernel's outcome against the reference (empty: nothing)."""
    status, detail = outcome
    must_reject = rejected_reason(kernel)
    if must_reject:
        if status == "rejected":
            return []
        wrong = judge(kernel, detail, expected(kernel, detail, reference.meaning)) if status == "ran" else [detail]
        return [f"accepted, but the reference cannot compute it ({must_reject}); against the op's meaning "
                f"in row-major order: {'; '.join(wrong) or 'every dst place right'}"]
    if status == "rejected":
        return [f"rejected a configuration the reference computes: {detail}"]
    if status == "interpreter":
        return [f"the interpreter failed: {detail}"]
    return judge(kernel, detail)
