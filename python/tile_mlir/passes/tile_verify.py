"""tile-verify: check every tile op against the rules of docs/spec.md.

Each broken rule is one error at the op's location, naming the rule, e.g.
``'tile.reduce' op axes: 2 is out of range for a rank-2 source``; a layout that does not
parse is reported at its column inside the attribute (``diagnostics.layout_location``). The rules
themselves live in ``tile_mlir.analysis`` (tile.reduce) and ``tile_mlir.analysis_copy``
(tile.copy), except one that needs the dispatch registry: a ``dispatch`` attribute must
name a registered variant of its op. ``tile-opt`` runs this pass right after parsing,
as mlir-opt verifies.
"""

from __future__ import annotations

import difflib

from ..analysis import analyze
from ..analysis_copy import analyze_copy
from ..diagnostics import layout_location
from ..dispatch import variant_names
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
_CHECKS = {"tile.reduce": analyze, "tile.copy": analyze_copy}


def _unknown_variant(op_name: str, name: str | None) -> list[str]:
    """``dispatch = "name"`` that no variant of ``op_name`` has, on any target."""
    known = variant_names(op_name)
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
