"""The interpreter's op coverage: math, the rest of arith, vectors, scf.while/index_switch,
cf, and the gpu/nvvm id ops, each against numpy float64 (or plain Python integers), with
NaN, infinities and -0.0 where they matter.

``run_op`` builds a kernel in which thread t loads element t of each operand, runs one op
and stores its result, so an op is checked on many inputs (and special values) at once.
"""

import math

import numpy as np
import pytest

pytestmark = [
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
]
from test_interpreter import kernel
from tile_mlir.interpreter import SUPPORTED_OPS, InterpreterError
from tile_mlir.interpreter.math import GPU_ULPS

FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
INTS = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64}


@pytest.fixture
def rng():
    return np.random.default_rng(20250101)


CANONICAL = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}


def bf16(x):
    """float64 values -> bf16 values (round to nearest even, via float32 rounded to odd)."""
    x = np.asarray(x, np.float64)
    f = x.astype(np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return np.where(np.isnan(x), np.nan, out)


def to_memory(values, t):
    """Values as a kernel argument array of type ``t`` (bf16: its bits as uint16; a
    uint16 array is taken as the bits themselves)."""
    if t == "bf16" and getattr(values, "dtype", None) == np.uint16:
        return values
    if t == "bf16":
        return (np.asarray(bf16(values), np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.asarray(values, FLOATS.get(t) or INTS[t])


def from_memory(array, t):
    """Kernel output -> values (bf16: as float32, which keeps a NaN's payload)."""
    if t == "bf16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def run_op(line: str, operand_types, result_type: str, *inputs, results: int = 1):
    """Run ``line`` (operands %x0, %x1...; results %r or %r0, %r1...) in thread t on
    element t of each input; returns the results (one array, or a list)."""
    n = len(inputs[0])
    args = [f"%A{i}: memref<{n}x{t}>" for i, t in enumerate(operand_types)]
    types = [result_type] * results if isinstance(result_type, str) else list(result_type)
    names = ["%r"] if results == 1 else [f"%r{k}" for k in range(results)]
    args += [f"%O{k}: memref<{n}x{t}>" for k, t in enumerate(types)]
    body = "\n      %t = gpu.thread_id x"
    for i, t in enumerate(operand_types):
        body += f"\n      %x{i} = memref.load %A{i}[%t] : memref<{n}x{t}>"
    body += f"\n      {line}"
    for k, (name, t) in enumerate(zip(names, types)):
        body += f"\n      memref.store {name}, %O{k}[%t] : memref<{n}x{t}>"
    outs = [np.zeros(n, to_memory([0], t).dtype) for t in types]
    kernel(", ".join(args), body).launch(1, n, *(to_memory(x, t) for x, t in zip(inputs, operand_types)), *outs)
    got = [from_memory(o, t) for o, t in zip(outs, types)]
    return got[0] if results == 1 else got


def bits(x, t):
    x = np.asarray(x, np.float64)
    if t == "bf16":
        return (bf16(x).astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    return x.astype(FLOATS[t]).view(f"uint{np.dtype(FLOATS[t]).itemsize * 8}").astype(np.uint64)


def assert_same_float(got, want, t, msg=""):
    """Bit for bit, every NaN being the type's canonical NaN."""
    want_bits = np.where(np.isnan(want), CANONICAL[t], bits(want, t))
    if t == "bf16":
        got_bits = np.asarray(got, np.float32).view(np.uint32) >> 16
    else:
        got_bits = np.asarray(got).astype(FLOATS[t]).view(f"uint{np.dtype(FLOATS[t]).itemsize * 8}")
    bad = np.flatnonzero(got_bits != want_bits)
    assert not bad.size, f"{msg} ({t}): at {bad[:5]}: got {np.asarray(got)[bad[:5]]}, want {np.asarray(want)[bad[:5]]}"


def rounded(r64, t):
    """A float64 result as the GPU rounds it: f32 once; f16/bf16 via f32."""
    if t == "f64":
        return r64
    r32 = np.asarray(r64, np.float64).astype(np.float32).astype(np.float64)
    if t == "f16":
        return r32.astype(np.float16).astype(np.float64)
    return bf16(r32) if t == "bf16" else r32


def ulps(a, b, t="f64"):
    """Distance in units in the last place of ``t`` between two arrays of finite values."""
    dt = {"f64": (np.float64, np.int64), "f32": (np.float32, np.int32)}[t]
    ia, ib = (np.asarray(x, dt[0]).view(dt[1]).astype(np.int64) for x in (a, b))
    ia, ib = (np.where(i < 0, np.iinfo(dt[1]).min - i, i) for i in (ia, ib))
    return np.abs(ia - ib)


# ---------------------------------------------------------------------------------------
# math


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0]

# op -> (float64 reference from Python's math module, where it is defined)
LIBM = {
    "exp": math.exp, "exp2": math.exp2, "expm1": math.expm1, "log": math.log, "log2": math.log2,
    "log10": math.log10, "log1p": math.log1p, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atan": math.atan, "sinh": math.sinh, "cosh": math.cosh,
    "tanh": math.tanh, "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh, "erf": math.erf,
    "erfc": math.erfc, "cbrt": math.cbrt, "sqrt": math.sqrt,
    "rsqrt": lambda x: 1 / math.sqrt(x),
}  # fmt: skip
DOMAIN = {"log": (0.01, 50), "log2": (0.01, 50), "log10": (0.01, 50), "log1p": (-0.9, 50), "sqrt": (0, 50),
          "rsqrt": (0.01, 50), "asin": (-1, 1), "acos": (-1, 1), "acosh": (1, 50), "atanh": (-0.99, 0.99),
          "exp": (-80, 80), "exp2": (-120, 120), "expm1": (-80, 80), "sinh": (-80, 80), "cosh": (-80, 80)}  # fmt: skip


def libm(name, x):
    out = []
    for v in x.tolist():
        try:
            out.append(LIBM[name](v))
        except (ValueError, OverflowError, ZeroDivisionError):
            out.append(np.nan)
    return np.array(out)


@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("name", sorted(LIBM))
def test_math_unary_on_random_inputs(name, t, rng):
    """Inside the domain: f32/f16/bf16 results are the float64 result rounded to f32 (and
    then to the type); f64 results within 1 ulp of the C library's."""
    lo, hi = DOMAIN.get(name, (-20, 20))
    x = rng.uniform(lo, hi, 256)
    x = rounded(x, t) if t != "f64" else x
    if t == "f16":
        x = np.clip(x, -60000, 60000)
    got = run_op(f"%r = math.{name} %x0 : {t}", [t], t, x)
    want = libm(name, x)
    finite = np.isfinite(want)
    if t == "f64":
        assert ulps(got[finite], want[finite]).max() <= 1, name
    else:
        # a float64 result rounds to the type's neighbour only if it sits within ~2^-29 ulp
        # of a tie; the C library and numpy then may round differently, never by more
        assert_same_float(got, rounded(want, t), t, name)


# (op, operand, the C99 result) for special values
SPECIALS = [
    ("exp", -np.inf, 0.0), ("exp", np.inf, np.inf), ("exp", -0.0, 1.0), ("exp", 1000.0, np.inf),
    ("exp2", -np.inf, 0.0), ("expm1", -0.0, -0.0), ("expm1", -np.inf, -1.0),
    ("log", 0.0, -np.inf), ("log", -0.0, -np.inf), ("log", -1.0, np.nan), ("log", np.inf, np.inf),
    ("log2", 1.0, 0.0), ("log10", -np.inf, np.nan), ("log1p", -1.0, -np.inf), ("log1p", -0.0, -0.0),
    ("sqrt", -0.0, -0.0), ("sqrt", -1.0, np.nan), ("sqrt", np.inf, np.inf), ("rsqrt", 0.0, np.inf),
    ("rsqrt", -0.0, -np.inf), ("rsqrt", np.inf, 0.0), ("cbrt", -8.0, -2.0), ("cbrt", -0.0, -0.0),
    ("sin", -0.0, -0.0), ("sin", np.inf, np.nan), ("cos", np.inf, np.nan), ("tan", -0.0, -0.0),
    ("tanh", np.inf, 1.0), ("tanh", -np.inf, -1.0), ("tanh", -0.0, -0.0), ("sinh", -np.inf, -np.inf),
    ("cosh", -np.inf, np.inf), ("asin", 2.0, np.nan), ("acos", 1.0, 0.0), ("atan", -np.inf, -np.pi / 2),
    ("asinh", -0.0, -0.0), ("acosh", 0.5, np.nan), ("atanh", 1.0, np.inf), ("atanh", -1.0, -np.inf),
    ("erf", np.inf, 1.0), ("erf", -np.inf, -1.0), ("erf", -0.0, -0.0), ("erfc", np.inf, 0.0),
    ("erfc", -np.inf, 2.0), ("absf", -0.0, 0.0), ("absf", -np.inf, np.inf), ("ceil", -0.5, -0.0),
    ("ceil", 1.25, 2.0), ("floor", -0.5, -1.0), ("floor", -0.0, -0.0), ("trunc", -1.75, -1.0),
    ("trunc", -0.25, -0.0), ("round", 2.5, 3.0), ("round", -2.5, -3.0), ("round", -0.25, -0.0),
    ("round", 0.49999997, 0.0), ("roundeven", 2.5, 2.0), ("roundeven", -3.5, -4.0),
    ("roundeven", -0.5, -0.0), ("round", np.inf, np.inf), ("ceil", np.nan, np.nan),
]  # fmt: skip


@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16"])
def test_math_special_values(t):
    for name in sorted({s[0] for s in SPECIALS}):
        cases = [(x, want) for op, x, want in SPECIALS if op == name]
        x = np.array([c[0] for c in cases])
        if t != "f64":  # 0.49999997 is an f32 (and rounds to 0.5 in f16/bf16)
            x = rounded(x, t)
        got = run_op(f"%r = math.{name} %x0 : {t}", [t], t, x)
        want = np.array([c[1] for c in cases])
        if name == "round" and t in ("f16", "bf16"):
            want[x == 0.5] = 1.0
        want = rounded(want, t) if t != "f64" else want
        assert_same_float(got, want, t, name)


@pytest.mark.parametrize("t", ["f32", "f64", "bf16"])
def test_math_binary(t, rng):
    x = np.array([2.0, -2.0, 0.0, -0.0, np.nan, 1.0, np.inf, -np.inf, 0.5, -8.0, 3.0, np.nan])
    y = np.array([0.5, 3.0, -1.0, -1.0, 0.0, np.nan, -0.0, 3.0, np.inf, 1 / 3, -2.0, 1.0])
    x, y = (rounded(v, t) for v in (x, y))
    powf = run_op(f"%r = math.powf %x0, %x1 : {t}", [t, t], t, x, y)
    # C99: pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN; pow(±0, -1) = ±inf;
    # pow(-inf, 3) = -inf; pow(-8, 1/3) is NaN
    want = np.array([2**0.5, -8.0, np.inf, -np.inf, 1.0, 1.0, 1.0, -np.inf, 0.0, np.nan, 1 / 9, np.nan])
    assert_same_float(powf, rounded(want, t), t, "powf")
    atan2 = run_op(f"%r = math.atan2 %x0, %x1 : {t}", [t, t], t, x, y)
    want = np.array([math.atan2(u, v) for u, v in zip(x.tolist(), y.tolist())])
    assert_same_float(atan2, rounded(want, t), t, "atan2")
    assert np.signbit(atan2[3]) and atan2[3] == -np.pi or t == "bf16"  # atan2(-0, -1) = -pi
    copysign = run_op(f"%r = math.copysign %x0, %x1 : {t}", [t, t], t, x, y)
    np.testing.assert_array_equal(np.signbit(copysign), np.signbit(y))
    a, b = rounded(rng.uniform(-4, 4, 64), t), rounded(rng.uniform(-4, 4, 64), t)
    got = run_op(f"%r = math.powf %x0, %x1 : {t}", [t, t], t, np.abs(a), b)
    want = np.array([math.pow(u, v) for u, v in zip(np.abs(a).tolist(), b.tolist())])
    assert_same_float(got, rounded(want, t), t, "powf random")


def test_nan_payloads_as_the_h200_gives_them():
    """Measured on the H200: abs and neg give the canonical NaN; copysign on f32 moves the
    sign bit only (a signaling NaN stays signaling); conversions to f16 and bf16 give the
    canonical NaN (the sign too is lost), bf16 -> f32 keeps the bits, f64 -> f32 keeps the
    sign and the payload's top bits, quieted."""
    payload = np.array([0x7F800001, 0xFFC12345], np.uint32).view(np.float32)
    for line in ("%r = math.absf %x0 : f32", "%r = arith.negf %x0 : f32", "%r = math.exp %x0 : f32"):
        got = run_op(line, ["f32"], "f32", payload)
        assert got.view(np.uint32).tolist() == [0x7FFFFFFF] * 2, line
    neg = run_op("%r = math.copysign %x0, %x1 : f32", ["f32", "f32"], "f32", payload, np.float32([-1, -1]))
    assert neg.view(np.uint32).tolist() == [0xFF800001, 0xFFC12345]
    for t in ("f16", "bf16"):
        x = np.array([np.nan, 2.0])
        got = run_op(f"%r = math.copysign %x0, %x1 : {t}", [t, t], t, x, np.array([-1.0, -1.0]))
        assert_same_float(got, np.array([np.nan, -2.0]), t, "copysign")  # canonical: positive
        down = run_op(f"%r = arith.truncf %x0 : f32 to {t}", ["f32"], t, payload)
        assert_same_float(down, np.array([np.nan, np.nan]), t, "truncf")
    bits = np.array([0x7F81, 0xFF92], np.uint16)
    up = run_op("%r = arith.extf %x0 : bf16 to f32", ["bf16"], "f32", bits)
    assert up.view(np.uint32).tolist() == [0x7F810000, 0xFF920000]
    wide = np.array([0x7FF0000000000123, 0xFFF8000000000456], np.uint64).view(np.float64)
    narrow = run_op("%r = arith.truncf %x0 : f64 to f32", ["f64"], "f32", wide)
    assert narrow.view(np.uint32).tolist() == [0x7FC00000, 0xFFC00000]
    h = run_op("%r = arith.extf %x0 : f16 to f32", ["f16"], "f32", np.array([0x7C01, 0xFE12], np.uint16).view(np.float16))
    assert h.view(np.uint32).tolist() == [0x7FFFFFFF] * 2


def fma_exact(a, b, c):
    from fractions import Fraction

    return float(Fraction(a) * Fraction(b) + Fraction(c))


@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16"])
def test_fma_rounds_once(t, rng):
    a, b, c = (rounded(rng.uniform(-3, 3, 200), t) for _ in range(3))
    # c = -a*b rounded: the exact fma is the product's rounding error, which a*b+c loses
    c[:100] = -rounded(a[:100] * b[:100], t)
    got = run_op(f"%r = math.fma %x0, %x1, %x2 : {t}", [t] * 3, t, a, b, c)
    exact = np.array([fma_exact(*v) for v in zip(a.tolist(), b.tolist(), c.tolist())])
    if t in ("f16", "bf16"):  # the GPU: fmaf on f32 operands, then rounded to the type
        exact = np.array([float(np.float32(v)) for v in exact])
    assert_same_float(got, rounded(exact, t), t, "fma")
    two_ops = rounded(rounded(a * b, t) + c, t)
    assert np.any(two_ops != got), "the inputs should tell one rounding from two"
    special = run_op(f"%r = math.fma %x0, %x1, %x2 : {t}", [t] * 3, t, *np.array(
        [[np.inf, 0.0, 1.0], [np.inf, 1.0, -np.inf], [-0.0, 1.0, -0.0], [1e300, 1e300, -np.inf],
         [1e300, -1e300, 1.0]]).T)  # fmt: skip
    # inf*0 + 1, inf*1 - inf, -0*1 + -0, (1e300 is inf below f64) inf - inf or finite - inf,
    # and a product past f64's range
    want = np.array([np.nan, np.nan, -0.0, -np.inf if t == "f64" else np.nan, -np.inf])
    assert_same_float(special, rounded(want, t), t)


def test_math_integer_ops_and_classes():
    x = np.array([0, 1, -1, 7, -(2**31), 2**31 - 1, 12, 1 << 20], np.int32)
    u = [int(v) % 2**32 for v in x.tolist()]
    for name, want in [
        ("absi", [abs(v) if v != -(2**31) else v for v in x.tolist()]),
        ("ctlz", [32 - v.bit_length() for v in u]),
        ("cttz", [(v & -v).bit_length() - 1 if v else 32 for v in u]),
        ("ctpop", [v.bit_count() for v in u]),
    ]:
        assert run_op(f"%r = math.{name} %x0 : i32", ["i32"], "i32", x).tolist() == want, name
    e = np.array([0, 3, 2, 1, 1, 0, -1, 2], np.int32)
    base = np.array([5, 3, -2, -1, 7, 0, 2, 1 << 20], np.int32)
    want = [1, 27, 4, -1, 7, 1, 0, 0]  # wrapped; 2**-1 truncates to 0
    assert run_op("%r = math.ipowi %x0, %x1 : i32", ["i32", "i32"], "i32", base, e).tolist() == want
    f = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 1e-40, 3e38, -0.0], np.float32)
    for name, want in [("isnan", np.isnan(f)), ("isinf", np.isinf(f)), ("isfinite", np.isfinite(f)),
                       ("isnormal", np.isfinite(f) & (np.abs(f) >= np.finfo(np.float32).tiny))]:  # fmt: skip
        np.testing.assert_array_equal(run_op(f"%r = math.{name} %x0 : f32", ["f32"], "i1", f), want, err_msg=name)
    fpowi = run_op("%r = math.fpowi %x0, %x1 : f32, i32", ["f32", "i32"], "f32", f[:4], e[:4])
    assert_same_float(fpowi, np.array([1.0, np.inf, np.inf, 0.0]), "f32", "fpowi")  # pow(NaN, 0) = 1


def test_sincos_has_two_results(rng):
    x = rng.uniform(-10, 10, 32).astype(np.float32)
    s, c = run_op("%r0, %r1 = math.sincos %x0 : f32", ["f32"], ["f32", "f32"], x, results=2)
    assert_same_float(s, rounded(np.sin(x.astype(np.float64)), "f32"), "f32")
    assert_same_float(c, rounded(np.cos(x.astype(np.float64)), "f32"), "f32")


def test_every_math_op_with_a_gpu_bound_is_registered():
    assert {f"math.{name}" for name in GPU_ULPS} <= SUPPORTED_OPS
    floats = {op for op in SUPPORTED_OPS if op.startswith("math.")} - {f"math.{n}" for n in GPU_ULPS}
    # the others are exact on both sides: integers, classes, fpowi (powf), sincos (sin, cos)
    assert floats == {"math.absi", "math.ctlz", "math.cttz", "math.ctpop", "math.ipowi", "math.isnan",
                      "math.isinf", "math.isfinite", "math.isnormal", "math.fpowi", "math.sincos"}  # fmt: skip


# ---------------------------------------------------------------------------------------
# arith: what test_interpreter.py does not cover


def test_ceildiv_and_extended_integer_ops(rng):
    a = rng.integers(-(2**31), 2**31, 64).astype(np.int32)
    b = rng.integers(-1000, 1000, 64).astype(np.int32)
    b[b == 0] = 3
    a[:6], b[:6] = [7, -7, 7, -7, 6, -(2**31)], [2, 2, -2, -2, 3, 7]
    s = [(int(x), int(y)) for x, y in zip(a, b)]
    u = [(x % 2**32, y % 2**32) for x, y in s]
    wrap = lambda v: (v + 2**31) % 2**32 - 2**31
    assert run_op("%r = arith.ceildivsi %x0, %x1 : i32", ["i32"] * 2, "i32", a, b).tolist() == [
        wrap(-((-x) // y)) for x, y in s
    ]
    assert run_op("%r = arith.ceildivui %x0, %x1 : i32", ["i32"] * 2, "i32", a, b).tolist() == [
        wrap(-((-x) // y)) for x, y in u
    ]
    total, carry = run_op("%r0, %r1 = arith.addui_extended %x0, %x1 : i32, i1", ["i32"] * 2, ["i32", "i1"], a, b, results=2)
    assert total.tolist() == [wrap(x + y) for x, y in u] and carry.tolist() == [x + y >= 2**32 for x, y in u]
    for op, pairs in (("mulsi_extended", s), ("mului_extended", u)):
        lo, hi = run_op(f"%r0, %r1 = arith.{op} %x0, %x1 : i32", ["i32"] * 2, ["i32", "i32"], a, b, results=2)
        assert lo.tolist() == [wrap(x * y) for x, y in pairs], op
        assert hi.tolist() == [wrap((x * y) >> 32) for x, y in pairs], op


@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16"])
def test_remf_negf_and_conversions(t):
    x = np.array([5.5, -5.5, 5.5, np.inf, 1.0, -0.0, np.nan, 0.0])
    y = np.array([2.0, 2.0, -2.0, 2.0, np.inf, 3.0, 1.0, 0.0])
    rem = run_op(f"%r = arith.remf %x0, %x1 : {t}", [t, t], t, x, y)
    assert_same_float(rem, np.fmod(x, y), t, "remf")  # fmod: exact, the sign of x
    neg = run_op(f"%r = arith.negf %x0 : {t}", [t], t, x)
    assert_same_float(neg, -x, t, "negf")  # -(-0) = +0; -NaN is the canonical NaN
    if t in ("f16", "bf16"):  # exact (NaN: see test_nan_payloads_as_the_h200_gives_them)
        up = run_op(f"%r = arith.extf %x0 : {t} to f32", [t], "f32", x[~np.isnan(x)])
        assert_same_float(up, rounded(x[~np.isnan(x)], t), "f32", "extf")
    wide = np.array([1 + 2**-9, 1 + 3 * 2**-9, 65520.0, 1e-8, -(2**-24) * 0.75, -np.inf, 70000.0])
    down = run_op(f"%r = arith.truncf %x0 : f64 to {t}", ["f64"], t, wide) if t != "f64" else None
    if down is not None:  # one rounding, to nearest even (65520 overflows f16)
        want = bf16(wide) if t == "bf16" else wide.astype(FLOATS[t]).astype(np.float64)
        assert_same_float(down, want, t, "truncf")


def test_vector_constants_select_and_elementwise():
    body = """%c = arith.constant dense<[1.5, -2.0, 3.0, 0.5]> : vector<4xf32>
      %h = arith.constant dense<[1.0, -0.5]> : vector<2xbf16>
      %s = arith.constant dense<2.0> : vector<4xf32>
      %v = vector.broadcast %x0 : f32 to vector<4xf32>
      %m = arith.mulf %v, %c : vector<4xf32>
      %a = arith.addf %m, %s : vector<4xf32>
      %p = arith.cmpf ogt, %a, %s : vector<4xf32>
      %q = arith.select %p, %a, %c : vector<4xi1>, vector<4xf32>
      %e = vector.extract %h[1] : bf16 from vector<2xbf16>
      %ef = arith.extf %e : bf16 to f32
      %red = vector.reduction <add>, %q, %ef : vector<4xf32> into f32
      %r = arith.addf %red, %x0 : f32"""
    x = np.array([1.0, -1.0, 0.25, 2.0], np.float32)
    got = run_op(body, ["f32"], "f32", x)
    c, s = np.float32([1.5, -2.0, 3.0, 0.5]), np.float32(2.0)
    for k, xk in enumerate(x):
        a = xk * c + s
        q = np.where(a > s, a, c)
        total = np.float32(-0.5)
        for v in q:
            total = total + v
        assert got[k] == total + xk


# ---------------------------------------------------------------------------------------
# vector


def test_vector_moves(rng):
    body = """%v = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xi32>
      %b = vector.broadcast %v : vector<4xi32> to vector<2x4xi32>
      %c3 = arith.constant 3 : i32
      %b2 = vector.insert %c3, %b[1, 2] : i32 into vector<2x4xi32>
      %tr = vector.transpose %b2, [1, 0] : vector<2x4xi32> to vector<4x2xi32>
      %sc = vector.shape_cast %tr : vector<4x2xi32> to vector<8xi32>
      %sl = vector.extract_strided_slice %sc {offsets = [3], sizes = [4], strides = [1]} : vector<8xi32> to vector<4xi32>
      %sh = vector.shuffle %sl, %v [7, 0, 5, 2] : vector<4xi32>, vector<4xi32>
      %z = arith.constant dense<0> : vector<6xi32>
      %ins = vector.insert_strided_slice %sh, %z {offsets = [1], strides = [1]} : vector<4xi32> into vector<6xi32>
      %e0, %e1, %e2, %e3, %e4, %e5 = vector.to_elements %ins : vector<6xi32>
      %st = vector.step : vector<6xindex>
      %k = vector.extract %st[4] : index from vector<6xindex>
      %k32 = arith.index_cast %k : index to i32
      %mul = arith.muli %e2, %k32 : i32
      %r = arith.addi %mul, %e4 : i32"""
    xs = [rng.integers(-100, 100, 16).astype(np.int32) for _ in range(4)]
    got = run_op(body, ["i32"] * 4, "i32", *xs)
    for t in range(16):
        v = np.array([x[t] for x in xs])
        b = np.broadcast_to(v, (2, 4)).copy()
        b[1, 2] = 3
        sl = b.T.reshape(-1)[3:7]
        sh = np.concatenate([sl, v])[[7, 0, 5, 2]]
        ins = np.concatenate([[0], sh, [0]])
        assert got[t] == ins[2] * 4 + ins[4]


def test_vector_dynamic_positions(rng):
    body = """%v = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xf32>
      %c4 = arith.constant 4 : index
      %i = arith.remui %t, %c4 : index
      %e = vector.extract %v[%i] : f32 from vector<4xf32>
      %w = vector.insert %e, %v[3] : f32 into vector<4xf32>
      %c1 = arith.constant 1 : index
      %u = vector.insert %x0, %w[%c1] : f32 into vector<4xf32>
      %j = arith.subi %c4, %c1 : index
      %back = vector.extract %u[%j] : f32 from vector<4xf32>
      %f = vector.extract %u[%c1] : f32 from vector<4xf32>
      %r = arith.subf %back, %f : f32"""
    xs = [rng.uniform(-1, 1, 32).astype(np.float32) for _ in range(4)]
    got = run_op(body, ["f32"] * 4, "f32", *xs)
    picked = np.array([xs[t % 4][t] for t in range(32)], np.float32)
    np.testing.assert_array_equal(got, picked - xs[0])


def test_vector_masks_reductions_bitcast_fma():
    body = """%v = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xf32>
      %m = vector.create_mask %t : vector<4xi1>
      %cm = vector.constant_mask [2] : vector<4xi1>
      %both = arith.andi %m, %cm : vector<4xi1>
      %z = arith.constant dense<0.0> : vector<4xf32>
      %kept = arith.select %both, %v, %z : vector<4xi1>, vector<4xf32>
      %max = vector.reduction <maximumf>, %kept : vector<4xf32> into f32
      %fma = vector.fma %v, %v, %kept : vector<4xf32>
      %sum = vector.reduction <add>, %fma : vector<4xf32> into f32
      %h = arith.truncf %v : vector<4xf32> to vector<4xf16>
      %bits = vector.bitcast %h : vector<4xf16> to vector<2xi32>
      %hi = vector.extract %bits[1] : i32 from vector<2xi32>
      %hf = arith.sitofp %hi : i32 to f32
      %r0 = arith.addf %max, %sum : f32
      %r = arith.addf %r0, %hf : f32"""
    xs = [np.float32([0.5, -1.5, 2.0, 3.0, -4.0, 1.0]) * (k + 1) for k in range(4)]
    got = run_op(body, ["f32"] * 4, "f32", *xs)
    for t in range(6):
        v = np.array([x[t] for x in xs], np.float32)
        kept = np.where((np.arange(4) < t) & (np.arange(4) < 2), v, np.float32(0))
        fma = (v.astype(np.float64) * v + kept).astype(np.float32)
        total = np.float32(0)
        for e in fma:
            total = np.float32(total + e) if total else e
        h = v.astype(np.float16).view(np.int32)[1]
        assert got[t] == np.float32(np.float32(kept.max() + total) + np.float32(h)), t


def test_vector_reduction_kinds(rng):
    ints = rng.integers(-1000, 1000, (4, 32)).astype(np.int32)
    for kind, fn in [("add", np.add), ("mul", np.multiply), ("minsi", np.minimum), ("maxui", None),
                     ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor)]:  # fmt: skip
        body = f"""%v = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xi32>
      %r = vector.reduction <{kind}>, %v : vector<4xi32> into i32"""
        got = run_op(body, ["i32"] * 4, "i32", *ints)
        if fn is None:
            want = ints.view(np.uint32).max(axis=0).view(np.int32)
        else:
            want = fn.reduce(ints.astype(np.int64), axis=0)
            want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
        np.testing.assert_array_equal(got, want, err_msg=kind)
    f = rng.uniform(-1, 1, (4, 32)).astype(np.float32)
    f[0, :4] = [np.nan, -0.0, 0.0, 1.0]
    f[1, :4] = [1.0, 0.0, -0.0, np.nan]
    f[2:, 1] = 1.0  # column 1: the zeros are the least
    least = np.minimum.reduce(f, axis=0)
    least[1] = -0.0  # numpy's minimum(-0, +0) is the first operand; minimumf's is -0
    for kind, want in [("maxnumf", np.fmax.reduce(f, axis=0)), ("minimumf", least)]:
        body = f"""%v = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xf32>
      %r = vector.reduction <{kind}>, %v : vector<4xf32> into f32"""
        got = run_op(body, ["f32"] * 4, "f32", *f)
        assert_same_float(got, want, "f32", kind)
    assert np.signbit(got[1]) and got[1] == 0  # minimumf(+0, -0, ...) = -0


MEMORY = "%M: memref<8x6xf32>"


def test_vector_loads_stores_and_masks(rng):
    """Thread t reads row t of an 8x6 memref, 4 elements from column t (so threads 3..7
    run past the row end: padding, or masked, or an error)."""
    body = """
      %t = gpu.thread_id x
      %pad = arith.constant -1.0 : f32
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c6 = arith.constant 6 : index
      %room = arith.subi %c6, %t : index
      %m = vector.create_mask %room : vector<4xi1>
      %a = vector.transfer_read %M[%t, %t], %pad {in_bounds = [false]} : memref<8x6xf32>, vector<4xf32>
      vector.store %a, %O[%t, %c0] : memref<8x12xf32>, vector<4xf32>
      %zeros = arith.constant dense<7.0> : vector<4xf32>
      %b = vector.maskedload %M[%t, %t], %m, %zeros : memref<8x6xf32>, vector<4xi1>, vector<4xf32> into vector<4xf32>
      vector.store %b, %O[%t, %c4] : memref<8x12xf32>, vector<4xf32>
      %col = vector.transfer_read %M[%c0, %t], %pad {permutation_map = affine_map<(d0, d1) -> (d0)>, in_bounds = [true]} : memref<8x6xf32>, vector<4xf32>
      %d = vector.transfer_read %M[%t, %c2], %pad, %m {in_bounds = [true]} : memref<8x6xf32>, vector<4xf32>
      %s = arith.addf %col, %d : vector<4xf32>
      %c8 = arith.constant 8 : index
      vector.store %s, %O[%t, %c8] : memref<8x12xf32>, vector<4xf32>
      %neg = arith.negf %a : vector<4xf32>
      vector.transfer_write %neg, %W[%t, %t], %m : vector<4xf32>, memref<8x6xf32>
      vector.maskedstore %X[%t, %c0], %m, %b : memref<8x6xf32>, vector<4xi1>, vector<4xf32>"""
    src = rng.uniform(1, 2, (8, 6)).astype(np.float32)
    out = np.zeros((8, 12), np.float32)
    w, x = np.zeros((8, 6), np.float32), np.zeros((8, 6), np.float32)
    k = kernel(f"{MEMORY}, %O: memref<8x12xf32>, %W: memref<8x6xf32>, %X: memref<8x6xf32>", body)
    k.launch(1, 6, src, out, w, x)
    for t in range(6):
        room = 6 - t
        a = [src[t, t + j] if j < room else -1.0 for j in range(4)]
        b = [src[t, t + j] if j < room else 7.0 for j in range(4)]
        col = [src[j, t] for j in range(4)]
        d = [src[t, 2 + j] if j < room else -1.0 for j in range(4)]
        np.testing.assert_array_equal(out[t, :4], np.float32(a))
        np.testing.assert_array_equal(out[t, 4:8], np.float32(b))
        np.testing.assert_array_equal(out[t, 8:], np.float32(col) + np.float32(d))
    want_w, want_x = np.zeros((8, 6), np.float32), np.zeros((8, 6), np.float32)
    for t in range(6):  # the first 6 - t elements of the vector (at most 4), into row t
        for j in range(min(4, 6 - t)):
            want_w[t, t + j] = -src[t, t + j]  # transfer_write, from column t
            want_x[t, j] = src[t, t + j]  # maskedstore, from column 0
    np.testing.assert_array_equal(w, want_w)
    np.testing.assert_array_equal(x, want_x)


def test_vector_overrun_without_padding_is_an_error():
    body = """
      %t = gpu.thread_id x
      %pad = arith.constant 0.0 : f32
      %a = vector.transfer_read %M[%t, %t], %pad {in_bounds = [true]} : memref<8x6xf32>, vector<4xf32>"""
    with pytest.raises(InterpreterError, match=r"transfer_read .*overruns memref<8x6xf32>: its element 3 is at index \[3, 6\] in thread \(3, 0, 0\)"):
        kernel(MEMORY, body).launch(1, 4, np.zeros((8, 6), np.float32))


# ---------------------------------------------------------------------------------------
# scf.while, scf.index_switch, cf


def test_while_with_per_thread_trip_counts():
    body = """%z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %n, %s = scf.while (%i = %z, %acc = %z) : (i32, i32) -> (i32, i32) {
        %go = arith.cmpi slt, %i, %x0 : i32
        scf.condition(%go) %i, %acc : i32, i32
      } do {
      ^bb0(%i: i32, %acc: i32):
        %next = arith.addi %i, %one : i32
        %sum = arith.addi %acc, %next : i32
        scf.yield %next, %sum : i32, i32
      }
      %r = arith.muli %n, %s : i32"""
    x = np.array([0, 1, 5, 3, -2, 10, 2, 7], np.int32)
    got = run_op(body, ["i32"], "i32", x)
    assert got.tolist() == [max(v, 0) * (max(v, 0) * (max(v, 0) + 1) // 2) for v in x.tolist()]


def test_index_switch_uniform_and_per_thread():
    body = """%i = arith.index_cast %x0 : i32 to index
      %r = scf.index_switch %i -> i32
      case 1 {
        %a = arith.constant 10 : i32
        scf.yield %a : i32
      }
      case 4 {
        %b = arith.muli %x0, %x0 : i32
        scf.yield %b : i32
      }
      default {
        %c = arith.constant -1 : i32
        scf.yield %c : i32
      }"""
    x = np.array([1, 4, 0, 7, 4, 1], np.int32)
    assert run_op(body, ["i32"], "i32", x).tolist() == [10, 16, -1, -1, 16, 10]
    assert run_op(body, ["i32"], "i32", np.full(3, 4, np.int32)).tolist() == [16] * 3


CF_LOOP = """
      %t = gpu.thread_id x
      %n = memref.load %A[%t] : memref<32xi32>
      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      cf.br ^loop(%z, %z : i32, i32)
    ^loop(%i: i32, %acc: i32):
      %go = arith.cmpi slt, %i, %n : i32
      cf.cond_br %go, ^body, ^exit(%acc : i32)
    ^body:
      %next = arith.addi %i, %one : i32
      %sum = arith.addi %acc, %next : i32
      cf.br ^loop(%next, %sum : i32, i32)
    ^exit(%s: i32):
      %kind = arith.remsi %n, %c3 : i32
      cf.switch %kind : i32, [ default: ^done(%s : i32), 1: ^neg(%s : i32), 2: ^done(%z : i32) ]
    ^neg(%v: i32):
      %m = arith.subi %z, %v : i32
      cf.br ^done(%m : i32)
    ^done(%out: i32):
      %w = arith.constant 32 : i32
      %o = arith.constant 1 : i32
      %nb, %ok = gpu.shuffle xor %out, %o, %w : i32
      gpu.barrier
      memref.store %out, %B[%t] : memref<32xi32>
      memref.store %nb, %C[%t] : memref<32xi32>"""


def test_cf_loops_switches_and_reconverges(rng):
    """Threads loop a different number of times, take different switch arms, and meet
    again before a shuffle and a barrier, which need them all."""
    k = kernel("%A: memref<32xi32>, %B: memref<32xi32>, %C: memref<32xi32>",
               CF_LOOP.replace("%z = arith.constant 0 : i32", "%z = arith.constant 0 : i32\n      %c3 = arith.constant 3 : i32"))  # fmt: skip
    n = rng.integers(0, 12, 32).astype(np.int32)
    b, c = np.zeros(32, np.int32), np.zeros(32, np.int32)
    k.launch(1, 32, n, b, c)
    tri = n * (n + 1) // 2
    want = np.where(n % 3 == 1, -tri, np.where(n % 3 == 2, 0, tri))
    np.testing.assert_array_equal(b, want)
    np.testing.assert_array_equal(c, want[np.arange(32) ^ 1])


def test_scf_to_cf_lowered_kernel_runs_the_same(rng):
    """The same kernel before and after convert-scf-to-cf gives the same results."""
    from mlir.passmanager import PassManager
    from test_interpreter import module, signature
    from tile_mlir.interpreter import InterpretedKernel
    from tile_mlir.ir import ir, make_context

    args = "%A: memref<32xf32>, %B: memref<32xf32>"
    body = """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<32xf32>
      %zero = arith.constant 0.0 : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %pos = arith.cmpf ogt, %a, %zero : f32
      %r = scf.if %pos -> (f32) {
        %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (f32) {
          %d = arith.mulf %acc, %a : f32
          scf.yield %d : f32
        }
        scf.yield %s : f32
      } else {
        %n = arith.negf %a : f32
        scf.yield %n : f32
      }
      %w = arith.constant 32 : i32
      %o = arith.constant 5 : i32
      %x, %ok = gpu.shuffle xor %r, %o, %w : f32
      memref.store %x, %B[%t] : memref<32xf32>"""
    text = module(args, body)
    with make_context():
        m = ir.Module.parse(text)
        PassManager.parse("builtin.module(convert-scf-to-cf)").run(m.operation)
        lowered = str(m)
    assert "cf.cond_br" in lowered and "scf." not in lowered
    a = rng.uniform(-2, 2, 32).astype(np.float32)
    outs = []
    for t in (text, lowered):
        b = np.zeros(32, np.float32)
        InterpretedKernel(t, "f", signature("f", args)).launch(1, 32, a, b)
        outs.append(b)
    np.testing.assert_array_equal(outs[0], outs[1])
    want = np.where(a > 0, a * a * a * a * a, -a)[np.arange(32) ^ 5]
    np.testing.assert_allclose(outs[0], want, rtol=1e-6)


def test_cf_assert_names_the_thread():
    body = """%t = gpu.thread_id x
      %c5 = arith.constant 5 : index
      %ok = arith.cmpi ult, %t, %c5 : index
      cf.assert %ok, "t < 5\""""
    kernel("%A: memref<4xf32>", body).launch(1, 5, np.zeros(4, np.float32))
    with pytest.raises(InterpreterError, match=r"cf\.assert at .*'t < 5' fails in thread \(5, 0, 0\)"):
        kernel("%A: memref<4xf32>", body).launch(1, 8, np.zeros(4, np.float32))


# ---------------------------------------------------------------------------------------
# gpu and nvvm ids


def test_gpu_and_nvvm_ids():
    names = ["gpu.subgroup_id : index", "gpu.num_subgroups : index", "gpu.subgroup_size : index",
             "gpu.global_id x", "gpu.global_id y", "gpu.lane_id"]  # fmt: skip
    sregs = ["tid.x", "tid.y", "ntid.x", "ctaid.x", "ctaid.y", "nctaid.y", "laneid", "warpsize"]
    rows = len(names) + len(sregs)
    body = """
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %dx = gpu.block_dim x
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %gx = gpu.grid_dim x
      %ry = arith.muli %ty, %dx : index
      %tid = arith.addi %ry, %tx : index
      %bid = arith.muli %by, %gx : index
      %b = arith.addi %bid, %bx : index
      %n = arith.constant 96 : index
      %base = arith.muli %b, %n : index
      %col = arith.addi %base, %tid : index"""
    for row, name in enumerate(names):
        body += f"""
      %v{row} = {name}
      %i{row} = arith.index_cast %v{row} : index to i32
      %r{row} = arith.constant {row} : index
      memref.store %i{row}, %O[%r{row}, %col] : memref<{rows}x576xi32>"""
    for k, sreg in enumerate(sregs):
        row = len(names) + k
        body += f"""
      %s{row} = nvvm.read.ptx.sreg.{sreg} : i32
      %r{row} = arith.constant {row} : index
      memref.store %s{row}, %O[%r{row}, %col] : memref<{rows}x576xi32>"""
    out = np.full((rows, 576), -7, np.int32)
    kernel(f"%O: memref<{rows}x576xi32>", body).launch((2, 3), (48, 2), out)
    t = np.arange(96)
    tx, ty = t % 48, t // 48
    for b in range(6):
        bx, by = b % 2, b // 2
        got = out[:, 96 * b : 96 * (b + 1)]
        want = [t // 32, np.full(96, 3), np.full(96, 32), bx * 48 + tx, by * 2 + ty, t % 32,
                tx, ty, np.full(96, 48), np.full(96, bx), np.full(96, by), np.full(96, 3), t % 32, np.full(96, 32)]  # fmt: skip
        for row, w in enumerate(want):
            np.testing.assert_array_equal(got[row], w, err_msg=f"row {row}, block {b}")
