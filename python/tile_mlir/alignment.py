"""The alignment each kernel's memref arguments must have, read from the lowered IR.

A kernel's compiled code may assume more of a memref argument's base address than its
element size: ``tile.copy`` lowers to vector accesses of up to 16 bytes whose
``alignment`` attribute (bytes) it proved from the base's assumed 16-byte alignment
(docs/spec.md, "tile.copy"); PTX then uses ``ld.global.v4`` and the like, which fault on
a misaligned address. ``argument_alignments`` reads, for each memref argument of each
kernel, the largest alignment that the code reached from it relies on, after the tile
lowerings (``compiler.lower_tile_ops``: the level the interpreter runs) and before the
upstream conversion; the kernel's ``KernelSignature`` records it (``ArgSpec.align``) and
every launch checks each pointer against it (``arrays.check_aligned``).

What counts, following the argument through the ops that make views of it
(``VIEWS``): a vector load or store (masked or not) relies on its ``alignment``
attribute; every other access (``memref.load``, a vector op without the attribute,
...) on the element size, which is what the upstream conversion gives it; a
``llvm.align`` argument attribute is a promise that the code may use. An argument that
reaches an op this walk does not know (its pointer taken, passed to a call) is assumed
to need ``vocab.GLOBAL_BASE_ALIGN`` bytes: what tile.copy assumes of every global base.
"""

from __future__ import annotations

from .ir import find_ops, ir
from .signature import MLIR_TO_NUMPY, itemsize
from .vocab import GLOBAL_BASE_ALIGN

# Ops whose result is a view of their first operand: the walk follows them.
VIEWS = frozenset({
    "memref.cast", "memref.subview", "memref.reinterpret_cast", "memref.collapse_shape",
    "memref.expand_shape", "memref.assume_alignment", "memref.memory_space_cast", "memref.view",
})
# Vector accesses whose ``alignment`` attribute the conversion to LLVM keeps.
VECTOR_ACCESSES = frozenset({"vector.load", "vector.store", "vector.maskedload", "vector.maskedstore"})
# Accesses at the element's natural alignment, and ops that only read the shape.
ELEMENT_ACCESSES = frozenset({
    "memref.load", "memref.store", "memref.atomic_rmw", "memref.generic_atomic_rmw", "memref.dim",
    "memref.prefetch", "vector.transfer_read", "vector.transfer_write", "vector.gather", "vector.scatter",
    "vector.expandload", "vector.compressstore", "memref.copy",
})


def argument_alignments(module: ir.Module) -> dict[str, tuple[int | None, ...]]:
    """Per ``gpu.func ... kernel``: per argument, the bytes its base must be aligned to
    (None for a scalar)."""
    out = {}
    for fn in find_ops(module.operation, "gpu.func"):
        if "gpu.kernel" not in fn.attributes:
            continue
        name = ir.StringAttr(fn.attributes["sym_name"]).value
        inputs = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs
        args = list(fn.regions[0].blocks[0].arguments)[: len(inputs)]
        out[name] = tuple(
            _needs(fn, i, arg) if isinstance(t, ir.MemRefType) else None
            for i, (t, arg) in enumerate(zip(inputs, args))
        )
    return out


def _needs(fn, number: int, arg: ir.Value) -> int:
    element = itemsize(MLIR_TO_NUMPY.get(str(ir.MemRefType(arg.type).element_type), "uint8"))
    need = max(element, _declared(fn, number))
    seen, todo = set(), [arg]
    while todo:
        value = todo.pop()
        for use in value.uses:
            op = use.owner
            name = op.name
            if name in VIEWS and use.operand_number == 0:
                for result in op.results:
                    if result not in seen:
                        seen.add(result)
                        todo.append(result)
            elif name in VECTOR_ACCESSES:
                declared = op.attributes["alignment"] if "alignment" in op.attributes else None
                need = max(need, ir.IntegerAttr(declared).value if declared is not None else element)
            elif name not in ELEMENT_ACCESSES:
                need = max(need, GLOBAL_BASE_ALIGN)  # out of sight: assume what tile.copy does
    return need


def _declared(fn, number: int) -> int:
    """The argument's ``llvm.align`` attribute, else 1."""
    if "arg_attrs" not in fn.attributes:
        return 1
    attrs = fn.attributes["arg_attrs"]
    if number >= len(attrs):
        return 1
    arg = ir.DictAttr(attrs[number])
    return ir.IntegerAttr(arg["llvm.align"]).value if "llvm.align" in arg else 1
