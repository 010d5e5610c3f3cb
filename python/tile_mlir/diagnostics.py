"""Diagnostics: copying them out of MLIR, printing them as mlir-opt does, and checking
them against ``// expected-*`` comments (``--verify-diagnostics``).

MLIR hands a diagnostic to a handler only while the diagnostic is alive, so
``DiagnosticSink`` copies each one into a plain ``Diag`` (severity, place, message,
notes). ``format_diag`` prints a ``Diag`` as ``file:line:col: error: message``, then the
source line and a caret under the column. ``parse_expectations`` and
``check_expectations`` implement upstream's ``SourceMgrDiagnosticVerifierHandler``:
the comments say which diagnostics a file must produce, and where.

Where MLIR's words are IRDL's (``'"prod"' does not satisfy the constraint``,
``expected dynamic attribute``), ``tile_mlir.irdl_messages.rephrase`` says what to
change instead: which attribute, which values it may take, the closest known name.
tile-opt's sink and the library's ``CompileError`` messages (``format_errors``) both
go through it.

A string parsed with ``ir.Module.parse`` has the file name ``-`` in its locations; the
sink and ``to_diag`` give it the name of the text's source (a file name, ``<stdin>``,
``<source>``). A diagnostic at ``layout_location`` (a column of a layout attribute's
text) is placed at that character of the op's source text, where the source is known.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .ir import ir
from .irdl_messages import (  # noqa: F401 (DialectNames, irdl_dialects: re-exported)
    CURRENT_OP_NOTE,
    DialectNames,
    irdl_dialects,
    rephrase,
    silent_parse_failure,
    tile_dialects,
)

_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


# CURRENT_OP_NOTE is the note the verifier adds to its errors. The bindings cannot turn
# it off, as mlir-opt does (MLIRContext::printOpOnDiagnostic) while it verifies
# diagnostics.


@dataclass(frozen=True)
class Place:
    """A position in a file, 1-based, as MLIR's file locations give it."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diag:
    """A diagnostic, copied out of MLIR while it was still alive."""

    severity: str  # "error", "warning", "note" or "remark"
    where: Place | str  # a file position, or the text of a location that has none
    message: str
    notes: tuple[Diag, ...] = ()


def format_diag(diag: Diag, files: dict[str, list[str]]) -> str:
    """Format a diagnostic as mlir-opt does: ``file:line:col: error: message``, then the
    source line and a caret under the column. Notes follow in the same form."""
    lines = [f"{diag.where}: {diag.severity}: {diag.message}"]
    if isinstance(diag.where, Place):
        source = files.get(diag.where.file, [])
        if 1 <= diag.where.line <= len(source):
            line = source[diag.where.line - 1].rstrip("\r")
            # MLIR counts columns in UTF-8 bytes; the caret goes under that character
            before = line.encode()[:diag.where.col - 1].decode(errors="ignore")
            indent = "".join(c if c == "\t" else " " for c in before)
            lines += [line, indent + "^"]
    return "\n".join(lines) + "\n" + "".join(format_diag(n, files) for n in diag.notes)


def file_location(loc: ir.Location) -> ir.Location | None:
    """The first file:line:col location inside `loc`, looking through names, call sites
    (the callee) and fused locations."""
    if loc.is_a_file():
        return loc
    if loc.is_a_name():
        return file_location(loc.child_loc)
    if loc.is_a_callsite():
        return file_location(loc.callee)
    if loc.is_a_fused():
        return next(filter(None, map(file_location, loc.locations)), None)
    return None


def to_diag(diagnostic, buffer: str, *, op_notes: bool = True,
            files: dict[str, list[str]] | None = None,
            dialects: dict[str, DialectNames] | None = None) -> Diag:
    """Copy an ``ir.Diagnostic`` (or the ``ir.DiagnosticInfo`` of an ``MLIRError``) into
    a ``Diag``, in the words of ``rephrase``. Locations in the file ``-`` are placed in
    ``buffer``; ``files`` holds the source lines that ``rephrase`` may read, and
    ``dialects`` the IRDL dialects (default: tile). Without ``op_notes``, the verifier's
    "see current operation" notes are left out."""
    diag = rephrase(_copy(diagnostic, buffer, files or {}), files or {},
                    tile_dialects() if dialects is None else dialects)
    if not op_notes:
        diag = _without_op_notes(diag)
    return diag


def _copy(diagnostic, buffer: str, files: dict[str, list[str]]) -> Diag:
    return Diag(_SEVERITY[diagnostic.severity], _where(diagnostic.location, buffer, files),
                diagnostic.message, tuple(_copy(n, buffer, files) for n in diagnostic.notes))


def _without_op_notes(diag: Diag) -> Diag:
    notes = tuple(_without_op_notes(n) for n in diag.notes
                  if not n.message.startswith(CURRENT_OP_NOTE))
    return replace(diag, notes=notes)


def _where(loc: ir.Location, buffer: str, files: dict[str, list[str]]) -> Place | str:
    inside = _LAYOUT_COLUMN.fullmatch(loc.name_str) if loc.is_a_name() else None
    if inside:  # layout_location's: the op's own location, then the column in its text
        loc = loc.child_loc
    file_loc = file_location(loc)
    if file_loc is None:
        return "<unknown>:0" if str(loc) == "loc(unknown)" else str(loc)
    name = buffer if file_loc.filename == "-" else file_loc.filename
    place = Place(name, file_loc.start_line, file_loc.start_col)
    if inside and name in files:
        return _in_layout_text(place, inside["attribute"], int(inside["column"]), files[name])
    return place


# --- a place inside a layout attribute --------------------------------------------------
#
# An attribute has no location of its own in MLIR: an op's diagnostic sits at the op. A
# diagnostic about column N of a layout's text (a parse error) is emitted at a name
# location around the op's, which says so; where the source text is at hand (tile-opt,
# compile), the place becomes that column of the layout in the op's own text.

_LAYOUT_COLUMN = re.compile(r"#tile\.layout column (?P<column>\d+) of (?P<attribute>\w+)")


def layout_location(op_loc: ir.Location, attribute: str, column: int) -> ir.Location:
    """The location of column ``column`` (1-based) of the text of the layout attribute
    ``attribute`` of the op at ``op_loc``: a name location around ``op_loc``, which is
    where it stays when the source is not known."""
    return ir.Location.name(f"#tile.layout column {column} of {attribute}", childLoc=op_loc)


def _in_layout_text(op: Place, attribute: str, column: int, lines: list[str]) -> Place:
    """The place of ``column`` of ``attribute = #tile.layout<"...">`` in the text of the op
    that starts at ``op``: searched from there to the op's type signature (the first
    ``:`` outside brackets and strings), so never in another op. MLIR counts columns in
    UTF-8 bytes, and so does this. ``op`` itself when the text is not there (an alias)."""
    text = "\n".join(lines[op.line - 1:op.line - 1 + _OP_LINES]).encode()
    start = op.col - 1  # the op's first byte
    end = _signature_start(text, start)
    found = re.compile(rb"\b" + re.escape(attribute.encode()) + rb'\s*=\s*#tile\.layout<\s*"').search(text, start, end)
    if found is None:
        return op
    at = found.end() + column - 1
    line = text.count(b"\n", 0, at)
    col = at - (text.rfind(b"\n", 0, at) + 1) + 1
    return Place(op.file, op.line + line, col)


_OP_LINES = 200  # the longest op text searched, in lines


def _signature_start(text: bytes, start: int) -> int:
    """The offset of the first ``:`` at bracket depth 0, outside strings, from ``start``
    (the end of ``text`` if none): where an op in generic form gives its type."""
    depth, i = 0, start
    while i < len(text):
        c = text[i:i + 1]
        if c == b'"':
            i += 1
            while i < len(text) and text[i:i + 1] != b'"':
                i += 2 if text[i:i + 1] == b"\\" else 1
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif c == b":" and depth <= 0:
            return i
        i += 1
    return len(text)


def format_errors(error: ir.MLIRError, source_name: str, text: str | None,
                  diagnostics: Iterable = ()) -> str:
    """The text of a failure in the library: ``diagnostics`` (copied earlier) and then
    the error's own diagnostics, each as ``format_diag`` prints it, placed in ``text``
    (called ``source_name``), without the verifier's "see current operation" notes."""
    files = {source_name: text.split("\n")} if text is not None else {}
    diags = [*diagnostics, *(to_diag(d, source_name, op_notes=False, files=files)
                             for d in error.error_diagnostics)]
    return "".join(format_diag(d, files) for d in diags).rstrip("\n") or str(error)


def parse_failure(text: str, source_name: str,
                  dialects: dict[str, DialectNames] | None = None) -> Diag:
    """The error of a parse that failed without a diagnostic: MLIR's parser does that on
    an IRDL op written in custom form (``irdl_messages.silent_parse_failure``)."""
    line, col, message = silent_parse_failure(text, tile_dialects() if dialects is None else dialects)
    return Diag("error", Place(source_name, line, col), message)


class DiagnosticSink:
    """The diagnostic handler of one context.

    It copies each diagnostic while the diagnostic is alive, in the words of
    ``rephrase`` (``dialects``: the IRDL dialects it knows; default: tile). The file
    that MLIR calls ``-`` (its name for a parsed string) gets the name of the file
    being read. The sink then prints the diagnostic as mlir-opt does. When ``keep`` is set (for
    ``--verify-diagnostics``), it keeps the diagnostic in ``kept`` instead.
    """

    def __init__(self, ctx: ir.Context, files: dict[str, list[str]], buffer: str,
                 dialects: dict[str, DialectNames] | None = None):
        self.files = files
        self.dialects = dialects
        self.buffer = buffer  # what "-" stands for
        self.keep = False
        self.kept: list[Diag] = []
        self.errors = 0  # how many errors it has been handed
        self._failure: BaseException | None = None
        ctx.attach_diagnostic_handler(self._handle)

    def check(self) -> None:
        """Raise the exception that the handler caught, if any.

        An exception that escapes a handler is printed by the bindings and then lost.
        """
        if self._failure is not None:
            raise self._failure

    def _handle(self, diagnostic: ir.Diagnostic) -> bool:
        try:
            # mlir-opt does not print the op on diagnostics it verifies
            diag = to_diag(diagnostic, self.buffer, op_notes=not self.keep,
                           files=self.files, dialects=self.dialects)
            self.errors += diag.severity == "error"
            if self.keep:
                self.kept.append(diag)
            else:
                sys.stderr.write(format_diag(diag, self.files))
                sys.stderr.flush()  # the pass manager writes IR dumps straight to fd 2
        except BaseException as e:  # noqa: BLE001 - re-raised by check()
            self._failure = self._failure or e
        return True


# ----------------------------------------------------------------------------------
# --verify-diagnostics, as upstream's SourceMgrDiagnosticVerifierHandler
# ----------------------------------------------------------------------------------

_EXPECTED = re.compile(r"expected-(error|note|remark|warning)(-re)? *"
                       r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")


@dataclass
class Expectation:
    """One ``// expected-<severity>[-re][@designator] {{text}}`` comment."""

    severity: str
    line: int | None  # the line it expects the diagnostic on; None for @unknown
    pattern: str | re.Pattern  # a substring, or (for -re) a regex searched for
    text: str  # the text between the outer braces, as written
    where: Place  # the comment itself
    matched: bool = False

    def matches(self, message: str) -> bool:
        if isinstance(self.pattern, str):
            return self.pattern in message
        return self.pattern.search(message) is not None


def parse_expectations(text: str, file: str) -> tuple[list[Expectation], list[Diag]]:
    """Find the expectations in `text`. Also returns errors for malformed ones.

    Designators work as upstream: ``@+N`` and ``@-N`` are relative to the comment's line.
    ``@above`` means the last line above with no expectation. ``@below`` means the next
    line below with no expectation.
    """
    expectations: list[Expectation] = []
    errors: list[Diag] = []
    below: list[Expectation] = []
    last_plain_line = 0
    for number, line in enumerate(text.split("\n"), start=1):
        m = _EXPECTED.search(line.rstrip())
        if m is None:
            for expectation in below:
                expectation.line = number
            below.clear()
            last_plain_line = number
            continue
        severity, is_regex, _, designator, body = m.groups()
        where = Place(file, number, m.start() + 1)
        try:
            pattern = _expectation_regex(body) if is_regex else body
        except re.error as e:
            errors.append(Diag("error", where, f"invalid regex: {e}"))
            continue
        expectation = Expectation(severity, number, pattern, body, where)
        if designator == "unknown":
            expectation.line = None
        elif designator == "above":
            expectation.line = last_plain_line
        elif designator == "below":
            below.append(expectation)
        elif designator:
            expectation.line = number + int(designator)
        expectations.append(expectation)
    return expectations, errors


def _expectation_regex(body: str) -> re.Pattern:
    """The regex of an ``expected-*-re`` body: literal text with ``{{regex}}`` blocks."""
    parts, rest = [], body
    while "{{" in rest:
        literal, rest = rest.split("{{", 1)
        if "}}" not in rest:
            raise re.error("found start of regex with no end '}}'")
        regex, rest = rest.split("}}", 1)
        parts += [re.escape(literal), f"({regex})"]
    return re.compile("".join(parts) + re.escape(rest))


def check_expectations(diags: list[Diag], expectations: list[Expectation],
                       file: str, only_expected: bool = False) -> list[Diag]:
    """Match the emitted diagnostics (notes included) against the expectations.

    Returns the errors to report: unexpected diagnostics, diagnostics with the wrong
    severity, and expectations that were not produced. With ``only_expected``
    (``--verify-diagnostics=only-expected``), only the last kind: a diagnostic that
    no expectation names is let through, as upstream does.
    """
    problems = []
    for diag in _with_notes(diags):
        if isinstance(diag.where, Place) and diag.where.file != file:
            problems.append(Diag("error", diag.where,
                                 f"unexpected {diag.severity}: {diag.message}"))
            continue
        line = diag.where.line if isinstance(diag.where, Place) else None
        here = [e for e in expectations if e.line == line and e.matches(diag.message)]
        hit = next((e for e in here if e.severity == diag.severity), None)
        if hit is not None:
            hit.matched = True
        elif here:
            problems.append(Diag("error", here[0].where,
                                 f"'{diag.severity}' diagnostic emitted when expecting "
                                 f"a '{here[0].severity}'"))
        else:
            problems.append(Diag("error", diag.where,
                                 f"unexpected {diag.severity}: {diag.message}"))
    if only_expected:
        problems.clear()
    problems += [Diag("error", e.where, f'expected {e.severity} "{e.text}" was not produced')
                 for e in expectations if not e.matched]
    return problems


def _with_notes(diags: Iterable[Diag]) -> Iterable[Diag]:
    for diag in diags:
        yield diag
        yield from _with_notes(diag.notes)

