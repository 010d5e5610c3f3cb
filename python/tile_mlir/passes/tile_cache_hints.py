"""tile-cache-hints: give the global accesses of a ``tile.copy`` with ``cache`` their PTX
cache operator.

``tile-lower-copy`` lowers a copy with ``cache = "streaming"`` to the same ``vector`` and
``memref`` accesses as one without, each marked with the discardable attribute
``tile.cache = "streaming"``; the CPU interpreter runs them as they are (a cache hint
changes no value). LLVM has no way to carry a cache operator from MLIR to PTX (its
``nontemporal`` flag gives plain ``ld.global`` on NVPTX), so this pass, run on the GPU
path before ``convert-gpu-to-nvvm``, replaces each marked access to global memory by the
PTX instruction itself, an ``llvm.inline_asm`` (as Triton does for its
``cache_modifier``):

* ``vector.load`` → ``ld.global.cs.v4.b32 {$0, $1, $2, $3}, [$4];`` (16 bytes; 8 and 4
  bytes as ``.v2.b32`` and ``.b32``), the words bitcast back to the vector's type;
* ``vector.maskedload`` whose mask is one condition broadcast (what the lowering emits
  for a vector that is in or out as a whole) → ``scf.if`` that condition, the same load,
  else the padding: the branch around the load that LLVM makes of a masked load;
* ``vector.store`` and such a ``vector.maskedstore`` → ``st.global.cs...``, the masked
  one under ``scf.if`` alike;
* ``memref.load``/``store`` of a 4-byte scalar → ``ld.global.cs.b32``/``st.global.cs.b32``.

LLVM then merges the branches of one condition (a thread's loads of one row under one
branch), as it does with its own masked accesses.

The address is the memref's aligned pointer plus (offset + Σ index · stride) elements
(``memref.extract_strided_metadata``), as ``ld.global`` needs: a global address. Every
other marked access (a mask per element, a scalar of 1, 2 or 8 bytes, workgroup memory)
keeps its plain form and loses only the hint; ``tile-verify`` rejects ``cache`` on a copy
of workgroup memory. docs/lowering-copy.md shows the IR and PTX.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass

from mlir.dialects import arith, llvm, memref, scf, vector

from ..ir import ir
from ..vocab import CACHE_MARK, CACHE_OPERATORS
from .common import TilePass, Unlowerable, emit_errors

MARK = CACHE_MARK
GLOBAL_ADDRESS_SPACE = 1  # NVPTX's global memory
ACCESSES = ("vector.load", "vector.maskedload", "vector.store", "vector.maskedstore", "memref.load", "memref.store")


def _global(memref_type) -> bool:
    space = ir.MemRefType(memref_type).memory_space
    return space is None or "global" in str(space)


def _broadcast_condition(mask: ir.Value) -> ir.Value | None:
    """The i1 a mask broadcasts, or None where its elements may differ."""
    owner = getattr(mask.owner, "operation", mask.owner)
    if isinstance(owner, ir.Operation) and owner.name == "vector.broadcast":
        source = owner.operands[0]
        if isinstance(source.type, ir.IntegerType) and source.type.width == 1:
            return source
    return None


def _words(value_type) -> int | None:
    """How many 32-bit words an access of ``value_type`` moves: 1, 2 or 4 for a vector, 1
    for a scalar; None for any other (it keeps its plain form)."""
    if isinstance(value_type, ir.VectorType):
        bits = value_type.get_dim_size(0) * value_type.element_type.width if value_type.rank == 1 else 0
        return bits // 32 if bits in (32, 64, 128) else None
    return 1 if isinstance(value_type, (ir.IntegerType, ir.FloatType)) and value_type.width == 32 else None


def _address(mem: ir.Value, indices) -> ir.Value:
    """A global pointer to element ``indices`` of ``mem``."""
    index = ir.IndexType.get()
    t = ir.MemRefType(mem.type)
    meta = memref.extract_strided_metadata(mem)
    offset, strides = meta[1], meta[2 + t.rank:]
    linear = offset
    for i, stride in zip(indices, strides):
        linear = arith.addi(linear, arith.muli(i, stride))
    base = memref.extract_aligned_pointer_as_index(mem)
    nbytes = arith.constant(index, t.element_type.width // 8)
    address = arith.index_cast(ir.IntegerType.get_signless(64), arith.addi(base, arith.muli(linear, nbytes)))
    return llvm.inttoptr(llvm.PointerType.get(GLOBAL_ADDRESS_SPACE), address)


def _to_words(value: ir.Value, n: int) -> list[ir.Value]:
    i32 = ir.IntegerType.get_signless(32)
    if not isinstance(value.type, ir.VectorType):
        return [value if value.type == i32 else arith.bitcast(i32, value)]
    words = vector.bitcast(ir.VectorType.get([n], i32), value)
    return [vector.extract(words, [], [k]) for k in range(n)]


def _from_words(words: list[ir.Value], value_type) -> ir.Value:
    i32 = ir.IntegerType.get_signless(32)
    if not isinstance(value_type, ir.VectorType):
        return words[0] if value_type == i32 else arith.bitcast(value_type, words[0])
    return vector.bitcast(value_type, vector.from_elements(ir.VectorType.get([len(words)], i32), words))


def _suffix(n: int) -> str:
    return {1: ".b32", 2: ".v2.b32", 4: ".v4.b32"}[n]


def _braced(first: int, n: int) -> str:
    names = ", ".join(f"${first + k}" for k in range(n))
    return names if n == 1 else f"{{{names}}}"


def _load(cop: str, n: int, pointer) -> list[ir.Value]:
    """The words of one load."""
    i32 = ir.IntegerType.get_signless(32)
    text = f"ld.global.{cop}{_suffix(n)} {_braced(0, n)}, [${n}];"
    result_type = i32 if n == 1 else llvm.StructType.get_literal([i32] * n)
    asm = llvm.inline_asm(result_type, [pointer], text, ",".join(["=r"] * n + ["l"]), has_side_effects=True)
    return [asm] if n == 1 else [llvm.extractvalue(i32, asm, [k]) for k in range(n)]


def _store(cop: str, n: int, pointer, words) -> None:
    text = f"st.global.{cop}{_suffix(n)} [$0], {_braced(1, n)};"
    llvm.inline_asm(None, [pointer, *words], text, ",".join(["l"] + ["r"] * n), has_side_effects=True)


def _cache(op) -> str | None:
    """The cache hint the op's mark names, or None where it names none."""
    mark = op.attributes[MARK]
    return mark.value if isinstance(mark, ir.StringAttr) and mark.value in CACHE_OPERATORS else None


def _rewrite(op) -> bool:
    """Replace one marked access by its inline PTX; False where it keeps its plain form."""
    cop = CACHE_OPERATORS[_cache(op)]
    name, operands = op.name, list(op.operands)
    load = name.endswith("load")
    if name.startswith("memref."):
        mem, value = (operands[0], None) if load else (operands[1], operands[0])
        indices = operands[1:] if load else operands[2:]
        mask = pad = None
    elif name == "vector.load":
        mem, indices, value, mask, pad = operands[0], operands[1:], None, None, None
    elif name == "vector.store":
        value, mem, indices, mask, pad = operands[0], operands[1], operands[2:], None, None
    elif name == "vector.maskedload":
        mem, indices, mask, pad, value = operands[0], operands[1:-2], operands[-2], operands[-1], None
    else:  # vector.maskedstore(base, indices, mask, value)
        mem, indices, mask, value, pad = operands[0], operands[1:-2], operands[-2], operands[-1], None
    value_type = op.results[0].type if load else value.type
    n = _words(value_type)
    pred = _broadcast_condition(mask) if mask is not None else None
    if n is None or not _global(mem.type) or (mask is not None and pred is None):
        return False
    with ir.InsertionPoint(op), op.location:
        # under one condition: a branch around the access (what LLVM makes of a masked
        # load or store), so that LLVM still sinks a store's computation into it
        branch = None if pred is None else scf.IfOp(pred, [value_type] if load else [], has_else=load)
        with ir.InsertionPoint(branch.then_block) if branch else nullcontext():
            pointer = _address(mem, indices)
            if load:
                loaded = _from_words(_load(cop, n, pointer), value_type)
            else:
                _store(cop, n, pointer, _to_words(value, n))
            if branch:
                scf.yield_([loaded] if load else [])
        if branch and load:
            with ir.InsertionPoint(branch.else_block):
                scf.yield_([pad])
            loaded = branch.results[0]
        if load:
            op.results[0].replace_all_uses_with(loaded)
    op.erase()
    return True


def add_cache_hints(root) -> tuple[int, int]:
    """Rewrite every marked access; (how many got their hint, how many kept the plain form).
    A mark that names no cache hint (written by hand) is an error at its op."""
    marked = []

    def visit(op):
        if op.name in ACCESSES and MARK in op.attributes:
            marked.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    bad = [op for op in marked if _cache(op) is None]
    if bad:
        names = ", ".join(f'"{name}"' for name in CACHE_OPERATORS)
        for op in bad:
            emit_errors(op, [f"{MARK} = {op.attributes[MARK]}: expected one of {names}"])
        raise Unlowerable(f"{len(bad)} access(es) marked with no cache hint")
    done = 0
    for op in marked:
        if _rewrite(op):
            done += 1
        else:
            del op.attributes[MARK]
    return done, len(marked) - done


@dataclass(frozen=True)
class TileCacheHints(TilePass):
    argument = "tile-cache-hints"
    summary = ("Give the global accesses that tile-lower-copy marked tile.cache their PTX cache operator "
               "(ld.global.cs, st.global.cs), as inline PTX (before convert-gpu-to-nvvm)")

    def run(self, op, pass_) -> None:
        try:
            add_cache_hints(op)
        except Unlowerable:
            pass_.signal_pass_failure()
