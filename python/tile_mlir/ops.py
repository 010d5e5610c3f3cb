"""Build tile ops from Python.

IRDL-defined ops have no generated OpView classes, so ``reduce`` builds the
generic op with ``ir.Operation.create``. Use it under an insertion point and a
location, like any upstream builder::

    from tile_mlir import ops
    with ctx, ir.InsertionPoint(block), ir.Location.unknown():
        ops.reduce(dst, src, kind="sum", exec_scope="warp", axes=[0],
                   src_layout="S[32 : 1@laneid]", dst_layout="S[1 : 1] + R[32 : 1@laneid]")

The op is not checked here; run ``tile-verify`` (or ``tile_mlir.analysis.analyze``)
for the semantic rules, as ``tile-opt`` does after parsing.
"""

from __future__ import annotations

from typing import Sequence

from .ir import ir, layout_attr


def reduce(
    dst: ir.Value,
    src: ir.Value,
    *,
    kind: str,
    exec_scope: str,
    axes: Sequence[int] | None = None,
    accum: bool | None = None,
    src_layout: str | None = None,
    dst_layout: str | None = None,
    dispatch: str | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Operation:
    """Create ``"tile.reduce"(dst, src)``; omitted attributes take their defaults (docs/spec.md, "Attributes")."""
    attrs = {
        "kind": ir.StringAttr.get(kind),
        "exec_scope": ir.StringAttr.get(exec_scope),
    }
    if axes is not None:
        attrs["axes"] = ir.DenseI64ArrayAttr.get(list(axes))
    if accum is not None:
        attrs["accum"] = ir.BoolAttr.get(accum)
    if src_layout is not None:
        attrs["src_layout"] = layout_attr(src_layout)
    if dst_layout is not None:
        attrs["dst_layout"] = layout_attr(dst_layout)
    if dispatch is not None:
        attrs["dispatch"] = ir.StringAttr.get(dispatch)
    return ir.Operation.create(
        "tile.reduce", results=[], operands=[dst, src], attributes=attrs, loc=loc, ip=ip
    )
