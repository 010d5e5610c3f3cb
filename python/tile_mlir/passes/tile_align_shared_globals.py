"""tile-align-shared-globals: give every shared-memory global a 16-byte alignment.

``convert-gpu-to-nvvm`` turns a workgroup ``memref.global`` without an ``alignment``
into an ``llvm.mlir.global`` in address space 3 without one. LLVM's load/store
vectorizer then merges consecutive loads of it into 16-byte ``ld.shared.v4``, while the
PTX still declares the variable with its element's alignment (``.shared .align 4``):
on the GPU the vector load may fault (``misaligned address``), and every later CUDA call
of the process fails with it. The independent reference found this on an H200
(docs/testing.md); ``test/Transforms/tile-align-shared-globals.mlir`` shows it.

This pass, run after ``convert-gpu-to-nvvm``, sets ``alignment = 16`` on every global in
address space 3 that declares less (or nothing), so that what the PTX declares is what
the vector accesses need. Over-aligning a shared variable costs at most 15 bytes of
padding.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import ir
from ..vocab import MAX_VECTOR_BYTES
from .common import TilePass

SHARED_ADDRESS_SPACE = 3  # NVPTX's shared memory


def align_shared_globals(root) -> int:
    """Raise the alignment of each shared ``llvm.mlir.global`` to ``MAX_VECTOR_BYTES``;
    count them."""
    found = []

    def visit(op):
        if op.name == "llvm.mlir.global" and "addr_space" in op.attributes:
            space = ir.IntegerAttr(op.attributes["addr_space"]).value
            align = ir.IntegerAttr(op.attributes["alignment"]).value if "alignment" in op.attributes else 0
            if space == SHARED_ADDRESS_SPACE and align < MAX_VECTOR_BYTES:
                found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    i64 = ir.IntegerType.get_signless(64, root.context)
    for op in found:
        op.attributes["alignment"] = ir.IntegerAttr.get(i64, MAX_VECTOR_BYTES)
    return len(found)


@dataclass(frozen=True)
class TileAlignSharedGlobals(TilePass):
    argument = "tile-align-shared-globals"
    summary = ("Give every shared-memory global at least 16-byte alignment, as LLVM's vector accesses "
               "to it assume (after convert-gpu-to-nvvm)")

    def run(self, op, pass_) -> None:
        align_shared_globals(op)
