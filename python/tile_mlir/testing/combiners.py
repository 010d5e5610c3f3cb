"""The combiners the combiner conformance cases use: each one's MLIR function, the same
combine in numpy (bit for bit, as the GPU and the interpreter compute it), what its
src operands hold for a logical input, and what its result means.

A combiner reduces k operands; a *partial* is a tuple of k numpy scalars of the operand
types. ``TestCombiner.combine(left, right)`` is the function's body, op by op in the
same order and precision: numpy's float32 ``+ - * /`` are IEEE operations rounded to
nearest, as PTX's ``add.rn``/``mul.rn``/``div.rn``; ``math.exp`` is the interpreter's
(the C library's, rounded once to f32), within ``GPU_EXP_ULPS`` of the GPU's.

* ``first``, ``last``: (value, coordinate); keep the left (the right) pair: the element
  of the lowest (highest) coordinate. Not commutative.
* ``online_softmax``: (running max m, sum of exp(x - m)) in f32.
* ``welford``, ``welford_f32``: (count, mean, M2), count i32 (f32), Chan's update.
* ``mixed``: (f16 sum added in f32, i32 maximum): extf, truncf, cmpi, select.
* ``matrix``: a 2x2 f32 matrix (a, b, c, d) = [[a, b], [c, d]], the product left times
  right: associative, not commutative (the inputs are rotations with a shear);
  ``matrix_i32`` (in ``MORE_COMBINERS``, the random suite's): the same in i32, wrapping,
  so exact in any grouping.

``COMBINERS`` maps a name to its ``TestCombiner``. Pure numpy: it runs on the GPU machine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

# The most ulps between the GPU's f32 math.exp (__nv_expf) and the interpreter's
# (docs/interpreter.md): a combiner with exp matches the model only within a tolerance there.
GPU_EXP_ULPS = 2

_NP = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32, "i64": np.int64}


@dataclass(frozen=True)
class TestCombiner:
    """One combiner (module docstring)."""

    name: str
    types: tuple[str, ...]  # the operand element types, in order
    body: str  # the MLIR function's body, its arguments %l0.. %r0.., ending in return
    combine: Callable[[tuple, tuple], tuple]
    sources: Callable[[np.ndarray, np.ndarray], list[np.ndarray]]  # (x, coordinate) -> src operands
    uses_math: bool = False  # its result on the GPU is the model's within GPU_EXP_ULPS per exp
    meaning_source: int | None = 0  # which src operand ``meaning`` reads (None: the logical x)

    def function_text(self, name: str) -> str:
        """The ``func.func private @<name>`` of the combiner."""
        args = [f"%l{j}: {t}" for j, t in enumerate(self.types)] + [f"%r{j}: {t}" for j, t in enumerate(self.types)]
        lines = [f"func.func private @{name}({', '.join(args)}) -> ({', '.join(self.types)}) {{"]
        lines += ["  " + line for line in self.body.strip().splitlines()]
        return "\n".join(lines + ["}"])


def _pair(dtype: str, keep: str) -> TestCombiner:
    t = _NP[dtype]
    side = "l" if keep == "first" else "r"
    return TestCombiner(
        keep if dtype == "f32" else f"{keep}_{dtype}", (dtype, "i32"),
        f"return %{side}0, %{side}1 : {dtype}, i32",
        (lambda left, right: left) if keep == "first" else (lambda left, right: right),
        lambda x, coord: [_values(x, t), np.asarray(coord, np.int32)],
    )


def _values(x, t):
    """``x`` (in [-1, 1]) as values of the numpy type ``t``: integers scaled to 2^40 (so
    that a 64-bit value's high word matters)."""
    x = np.asarray(x)
    return np.round(x * 2.0**40).astype(t) if np.issubdtype(t, np.integer) else x.astype(t)


def _exp32(d: np.float32) -> np.float32:
    """The interpreter's f32 math.exp: the C library's exp, rounded once to f32."""
    d = float(d)
    if math.isnan(d):
        return np.float32(np.nan)
    try:
        return np.float32(math.exp(d))
    except OverflowError:
        return np.float32(np.inf)


def _softmax(left, right):
    (lm, ls), (rm, rs) = left, right
    m = np.fmax(lm, rm)  # arith.maxnumf (no zeros or NaN among the inputs)
    return m, np.float32(ls * _exp32(np.float32(lm - m))) + np.float32(rs * _exp32(np.float32(rm - m)))


SOFTMAX = TestCombiner(
    "online_softmax", ("f32", "f32"), """
%m = arith.maxnumf %l0, %r0 : f32
%dl = arith.subf %l0, %m : f32
%dr = arith.subf %r0, %m : f32
%el = math.exp %dl : f32
%er = math.exp %dr : f32
%sl = arith.mulf %l1, %el : f32
%sr = arith.mulf %r1, %er : f32
%s = arith.addf %sl, %sr : f32
return %m, %s : f32, f32
""", _softmax, lambda x, coord: [np.asarray(x, np.float32), np.ones(np.shape(x), np.float32)], uses_math=True)


def _welford(count: str) -> TestCombiner:
    i32 = count == "i32"
    if i32:
        counts = ["%na = arith.sitofp %l0 : i32 to f32", "%nb = arith.sitofp %r0 : i32 to f32",
                  "%c = arith.addi %l0, %r0 : i32", "%n = arith.sitofp %c : i32 to f32"]
        na, nb, n = "%na", "%nb", "%n"
    else:  # the counts are f32 already
        counts = ["%c = arith.addf %l0, %r0 : f32"]
        na, nb, n = "%l0", "%r0", "%c"
    body = "\n".join(counts + [
        "%delta = arith.subf %r1, %l1 : f32",
        f"%t = arith.mulf %delta, {nb} : f32",
        f"%u = arith.divf %t, {n} : f32",
        "%mean = arith.addf %l1, %u : f32",
        "%d2 = arith.mulf %delta, %delta : f32",
        f"%p = arith.mulf {na}, {nb} : f32",
        "%q = arith.mulf %d2, %p : f32",
        f"%w = arith.divf %q, {n} : f32",
        "%s = arith.addf %l2, %r2 : f32",
        "%m2 = arith.addf %s, %w : f32",
        f"return %c, %mean, %m2 : {count}, f32, f32",
    ])

    def combine(left, right):
        (ca, ma, qa), (cb, mb, qb) = left, right
        f32 = np.float32
        na, nb = f32(ca), f32(cb)
        c = np.int32(ca + cb) if i32 else f32(ca + cb)
        n = f32(c)
        delta = f32(mb - ma)
        mean = f32(ma + f32(f32(delta * nb) / n))
        w = f32(f32(f32(delta * delta) * f32(na * nb)) / n)
        return c, mean, f32(f32(qa + qb) + w)

    ct = np.int32 if i32 else np.float32
    return TestCombiner(
        "welford" if i32 else "welford_f32", (count, "f32", "f32"), body, combine,
        lambda x, coord: [np.ones(np.shape(x), ct), np.asarray(x, np.float32), np.zeros(np.shape(x), np.float32)],
        meaning_source=1,
    )


def _matmul(left, right):
    (a, b, c, d), (e, f, g, h) = left, right
    f32 = np.float32
    return (f32(f32(a * e) + f32(b * g)), f32(f32(a * f) + f32(b * h)),
            f32(f32(c * e) + f32(d * g)), f32(f32(c * f) + f32(d * h)))


def _matrices(x, coord):
    """Per element, [[cos t, u - sin t], [sin t, cos t]] in f32, t = x * pi and
    u = sin(7 x) / 5: a rotation and a shear, so that two of them do not commute, and
    products stay near norm 1."""
    x = np.asarray(x, np.float64)
    t, u = x * np.pi, np.sin(7 * x) / 5
    return [np.cos(t).astype(np.float32), (u - np.sin(t)).astype(np.float32),
            np.sin(t).astype(np.float32), np.cos(t).astype(np.float32)]


MATRIX = TestCombiner(
    "matrix", ("f32",) * 4, """
%ae = arith.mulf %l0, %r0 : f32
%bg = arith.mulf %l1, %r2 : f32
%p = arith.addf %ae, %bg : f32
%af = arith.mulf %l0, %r1 : f32
%bh = arith.mulf %l1, %r3 : f32
%q = arith.addf %af, %bh : f32
%ce = arith.mulf %l2, %r0 : f32
%dg = arith.mulf %l3, %r2 : f32
%s = arith.addf %ce, %dg : f32
%cf = arith.mulf %l2, %r1 : f32
%dh = arith.mulf %l3, %r3 : f32
%t = arith.addf %cf, %dh : f32
return %p, %q, %s, %t : f32, f32, f32, f32
""", _matmul, _matrices, meaning_source=None)

def _mixed(left, right):
    (lv, lc), (rv, rc) = left, right
    return np.float16(np.float32(lv) + np.float32(rv)), (lc if lc > rc else rc)


# An f16 sum added in f32 (extf, addf, truncf) and an i32 maximum (cmpi, select): the
# casts and selects a combiner may hold.
MIXED = TestCombiner(
    "mixed", ("f16", "i32"), """
%a = arith.extf %l0 : f16 to f32
%b = arith.extf %r0 : f16 to f32
%s = arith.addf %a, %b : f32
%h = arith.truncf %s : f32 to f16
%gt = arith.cmpi sgt, %l1, %r1 : i32
%c = arith.select %gt, %l1, %r1 : i32
return %h, %c : f16, i32
""", _mixed, lambda x, coord: [np.asarray(x).astype(np.float16), np.asarray(coord, np.int32)])

def _matmul_i32(left, right):
    """The product of two 2x2 i32 matrices, every muli and addi wrapping (two's complement)."""
    (a, b, c, d), (e, f, g, h) = (tuple(int(v) for v in left), tuple(int(v) for v in right))
    wrap = lambda v: np.int32((v + 2**31) % 2**32 - 2**31)  # noqa: E731
    return wrap(a * e + b * g), wrap(a * f + b * h), wrap(c * e + d * g), wrap(c * f + d * h)


def _int_matrices(x, coord):
    """Per element, four i32 entries of any size spread from ``x``: products wrap."""
    u = np.ascontiguousarray(x, np.float64).view(np.uint64)
    return [((u * np.uint64(k)) >> np.uint64(32)).astype(np.uint32).view(np.int32)
            for k in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)]


MATRIX_I32 = TestCombiner(
    "matrix_i32", ("i32",) * 4, MATRIX.body.replace("mulf", "muli").replace("addf", "addi").replace("f32", "i32"),
    _matmul_i32, _int_matrices, meaning_source=None)

COMBINERS = {c.name: c for c in (
    _pair("f32", "first"), _pair("f32", "last"), _pair("f16", "first"), _pair("f64", "last"), _pair("i64", "first"),
    SOFTMAX, _welford("i32"), _welford("f32"), MATRIX, MIXED,
)}


def meaning(name: str, x: np.ndarray, coord: np.ndarray, result: list[np.ndarray], order: np.ndarray) -> list[str]:
    """What the result of combiner ``name`` must be, from its meaning, per dst element
    (``x``, ``coord``: (dst elements, reduced coordinates), row-major; ``result``: the
    k dst operands, flat): exact for first/last, within float64 tolerances otherwise.
    ``order`` (per dst element, a permutation of the reduced coordinates) is the sequence
    in which the documented fold meets the elements: an associative combiner gives the
    combination of that sequence, however the fold groups it (``matrix``)."""
    x64 = np.asarray(x, np.float64)
    problems = []

    def close(what, got, want, rel):
        bad = np.flatnonzero(~np.isclose(np.asarray(got, np.float64), want, rtol=rel, atol=rel))
        problems.extend(f"dst[{e}] {what}: got {got[e]!r}, the formula gives {want[e]!r}" for e in bad[:4])

    n = x64.shape[1]
    if name.startswith(("first", "last")):
        at = 0 if name.startswith("first") else n - 1
        close("coordinate", result[1], coord[:, at].astype(np.float64), 0)
        close("value", result[0], x64[:, at], 0)
    elif name == "mixed":
        bound = n * 2.0**-11 * np.abs(x64).sum(axis=1)
        bad = np.flatnonzero(np.abs(np.asarray(result[0], np.float64) - x64.sum(axis=1)) > bound)
        problems.extend(f"dst[{e}] sum: got {result[0][e]!r}, the formula gives {x64.sum(axis=1)[e]!r}" for e in bad[:4])
        close("max coordinate", result[1], coord.max(axis=1).astype(np.float64), 0)
    elif name == "online_softmax":
        m = x64.max(axis=1)
        close("max", result[0], m, 0)
        close("sum of exp", result[1], np.exp(x64 - m[:, None]).sum(axis=1), 1e-5)
    elif name.startswith("welford"):
        mean = x64.mean(axis=1)
        close("count", result[0], np.full(len(x64), n), 0)
        close("mean", result[1], mean, 1e-5)
        close("M2", result[2], ((x64 - mean[:, None]) ** 2).sum(axis=1), 1e-4)
    elif name == "matrix":  # the product of the sequence, in float64
        entries = [np.asarray(m, np.float64) for m in _matrices(x, coord)]
        rows = np.arange(len(x64))
        product = np.array([[[1.0, 0.0], [0.0, 1.0]]] * len(x64))
        for r in order.T:
            step = np.stack([np.stack([entries[0][rows, r], entries[1][rows, r]], -1),
                             np.stack([entries[2][rows, r], entries[3][rows, r]], -1)], -2)
            product = product @ step
        scale = np.abs(product).max()
        for j in range(4):
            close(f"entry {j}", result[j], product[:, j // 2, j % 2], 1e-4 * max(scale, 1))
    return problems

# Combiners only the random suite draws (``tile_mlir.testing.random_kernels``).
MORE_COMBINERS = {c.name: c for c in (MATRIX_I32,)}
