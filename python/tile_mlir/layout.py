"""Tile layouts: which (lane, warp, register slot) places hold each element of a tile.

This is the model of docs/spec.md, "Tile layouts". It is pure Python (no MLIR) and immutable, so the
dialect, the dispatcher and the lowering can all ask it questions without re-parsing text.

A layout is written in TIRx's ``TileLayout`` notation with CuTe-style nesting::

    S[(32, 8) : (1@laneid, 1)]                          32x8, one row per lane, 8 registers
    S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]  32x8, mma-accumulator-like
    S[4 : 1] + R[32 : 1@laneid]                         4 registers, held by all 32 lanes

``S[...]`` (the shard) has one top-level mode per logical dim; a parenthesised mode splits
its dim into several *iters*, outer first. Each iter has an extent and a stride on an
*axis*: ``m`` (register slots; a bare integer stride) or a thread axis (``laneid``,
``warpid``, ``wid_in_wg``, ``tid_in_wg``, ``cta_in_cluster``). Without strides, the shard is row-major in
registers over all its iters. ``R[...]`` (the replica) is a flat list of iters that index
no coordinate: every combination of their digits is added on top, so each element is also
held by those places.

The forward map of a coordinate: split each component mixed-radix over its dim's iters
(last iter innermost) and add ``digit * stride`` to the iter's axis. Register iters give
the slot; thread iters give ``thread = lane_sum + 32 * warp_sum + tid_sum + 1024 * cta_sum``,
and then ``lane = thread % 32``, ``warp = thread // 32``. A CTA of a cluster counts as 1024
threads (the most a block has), so the threads of different CTAs never share an index and
rule 3 of ``problems()`` sees a shared place across CTAs as it does across warps; warp
``w`` of CTA ``c`` is then warp ``32 * c + w``.

Two kinds of error: text or structure that is not a layout at all raises ``LayoutError``
(from ``parse`` or the constructors); a well-formed layout that breaks a validity rule
(zero extent, zero thread stride, two coordinates on one place) is reported as a list of
reasons by ``TileLayout.problems()``.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from .errors import LayoutError
from .vocab import AXES, AXIS_LIMITS, INT64_MAX, INT64_MIN, LANE_BITS, MAX_BLOCK_THREADS, WARP_SIZE

# What one unit of stride on each axis adds to (thread index, register slot).
_AXIS_WEIGHT = {
    "m": (0, 1),
    "laneid": (1, 0),
    "warpid": (WARP_SIZE, 0),
    "wid_in_wg": (WARP_SIZE, 0),
    "tid_in_wg": (1, 0),
    "cta_in_cluster": (MAX_BLOCK_THREADS, 0),
}


class Place(NamedTuple):
    """Where one copy of an element lives: a lane of a warp, and a register slot there.
    In a cluster, warp ``w`` of CTA ``c`` is warp ``32 * c + w``."""

    lane: int
    warp: int
    slot: int


@dataclass(frozen=True)
class Iter:
    """One iter: ``extent`` digits, each adding ``digit * stride`` to ``axis``."""

    extent: int
    stride: int
    axis: str = "m"

    def __post_init__(self):
        object.__setattr__(self, "extent", operator.index(self.extent))
        object.__setattr__(self, "stride", operator.index(self.stride))
        if self.axis not in AXES:
            raise LayoutError(f"unknown axis {self.axis!r} (expected one of {', '.join(AXES)})")

    @property
    def thread_step(self) -> int:
        """What one digit adds to the thread index: ``stride`` times the axis's weight
        (1 for ``laneid`` and ``tid_in_wg``, 32 for warps, 1024 for CTAs; 0 on ``m``)."""
        return self.stride * _AXIS_WEIGHT[self.axis][0]


@dataclass(frozen=True)
class TileLayout:
    """A tile layout: ``shard`` iters per logical dim (outer first), plus ``replica`` iters.

    Construction checks structure only (at least one dim, at least one iter per dim, every
    iter an ``Iter``); lists are accepted and stored as tuples. Validity is ``problems()``.
    """

    shard: tuple[tuple[Iter, ...], ...]
    replica: tuple[Iter, ...] = ()

    def __post_init__(self):
        shard = tuple(tuple(dim) for dim in self.shard)
        replica = tuple(self.replica)
        if not shard:
            raise LayoutError("a layout needs at least one dim")
        for d, dim in enumerate(shard):
            if not dim:
                raise LayoutError(f"dim {d} has no iters")
        if not all(isinstance(it, Iter) for it in itertools.chain(*shard, replica)):
            raise LayoutError("every iter of a layout must be an Iter")
        object.__setattr__(self, "shard", shard)
        object.__setattr__(self, "replica", replica)

    # -- construction and spelling ------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> TileLayout:
        """Parse the layout grammar (docs/spec.md, "Grammar"). Raises ``LayoutError``; does not check validity.

        Besides the grammar, integers may be negative (so that every layout prints to
        parseable text) and a parenthesised list may end with a comma (TIRx writes
        ``S[(4,)]``).
        """
        from .layout_grammar import (
            Parser,  # the grammar builds TileLayouts: imported here
        )

        return Parser(text).layout()

    @classmethod
    def row_major(cls, shape: Sequence[int]) -> TileLayout:
        """``S[shape]``: one register iter per dim, row-major (last dim innermost)."""
        return cls(tuple((it,) for it in row_major_iters(shape)))

    def __str__(self) -> str:
        """The layout text, strides always written, e.g. ``S[(32, 4) : (1@laneid, 1)]``.

        A single-iter dim prints bare, a multi-iter dim in parentheses, and the list of
        dims in parentheses unless it is one single-iter dim. ``parse(str(L)) == L``.
        """
        def dims(leaf):
            if len(self.shard) == 1 and len(self.shard[0]) == 1:
                return leaf(self.shard[0][0])
            return _paren(
                leaf(dim[0]) if len(dim) == 1 else _paren(map(leaf, dim)) for dim in self.shard
            )

        def flat(leaf):
            if len(self.replica) == 1:
                return leaf(self.replica[0])
            return _paren(map(leaf, self.replica))

        text = f"S[{dims(_extent_text)} : {dims(_stride_text)}]"
        if self.replica:
            text += f" + R[{flat(_extent_text)} : {flat(_stride_text)}]"
        return text

    def canonical(self) -> TileLayout:
        """The same forward map, in normal form. Per dim, outer to inner:

        1. drop every extent-1 iter; a dim left with none gets the single iter
           ``Iter(1, 0)`` (extent 1, register stride 0, as CuTe's ``coalesce``);
        2. merge each adjacent (outer, inner) pair on the same axis with
           ``outer.stride == inner.stride * inner.extent`` into
           ``Iter(outer.extent * inner.extent, inner.stride, axis)``; repeat while possible.

        The replica is a set of offsets, so its order is free: drop extent-1 iters, sort by
        ``(axis, stride, extent)``, and merge adjacent pairs the same way, taking the later
        (larger-stride) iter as the outer one. An empty replica stays empty.

        Iters with extent < 1 are kept and never merged (the layout is invalid anyway, and
        ``problems()`` says so).
        Axes are never renamed (``warpid`` and ``wid_in_wg`` stay distinct).
        """
        shard = [_merged([it for it in dim if it.extent != 1]) or [Iter(1, 0)] for dim in self.shard]
        replica = [it for it in self.replica if it.extent != 1]
        replica.sort(key=lambda it: (it.axis, it.stride, it.extent))
        return TileLayout(shard, _merged(replica[::-1])[::-1])

    # -- shape and storage -----------------------------------------------------------

    @property
    def rank(self) -> int:
        """The number of logical dims."""
        return len(self.shard)

    @property
    def shape(self) -> tuple[int, ...]:
        """The logical shape: per dim, the product of its iter extents."""
        return tuple(math.prod(it.extent for it in dim) for dim in self.shard)

    @property
    def span(self) -> int:
        """Registers a thread must allocate: the largest slot + 1 (0 for an empty tile).

        A sum over the iters: the cost does not grow with the extents."""
        if any(it.extent < 1 for it in self._all_iters()):
            return 0
        return 1 + sum(max(0, (it.extent - 1) * it.stride) for it in self._all_iters() if it.axis == "m")

    @cached_property
    def size(self) -> int:
        """The number of distinct register slots used (``< span`` when strides leave gaps).

        Enumerates the slots: ask only of a layout whose ``problems()`` are empty (its
        span is then at most ``MAX_REGISTERS``)."""
        slots = {0}
        for it in self._all_iters():
            if it.extent < 1:
                return 0
            step = it.stride if it.axis == "m" else 0
            slots = {s + digit * step for s in slots for digit in range(it.extent)}
        return len(slots)

    def axes(self) -> frozenset[str]:
        """The axes of all iters as written (shard and replica, extent-1 iters included)."""
        return frozenset(it.axis for it in itertools.chain(*self.shard, self.replica))

    # -- the forward map ---------------------------------------------------------------

    def forward(self, coord: Sequence[int]) -> frozenset[Place]:
        """Every place holding the element at ``coord`` (one per replica copy, deduplicated).

        Raises ``LayoutError`` if ``coord`` has the wrong rank or is out of range.
        """
        coord = tuple(coord)
        if len(coord) != self.rank:
            raise LayoutError(
                f"coordinate {coord} has rank {len(coord)}, the layout has rank {self.rank}"
            )
        for d, (c, n) in enumerate(zip(coord, self.shape)):
            if not 0 <= c < n:
                raise LayoutError(
                    f"coordinate {coord}: index {c} of dim {d} is out of range [0, {n})"
                )
        thread, slot = self._home(coord)
        return frozenset(_place(thread + dt, slot + ds) for dt, ds in self._replica_offsets)

    def _home(self, coord: tuple[int, ...]) -> tuple[int, int]:
        """(thread, slot) of ``coord`` in replica copy 0; ``coord`` must be in range."""
        thread = slot = 0
        for c, dim in zip(coord, self.shard):
            for it in reversed(dim):
                c, digit = divmod(c, it.extent)
                dt, ds = _AXIS_WEIGHT[it.axis]
                thread += digit * it.stride * dt
                slot += digit * it.stride * ds
        return thread, slot

    @cached_property
    def _replica_offsets(self) -> frozenset[tuple[int, int]]:
        """The (thread, slot) offsets of all replica copies, (0, 0) included."""
        offsets = {(0, 0)}
        for it in self.replica:
            dt, ds = _AXIS_WEIGHT[it.axis]
            offsets = {
                (t + digit * it.stride * dt, s + digit * it.stride * ds)
                for t, s in offsets
                for digit in range(it.extent)
            }
        return frozenset(offsets)

    # -- per-dim questions ------------------------------------------------------------

    def _dim_index(self, dim: int) -> int:
        """``dim`` in ``0 .. rank-1``; a negative ``dim`` counts from the end."""
        if not -self.rank <= dim < self.rank:
            raise LayoutError(f"dim {dim} is out of range for rank {self.rank}")
        return dim % self.rank

    def local_iters(self, dim: int) -> tuple[Iter, ...]:
        """The register (axis ``m``) iters of ``dim``, outer first."""
        return tuple(it for it in self.shard[self._dim_index(dim)] if it.axis == "m")

    def thread_iters(self, dim: int) -> tuple[Iter, ...]:
        """The thread-axis (non-``m``) iters of ``dim``, outer first."""
        return tuple(it for it in self.shard[self._dim_index(dim)] if it.axis != "m")

    def thread_offsets(self, dim: int) -> np.ndarray:
        """For each coordinate of ``dim`` (in order), the thread index its iters add
        (lane + 32 * warp + tid; register iters add nothing). Needs a valid layout."""
        d = self._dim_index(dim)
        rest = np.arange(self.shape[d], dtype=np.int64)
        offsets = np.zeros_like(rest)
        for it in reversed(self.shard[d]):
            rest, digit = np.divmod(rest, it.extent)
            offsets += digit * (it.stride * _AXIS_WEIGHT[it.axis][0])
        return offsets

    def local_extent(self, dim: int) -> int:
        """How many of ``dim``'s indices one thread walks in registers."""
        return math.prod(it.extent for it in self.local_iters(dim))

    def thread_extent(self, dim: int) -> int:
        """How many of ``dim``'s indices are spread across threads."""
        return math.prod(it.extent for it in self.thread_iters(dim))

    def lane_bits(self, dim: int) -> tuple[int, ...]:
        """The lane-index bits moved by ``dim``'s ``laneid`` iters, ascending.

        An iter of extent ``2**k`` and stride ``2**b`` moves bits ``b .. b+k-1``; extent-1
        iters move none. Only ``laneid`` iters count (not ``tid_in_wg``). Raises
        ``LayoutError`` when an extent or stride is not a power of two, two iters move the
        same bit, or a bit is above 4.
        """
        d = self._dim_index(dim)
        return _lane_bits(self.shard[d], f"dim {d}")

    def replica_lane_bits(self) -> tuple[int, ...]:
        """The lane-index bits moved by the replica's ``laneid`` iters; as ``lane_bits``."""
        return _lane_bits(self.replica, "replica")

    # -- validity -----------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Every reason this layout is invalid; empty when it is valid.

        Rules, checked in this order (a later group only when the earlier ones pass):

        1. every extent >= 1; strides >= 1 on thread axes and >= 0 on ``m``; every
           integer fits in 64 bits;
        2. every axis stays inside what the hardware has (``AXIS_LIMITS``): a lane below
           32, ``wid_in_wg`` below 4, ``tid_in_wg`` below 128, ``warpid`` below 32 (a block
           has at most 1024 threads), ``cta_in_cluster`` below 16 (a cluster has at most
           16 CTAs), a register slot below ``MAX_REGISTERS``;
        3. no two (coordinate, replica copy) pairs share a (thread, slot) place: not two
           coordinates, within one replica copy or across copies, and not two copies of one
           coordinate. So a replica iter moves only thread bits and slots the shard leaves
           unused.

        The cost never grows with the extents: groups 1 and 2 are sums over the iters, and
        group 3 is either a sort of the iters (when their strides dominate one another, as
        in every layout made of bit fields) or an enumeration bounded by the places that
        group 2 allows. At most one shared place is reported.
        """
        reasons = []
        for where, it in self._named_iters():
            for what, v in (("extent", it.extent), ("stride", it.stride)):
                if not INT64_MIN <= v <= INT64_MAX:
                    reasons.append(f"{where}: {what} {v} does not fit in 64 bits")
            if it.extent < 1:
                reasons.append(f"{where}: extent {it.extent} must be >= 1")
            if it.axis == "m" and it.stride < 0:
                reasons.append(f"{where}: register stride {it.stride} must be >= 0")
            if it.axis != "m" and it.stride < 1:
                reasons.append(f"{where}: stride {it.stride} on {it.axis} must be >= 1")
        if reasons:
            return reasons
        for axis in AXES:
            reach = self.reach(axis)
            if reach >= AXIS_LIMITS[axis]:
                reasons.append(_reach_text(axis, reach))
        return reasons or self._shared_place()

    def _named_iters(self):
        for d, dim in enumerate(self.shard):
            for k, it in enumerate(dim):
                yield f"dim {d} iter {k}", it
        for k, it in enumerate(self.replica):
            yield f"replica iter {k}", it

    def reach(self, axis: str) -> int:
        """The largest offset any element (any replica copy) has on ``axis``; 0 when no
        iter uses it. Needs non-negative strides."""
        return sum((it.extent - 1) * it.stride for it in self._all_iters() if it.axis == axis)

    def thread_reach(self) -> int:
        """The largest thread index any element lands on (lane + 32 * warp + tid)."""
        return sum(
            (it.extent - 1) * it.stride * _AXIS_WEIGHT[it.axis][0] for it in self._all_iters()
        )

    def _all_iters(self) -> tuple[Iter, ...]:
        return tuple(itertools.chain(*self.shard, self.replica))

    def _shared_place(self) -> list[str]:
        """Rule 3 of ``problems``: the first shared place, as a reason (none: [])."""
        iters = self._all_iters()
        slots = self.reach("m") + 1
        # One integer per place: thread * slots + slot; each iter adds digit * weight.
        weights = [it.stride * (_AXIS_WEIGHT[it.axis][0] * slots + _AXIS_WEIGHT[it.axis][1]) for it in iters]
        moving = sorted((w, it.extent) for w, it in zip(weights, iters) if it.extent > 1)
        reach = 0
        for w, extent in moving:  # dominant strides: each step clears all smaller ones
            if w <= reach:
                break
            reach += (extent - 1) * w
        else:
            return []
        # Enumerate the element copies in order (the last iter innermost), but never more
        # than one beyond the number of places: past that, two must share a place.
        places = (self.thread_reach() + 1) * slots
        count = min(math.prod(it.extent for it in iters), places + 1)
        rest, keys = np.arange(count, dtype=np.int64), np.zeros(count, np.int64)
        for w, it in zip(reversed(weights), reversed(iters)):
            rest, digit = np.divmod(rest, it.extent)
            keys += digit * w
        order = np.argsort(keys, kind="stable")
        same = np.flatnonzero(keys[order][1:] == keys[order][:-1])
        if not same.size:
            return []
        first, second = (int(i) for i in sorted(order[same[0] : same[0] + 2]))
        place = _place_text(_place(*divmod(int(keys[first]), slots)))
        return [f"coordinates {self._copy_text(first)} and {self._copy_text(second)} both map to {place}"]

    def _copy_text(self, index: int) -> str:
        """Element copy ``index`` (row-major over the coordinates, replica copy innermost)."""
        copies = math.prod(it.extent for it in self.replica)
        coord, copy = divmod(index, copies)
        digits = []
        for extent in reversed(self.shape):
            coord, digit = divmod(coord, extent)
            digits.append(digit)
        text = str(tuple(digits[::-1]))
        return text + (f" (replica copy {copy})" if copy else "")


# -- helpers ------------------------------------------------------------------------------


def _place(thread: int, slot: int) -> Place:
    return Place(thread % WARP_SIZE, thread // WARP_SIZE, slot)


def _place_text(place: Place) -> str:
    """``lane 3 slot 1``, or ``lane 3 warp 2 slot 1`` off warp 0, and ``... cta 1 ...``
    off the first CTA of a cluster."""
    cta, warp = divmod(place.warp, MAX_BLOCK_THREADS // WARP_SIZE)
    return f"lane {place.lane}{f' warp {warp}' if warp else ''}{f' cta {cta}' if cta else ''} slot {place.slot}"


def _reach_text(axis: str, reach: int) -> str:
    limit = AXIS_LIMITS[axis]
    what = {
        "m": f"register slot {reach}, but a thread's tile may span at most {limit} slots",
        "laneid": f"lane {reach}, but a warp has lanes 0..{limit - 1}",
        "wid_in_wg": f"warp {reach} of its warpgroup, but a warpgroup has warps 0..{limit - 1}",
        "tid_in_wg": f"thread {reach} of its warpgroup, but a warpgroup has threads 0..{limit - 1}",
        "warpid": f"warp {reach}, but a block has at most {limit} warps",
        "cta_in_cluster": f"CTA {reach} of its cluster, but a cluster has at most {limit} CTAs",
    }[axis]
    return f"{axis} reaches {what}"


def _extent_text(it: Iter) -> str:
    return str(it.extent)


def _stride_text(it: Iter) -> str:
    """``4`` for a register stride, ``4@laneid`` otherwise."""
    return str(it.stride) if it.axis == "m" else f"{it.stride}@{it.axis}"


def _paren(items) -> str:
    return "(" + ", ".join(items) + ")"


def row_major_iters(extents: Sequence[int]) -> list[Iter]:
    """Register iters over ``extents`` with row-major strides (the last is innermost)."""
    iters, stride = [], 1
    for extent in reversed(extents):
        iters.append(Iter(extent, stride))
        stride *= extent
    return iters[::-1]


def _merged(iters: list[Iter]) -> list[Iter]:
    """Merge adjacent (outer, inner) pairs that walk one axis contiguously (see ``canonical``).

    One left-to-right pass is enough: a merged iter keeps ``stride * extent`` of its outer
    part and the stride of its inner part, which is exactly what the next test needs.
    """
    out = []
    for inner in iters:
        outer = out[-1] if out else None
        if (
            outer
            and outer.axis == inner.axis
            and outer.stride == inner.stride * inner.extent
            and min(outer.extent, inner.extent) >= 1
        ):
            out[-1] = Iter(outer.extent * inner.extent, inner.stride, inner.axis)
        else:
            out.append(inner)
    return out


def _lane_bits(iters: Sequence[Iter], where: str) -> tuple[int, ...]:
    """The lane bits moved by the ``laneid`` iters among ``iters``; see ``lane_bits``."""
    mover = {}  # lane bit -> index of the iter that moves it
    for k, it in enumerate(iters):
        if it.axis != "laneid" or it.extent == 1:
            continue
        for name, value in (("extent", it.extent), ("stride", it.stride)):
            if value < 1 or value & (value - 1):
                raise LayoutError(f"{where} iter {k}: laneid {name} {value} is not a power of two")
        low = it.stride.bit_length() - 1
        for bit in range(low, low + it.extent.bit_length() - 1):
            if bit >= LANE_BITS:
                raise LayoutError(f"{where} iter {k}: moves lane bit {bit}, but lanes have bits 0..4")
            if bit in mover:
                raise LayoutError(f"{where}: iters {mover[bit]} and {k} both move lane bit {bit}")
            mover[bit] = k
    return tuple(sorted(mover))
