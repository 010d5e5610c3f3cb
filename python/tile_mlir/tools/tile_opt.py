"""tile-opt: an mlir-opt-style driver for tile-mlir.

    tile-opt [input|-] [-o out]
             [--pass-pipeline='builtin.module(...)' | --<pass>[=<options>] ...] [options]

tile-opt parses the input with the `tile` dialect loaded and runs `tile-verify` right
after parsing, as mlir-opt verifies. Then it runs the requested passes and prints the
module. The command line reads like mlir-opt's: every flag also has its single-dash
form (``-canonicalize``, ``-pass-pipeline=...``), a boolean flag takes ``=true`` or
``=false``, and ``--help`` lists the mlir-opt flags it honours and the few that the
Python bindings cannot.

tile-opt is a thin driver over what ``tile_mlir.compile`` uses: the input is read by
``tile_mlir.source`` (parse, then tile-verify), the passes, tile-mlir's and upstream's
mixed in one pipeline, are built by ``tile_mlir.pipeline.manager``, and
``--tile-to-ptx`` is ``tile_mlir.compiler.lower_to_ptx`` itself; diagnostics are printed
and verified by ``tile_mlir.diagnostics``, the IR dumps filtered by ``ir_printing``.
This module is the ``Driver`` that runs each input chunk in a fresh context;
``command_line`` holds the flags (its ``--chip``/``--fold`` and ``--list-passes`` made
from the option fields of ``Options`` and of each pass). A pipeline that runs LLVM (``gpu-module-to-binary``)
runs each chunk in a child process (``pipeline.child``), so that LLVM's fatal errors are
an error, not a signal.

Bad input prints mlir-opt-style diagnostics and exits with status 1. A bug in
tile-mlir prints ``tile-opt: internal error: ...`` and exits with status 2. Set
``TILE_OPT_TRACEBACK=1`` to also get the Python traceback.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
import sys
import traceback
from typing import NoReturn

from ..errors import UsageError

try:
    from ..ir import env_flag
except ImportError as e:  # no bindings, or too old: say which are needed, no traceback
    sys.stderr.write(f"tile-opt: {e}\n")
    raise SystemExit(1) from None
# After tile_mlir.ir, which checks the bindings' version on import.
from mlir import ir
from mlir.dialects import irdl
from mlir.passmanager import PassDisplayMode, PassManager

from ..diagnostics import (
    Diag,
    DiagnosticSink,
    Place,
    check_expectations,
    format_diag,
    irdl_dialects,
    parse_expectations,
    tile_dialects,
)
from ..ir import available_dialects
from ..option_fields import option_fields
from ..options import Options
from ..passes import REGISTRY
from ..pipeline import text as pipeline_text
from ..pipeline.child import ChildDied, run_in_child
from ..pipeline.manager import build_pass_manager, holds, known_pass, parse_pipeline, pipeline_from_flags
from ..pipeline.text import ROOT_OP, Anchor
from ..source import load, new_context
from .command_line import SPLIT_MARKER, UNSUPPORTED, argument_parser, normalize, pass_list
from .ir_printing import IRPrinting, enable_ir_printing, selected_dumps

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


BYTECODE_MAGIC = b"ML\xefR"

# Upstream passes in which LLVM's code generator runs, and may end the process: a
# pipeline that holds one runs each chunk in a child process.
RUNS_LLVM = frozenset({"gpu-module-to-binary", "gpu-lower-to-nvvm-pipeline"})


class SourceError(UsageError):
    """Input that is not MLIR text at all (bytes that are not UTF-8, a NUL byte): a
    located diagnostic, printed as the parser's are."""

    def __init__(self, diag: Diag, files: dict[str, list[str]]):
        super().__init__(diag.message)
        self.diag, self.files = diag, files


def _read(path: str, what: str, bytecode: bool = False) -> str | bytes:
    """The text of a file (``-``: stdin), with its newlines as ``\n``; or, where
    ``bytecode`` is allowed and the file is MLIR bytecode, its bytes. Bytes that are
    not UTF-8, and NUL bytes (which MLIR's lexer would skip without a word), are a
    ``SourceError`` at their line and column."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as e:
        raise UsageError(f"cannot open {what} '{path}': {e.strerror}") from None
    if bytecode and data.startswith(BYTECODE_MAGIC):
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _source_error(path, data, e.start,
                            f"byte 0x{data[e.start]:02x} is not UTF-8: MLIR source must be UTF-8 text") from None
    if "\0" in text:
        raise _source_error(path, data, data.index(b"\0"), "unexpected NUL byte (0x00): MLIR source must be text")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _source_error(path: str, data: bytes, offset: int, message: str) -> SourceError:
    """An error at byte ``offset`` of ``data``, with MLIR's line and (byte) column."""
    name = "<stdin>" if path == "-" else path
    line_start = data.rfind(b"\n", 0, offset) + 1
    line = data.count(b"\n", 0, offset) + 1
    files = {name: data.decode("utf-8", errors="replace").split("\n")}
    return SourceError(Diag("error", Place(name, line, offset - line_start + 1), message), files)


class Driver:
    """One run of tile-opt: parse, verify, run the pipeline and print, chunk by chunk."""

    def __init__(self, opts: argparse.Namespace, input_path: str,
                 pipeline: Anchor | None):
        self.opts = opts
        self.input_path = input_path
        self.input_name = "<stdin>" if input_path == "-" else input_path
        self.pipeline = pipeline
        self.input = _read(input_path, "input file", bytecode=True)
        self.text = self.input if isinstance(self.input, str) else ""  # for diagnostics
        self.irdl_files = [(path, _read(path, "IRDL file")) for path in opts.irdl_file]
        self.files = {name: text.split("\n")
                      for name, text in [(self.input_name, self.text), *self.irdl_files]}
        self.dialects = {**tile_dialects(),
                         **{k: v for _, text in self.irdl_files for k, v in irdl_dialects(text).items()}}
        self.printing = IRPrinting(
            before_all=opts.mlir_print_ir_before_all, after_all=opts.mlir_print_ir_after_all,
            before=tuple(opts.mlir_print_ir_before), after=tuple(opts.mlir_print_ir_after),
            after_change=opts.mlir_print_ir_after_change,
            after_failure=opts.mlir_print_ir_after_failure,
            module_scope=opts.mlir_print_ir_module_scope, debug_info=opts.mlir_print_debuginfo,
            generic=opts.mlir_print_op_generic)

    def run(self) -> int:
        split = self.opts.split_input_file and isinstance(self.input, str)
        chunks = split_input(self.input) if split else [self.input]
        isolate = self.pipeline is not None and holds(self.pipeline, RUNS_LLVM)
        results = [self.isolated(chunk) if isolate else self.process(chunk) for chunk in chunks]
        ok = all(chunk_ok for chunk_ok, _ in results)
        if self.opts.emit_bytecode:
            output = b"".join(data or b"" for _, data in results)
        else:
            output = (SPLIT_MARKER + "\n").join(text or "" for _, text in results).encode()
        if self.opts.output == "-":
            sys.stdout.flush()
            sys.stdout.buffer.write(output)
        elif ok:  # as mlir-opt, keep no output file after a failure
            try:
                with open(self.opts.output, "wb") as f:
                    f.write(output)
            except OSError as e:
                raise UsageError(
                    f"cannot write output file '{self.opts.output}': {e.strerror}") from None
        return 0 if ok else 1

    def isolated(self, chunk: str | bytes) -> tuple[bool, str | bytes | None]:
        """``process`` in a child process: LLVM's fatal error ends the child, and is one
        error here."""
        try:
            return run_in_child(self.process, chunk, capture_stderr=False)
        except ChildDied as e:
            sys.stderr.write(f"tile-opt: LLVM stopped the pipeline ({e.how})\n")
            self._print_repro()
            return False, None

    def process(self, chunk: str | bytes) -> tuple[bool, str | bytes | None]:
        """Process one chunk in a fresh context, as mlir-opt does.

        Returns whether it succeeded and the printed module (None if the actions
        failed). With --verify-diagnostics, success means the expectations were met.
        """
        ctx = new_context(self.opts.allow_unregistered_dialect)
        sink = DiagnosticSink(ctx, self.files, buffer=self.input_name, dialects=self.dialects)
        with ctx:  # the current context, for passes that build IR without naming one
            self._load_irdl_files(ctx, sink)
            sink.keep = bool(self.opts.verify_diagnostics)
            output = self._actions(chunk, ctx, sink)
        sink.check()
        if not self.opts.verify_diagnostics:
            return output is not None, output
        expectations, problems = parse_expectations(chunk if isinstance(chunk, str) else "",
                                                    self.input_name)
        problems += check_expectations(sink.kept, expectations, self.input_name,
                                       only_expected=self.opts.verify_diagnostics == "only-expected")
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

    def _actions(self, chunk: str | bytes, ctx: ir.Context, sink: DiagnosticSink) -> str | bytes | None:
        """Parse, verify, run the pipeline. Returns the printed module, or None."""
        opts = self.opts
        module, _ = load(chunk, ctx, sink, self.input_name,
                         verify=not opts.mlir_very_unsafe_disable_verifier_on_parsing,
                         name_locations=opts.mlir_print_debuginfo or opts.emit_bytecode)
        if module is None:
            return None
        if not self._run_pipeline(module, ctx):
            return None
        if opts.emit_bytecode:
            buffer = _Bytes()
            module.operation.write_bytecode(buffer)
            return buffer.data
        return module.operation.get_asm(
            enable_debug_info=opts.mlir_print_debuginfo, pretty_debug_info=opts.mlir_pretty_debuginfo,
            print_generic_op_form=opts.mlir_print_op_generic, use_local_scope=opts.mlir_print_local_scope,
            large_elements_limit=opts.mlir_elide_elementsattrs_if_larger) + "\n"

    def _run_pipeline(self, module: ir.Module, ctx: ir.Context) -> bool:
        opts = self.opts
        pm = (build_pass_manager(self.pipeline, ctx) if self.pipeline is not None
              else PassManager(ROOT_OP, ctx))
        if opts.dump_pass_pipeline:
            sys.stderr.write(f"Pass Manager with {_count_passes(pm)} passes:\n{pm}\n\n")
        if self.pipeline is None:
            return True
        pm.enable_verifier(opts.verify_each)
        enable_ir_printing(pm, self.printing)
        if opts.mlir_timing:
            pm.enable_timing()  # reported when pm is destroyed, on return
        if opts.mlir_pass_statistics:  # the same
            pm.enable_statistics(PassDisplayMode.LIST if opts.mlir_pass_statistics_display == "list"
                                 else PassDisplayMode.PIPELINE)
        sys.stdout.flush()
        sys.stderr.flush()  # the pass manager writes to fd 2 directly
        try:
            with selected_dumps(self.printing):
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
        if self.opts.allow_unregistered_dialect:
            args.append("--allow-unregistered-dialect")
        args += [f"--irdl-file={shlex.quote(path)}" for path in self.opts.irdl_file]
        args.append(f"--pass-pipeline={shlex.quote(str(self.pipeline))}")
        sys.stderr.write(f"note: reproduce with: tile-opt {' '.join(args)}\n")


class _Bytes:
    """A binary file-like object that keeps what is written to it."""

    def __init__(self):
        self.data = b""

    def write(self, data) -> int:
        self.data += bytes(data)
        return len(data)


def _count_passes(pm: PassManager) -> int | str:
    """How many passes ``pm`` has at its top level (mlir-opt's --dump-pass-pipeline)."""
    try:
        return len(pipeline_text.parse_pipeline(str(pm)).elements)
    except UsageError:  # option text the grammar does not follow
        return "?"


def _to_binary(opts, inputs: list[str], pass_flags: list[str]) -> int:
    """--tile-to-ptx / --tile-to-cubin: the pipeline to binary, on one input."""
    from ..compiler import lower_to_ptx, ptx_to_cubin
    from ..errors import CompileError

    if pass_flags or opts.pass_pipeline is not None or len(inputs) > 1:
        raise UsageError("--tile-to-ptx/--tile-to-cubin take one input and no other passes")
    if opts.tile_to_cubin and opts.output == "-":
        raise UsageError("--tile-to-cubin writes a binary: give it -o FILE")
    path = inputs[0] if inputs else "-"
    text = _read(path, "input file")
    try:
        options = Options(**{f.name: getattr(opts, f.name) for f in option_fields(Options)})
        lowered = lower_to_ptx(text, options, source_name="<stdin>" if path == "-" else path)
        data = ptx_to_cubin(lowered.ptx, lowered.chip) if opts.tile_to_cubin else lowered.ptx.encode()
    except CompileError as e:
        sys.stderr.write(f"{e.message}\n")
        if e.repro:
            sys.stderr.write(f"note: {e.stage} failed; reproduce with: {e.repro}\n")
        return 1
    if data is None:
        raise UsageError("--tile-to-cubin needs ptxas on PATH")
    if opts.output == "-":
        sys.stdout.write(data.decode())
    else:
        with open(opts.output, "wb") as f:
            f.write(data)
    return 0


def _unknown_option(flag: str) -> NoReturn:
    name = flag.lstrip("-").partition("=")[0]
    reason = UNSUPPORTED.get(name)
    if reason:
        raise UsageError(f"--{name} is not supported: {reason}")
    known = [*argument_parser().option_names(), *(f"--{p}" for p in REGISTRY)]
    close = difflib.get_close_matches(f"--{name}", known, n=1, cutoff=0.75)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    raise UsageError(f"unknown command-line option '{flag.partition('=')[0]}'{hint}")


def _main(argv: list[str]) -> int:
    opts, rest = argument_parser().parse_known_args(normalize(argv))
    if opts.list_passes:
        sys.stdout.write(pass_list())
        return 0
    if opts.show_dialects:
        extra = [irdl_dialects(_read(path, "IRDL file")) for path in opts.irdl_file]
        names = available_dialects([*tile_dialects(), *(name for d in extra for name in d)])
        sys.stdout.write(f"Available Dialects: {','.join(names)}\n")
        return 0
    ctx = new_context()  # a scratch context, to check the pipeline before reading input
    inputs = [a for a in rest if a == "-" or not a.startswith("-")]
    flags = [a for a in rest if a not in inputs]
    for flag in flags:
        if not known_pass(flag.lstrip("-").partition("=")[0], ctx):
            _unknown_option(flag)
    if opts.tile_to_ptx or opts.tile_to_cubin:
        return _to_binary(opts, inputs, flags)
    if len(inputs) > 1:
        raise UsageError(f"more than one input file: {' '.join(inputs)}")
    if opts.pass_pipeline is not None and flags:
        raise UsageError("--pass-pipeline cannot be used with individual pass flags "
                         f"({' '.join(flags)})")
    if opts.emit_bytecode and opts.split_input_file:
        raise UsageError("--emit-bytecode writes one module: it cannot be used with "
                         "--split-input-file")
    for flag in ("before", "after"):
        for name in getattr(opts, f"mlir_print_ir_{flag}"):
            if not known_pass(name, ctx):
                raise UsageError(f"--mlir-print-ir-{flag}: unknown pass '{name}'")
    if opts.pass_pipeline is not None:
        pipeline = parse_pipeline(opts.pass_pipeline)
    else:
        pipeline = pipeline_from_flags(flags, ctx)
    if pipeline is not None:
        build_pass_manager(pipeline, ctx)
    return Driver(opts, inputs[0] if inputs else "-", pipeline).run()


def main(argv: list[str] | None = None) -> int:
    """The ``tile-opt`` entry point. Returns the exit status."""
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except SourceError as e:
        sys.stderr.write(format_diag(e.diag, e.files))
        return 1
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
