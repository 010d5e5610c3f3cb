"""tile-lower-reduction: lower every ``tile.reduce`` through the dispatch registry.

For each op, the target and its ``sm_XX`` come from the enclosing
``gpu.module``'s ``#nvvm.target`` (or the ``chip`` option), the op is analysed
once (``tile_mlir.analysis``), and ``tile_mlir.dispatch`` picks the first
applicable variant. Afterwards no ``tile.reduce`` is left, or the pass has
failed with one error per unlowered op, listing every variant with its reasons.
"""

from __future__ import annotations

import re

from mlir import rewrite

from .. import lowering  # noqa: F401  (registers the variants)
from ..analysis import analyze
from ..dispatch import DispatchContext, DispatchError, dispatch
from . import PassInfo, register
from .tile_verify import emit_errors

_CHIP = re.compile(r'chip\s*=\s*"([^"]+)"')


def target_of(op, chip_option: str | None) -> tuple[str, str | None]:
    """(target, chip) from the closest enclosing gpu.module's first target attribute."""
    parent = op.parent
    while parent is not None:
        parent = getattr(parent, "operation", parent)
        if parent.name == "gpu.module" and "targets" in parent.attributes:
            targets = parent.attributes["targets"]
            first = str(targets[0]) if len(targets) else ""
            if first.startswith("#nvvm.target"):
                m = _CHIP.search(first)
                return "cuda", (m.group(1) if m else "sm_50")
            return first.split("<")[0].lstrip("#").split(".")[0] or "unknown", None
        parent = parent.parent
    return "cuda", chip_option


def _make(chip: str | None = None, fold: str = "linear"):
    if fold not in ("linear", "tree"):
        raise ValueError(f"tile-lower-reduction: fold must be linear or tree, got {fold!r}")

    def lower(op, rewriter):
        op = op.operation
        try:
            target, op_chip = target_of(op, chip)
            analysis = analyze(op)
            ctx = DispatchContext(target, op_chip, analysis, {"fold": fold})
            dispatch("tile.reduce", op, ctx, rewriter, forced=analysis.info.dispatch if analysis.info else None)
        except DispatchError as e:
            emit_errors(op, [str(e)])
        except Exception as e:  # a bug in a variant: a diagnostic, never a traceback
            emit_errors(op, [f"internal error in tile-lower-reduction: {type(e).__name__}: {e}"])
        else:
            return None
        failures.append(op)
        return True  # no match: the op stays, and the pass fails below

    failures: list = []

    def run(root, pass_):
        failures.clear()
        patterns = rewrite.RewritePatternSet()
        patterns.add("tile.reduce", lower)
        rewrite.walk_and_apply_patterns(root, patterns.freeze())
        if failures:
            pass_.signal_pass_failure()

    return run


register(
    PassInfo(
        "tile-lower-reduction",
        "Lower tile.reduce to scf loops and gpu.shuffle butterflies through the dispatch registry",
        _make,
        {
            "chip": "the sm_XX to dispatch for where no enclosing gpu.module names one",
            "fold": "the in-thread fold order: linear (default) or tree",
        },
    )
)
