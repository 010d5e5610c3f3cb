"""tile-lower-copy: lower every ``tile.copy`` through the dispatch registry.

For each op, the target and its chip come from the enclosing ``gpu.module`` (or the
``chip`` option), as in ``tile-lower-reduction``; the op is analysed
(``tile_mlir.analysis_copy``) and ``tile_mlir.dispatch`` picks the first applicable
variant (``copy_vector``, ``copy_scalar``: ``tile_mlir.lowering.copy``). Afterwards no
``tile.copy`` is left, or the pass has failed with one error per op it could not lower,
listing every variant with its reasons.

Each op is lowered in place: what it lowers to depends on the IR around it (what its
origin indices are multiples of, where its memref comes from), not only on its types
and attributes, so there is no template to share between ops.
"""

from __future__ import annotations

from mlir import rewrite

from .. import lowering  # noqa: F401  (registers the variants)
from ..analysis_copy import analyze_copy
from ..dispatch import DispatchContext, DispatchError, dispatch
from ..options import HELP, Options
from . import PassInfo, register
from .tile_lower_reduction import target_of
from .tile_verify import emit_errors


def _make(**options):
    opts = Options.from_mapping(options)
    failures: list = []

    def lower(op, rewriter):
        op = op.operation
        try:
            target, chip = target_of(op, opts.chip)
            ctx = DispatchContext(target, chip, analyze_copy(op), opts)
            forced = ctx.analysis.info.dispatch if ctx.analysis.info else None
            dispatch("tile.copy", op, ctx, rewriter, forced=forced)
        except DispatchError as e:
            emit_errors(op, [str(e)])
        except Exception as e:  # a bug in a variant: a diagnostic, never a traceback
            emit_errors(op, [f"internal error in tile-lower-copy: {type(e).__name__}: {e}"])
        else:
            return None
        failures.append(op)
        return True  # no match: the op stays, and the pass fails below

    def run(root, pass_):
        failures.clear()
        patterns = rewrite.RewritePatternSet()
        patterns.add("tile.copy", lower)
        rewrite.walk_and_apply_patterns(root, patterns.freeze())
        if failures:
            pass_.signal_pass_failure()

    return run


register(
    PassInfo(
        "tile-lower-copy",
        "Lower tile.copy to vector and memref accesses, bounds-checked, through the dispatch registry",
        _make,
        {"chip": HELP["chip"]},
    )
)
