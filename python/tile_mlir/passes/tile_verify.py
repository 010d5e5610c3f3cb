"""tile-verify: check every tile op against the rules of docs/spec.md.

Each broken rule is one error at the op's location, naming the rule, e.g.
``'tile.reduce' op axes: 2 is out of range for a rank-2 source``. The rules
themselves live in ``tile_mlir.checks`` (which the Python builder, ``tile_mlir.ops``,
checks too). ``tile-opt`` runs this pass right after parsing, as mlir-opt verifies.
"""

from __future__ import annotations

from ..checks import problems
from ..ir import ir
from . import PassInfo, register


def emit_errors(op, errors) -> None:
    for e in errors:
        op.location.emit_error(f"'{op.name}' op {e}")


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
