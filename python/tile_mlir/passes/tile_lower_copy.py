"""tile-lower-copy: lower every ``tile.copy`` through the dispatch registry.

For each op, the target and its chip come from the enclosing ``gpu.module`` (or the
``chip`` option; ``vocab.Target.of_op``), as in ``tile-lower-reduction``; the op is analysed
(``tile_mlir.analysis_copy``) and ``tile_mlir.dispatch`` picks the first applicable
variant (``copy_vector``, ``copy_scalar``: ``tile_mlir.lowering.copy``). Afterwards no
``tile.copy`` is left, or the pass has failed with one error per op it could not lower,
listing every variant with its reasons.

Each op is lowered in place: what it lowers to depends on the IR around it (what its
origin indices are multiples of, where its memref comes from), not only on its types
and attributes, so there is no template to share between ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import lowering  # noqa: F401  (registers the variants)
from ..analysis_copy import analyze_copy
from ..dispatch import DispatchContext, dispatch
from ..options import chip_option
from ..vocab import Chip
from .common import Targets, TilePass, lower_each


@dataclass(frozen=True)
class TileLowerCopy(TilePass):
    argument = "tile-lower-copy"
    summary = "Lower tile.copy to vector and memref accesses, bounds-checked, through the dispatch registry"

    chip: Chip | None = chip_option()

    def run(self, root, pass_) -> None:
        targets = Targets(self.chip)

        def lower(op, rewriter):
            target = targets.of(op)
            ctx = DispatchContext(target.kind, target.chip, analyze_copy(op), self)
            forced = ctx.analysis.info.dispatch if ctx.analysis.info else None
            dispatch("tile.copy", op, ctx, rewriter, forced=forced)

        lower_each(root, pass_, "tile.copy", self.argument, lower)
