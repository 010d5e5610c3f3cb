"""The text of a tile layout: a recursive-descent parser for its grammar.

``TileLayout.parse`` calls ``Parser(text).layout()``. The grammar (docs/spec.md,
"Grammar")::

    layout  := shard ( "+" replica )?
    shard   := "S[" modes ( ":" strides )? "]"
    replica := "R[" modes ":" strides "]"
    modes   := INT | "(" mode ("," mode)* ")"      mode := INT | "(" INT ("," INT)* ")"
    strides := the same nesting, each leaf INT (axis m) or INT "@" AXIS

Integers may be negative (so that every layout prints to parseable text) but must fit
in 64 bits, and a parenthesised list may end with a comma (TIRx writes ``S[(4,)]``).
"""

from __future__ import annotations

import re

from .errors import LayoutError
from .layout import Iter, TileLayout, row_major_iters
from .vocab import AXES, INT64_MAX, INT64_MIN


class Parser:
    """A recursive-descent parser for the layout grammar; one instance per text."""

    _TOKEN = re.compile(r"\s*(?:(-?\d+)|([A-Za-z_]\w*)|([\[\]():,@+])|(\S))")

    def __init__(self, text: str):
        self.tokens = []  # (kind, value, column); kind is "int", "name" or the punctuation itself
        for match in self._TOKEN.finditer(text):
            number, name, punct, other = match.groups()
            column = match.start(match.lastindex) + 1
            if other:
                raise _error(column, f"unexpected character {other!r}")
            if number is not None:
                if len(number.lstrip("-")) > 19 or not INT64_MIN <= int(number) <= INT64_MAX:
                    raise _error(column, f"{number} does not fit in 64 bits")
                self.tokens.append(("int", int(number), column))
            elif name:
                self.tokens.append(("name", name, column))
            else:
                self.tokens.append((punct, punct, column))
        self.tokens.append(("end", None, len(text) + 1))
        self.pos = 0

    # token plumbing

    def _peek(self) -> tuple:
        return self.tokens[self.pos]

    def _fail(self, expected: str):
        kind, value, column = self._peek()
        got = "end of text" if kind == "end" else repr(str(value))
        raise _error(column, f"expected {expected}, got {got}")

    def _accept(self, kind: str, value=None) -> bool:
        token_kind, token_value, _ = self._peek()
        if token_kind == kind and value in (None, token_value):
            self.pos += 1
            return True
        return False

    def _expect(self, kind: str, value=None, what: str | None = None):
        token = self._peek()
        if not self._accept(kind, value):
            self._fail(what or repr(value or kind))
        return token[1]

    # grammar

    def layout(self) -> TileLayout:
        shard = self._shard()
        if not self._accept("+"):
            self._expect("end", what="'+' or end of text")
            return TileLayout(shard)
        replica = self._replica()
        self._expect("end", what="end of text")
        return TileLayout(shard, replica)

    def _shard(self) -> tuple[tuple[Iter, ...], ...]:
        self._expect("name", "S", what="'S['")
        self._expect("[")
        extents = _dims(self._nest(self._int))
        if self._accept(":"):
            column = self._peek()[2]
            strides = _dims(self._nest(self._stride))
            if [len(d) for d in strides] != [len(d) for d in extents]:
                raise _error(column, f"the strides' nesting (iters per dim: {_nesting(strides)}) "
                                     f"does not match the modes' ({_nesting(extents)})")
        else:
            flat = iter(row_major_iters([e for dim in extents for e in dim]))
            strides = [[(next(flat).stride, "m") for _ in dim] for dim in extents]
        self._expect("]")
        return tuple(
            tuple(Iter(e, s, axis) for e, (s, axis) in zip(dim_extents, dim_strides))
            for dim_extents, dim_strides in zip(extents, strides)
        )

    def _replica(self) -> tuple[Iter, ...]:
        self._expect("name", "R", what="'R['")
        self._expect("[")
        extents = _flat(self._nest(self._int))
        self._expect(":", what="':' (R[...] needs strides)")
        column = self._peek()[2]
        strides = _flat(self._nest(self._stride))
        if len(strides) != len(extents):
            raise _error(column, f"{len(strides)} replica strides for {len(extents)} modes")
        self._expect("]")
        return tuple(Iter(e, s, axis) for e, (s, axis) in zip(extents, strides))

    def _nest(self, leaf, depth: int = 2):
        """A leaf, or a parenthesised list of nests at most ``depth`` levels deep."""
        if depth == 0 and self._peek()[0] == "(":
            raise _error(self._peek()[2], "nested too deep: a mode is an integer or a parenthesised "
                                          "list of integers, as in S[(4, (2, 8))]")
        if depth == 0 or not self._accept("("):
            return leaf()
        items = [self._nest(leaf, depth - 1)]
        while self._accept(",") and self._peek()[0] != ")":  # a trailing comma is allowed
            items.append(self._nest(leaf, depth - 1))
        self._expect(")", what="',' or ')'")
        return items

    def _int(self) -> int:
        return self._expect("int", what="an integer")

    def _stride(self) -> tuple[int, str]:
        stride = self._int()
        if not self._accept("@"):
            return stride, "m"
        kind, axis, column = self._peek()
        if kind != "name":
            self._fail("an axis")
        if axis not in AXES:
            raise _error(column, f"unknown axis {axis!r} (expected one of {', '.join(AXES)})")
        self.pos += 1
        return stride, axis


def _error(column: int, reason: str) -> LayoutError:
    """A parse error at ``column`` (1-based) of the layout text."""
    return LayoutError(f"at column {column}: {reason}", column)


def _dims(nest) -> list[list]:
    """Shard nesting -> leaves per dim: ``4`` is one dim; ``(a, (b, c))`` is dims [a], [b, c]."""
    if not isinstance(nest, list):
        return [[nest]]
    return [item if isinstance(item, list) else [item] for item in nest]


def _flat(nest) -> list:
    """Replica nesting -> its leaves in order (nesting carries no meaning there)."""
    if not isinstance(nest, list):
        return [nest]
    return [leaf for item in nest for leaf in _flat(item)]


def _nesting(dims: list[list]) -> str:
    """How many iters each dim has, for error messages: ``2, 1``."""
    return ", ".join(str(len(d)) for d in dims)
