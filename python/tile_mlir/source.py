"""Reading a module: parse, then ``tile-verify``. The one path that tile-opt and the
compiler (``tile_mlir.compile``) share.

``new_context`` makes the context both use: the tile dialect loaded, error diagnostics
sent to the context's handlers (a ``diagnostics.DiagnosticSink``), and one thread, so
that diagnostics come in a stable order and the LLVM stage can run in a forked child
(``pipeline.child``). ``load`` parses text (or MLIR bytecode) and verifies its tile ops;
every diagnostic, the parser's, the verifier's and ``tile-verify``'s, goes to the sink,
placed in the text under its name (``source_name``: a file name, ``<stdin>``,
``<source>``).
"""

from __future__ import annotations

from mlir.passmanager import PassManager

from .diagnostics import DiagnosticSink, parse_failure
from .ir import ir, make_context, name_source
from .passes import TileVerify


def new_context(allow_unregistered: bool = False) -> ir.Context:
    """A context with the tile dialect, its errors sent to its diagnostic handlers."""
    ctx = make_context()
    ctx.emit_error_diagnostics = True  # errors reach the sink, not only MLIRError
    ctx.enable_multithreading(False)  # diagnostics in a stable order; a fork is safe
    ctx.allow_unregistered_dialects = allow_unregistered
    return ctx


def verify_tile_ops(module: ir.Module) -> None:
    """Run ``tile-verify`` on ``module``, as tile-opt does right after parsing; raises
    ``ir.MLIRError`` (with one diagnostic per broken rule, at its op) on failure."""
    pm = PassManager("any", module.context)
    TileVerify().add_to(pm)
    pm.run(module.operation)


def load(source: str | bytes, ctx: ir.Context, sink: DiagnosticSink, source_name: str, *,
         verify: bool = True, name_locations: bool = False) -> tuple[ir.Module | None, str]:
    """Parse ``source`` (text, or MLIR bytecode) in ``ctx`` and, with ``verify``, run
    ``tile-verify`` on it. Returns the module and ""; or None and the step that failed
    (``parse``, ``tile-verify``), its diagnostics already in ``sink``. With
    ``name_locations`` the module's locations name ``source_name`` instead of ``-`` (what
    MLIR calls a parsed string), so that later passes and the interpreter name the file."""
    errors = sink.errors
    try:
        module = ir.Module.parse(source, ctx)
    except ir.MLIRError:
        if sink.errors == errors and isinstance(source, str):  # the parser said nothing
            sink.report(parse_failure(source, source_name, sink.dialects))
        return None, "parse"
    if name_locations:
        name_source(module.operation, source_name)
    if verify:
        try:
            verify_tile_ops(module)
        except ir.MLIRError:
            return None, "tile-verify"
    return module, ""
