"""What a ``tile.copy`` means: the checked, normalised view of one op.

``analyze_copy(op)`` reads a copy's operands and attributes, checks every rule of
docs/spec.md ("The op: tile.copy") that does not depend on the lowering variant, and
returns an ``Analysis`` whose ``info`` is a ``CopyInfo`` (everything the lowering needs)
or whose ``errors`` list the broken rules, one sentence each. It mirrors
``tile_mlir.analysis`` (tile.reduce's rules) and shares its layout and scope checks:
``tile-verify`` reports these errors at the op, and the copy variants' ``copy_valid``
predicate reports them as their reasons.

The op is ``"tile.copy"(%dst, %src, %i0, ..., %iN)``. Exactly one of dst and src is a
register tile (``#gpu.address_space<private>``): the copy is a *load* when it is dst,
a *store* when it is src. The other side is global or workgroup memory, of any rank
and possibly dynamic shape; the index operands, one per memory dim, are the memory
coordinate of the tile's origin. The ``layout`` (default: the register memref's shape,
row-major, in one thread) says which thread and register slot hold each tile element,
exactly as for tile.reduce; tile coordinate ``c`` is memory element ``origin + c``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .analysis import (
    Analysis,
    Operand,
    _attr,
    _layout,
    _operand,
    _shape,
    _unknown_attributes,
    block_problems,
    known_block_size,
    memoized,
    scope_problems,
    span_problems,
)
from .ir import ir
from .layout import TileLayout
from .vocab import ADDRESS_SPACES, CACHE_OPERATORS, COPY_ATTRIBUTES, COPY_SCOPES, DTYPES


@dataclass(frozen=True)
class Memory:
    """The memory side of a copy: its shape (None for a dynamic dim), element type and
    storage scope (``global`` or ``shared``)."""

    shape: tuple[int | None, ...]
    dtype: str
    storage: str

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class CopyInfo:
    """A verified ``tile.copy``, with everything the lowering asks about."""

    direction: str  # "load" (memory -> registers) or "store" (registers -> memory)
    exec_scope: str
    layout: TileLayout
    registers: Operand  # the register tile: static, private
    memory: Memory
    padding: str | None  # the padding attribute's text ("0xFF800000 : f32"); None: zero
    alignment: int | None  # bytes the user asserts for the origin's address
    dispatch: str | None
    cache: str | None = None  # a CACHE_OPERATORS name: the global accesses' cache hint

    @property
    def dtype(self) -> str:
        return self.memory.dtype

    @property
    def register_operand(self) -> int:
        """The register tile's operand number (0: dst, 1: src)."""
        return 0 if self.direction == "load" else 1

    @property
    def memory_operand(self) -> int:
        return 1 - self.register_operand


def _space(t: ir.Type) -> str | None:
    """The storage scope of a memref type (``local``, ``shared``, ``global``), or None
    for a memory space that is not a #gpu.address_space."""
    space = t.memory_space
    if space is None:
        return "global"
    text = str(space)
    name = text.removeprefix("#gpu.address_space<").removesuffix(">")
    return ADDRESS_SPACES.get(name) if text.startswith("#gpu.address_space<") else None


def _memory(value: ir.Value, role: str, errors: list[str]) -> Memory | None:
    """The memory side: any shape, the identity layout, a supported element type."""
    t = ir.MemRefType(value.type)
    if t.layout != ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank)):
        errors.append(f"{role}: expected a memref with the identity layout, got {t.layout}")
        return None
    dtype = str(t.element_type)
    if dtype not in DTYPES:
        errors.append(f"{role}: element type {dtype} is not supported (expected one of {', '.join(DTYPES)})")
        return None
    shape = tuple(None if ir.ShapedType.is_dynamic_size(e) else e for e in t.shape)
    return Memory(shape, dtype, _space(t))


def _sides(op, errors: list[str]) -> tuple[str, Operand, Memory] | None:
    """(direction, register tile, memory) from the two memref operands."""
    types = []
    for role, value in (("dst", op.operands[0]), ("src", op.operands[1])):
        try:
            types.append(ir.MemRefType(value.type))
        except (ValueError, TypeError):
            errors.append(f"{role}: expected a memref, got {value.type}")
    if errors:
        return None
    spaces = [_space(t) for t in types]
    for role, t, space in zip(("dst", "src"), types, spaces):
        if space is None:
            errors.append(f"{role}: memory space {t.memory_space} is not a #gpu.address_space")
    if errors:
        return None
    if spaces.count("local") != 1:
        dst, src = (f"{space} ({t.memory_space or 'no memory space'})" for space, t in zip(spaces, types))
        errors.append(
            f"one operand must be a register tile (#gpu.address_space<private>) and the other "
            f"global or workgroup memory; dst is {dst} and src is {src}"
        )
        return None
    direction = "load" if spaces[0] == "local" else "store"
    reg, mem = (0, 1) if direction == "load" else (1, 0)
    roles = ("dst", "src")
    registers = _operand(op.operands[reg], roles[reg], errors)
    memory = _memory(op.operands[mem], roles[mem], errors)
    if registers is None or memory is None:
        return None
    if registers.dtype != memory.dtype:
        dst, src = (registers, memory) if direction == "load" else (memory, registers)
        errors.append(f"dtype mismatch: src={src.dtype} dst={dst.dtype}")
        return None
    return direction, registers, memory


def _indices(op, memory: Memory, errors: list[str]) -> None:
    indices = list(op.operands)[2:]
    if len(indices) != memory.rank:
        errors.append(
            f"expected {memory.rank} index operand(s), one per dim of the memory operand "
            f"(rank {memory.rank}), got {len(indices)}"
        )
    for k, value in enumerate(indices):
        if not isinstance(value.type, ir.IndexType):
            errors.append(f"index operand {k}: expected index, got {value.type}")


def _padding(op, direction: str, dtype: str, errors: list[str]) -> str | None:
    if "padding" not in op.attributes:
        return None
    attr = op.attributes["padding"]
    if direction == "store":
        errors.append("padding: a store writes nothing out of bounds; padding is for loads only")
        return None
    kind = ir.FloatAttr if dtype.startswith(("f", "bf")) else ir.IntegerAttr
    if not isinstance(attr, kind) or str(attr.type) != dtype:
        errors.append(f"padding: expected a value of the element type {dtype}, got {attr}")
        return None
    return str(attr)


def _alignment(op, errors: list[str]) -> int | None:
    attr = _attr(op, "alignment", ir.IntegerAttr, "an integer number of bytes (alignment = 16)", errors)
    if attr is None:
        return None
    value = attr.value
    if value < 1 or value & (value - 1):
        errors.append(f"alignment: expected a power of two number of bytes, got {value}")
        return None
    return value


def _cache(op, memory: Memory, errors: list[str]) -> str | None:
    names = ", ".join(f'"{name}"' for name in CACHE_OPERATORS)
    attr = _attr(op, "cache", ir.StringAttr, f"a string, one of {names}", errors)
    if attr is None:
        return None
    if attr.value not in CACHE_OPERATORS:
        errors.append(f'cache: expected one of {names}, got "{attr.value}"')
        return None
    if memory.storage != "global":
        errors.append(f'cache: a cache hint is for global memory; this copy\'s memory is {memory.storage} '
                      "(#gpu.address_space<workgroup>)")
        return None
    return attr.value


_MEMO: dict = {}


def analyze_copy(op) -> Analysis:
    """Check one ``tile.copy`` against the rules of docs/spec.md. Memoized on the
    operand types, the attributes and the block size, as ``analysis.analyze`` is."""
    return memoized(_MEMO, op, _analyze)


def _analyze(op) -> Analysis:
    out = Analysis()
    errors = out.errors
    if len(op.operands) < 2:
        errors.append(f"expected dst, src and one index per memory dim, got {len(op.operands)} operand(s)")
        return out
    _unknown_attributes(op, errors, COPY_ATTRIBUTES)
    sides = _sides(op, errors)
    scope = _attr(op, "exec_scope", ir.StringAttr, "a string", errors)
    scope = scope.value if scope else None
    if scope not in COPY_SCOPES:
        errors.append(f"exec_scope: expected one of {', '.join(COPY_SCOPES)}, got {scope}")
    dispatch = _attr(op, "dispatch", ir.StringAttr, "a string (a variant name)", errors)
    alignment = _alignment(op, errors)
    if sides is None or errors:
        return out
    direction, registers, memory = sides
    _indices(op, memory, errors)
    padding = _padding(op, direction, memory.dtype, errors)
    cache = _cache(op, memory, errors)
    layout = _layout(op, "layout", registers, errors, scope)
    if errors:
        return out
    if layout.rank != memory.rank:
        errors.append(
            f"layout has rank {layout.rank} (shape {_shape(layout.shape)}), but the memory operand "
            f"has rank {memory.rank}: each tile dim is a memory dim"
        )
    errors.extend(scope_problems("layout", layout, scope))
    errors.extend(span_problems(("dst", "src")[direction == "store"], registers, "layout", layout))
    if not errors:
        errors.extend(block_problems((("layout", layout),), known_block_size(op), scope))
    if errors:
        return out
    forced = dispatch.value if dispatch is not None else None
    out.info = CopyInfo(direction, scope, layout, registers, memory, padding, alignment, forced, cache)
    return out
