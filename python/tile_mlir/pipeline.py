"""Pass pipelines: the textual grammar, the pass-manager builder, and the stage runner.

One place turns pipeline text into a running pass manager, for ``tile-opt`` and for the
library alike:

* ``parse_pipeline`` reads mlir-opt's textual grammar,
  ``builtin.module(tile-lower-reduction{fold=tree},gpu.module(cse))``, into ``Anchor``
  and ``PassElement`` values; ``parse_options`` reads a pass's ``{key=value ...}``.
* ``pipeline_from_flags`` turns ``--<pass>[=<options>]`` flags into the same tree.
* ``build_pass_manager`` makes an upstream ``PassManager`` from the tree. tile-mlir's
  Python passes (``tile_mlir.passes.REGISTRY``) are added with ``PassManager.add(fn,
  ...)``; every other name goes verbatim to ``PassManager.add("...")``. The bindings
  cannot put a Python pass inside an op-anchored nested pass manager, so a tile pass
  under an anchor, as in ``gpu.module(tile-lower-reduction)``, is added at the top
  level, wrapped so that it runs on every op that the anchor path selects.
* ``IRPrinting``, ``enable_ir_printing`` and ``selected_dumps`` carry mlir-opt's
  ``--mlir-print-ir-*`` flags to the bindings' IR printing, and keep only the dumps of
  the passes named in ``--mlir-print-ir-before=``/``-after=``.
* ``run_stages`` runs the library's pipeline to binary (``STAGES``), each stage its own
  pass manager, so that a failure names its stage; it raises ``CompileError`` with the
  diagnostics and a one-line ``tile-opt`` repro, whose input is saved under the compile
  cache (``save_repro``: the newest ``REPRO_KEEP`` files are kept). The lowering options
  reach the tile passes spelled as pass options (``Options.spelled()``), the same text a
  user would type.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from mlir.passmanager import PassManager

from .cache import cache_dir
from .diagnostics import Diag, format_errors, to_diag
from .errors import CompileError, UsageError
from .ir import ir
from .options import Options
from .passes import REGISTRY, make_pass

# mlir-opt's pass flags run on the parsed top-level op, which is always a builtin.module.
ROOT_OP = "builtin.module"


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


def known_pass(name: str, ctx: ir.Context) -> bool:
    """Whether ``name`` is a tile pass or an upstream pass or pipeline."""
    if name in REGISTRY:
        return True
    try:
        PassManager("any", ctx).add(name)
    except ValueError as e:
        return _UNKNOWN_PASS not in str(e)
    return True


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
# IR printing (mlir-opt's --mlir-print-ir-* flags)
# ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class IRPrinting:
    """When to print the IR around passes, as mlir-opt's ``--mlir-print-ir-*`` flags say.

    ``before``/``after`` name passes by argument (``cse``, ``tile-lower-reduction``).
    The bindings' ``PassManager.enable_ir_printing`` prints before or after *every*
    pass; ``selected_dumps`` keeps only the dumps of the named ones.
    """

    before_all: bool = False
    after_all: bool = False
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    after_change: bool = False  # print after a pass only if it changed the IR
    after_failure: bool = False  # print after a pass only if it failed
    module_scope: bool = False  # print the top-level op, not the op the pass ran on
    debug_info: bool = False
    generic: bool = False

    def keeps(self, when: str, argument: str) -> bool:
        """Whether the dump ``when`` ("Before"/"After") the pass ``argument`` is wanted."""
        if when == "Before":
            return self.before_all or argument in self.before
        return self.after_all or self.after_failure or argument in self.after

    @property
    def selective(self) -> bool:
        """Whether some dumps must be dropped (a pass list without its ``-all``)."""
        return bool(self.before and not self.before_all
                    or self.after and not (self.after_all or self.after_failure))


def enable_ir_printing(pm: PassManager, printing: IRPrinting) -> None:
    """Turn on the bindings' IR printing on ``pm`` as ``printing`` asks."""
    before = printing.before_all or bool(printing.before)
    after = printing.after_all or printing.after_failure or bool(printing.after)
    if before or after:
        pm.enable_ir_printing(
            print_before_all=before, print_after_all=after,
            print_module_scope=printing.module_scope, print_after_change=printing.after_change,
            print_after_failure=printing.after_failure, enable_debug_info=printing.debug_info,
            print_generic_op_form=printing.generic)


# "// -----// IR Dump After CSE (cse) ('func.func' operation: @f) //----- //"
_DUMP_HEADER = re.compile(r"// -----// IR Dump (Before|After) .*?\(([^()]+)\)(?: \('.*)? //----- //")


@contextmanager
def selected_dumps(printing: IRPrinting):
    """Around a pass-manager run: keep only the IR dumps ``printing`` selects.

    The pass manager writes its dumps straight to file descriptor 2. When some must be
    dropped, that descriptor goes to a temporary file during the run (Python's
    ``sys.stderr``, and so the diagnostics, still reach the terminal), and afterwards
    the wanted dumps are copied to stderr: they come after the run's diagnostics.
    """
    if not printing.selective:
        yield
        return
    sys.stderr.flush()
    terminal = os.dup(2)
    saved_stderr = sys.stderr
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        sys.stderr = open(os.dup(terminal), "w", encoding="utf-8", errors="replace")  # noqa: SIM115
        try:
            yield
        finally:
            sys.stderr.close()
            sys.stderr = saved_stderr
            os.dup2(terminal, 2)
            os.close(terminal)
            captured.seek(0)
            sys.stderr.write(_keep_dumps(captured.read().decode(errors="replace"), printing))
            sys.stderr.flush()


def _keep_dumps(text: str, printing: IRPrinting) -> str:
    """The wanted dumps of ``text``; each runs from its header to the next one."""
    kept, keep = [], True
    for line in text.splitlines(keepends=True):
        header = _DUMP_HEADER.match(line)
        if header:
            keep = printing.keeps(*header.groups())
        if keep:
            kept.append(line)
    return "".join(kept)


# ----------------------------------------------------------------------------------
# The library's stages
# ----------------------------------------------------------------------------------

# (stage name, pipeline element). The tile passes that take the lowering options get
# them spelled as pass options when the stage runs. The first TILE_STAGES lower the tile
# ops: what the CPU interpreter runs comes after them.
STAGES = (
    ("tile-lower-copy", "tile-lower-copy"),
    ("tile-lower-reduction", "tile-lower-reduction"),
    ("convert-scf-to-cf", "convert-scf-to-cf"),
    ("convert-gpu-to-nvvm", "gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1})"),
    ("tile-forward-loop-annotations", "tile-forward-loop-annotations"),
    ("tile-externalize-dynamic-shared", "tile-externalize-dynamic-shared"),
    ("reconcile-unrealized-casts", "reconcile-unrealized-casts"),
    ("gpu-module-to-binary", "gpu-module-to-binary{format=isa}"),
)
TILE_STAGES = 2


# How many repro files the compile cache keeps (the newest; older ones are deleted).
REPRO_KEEP = 20


def save_repro(text: str, suffix: str = ".mlir") -> str:
    """Save ``text`` for a repro line and return its path.

    The files live in the compile cache, ``cache_dir() / "repro"``
    (``$TILE_MLIR_CACHE_DIR/repro``), named by a digest of their text, so the same
    failure saves one file. Only the newest ``REPRO_KEEP`` are kept. Where the cache
    cannot be written, the file goes to the system's temporary directory instead.
    """
    folder = cache_dir() / "repro"
    name = hashlib.sha256(text.encode()).hexdigest()[:16] + suffix
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)  # a rewrite also makes it the newest
    except OSError:
        fd, path = tempfile.mkstemp(prefix="tile-mlir-repro-", suffix=suffix)
        with open(fd, "w") as f:
            f.write(text)
        return path
    _prune(folder, REPRO_KEEP)
    return str(folder / name)


def _prune(folder: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest files of ``folder``."""
    def age(path: Path) -> int:
        try:
            return path.stat().st_mtime_ns
        except OSError:  # deleted meanwhile, by another process
            return 0

    for old in sorted(folder.iterdir(), key=age, reverse=True)[keep:]:
        try:
            old.unlink()
        except OSError:
            pass


def spell(element: str, options: Options) -> str:
    """``element`` with the lowering options it takes as pass options, where it is a tile
    pass (``tile-lower-reduction{fold=tree}``, ``tile-lower-copy{chip=sm_80}``)."""
    info = REGISTRY.get(element)
    spelled = options.spelled(info.options) if info is not None else ""
    return f"{element}{{{spelled}}}" if spelled else element


def run_stages(module: ir.Module, stages, options: Options | None = None,
               source: str | None = None, source_name: str = "<source>", ran=()) -> None:
    """Run ``stages`` ((name, pipeline element) pairs) on ``module``, one at a time.

    A failing stage raises ``CompileError`` with its diagnostics, placed in ``source``
    (the text the module was parsed from, called ``source_name``), and a repro line that
    runs every stage so far on the saved ``source`` (default: the module's text):
    ``ran``, the stages an earlier call already ran on the module, then these.
    """
    options = Options.from_mapping(options)
    ctx = module.context
    files = {source_name: source.split("\n")} if source is not None else {}
    done: list[str] = [spell(element, options) for _, element in ran]
    for name, element in stages:
        spelled = spell(element, options)
        pm = build_pass_manager(parse_pipeline(f"{ROOT_OP}({spelled})"), ctx)
        emitted: list[Diag] = []  # warnings and remarks; MLIRError carries the errors

        def collect(d, emitted=emitted):
            emitted.append(to_diag(d, source_name, op_notes=False, files=files))
            return True

        handle = ctx.attach_diagnostic_handler(collect)
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            path = save_repro(source if source is not None else str(module))
            repro = f"tile-opt {path} --pass-pipeline='{ROOT_OP}({','.join(done + [spelled])})'"
            raise CompileError(name, format_errors(e, source_name, source, emitted), repro) from None
        finally:
            handle.detach()
        done.append(spelled)
