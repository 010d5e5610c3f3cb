"""tile-verify: check every tile op against the rules of docs/spec.md.

Each broken rule is one error at the op's location, naming the rule, e.g.
``'tile.reduce' op axes: 2 is out of range for a rank-2 source``; a layout that does not
parse is reported at its column inside the attribute (``diagnostics.layout_location``).
The rules themselves live in ``tile_mlir.checks`` (which the Python builder,
``tile_mlir.ops``, checks too). ``tile-opt`` runs this pass right after parsing, as
mlir-opt verifies.
"""

from __future__ import annotations

from ..checks import problems
from ..diagnostics import layout_location
from ..ir import ir
from . import PassInfo, register


def emit_errors(op, errors) -> None:
    """Each error at the op's location; one about a layout's text at its column there
    (``diagnostics.layout_location``: placed where the source is known)."""
    for e in errors:
        loc = op.location
        if getattr(e, "column", None) is not None:
            loc = layout_location(loc, e.attribute, e.column)
        loc.emit_error(f"'{op.name}' op {e}")


def verify(root) -> bool:
    """Report every broken rule under ``root``; True when there were none."""
    bad = []

    def visit(op):
        errors = problems(op)
        emit_errors(op, errors)
        if errors:
            bad.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return not bad


def _make():
    def run(op, pass_):
        if not verify(op):
            pass_.signal_pass_failure()

    return run


register(PassInfo("tile-verify", "Check tile ops against the semantic rules of docs/spec.md", _make))
