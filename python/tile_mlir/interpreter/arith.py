"""The ``arith`` dialect: constants, select, and elementwise arithmetic, compares and casts.

An elementwise op is described by a "maker": ``make(op, operand elem, result elem)``
runs at compile time and returns the numpy function that computes the result from the
operand values (scalars or per-thread arrays; vectors apply it per element, see
``vector.elementwise``). ``vector.reduction`` is here too: it folds with these ops.

Numbers: integers wrap; i1 computes as sign-extended int8 (true = -1). As NVIDIA GPUs
do for f32, f16 and bf16, a NaN result of float arithmetic is the canonical NaN
(positive, all payload bits set), and max/min order -0 below +0 (measured on the H200:
``max.f32(+0, -0) = +0`` in either order), so results never depend on the operand
order. Not modelled: an f64 NaN result on the H200 keeps one operand's payload
(measured), where this gives the canonical NaN; so f64 NaN payloads may differ from the
hardware's, NaN-ness never. ``fptosi``/``fptoui`` saturate, and map NaN to 0, as PTX
``cvt`` does.
"""

from __future__ import annotations

import operator
import re

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import Unsupported, register
from .. import bf16
from .elements import ELEMS, round_bf16, sext_i1
from .vector import elementwise, numel, vector_shape

# ---------------------------------------------------------------------------------------
# Elementwise op semantics. A "maker" gets (op, operand type, result type) at compile
# time and returns the numpy function that computes the result from the operand values.


def float_op(fn, rounds=True, canonical=True):
    """A float op: bf16 results are rounded unless the op returns an operand (``rounds``);
    NaN results become the type's canonical NaN unless the op only moves bits (``canonical``)."""

    def make(op, t, _):
        if not t.is_float:
            raise Unsupported(f"operands of type {t.name}")
        if t.name == "bf16" and rounds:
            return lambda *xs: round_bf16(fn(*xs))
        if not canonical:
            return fn
        nan = t.nan

        def apply(*xs):
            r = fn(*xs)
            is_nan = r != r
            return np.where(is_nan, nan, r)[()] if np.count_nonzero(is_nan) else r

        return apply

    return make


def _signed_zeros(r, a, b, larger: bool):
    """Order -0 < +0 in a max (``larger``) or min result, as IEEE 754-2019 does.

    numpy returns the first operand of a tie, so max(-0, +0) would depend on the operand
    order, and the lanes of a butterfly could disagree on the sign of a zero.
    """
    zero = r == 0
    if not np.count_nonzero(zero):
        return r
    if larger:
        negative = ~(((a == 0) & ~np.signbit(a)) | ((b == 0) & ~np.signbit(b)))
    else:
        negative = ((a == 0) & np.signbit(a)) | ((b == 0) & np.signbit(b))
    magnitude = np.abs(r)
    return np.where(zero, np.where(negative, -magnitude, magnitude), r)[()]


def _maxnumf(a, b):
    return _signed_zeros(np.fmax(a, b), a, b, True)


def _minnumf(a, b):
    return _signed_zeros(np.fmin(a, b), a, b, False)


def _maximumf(a, b):
    return _signed_zeros(np.maximum(a, b), a, b, True)


def _minimumf(a, b):
    return _signed_zeros(np.minimum(a, b), a, b, False)


def _uniform_nonnegative(a, b) -> bool:
    """Both operands uniform and >= 0: their signed and unsigned readings agree."""
    return type(a) is not np.ndarray and type(b) is not np.ndarray and a >= 0 and b >= 0


def _int_op(fn, unsigned=False, fast=None):
    """An integer op: ``fn`` on signed values, or on their unsigned reading (``unsigned``).

    ``fast`` is the same op for two uniform operands >= 0 (index math, mostly): on numpy
    scalars, Python operators are some 20 times faster than numpy function calls.
    i1 operands are computed as sign-extended int8 (true = -1), keeping the low bit.
    """

    def make(op, t, _):
        if t.is_float:
            raise Unsupported(f"operands of type {t.name}")
        if t.bits == 1:
            inner = make(op, ELEMS["i8"], None)
            return lambda a, b: (inner(sext_i1(a), sext_i1(b)) & 1).astype(np.bool_)
        general = fn
        if unsigned:
            u, s = t.udtype, t.dtype

            def general(a, b):
                return fn(a.view(u), b.view(u)).view(s)

        if fast is None:
            return general
        return lambda a, b: fast(a, b) if _uniform_nonnegative(a, b) else general(a, b)

    return make


def _bitwise(fn):
    def make(op, t, _):
        if t.is_float:
            raise Unsupported(f"operands of type {t.name}")
        return fn

    return make


def _divsi(a, b):
    """Signed division rounding toward zero (numpy's // rounds down)."""
    return (a - np.fmod(a, b)) // b


def _ceildivsi(a, b):
    """Signed division rounding up."""
    q = _divsi(a, b)
    r = a - q * b
    return q + ((r != 0) & ((r > 0) == (b > 0)))


def _ceildivui(a, b):
    """Unsigned division rounding up (on the unsigned reading)."""
    return a // b + (a % b != 0)


_CMPI = {  # arith::CmpIPredicate -> (comparison, compares unsigned)
    0: (operator.eq, False),
    1: (operator.ne, False),
    2: (operator.lt, False),
    3: (operator.le, False),
    4: (operator.gt, False),
    5: (operator.ge, False),
    6: (operator.lt, True),
    7: (operator.le, True),
    8: (operator.gt, True),
    9: (operator.ge, True),
}


def _cmpi(op, t, _):
    fn, unsigned = _CMPI[op.attributes["predicate"].value]
    if t.is_float:
        raise Unsupported(f"operands of type {t.name}")
    if unsigned:
        u = t.udtype
        return lambda a, b: fn(a, b) if _uniform_nonnegative(a, b) else fn(a.view(u), b.view(u))
    if t.bits == 1 and fn not in (operator.eq, operator.ne):
        return lambda a, b: fn(sext_i1(a), sext_i1(b))
    return fn


def _constant_bool(value: bool):
    def compare(a, b):
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        return np.full(shape, value) if shape else np.bool_(value)

    return compare


def _unordered(a, b):
    return (a != a) | (b != b)


_CMPF = {  # arith::CmpFPredicate -> comparison; NaN compares false in numpy, but !=
    0: _constant_bool(False),
    1: operator.eq,  # oeq
    2: operator.gt,  # ogt
    3: operator.ge,  # oge
    4: operator.lt,  # olt
    5: operator.le,  # ole
    6: lambda a, b: (a < b) | (a > b),  # one
    7: lambda a, b: (a == a) & (b == b),  # ord
    8: lambda a, b: ~((a < b) | (a > b)),  # ueq
    9: lambda a, b: ~(a <= b),  # ugt
    10: lambda a, b: ~(a < b),  # uge
    11: lambda a, b: ~(a >= b),  # ult
    12: lambda a, b: ~(a > b),  # ule
    13: operator.ne,  # une
    14: _unordered,  # uno
    15: _constant_bool(True),
}


def _cmpf(op, t, _):
    if not t.is_float:
        raise Unsupported(f"operands of type {t.name}")
    return _CMPF[op.attributes["predicate"].value]


def _float_converter(dst):
    """Values of any float or integer type -> ``dst``, rounded once to nearest even; a NaN
    becomes the canonical NaN, as PTX ``cvt`` to f16, bf16 and from f16 gives."""
    if not dst.is_float:
        raise Unsupported(f"result of type {dst.name}")
    if dst.name == "bf16":
        return round_bf16
    nan = dst.nan

    def convert(x):
        r = x.astype(dst.dtype)
        return np.where(r != r, nan, r)[()] if np.count_nonzero(r != r) else r

    return convert


def _extf_truncf(op, src, dst):
    """extf/truncf. NaNs, as measured on the H200: bf16 -> f32 keeps the bits (it is a
    shift); f64 -> f32 keeps the sign and the payload's top bits, quieted (as numpy on
    x86 does); every other conversion gives the canonical NaN."""
    if not src.is_float:
        raise Unsupported(f"operand of type {src.name}")
    if "roundingmode" in op.attributes and "to_nearest_even" not in str(op.attributes["roundingmode"]):
        raise Unsupported(f"rounding mode {op.attributes['roundingmode']}")
    if dst.name == "f32" and src.name in ("bf16", "f64"):
        return lambda x: x.astype(np.float32)
    return _float_converter(dst)


def _int_to_float(signed: bool):
    def make(op, src, dst):
        if src.is_float:
            raise Unsupported(f"operand of type {src.name}")
        convert = _float_converter(dst)
        if not signed:
            return lambda x: convert(x.astype(src.udtype))
        if src.bits == 1:
            return lambda x: convert(sext_i1(x))
        return convert

    return make


def _float_to_int(signed: bool):
    """fptosi/fptoui, saturating and with NaN -> 0 (PTX ``cvt.rzi``; LLVM says poison)."""

    def make(op, src, dst):
        if not src.is_float or dst.is_float or dst.bits == 1:
            raise Unsupported(f"{src.name} -> {dst.name}")
        if signed:
            lo, hi = -(1 << (dst.bits - 1)), (1 << (dst.bits - 1)) - 1
        else:
            lo, hi = 0, (1 << dst.bits) - 1
        target = dst.dtype if signed else dst.udtype

        def convert(x):
            x = np.asarray(x, np.float64)
            over, under = x >= hi + 1.0, x <= lo - 1.0
            r = np.where(over | under | (x != x), 0.0, x).astype(target)
            r = np.where(over, target.type(hi), np.where(under, target.type(lo), r))
            return r.astype(dst.dtype)[()]

        return convert

    return make


def _int_cast(signed: bool):
    """Integer width changes: sign- or zero-extension (``signed``), or wrapping truncation."""

    def make(op, src, dst):
        if src.is_float or dst.is_float:
            raise Unsupported(f"{src.name} -> {dst.name}")
        if dst.bits == 1:
            return lambda x: (x & 1).astype(np.bool_)
        if src.bits == 1 and signed:
            return lambda x: -(x.astype(dst.dtype))
        if dst.bits > src.bits and not signed:
            return lambda x: x.astype(src.udtype).astype(dst.dtype)
        return lambda x: x.astype(dst.dtype)

    return make


def _bitcast(op, src, dst):
    if src.bits != dst.bits or src.name == "index" or dst.name == "index":
        raise Unsupported(f"{src.name} -> {dst.name}")
    return lambda x: dst.from_bits(src.to_bits(x))


# ---------------------------------------------------------------------------------------
# Handlers


def _constant(cx, op, where):
    """A constant's exact bits, as PTX moves them: a NaN keeps its payload and sign,
    and a signaling NaN stays signaling (only arithmetic makes NaNs canonical)."""
    type_ = op.result.type
    attr = op.attributes["value"]
    if not isinstance(type_, ir.VectorType):
        cx.preset(op.result, _scalar(cx.elem(type_), attr))  # IntegerAttr, FloatAttr or BoolAttr
        return
    elem = cx.elem(type_.element_type)
    n = numel(vector_shape(type_))
    if attr.is_splat:
        values = [_scalar(elem, attr.get_splat_value())] * n
    elif elem.name == "bf16":  # the bindings read no bf16 elements: take the bits
        values = list(elem.from_bits(_bf16_bits(attr)))
    elif elem.is_float:  # the buffer holds the bits
        values = list(np.asarray(ir.DenseElementsAttr(attr)).reshape(-1).view(elem.dtype))
    else:  # the elements are Python ints or bools
        values = [elem.scalar(elem.wrap(int(attr[k]))) for k in range(n)]
    cx.preset(op.result, tuple(values))


def _scalar(elem, attr):
    """The value of an IntegerAttr, BoolAttr or FloatAttr; a NaN from its bits, which
    the attribute prints in hex (``0x7FC1 : bf16``): its Python float has lost them."""
    value = attr.value
    if not elem.is_float:
        return elem.scalar(elem.wrap(int(value)))
    if value == value:
        return elem.scalar(value)  # exact: a float of any of the types is a Python float
    return elem.from_bits(np.array(int(str(attr).split(" ", 1)[0], 16), elem.udtype))[()]


_BF16_ELEMENT = re.compile(r"0x[0-9A-Fa-f]+|[-+]?[0-9.]+(?:e[-+]?[0-9]+)?|[-+]?inf|nan")


def _bf16_bits(attr) -> np.ndarray:
    """The bits of the elements of a dense bf16 attribute, read from its text (the
    bindings give no bf16 elements): a hex blob (little-endian, as MLIR prints large
    attributes), or decimal numbers (exact to the 7 digits printed) and bit patterns."""
    text = str(attr)
    body = text[len("dense<") : text.rindex("> :")]
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3:-1]), "<u2").astype(np.uint16)
    bits = []
    for token in _BF16_ELEMENT.findall(body):
        if token.startswith("0x"):
            bits.append(int(token, 16))
        else:
            bits.append(int(bf16.to_bits(np.float64(token))))
    return np.array(bits, np.uint16)


def _select(cx, op, where):
    """``arith.select``: per thread, and per element when the condition is a vector."""
    c, a, b = (cx.use(v) for v in op.operands)
    r = cx.define(op.result)
    per_thread_ok = not isinstance(op.result.type, ir.MemRefType)
    vectors = isinstance(op.result.type, ir.VectorType)
    per_element = vectors and isinstance(op.operands[0].type, ir.VectorType)

    def run(env, mask):
        cond = env[c]
        if per_element:
            env[r] = tuple(np.where(k, x, y)[()] for k, x, y in zip(cond, env[a], env[b]))
        elif type(cond) is not np.ndarray:
            env[r] = env[a] if cond else env[b]
        elif vectors:
            env[r] = tuple(np.where(cond, x, y) for x, y in zip(env[a], env[b]))
        elif per_thread_ok:
            env[r] = np.where(cond, env[a], env[b])
        else:
            raise InterpreterError(f"{where}: selecting a memref per thread is not supported")

    return run


def _extended(cx, op, where):
    """``addui_extended`` (sum, carry), ``mulsi_extended``/``mului_extended`` (low, high):
    computed on Python ints of the operands' width."""
    name = op.name.split(".")[1]
    t = op.operands[0].type
    elem = cx.elem(t.element_type if isinstance(t, ir.VectorType) else t)
    if elem.is_float or elem.bits == 1:
        raise Unsupported(f"operands of type {elem.name}")
    bits, udtype = elem.bits, elem.udtype
    signed = name == "mulsi_extended"

    def both(a, b):
        x, y = (int(v) for v in (a, b))
        if name == "addui_extended":
            total = x + y
            return total % (1 << bits), total >> bits
        if signed:
            x, y = (v - (1 << bits) if v >> (bits - 1) else v for v in (x, y))
        product = (x * y) % (1 << (2 * bits))
        return product % (1 << bits), product >> bits

    per_element = np.frompyfunc(both, 2, 2)
    second = np.bool_ if name == "addui_extended" else elem.dtype

    def fn(a, b):
        low, high = per_element(np.asarray(a).view(udtype), np.asarray(b).view(udtype))
        return (
            np.asarray(low).astype(udtype).view(elem.dtype)[()],
            np.asarray(high).astype(udtype if second is elem.dtype else np.bool_).view(second)[()],
        )

    a, b = cx.use(op.operands[0]), cx.use(op.operands[1])
    r0, r1 = cx.define(op.results[0]), cx.define(op.results[1])
    vectors = isinstance(t, ir.VectorType)

    def run(env, mask):
        if vectors:
            pairs = [fn(x, y) for x, y in zip(env[a], env[b])]
            env[r0], env[r1] = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        else:
            env[r0], env[r1] = fn(env[a], env[b])

    return run


# Python operators rather than numpy functions where they agree: on numpy scalars
# (uniform values) they are some 20 times faster, on arrays the same.
_FLOAT_BINARY = {
    "addf": operator.add,
    "subf": operator.sub,
    "mulf": operator.mul,
    "divf": operator.truediv,
    "remf": np.fmod,
}
_INT_BINARY = {
    "addi": _int_op(operator.add),
    "subi": _int_op(operator.sub),
    "muli": _int_op(operator.mul),
    "divsi": _int_op(_divsi, fast=operator.floordiv),
    "remsi": _int_op(np.fmod, fast=operator.mod),
    "floordivsi": _int_op(operator.floordiv),
    "ceildivsi": _int_op(_ceildivsi),
    "ceildivui": _int_op(_ceildivui, unsigned=True),
    "divui": _int_op(operator.floordiv, unsigned=True, fast=operator.floordiv),
    "remui": _int_op(operator.mod, unsigned=True, fast=operator.mod),
    "shli": _int_op(operator.lshift, unsigned=True, fast=operator.lshift),
    "shrui": _int_op(operator.rshift, unsigned=True, fast=operator.rshift),
    "shrsi": _int_op(operator.rshift),
    "maxsi": _int_op(np.maximum, fast=max),
    "minsi": _int_op(np.minimum, fast=min),
    "maxui": _int_op(np.maximum, unsigned=True, fast=max),
    "minui": _int_op(np.minimum, unsigned=True, fast=min),
    "andi": _bitwise(operator.and_),
    "ori": _bitwise(operator.or_),
    "xori": _bitwise(operator.xor),
}
_ELEMENTWISE = {
    **{name: float_op(fn) for name, fn in _FLOAT_BINARY.items()},
    "negf": float_op(operator.neg, rounds=False),  # the H200's neg gives the canonical NaN
    "maxnumf": float_op(_maxnumf, rounds=False),
    "minnumf": float_op(_minnumf, rounds=False),
    "maximumf": float_op(_maximumf, rounds=False),
    "minimumf": float_op(_minimumf, rounds=False),
    **_INT_BINARY,
    "cmpi": _cmpi,
    "cmpf": _cmpf,
    "extf": _extf_truncf,
    "truncf": _extf_truncf,
    "sitofp": _int_to_float(signed=True),
    "uitofp": _int_to_float(signed=False),
    "fptosi": _float_to_int(signed=True),
    "fptoui": _float_to_int(signed=False),
    "index_cast": _int_cast(signed=True),
    "index_castui": _int_cast(signed=False),
    "extsi": _int_cast(signed=True),
    "extui": _int_cast(signed=False),
    "trunci": _int_cast(signed=True),
    "bitcast": _bitcast,
}

# vector.reduction kind -> the arith op that combines two elements (float, integer)
_REDUCTION = {
    "add": ("addf", "addi"),
    "mul": ("mulf", "muli"),
    "minnumf": ("minnumf", None),
    "maxnumf": ("maxnumf", None),
    "minimumf": ("minimumf", None),
    "maximumf": ("maximumf", None),
    "minsi": (None, "minsi"),
    "maxsi": (None, "maxsi"),
    "minui": (None, "minui"),
    "maxui": (None, "maxui"),
    "and": (None, "andi"),
    "or": (None, "ori"),
    "xor": (None, "xori"),
}


def _reduction(cx, op, where):
    """``vector.reduction``: folded left to right from the accumulator, if any."""
    kind_attr = str(op.attributes["kind"])  # "#vector.kind<add>"
    kind = kind_attr[kind_attr.index("<") + 1 : -1]
    elem = cx.elem(op.result.type)
    name = _REDUCTION.get(kind, (None, None))[0 if elem.is_float else 1]
    if name is None:
        raise Unsupported(f"kind {kind} on {elem.name}")
    combine = _ELEMENTWISE[name](op, elem, elem)
    v = cx.use(op.operands[0])
    acc = cx.use(op.operands[1]) if len(op.operands) > 1 else None
    r = cx.define(op.result)

    def run(env, mask):
        elements = env[v]
        total = elements[0] if acc is None else combine(env[acc], elements[0])
        for x in elements[1:]:
            total = combine(total, x)
        env[r] = total

    return run


register(
    {
        "vector.reduction": _reduction,
        "arith.constant": _constant,
        "arith.select": _select,
        "arith.addui_extended": _extended,
        "arith.mulsi_extended": _extended,
        "arith.mului_extended": _extended,
        **{f"arith.{name}": elementwise(make) for name, make in _ELEMENTWISE.items()},
    }
)
