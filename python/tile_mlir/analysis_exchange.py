"""The rules across threads of ``tile.reduce``, decided from the threads a layout reaches.

A reduction across threads *exchanges* partials: the lane butterfly, and the exchanges
between warps and between CTAs, pair thread ``t`` with ``t xor 2**b`` for each reduced
thread bit ``b`` (docs/spec.md, "Exec scopes"). That gives each thread the fold over
its group ``t xor span(L)``. It is right only if, for every kept coordinate of src and
every replica copy, the threads that hold its partials form exactly such a group: the
set is closed under flipping each reduced bit, and no thread outside it takes part.

The threads come from sums: a kept coordinate's partials sit on ``kept + replica +
reduced``, the thread offsets of its kept dims' thread iters, of a replica copy and of
the reduced dims' (power-of-two) thread iters. Power-of-two iters on disjoint bits add
as bit fields, but kept iters may have any extent and stride, and a sum of two of
them, or of one and a replica iter, can carry into a reduced bit
(``S[((3), (2), 2) : ((3@laneid), (4@laneid), 8@laneid)]``: 6 + 4 = 10 sets bit 3).
``exchange_problems`` therefore checks the pairing itself, over the threads the layout
reaches: one numpy pass over at most ``SCOPE_THREADS["cluster"]`` (16 x 1024) threads.
A valid layout puts each combination of thread digits on its own thread (else two of
its places would coincide), so that bounds every array here; the register iters, and
so the extents of the tile, never enter.

``thread_bits`` names the bits a power-of-two thread iter moves; ``kept_threads`` lists
the thread offsets of a layout's kept coordinates (the lowering variants that exchange
through scratch ask it which bits those reach).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import LayoutError
from .layout import Iter, TileLayout
from .vocab import CTA_BITS_BASE, LANE_BITS, SCOPE_THREADS

# Where each thread axis's bits start in the thread index.
_AXIS_BIT_BASE = {"laneid": 0, "tid_in_wg": 0, "wid_in_wg": LANE_BITS, "warpid": LANE_BITS,
                  "cta_in_cluster": CTA_BITS_BASE}

# The most threads a scope has: every array below is at most this long.
MAX_THREADS = max(SCOPE_THREADS.values())

_SHOWN = 6  # threads listed in a message before "..."


def thread_bits(iters: tuple[Iter, ...]) -> tuple[int, ...]:
    """The thread-index bits moved by the thread-axis iters among ``iters``
    (``tile_mlir.analysis``'s docstring); register iters move none.

    Raises LayoutError when an extent or stride is not a power of two, or when
    two iters move the same bit.
    """
    bits: list[int] = []
    for it in iters:
        if it.axis == "m" or it.extent == 1:
            continue
        for what, v in (("extent", it.extent), ("stride", it.stride)):
            if v < 1 or v & (v - 1):
                raise LayoutError(f"{what} {v} on {it.axis} is not a power of two")
        low = _AXIS_BIT_BASE[it.axis] + it.stride.bit_length() - 1
        new = range(low, low + it.extent.bit_length() - 1)
        if set(new) & set(bits):
            raise LayoutError(f"two {it.axis} iters move the same thread bit")
        bits.extend(new)
    return tuple(sorted(bits))


def _offsets(iters) -> np.ndarray | None:
    """The thread offset of every digit combination of the thread iters among ``iters``
    (row-major: the last iter innermost); None past ``MAX_THREADS`` combinations, which a
    valid layout never has."""
    iters = [it for it in iters if it.axis != "m" and it.extent > 1]
    if math.prod(it.extent for it in iters) > MAX_THREADS:
        return None
    out = np.zeros(1, np.int64)
    for it in iters:
        out = (out[:, None] + np.arange(it.extent, dtype=np.int64) * it.thread_step).ravel()
    return out


def _kept_iters(layout: TileLayout, axes) -> list[tuple[int, Iter, int]]:
    """(dim, iter, coordinate weight) of each thread iter of a kept dim, in order: the
    weight is what one digit adds to the dim's coordinate."""
    out = []
    for d, dim in enumerate(layout.shard):
        if d in axes:
            continue
        for k, it in enumerate(dim):
            if it.axis != "m" and it.extent > 1:
                out.append((d, it, math.prod(inner.extent for inner in dim[k + 1:])))
    return out


def kept_threads(layout: TileLayout, axes) -> np.ndarray | None:
    """The thread offset of each combination of the kept dims' thread digits (the kept
    coordinates, up to their register digits), in row-major order of the dims and their
    iters; None for a layout with more combinations than a scope has threads."""
    return _offsets([it for _, it, _ in _kept_iters(layout, axes)])


def exchange_problems(src_layout: TileLayout, dst_layout: TileLayout, axes, dst_dim,
                      reduced_bits, src_replica_bits, dst_replica_bits) -> list[str]:
    """Why the exchange over ``reduced_bits`` would not reduce each kept coordinate of
    ``src_layout`` onto the places ``dst_layout`` gives it: the pairing (module docstring),
    the dst's replica bits (exactly the reduced bits and the src replica bits: the result
    lands on every thread that took part, and on no other), and the threads of each kept
    dim (the same in dst as in src). ``dst_dim`` maps each src dim to its dst dim (None:
    dropped); the bits are ``thread_bits`` of the reduced dims and of the replicas."""
    problems = _pairing_problems(src_layout, dst_layout, axes, dst_dim, reduced_bits)
    want = set(reduced_bits) | set(src_replica_bits)
    if set(dst_replica_bits) != want:
        problems.append(
            f"dst_layout must replicate over thread bits {_set(want)} (the src replica bits "
            f"{_set(src_replica_bits)} and the reduced bits {_set(reduced_bits)}), but it "
            f"replicates over {_set(dst_replica_bits)}"
        )
    for d, dd in enumerate(dst_dim):
        # Same shape and the same thread for every coordinate imply the same number of
        # registers per thread: no separate register-extent rule.
        if d not in axes and dd is not None and _thread_map(src_layout.shard[d]) != _thread_map(dst_layout.shard[dd]):
            problems.append(
                f"dst_layout dim {dd} does not put the elements of src dim {d} on the same "
                "threads: their thread iters differ"
            )
    return problems


def _pairing_problems(src: TileLayout, dst: TileLayout, axes, dst_dim, reduced_bits) -> list[str]:
    """The first thread whose partner under a reduced bit holds other partials, as a
    reason; [] when every group is closed (module docstring)."""
    if not reduced_bits:
        return []
    kept_iters = _kept_iters(src, axes)
    kept = _offsets([it for _, it, _ in kept_iters])
    copies = _offsets(src.replica)
    reduced = _offsets([it for d in axes for it in src.shard[d]])
    if kept is None or copies is None or reduced is None or kept.size * copies.size * reduced.size > MAX_THREADS:
        return []  # two coordinates share a place: TileLayout.problems() says so
    base = (kept[:, None] + copies[None, :]).ravel()  # a group per (kept coordinate, copy)
    holders = (base[:, None] + reduced[None, :]).ravel()
    group = np.repeat(np.arange(base.size), reduced.size)
    size = 1 << max(int(holders.max()).bit_length(), max(reduced_bits) + 1)
    owner = np.full(size, -1, np.int64)
    owner[holders] = group
    for b in sorted(reduced_bits):
        wrong = np.flatnonzero(owner[holders ^ (1 << b)] != group)
        if wrong.size:
            t = int(holders[wrong].min())
            return [_pairing_text(src, dst, dst_dim, kept_iters, copies.size, owner, holders, t, b,
                                  int(base[owner[t]]), reduced_bits)]
    return []


def _pairing_text(src, dst, dst_dim, kept_iters, copies: int, owner, holders, t: int, b: int,
                  base: int, reduced_bits) -> str:
    """The reason for thread ``t``, whose partner under reduced bit ``b`` holds other
    partials; ``base``: the thread its group's kept and replica iters add up to."""
    g = int(owner[t])
    partner = t ^ (1 << b)
    other = int(owner[partner]) if partner < owner.size else -1
    held = np.sort(holders[owner[holders] == g])
    what = "no element" if other < 0 else f"{_group_text(src, dst, dst_dim, kept_iters, copies, other)}'s partials"
    sums = "kept thread iters" if g % copies == 0 else "kept and replica thread iters"
    return (
        f"src_layout: {_group_text(src, dst, dst_dim, kept_iters, copies, g)} is held by threads "
        f"{_threads(held)}, but reduced bit {b} pairs thread {t} with thread {partner}, which holds {what}: "
        f"its {sums} add up to thread {base}, which has reduced bit(s) "
        f"{_set(x for x in reduced_bits if base >> x & 1)} set (the exchange pairs t with t xor 2^b, so the "
        "threads that hold one kept coordinate must differ in reduced bits only)"
    )


def _group_text(src: TileLayout, dst: TileLayout, dst_dim, kept_iters, copies: int, g: int) -> str:
    """``dst coordinate (2, 1)``, with `` (replica copy 1)`` for a copy other than 0: the
    kept coordinate of group ``g`` (its register digits 0)."""
    index, copy = divmod(g, copies)
    coord = [0] * src.rank
    for d, it, weight in reversed(kept_iters):
        index, digit = divmod(index, it.extent)
        coord[d] += digit * weight
    out = [0] * dst.rank
    for d, dd in enumerate(dst_dim):
        if dd is not None:
            out[dd] = coord[d]
    text = f"dst coordinate {tuple(out)}".replace(",)", ")")
    return text + (f" (replica copy {_copy_index(src, copy)})" if copy else "")


def _copy_index(layout: TileLayout, thread_copy: int) -> int:
    """The replica copy number (row-major over every replica iter, as ``TileLayout``
    counts them) of thread-replica combination ``thread_copy``, its register digits 0."""
    index, weight = 0, 1
    for it in reversed(layout.replica):
        if it.axis != "m" and it.extent > 1:
            thread_copy, digit = divmod(thread_copy, it.extent)
            index += digit * weight
        weight *= it.extent
    return index


def _thread_map(iters) -> tuple[tuple[int, int], ...]:
    """The thread offset of a dim's coordinates as a function, in a normal form: (extent,
    thread step) pairs, inner first, extent-1 iters dropped and an outer iter merged
    into the inner one it continues (step = inner step x inner extent; register iters
    have step 0). Two dims of one extent put every coordinate on the same thread iff
    their forms are equal, and the form costs a pass over the iters, not the extent."""
    merged: list[tuple[int, int]] = []
    for it in reversed(iters):
        if it.extent == 1:
            continue
        if merged and it.thread_step == merged[-1][1] * merged[-1][0]:
            merged[-1] = (merged[-1][0] * it.extent, merged[-1][1])
        else:
            merged.append((it.extent, it.thread_step))
    return tuple(merged)


def _threads(threads) -> str:
    shown = ", ".join(str(int(t)) for t in threads[:_SHOWN])
    return "{" + shown + (f", ... ({len(threads)} threads)" if len(threads) > _SHOWN else "") + "}"


def _set(bits) -> str:
    return "{" + ", ".join(map(str, sorted(bits))) + "}"
