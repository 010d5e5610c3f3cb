"""The layouts of the correctness reference, written from docs/spec.md alone.

Part of ``tile_mlir.testing.reference`` (read its docstring first). This module has its
own parser of the layout text (docs/spec.md, "Tile layouts", "Grammar"), its own forward
map ("Forward map"), its own check of the rules a configuration must meet
("Validity", "Exec scopes", "The rules across threads"), and the check that the
documented exchange is defined for a layout pair (``exchange_problem``). It imports
nothing from tile_mlir, so nothing in it can agree with the compiler by construction:
only numpy and the standard library.

A place is (thread, slot): the thread is ``laneid + tid_in_wg + 32 * (wid_in_wg +
warpid) + 1024 * cta_in_cluster``, the slot the sum on ``m``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

# docs/spec.md, "Grammar" and "Forward map": each axis, and what one step on it adds to
# the thread index (0: the axis is the register slot, m).
AXIS_WEIGHT = {"m": 0, "laneid": 1, "tid_in_wg": 1, "wid_in_wg": 32, "warpid": 32, "cta_in_cluster": 1024}
# "Validity", rule 4: the largest value each thread axis may reach, plus one (warpid: the
# block's warps, checked by the caller against the launch).
AXIS_BOUND = {"laneid": 32, "wid_in_wg": 4, "tid_in_wg": 128, "warpid": 32, "cta_in_cluster": 16}
MAX_SPAN = 1024  # rule 5
# "Exec scopes": the axes each scope's layouts may name.
SCOPE_AXES = {
    "thread": ("m",),
    "warp": ("m", "laneid"),
    "warpgroup": ("m", "laneid", "wid_in_wg", "tid_in_wg"),
    "cta": ("m", "laneid", "warpid"),
    "cluster": ("m", "laneid", "warpid", "cta_in_cluster"),
}
LANE_BITS, CTA_BIT = 5, 10  # bits 0-4 are lane bits, 5-9 warp bits, 10-13 CTA bits


@dataclass(frozen=True)
class It:
    """One iter: an extent and a stride on one axis."""

    extent: int
    stride: int
    axis: str

    @property
    def weight(self) -> int:
        return AXIS_WEIGHT[self.axis]


# --- the parser ----------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(.))")


def _tokens(text: str) -> list[str]:
    out = []
    for m in _TOKEN.finditer(text):
        if m.group(0).strip():
            out.append(m.group(1) or m.group(2) or m.group(3))
    return out


class _Parser:
    def __init__(self, text: str):
        self.text, self.toks, self.i = text, _tokens(text), 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise ValueError(f"{self.text!r}: expected {want or 'more'}, got {tok or 'the end'}")
        self.i += 1
        return tok

    def leaf(self, strides: bool):
        n = self.take()
        if not n.isdigit():
            raise ValueError(f"{self.text!r}: expected an integer, got {n}")
        if strides and self.peek() == "@":
            self.take("@")
            axis = self.take()
            if axis not in AXIS_WEIGHT:
                raise ValueError(f"{self.text!r}: unknown axis {axis}")
            return int(n), axis
        return (int(n), "m") if strides else int(n)

    def group(self, inner):
        """``"(" item ("," item)* ","? ")"``."""
        self.take("(")
        items = [inner()]
        while self.peek() == ",":
            self.take(",")
            if self.peek() == ")":
                break
            items.append(inner())
        self.take(")")
        return items

    def mode(self, strides: bool):
        """``INT | "(" INT ("," INT)* ")"``: a list of leaves (the iters of one dim)."""
        if self.peek() == "(":
            return self.group(lambda: self.leaf(strides))
        return [self.leaf(strides)]

    def modes(self, strides: bool):
        """``INT | "(" mode ("," mode)* ")"``: a list of dims, each a list of leaves."""
        if self.peek() == "(":
            return self.group(lambda: self.mode(strides))
        return [[self.leaf(strides)]]


def _iters(text, extents, strides) -> list[list[It]]:
    if [len(d) for d in extents] != [len(d) for d in strides]:
        raise ValueError(f"{text!r}: the strides are not nested like the modes")
    return [[It(e, s, a) for e, (s, a) in zip(de, ds)] for de, ds in zip(extents, strides)]


@dataclass(frozen=True)
class Layout:
    """A parsed layout: the shard's iters per dim, and the replica's flat iters."""

    dims: tuple[tuple[It, ...], ...]
    replica: tuple[It, ...] = ()

    @staticmethod
    @lru_cache(maxsize=4096)
    def parse(text: str) -> Layout:
        p = _Parser(text)
        p.take("S")
        p.take("[")
        extents = p.modes(False)
        if p.peek() == ":":
            p.take(":")
            dims = _iters(text, extents, p.modes(True))
        else:  # row-major in registers, in the order written
            flat = [e for d in extents for e in d]
            strides = [math.prod(flat[k + 1:]) for k in range(len(flat))]
            dims, k = [], 0
            for d in extents:
                dims.append([It(e, strides[k + j], "m") for j, e in enumerate(d)])
                k += len(d)
        p.take("]")
        replica: list[It] = []
        if p.peek() == "+":
            p.take("+")
            p.take("R")
            p.take("[")
            extents = p.modes(False)
            p.take(":")
            nested = _iters(text, extents, p.modes(True))
            p.take("]")
            replica = [it for d in nested for it in d]  # nesting carries no meaning there
        if p.peek() is not None:
            raise ValueError(f"{text!r}: unexpected {p.peek()}")
        return Layout(tuple(map(tuple, dims)), tuple(replica))

    @staticmethod
    def row_major(shape) -> Layout:
        """``S[shape]``: the default layout of an operand without one."""
        return Layout.parse("S[(" + ", ".join(map(str, shape)) + ",)]")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(math.prod(it.extent for it in d) for d in self.dims)

    @property
    def iters(self) -> list[It]:
        return [it for d in self.dims for it in d] + list(self.replica)

    def reach(self, axis: str) -> int:
        """The largest value on ``axis`` over shard and replica, plus one."""
        return 1 + sum((it.extent - 1) * it.stride for it in self.iters if it.axis == axis)

    @property
    def span(self) -> int:
        return self.reach("m")

    # -- the forward map ------------------------------------------------------------------

    def _offsets(self, iters, digits):
        """(thread, slot) offsets of each row of ``digits`` (one column per iter)."""
        thread = sum(digits[:, k] * it.stride * it.weight for k, it in enumerate(iters) if it.axis != "m")
        slot = sum(digits[:, k] * it.stride for k, it in enumerate(iters) if it.axis == "m")
        n = digits.shape[0]
        return np.zeros(n, np.int64) + thread, np.zeros(n, np.int64) + slot

    @cached_property
    def base(self) -> tuple[np.ndarray, np.ndarray]:
        """(thread, slot) of replica copy 0 of every coordinate, row-major."""
        coords = _all(self.shape)
        cols = []
        for d, its in enumerate(self.dims):
            # mixed radix, the last iter least significant
            rest = coords[:, d]
            digits = []
            for it in reversed(its):
                digits.append(rest % it.extent)
                rest = rest // it.extent
            cols += list(reversed(digits))
        digits = np.stack(cols, axis=1) if cols else np.zeros((len(coords), 0), np.int64)
        return self._offsets([it for d in self.dims for it in d], digits)

    def copies(self, axes: str) -> tuple[np.ndarray, np.ndarray]:
        """The (thread, slot) offsets of every combination of the replica digits of the
        iters on thread axes (``axes="thread"``) or on ``m`` (``"m"``); row 0 is all digits 0."""
        its = [it for it in self.replica if (it.axis == "m") == (axes == "m")]
        return self._offsets(its, _all(tuple(it.extent for it in its)))

    @cached_property
    def places(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every place of every coordinate: (coordinate index, thread copy, thread, slot),
        four flat arrays; within a coordinate and thread copy, the register copies in order."""
        bt, bs = self.base
        ct, _ = self.copies("thread")
        _, rs = self.copies("m")
        n, c, g = len(bt), len(ct), len(rs)
        k = np.repeat(np.arange(n), c * g)
        copy = np.tile(np.repeat(np.arange(c), g), n)
        thread = (bt[:, None, None] + ct[None, :, None] + np.zeros(g, np.int64)[None, None, :]).reshape(-1)
        slot = (bs[:, None, None] + np.zeros(c, np.int64)[None, :, None] + rs[None, None, :]).reshape(-1)
        return k, copy, thread, slot

    def thread_bits(self, iters) -> list[int]:
        """The thread-index bits that power-of-two thread iters move."""
        out = []
        for it in iters:
            if it.axis != "m" and it.extent > 1:
                low = (it.stride * it.weight).bit_length() - 1
                out += range(low, low + it.extent.bit_length() - 1)
        return out


def _all(shape) -> np.ndarray:
    """Every coordinate of ``shape``, row-major, as rows."""
    if not shape:
        return np.zeros((1, 0), np.int64)
    grids = np.meshgrid(*[np.arange(e) for e in shape], indexing="ij")
    return np.stack([g.reshape(-1) for g in grids], axis=1).astype(np.int64)


def pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


# --- one layout: the rules ----------------------------------------------------------------


def layout_problems(layout: Layout, scope: str, *, warps: int | None = None) -> list[str]:
    """Why ``layout`` breaks docs/spec.md "Validity" rules 1-5 or its scope's axes."""
    problems = []
    for it in layout.iters:
        if it.extent < 1:
            problems.append(f"extent {it.extent} < 1")
        if it.stride < (0 if it.axis == "m" else 1):
            problems.append(f"stride {it.stride} on {it.axis}")
        if it.axis not in SCOPE_AXES[scope]:
            problems.append(f"axis {it.axis} at {scope} scope")
    for axis, bound in AXIS_BOUND.items():
        bound = warps if axis == "warpid" and warps is not None else bound
        if layout.reach(axis) > bound:
            problems.append(f"{axis} reaches {layout.reach(axis) - 1} >= {bound}")
    if layout.span > MAX_SPAN:
        problems.append(f"span {layout.span} > {MAX_SPAN}")
    if problems:
        return problems
    _, _, thread, slot = layout.places
    k = layout.places[0]
    key = thread * MAX_SPAN + slot
    order = np.argsort(key, kind="stable")
    same = key[order][1:] == key[order][:-1]
    clash = same & (k[order][1:] != k[order][:-1])
    if clash.any():
        at = order[1:][clash][0]
        problems.append(f"two coordinates at thread {thread[at]} slot {slot[at]}")
    return problems
