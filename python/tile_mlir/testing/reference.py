"""A correctness reference for ``tile.reduce`` that shares nothing with the code under test.

The differential suite (``tile_mlir.testing.differential``) judges the interpreter and
the GPU against this module, bit for bit. It is written from docs/spec.md alone (and,
for operands in workgroup memory, from the order docs/lowering-shared.md documents),
and it imports nothing from tile_mlir: not the layout classes, not the analysis, not the
lowering's plan, not the interpreter. Where the lowering is wrong, it cannot agree by
construction. It needs numpy only (bf16 is rounded here, on the bits), so it runs on a
GPU machine without MLIR.

What it computes, for one op (``ReduceOp``, plain data) and logical inputs:

* **Where each element lives** (``reference_layout``): its own parser of the layout
  text and forward map, every place (thread, slot) of every coordinate, replica copies
  included.
* **Whether the configuration is valid** by the spec (``problems``), and whether the
  documented exchange is defined for its layout pair (``exchange_problem``): for every
  kept coordinate and thread replica copy, the threads holding its partials must be
  closed under each reduced thread bit, since the exchange pairs thread t with
  t xor 2^b; and every dst place must be on such a thread. A configuration that fails
  this cannot be computed, and the compiler must reject it.
* **The result** (``reduce``), in the documented order (docs/spec.md, "Fold order"):
  per kept coordinate and thread copy, each thread folds the reduced coordinates it holds
  (row-major, each once, ``fold`` linear or tree); then the lane butterfly over the
  reduced lane bits, highest first, combining the partial of the thread whose bit is
  clear (left) with the other (right); then the warps' partials in ascending order of
  the reduced warp bits, then the CTAs' likewise (linear or tree); then ``accum``, the
  old value left. Every combine rounds to the element type; a NaN result is canonical.

``tile.copy`` is in ``reference_copy``, the element types' numbers in ``reference_numbers``.

The combine is a function over tuples of values, ``combine(left, right) -> tuple``, with
one value per operand (``ReduceOp.dtypes``), so ``reduce`` takes k srcs and k old dsts:
the named kinds are the case k = 1 (``named``); argmax and argmin take one src and pair
each value with its index (``arg``); a combiner function is ``ReduceOp.combine``, the
user's ``f`` as Python (the caller's: this module knows no combiner), folded in the order
above, its results rounded to their types (docs/spec.md, "Combiner reductions"; in
workgroup memory each lane folds a contiguous run). Values are Python floats (the exact value
of the element) and ints; ``round_to(dtype, x)`` rounds one to its type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Callable

import numpy as np

from .reference_layout import CTA_BIT, LANE_BITS, Layout, layout_problems, pow2
from .reference_numbers import (  # noqa: F401  (re-exported)
    _ROUND, ARG_KINDS, CANONICAL_NAN, FLOATS, KINDS, arg, from_values, named, round_to, storage_dtype, to_values)

__all__ = [
    "CANONICAL_NAN", "ReduceOp", "exchange_problem", "from_values", "meaning", "named",
    "problems", "reduce", "round_to", "storage_dtype", "to_values", "unsupported",
]


@dataclass(frozen=True)
class ReduceOp:
    """One ``tile.reduce``, as plain data: what docs/spec.md "The op" lists."""

    scope: str
    axes: tuple[int, ...]
    dtypes: tuple[str, ...]  # one per operand (k): the named kinds have one
    src_shape: tuple[int, ...]  # the memref shapes
    dst_shape: tuple[int, ...]
    kind: str | None = None  # a named kind, argmax or argmin, or None with ``combine``
    src_layout: str | None = None  # None: S[memref shape]
    dst_layout: str | None = None
    accum: bool = False
    fold: str = "linear"
    storage: str = "local"  # "local" (registers) or "shared" (workgroup memory)
    threads: int = 1  # the threads of one instance of the scope (the shared variant's T)
    function: str | None = None  # a combiner function's name (its callable: ``combine``)
    combine: Callable | None = field(default=None, compare=False)

    @cached_property
    def src(self) -> Layout:
        return Layout.parse(self.src_layout) if self.src_layout else Layout.row_major(self.src_shape)

    @cached_property
    def dst(self) -> Layout:
        return Layout.parse(self.dst_layout) if self.dst_layout else Layout.row_major(self.dst_shape)

    @cached_property
    def reduced(self) -> tuple[int, ...]:
        rank = len(self.src.shape)
        return tuple(sorted({a % rank for a in self.axes}))

    @property
    def arg(self) -> bool:
        """argmax or argmin: one src (the values), two dsts (value, index)."""
        return self.kind in ARG_KINDS

    @property
    def src_dtypes(self) -> tuple[str, ...]:
        return self.dtypes[:1] if self.arg else self.dtypes

    @property
    def combiner(self) -> Callable:
        if self.combine is not None:
            return self.combine
        return arg(self.kind) if self.arg else named(self.kind, self.dtypes[0])


# --- the rules ----------------------------------------------------------------------------


def _kept_map(op: ReduceOp, src: Layout, dst: Layout) -> list[int] | None:
    """For each dst dim, the src dim it is (or None where a reduced dim is kept with extent
    1); None when dst's shape is not src's with each reduced dim dropped or kept as 1."""
    red, shape, want = set(op.reduced), src.shape, dst.shape

    def match(d: int, e: int):
        if d == len(shape):
            return [] if e == len(want) else None
        if d in red:
            if e < len(want) and want[e] == 1:
                rest = match(d + 1, e + 1)
                if rest is not None:
                    return [None, *rest]
            return match(d + 1, e)
        if e < len(want) and want[e] == shape[d]:
            rest = match(d + 1, e + 1)
            return None if rest is None else [d, *rest]
        return None

    return match(0, 0)


@lru_cache(maxsize=4096)
def problems(op: ReduceOp) -> list[str]:
    """Why ``op`` is not valid by docs/spec.md (empty when it is): the operands, axes and
    shapes, each layout's rules 1-6 and its scope's axes, and the rules across threads."""
    out = []
    if op.kind is None and op.combine is None or op.kind is not None and op.kind not in KINDS + ARG_KINDS:
        out.append(f"kind {op.kind}")
    if op.arg and (len(op.dtypes) != 2 or op.dtypes[1] not in ("i32", "i64")):
        out.append(f"{op.kind} needs a value and an i32 or i64 index type, not {op.dtypes}")
    try:
        src, dst = op.src, op.dst
    except ValueError as e:
        return [*out, str(e)]
    rank = len(src.shape)
    if not op.axes or any(not -rank <= a < rank for a in op.axes):
        return [*out, f"axes {op.axes} of a rank-{rank} src"]
    for name, lay, memref in (("src", src, op.src_shape), ("dst", dst, op.dst_shape)):
        # (a tile in workgroup memory is not held in registers: no register budget)
        out += [f"{name}_layout: {p}" for p in layout_problems(lay, op.scope) if op.storage == "local" or "span" not in p]
        if math.prod(memref) < lay.span or (not (op.src_layout if name == "src" else op.dst_layout)
                                            and lay.shape != tuple(memref)):
            out.append(f"{name} memref {memref} does not hold the layout's span {lay.span}")
        # "Exec scopes": an instance of a warp has 32 threads, of a warpgroup 128
        limit = {"warp": 32, "warpgroup": 128}.get(op.scope)
        if limit and not out and int(lay.places[2].max()) >= limit:
            out.append(f"{name}_layout reaches thread {int(lay.places[2].max())} of a {op.scope}")
        for it in lay.replica:
            if it.axis != "m" and not (pow2(it.extent) and pow2(it.stride)):
                out.append(f"{name} replica iter {it} is not a power of two")  # rule 6
    if out:
        return out
    for d in op.reduced:
        for it in src.dims[d]:
            if it.axis != "m" and not (pow2(it.extent) and pow2(it.stride)):
                out.append(f"reduced dim {d} iter {it} is not a power of two")  # rule 6
    if _kept_map(op, src, dst) is None:
        out.append(f"dst shape {dst.shape} is not src {src.shape} reduced over {op.reduced}")
    if out or op.scope == "thread":
        return out
    red_bits = set(src.thread_bits(it for d in op.reduced for it in src.dims[d]))
    rep_bits = set(src.thread_bits(src.replica))
    if red_bits & rep_bits:
        out.append(f"reduced thread bits {sorted(red_bits & rep_bits)} are src replica bits")
    if set(dst.thread_bits(dst.replica)) != red_bits | rep_bits:
        out.append(f"dst replica bits {sorted(dst.thread_bits(dst.replica))} are not "
                   f"src replica bits + reduced bits {sorted(red_bits | rep_bits)}")
    # Each kept dst element sits on the threads of its src dim (copy 0: with the reduced
    # coordinates 0).
    if not np.array_equal(_kept_threads(op, src, dst), dst.base[0]):
        out.append("a kept dim of dst is not on the threads of its src dim")
    if op.scope in ("cta", "cluster"):
        for name, lay in (("src", src), ("dst", dst)):
            if lay.reach("warpid") != src.reach("warpid") or lay.reach("cta_in_cluster") != src.reach("cta_in_cluster"):
                out.append(f"{name}_layout spans other warps or CTAs than src_layout")
        if not pow2(src.reach("cta_in_cluster")):
            out.append(f"a cluster of {src.reach('cta_in_cluster')} CTAs")
    return out


@lru_cache(maxsize=4096)
def _split(op: ReduceOp):
    """src coordinate index -> (kept index, reduced index), row-major each."""
    shape = op.src.shape
    kept = [d for d in range(len(shape)) if d not in op.reduced]
    coords = np.stack(np.unravel_index(np.arange(math.prod(shape)), shape), axis=1)
    s = np.ravel_multi_index(tuple(coords[:, d] for d in kept), [shape[d] for d in kept]) if kept else 0
    r = np.ravel_multi_index(tuple(coords[:, d] for d in op.reduced), [shape[d] for d in op.reduced])
    return np.zeros(len(coords), np.int64) + s, r


def _kept_threads(op, src, dst) -> np.ndarray:
    """The copy-0 thread of (s, reduced coordinates 0) in src, for each dst coordinate."""
    s, r = _split(op)
    by_s = np.zeros(math.prod(dst.shape), np.int64)
    by_s[s[r == 0]] = src.base[0][r == 0]
    return by_s


@lru_cache(maxsize=4096)
def _thread_table(op: ReduceOp) -> np.ndarray:
    """threads[s, r, c]: the thread holding src (s, r) in thread replica copy c."""
    s, r = _split(op)
    src = op.src
    ct, _ = src.copies("thread")
    n_s, n_r = int(s.max()) + 1, int(r.max()) + 1
    table = np.zeros((n_s, n_r, len(ct)), np.int64)
    table[s, r, :] = src.base[0][:, None] + ct[None, :]
    return table


@lru_cache(maxsize=4096)
def _reduced_bits(op: ReduceOp) -> list[int]:
    src = op.src
    return sorted(src.thread_bits(it for d in op.reduced for it in src.dims[d]))


@lru_cache(maxsize=4096)
def exchange_problem(op: ReduceOp) -> str | None:
    """Why the documented exchange is not defined for ``op``'s layout pair, or None.

    For every kept coordinate s and thread replica copy c, the threads holding src (s, r, c)
    for some r must be closed under t -> t xor 2^b for every reduced thread bit b (the
    exchange pairs exactly those threads), and every dst place of s must be on one of them."""
    if op.storage != "local" or op.scope == "thread":
        return None
    src, dst = op.src, op.dst
    table = _thread_table(op)
    n_s, n_r, n_c = table.shape
    group = np.broadcast_to((np.arange(n_s)[:, None] * n_c + np.arange(n_c)[None, :])[:, None, :], table.shape)
    keys = (group.astype(np.int64) << 16) | table
    for b in _reduced_bits(op):
        moved = (group.astype(np.int64) << 16) | (table ^ (1 << b))
        bad = ~np.isin(moved, keys)
        if bad.any():
            s, r, c = (int(v[0]) for v in np.nonzero(bad))
            held = sorted(set(int(t) for t in table[s, :, c]))
            return (f"kept coordinate {s} (copy {c}) is on threads {held[:8]}{'...' if len(held) > 8 else ''}: "
                    f"thread {table[s, r, c]} has no partner across bit {b} (thread {table[s, r, c] ^ (1 << b)})")
    held = set(zip(np.repeat(np.arange(n_s), n_r * n_c).tolist(), table.reshape(-1).tolist()))
    k, _, thread, _ = dst.places
    for s, t in zip(k.tolist(), thread.tolist()):
        if (s, t) not in held:
            return f"dst coordinate {s} on thread {t}, which holds none of its src elements"
    return None


@lru_cache(maxsize=4096)
def unsupported(op: ReduceOp) -> str | None:
    """A valid configuration docs/spec.md "What is not supported" lists, or None: a
    register-tile reduction across warps whose kept dim moves a src replica bit."""
    if op.storage != "local" or op.scope not in ("warpgroup", "cta", "cluster"):
        return None
    src = op.src
    if not any(b >= LANE_BITS for b in _reduced_bits(op)):
        return None
    rep = sum(1 << b for b in src.thread_bits(src.replica))
    kept = np.bitwise_or.reduce(_thread_table(op)[:, 0, 0])
    if int(kept) & rep:
        return f"a kept dim moves src replica bits {bin(int(kept) & rep)} across warps"
    return None


# --- the result -----------------------------------------------------------------------------


def _fold(values: list[tuple], op: Callable, tree: bool) -> tuple:
    """docs/spec.md "Fold order": ``acc = x0; acc = op(acc, x1); ...``, or pairwise level
    by level (element 2k with 2k+1, an odd last one moving up)."""
    if not tree:
        acc = values[0]
        for v in values[1:]:
            acc = op(acc, v)
        return acc
    while len(values) > 1:
        pairs = [op(a, b) for a, b in zip(values[0::2], values[1::2])]
        values = pairs + values[2 * len(pairs):]
    return values[0]


def _rounding(op: ReduceOp) -> Callable:
    """The combine, each result rounded to its operand's type (a named max or min returns
    one of its operands: nothing to round)."""
    combine = op.combiner
    if op.combine is None and op.kind != "sum":
        return combine
    rounds = [_ROUND[dt] for dt in op.dtypes]
    if len(rounds) == 1:
        r0 = rounds[0]
        return lambda l, r: (r0(combine(l, r)[0]),)
    return lambda l, r: tuple(f(v) for f, v in zip(rounds, combine(l, r)))


def _exchange(partial: dict[int, tuple], bits: list[int], op: Callable, tree: bool) -> tuple:
    """The threads' partials of one group -> its result: the butterfly over the lane bits,
    highest first (left: the thread whose bit is clear), then the partials along the warp
    bits, then along the CTA bits, each in ascending order."""
    lane = [b for b in bits if b < LANE_BITS]
    for b in sorted(lane, reverse=True):
        partial = {t: op(partial[t & ~(1 << b)], partial[t | (1 << b)]) for t in partial}
    for level in ([b for b in bits if LANE_BITS <= b < CTA_BIT], [b for b in bits if b >= CTA_BIT]):
        if not level:
            continue
        mask = sum(1 << b for b in level)
        spread = []  # partial j: the thread whose level bits, packed in ascending order, spell j
        for j in range(1 << len(level)):
            spread.append(sum(((j >> k) & 1) << b for k, b in enumerate(level)))
        folded = {}
        for t in partial:
            rest = t & ~mask  # each CTA (each cluster) folds its own warps' (CTAs') partials
            if rest not in folded:
                folded[rest] = _fold([partial[rest | o] for o in spread], op, tree)
        partial = {t: folded[t & ~mask] for t in partial}
    return partial[min(partial)]


def reduce(op: ReduceOp, srcs, olds=None) -> list[np.ndarray]:
    """The logical dsts of ``op`` (one per operand, storage dtype, NaNs canonical) for the
    logical ``srcs`` (and with accum, ``olds``), as docs/spec.md defines them. Raises
    ``ValueError`` where ``exchange_problem`` finds the exchange undefined."""
    bad = problems(op)
    if bad:
        raise ValueError(f"not a valid op: {bad}")
    why = exchange_problem(op)
    if why:
        raise ValueError(f"not computable: {why}")
    src, dst = op.src, op.dst
    combine, tree = _rounding(op), op.fold == "tree"
    s_of, r_of = _split(op)
    n_s = math.prod(dst.shape)
    n_r = math.prod(src.shape[d] for d in op.reduced)
    x = [[None] * n_r for _ in range(n_s)]  # x[s][r]: the k-tuple of src (s, r)
    for k, (s, r, e) in enumerate(zip(s_of.tolist(), r_of.tolist(), _elements(op, srcs))):
        x[s][r] = e
    if op.storage == "shared":
        results = [_shared(row, combine, tree, n_s, op.threads, op.kind is None) for row in x]
    else:
        results = _local(op, src, x, combine, tree)
    if op.accum:
        old = [to_values(o, dt) for o, dt in zip(olds, op.dtypes)]
        results = [combine(tuple(o[s] for o in old), res) for s, res in enumerate(results)]
    return [from_values([res[i] for res in results], dt, dst.shape) for i, dt in enumerate(op.dtypes)]


def _elements(op: ReduceOp, srcs) -> list[tuple]:
    """Each src element's partial, in flat src order: its k operands' values; argmax and
    argmin pair the value with its index, the row-major position among the reduced
    coordinates (docs/spec.md, "argmax and argmin")."""
    values = [to_values(x, dt) for x, dt in zip(srcs, op.src_dtypes)]
    if op.arg:
        values.append(_split(op)[1].tolist())
    return list(zip(*values))


def _local(op: ReduceOp, src: Layout, x, combine, tree) -> list[tuple]:
    """Registers: per kept coordinate and thread copy, the in-thread folds, then the
    exchange; every copy must give the same bits (they do, where the exchange is defined)."""
    table = _thread_table(op)
    bits = _reduced_bits(op)
    results, memo = [], {}
    for s in range(table.shape[0]):
        got = set()
        for c in range(table.shape[2]):
            threads = table[s, :, c].tolist()
            base = min(threads)
            # The order of the combines, relative to the group's first thread: the same
            # shape over the same values gives the same result.
            shape = tuple(t - base for t in threads)
            if (s, shape) not in memo:
                held: dict[int, list[int]] = {}
                for r, t in enumerate(threads):  # row-major r: each element once
                    held.setdefault(t, []).append(r)
                partial = {t: _fold([x[s][r] for r in rs], combine, tree) for t, rs in held.items()}
                memo[s, shape] = _exchange(partial, bits, combine, tree)
            got.add(tuple(map(repr, memo[s, shape])))
        if len(got) != 1:
            raise ValueError(f"not computable: kept coordinate {s}: the thread copies compute different values {got}")
        results.append(memo[s, shape])
    return results


def _group_size(elements: int, reduced: int, threads: int) -> int:
    """docs/lowering-shared.md "The group size G": the smallest power of two with
    E * G >= T, but at most 32, at most R, and a divisor of T."""
    g = 1
    while g * elements < threads and 2 * g <= min(32, reduced) and threads % (2 * g) == 0:
        g *= 2
    return g


def _shared(row: list[tuple], combine, tree, elements: int, threads: int, function: bool = False) -> tuple:
    """Workgroup operands (docs/lowering-shared.md, "Order"): G lanes each fold every G-th
    term (lane j: terms j, j + G, ...), then a butterfly over the G lanes, offset G/2
    first, the lower lane left; lane 0's value is the result. A combiner ``function``
    (docs/spec.md, "The lower coordinates go left", 5): lane j folds a contiguous run, the
    q = R // G terms from j q + min(j, R mod G) on, one more when j < R mod G."""
    g = _group_size(elements, len(row), threads)
    if function:
        q, extra = divmod(len(row), g)
        runs = [row[j * q + min(j, extra): (j + 1) * q + min(j + 1, extra)] for j in range(g)]
    else:
        runs = [row[j::g] for j in range(g)]
    lanes = {j: _fold(runs[j], combine, tree) for j in range(g)}
    bits = [b for b in range(g.bit_length() - 1)]
    return _exchange(lanes, bits, combine, tree)


def meaning(op: ReduceOp, srcs, olds=None) -> list[np.ndarray]:
    """``dst[s] = op over r of src[s, r]`` (then accum), folded in row-major order of r,
    whatever the layouts: the op's meaning where ``reduce`` has no defined order. Exact for
    the kinds whose result does not depend on the order (integer sums, max, min, argmax,
    argmin)."""
    combine = _rounding(op)
    elements = _elements(op, srcs)
    s_of, r_of = _split(op)
    rows: dict[int, list] = {}
    for k in np.lexsort((r_of, s_of)).tolist():
        rows.setdefault(int(s_of[k]), []).append(elements[k])
    results = [_fold(rows[s], combine, False) for s in range(len(rows))]
    if op.accum:
        old = [to_values(o, dt) for o, dt in zip(olds, op.dtypes)]
        results = [combine(tuple(o[s] for o in old), res) for s, res in enumerate(results)]
    return [from_values([res[i] for res in results], dt, op.dst.shape) for i, dt in enumerate(op.dtypes)]
