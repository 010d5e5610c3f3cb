"""tile-externalize-dynamic-shared: make dynamic shared memory PTX ``.extern .shared``.

``convert-gpu-to-nvvm`` lowers ``gpu.dynamic_shared_memory`` to the address of a global
``@__dynamic_shmem__N`` of type ``!llvm.array<0 x i8>`` in address space 3, with
*internal* linkage. The NVPTX backend then treats it as an ordinary static variable:
it demotes it into the kernel as ``.shared .align 16 .b8 __dynamic_shmem__0;``, one
byte of static shared memory (``ptxas -v``: "1 bytes smem"), which the launch's dynamic
shared memory merely follows, and which other static shared variables may sit beside:
accesses past its one byte reach them, not the dynamic memory. CUDA's dynamic shared
memory is an *external* zero-size array, ``.extern .shared .align 16 .b8 name[];``,
which starts where the launch's ``sharedMemBytes`` do.

This pass, run after ``convert-gpu-to-nvvm``, gives those globals external linkage, so
that NVPTX declares them so.
"""

from __future__ import annotations

from ..ir import ir
from . import PassInfo, register

PREFIX = "__dynamic_shmem__"


def externalize(root) -> int:
    """Give each ``llvm.mlir.global`` of dynamic shared memory external linkage; count them."""
    found = []

    def visit(op):
        if op.name == "llvm.mlir.global" and ir.StringAttr(op.attributes["sym_name"]).value.startswith(PREFIX):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    external = ir.Attribute.parse("#llvm.linkage<external>", root.context)
    for op in found:
        op.attributes["linkage"] = external
    return len(found)


def _make():
    def run(op, pass_):
        externalize(op)

    return run


register(
    PassInfo(
        "tile-externalize-dynamic-shared",
        "Give gpu.dynamic_shared_memory's globals external linkage, for PTX .extern .shared (after convert-gpu-to-nvvm)",
        _make,
    )
)
