"""What the IR around a ``tile.copy`` proves about its addresses.

* ``known_multiple(v)``: a power of two that the index value ``v`` is a multiple of,
  read off the ops that compute it: constants, ``muli``, ``addi``/``subi``, ``shli`` by
  a constant, index casts, and the induction variable of an ``scf.for`` (its lower bound
  and step). Anything else is a multiple of 1. Cheap and local: a few ops deep.
* ``constant(v)``: the value of a constant index, or None.
* ``base_alignment(memref, storage, bytes)``: the bytes the memref's base address is
  aligned to. Global memory: 16 (docs/spec.md, "tile.copy": a global buffer's base is
  assumed 16-byte aligned, as the runtime's and CUDA's allocations are), or a kernel
  argument's larger ``llvm.align``. Workgroup memory: the ``alignment`` of the
  ``memref.global`` (or ``memref.alloca``) it comes from, else the element size.
"""

from __future__ import annotations

import math

from ..analysis import known_block_size
from ..ir import ir
from ..vocab import DTYPE_BYTES, GLOBAL_BASE_ALIGN, MAX_BLOCK_THREADS, SCOPE_THREADS
from .copy_plan import ZERO, Facts, pow2

_DEPTH = 8
_CASTS = {"arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui"}


def constant(v: ir.Value) -> int | None:
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


def known_multiple(v: ir.Value, depth: int = _DEPTH) -> int:
    """A power of two ``v`` is a multiple of (``ZERO`` for the constant 0)."""
    c = constant(v)
    if c is not None:
        return pow2(c)
    if depth == 0:
        return 1
    owner = v.owner
    if isinstance(owner, ir.Block):
        parent = owner.owner
        if parent is not None and parent.name == "scf.for" and v.maybe_downcast().arg_number == 0:
            lower, _, step = list(parent.operands)[:3]
            return min(known_multiple(lower, depth - 1), known_multiple(step, depth - 1))
        return 1
    name, args = owner.name, list(owner.operands)
    if name == "arith.muli":
        return min(ZERO, known_multiple(args[0], depth - 1) * known_multiple(args[1], depth - 1))
    if name in ("arith.addi", "arith.subi"):
        return min(known_multiple(args[0], depth - 1), known_multiple(args[1], depth - 1))
    if name == "arith.shli" and constant(args[1]) is not None and 0 <= constant(args[1]) < 40:
        return min(ZERO, known_multiple(args[0], depth - 1) << constant(args[1]))
    if name in _CASTS:
        return known_multiple(args[0], depth - 1)
    return 1


def base_alignment(memref: ir.Value, storage: str, elem_bytes: int) -> int:
    """Bytes the base address of ``memref`` is known to be aligned to (module docstring)."""
    declared = None
    while True:
        owner = memref.owner
        if isinstance(owner, ir.Block):
            declared = _arg_alignment(owner, memref.maybe_downcast().arg_number)
            break
        if owner.name == "memref.cast":
            memref = owner.operands[0]
            continue
        if owner.name == "memref.get_global":
            declared = _global_alignment(owner)
        elif "alignment" in owner.attributes:
            declared = ir.IntegerAttr(owner.attributes["alignment"]).value
        break
    if storage == "global":
        return max(GLOBAL_BASE_ALIGN, declared or 0)
    return max(elem_bytes, declared or 0)


def _arg_alignment(block: ir.Block, number: int) -> int | None:
    """The ``llvm.align`` of a function argument, where the block is a function's entry."""
    fn = block.owner
    if fn is None or fn.name not in ("gpu.func", "func.func") or "arg_attrs" not in fn.attributes:
        return None
    attrs = fn.attributes["arg_attrs"]
    if number >= len(attrs):
        return None
    arg = ir.DictAttr(attrs[number])
    return ir.IntegerAttr(arg["llvm.align"]).value if "llvm.align" in arg else None


def _global_alignment(get_global) -> int | None:
    """The ``alignment`` of the ``memref.global`` that ``get_global`` names."""
    name = ir.FlatSymbolRefAttr(get_global.attributes["name"]).value
    table = get_global.parent
    while table is not None and table.name not in ("gpu.module", "builtin.module"):
        table = table.parent
    if table is None:
        return None
    for op in table.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "memref.global" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return ir.IntegerAttr(op.attributes["alignment"]).value if "alignment" in op.attributes else None
    return None


def read_facts(op, info) -> Facts:
    """The ``Facts`` of one copy."""
    origin = list(op.operands)[2:]
    memref = op.operands[info.memory_operand]
    if info.exec_scope == "cta":
        block = known_block_size(op)
        threads = math.prod(block) if block else MAX_BLOCK_THREADS
    else:
        threads = SCOPE_THREADS[info.exec_scope]
    return Facts(
        origin=tuple(known_multiple(v) for v in origin),
        constant=tuple(constant(v) for v in origin),
        base=base_alignment(memref, info.memory.storage, DTYPE_BYTES[info.dtype]),
        threads=threads,
    )
