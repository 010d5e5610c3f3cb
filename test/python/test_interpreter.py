"""Tests for tile_mlir.interpreter: hand-written kernels checked against numpy.

Inputs are random (fixed seeds, never zeros); float results are compared against
numpy, step by step in the kernel's own type where rounding matters.
"""

import re

import numpy as np
import pytest

from tile_mlir.interpreter import InterpretedKernel, InterpreterError, interpreted_kernels
from tile_mlir.signature import MLIR_TO_NUMPY, ArgSpec, KernelSignature, LaunchError

_MEMREF = re.compile(r"memref<((?:(?:\d+|\?)x)*)(\w+)>")


def signature(name: str, args: str) -> KernelSignature:
    """The KernelSignature of ``gpu.func @name(<args>)``, from the argument types."""
    specs = []
    for type_ in re.findall(r":\s*(memref<[^>]*>|\w+)", args):  # memref<?x8xf32>: a dynamic dim
        m = _MEMREF.fullmatch(type_)
        if m:
            shape = tuple(None if d == "?" else int(d) for d in m.group(1).split("x") if d)
            specs.append(ArgSpec("memref", MLIR_TO_NUMPY[m.group(2)], shape))
        else:
            specs.append(ArgSpec("scalar", MLIR_TO_NUMPY[type_]))
    return KernelSignature(name, tuple(specs))


def module(args: str, body: str, name: str = "f", attributions: str = "") -> str:
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @k {{
    gpu.func @{name}({args}) {attributions} kernel {{
{body}
      gpu.return
    }}
  }}
}}
"""


def kernel(args: str, body: str, attributions: str = "") -> InterpretedKernel:
    return InterpretedKernel(module(args, body, attributions=attributions), "f", signature("f", args))


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def nonzero(rng, n, dtype=np.float32, lo=0.25, hi=4.0):
    """Random values of both signs with lo <= |x| < hi."""
    return (rng.uniform(lo, hi, n) * rng.choice([-1.0, 1.0], n)).astype(dtype)


def bf16_round(x):
    """float64 values rounded to bf16 (8 significant bits, ties to even), as float64."""
    m, e = np.frexp(np.asarray(x, np.float64))
    return np.ldexp(np.round(m * 256.0), e - 8)


def bf16_bits(x):
    """bf16-exact float64 values -> uint16 bit patterns."""
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


# ---------------------------------------------------------------------------------------
# Reductions: the demo (examples/demo.mlir) and a warp butterfly


def test_sum_of_four_in_one_thread(rng):
    k = kernel(
        "%A: memref<4xf32>, %B: memref<1xf32>",
        """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %src = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      scf.for %i = %c0 to %c4 step %c1 {
        %v = memref.load %A[%i] : memref<4xf32>
        memref.store %v, %src[%i] : memref<4xf32, #gpu.address_space<private>>
      }
      %first = memref.load %src[%c0] : memref<4xf32, #gpu.address_space<private>>
      %sum = scf.for %i = %c1 to %c4 step %c1 iter_args(%acc = %first) -> (f32) {
        %v = memref.load %src[%i] : memref<4xf32, #gpu.address_space<private>>
        %s = arith.addf %acc, %v : f32
        scf.yield %s : f32
      }
      memref.store %sum, %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      %out = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %out, %B[%c0] : memref<1xf32>""",
    )
    a = nonzero(rng, 4)
    b = np.full(1, 7.0, np.float32)
    k.launch(1, 1, a, b)
    expected = ((a[0] + a[1]) + a[2]) + a[3]
    assert b[0] == expected
    np.testing.assert_allclose(b[0], a.astype(np.float64).sum(), rtol=1e-6)


BUTTERFLY = """
      %lane = gpu.lane_id
      %v0 = memref.load %A[%lane] : memref<32xf32>
      %w = arith.constant 32 : i32
      %o16 = arith.constant 16 : i32
      %o8 = arith.constant 8 : i32
      %o4 = arith.constant 4 : i32
      %o2 = arith.constant 2 : i32
      %o1 = arith.constant 1 : i32
      %s1, %k1 = gpu.shuffle xor %v0, %o16, %w : f32
      %v1 = arith.addf %v0, %s1 : f32
      %s2, %k2 = gpu.shuffle xor %v1, %o8, %w : f32
      %v2 = arith.addf %v1, %s2 : f32
      %s3, %k3 = gpu.shuffle xor %v2, %o4, %w : f32
      %v3 = arith.addf %v2, %s3 : f32
      %s4, %k4 = gpu.shuffle xor %v3, %o2, %w : f32
      %v4 = arith.addf %v3, %s4 : f32
      %s5, %k5 = gpu.shuffle xor %v4, %o1, %w : f32
      %v5 = arith.addf %v4, %s5 : f32
      memref.store %v5, %B[%lane] : memref<32xf32>"""


def test_xor_butterfly_sum_agrees_on_all_lanes(rng):
    k = kernel("%A: memref<32xf32>, %B: memref<32xf32>", BUTTERFLY)
    a = nonzero(rng, 32)
    b = np.zeros(32, np.float32)
    k.launch(1, 32, a, b)
    assert len(set(b.view(np.uint32).tolist())) == 1
    v = a.copy()
    for off in (16, 8, 4, 2, 1):
        v = v + v[np.arange(32) ^ off]
    np.testing.assert_array_equal(b, v)
    np.testing.assert_allclose(b[0], a.astype(np.float64).sum(), rtol=1e-5)


def test_butterfly_runs_per_warp(rng):
    k = kernel("%A: memref<32xf32>, %B: memref<32xf32>", BUTTERFLY)
    a = nonzero(rng, 32)
    b = np.zeros(32, np.float32)
    k.launch(1, (32, 2), a, b)  # two warps, both reading A by lane
    np.testing.assert_allclose(b, np.full(32, a.astype(np.float64).sum()), rtol=1e-5)


# ---------------------------------------------------------------------------------------
# gpu.shuffle modes, validity and width


def ptx_shuffle(values, mode, offset, width):
    """PTX shfl.sync as MLIR lowers gpu.shuffle (c = width - 1, or 32 - width for up)."""
    out, valid = [], []
    for lane in range(32):
        off = offset[lane] & 31
        j, ok = {
            "xor": (lane ^ off, (lane ^ off) <= width - 1),
            "down": (lane + off, lane + off <= width - 1),
            "up": (lane - off, lane - off >= 32 - width),
            "idx": (off, off <= width - 1),
        }[mode]
        out.append(values[j if ok else lane])
        valid.append(int(ok))
    return np.array(out, np.float32), np.array(valid, np.int32)


SHUFFLES = [  # (mode, offset MLIR, offset per lane, width)
    ("down", "%c3", [3] * 32, 32),
    ("up", "%c5", [5] * 32, 32),
    ("idx", "%c7", [7] * 32, 32),
    ("xor", "%c4", [4] * 32, 16),
    ("down", "%c3", [3] * 32, 16),
    ("idx", "%rev", [31 - lane for lane in range(32)], 32),
]


def test_shuffle_modes_and_valid(rng):
    lines = []
    for row, (mode, offset, _, width) in enumerate(SHUFFLES):
        lines.append(f"""
      %w{row} = arith.constant {width} : i32
      %r{row} = arith.constant {row} : index
      %v{row}, %ok{row} = gpu.shuffle {mode} %x, {offset}, %w{row} : f32
      %k{row} = arith.extui %ok{row} : i1 to i32
      memref.store %v{row}, %V[%r{row}, %lane] : memref<6x32xf32>
      memref.store %k{row}, %K[%r{row}, %lane] : memref<6x32xi32>""")
    k = kernel(
        "%A: memref<32xf32>, %V: memref<6x32xf32>, %K: memref<6x32xi32>",
        """
      %lane = gpu.lane_id
      %x = memref.load %A[%lane] : memref<32xf32>
      %c3 = arith.constant 3 : i32
      %c5 = arith.constant 5 : i32
      %c7 = arith.constant 7 : i32
      %c4 = arith.constant 4 : i32
      %c31 = arith.constant 31 : i32
      %lane32 = arith.index_cast %lane : index to i32
      %rev = arith.subi %c31, %lane32 : i32"""
        + "".join(lines),
    )
    a = nonzero(rng, 32)
    v = np.zeros((6, 32), np.float32)
    kk = np.full((6, 32), -1, np.int32)
    k.launch(1, 32, a, v, kk)
    for row, (mode, _, offsets, width) in enumerate(SHUFFLES):
        want_v, want_k = ptx_shuffle(a, mode, offsets, width)
        np.testing.assert_array_equal(v[row], want_v, err_msg=f"{mode} width {width}")
        np.testing.assert_array_equal(kk[row], want_k, err_msg=f"{mode} width {width}")
    assert kk[0].tolist() == [1] * 29 + [0] * 3  # down 3: the top lanes keep their value


def test_shuffle_in_a_diverged_warp_is_an_error(rng):
    k = kernel(
        "%A: memref<32xf32>",
        """
      %lane = gpu.lane_id
      %x = memref.load %A[%lane] : memref<32xf32>
      %c16 = arith.constant 16 : index
      %w = arith.constant 32 : i32
      %o = arith.constant 1 : i32
      %low = arith.cmpi ult, %lane, %c16 : index
      scf.if %low {
        %s, %ok = gpu.shuffle xor %x, %o, %w : f32
        memref.store %s, %A[%lane] : memref<32xf32>
      }""",
    )
    with pytest.raises(InterpreterError, match=r"gpu\.shuffle at .*16 of 32 lanes"):
        k.launch(1, 32, nonzero(rng, 32))


# ---------------------------------------------------------------------------------------
# Divergence


def test_divergent_if_stores_only_on_active_lanes(rng):
    k = kernel(
        "%A: memref<32xf32>, %B: memref<32xf32>, %C: memref<32xf32>, %D: memref<32xf32>",
        """
      %lane = gpu.thread_id x
      %v = memref.load %A[%lane] : memref<32xf32>
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %two = arith.constant 2.0 : f32
      %c2 = arith.constant 2 : index
      %c0 = arith.constant 0 : index
      %pos = arith.cmpf ogt, %v, %zero : f32
      scf.if %pos {
        %d = arith.mulf %v, %two : f32
        memref.store %d, %B[%lane] : memref<32xf32>
        %odd = arith.remui %lane, %c2 : index
        %is_odd = arith.cmpi ne, %odd, %c0 : index
        scf.if %is_odd {
          memref.store %v, %D[%lane] : memref<32xf32>
        }
      }
      %r = scf.if %pos -> (f32) {
        %x = arith.addf %v, %one : f32
        scf.yield %x : f32
      } else {
        %y = arith.negf %v : f32
        scf.yield %y : f32
      }
      memref.store %r, %C[%lane] : memref<32xf32>""",
    )
    a = nonzero(rng, 32)
    b, c, d = (nonzero(rng, 32) for _ in range(3))
    b0, d0 = b.copy(), d.copy()
    k.launch(1, 32, a, b, c, d)
    pos = a > 0
    odd = np.arange(32) % 2 == 1
    assert 0 < pos.sum() < 32
    np.testing.assert_array_equal(b, np.where(pos, a * np.float32(2), b0))
    np.testing.assert_array_equal(c, np.where(pos, a + np.float32(1), -a))
    np.testing.assert_array_equal(d, np.where(pos & odd, a, d0))


def test_guarded_load_ignores_inactive_out_of_bounds_lanes(rng):
    k = kernel(
        "%A: memref<4xf32>, %B: memref<32xf32>",
        """
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %in = arith.cmpi slt, %t, %c4 : index
      %v = scf.if %in -> (f32) {
        %x = memref.load %A[%t] : memref<4xf32>
        scf.yield %x : f32
      } else {
        %z = arith.constant -1.0 : f32
        scf.yield %z : f32
      }
      memref.store %v, %B[%t] : memref<32xf32>""",
    )
    a = nonzero(rng, 4)
    b = np.zeros(32, np.float32)
    k.launch(1, 32, a, b)
    np.testing.assert_array_equal(b, np.concatenate([a, np.full(28, -1.0, np.float32)]))


def test_out_of_bounds_names_op_location_and_thread(rng):
    k = kernel(
        "%A: memref<4xf32>, %B: memref<8xf32>",
        """
      %t = gpu.thread_id x
      %x = memref.load %A[%t] : memref<4xf32>
      memref.store %x, %B[%t] : memref<8xf32>""",
    )
    with pytest.raises(InterpreterError, match=r"memref\.load at -:7:\d+: index \[4\] .* thread \(4, 0, 0\)"):
        k.launch(1, 8, nonzero(rng, 4), np.zeros(8, np.float32))


def test_out_of_bounds_constant_index():
    k = kernel(
        "%A: memref<4x8xf32>",
        """
      %t = gpu.thread_id x
      %c9 = arith.constant 9 : index
      %x = memref.load %A[%t, %c9] : memref<4x8xf32>""",
    )
    with pytest.raises(InterpreterError, match=r"memref\.load at .*index \[0, 9\] is out of bounds for memref<4x8xf32>"):
        k.launch(1, 4, np.zeros(32, np.float32))


def test_loop_bounds_must_be_uniform():
    k = kernel(
        "%A: memref<32xf32>",
        """
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %t step %c1 {
        memref.store %one, %A[%i] : memref<32xf32>
      }""",
    )
    with pytest.raises(InterpreterError, match=r"scf\.for at .*upper bound differs"):
        k.launch(1, 32, np.zeros(32, np.float32))
    k.launch(1, 1, np.zeros(32, np.float32))  # one thread: uniform


# ---------------------------------------------------------------------------------------
# Floating-point types


CHAIN = """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<32x{T}>
      %b = memref.load %B[%t] : memref<32x{T}>
      %c = memref.load %C[%t] : memref<32x{T}>
      %d = memref.load %D[%t] : memref<32x{T}>
      %t1 = arith.mulf %a, %b : {T}
      %t2 = arith.addf %t1, %c : {T}
      %t3 = arith.divf %t2, %d : {T}
      %t4 = arith.subf %t3, %a : {T}
      %t5 = arith.mulf %t4, %t4 : {T}
      memref.store %t5, %O[%t] : memref<32x{T}>"""


def chain_kernel(t):
    args = ", ".join(f"%{n}: memref<32x{t}>" for n in "ABCDO")
    return kernel(args, CHAIN.replace("{T}", t))


def test_f16_rounds_after_every_op(rng):
    a, b, c, d, o = (nonzero(rng, 32, np.float16) for _ in range(5))
    chain_kernel("f16").launch(1, 32, a, b, c, d, o)
    t4 = (a * b + c) / d - a  # numpy float16: rounded after every op
    np.testing.assert_array_equal(o.view(np.uint16), (t4 * t4).view(np.uint16))
    f32 = [x.astype(np.float32) for x in (a, b, c, d)]
    once = (((f32[0] * f32[1] + f32[2]) / f32[3] - f32[0]) ** 2).astype(np.float16)
    assert np.any(once != o), "the inputs should tell per-op rounding from rounding once"


def test_bf16_rounds_after_every_op(rng):
    a, b, c, d = (bf16_round(nonzero(rng, 32, np.float64)) for _ in range(4))
    o = np.zeros(32, np.uint16)
    chain_kernel("bf16").launch(1, 32, *(bf16_bits(x) for x in (a, b, c, d)), o)
    t4 = bf16_round(bf16_round(bf16_round(bf16_round(a * b) + c) / d) - a)
    np.testing.assert_array_equal(bf16_values(o), bf16_round(t4 * t4))
    once = bf16_round(((a * b + c) / d - a) ** 2)
    assert np.any(once != bf16_values(o))


def test_bf16_conversions_round_to_nearest_even():
    k = kernel(
        "%A: memref<8xf32>, %B: memref<8xf64>, %X: memref<8xbf16>, %Y: memref<8xbf16>, %Z: memref<8xf32>",
        """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<8xf32>
      %x = arith.truncf %a : f32 to bf16
      memref.store %x, %X[%t] : memref<8xbf16>
      %b = memref.load %B[%t] : memref<8xf64>
      %y = arith.truncf %b : f64 to bf16
      memref.store %y, %Y[%t] : memref<8xbf16>
      %z = arith.extf %y : bf16 to f32
      memref.store %z, %Z[%t] : memref<8xf32>""",
    )
    a = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8 + 2**-20), np.nan, np.inf, 3.4e38, 2.0**-130, 1.0], np.float32)
    b = np.array([1 + 2**-8 + 2**-40, 1 + 2**-8, -(1 + 2**-9), 2.0**300, np.nan, 1e-50, 0.75, -3.0])
    x, y, z = np.zeros(8, np.uint16), np.zeros(8, np.uint16), np.zeros(8, np.float32)
    k.launch(1, 8, a, b, x, y, z)
    xv = bf16_values(x)
    assert xv[0] == 1.0 and xv[1] == 1 + 2**-6 and xv[2] == -(1 + 2**-7)  # ties to even; above a tie
    assert np.isnan(xv[3]) and xv[4] == np.inf and xv[5] == np.inf  # 3.4e38 overflows bf16
    assert xv[6] == bf16_round(np.float64(np.float32(2.0**-130)))  # subnormal
    yv = bf16_values(y)
    # f64 -> bf16 rounds once: 1 + 2^-8 + 2^-40 is above the tie (rounding via f32 would tie to 1.0)
    assert yv[0] == 1 + 2**-7 and yv[1] == 1.0 and yv[2] == -1.0
    assert yv[3] == np.inf and np.isnan(yv[4]) and yv[5] == 0.0 and yv[6] == 0.75 and yv[7] == -3.0
    np.testing.assert_array_equal(z, yv.astype(np.float32))


def test_max_min_and_nan(rng):
    ops = ["maxnumf", "minnumf", "maximumf", "minimumf"]
    body = """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<32xf32>
      %b = memref.load %B[%t] : memref<32xf32>"""
    for row, op in enumerate(ops):
        body += f"""
      %r{row} = arith.constant {row} : index
      %m{row} = arith.{op} %a, %b : f32
      memref.store %m{row}, %O[%r{row}, %t] : memref<4x32xf32>
      %n{row} = arith.{op} %b, %a : f32
      memref.store %n{row}, %P[%r{row}, %t] : memref<4x32xf32>"""
    k = kernel("%A: memref<32xf32>, %B: memref<32xf32>, %O: memref<4x32xf32>, %P: memref<4x32xf32>", body)
    a, b = nonzero(rng, 32), nonzero(rng, 32)
    a[0:8] = np.nan
    b[4:12] = np.nan
    a[12:14], b[12:14] = [-0.0, 0.0], [0.0, -0.0]
    o, p = np.zeros((4, 32), np.float32), np.zeros((4, 32), np.float32)
    k.launch(1, 32, a, b, o, p)
    expected = [np.fmax(a, b), np.fmin(a, b), np.maximum(a, b), np.minimum(a, b)]
    for row, op in enumerate(ops):
        np.testing.assert_array_equal(o[row], expected[row], err_msg=op)
        # commutative to the bit, signed zeros included: -0 < +0
        np.testing.assert_array_equal(o[row].view(np.uint32), p[row].view(np.uint32), err_msg=op)
        assert np.signbit(o[row][12:14]).tolist() == [op.startswith("min")] * 2, op
    assert np.isnan(o[0][4:8]).all() and not np.isnan(o[0][8:12]).any()  # maxnumf: NaN only if both
    assert np.isnan(o[2][0:12]).all()  # maximumf propagates


@pytest.mark.parametrize("t, bits", [("f32", np.uint32), ("f16", np.uint16), ("f64", np.uint64)])
def test_arithmetic_nan_is_canonical(t, bits):
    """NaN results carry the GPU's canonical NaN, whatever the operand order or payload."""
    k = kernel(
        f"%A: memref<4x{t}>, %B: memref<4x{t}>, %O: memref<2x4x{t}>",
        f"""
      %i = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %a = memref.load %A[%i] : memref<4x{t}>
      %b = memref.load %B[%i] : memref<4x{t}>
      %s = arith.addf %a, %b : {t}
      memref.store %s, %O[%c0, %i] : memref<2x4x{t}>
      %m = arith.maximumf %a, %b : {t}
      memref.store %m, %O[%c1, %i] : memref<2x4x{t}>""",
    )
    dtype = np.dtype(t.replace("f", "float"))
    a = np.array([np.inf, -np.inf, np.nan, 1.0], dtype)
    b = np.array([-np.inf, np.inf, 1.0, np.nan], dtype)
    a[2] = -a[2]  # a negative NaN
    o = np.zeros((2, 4), dtype)
    k.launch(1, 4, a, b, o)
    canonical = np.iinfo(bits).max >> 1  # positive, all payload bits set
    assert o[0].view(bits).tolist() == [canonical] * 4  # inf - inf and NaN + x
    assert o[1].view(bits).tolist()[2:] == [canonical] * 2 and (o[1][:2] == np.inf).all()


def test_cmpf_predicates_with_nan():
    preds = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
             "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]  # fmt: skip
    body = """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<16xf32>
      %b = memref.load %B[%t] : memref<16xf32>"""
    for row, p in enumerate(preds):
        body += f"""
      %r{row} = arith.constant {row} : index
      %c{row} = arith.cmpf {p}, %a, %b : f32
      memref.store %c{row}, %O[%r{row}, %t] : memref<16x16xi1>"""
    k = kernel("%A: memref<16xf32>, %B: memref<16xf32>, %O: memref<16x16xi1>", body)
    values = np.array([1.0, 2.0, np.nan, -1.0], np.float32)
    a, b = np.repeat(values, 4), np.tile(values, 4)  # all 16 pairs
    o = np.zeros((16, 16), bool)
    k.launch(1, 16, a, b, o)
    unordered = np.isnan(a) | np.isnan(b)
    ordered = {
        "eq": a == b, "gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b,
        "ne": ~unordered & (a != b), "rd": ~unordered,
    }  # fmt: skip
    for row, p in enumerate(preds):
        if p in ("false", "true"):
            want = np.full(16, p == "true")
        elif p == "uno":
            want = unordered
        elif p == "une":
            want = unordered | (a != b)
        elif p[0] == "o":
            want = ordered[p[1:]]
        else:
            want = unordered | ordered[p[1:]]
        np.testing.assert_array_equal(o[row], want, err_msg=p)


# ---------------------------------------------------------------------------------------
# Integers and casts


def test_i32_sum_wraps(rng):
    k = kernel(
        "%A: memref<16xi32>, %B: memref<2xi32>",
        """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %z = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %s, %p = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %z, %prod = %one) -> (i32, i32) {
        %v = memref.load %A[%i] : memref<16xi32>
        %n = arith.addi %acc, %v : i32
        %m = arith.muli %prod, %v : i32
        scf.yield %n, %m : i32, i32
      }
      memref.store %s, %B[%c0] : memref<2xi32>
      memref.store %p, %B[%c1] : memref<2xi32>""",
    )
    a = rng.integers(2**30, 2**31 - 1, 16, dtype=np.int32)
    b = np.zeros(2, np.int32)
    k.launch(1, 1, a, b)
    total = int(a.astype(np.int64).sum())
    product = 1
    for x in a.tolist():
        product = product * x % 2**32
    wrap = lambda v: (v + 2**31) % 2**32 - 2**31  # noqa: E731
    assert b.tolist() == [wrap(total), wrap(product)]


INT_OPS = ["addi", "subi", "muli", "divsi", "remsi", "divui", "remui", "floordivsi", "andi", "ori", "xori",
           "maxsi", "minsi", "maxui", "minui", "shli", "shrui", "shrsi"]  # fmt: skip


def int_reference(op, a, b):
    """Integer op semantics on Python ints (i32), wrapping the result."""
    u = lambda v: v % 2**32  # noqa: E731
    s = lambda v: (v + 2**31) % 2**32 - 2**31  # noqa: E731
    trunc_div = lambda x, y: abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # noqa: E731
    return s({
        "addi": a + b, "subi": a - b, "muli": a * b,
        "divsi": trunc_div(a, b), "remsi": a - b * trunc_div(a, b), "floordivsi": a // b,
        "divui": u(a) // u(b), "remui": u(a) % u(b),
        "andi": a & b, "ori": a | b, "xori": a ^ b,
        "maxsi": max(a, b), "minsi": min(a, b), "maxui": max(u(a), u(b)), "minui": min(u(a), u(b)),
        "shli": a << (b % 32), "shrui": u(a) >> (b % 32), "shrsi": a >> (b % 32),
    }[op])  # fmt: skip


def test_integer_ops(rng):
    body = """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<32xi32>
      %b = memref.load %B[%t] : memref<32xi32>
      %c31 = arith.constant 31 : i32
      %sh = arith.andi %b, %c31 : i32"""
    for row, op in enumerate(INT_OPS):
        rhs = "%sh" if op.startswith("sh") else "%b"
        body += f"""
      %r{row} = arith.constant {row} : index
      %v{row} = arith.{op} %a, {rhs} : i32
      memref.store %v{row}, %O[%r{row}, %t] : memref<{len(INT_OPS)}x32xi32>"""
    k = kernel(f"%A: memref<32xi32>, %B: memref<32xi32>, %O: memref<{len(INT_OPS)}x32xi32>", body)
    a = rng.integers(-(2**31), 2**31, 32, dtype=np.int64).astype(np.int32)
    b = rng.integers(-1000, 1000, 32, dtype=np.int64).astype(np.int32)
    b[b == 0] = 7
    a[:4], b[:4] = [-7, 7, -7, -(2**31)], [2, -2, -2, -1]
    o = np.zeros((len(INT_OPS), 32), np.int32)
    k.launch(1, 32, a, b, o)
    for row, op in enumerate(INT_OPS):
        want = [int_reference(op, x, y) for x, y in zip(a.tolist(), b.tolist())]
        assert o[row].tolist() == want, op


def test_cmpi_predicates():
    preds = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
    body = """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<9xi32>
      %b = memref.load %B[%t] : memref<9xi32>"""
    for row, p in enumerate(preds):
        body += f"""
      %r{row} = arith.constant {row} : index
      %c{row} = arith.cmpi {p}, %a, %b : i32
      memref.store %c{row}, %O[%r{row}, %t] : memref<10x9xi1>"""
    k = kernel("%A: memref<9xi32>, %B: memref<9xi32>, %O: memref<10x9xi1>", body)
    values = np.array([-5, 3, 2**31 - 1], np.int32)
    a, b = np.repeat(values, 3), np.tile(values, 3)
    o = np.zeros((10, 9), bool)
    k.launch(1, 9, a, b, o)
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    want = [a == b, a != b, a < b, a <= b, a > b, a >= b, ua < ub, ua <= ub, ua > ub, ua >= ub]
    for row, p in enumerate(preds):
        np.testing.assert_array_equal(o[row], want[row], err_msg=p)


def test_casts():
    k = kernel(
        "%A: memref<8xf32>, %I: memref<8xi32>, %S: memref<8xi32>, %U: memref<8xi32>, "
        "%F: memref<8xf32>, %G: memref<8xf32>, %E: memref<8xi64>, %T: memref<8xi16>",
        """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<8xf32>
      %s = arith.fptosi %a : f32 to i32
      memref.store %s, %S[%t] : memref<8xi32>
      %u = arith.fptoui %a : f32 to i32
      memref.store %u, %U[%t] : memref<8xi32>
      %i = memref.load %I[%t] : memref<8xi32>
      %f = arith.sitofp %i : i32 to f32
      memref.store %f, %F[%t] : memref<8xf32>
      %g = arith.uitofp %i : i32 to f32
      memref.store %g, %G[%t] : memref<8xf32>
      %zero = arith.constant 0 : i32
      %neg = arith.cmpi slt, %i, %zero : i32
      %e = arith.extsi %neg : i1 to i64
      %x = arith.index_castui %i : i32 to index
      %xi = arith.index_cast %x : index to i64
      %sum = arith.addi %e, %xi : i64
      memref.store %sum, %E[%t] : memref<8xi64>
      %tr = arith.trunci %i : i32 to i16
      memref.store %tr, %T[%t] : memref<8xi16>""",
    )
    a = np.array([1.9, -1.9, np.nan, 3e9, -3e9, 2.5e9, -0.5, 100.25], np.float32)
    i = np.array([-1, 1, 2**31 - 1, -(2**31), 16777217, -70000, 65537, 5], np.int32)
    s, u, e, t = (np.zeros(8, dt) for dt in (np.int32, np.int32, np.int64, np.int16))
    f, g = np.zeros(8, np.float32), np.zeros(8, np.float32)
    k.launch(1, 8, a, i, s, u, f, g, e, t)
    assert s.tolist() == [1, -1, 0, 2**31 - 1, -(2**31), 2**31 - 1, 0, 100]  # saturating, NaN -> 0
    assert u.view(np.uint32).tolist() == [1, 0, 0, 3000000000, 0, 2500000000, 0, 100]
    np.testing.assert_array_equal(f, i.astype(np.float32))
    np.testing.assert_array_equal(g, i.view(np.uint32).astype(np.float32))
    assert e.tolist() == [int(x) % 2**32 - (x < 0) for x in i.tolist()]
    np.testing.assert_array_equal(t, i.astype(np.int16))


def test_bitcast_f64_to_i32_halves_and_back(rng):
    k = kernel(
        "%A: memref<16xf64>, %H: memref<32xi32>, %B: memref<16xf64>",
        """
      %t = gpu.thread_id x
      %c2 = arith.constant 2 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : i64
      %a = memref.load %A[%t] : memref<16xf64>
      %bits = arith.bitcast %a : f64 to i64
      %lo = arith.trunci %bits : i64 to i32
      %shifted = arith.shrui %bits, %c32 : i64
      %hi = arith.trunci %shifted : i64 to i32
      %i0 = arith.muli %t, %c2 : index
      %i1 = arith.addi %i0, %c1 : index
      memref.store %lo, %H[%i0] : memref<32xi32>
      memref.store %hi, %H[%i1] : memref<32xi32>
      %lo64 = arith.extui %lo : i32 to i64
      %hi64 = arith.extui %hi : i32 to i64
      %up = arith.shli %hi64, %c32 : i64
      %joined = arith.ori %up, %lo64 : i64
      %back = arith.bitcast %joined : i64 to f64
      memref.store %back, %B[%t] : memref<16xf64>""",
    )
    a = nonzero(rng, 16, np.float64, 1e-300, 1e300)
    h, b = np.zeros(32, np.int32), np.zeros(16, np.float64)
    k.launch(1, 16, a, h, b)
    np.testing.assert_array_equal(h, a.view(np.int32))  # little-endian: lo, hi
    np.testing.assert_array_equal(b.view(np.uint64), a.view(np.uint64))


def test_bitcast_bf16_and_f16_to_i16():
    k = kernel(
        "%A: memref<4xbf16>, %B: memref<4xf16>, %X: memref<4xi16>, %Y: memref<4xi16>, %Z: memref<4xbf16>",
        """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<4xbf16>
      %x = arith.bitcast %a : bf16 to i16
      memref.store %x, %X[%t] : memref<4xi16>
      %b = memref.load %B[%t] : memref<4xf16>
      %y = arith.bitcast %b : f16 to i16
      memref.store %y, %Y[%t] : memref<4xi16>
      %z = arith.bitcast %y : i16 to bf16
      memref.store %z, %Z[%t] : memref<4xbf16>""",
    )
    a = np.array([0x3F80, 0xBFC0, 0x7FC0, 0x0001], np.uint16)
    b = np.array([1.5, -2.0, 65504.0, 6e-8], np.float16)
    x, y, z = np.zeros(4, np.int16), np.zeros(4, np.int16), np.zeros(4, np.uint16)
    k.launch(1, 4, a, b, x, y, z)
    np.testing.assert_array_equal(x, a.view(np.int16))
    np.testing.assert_array_equal(y, b.view(np.int16))
    np.testing.assert_array_equal(z, b.view(np.uint16))


# ---------------------------------------------------------------------------------------
# Memory, blocks, arguments


def test_private_memory_is_per_thread(rng):
    k = kernel(
        "%A: memref<64xf32>, %B: memref<64xf32>",
        """
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %r = memref.alloca() : memref<2xf32, #gpu.address_space<private>>
      %i = arith.remui %t, %c2 : index
      %a = memref.load %A[%t] : memref<64xf32>
      memref.store %a, %r[%i] : memref<2xf32, #gpu.address_space<private>>
      %j = arith.subi %c1, %i : index
      %three = arith.constant 3.0 : f32
      memref.store %three, %r[%j] : memref<2xf32, #gpu.address_space<private>>
      %x = memref.load %r[%c0] : memref<2xf32, #gpu.address_space<private>>
      %y = memref.load %r[%c1] : memref<2xf32, #gpu.address_space<private>>
      %s = arith.subf %x, %y : f32
      memref.store %s, %B[%t] : memref<64xf32>""",
    )
    a = nonzero(rng, 64)
    b = np.zeros(64, np.float32)
    k.launch(1, 64, a, b)
    even = np.arange(64) % 2 == 0
    np.testing.assert_array_equal(b, np.where(even, a - np.float32(3), np.float32(3) - a))


SHARED_EXCHANGE = """
      %t = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %a = memref.load %A[%t] : memref<64xf32>
      memref.store %a, %S[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %u = arith.addi %t, %c32 : index
      %o = arith.remui %u, %c64 : index
      %x = memref.load %S[%o] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %B[%t] : memref<64xf32>"""


@pytest.mark.parametrize("how", ["alloc", "attribution"])
def test_workgroup_memory_across_two_warps(rng, how):
    args = "%A: memref<64xf32>, %B: memref<64xf32>"
    if how == "alloc":
        alloc = "\n      %S = memref.alloc() : memref<64xf32, #gpu.address_space<workgroup>>"
        k = kernel(args, alloc + SHARED_EXCHANGE)
    else:
        k = kernel(args, SHARED_EXCHANGE, "workgroup(%S : memref<64xf32, #gpu.address_space<workgroup>>)")
    a = nonzero(rng, 64)
    b = np.zeros(64, np.float32)
    k.launch(1, 64, a, b)
    np.testing.assert_array_equal(b, np.roll(a, -32))


def test_barrier_in_divergent_code_is_an_error(rng):
    k = kernel(
        "%A: memref<64xf32>",
        """
      %t = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %low = arith.cmpi ult, %t, %c32 : index
      scf.if %low {
        gpu.barrier
      }""",
    )
    with pytest.raises(InterpreterError, match=r"gpu\.barrier at .*reached by 32 of 64 threads"):
        k.launch(1, 64, nonzero(rng, 64))


def test_blocks_write_block_indexed_outputs(rng):
    k = kernel(
        "%A: memref<48xf32>, %B: memref<48xf32>",
        """
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %dx = gpu.block_dim x
      %dy = gpu.block_dim y
      %gx = gpu.grid_dim x
      %row = arith.muli %ty, %dx : index
      %tid = arith.addi %row, %tx : index
      %brow = arith.muli %by, %gx : index
      %bid = arith.addi %brow, %bx : index
      %per_block = arith.muli %dx, %dy : index
      %base = arith.muli %bid, %per_block : index
      %i = arith.addi %base, %tid : index
      %a = memref.load %A[%i] : memref<48xf32>
      %b1 = arith.index_cast %bid : index to i32
      %bf = arith.sitofp %b1 : i32 to f32
      %one = arith.constant 1.0 : f32
      %scale = arith.addf %bf, %one : f32
      %v = arith.mulf %a, %scale : f32
      memref.store %v, %B[%i] : memref<48xf32>""",
    )
    a = nonzero(rng, 48)
    b = np.zeros(48, np.float32)
    k.launch((3, 2), (4, 2), a, b)
    np.testing.assert_array_equal(b, a * np.repeat(np.arange(1, 7, dtype=np.float32), 8))


def test_arguments_keep_their_shape_and_scalars_pass_by_value(rng):
    k = kernel(
        "%A: memref<4x8xf32>, %n: i32, %s: f32",
        """
      %t = gpu.thread_id x
      %c8 = arith.constant 8 : index
      %r = arith.divui %t, %c8 : index
      %c = arith.remui %t, %c8 : index
      %a = memref.load %A[%r, %c] : memref<4x8xf32>
      %n1 = arith.sitofp %n : i32 to f32
      %x = arith.mulf %a, %n1 : f32
      %y = arith.addf %x, %s : f32
      memref.store %y, %A[%r, %c] : memref<4x8xf32>""",
    )
    a = nonzero(rng, 32).reshape(4, 8)
    for arg in (a.copy(), np.asfortranarray(a), a.reshape(-1).copy()):
        k.launch(1, 32, arg, 3, 0.5)
        np.testing.assert_array_equal(arg.reshape(4, 8), a * np.float32(3) + np.float32(0.5))


def test_launch_errors():
    k = kernel("%A: memref<4x8xf32>, %n: i32", "")
    with pytest.raises(LaunchError, match="shape"):
        k.launch(1, 1, np.zeros((8, 4), np.float32), 1)
    with pytest.raises(LaunchError, match="shape"):
        k.launch(1, 1, np.zeros(31, np.float32), 1)
    with pytest.raises(LaunchError, match="dtype"):
        k.launch(1, 1, np.zeros(32, np.float64), 1)
    with pytest.raises(LaunchError, match="takes 2"):
        k.launch(1, 1, np.zeros(32, np.float32))
    with pytest.raises(LaunchError):
        k.launch(1, 1, np.zeros(32, np.float32), 1.5)
    with pytest.raises(LaunchError):
        k.launch(1, 1, np.zeros(32, np.float32), 2**40)
    with pytest.raises(LaunchError):
        k.launch(1, (0,), np.zeros(32, np.float32), 1)
    with pytest.raises(LaunchError):
        k.launch(1, (64, 32), np.zeros(32, np.float32), 1)


def test_signature_must_match_the_function():
    text = module("%A: memref<4xf32>", "")
    with pytest.raises(InterpreterError, match="argument 0"):
        InterpretedKernel(text, "f", KernelSignature("f", (ArgSpec("memref", "float32", (8,)),)))
    with pytest.raises(InterpreterError, match="no gpu.func @g"):
        InterpretedKernel(text, "g", KernelSignature("g", ()))


def test_unsupported_ops_are_all_reported_when_the_kernel_is_built():
    body = """
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%c0] : memref<4xf32>
      gpu.printf "a = %f", %a : f32
      %s = gpu.subgroup_reduce add %a : (f32) -> (f32)
      memref.store %s, %A[%c0] : memref<4xf32>"""
    with pytest.raises(InterpreterError) as e:
        kernel("%A: memref<4xf32>", body)  # building it fails: nothing has run
    lines = str(e.value).splitlines()
    assert lines[0] == "the interpreter cannot run 2 op(s) of this module:"
    assert re.fullmatch(r"\s*gpu\.printf at -:8:7: the interpreter does not support this op", lines[1])
    assert re.fullmatch(r"\s*gpu\.subgroup_reduce at -:9:12: .*not support.*", lines[2])


USER_KERNEL = """module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @demo(%A: memref<4xf32>, %B: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %A_local = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
      %B_local = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%B_local, %A_local) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>, accum = false}
        : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %B_local[%c0] : memref<1xf32, #gpu.address_space<private>>
      gpu.printf "b = %f", %b : f32 LOC
      memref.store %b, %B[%c0] : memref<1xf32>
      gpu.return
    }
  }
}
"""


@pytest.mark.parametrize(
    "loc, where",
    [("", "<source>:10:7"), ('loc("softmax.mlir":42:9)', "softmax.mlir:42:9"),
     ('loc("step"("kernels/softmax.mlir":7:3))', "kernels/softmax.mlir:7:3 (step)"),
     ('loc(fused[unknown, "a.mlir":5:1])', "a.mlir:5:1")],
)  # fmt: skip
def test_compile_reports_an_unsupported_op_at_the_users_location(loc, where):
    """compile(..., backend="interpreter") fails, before any launch, at the line the
    user wrote (after tile-lower-reduction has rewritten the lines above it)."""
    import tile_mlir

    with pytest.raises(InterpreterError, match=r"\n\s*gpu\.printf at " + re.escape(where) + r": .*not support"):
        tile_mlir.compile(USER_KERNEL.replace("LOC", loc), backend="interpreter", cache=False)


def test_interpreted_kernels_share_one_parse(rng):
    text = f"""
module attributes {{gpu.container_module}} {{
  gpu.module @k {{
    gpu.func @double(%A: memref<8xf32>) kernel {{
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<8xf32>
      %b = arith.addf %a, %a : f32
      memref.store %b, %A[%t] : memref<8xf32>
      gpu.return
    }}
    gpu.func @negate(%A: memref<8xf32>) kernel {{
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<8xf32>
      %b = arith.negf %a : f32
      memref.store %b, %A[%t] : memref<8xf32>
      gpu.return
    }}
  }}
}}"""
    sigs = [signature(n, "%A: memref<8xf32>") for n in ("double", "negate")]
    kernels = interpreted_kernels(text, sigs)
    assert sorted(kernels) == ["double", "negate"] and kernels["negate"].name == "negate"
    a = nonzero(rng, 8)
    x = a.copy()
    kernels["double"].launch(1, 8, x)
    kernels["negate"].launch(1, 8, x)
    np.testing.assert_array_equal(x, -(a + a))


def test_uniform_and_per_thread_values_mix(rng):
    k = kernel(
        "%A: memref<32xf32>, %B: memref<32xf32>, %C: memref<1xf32>",
        """
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %a0 = memref.load %A[%c0] : memref<32xf32>
      %a1 = memref.load %A[%c1] : memref<32xf32>
      %u = arith.mulf %a0, %a1 : f32
      %big = arith.cmpf ogt, %a0, %a1 : f32
      %m = arith.select %big, %a0, %a1 : f32
      %x = memref.load %A[%t] : memref<32xf32>
      %low = arith.cmpi ult, %t, %c5 : index
      %y = arith.select %low, %u, %x : f32
      %w = arith.constant 32 : i32
      %o = arith.constant 3 : i32
      %s, %ok = gpu.shuffle xor %m, %o, %w : f32
      %r = scf.if %big -> (f32) {
        %p = arith.addf %y, %s : f32
        scf.yield %p : f32
      } else {
        %q = arith.subf %y, %s : f32
        scf.yield %q : f32
      }
      %reg = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      memref.store %u, %reg[%c0] : memref<1xf32, #gpu.address_space<private>>
      %back = memref.load %reg[%c0] : memref<1xf32, #gpu.address_space<private>>
      %z = arith.addf %r, %back : f32
      memref.store %z, %B[%t] : memref<32xf32>
      memref.store %x, %C[%c0] : memref<1xf32>""",
    )
    a = nonzero(rng, 32)
    b, c = np.zeros(32, np.float32), np.zeros(1, np.float32)
    k.launch(1, 32, a, b, c)
    u, m = a[0] * a[1], max(a[0], a[1])
    y = np.where(np.arange(32) < 5, u, a)
    r = y + m if a[0] > a[1] else y - m
    np.testing.assert_array_equal(b, r + u)
    assert c[0] == a[31]  # threads storing to one address: the last one wins


def test_i1_arithmetic():
    ops = ["addi", "muli", "maxsi", "minsi", "maxui", "andi", "xori"]
    body = """
      %t = gpu.thread_id x
      %c2 = arith.constant 2 : index
      %c1 = arith.constant 1 : index
      %tb = arith.index_cast %t : index to i32
      %p = arith.trunci %tb : i32 to i1
      %t2 = arith.divui %t, %c2 : index
      %t2b = arith.index_cast %t2 : index to i32
      %q = arith.trunci %t2b : i32 to i1
      %slt = arith.cmpi slt, %p, %q : i1
      %sx = arith.extsi %slt : i1 to i32
      %e = arith.extsi %p : i1 to i32
      %f = arith.sitofp %p : i1 to f32
      memref.store %sx, %S[%t] : memref<4xi32>
      memref.store %e, %E[%t] : memref<4xi32>
      memref.store %f, %F[%t] : memref<4xf32>"""
    for row, op in enumerate(ops):
        body += f"""
      %r{row} = arith.constant {row} : index
      %v{row} = arith.{op} %p, %q : i1
      memref.store %v{row}, %O[%r{row}, %t] : memref<{len(ops)}x4xi1>"""
    k = kernel(f"%O: memref<{len(ops)}x4xi1>, %S: memref<4xi32>, %E: memref<4xi32>, %F: memref<4xf32>", body)
    o = np.zeros((len(ops), 4), bool)
    s, e, f = np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.float32)
    k.launch(1, 4, o, s, e, f)
    p, q = np.array([0, 1, 0, 1], bool), np.array([0, 0, 1, 1], bool)
    sp, sq = -p.astype(int), -q.astype(int)  # signed i1: true is -1
    want = [p ^ q, p & q, np.maximum(sp, sq) != 0, np.minimum(sp, sq) != 0, p | q, p & q, p ^ q]
    for row, op in enumerate(ops):
        np.testing.assert_array_equal(o[row], want[row], err_msg=op)
    np.testing.assert_array_equal(s, -(sp < sq).astype(np.int32))
    np.testing.assert_array_equal(e, sp)
    np.testing.assert_array_equal(f, sp.astype(np.float32))


def test_i32_and_unsigned_loops():
    k = kernel(
        "%B: memref<2xi32>",
        """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %lo = arith.constant 3 : i32
      %hi = arith.constant 11 : i32
      %st = arith.constant 2 : i32
      %z = arith.constant 0 : i32
      %s = scf.for %i = %lo to %hi step %st iter_args(%acc = %z) -> (i32) : i32 {
        %n = arith.addi %acc, %i : i32
        scf.yield %n : i32
      }
      memref.store %s, %B[%c0] : memref<2xi32>
      %ulo = arith.constant 2147483646 : i32
      %uhi = arith.constant -2147483646 : i32
      %one = arith.constant 1 : i32
      %n = scf.for unsigned %i = %ulo to %uhi step %one iter_args(%cnt = %z) -> (i32) : i32 {
        %m = arith.addi %cnt, %one : i32
        scf.yield %m : i32
      }
      memref.store %n, %B[%c1] : memref<2xi32>""",
    )
    b = np.zeros(2, np.int32)
    k.launch(1, 1, b)
    assert b.tolist() == [3 + 5 + 7 + 9, 4]  # unsigned: 2^31-2 .. 2^31+2


def test_shuffle_reading_past_a_partial_warp_is_an_error(rng):
    body = """
      %t = gpu.thread_id x
      %x = memref.load %A[%t] : memref<48xf32>
      %w = arith.constant 32 : i32
      %o = arith.constant OFFSET : i32
      %s, %ok = gpu.shuffle xor %x, %o, %w : f32
      memref.store %s, %A[%t] : memref<48xf32>"""
    a = nonzero(rng, 48)
    x = a.copy()
    kernel("%A: memref<48xf32>", body.replace("OFFSET", "8")).launch(1, 48, x)
    np.testing.assert_array_equal(x, a[np.arange(48) ^ 8])
    with pytest.raises(InterpreterError, match=r"thread \(32, 0, 0\) .* reads lane 16, which the block of 48"):
        kernel("%A: memref<48xf32>", body.replace("OFFSET", "16")).launch(1, 48, a.copy())


def test_read_only_inputs():
    k = kernel(
        "%A: memref<8xf32>, %B: memref<8xf32>",
        """
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<8xf32>
      memref.store %a, %B[%t] : memref<8xf32>""",
    )
    b = np.zeros(8, np.float32)
    k.launch(1, 8, np.broadcast_to(np.float32(2.5), (8,)), b)
    np.testing.assert_array_equal(b, np.full(8, 2.5, np.float32))
    a = np.arange(8, dtype=np.float32)
    a.flags.writeable = False  # contiguous and read-only: read where it is
    k.launch(1, 8, a, b)
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("store", ["memref.store %a, %B[%t] : memref<8xf32>",
                                   "vector.store %v, %B[%c0] : memref<8xf32>, vector<4xf32>"])  # fmt: skip
def test_writing_a_read_only_array_is_a_launch_error(contiguous, store):
    """A read-only array is an input: a kernel that stores to it fails, naming the
    argument and the store, and the array is left as it was."""
    k = kernel(
        "%A: memref<8xf32>, %B: memref<8xf32>",
        f"""
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %a = memref.load %A[%t] : memref<8xf32>
      %v = vector.load %A[%c0] : memref<8xf32>, vector<4xf32>
      {store}""",
    )
    b = np.arange(8, dtype=np.float32) if contiguous else np.arange(16, dtype=np.float32)[::2]
    b.flags.writeable = False
    before = b.copy()
    op = store.split()[0].replace(".", r"\.")
    with pytest.raises(LaunchError, match=rf"kernel f: argument 1 \(float32\[8\]\) is a read-only array, and {op} at -:\d+:\d+ writes it"):
        k.launch(1, 8, np.ones(8, np.float32), b)
    np.testing.assert_array_equal(b, before)


# --- vector.load / vector.store ---------------------------------------------------------

VECTOR_KERNEL = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @vec(%A: memref<32x8xf32>, %B: memref<32xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %reg = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      %lo = vector.load %A[%t, %c0] : memref<32x8xf32>, vector<4xf32>
      %hi = vector.load %A[%t, %c4] : memref<32x8xf32>, vector<4xf32>
      vector.store %hi, %reg[%c0] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
      vector.store %lo, %reg[%c4] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
      %x0 = memref.load %reg[%c0] : memref<8xf32, #gpu.address_space<private>>
      %x4 = memref.load %reg[%c4] : memref<8xf32, #gpu.address_space<private>>
      %s = arith.subf %x0, %x4 : f32
      memref.store %s, %B[%t] : memref<32xf32>
      gpu.return
    }
  }
}
"""


def test_vector_load_and_store_move_four_elements():
    sig = KernelSignature("vec", (ArgSpec("memref", "float32", (32, 8)), ArgSpec("memref", "float32", (32,))))
    a = np.random.default_rng(11).uniform(0.5, 1.5, (32, 8)).astype(np.float32)
    b = np.full(32, np.nan, np.float32)
    InterpretedKernel(VECTOR_KERNEL, "vec", sig).launch(1, 32, a, b)
    np.testing.assert_array_equal(b, a[:, 4] - a[:, 0])  # hi (a[4]) went to reg[0], lo (a[0]) to reg[4]


def test_vector_load_past_the_last_dim_is_an_error():
    text = VECTOR_KERNEL.replace("%c4 = arith.constant 4 : index", "%c4 = arith.constant 5 : index")
    sig = KernelSignature("vec", (ArgSpec("memref", "float32", (32, 8)), ArgSpec("memref", "float32", (32,))))
    a, b = np.ones((32, 8), np.float32), np.zeros(32, np.float32)
    with pytest.raises(InterpreterError, match=r"vector\.load .*overruns memref<32x8xf32>: its element 3 is at index \[0, 8\] in thread \(0, 0, 0\)"):
        InterpretedKernel(text, "vec", sig).launch(1, 32, a, b)
