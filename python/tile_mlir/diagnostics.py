"""Diagnostics: copying them out of MLIR, printing them as mlir-opt does, and checking
them against ``// expected-*`` comments (``--verify-diagnostics``).

MLIR hands a diagnostic to a handler only while the diagnostic is alive, so
``DiagnosticSink`` copies each one into a plain ``Diag`` (severity, place, message,
notes). ``format_diag`` prints a ``Diag`` as ``file:line:col: error: message``, then the
source line and a caret under the column. ``parse_expectations`` and
``check_expectations`` implement upstream's ``SourceMgrDiagnosticVerifierHandler``:
the comments say which diagnostics a file must produce, and where.

Where MLIR's words are IRDL's (``'"prod"' does not satisfy the constraint``,
``expected dynamic attribute``), ``rephrase`` says what to change instead: which
attribute, which values it may take, the closest known name. It reads the allowed
values and names from the dialects' IRDL (``irdl_dialects``), so it cannot drift from
what the verifier checks. tile-opt's sink and the library's ``CompileError`` messages
(``format_errors``) both go through it.

A string parsed with ``ir.Module.parse`` has the file name ``-`` in its locations; the
sink and ``to_diag`` give it the name of the text's source (a file name, ``<stdin>``,
``<source>``).
"""

from __future__ import annotations

import difflib
import functools
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .ir import ir

_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


# The note the verifier adds to its errors. The bindings cannot turn it off, as
# mlir-opt does (MLIRContext::printOpOnDiagnostic) while it verifies diagnostics.
CURRENT_OP_NOTE = "see current operation: "


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
            line = source[diag.where.line - 1]
            indent = "".join(c if c == "\t" else " " for c in line[:diag.where.col - 1])
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
    diag = rephrase(_copy(diagnostic, buffer), files or {},
                    tile_dialects() if dialects is None else dialects)
    if not op_notes:
        diag = _without_op_notes(diag)
    return diag


def _copy(diagnostic, buffer: str) -> Diag:
    return Diag(_SEVERITY[diagnostic.severity], _where(diagnostic.location, buffer),
                diagnostic.message, tuple(_copy(n, buffer) for n in diagnostic.notes))


def _without_op_notes(diag: Diag) -> Diag:
    notes = tuple(_without_op_notes(n) for n in diag.notes
                  if not n.message.startswith(CURRENT_OP_NOTE))
    return replace(diag, notes=notes)


def _where(loc: ir.Location, buffer: str) -> Place | str:
    file_loc = file_location(loc)
    if file_loc is None:
        return "<unknown>:0" if str(loc) == "loc(unknown)" else str(loc)
    name = buffer if file_loc.filename == "-" else file_loc.filename
    return Place(name, file_loc.start_line, file_loc.start_col)


def format_errors(error: ir.MLIRError, source_name: str, text: str | None,
                  diagnostics: Iterable = ()) -> str:
    """The text of a failure in the library: ``diagnostics`` (copied earlier) and then
    the error's own diagnostics, each as ``format_diag`` prints it, placed in ``text``
    (called ``source_name``), without the verifier's "see current operation" notes."""
    files = {source_name: text.split("\n")} if text is not None else {}
    diags = [*diagnostics, *(to_diag(d, source_name, op_notes=False, files=files)
                             for d in error.error_diagnostics)]
    return "".join(format_diag(d, files) for d in diags).rstrip("\n") or str(error)


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
            if self.keep:
                self.kept.append(diag)
            else:
                sys.stderr.write(format_diag(diag, self.files))
                sys.stderr.flush()  # the pass manager writes IR dumps straight to fd 2
        except BaseException as e:  # noqa: BLE001 - re-raised by check()
            self._failure = self._failure or e
        return True


# ----------------------------------------------------------------------------------
# IRDL's messages, in words that say what to change
# ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DialectNames:
    """What one IRDL dialect defines, by full name (``tile.reduce``, ``tile.layout``),
    and the values that each ``irdl.is``/``irdl.any_of``-constrained op attribute may
    take, as MLIR prints them (``("tile.reduce", "kind") -> ('"sum"', ...)``)."""

    name: str
    operations: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    enums: tuple[tuple[tuple[str, str], tuple[str, ...]], ...] = ()

    def allowed(self, op: str) -> dict[str, tuple[str, ...]]:
        """The enum-constrained attributes of ``op``, in the order IRDL checks them."""
        return {attr: values for (name, attr), values in self.enums if name == op}


@functools.cache
def irdl_dialects(text: str) -> dict[str, DialectNames]:
    """The dialects an IRDL file defines, by name. Text that does not parse defines none."""
    try:
        module = ir.Module.parse(text, ir.Context())
    except ir.MLIRError:
        return {}
    found = {}
    for dialect in module.body.operations:
        if dialect.operation.name != "irdl.dialect":
            continue
        name = _symbol(dialect.operation)
        kinds: dict[str, list[str]] = {"irdl.operation": [], "irdl.attribute": [], "irdl.type": []}
        enums = []
        for op in dialect.operation.regions[0].blocks[0].operations:
            op = op.operation
            if op.name in kinds:
                kinds[op.name].append(f"{name}.{_symbol(op)}")
            if op.name == "irdl.operation":
                enums += _enums(f"{name}.{_symbol(op)}", op)
        found[name] = DialectNames(name, *map(tuple, kinds.values()), tuple(enums))
    return found


def tile_dialects() -> dict[str, DialectNames]:
    """The tile dialect's names, read from ``dialect/tile.irdl.mlir``."""
    from .ir import DIALECT_FILE

    return irdl_dialects(DIALECT_FILE.read_text())


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _enums(op_name: str, op) -> list:
    """((op, attribute), values) for each attribute of an irdl.operation whose
    constraint is an irdl.is or an irdl.any_of of irdl.is."""
    enums = []
    for inner in op.regions[0].blocks[0].operations:
        inner = inner.operation
        if inner.name != "irdl.attributes":
            continue
        names = [ir.StringAttr(a).value for a in inner.attributes["attributeValueNames"]]
        for attr, value in zip(names, inner.operands):
            owner = value.owner
            choices = list(owner.operands) if owner.name == "irdl.any_of" else [value]
            if all(c.owner.name == "irdl.is" for c in choices):
                enums.append(((op_name, attr), tuple(str(c.owner.attributes["expected"]) for c in choices)))
    return enums


_NOT_SATISFIED = re.compile(r"'(.*)' does not satisfy the constraint")
_UNKNOWN_OP = re.compile(r"unregistered operation '([\w.$-]+)' found in dialect \('([\w$]+)'\)")
_OP_NAME = re.compile(r'"([\w.$-]+)"')
_MISSING = re.compile(r"'([\w.$-]+)' op attribute \"([\w$]+)\" is expected but not provided")
_UNKNOWN_DIALECT = "operation being parsed with an unregistered dialect"


def rephrase(diag: Diag, files: dict[str, list[str]], dialects: dict[str, DialectNames]) -> Diag:
    """``diag`` in words that say what to change, where MLIR's own are IRDL's.

    * ``'"prod"' does not satisfy the constraint`` (IRDL's, with the op in a note):
      ``'tile.reduce' op kind must be one of "sum", ...; got "prod"``.
    * ``expected dynamic attribute`` at ``#tile.layot<...>`` (the name is read from the
      source): ``unknown attribute '#tile.layot' (did you mean '#tile.layout'?); the
      tile dialect's attributes are: #tile.layout``; the same for types and ``!``.
    * ``unregistered operation 'tile.reduc' ...``: ``unknown operation 'tile.reduc' (did
      you mean 'tile.reduce'?); the tile dialect's operations are: tile.reduce``.

    Other diagnostics come back as they are. So does one that the source or the
    dialects cannot explain.
    """
    message = None
    if m := _NOT_SATISFIED.fullmatch(diag.message):
        message = _enum_message(m.group(1), diag, dialects)
    elif diag.message in ("expected dynamic attribute", "expected dynamic type"):
        message = _unknown_name(diag, files, dialects)
    elif (m := _UNKNOWN_OP.match(diag.message)) and m.group(2) in dialects:
        known = dialects[m.group(2)].operations
        message = f"unknown operation '{m.group(1)}'{_did_you_mean(m.group(1), known)}; " \
                  f"the {m.group(2)} dialect's operations are: {', '.join(known) or 'none'}"
    elif m := _MISSING.fullmatch(diag.message):
        allowed = _dialect_of(m.group(1), dialects).allowed(m.group(1)).get(m.group(2))
        message = f"{diag.message}; it must be one of {', '.join(allowed)}" if allowed else None
    elif diag.message.startswith(_UNKNOWN_DIALECT):
        message = _unknown_dialect(diag, files, dialects)
    if message is None:
        return diag
    return replace(diag, message=message,
                   notes=tuple(n for n in diag.notes if not n.message.startswith(CURRENT_OP_NOTE)))


def _enum_message(value: str, diag: Diag, dialects: dict[str, DialectNames]) -> str | None:
    """Which attribute holds ``value`` and may not: read from the "see current
    operation" note, which prints the op with its attributes."""
    op_text = next((n.message[len(CURRENT_OP_NOTE):] for n in diag.notes
                    if n.message.startswith(CURRENT_OP_NOTE)), None)
    m = _OP_NAME.match(op_text or "")
    if m is None or m.group(1).split(".")[0] not in dialects:
        return None
    op = m.group(1)
    for attr, allowed in dialects[op.split(".")[0]].allowed(op).items():
        if value not in allowed and re.search(rf"(?:\{{|, ){re.escape(attr)} = {re.escape(value)}(?:,|\}})", op_text):
            return f"'{op}' op {attr} must be one of {', '.join(allowed)}; got {value}"
    return None


def _unknown_name(diag: Diag, files: dict[str, list[str]],
                  dialects: dict[str, DialectNames]) -> str | None:
    """The attribute or type name at the diagnostic's place (MLIR points at the part
    after ``#dialect.``), checked against what its dialect defines."""
    line = _source_line(diag, files)
    if line is None:
        return None
    col = diag.where.col - 1
    prefix = re.search(r"([#!])([\w$]+)\.$", line[:col])
    word = re.match(r"[\w$.]+", line[col:])
    if prefix is None or word is None or prefix.group(2) not in dialects:
        return None
    sigil, dialect = prefix.groups()
    what, known = ("attribute", dialects[dialect].attributes) if sigil == "#" else \
                  ("type", dialects[dialect].types)
    spelled = [sigil + k for k in known]
    name = f"{sigil}{dialect}.{word.group(0)}"
    listing = f"the {dialect} dialect's {what}s are: {', '.join(spelled)}" if spelled else \
              f"the {dialect} dialect defines no {what}s"
    return f"unknown {what} '{name}'{_did_you_mean(name, spelled)}; {listing}"


def _dialect_of(op: str, dialects: dict[str, DialectNames]) -> DialectNames:
    return dialects.get(op.split(".")[0], DialectNames(""))


def _unknown_dialect(diag: Diag, files: dict[str, list[str]],
                     dialects: dict[str, DialectNames]) -> str | None:
    """An op in a dialect that does not exist, ``"tiel.reduce"(...)``: MLIR points just
    after the quoted name. Say which known op it is close to, if any."""
    line = _source_line(diag, files)
    m = re.search(r'"([\w$]+)\.([\w.$-]+)"$', line[:diag.where.col - 1]) if line else None
    known = [op for d in dialects.values() for op in d.operations]
    suggestion = _did_you_mean(m.group(0).strip('"'), known) if m else ""
    if not suggestion:
        return None
    return (f"unknown dialect '{m.group(1)}' in operation '{m.group(0).strip(chr(34))}'{suggestion}; "
            "--allow-unregistered-dialect accepts ops of unknown dialects")


def _source_line(diag: Diag, files: dict[str, list[str]]) -> str | None:
    """The source line that ``diag`` points into, or None."""
    if not isinstance(diag.where, Place):
        return None
    lines = files.get(diag.where.file, [])
    return lines[diag.where.line - 1] if 1 <= diag.where.line <= len(lines) else None


def _did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


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

