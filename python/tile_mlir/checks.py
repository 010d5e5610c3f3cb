"""The rules each tile op must satisfy, in one place, for everyone who checks them.

``problems(op)`` is every broken rule of one ``tile.reduce`` or ``tile.copy``, one
sentence each (``axes: 3 is out of range for a rank-1 source``): the semantic rules of
docs/spec.md (``tile_mlir.analysis`` for tile.reduce, ``tile_mlir.analysis_copy`` for
tile.copy) and one that needs the dispatch registry, that a ``dispatch`` attribute names
a registered variant of its op. ``tile-verify`` reports them at the op's location; the
Python builder (``tile_mlir.ops``) raises them at the user's line as it builds the op.
"""

from __future__ import annotations

import difflib

from . import lowering  # noqa: F401  (registers the variants that ``dispatch`` may name)
from .analysis import analyze
from .analysis_copy import analyze_copy
from .dispatch import variant_names

# Each tile op and its rules.
CHECKS = {"tile.reduce": analyze, "tile.copy": analyze_copy}


def problems(op) -> list[str]:
    """The rules ``op`` breaks (an empty list for an op that is not a tile op)."""
    op = getattr(op, "operation", op)
    check = CHECKS.get(op.name)
    if check is None:
        return []
    analysis = check(op)
    return analysis.errors or unknown_variant(op.name, analysis.info.dispatch)


def unknown_variant(op_name: str, name: str | None) -> list[str]:
    """``dispatch = "name"`` that no variant of ``op_name`` has, on any target."""
    known = variant_names(op_name)
    if name is None or name in known or not known:
        return []
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return [f'dispatch: no lowering variant is named "{name}"{hint}; the variants are: {", ".join(known)}']
