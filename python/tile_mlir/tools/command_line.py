"""tile-opt's command line: mlir-opt's flags, in the form ``argparse`` reads.

Every flag also has its single-dash form and a boolean flag takes ``=true``/``=false``
(``normalize``). The lowering options (``--chip``, ``--fold``) and the pass list
(``--list-passes``, the end of ``--help``) are made from the option fields of
``tile_mlir.Options`` and of each registered pass, not written here.
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from ..errors import UsageError
from ..option_fields import describe, option_fields
from ..options import Options
from ..passes import REGISTRY, TileVerify
from ..version import __version__

SPLIT_MARKER = "// -----"


# Flags that take no value; each also takes "=true" or "=false", as in mlir-opt.
BOOLEAN_FLAGS = {
    "split-input-file": f"process each '{SPLIT_MARKER}'-separated chunk on its own",
    "verify-each": "run the verifier after each pass (default: true; --verify-each=false "
                   "turns it off)",
    "allow-unregistered-dialect": "accept ops of dialects that are not registered",
    "dump-pass-pipeline": "print the pass manager's pipeline to stderr before running it",
    "show-dialects": "list the dialects tile-opt knows, and exit",
    "emit-bytecode": "write the module as MLIR bytecode",
    "mlir-print-ir-before-all": "print the IR before each pass, to stderr",
    "mlir-print-ir-after-all": "print the IR after each pass, to stderr",
    "mlir-print-ir-after-change": "print the IR after a pass only if the pass changed it",
    "mlir-print-ir-after-failure": "print the IR after a pass only if the pass failed",
    "mlir-print-ir-module-scope": "print the top-level op in IR dumps, not the op the pass "
                                  "ran on",
    "mlir-print-debuginfo": "print locations (loc(...)) in the output and in IR dumps",
    "mlir-pretty-debuginfo": "print locations in a readable form that does not parse",
    "mlir-print-op-generic": "print every op in its generic form (output and IR dumps)",
    "mlir-print-local-scope": "print the output without attribute and type aliases",
    "mlir-disable-threading": "run single-threaded (tile-opt always does, so that "
                              "diagnostics come in a stable order)",
    "mlir-pass-statistics": "report each pass's statistics, to stderr",
    "mlir-timing": "report the time each pass takes, to stderr",
    "mlir-very-unsafe-disable-verifier-on-parsing": f"skip {TileVerify.argument} after parsing",
    "list-passes": "list the tile-mlir passes and their options, and exit",
    "tile-to-ptx": "run the whole pipeline to binary (tile_mlir.compiler) and write the PTX",
    "tile-to-cubin": "the same, then ptxas: write the cubin (needs -o)",
}

# mlir-opt flags that the Python bindings give no way to honour, and why.
UNSUPPORTED = {
    "mlir-pass-pipeline-crash-reproducer": "the bindings' PassManager cannot make crash "
                                           "reproducers (a failing pipeline prints a repro line)",
    "mlir-pass-pipeline-local-reproducer": "the same",
    "mlir-print-value-users": "Operation.print has no such flag",
    "mlir-print-unique-ssa-ids": "Operation.print has no such flag",
    "no-implicit-module": "ir.Module.parse always wraps the input in a module",
    "load-pass-plugin": "the bindings cannot load C++ pass plugins",
    "load-dialect-plugin": "the bindings cannot load C++ dialect plugins",
}


def _bool(text: str) -> bool:
    value = {"true": True, "1": True, "false": False, "0": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")
    return value


def normalize(argv: list[str]) -> list[str]:
    """mlir-opt's spellings, in the one form the argument parser reads: ``--flag``.

    A single dash works like two (``-canonicalize``, ``-pass-pipeline=...``), ``-o=F``
    is ``-o F``, ``-p`` is ``--pass-pipeline``, a bare boolean flag is ``=true`` and a
    bare ``--verify-diagnostics`` is ``=all``.
    """
    out = []
    for arg in argv:
        if arg == "-" or not arg.startswith("-") or arg in ("-h", "--help"):
            out.append(arg)
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name in ("o", "p"):
            out += ["-o" if name == "o" else "--pass-pipeline"] + ([value] if eq else [])
        elif name in BOOLEAN_FLAGS:
            out.append(f"--{name}={value if eq else 'true'}")
        elif name == "verify-diagnostics":
            out.append(f"--{name}={value or 'all'}")
        else:
            out.append(f"--{name}{eq}{value}")
    return out


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def option_names(self) -> list[str]:
        return [name for name in self._option_string_actions if name.startswith("--")]


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Boolean flags show as ``--flag``, without a metavar."""

    def _format_action_invocation(self, action):
        if action.option_strings and action.type is _bool:
            return ", ".join(action.option_strings)
        return super()._format_action_invocation(action)


def _epilog() -> str:
    width = max(map(len, UNSUPPORTED)) + 4
    return (pass_list() + "\nmlir-opt flags tile-opt does not support (using one is an error):\n"
            + "".join(f"  --{name:<{width - 2}}{why}\n" for name, why in UNSUPPORTED.items()))


def argument_parser() -> _ArgumentParser:
    """The options (``normalize`` the arguments first). The pass flags,
    ``--<pass>[=<options>]``, are not options of the parser: they are read from the
    leftover arguments, in order, so that registered and upstream passes mix."""
    p = _ArgumentParser(
        prog="tile-opt", allow_abbrev=False, formatter_class=_HelpFormatter,
        usage="tile-opt [input|-] [-o out] [--pass-pipeline=PIPELINE | --<pass>[=<options>] "
              "...] [options]",
        description="Parse MLIR with the tile dialect, verify it, run passes, print it. "
                    "Every flag also has its single-dash form, as in mlir-opt.",
        epilog=_epilog())
    p.add_argument("-o", dest="output", default="-", metavar="FILE",
                   help="write the output here (default: stdout)")
    p.add_argument("--pass-pipeline", "-p", metavar="PIPELINE",
                   help="a textual pipeline, e.g. "
                        "'builtin.module(tile-lower-reduction,canonicalize)'")
    p.add_argument("--verify-diagnostics", choices=("all", "only-expected"), metavar="[=only-expected]",
                   help="check the diagnostics against the '// expected-*' comments; "
                        "=only-expected lets diagnostics that no comment names through")
    for name, help_text in BOOLEAN_FLAGS.items():
        p.add_argument(f"--{name}", type=_bool, nargs="?", const=True,
                       default=name == "verify-each", help=help_text)
    p.add_argument("--mlir-print-ir-before", action="extend", default=[], metavar="PASS[,PASS]",
                   type=lambda text: [n for n in text.split(",") if n],
                   help="print the IR before these passes, to stderr (repeatable)")
    p.add_argument("--mlir-print-ir-after", action="extend", default=[], metavar="PASS[,PASS]",
                   type=lambda text: [n for n in text.split(",") if n],
                   help="print the IR after these passes, to stderr (repeatable)")
    p.add_argument("--mlir-pass-statistics-display", choices=("list", "pipeline"),
                   default="pipeline", help="how --mlir-pass-statistics shows them")
    p.add_argument("--mlir-elide-elementsattrs-if-larger", type=int, metavar="N",
                   help="elide elements attributes with more than N elements in the output")
    p.add_argument("--irdl-file", action="append", default=[], metavar="FILE",
                   help="load the IRDL dialects of FILE before parsing (repeatable)")
    for f in option_fields(Options):  # --chip, --fold: for --tile-to-ptx/--tile-to-cubin
        p.add_argument(f"--{f.name}", type=_parsed_by(f.metadata["parse"]), default=f.default,
                       metavar=f.metadata["metavar"],
                       help=f"for --tile-to-ptx/--tile-to-cubin: {describe(f)}")
    p.add_argument("--version", action="version", version=f"tile-opt (tile-mlir) {__version__}")
    return p


def _parsed_by(parse):
    """An argparse type that reads a value with an option field's parser."""
    def read(text: str):
        try:
            return parse(text)
        except ValueError as e:  # OptionError: argparse reports it as a usage error
            raise argparse.ArgumentTypeError(str(e)) from None

    read.__name__ = getattr(parse, "__qualname__", "value")
    return read


def pass_list() -> str:
    """The registered passes with their summaries and options (``--list-passes``), from
    each pass's option fields."""
    rows = []
    for name in sorted(REGISTRY):
        cls = REGISTRY[name]
        rows.append((f"  --{name}", cls.summary))
        rows += [(f"      {f.name}=<{f.metadata['metavar']}>", describe(f)) for f in option_fields(cls)]
    width = max((len(flag) for flag, _ in rows), default=0) + 2
    return ("tile-mlir passes (--<pass>[=<options>], or by name in --pass-pipeline):\n"
            + "".join(f"{flag:<{width}}{text}\n" for flag, text in rows)
            + "Any other --<pass>[=<options>] names an upstream MLIR pass.\n")
