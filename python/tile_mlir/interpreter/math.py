"""The ``math`` dialect: what the GPU computes, within a stated bound in ulps.

How the GPU computes each op: ``convert-gpu-to-nvvm`` turns every float op of ``math``
into a call of CUDA's libdevice (``math.exp`` on f32 calls ``__nv_expf``, on f64
``__nv_exp``). f16 and bf16 operands are extended to f32, the f32 function is called,
and its result is rounded to the type. The integer ops and the classifications
(``isnan``...) become plain LLVM code.

How the interpreter computes them: in float64 (f32, f16 and bf16 values are exact in
float64), with the C library's functions (CPython's ``math``) and numpy for the special
values, then rounded once to f32 (and, for f16 and bf16, from f32 to the type, as the
GPU does). For f32 the interpreter is so within 0.5 ulp of the exact result (plus
float64's own error, some 2^-29 ulp); f64 results are libm's (within 1 ulp). The
GPU's libdevice is not exact: ``GPU_ULPS`` says, per op, how far (in ulps of f32 and of
f64) the H200 may be from the interpreter; docs/interpreter.md shows the table and how
it was measured. The ops that are exact on both sides (rounding to integers,
``absf``, ``copysign``, ``fma``, the integer ops and the classifications) agree bit for
bit.

NaN: a NaN result is the type's canonical NaN, as the H200 gives (``abs`` too); only
``copysign`` on f32 and f64 keeps a NaN's payload (PTX ``copysign`` moves the sign bit).
The H200's f64 functions return an operand's NaN, or 0xFFF8000000000000, where the
interpreter gives the canonical NaN: f64 NaN payloads are not modelled.
"""

from __future__ import annotations

import math as _pymath
from fractions import Fraction

import numpy as np

from ..ir import ir
from .core import Unsupported, register
from .elements import round_bf16
from .vector import elementwise

# op -> (the libdevice function it calls: __nv_<name>f on f32, f16 and bf16, __nv_<name>
# on f64; the most ulps of f32, of f64, between the H200's result and the interpreter's).
# f32: CUDA's documented bound of the function (the interpreter's f32 result is the
# correctly rounded one but for the rarest double roundings); f64: that bound plus 1
# (libm is within 1 ulp); each at least what was measured (docs/interpreter.md). f16 and
# bf16: 0 where f32 has 0, else 1 (the f32 result, off by a few f32 ulps, rounds to a
# neighbour at most). math.trunc has no libdevice call: MLIR 22 cannot lower it.
GPU_ULPS = {
    "absf": ("fabs", 0, 0),
    "ceil": ("ceil", 0, 0),
    "floor": ("floor", 0, 0),
    "round": ("round", 0, 0),
    "roundeven": ("rint", 0, 0),
    "trunc": (None, 0, 0),
    "copysign": ("copysign", 0, 0),
    "fma": ("fma", 0, 0),
    "sqrt": ("sqrt", 2, 0),
    "rsqrt": ("rsqrt", 2, 2),
    "cbrt": ("cbrt", 1, 3),
    "exp": ("exp", 2, 2),
    "exp2": ("exp2", 2, 2),
    "expm1": ("expm1", 1, 2),
    "log": ("log", 1, 2),
    "log2": ("log2", 1, 2),
    "log10": ("log10", 2, 2),
    "log1p": ("log1p", 1, 2),
    "sin": ("sin", 2, 3),
    "cos": ("cos", 2, 3),
    "tan": ("tan", 4, 3),
    "asin": ("asin", 2, 3),
    "acos": ("acos", 2, 3),
    "atan": ("atan", 2, 3),
    "atan2": ("atan2", 3, 3),
    "sinh": ("sinh", 3, 3),
    "cosh": ("cosh", 2, 2),
    "tanh": ("tanh", 2, 2),
    "asinh": ("asinh", 3, 3),
    "acosh": ("acosh", 4, 3),
    "atanh": ("atanh", 3, 3),
    "erf": ("erf", 2, 3),
    "erfc": ("erfc", 4, 6),
    "powf": ("pow", 4, 3),
}


def gpu_ulps(op: str, type_name: str) -> int:
    """The most ulps of ``type_name`` between the H200's ``math.<op>`` and the interpreter's."""
    _, f32, f64 = GPU_ULPS[op]
    return {"f32": f32, "f64": f64}.get(type_name, 0 if f32 == 0 else 1)


def _round_half_away(x):
    """``math.round``: to the nearest integer, halfway cases away from zero."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(1.0, x), t)


def _libm(numpy_fn, libm_fn, arity: int = 1):
    """A float64 function: numpy's, refined by the C library's (CPython's ``math``) where
    the operands and numpy's result are finite and libm gives a result (libm is the more
    accurate of the two: numpy's float64 tanh is up to 2 ulps from it). numpy's answer
    stands for the special values (NaN, infinities, poles), which it gets as C99 says."""
    safe = np.frompyfunc(lambda *xs: _call(libm_fn, xs), arity, 1)

    def reference(*xs):
        r = np.asarray(numpy_fn(*xs), np.float64)
        xs = np.broadcast_arrays(*xs, r)
        ok = np.isfinite(xs[-1])
        for x in xs[:-1]:
            ok &= np.isfinite(x)
        if np.count_nonzero(ok):
            refined = safe(*(x[ok] for x in xs[:-1])).astype(np.float64)
            r = r.copy()
            r[ok] = np.where(refined == refined, refined, r[ok])
        return r

    return reference


def _call(fn, xs) -> float:
    try:
        return fn(*xs)
    except (ValueError, OverflowError):
        return _pymath.nan


# op -> its float64 reference, a function of float64 arrays
_REFERENCE = {
    "absf": np.abs,
    "ceil": np.ceil,
    "floor": np.floor,
    "round": _round_half_away,
    "roundeven": np.rint,
    "trunc": np.trunc,
    "copysign": np.copysign,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "cbrt": _libm(np.cbrt, _pymath.cbrt),
    "exp": _libm(np.exp, _pymath.exp),
    "exp2": _libm(np.exp2, _pymath.exp2),
    "expm1": _libm(np.expm1, _pymath.expm1),
    "log": _libm(np.log, _pymath.log),
    "log2": _libm(np.log2, _pymath.log2),
    "log10": _libm(np.log10, _pymath.log10),
    "log1p": _libm(np.log1p, _pymath.log1p),
    "sin": _libm(np.sin, _pymath.sin),
    "cos": _libm(np.cos, _pymath.cos),
    "tan": _libm(np.tan, _pymath.tan),
    "asin": _libm(np.arcsin, _pymath.asin),
    "acos": _libm(np.arccos, _pymath.acos),
    "atan": _libm(np.arctan, _pymath.atan),
    "atan2": _libm(np.arctan2, _pymath.atan2, 2),
    "sinh": _libm(np.sinh, _pymath.sinh),
    "cosh": _libm(np.cosh, _pymath.cosh),
    "tanh": _libm(np.tanh, _pymath.tanh),
    "asinh": _libm(np.arcsinh, _pymath.asinh),
    "acosh": _libm(np.arccosh, _pymath.acosh),
    "atanh": _libm(np.arctanh, _pymath.atanh),
    "erf": _libm(lambda x: np.where(x == x, np.sign(x), x), _pymath.erf),
    "erfc": _libm(lambda x: np.where(x == x, 1.0 - np.sign(x), x), _pymath.erfc),
    "powf": _libm(np.power, _pymath.pow, 2),
}


def _canonical(r, nan):
    is_nan = r != r
    return np.where(is_nan, nan, r)[()] if np.count_nonzero(is_nan) else r


def _to_type(t, r64):
    """float64 results -> the type: f64 as is; f32 rounded once; f16 and bf16 rounded to
    f32 first, then to the type, as the GPU rounds the f32 function's result."""
    if t.name == "f64":
        return r64
    r32 = np.asarray(r64).astype(np.float32)
    if t.name == "f16":
        return r32.astype(np.float16)
    return round_bf16(r32) if t.name == "bf16" else r32


def _float(name: str):
    reference = _REFERENCE[name]

    def make(op, t, _):
        if not t.is_float:
            raise Unsupported(f"operands of type {t.name}")
        nan = t.nan

        def apply(*xs):
            r64 = reference(*(np.asarray(x, np.float64) for x in xs))
            return _canonical(_to_type(t, r64)[()], nan)

        return apply

    return make


def _copysign(op, t, _):
    """``math.copysign`` moves the sign bit: f32 and f64 keep a NaN's payload (PTX
    ``copysign`` is a bit operation); f16 and bf16 go through f32 and back, and the
    conversion to them gives the canonical NaN (measured on the H200)."""
    if not t.is_float:
        raise Unsupported(f"operands of type {t.name}")
    if t.name in ("f16", "bf16"):
        return _float("copysign")(op, t, None)
    sign = t.udtype.type(1 << (t.bits - 1))

    def apply(x, y):
        bits = (t.to_bits(np.asarray(x, t.dtype)) & ~sign) | (t.to_bits(np.asarray(y, t.dtype)) & sign)
        return t.from_bits(bits)[()]

    return apply


def _fma_f32(a, b, c):
    """a*b + c rounded once to f32 (a, b, c: f32 values, or f16/bf16 ones).

    a*b is exact in float64; p + c is rounded to odd at float64's precision (its exact
    error from TwoSum says which neighbour is odd), so rounding it to f32 is exact.
    """
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    p = a * b
    s = p + c
    bp = s - c
    error = (p - bp) + (c - (s - bp))
    inexact = (error != 0) & np.isfinite(s)
    if np.count_nonzero(inexact):
        even = (s.view(np.uint64) & 1) == 0
        toward = np.nextafter(s, np.where(error > 0, np.inf, -np.inf))
        s = np.where(inexact & even, toward, s)
    return s.astype(np.float32)


def _fma_exact(a: float, b: float, c: float) -> float:
    """a*b + c rounded once to float64 (exact rational arithmetic)."""
    if not (_pymath.isfinite(a) and _pymath.isfinite(b)):
        return a * b + c
    if not _pymath.isfinite(c):
        return c  # a finite product, however large, plus an infinity (or NaN)
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:  # the sign of a zero: as a*b + c in IEEE arithmetic
        return a * b + c
    try:
        return float(exact)
    except OverflowError:
        return _pymath.inf if exact > 0 else -_pymath.inf


_FMA_F64 = np.frompyfunc(_fma_exact, 3, 1)


def _fma(op, t, _):
    if not t.is_float:
        raise Unsupported(f"operands of type {t.name}")
    nan = t.nan

    def apply(a, b, c):
        if t.name == "f64":
            r = _FMA_F64(a, b, c).astype(np.float64)
        else:
            r = _to_type(t, _fma_f32(a, b, c))
        return _canonical(r[()], nan)

    return apply


def _sincos(cx, op, where):
    """``math.sincos``: ``math.sin`` and ``math.cos`` of one (scalar) operand."""
    t = op.operands[0].type
    if isinstance(t, ir.VectorType):
        raise Unsupported("vector operands")
    elem = cx.elem(t)
    sin, cos = (_float(name)(op, elem, elem) for name in ("sin", "cos"))
    x = cx.use(op.operands[0])
    rs, rc = (cx.define(v) for v in op.results)

    def run(env, mask):
        env[rs], env[rc] = sin(env[x]), cos(env[x])

    return run


# --- classifications and integer ops


def _classify(test):
    def make(op, t, _):
        if not t.is_float:
            raise Unsupported(f"operand of type {t.name}")
        smallest = np.finfo(np.float32 if t.name == "bf16" else t.dtype).tiny
        return lambda x: test(np.abs(np.asarray(x)), smallest)[()]

    return make


def _integer(fn, arity: int):
    """An integer op, ``fn(bits, *operands)`` on Python ints (the operands' unsigned
    reading), wrapped to the type."""

    def make(op, t, _):
        if t.is_float or t.bits == 1:
            raise Unsupported(f"operands of type {t.name}")
        bits, udtype, dtype = t.bits, t.udtype, t.dtype
        per_element = np.frompyfunc(lambda *us: fn(bits, *(int(u) for u in us)) % (1 << bits), arity, 1)

        def apply(*xs):
            unsigned = [np.asarray(x).astype(dtype).view(udtype) for x in xs]
            return per_element(*unsigned).astype(udtype).view(dtype)[()]

        return apply

    return make


def _signed(bits: int, u: int) -> int:
    return u - (1 << bits) if u >> (bits - 1) else u


def _ipowi(bits: int, base: int, exponent: int) -> int:
    """``math.ipowi``: base**exponent wrapped; a negative exponent gives 1/base**-e
    truncated (0, except for base 1 and -1; division by zero for base 0)."""
    b, e = _signed(bits, base), _signed(bits, exponent)
    if e >= 0:
        return pow(b, e, 1 << bits)
    if b == 0:
        raise ZeroDivisionError("math.ipowi: 0 to a negative power")
    return 1 if b == 1 else ((-1) ** (-e) if b == -1 else 0)


def _fpowi(op, t, _):
    """``math.fpowi``: a float to an integer power, as ``powf`` with the power as a float."""
    pow_ = _float("powf")(op, t, None)
    return lambda x, n: pow_(x, np.asarray(n).astype(np.float64))


_INTEGER = {  # name -> (fn(bits, *operands), arity)
    "absi": (lambda bits, u: abs(_signed(bits, u)), 1),
    "ctlz": (lambda bits, u: bits - u.bit_length(), 1),
    "cttz": (lambda bits, u: (u & -u).bit_length() - 1 if u else bits, 1),
    "ctpop": (lambda bits, u: u.bit_count(), 1),
    "ipowi": (_ipowi, 2),
}
_CLASSIFY = {
    "isnan": lambda a, tiny: a != a,
    "isinf": lambda a, tiny: a == np.inf,
    "isfinite": lambda a, tiny: a < np.inf,
    "isnormal": lambda a, tiny: (a >= tiny) & (a < np.inf),
}


register(
    {
        **{f"math.{name}": elementwise(_float(name)) for name in _REFERENCE if name != "copysign"},
        "math.copysign": elementwise(_copysign),
        "math.fma": elementwise(_fma),
        "math.fpowi": elementwise(_fpowi),
        "math.sincos": _sincos,
        "vector.fma": elementwise(_fma),
        **{f"math.{name}": elementwise(_integer(fn, arity)) for name, (fn, arity) in _INTEGER.items()},
        **{f"math.{name}": elementwise(_classify(test)) for name, test in _CLASSIFY.items()},
    }
)
