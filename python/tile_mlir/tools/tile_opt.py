"""tile-opt: an mlir-opt-style driver for tile-mlir (SPEC section 7).

    tile-opt [input|-] [-o out]
             [--pass-pipeline='builtin.module(...)' | --<pass>[=<options>] ...]
             [--split-input-file] [--verify-diagnostics] [--mlir-print-ir-after-all]
             [--mlir-timing] [--mlir-very-unsafe-disable-verifier-on-parsing]
             [--irdl-file=FILE] [--list-passes] [--version]

tile-opt parses the input with the `tile` dialect loaded and runs `tile-verify` right
after parsing, as mlir-opt verifies. Then it runs the requested passes and prints the
module.

Passes come from two places. You can mix them freely, and their order is kept:

* tile-mlir's Python passes, named in ``tile_mlir.passes.REGISTRY``. Each one is added
  to the pass manager as a Python pass (``PassManager.add(fn, ...)``).
* upstream MLIR passes. These go verbatim to ``PassManager.add("...")``.

The bindings cannot put a Python pass inside an op-anchored nested pass manager. So a
tile pass under an anchor, as in ``gpu.module(tile-lower-reduction)``, is added at the
top level. It is wrapped so that it runs on every op that the anchor path selects.

Bad input prints mlir-opt-style diagnostics and exits with status 1. A bug in
tile-mlir prints ``tile-opt: internal error: ...`` and exits with status 2. Set
``TILE_OPT_TRACEBACK=1`` to also get the Python traceback.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import traceback
from dataclasses import dataclass
from typing import Callable, Iterable, NoReturn

from .. import __version__
from ..errors import UsageError

try:
    from ..ir import env_flag, make_context
except ImportError as e:  # no bindings, or too old: say which are needed, no traceback
    sys.stderr.write(f"tile-opt: {e}\n")
    raise SystemExit(1) from None
# After tile_mlir.ir, which checks the bindings' version on import.
from mlir import ir
from mlir.dialects import irdl
from mlir.passmanager import PassManager

from ..passes import REGISTRY, add_pass, make_pass

# The pass that checks tile ops right after parsing, as mlir-opt's verifier does.
POST_PARSE_VERIFIER = "tile-verify"
# mlir-opt's pass flags run on the parsed top-level op, which is always a builtin.module.
ROOT_OP = "builtin.module"
SPLIT_MARKER = "// -----"


# ----------------------------------------------------------------------------------
# Textual pass pipelines
# ----------------------------------------------------------------------------------


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


_OPTION = re.compile(r"""([\w.-]+)(?:=("[^"]*"|'[^']*'|[^\s"']+))?(?:\s+|$)""")


def parse_options(text: str, pass_name: str) -> dict[str, str]:
    """Parse pass options, e.g. ``chip=sm_80 fold='tree' verbose``, as upstream does.

    A bare key means ``true``. Quotes around a value are removed.
    """
    options, text, pos = {}, text.strip(), 0
    while pos < len(text):
        m = _OPTION.match(text, pos)
        if not m:
            raise UsageError(f"invalid options for pass '{pass_name}': '{text}'")
        key, value = m.groups()
        if value is None:
            value = "true"
        elif value[0] in "'\"":
            value = value[1:-1]
        options[key] = value
        pos = m.end()
    return options


# ----------------------------------------------------------------------------------
# From pipelines to pass managers
# ----------------------------------------------------------------------------------

# The bindings report pass-manager problems only as ValueError text. These two
# fragments are the only parts of MLIR's wording that tile-opt depends on.
_UNKNOWN_PASS = "does not refer to a registered pass or pass pipeline"
_RESTRICTED_TO = re.compile(r"restricted to '([^']+)'")


def upstream_anchor(name: str, root_op: str, ctx: ir.Context) -> str | None:
    """Check that `name` is an upstream pass or pipeline.

    Returns the op it must be nested under when it is added to a `root_op` pass
    manager. Returns None when it can run on `root_op` itself.
    """
    try:
        PassManager(root_op, ctx).add(name)
    except ValueError as e:
        if _UNKNOWN_PASS in str(e):
            raise UsageError(f"unknown pass '{name}'") from None
        restricted = _RESTRICTED_TO.search(str(e))
        if restricted is None:
            raise UsageError(str(e).strip()) from None
        return restricted.group(1)
    return None


def pipeline_from_flags(flags: list[str], ctx: ir.Context) -> Anchor | None:
    """Turn ``--<pass>[=<options>]`` flags into a pipeline that keeps their order.

    Like mlir-opt's flags (which use implicit nesting), an upstream pass restricted to
    another op, e.g. ``--convert-gpu-to-nvvm``, is nested under that op.
    """
    elements: list[Element] = []
    for flag in flags:
        name, _, options = flag.lstrip("-").partition("=")
        element = PassElement(name, options.strip())
        anchor = None if name in REGISTRY else upstream_anchor(name, ROOT_OP, ctx)
        elements.append(Anchor(anchor, (element,)) if anchor else element)
    return Anchor(ROOT_OP, tuple(elements)) if elements else None


def build_pass_manager(pipeline: Anchor, ctx: ir.Context) -> PassManager:
    """A pass manager that runs `pipeline`, with the tile passes as Python passes.

    Each run of consecutive upstream elements goes verbatim into one
    ``pm.add("...")``, wrapped in the anchors it sits under. An anchor that holds a
    tile pass is split around that pass.
    """
    pm = PassManager(pipeline.op_name, ctx)
    _add_elements(pm, ctx, pipeline.elements, anchors=())
    return pm


def _is_tile_pass(element: Element) -> bool:
    return isinstance(element, PassElement) and element.name in REGISTRY


def _holds_tile_pass(element: Element) -> bool:
    return _is_tile_pass(element) or (
        isinstance(element, Anchor) and any(map(_holds_tile_pass, element.elements)))


def _add_elements(pm: PassManager, ctx: ir.Context, elements: tuple[Element, ...],
                  anchors: tuple[str, ...]) -> None:
    upstream: list[str] = []

    def flush() -> None:
        if upstream:
            _add_upstream(pm, _nest(anchors, ",".join(upstream)))
            upstream.clear()

    for element in elements:
        if _is_tile_pass(element):
            flush()
            _add_tile_pass(pm, element, anchors)
        elif isinstance(element, Anchor) and _holds_tile_pass(element):
            flush()
            _add_elements(pm, ctx, element.elements, anchors + (element.op_name,))
        else:
            _check_upstream_names(element, ctx)
            upstream.append(str(element))
    flush()


def _nest(anchors: tuple[str, ...], text: str) -> str:
    for op_name in reversed(anchors):
        text = f"{op_name}({text})"
    return text


def _check_upstream_names(element: Element, ctx: ir.Context) -> None:
    """Report an unknown upstream pass by name, rather than with MLIR's parser error."""
    if isinstance(element, Anchor):
        for inner in element.elements:
            _check_upstream_names(inner, ctx)
    else:
        upstream_anchor(element.name, "any", ctx)


def _add_upstream(pm: PassManager, text: str) -> None:
    try:
        pm.add(text)
    except ValueError as e:
        raise UsageError(f"invalid pass pipeline: {str(e).strip()}") from None


def _add_tile_pass(pm: PassManager, element: PassElement, anchors: tuple[str, ...]) -> None:
    info = REGISTRY[element.name]
    try:
        run = make_pass(element.name, **parse_options(element.options, element.name))
    except ValueError as e:  # an unknown option, or a value the pass refuses
        raise UsageError(str(e)) from None
    if anchors:
        run = _on_anchored_ops(run, anchors)
    pm.add(run, name=info.class_name, argument=info.argument, description=info.summary)


def _on_anchored_ops(run: Callable, anchors: tuple[str, ...]) -> Callable:
    """Wrap a pass so that it runs on the ops that `anchors` selects below the pass
    manager's op.

    This works like MLIR's nested pass managers: each anchor picks the ops with that
    name (any op for ``any``) directly inside the ops picked by the level above.
    """

    def run_on_anchored_ops(op: ir.Operation, pass_) -> None:
        targets = [op]
        for anchor in anchors:
            targets = [child.operation
                       for parent in targets
                       for region in parent.regions
                       for block in region.blocks
                       for child in block.operations
                       if anchor in ("any", child.operation.name)]
        for target in targets:
            run(target, pass_)

    return run_on_anchored_ops


# ----------------------------------------------------------------------------------
# Diagnostics
# ----------------------------------------------------------------------------------

_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


# The note the verifier adds to its errors. The bindings cannot turn it off, as
# mlir-opt does (MLIRContext::printOpOnDiagnostic) while it verifies diagnostics.
_CURRENT_OP_NOTE = "see current operation: "


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


def _file_location(loc: ir.Location) -> ir.Location | None:
    """The first file:line:col location inside `loc`, looking through names, call sites
    (the callee) and fused locations."""
    if loc.is_a_file():
        return loc
    if loc.is_a_name():
        return _file_location(loc.child_loc)
    if loc.is_a_callsite():
        return _file_location(loc.callee)
    if loc.is_a_fused():
        return next(filter(None, map(_file_location, loc.locations)), None)
    return None


class DiagnosticSink:
    """The diagnostic handler of one context.

    It copies each diagnostic while the diagnostic is alive. The file that MLIR calls
    ``-`` (its name for a parsed string) gets the name of the file being read. The
    sink then prints the diagnostic as mlir-opt does. When ``keep`` is set (for
    ``--verify-diagnostics``), it keeps the diagnostic in ``kept`` instead.
    """

    def __init__(self, ctx: ir.Context, files: dict[str, list[str]], buffer: str):
        self.files = files
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
            diag = self._copy(diagnostic)
            if self.keep:
                self.kept.append(diag)
            else:
                sys.stderr.write(format_diag(diag, self.files))
                sys.stderr.flush()  # the pass manager writes IR dumps straight to fd 2
        except BaseException as e:  # noqa: BLE001 - re-raised by check()
            self._failure = self._failure or e
        return True

    def _copy(self, diagnostic: ir.Diagnostic) -> Diag:
        notes = tuple(map(self._copy, diagnostic.notes))
        if self.keep:  # mlir-opt does not print the op on diagnostics it verifies
            notes = tuple(n for n in notes if not n.message.startswith(_CURRENT_OP_NOTE))
        return Diag(_SEVERITY[diagnostic.severity], self._where(diagnostic.location),
                    diagnostic.message, notes)

    def _where(self, loc: ir.Location) -> Place | str:
        file_loc = _file_location(loc)
        if file_loc is None:
            return "<unknown>:0" if str(loc) == "loc(unknown)" else str(loc)
        name = self.buffer if file_loc.filename == "-" else file_loc.filename
        return Place(name, file_loc.start_line, file_loc.start_col)


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
                       file: str) -> list[Diag]:
    """Match the emitted diagnostics (notes included) against the expectations.

    Returns the errors to report: unexpected diagnostics, diagnostics with the wrong
    severity, and expectations that were not produced.
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
    problems += [Diag("error", e.where, f'expected {e.severity} "{e.text}" was not produced')
                 for e in expectations if not e.matched]
    return problems


def _with_notes(diags: Iterable[Diag]) -> Iterable[Diag]:
    for diag in diags:
        yield diag
        yield from _with_notes(diag.notes)


# ----------------------------------------------------------------------------------
# The driver
# ----------------------------------------------------------------------------------


def split_input(text: str) -> list[str]:
    """Split `text` at the lines that start with ``// -----``.

    Each chunk keeps its place in the file: the lines before it become empty lines.
    So line numbers in diagnostics and in ``expected-*@N`` are those of the whole
    file.
    """
    lines = text.split("\n")
    chunks, start = [], 0
    for i, line in enumerate(lines):
        if line.lstrip().startswith(SPLIT_MARKER):
            chunks.append("\n" * start + "\n".join(lines[start:i]))
            start = i + 1
    chunks.append("\n" * start + "\n".join(lines[start:]))
    return chunks


def new_context() -> ir.Context:
    """A context with the tile dialect, set up for a command-line tool."""
    ctx = make_context()
    ctx.emit_error_diagnostics = True  # errors reach our handler, not only MLIRError
    ctx.enable_multithreading(False)  # diagnostics in a stable order
    return ctx


def _read(path: str, what: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise UsageError(f"cannot open {what} '{path}': {e.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {what} '{path}': it is not UTF-8 text") from None


class Driver:
    """One run of tile-opt: parse, verify, run the pipeline and print, chunk by chunk."""

    def __init__(self, opts: argparse.Namespace, input_path: str,
                 pipeline: Anchor | None):
        self.opts = opts
        self.input_path = input_path
        self.input_name = "<stdin>" if input_path == "-" else input_path
        self.pipeline = pipeline
        self.text = _read(input_path, "input file")
        self.irdl_files = [(path, _read(path, "IRDL file")) for path in opts.irdl_file]
        self.files = {name: text.split("\n")
                      for name, text in [(self.input_name, self.text), *self.irdl_files]}

    def run(self) -> int:
        chunks = split_input(self.text) if self.opts.split_input_file else [self.text]
        results = [self.process(chunk) for chunk in chunks]
        output = (SPLIT_MARKER + "\n").join(text or "" for _, text in results)
        ok = all(chunk_ok for chunk_ok, _ in results)
        if self.opts.output == "-":
            sys.stdout.write(output)
        elif ok:  # as mlir-opt, keep no output file after a failure
            try:
                with open(self.opts.output, "w", encoding="utf-8") as f:
                    f.write(output)
            except OSError as e:
                raise UsageError(
                    f"cannot write output file '{self.opts.output}': {e.strerror}") from None
        return 0 if ok else 1

    def process(self, chunk: str) -> tuple[bool, str | None]:
        """Process one chunk in a fresh context, as mlir-opt does.

        Returns whether it succeeded and the printed module (None if the actions
        failed). With --verify-diagnostics, success means the expectations were met.
        """
        ctx = new_context()
        sink = DiagnosticSink(ctx, self.files, buffer=self.input_name)
        with ctx:  # the current context, for passes that build IR without naming one
            self._load_irdl_files(ctx, sink)
            sink.keep = self.opts.verify_diagnostics
            output = self._actions(chunk, ctx)
        sink.check()
        if not self.opts.verify_diagnostics:
            return output is not None, output
        expectations, problems = parse_expectations(chunk, self.input_name)
        problems += check_expectations(sink.kept, expectations, self.input_name)
        for problem in problems:
            sys.stderr.write(format_diag(problem, self.files))
        return not problems, output

    def _load_irdl_files(self, ctx: ir.Context, sink: DiagnosticSink) -> None:
        for path, text in self.irdl_files:
            sink.buffer = path
            try:
                irdl.load_dialects(ir.Module.parse(text, ctx))
            except ir.MLIRError:
                raise UsageError(f"cannot load the IRDL dialects of '{path}'") from None
            finally:
                sink.buffer = self.input_name

    def _actions(self, chunk: str, ctx: ir.Context) -> str | None:
        """Parse, verify, run the pipeline. Returns the printed module, or None."""
        try:
            module = ir.Module.parse(chunk, ctx)
        except ir.MLIRError:  # the diagnostics went to the sink
            return None
        if not (self.opts.mlir_very_unsafe_disable_verifier_on_parsing
                or self._verify_after_parse(module, ctx)):
            return None
        if self.pipeline is not None and not self._run_pipeline(module, ctx):
            return None
        return f"{module}\n"

    @staticmethod
    def _verify_after_parse(module: ir.Module, ctx: ir.Context) -> bool:
        pm = PassManager("any", ctx)
        add_pass(pm, POST_PARSE_VERIFIER)
        try:
            pm.run(module.operation)
        except ir.MLIRError:
            return False
        return True

    def _run_pipeline(self, module: ir.Module, ctx: ir.Context) -> bool:
        pm = build_pass_manager(self.pipeline, ctx)
        if self.opts.mlir_print_ir_after_all:
            pm.enable_ir_printing()
        if self.opts.mlir_timing:
            pm.enable_timing()  # reported when pm is destroyed, on return
        sys.stdout.flush()
        sys.stderr.flush()  # the pass manager writes to fd 2 directly
        try:
            pm.run(module.operation)
        except ir.MLIRError:
            self._print_repro()
            return False
        except Exception:
            self._print_repro()
            raise
        return True

    def _print_repro(self) -> None:
        if self.opts.verify_diagnostics:  # the failure was expected
            return
        args = [shlex.quote(self.input_path)]
        if self.opts.split_input_file:
            args.append("--split-input-file")
        if self.opts.mlir_very_unsafe_disable_verifier_on_parsing:
            args.append("--mlir-very-unsafe-disable-verifier-on-parsing")
        args += [f"--irdl-file={shlex.quote(path)}" for path in self.opts.irdl_file]
        args.append(f"--pass-pipeline={shlex.quote(str(self.pipeline))}")
        sys.stderr.write(f"note: reproduce with: tile-opt {' '.join(args)}\n")


# ----------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------


def pass_list() -> str:
    """The registered passes with their summaries and options (``--list-passes``)."""
    rows = []
    for name in sorted(REGISTRY):
        info = REGISTRY[name]
        rows.append((f"  --{name}", info.summary))
        rows += [(f"      {option}=<value>", help_text)
                 for option, help_text in info.options.items()]
    width = max((len(flag) for flag, _ in rows), default=0) + 2
    return ("tile-mlir passes (--<pass>[=<options>], or by name in --pass-pipeline):\n"
            + "".join(f"{flag:<{width}}{text}\n" for flag, text in rows)
            + "Any other --<pass>[=<options>] names an upstream MLIR pass.\n")


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _argument_parser() -> argparse.ArgumentParser:
    # The pass flags (--<pass>[=<options>]) are not argparse options. They are read from
    # the leftover arguments, in order, so that registered and upstream passes mix.
    p = _ArgumentParser(
        prog="tile-opt", allow_abbrev=False,
        usage="tile-opt [input|-] [-o out] [--pass-pipeline=PIPELINE | --<pass>[=<options>] "
              "...] [options]",
        description="Parse MLIR with the tile dialect, verify it, run passes, print it.",
        epilog=pass_list(), formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", dest="output", default="-", metavar="FILE",
                   help="write the output here (default: stdout)")
    p.add_argument("--pass-pipeline", metavar="PIPELINE",
                   help="a textual pipeline, e.g. "
                        "'builtin.module(tile-lower-reduction,canonicalize)'")
    p.add_argument("--split-input-file", action="store_true",
                   help=f"process each '{SPLIT_MARKER}'-separated chunk on its own")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check the diagnostics against the '// expected-*' comments")
    p.add_argument("--mlir-print-ir-after-all", action="store_true",
                   help="print the IR after each pass, to stderr")
    p.add_argument("--mlir-timing", action="store_true",
                   help="report the time each pass takes, to stderr")
    p.add_argument("--mlir-very-unsafe-disable-verifier-on-parsing", action="store_true",
                   help=f"skip {POST_PARSE_VERIFIER} after parsing")
    p.add_argument("--irdl-file", action="append", default=[], metavar="FILE",
                   help="load the IRDL dialects of FILE before parsing (repeatable)")
    p.add_argument("--tile-to-ptx", action="store_true",
                   help="run the whole pipeline to binary (tile_mlir.pipeline) and write the PTX")
    p.add_argument("--tile-to-cubin", action="store_true",
                   help="the same, then ptxas: write the cubin (needs -o)")
    p.add_argument("--chip", default="sm_90a", help="the target for --tile-to-ptx/--tile-to-cubin")
    p.add_argument("--fold", default="linear", choices=("linear", "tree"),
                   help="tile-lower-reduction's fold for --tile-to-ptx/--tile-to-cubin")
    p.add_argument("--list-passes", action="store_true",
                   help="list the tile-mlir passes and their options")
    p.add_argument("--version", action="version", version=f"tile-opt (tile-mlir) {__version__}")
    return p


def _to_binary(opts, inputs: list[str], pass_flags: list[str]) -> int:
    """--tile-to-ptx / --tile-to-cubin: the pipeline to binary, on one input."""
    from ..pipeline import CompileError, lower_to_ptx, ptx_to_cubin

    if pass_flags or opts.pass_pipeline is not None or len(inputs) > 1:
        raise UsageError("--tile-to-ptx/--tile-to-cubin take one input and no other passes")
    if opts.tile_to_cubin and opts.output == "-":
        raise UsageError("--tile-to-cubin writes a binary: give it -o FILE")
    path = inputs[0] if inputs else "-"
    try:
        text = sys.stdin.read() if path == "-" else open(path).read()
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror}") from None
    try:
        ptx = lower_to_ptx(text, opts.chip, opts.fold).ptx
        data = ptx_to_cubin(ptx, opts.chip) if opts.tile_to_cubin else ptx.encode()
    except CompileError as e:
        sys.stderr.write(f"{path}: error: {e}\n")
        return 1
    if data is None:
        raise UsageError("--tile-to-cubin needs ptxas on PATH")
    if opts.output == "-":
        sys.stdout.write(data.decode())
    else:
        with open(opts.output, "wb") as f:
            f.write(data)
    return 0


def _main(argv: list[str]) -> int:
    opts, rest = _argument_parser().parse_known_args(argv)
    if opts.list_passes:
        sys.stdout.write(pass_list())
        return 0
    inputs = [a for a in rest if a == "-" or not a.startswith("-")]
    pass_flags = [a for a in rest if a.startswith("--")]
    if opts.tile_to_ptx or opts.tile_to_cubin:
        return _to_binary(opts, inputs, pass_flags)
    stray = [a for a in rest if a not in inputs and a not in pass_flags]
    if stray:
        raise UsageError(f"unknown option '{stray[0]}'")
    if len(inputs) > 1:
        raise UsageError(f"more than one input file: {' '.join(inputs)}")
    if opts.pass_pipeline is not None and pass_flags:
        raise UsageError("--pass-pipeline cannot be used with individual pass flags "
                         f"({' '.join(pass_flags)})")
    # Check the whole pipeline, with a scratch context, before reading any input.
    ctx = new_context()
    if opts.pass_pipeline is not None:
        pipeline = parse_pipeline(opts.pass_pipeline)
    else:
        pipeline = pipeline_from_flags(pass_flags, ctx)
    if pipeline is not None:
        build_pass_manager(pipeline, ctx)
    return Driver(opts, inputs[0] if inputs else "-", pipeline).run()


def main(argv: list[str] | None = None) -> int:
    """The ``tile-opt`` entry point. Returns the exit status."""
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        sys.stderr.write(f"tile-opt: {e}\n")
        return 1
    except Exception as e:  # noqa: BLE001 - a bug: report it without a traceback
        show_traceback = env_flag("TILE_OPT_TRACEBACK")
        if show_traceback:
            traceback.print_exc()
        sys.stderr.write(f"tile-opt: internal error: {type(e).__name__}: {e}\n"
                         "tile-opt: this is a bug in tile-mlir, not in the input")
        sys.stderr.write("\n" if show_traceback else
                         "; set TILE_OPT_TRACEBACK=1 to see the Python traceback\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
