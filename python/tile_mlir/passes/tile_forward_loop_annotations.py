"""tile-forward-loop-annotations: keep ``scf.for`` loop annotations through to LLVM IR.

A register array (``memref.alloca`` in ``#gpu.address_space<private>``) stays
in registers only when LLVM can make every index a constant, i.e. when the
loops that index it are unrolled completely. The lowering marks its loops
``{llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}``,
and ``convert-scf-to-cf`` copies that attribute onto the loop's back edge. But
``convert-gpu-to-nvvm`` turns the ``cf.br`` into an ``llvm.br`` that keeps it
only as a discardable attribute, which translation to LLVM IR ignores: LLVM
then unrolls partially and the array lands in local memory (``ld.local``).

This pass, run after ``convert-gpu-to-nvvm``, moves the annotation into the
branch's ``loop_annotation`` property, which becomes ``!llvm.loop`` metadata.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import ir
from .common import TilePass

DISCARDABLE = "llvm.loop_annotation"


def forward(root) -> int:
    """Move every branch's discardable loop annotation into its property; count them."""
    moved = []

    def visit(op):
        if op.name in ("llvm.br", "llvm.cond_br") and DISCARDABLE in op.attributes:
            moved.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    for op in moved:
        annotation = op.attributes[DISCARDABLE]
        del op.attributes[DISCARDABLE]
        op.attributes["loop_annotation"] = annotation
    return len(moved)



@dataclass(frozen=True)
class TileForwardLoopAnnotations(TilePass):
    argument = "tile-forward-loop-annotations"
    summary = ("Move llvm.loop_annotation attributes onto llvm.br's loop_annotation property "
               "(after convert-gpu-to-nvvm)")

    def run(self, op, pass_) -> None:
        forward(op)
