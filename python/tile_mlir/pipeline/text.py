"""The textual pass pipeline: mlir-opt's grammar, and nothing else.

``parse_pipeline`` reads ``builtin.module(tile-lower-reduction{fold=tree},gpu.module(cse))``
into ``Anchor`` and ``PassElement`` values, the options of each pass kept as the text
between its braces. ``tile_mlir.pipeline.manager`` then makes the tile passes typed
objects (their options read once, there) and builds a ``PassManager``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from ..errors import UsageError

# mlir-opt's pass flags run on the parsed top-level op, which is always a builtin.module.
ROOT_OP = "builtin.module"


@dataclass(frozen=True)
class PassElement:
    """One pass in a pipeline: ``name`` or ``name{options}``."""

    name: str
    options: str = ""  # the text between the braces, verbatim

    def __str__(self) -> str:
        return f"{self.name}{{{self.options}}}" if self.options else self.name


@dataclass(frozen=True)
class Anchor:
    """A nested pipeline, ``op_name(element,...)``, that runs on ops named ``op_name``."""

    op_name: str
    elements: tuple[Element, ...]

    def __str__(self) -> str:
        return f"{self.op_name}({','.join(map(str, self.elements))})"


Element = PassElement | Anchor


def parse_pipeline(text: str) -> Anchor:
    """Parse ``--pass-pipeline`` text, e.g. ``builtin.module(a{x=1},gpu.module(b))``."""
    return _PipelineParser(text).parse()


class _PipelineParser:
    """A recursive-descent parser for mlir-opt's textual pipeline grammar:

        pipeline ::= op-name '(' elements? ')'
        elements ::= element (',' element)*
        element  ::= pass-name ('{' options '}')?  |  op-name '(' elements? ')'
    """

    _NAME_END = frozenset(",(){} \t\r\n")

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def parse(self) -> Anchor:
        root = self._element()
        if not isinstance(root, Anchor):
            self._fail("the pipeline must be wrapped in its anchor op, e.g. "
                       "'builtin.module(...)'", 0)
        self._skip_space()
        if self.pos != len(self.text):
            self._fail("unexpected text after the pipeline")
        return root

    def _element(self) -> Element:
        self._skip_space()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in self._NAME_END:
            self.pos += 1
        name = self.text[start:self.pos]
        if not name:
            self._fail("expected a pass or op name")
        self._skip_space()
        if self._at("{"):
            options = self._braced()
            self._skip_space()
            if self._at("("):
                self._fail(f"op anchor '{name}' cannot take options")
            return PassElement(name, options)
        if self._at("("):
            self.pos += 1
            elements = self._elements()
            if not self._at(")"):
                self._fail(f"expected ',' or ')' to close '{name}('")
            self.pos += 1
            return Anchor(name, elements)
        return PassElement(name)

    def _elements(self) -> tuple[Element, ...]:
        self._skip_space()
        if self._at(")"):
            return ()
        elements = [self._element()]
        self._skip_space()
        while self._at(","):
            self.pos += 1
            elements.append(self._element())
            self._skip_space()
        return tuple(elements)

    def _braced(self) -> str:
        """Consume a balanced ``{...}`` (quotes may hide braces) and return its inside."""
        start, depth, quote = self.pos, 0, None
        for i in range(start, len(self.text)):
            c = self.text[i]
            if quote:
                quote = None if c == quote else quote
            elif c in "'\"":
                quote = c
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return self.text[start + 1:i].strip()
        self._fail("missing '}' to close the pass options", start)

    def _at(self, c: str) -> bool:
        return self.text.startswith(c, self.pos)

    def _skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _fail(self, message: str, pos: int | None = None) -> NoReturn:
        pos = self.pos if pos is None else pos
        raise UsageError(f"invalid pass pipeline: {message}\n  {self.text}\n  {' ' * pos}^")
