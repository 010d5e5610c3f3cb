"""Small IR builders shared by the lowering variants.

Everything here builds at the current insertion point and location (the
caller's ``with rewriter.ip, loc:``), and folds what is static in Python so
the generated IR stays close to what a person would write.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

from mlir.dialects import arith, gpu, memref, nvvm, scf

from ..ir import ir
from ..vocab import CANONICAL_NAN_BITS

FLOAT_COMBINE = {
    "sum": arith.addf,
    "max": arith.maxnumf,  # ignores NaN (PTX max.f32)
    "min": arith.minnumf,
    "maximum": arith.maximumf,  # propagates NaN (PTX max.NaN.f32)
    "minimum": arith.minimumf,
}
INT_COMBINE = {
    "sum": arith.addi,  # wraps
    "max": arith.maxsi,  # signed
    "min": arith.minsi,
    "maximum": arith.maxsi,
    "minimum": arith.minsi,
}


def is_float(t: ir.Type) -> bool:
    return isinstance(t, ir.FloatType)


def combine(kind: str, a: ir.Value, b: ir.Value) -> ir.Value:
    return (FLOAT_COMBINE if is_float(a.type) else INT_COMBINE)[kind](a, b)


_CONSTANTS: ContextVar[dict | None] = ContextVar("tile_mlir_constants", default=None)


@contextmanager
def constant_cache():
    """Within this block, each (block, type, value) constant is built once.

    A constant built earlier in a block dominates every later insertion point
    of that block and of the regions nested in it, so it can be reused there.
    """
    token = _CONSTANTS.set({})
    try:
        yield
    finally:
        _CONSTANTS.reset(token)


def constant(t: ir.Type, v: int) -> ir.Value:
    cache = _CONSTANTS.get()
    if cache is None:
        return arith.constant(t, v)
    key = (ir.InsertionPoint.current.block, t, v)
    if key not in cache:
        cache[key] = arith.constant(t, v)
    return cache[key]


def canonical_nan(v: ir.Value) -> ir.Value:
    """``v``, or the canonical NaN of its type (``CANONICAL_NAN_BITS``) when ``v`` is a NaN."""
    t = v.type
    bits = constant(ir.IntegerType.get_signless(t.width), CANONICAL_NAN_BITS[str(t)])
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, v, v)
    return arith.select(is_nan, arith.bitcast(t, bits), v)


def index(v: int) -> ir.Value:
    return constant(ir.IndexType.get(), v)


def i32(v: int) -> ir.Value:
    return constant(ir.IntegerType.get_signless(32), v)


# Asks LLVM to unroll a loop completely: registers indexed by a loop variable
# stay in registers (SROA) only once every index is a constant.
UNROLL_FULL = "#llvm.loop_annotation<unroll = <full = true>>"


def unrolled_for(lower: int, upper: int, iter_args=(), step: int = 1) -> scf.ForOp:
    """``scf.for`` over [lower, upper) by ``step`` that LLVM will unroll completely.

    The ``llvm.loop_annotation`` survives convert-scf-to-cf onto the back edge
    and becomes ``llvm.loop.unroll.full`` metadata.
    """
    loop = scf.ForOp(index(lower), index(upper), index(step), list(iter_args))
    loop.operation.attributes["llvm.loop_annotation"] = ir.Attribute.parse(UNROLL_FULL)
    return loop


def slot_of(linear, iters) -> ir.Value | int:
    """The register slot of a linear index over ``iters`` ((extent, stride) pairs, outer first).

    ``linear`` is a Python int (static: the slot is a Python int) or an index
    value (dynamic: emits ``divui``/``remui``/``muli``/``addi`` and skips the
    trivial ones). digit_i = (linear / inner_i) % extent_i; slot = sum digit_i * stride_i.
    """
    if isinstance(linear, int):
        slot, rest = 0, linear
        for extent, stride in reversed(iters):
            slot += (rest % extent) * stride
            rest //= extent
        return slot
    total = None
    inner = 1
    for k in range(len(iters) - 1, -1, -1):
        extent, stride = iters[k]
        if extent > 1 and stride != 0:
            digit = linear
            if inner != 1:
                digit = arith.divui(digit, index(inner))
            if k != 0:  # the outermost digit needs no wrap-around
                digit = arith.remui(digit, index(extent))
            if stride != 1:
                digit = arith.muli(digit, index(stride))
            total = digit if total is None else arith.addi(total, digit)
        inner *= extent
    return total if total is not None else 0


def add_slots(a, b):
    """a + b for slots or linear indices that are Python ints or index values."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(a, int) and a == 0:
        return b
    if isinstance(b, int) and b == 0:
        return a
    return arith.addi(a if not isinstance(a, int) else index(a), b if not isinstance(b, int) else index(b))


def indices(shape: tuple[int, ...], slot) -> list[ir.Value]:
    """Memref indices of a flat register slot (row-major over the memref's shape)."""
    if len(shape) == 1:
        return [index(slot) if isinstance(slot, int) else slot]
    out = []
    for k, extent in enumerate(shape):
        inner = 1
        for e in shape[k + 1 :]:
            inner *= e
        if isinstance(slot, int):
            out.append(index((slot // inner) % extent))
            continue
        d = arith.divui(slot, index(inner)) if inner != 1 else slot
        out.append(arith.remui(d, index(extent)) if k != 0 else d)
    return out


def load(buf: ir.Value, shape, slot) -> ir.Value:
    return memref.load(buf, indices(shape, slot))


def store(v: ir.Value, buf: ir.Value, shape, slot) -> None:
    memref.store(v, buf, indices(shape, slot))


# --- shuffles -------------------------------------------------------------------------

# ``nvvm.shfl.sync``'s c operand for a butterfly over the whole warp: clamp 31 in bits
# 0-4, segment mask 0 in bits 8-12 (the source lane is always lane ^ offset).
BFLY_CLAMP = 0x1F


def shuffle_xor(v: ir.Value, offset: int, member_mask: ir.Value | None = None) -> ir.Value:
    """The value of ``v`` in lane ``lane ^ offset``, for any supported type.

    Without ``member_mask``: ``gpu.shuffle xor`` with width 32, the full member mask.
    With ``member_mask`` (an i32 value): ``nvvm.shfl.sync bfly`` over exactly the lanes
    it names, so a group of lanes can shuffle while other lanes of its warp run other
    code. 32-bit values shuffle as they are; 64-bit values as two 32-bit halves;
    16-bit values widened bit-exactly to i32 (no float conversion, so NaN payloads and
    -0.0 survive).
    """
    return _shuffle_xor(v, _mover(offset, member_mask))


def _mover(offset: int, member_mask: ir.Value | None):
    """The 32-bit move of one shuffle step: ``move(x) -> x of lane (lane ^ offset)``."""
    off = i32(offset)
    if member_mask is None:
        width = i32(32)
        return lambda x: gpu.ShuffleOp(x, off, width, _xor_mode()).results[0]
    clamp = i32(BFLY_CLAMP)
    return lambda x: nvvm.shfl_sync(x.type, member_mask, x, off, clamp, nvvm.ShflKind.bfly)


def _shuffle_xor(v: ir.Value, move) -> ir.Value:
    t = v.type
    bits = bit_width(t)
    i32t = ir.IntegerType.get_signless(32)
    if bits == 32:
        return move(v)
    ib = ir.IntegerType.get_signless(bits)
    raw = as_int(v)
    if bits == 16:
        moved = arith.trunci(ib, move(arith.extui(i32t, raw)))
    else:  # 64
        lo = arith.trunci(i32t, raw)
        hi = arith.trunci(i32t, arith.shrui(raw, constant(ib, 32)))
        lo, hi = move(lo), move(hi)
        moved = arith.ori(arith.extui(ib, lo), arith.shli(arith.extui(ib, hi), constant(ib, 32)))
    return from_int(moved, t)


def shuffle_xor_all(values: list[ir.Value], offset: int, member_mask: ir.Value | None = None) -> list[ir.Value]:
    """``shuffle_xor`` of each of ``values``, returned in their order.

    16-bit values move in pairs, two per 32-bit shuffle: the 2k-th 16-bit value in the
    low half, the (2k+1)-th in the high half, bit-exactly (bitcast to i16, ``extui``,
    ``shli``, ``ori``; back with ``trunci``, ``shrui``, bitcast). An odd last one
    shuffles alone, widened. Other types shuffle one by one.
    """
    move = _mover(offset, member_mask)
    narrow = [i for i, v in enumerate(values) if bit_width(v.type) == 16]
    if len(narrow) < 2:
        return [_shuffle_xor(v, move) for v in values]
    out: list = [None] * len(values)
    for a, b in zip(narrow[0::2], narrow[1::2]):
        out[a], out[b] = _shuffle_pair(values[a], values[b], move)
    if len(narrow) % 2:
        out[narrow[-1]] = _shuffle_xor(values[narrow[-1]], move)
    for i, v in enumerate(values):
        if out[i] is None:
            out[i] = _shuffle_xor(v, move)
    return out


def _shuffle_pair(a: ir.Value, b: ir.Value, move) -> tuple[ir.Value, ir.Value]:
    """Two 16-bit values through one 32-bit shuffle."""
    i16, i32t = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    sixteen = constant(i32t, 16)
    low = arith.extui(i32t, as_int(a))
    high = arith.shli(arith.extui(i32t, as_int(b)), sixteen)
    moved = move(arith.ori(low, high))
    a_moved = arith.trunci(i16, moved)
    b_moved = arith.trunci(i16, arith.shrui(moved, sixteen))
    return from_int(a_moved, a.type), from_int(b_moved, b.type)


def as_int(v: ir.Value) -> ir.Value:
    """The bits of ``v`` as a signless integer of its width (floats are bitcast)."""
    if not is_float(v.type):
        return v
    return arith.bitcast(ir.IntegerType.get_signless(bit_width(v.type)), v)


def from_int(x: ir.Value, t: ir.Type) -> ir.Value:
    """Integer bits ``x`` back as a value of type ``t`` (the inverse of ``_as_int``)."""
    return arith.bitcast(t, x) if is_float(t) else x



def _xor_mode() -> ir.Attribute:
    """``#gpu<shuffle_mode xor>``, built once per constant cache (per lowered op)."""
    cache = _CONSTANTS.get()
    if cache is None:
        return ir.Attribute.parse("#gpu<shuffle_mode xor>")
    if "xor_mode" not in cache:
        cache["xor_mode"] = ir.Attribute.parse("#gpu<shuffle_mode xor>")
    return cache["xor_mode"]


def bit_width(t: ir.Type) -> int:
    return t.width  # FloatType and IntegerType both have it
