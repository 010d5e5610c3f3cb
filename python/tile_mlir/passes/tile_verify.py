"""tile-verify: check every tile op against the rules of docs/spec.md.

Each broken rule is one error at the op's location, naming the rule, e.g.
``'tile.reduce' op axes: 2 is out of range for a rank-2 source``. The rules
themselves live in ``tile_mlir.analysis`` (tile.reduce) and ``tile_mlir.analysis_copy``
(tile.copy), except one that needs the dispatch registry: a ``dispatch`` attribute must
name a registered variant of its op. ``tile-opt`` runs this pass right after parsing,
as mlir-opt verifies.
"""

from __future__ import annotations

import difflib

from ..analysis import analyze
from ..analysis_copy import analyze_copy
from ..dispatch import variant_names
from ..ir import ir
from ..vocab import REDUCE_OPS
from . import PassInfo, register


def emit_errors(op, errors) -> None:
    for e in errors:
        op.location.emit_error(f"'{op.name}' op {e}")


def verify(root) -> bool:
    """Report every broken rule under ``root``; True when there were none."""
    bad = []

    def visit(op):
        check = _CHECKS.get(op.name)
        if check is not None:
            analysis = check(op)
            errors = analysis.errors or _unknown_variant(op.name, analysis.info.dispatch)
            emit_errors(op, errors)
            if errors:
                bad.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return not bad


# Each tile op and its rules.
_CHECKS = {**{name: analyze for name in REDUCE_OPS}, "tile.copy": analyze_copy}


def _unknown_variant(op_name: str, name: str | None) -> list[str]:
    """``dispatch = "name"`` that no variant of ``op_name`` has, on any target."""
    known = variant_names("tile.reduce" if op_name in REDUCE_OPS else op_name)
    if name is None or name in known or not known:
        return []
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return [f'dispatch: no lowering variant is named "{name}"{hint}; the variants are: {", ".join(known)}']


def _make():
    def run(op, pass_):
        if not verify(op):
            pass_.signal_pass_failure()

    return run


register(PassInfo("tile-verify", "Check tile ops against the semantic rules of docs/spec.md", _make))
