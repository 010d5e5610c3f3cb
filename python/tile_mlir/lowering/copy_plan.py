"""The plan of one ``tile.copy``: which thread holds which elements, which accesses it
makes, how wide they are and what is proven about them.

Pure bookkeeping over a ``CopyInfo`` and a few facts read off the IR (``Facts``);
``copy.py`` emits the IR. docs/lowering-copy.md explains the algorithm.

* **Threads.** Every thread-axis iter of the (canonical) layout, shard and replica,
  moves the thread index in the scope by ``weight`` per digit (``laneid`` and
  ``tid_in_wg``: its stride; ``warpid`` and ``wid_in_wg``: 32 × its stride). Sorted by
  weight, the iters must *nest*: each weight at least the previous weight × extent. A
  thread's digits are then read off its index from the heaviest iter down
  (``digit = rest / weight``, ``rest = rest % weight``); a thread whose index no digits
  make (a digit past its extent, or a rest left over) holds nothing.
* **Registers.** The register iters (axis ``m``) of the shard enumerate a thread's
  elements; each digit adds ``slot`` to the register slot and ``inner`` to one tile
  coordinate. A register replica (``R[k : n]``) repeats every element ``copies`` slots
  further: a load writes each copy, a store reads the first.
* **Vectors.** When the innermost iter of the last dim is a register iter, a thread
  holds ``run`` consecutive elements of a memory row. They move as vectors of ``width``
  elements: a power of two dividing ``run``, at most 16 bytes, and no wider than the
  proven alignment allows (``vector_width``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..analysis_copy import CopyInfo
from ..layout import Iter
from ..vocab import DTYPE_BYTES, MAX_VECTOR_BYTES, WARP_SIZE

# A known multiple of every power of two asked about: what zero is a multiple of.
ZERO = 1 << 40

_WEIGHT = {"laneid": 1, "tid_in_wg": 1, "warpid": WARP_SIZE, "wid_in_wg": WARP_SIZE}


def pow2(n: int) -> int:
    """The largest power of two dividing ``n`` (``ZERO`` for 0)."""
    return ZERO if n == 0 else min(n & -n, ZERO)


@dataclass(frozen=True)
class ThreadIter:
    weight: int  # thread index per digit
    extent: int
    dim: int | None  # the tile dim it indexes; None for a replica iter
    inner: int  # tile coordinate per digit, in ``dim``


@dataclass(frozen=True)
class RegIter:
    extent: int
    slot: int  # register slots per digit
    dim: int
    inner: int  # tile coordinate per digit, in ``dim``


@dataclass(frozen=True)
class Facts:
    """What the IR around the op proves (read by ``copy.py``).

    ``origin``: per memory dim, a power of two the origin index is known to be a
    multiple of (``ZERO`` for the constant 0). ``constant``: per dim, the origin's value
    when it is a constant, else None. ``base``: the bytes the memref's base address is
    known to be aligned to. ``threads``: the threads of one scope instance."""

    origin: tuple[int, ...]
    constant: tuple[int | None, ...]
    base: int
    threads: int


class CopyPlan:
    def __init__(self, info: CopyInfo):
        self.info = info
        layout = info.layout.canonical()
        self.shape = layout.shape
        self.rank = layout.rank
        self.bytes = DTYPE_BYTES[info.dtype]
        threads, regs = [], []
        for d, dim in enumerate(layout.shard):
            inner, mine = 1, []
            for it in reversed(dim):
                if it.extent > 1:
                    if it.axis == "m":
                        mine.append(RegIter(it.extent, it.stride, d, inner))
                    else:
                        threads.append(ThreadIter(it.stride * _WEIGHT[it.axis], it.extent, d, inner))
                inner *= it.extent
            regs += mine[::-1]
        for it in layout.replica:
            if it.extent > 1 and it.axis != "m":
                threads.append(ThreadIter(it.stride * _WEIGHT[it.axis], it.extent, None, 0))
        self.threads = sorted(threads, key=lambda t: t.weight)
        self.regs = regs  # dims in order, each outer iter first: the last is the innermost of the last dim
        self.copies = _register_copies(layout.replica)
        last = layout.shard[-1][-1]
        self.run = last if last.axis == "m" and last.extent > 1 else None

    # -- threads ---------------------------------------------------------------------

    def nest_problem(self) -> str | None:
        """Why the thread iters do not nest (module docstring), or None."""
        for a, b in zip(self.threads, self.threads[1:]):
            if b.weight < a.weight * a.extent:
                return (
                    f"the layout's thread iters do not nest: one of extent {a.extent} moves the thread "
                    f"index by {a.weight}, the next by {b.weight} < {a.weight} x {a.extent}, so a "
                    "thread's digits cannot be read off its index"
                )
        return None

    # -- accesses ----------------------------------------------------------------------

    def accesses(self, width: int) -> list[RegIter]:
        """The register iters that enumerate a thread's accesses of ``width`` elements:
        every register iter, the innermost of the last dim cut to ``width`` elements."""
        if width == 1:
            return list(self.regs)
        run = self.regs[-1]
        outer = RegIter(run.extent // width, run.slot * width, run.dim, width)
        return self.regs[:-1] + ([outer] if outer.extent > 1 else [])

    def count(self, width: int) -> int:
        return math.prod(it.extent for it in self.accesses(width))

    # -- what is proven -------------------------------------------------------------------

    def memory_strides(self) -> list[int]:
        """Per memory dim, a power of two its stride (in elements) is a multiple of."""
        out, stride = [], 1
        for extent in reversed(self.info.memory.shape):
            out.append(stride)
            stride = stride * pow2(extent) if extent is not None else stride
        return out[::-1]

    def alignment(self, facts: Facts, width: int) -> int:
        """A power of two every access's address is a multiple of, in bytes."""
        strides = self.memory_strides()
        terms = [] if self.info.alignment is None else [self.info.alignment]
        if self.info.alignment is None:
            terms.append(facts.base)
            terms += [min(ZERO, o * strides[d] * self.bytes) for d, o in enumerate(facts.origin)]
        terms += [pow2(t.inner) * strides[t.dim] * self.bytes for t in self.threads if t.dim is not None]
        terms += [pow2(r.inner) * strides[r.dim] * self.bytes for r in self.accesses(width)]
        return min(terms, default=ZERO)

    def vector_width(self, facts: Facts) -> tuple[int, list[str]]:
        """The widest vector (elements) the layout and the proven alignment allow, and why
        it is not wider (empty when it reaches 16 bytes)."""
        limit = MAX_VECTOR_BYTES // self.bytes
        if self.run is None:
            last = self.info.layout.canonical().shard[-1][-1]
            where = "has extent 1" if last.extent == 1 else f"is on {last.axis}"
            return 1, [f"the innermost iter of the last dim {where}: no thread holds two consecutive elements of a memory row"]
        widest = min(pow2(self.run.extent), limit)
        why = [] if widest == limit else [f"a thread holds runs of {self.run.extent} consecutive elements"]
        width = widest
        while width > 1 and self.alignment(facts, width) < width * self.bytes:
            width //= 2
        if width < widest:
            why.append(self._alignment_reason(facts, width * 2))
        return width, why

    def _alignment_reason(self, facts: Facts, width: int) -> str:
        proven = self.alignment(facts, width)
        source = (
            f"the alignment attribute asserts {self.info.alignment}"
            if self.info.alignment is not None
            else f"the base is aligned to {facts.base} and the origin indices are multiples of "
            f"{[min(o, 1 << 20) for o in facts.origin]}"
        )
        return (
            f"{width} x {self.info.dtype} needs {width * self.bytes}-byte alignment, but the accesses are "
            f"proven aligned to {proven} bytes only ({source}; an alignment attribute asserts more)"
        )

    def may_straddle(self, facts: Facts, width: int) -> bool:
        """Whether a vector may run past the end of the last memory dim: unless that dim
        is static and a multiple of ``width`` and every vector starts at a column that is
        a multiple of ``width``."""
        last = self.rank - 1
        extent = self.info.memory.shape[last]
        if width == 1:
            return False
        if extent is None or extent % width:
            return True
        starts = [facts.origin[last]]
        starts += [pow2(t.inner) for t in self.threads if t.dim == last]
        starts += [pow2(r.inner) for r in self.accesses(width) if r.dim == last]
        return min(starts) < width

    def in_bounds(self, facts: Facts, dim: int) -> bool:
        """Whether every element of the tile is inside memory dim ``dim``, statically."""
        origin, extent = facts.constant[dim], self.info.memory.shape[dim]
        return origin is not None and extent is not None and 0 <= origin and origin + self.shape[dim] <= extent


def _register_copies(replica: tuple[Iter, ...]) -> list[int]:
    """The slot offsets of a register replica's copies, 0 first."""
    copies = [0]
    for it in replica:
        if it.axis == "m":
            copies = [c + digit * it.stride for c in copies for digit in range(it.extent)]
    return copies
