"""tile-verify: check every tile op against the rules of docs/spec.md.

Each broken rule is one error at the op's location, naming the rule, e.g.
``'tile.reduce' op axes: 2 is out of range for a rank-2 source``; a layout that does not
parse is reported at its column inside the attribute (``diagnostics.layout_location``).
The rules themselves live in ``tile_mlir.checks`` (which the Python builder,
``tile_mlir.ops``, checks too). ``tile-opt`` runs this pass right after parsing, as
mlir-opt verifies.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..checks import problems
from ..ir import ir
from .common import TilePass, emit_errors


@dataclass(frozen=True)
class TileVerify(TilePass):
    argument = "tile-verify"
    summary = "Check tile ops against the semantic rules of docs/spec.md"

    def run(self, op, pass_) -> None:
        if not verify(op):
            pass_.signal_pass_failure()


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
