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
import shlex
import sys
import traceback
from typing import NoReturn

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

from ..diagnostics import (
    DiagnosticSink,
    check_expectations,
    format_diag,
    irdl_dialects,
    parse_expectations,
    tile_dialects,
)
from ..passes import REGISTRY, add_pass
from ..pipeline import Anchor, build_pass_manager, parse_pipeline, pipeline_from_flags

# The pass that checks tile ops right after parsing, as mlir-opt's verifier does.
POST_PARSE_VERIFIER = "tile-verify"
SPLIT_MARKER = "// -----"


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
        self.dialects = {**tile_dialects(),
                         **{k: v for _, text in self.irdl_files for k, v in irdl_dialects(text).items()}}

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
        sink = DiagnosticSink(ctx, self.files, buffer=self.input_name, dialects=self.dialects)
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
    from ..compiler import lower_to_ptx, ptx_to_cubin
    from ..errors import CompileError
    from ..options import Options

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
        options = Options(chip=opts.chip, fold=opts.fold)
        ptx = lower_to_ptx(text, options).ptx
        data = ptx_to_cubin(ptx, options) if opts.tile_to_cubin else ptx.encode()
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
