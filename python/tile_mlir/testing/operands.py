"""The operands of the random suite's ops (``tile_mlir.testing.harness``): fresh random
values of each element type, and what each kind of op reads and writes. numpy only: it
runs on the GPU machine.

* **named kinds** (sum, max, ...): one src and one dst operand, ``random_values``.
* **argmax, argmin**: one src (the values) and two dsts (value, index). The values come
  from one *scenario* per op, each on about half of the dst elements' rows (the row of a
  dst element: its reduced coordinates), the others plain random values: ``ties`` (values
  from four levels, so the best one repeats on random coordinates: in a thread, across
  lanes, across warps and CTAs); ``nan_first``, ``nan_last`` (a NaN of any payload at
  the row's first or last index, maybe more NaNs), ``nan_only`` (a row of NaNs),
  ``-inf`` and ``+inf`` rows, ``zeros`` (-0, +0 and a losing value); integers: ``ties``,
  and ``extremes`` (the type's min and max, -1, 1). The old pair (with accum): a value of
  the same draw and a random index.
* **combiner functions** (``tile_mlir.testing.combiners``: the online-softmax pair,
  Welford, first, last, the 2x2 matrix product in f32 and i32): their k src operands are
  the combiner's ``sources`` of fresh x in [-1, 1] (never 0) and each element's index
  among the reduced coordinates (a zero float, Welford's M2, drawn in (0.1, 1): a partial
  of its own); the old dsts, the sources of other x and random indices.

``with_model`` gives an op of a combiner function its ``combine``: the function as the
reference calls it, over Python values (``combiners``' numpy twin, op by op as MLIR).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from . import reference as ref
from .combiners import COMBINERS, GPU_EXP_ULPS, MORE_COMBINERS

_BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64, "i32": np.uint32, "i64": np.uint64}
# The exponent and mantissa fields of each float type: a NaN has every exponent bit set and
# a mantissa other than 0.
_NAN_FIELDS = {"f16": (0x7C00, 0x3FF), "bf16": (0x7F80, 0x7F), "f32": (0x7F800000, 0x7FFFFF),
               "f64": (0x7FF0000000000000, 0xFFFFFFFFFFFFF)}
_SPECIALS = (math.nan, -math.nan, math.inf, -math.inf, -0.0, 0.0)
FUNCTIONS = {**COMBINERS, **MORE_COMBINERS}  # every combiner function the suite may draw
ARG_SCENARIOS = ("ties", "ties", "nan_first", "nan_last", "nan_only", "-inf", "+inf", "zeros", "random")
INT_SCENARIOS = ("ties", "ties", "extremes", "random")
_NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def random_values(rng: np.random.Generator, shape, dtype: str, special: float = 0.0) -> np.ndarray:
    """Fresh values of ``dtype``, never zero: floats in [-1, 1] (a share ``special`` of them
    NaN with random payloads, +-inf or +-0), integers small or (one time in four) of any size."""
    n = math.prod(shape)
    if dtype in ("i32", "i64"):
        if rng.random() < 0.25:
            info = np.iinfo(ref.storage_dtype(dtype))
            v = rng.integers(info.min, info.max, n, dtype=ref.storage_dtype(dtype), endpoint=True)
        else:
            v = rng.integers(1, 100, n) * rng.choice([-1, 1], n)
        v = np.where(v == 0, 1, v)
        return v.astype(ref.storage_dtype(dtype)).reshape(shape)
    v = rng.uniform(-1, 1, n)
    v[v == 0] = 0.5
    mask = rng.random(n) < special
    v[mask] = np.array(_SPECIALS)[rng.integers(len(_SPECIALS), size=int(mask.sum()))]
    if dtype == "bf16":  # to nearest even, on the bits of the f32
        u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        out = np.where(np.isnan(v), 0x7FFF, (u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    else:
        out = v.astype(ref.storage_dtype(dtype))
    bits = out.view(_BITS[dtype])
    bits[~mask & ((bits << _BITS[dtype](1)) == 0)] = ref.from_values([0.5], dtype, (1,)).view(_BITS[dtype])[0]  # never 0
    exponent, mantissa = _NAN_FIELDS[dtype]
    nans = np.flatnonzero(mask & np.isnan(v) & (rng.random(n) < 0.5))
    if len(nans):  # NaNs of other payloads and signs
        sign = rng.integers(2, size=len(nans)).astype(_BITS[dtype]) << _BITS[dtype](8 * bits.itemsize - 1)
        payload = rng.integers(1, mantissa, size=len(nans), endpoint=True).astype(_BITS[dtype])
        bits[nans] = sign | _BITS[dtype](exponent) | payload
    return out.reshape(shape)


# --- what each kind of op reads -------------------------------------------------------------


def _rows(op: ref.ReduceOp, x: np.ndarray) -> np.ndarray:
    """A logical src tensor as (dst elements, reduced coordinates), both row-major."""
    kept = [d for d in range(x.ndim) if d not in op.reduced]
    return np.transpose(x, kept + list(op.reduced)).reshape(-1, math.prod(x.shape[d] for d in op.reduced))


def _unrows(op: ref.ReduceOp, t: np.ndarray, shape) -> np.ndarray:
    kept = [d for d in range(len(shape)) if d not in op.reduced]
    order = kept + list(op.reduced)
    return np.transpose(t.reshape([shape[d] for d in order]), np.argsort(order))


def _constant(dtype: str, value: float, n: int) -> np.ndarray:
    return ref.from_values([value] * n, dtype, (n,))


def arg_values(rng: np.random.Generator, op: ref.ReduceOp, scenario: str, special: float) -> np.ndarray:
    """The values of an argmax or argmin src for one ``scenario`` (module docstring)."""
    dt, shape = op.dtypes[0], op.src.shape
    x = random_values(rng, shape, dt, special)
    t = _rows(op, x).copy()
    n, r = t.shape
    pick = rng.random(n) < 0.5
    pick[rng.integers(n)] = True  # at least one row
    if scenario == "ties":
        levels = random_values(rng, (4,), dt)
        t[pick] = levels[rng.integers(4, size=(int(pick.sum()), r))]
    elif scenario == "extremes":
        info = np.iinfo(ref.storage_dtype(dt))
        choices = np.array([info.min, info.max, -1, 1], ref.storage_dtype(dt))
        t[pick] = choices[rng.integers(4, size=(int(pick.sum()), r))]
    elif scenario in ("nan_first", "nan_last", "nan_only"):
        nans = random_values(rng, (4 * r + 64,), dt, 1.0)
        nans = nans[[v != v for v in ref.to_values(nans, dt)]]
        if scenario == "nan_only":
            t[pick] = nans[rng.integers(len(nans), size=(int(pick.sum()), r))]
        else:
            more = pick[:, None] & (rng.random((n, r)) < 0.2)  # more NaNs after (before) it
            t[more] = nans[rng.integers(len(nans), size=int(more.sum()))]
            t[pick, 0 if scenario == "nan_first" else r - 1] = nans[rng.integers(len(nans), size=int(pick.sum()))]
    elif scenario in ("-inf", "+inf"):
        t[pick] = _constant(dt, -math.inf if scenario == "-inf" else math.inf, 1)[0]
    elif scenario == "zeros":
        loser = -0.5 if op.kind == "argmax" else 0.5
        levels = ref.from_values([-0.0, 0.0, loser], dt, (3,))
        t[pick] = levels[rng.integers(3, size=(int(pick.sum()), r))]
    return _unrows(op, t, shape)


def op_inputs(op: ref.ReduceOp, rng: np.random.Generator, instances: int, repeat: int,
              special: float) -> tuple[list, list]:
    """``(x, old)``: x[instance][iteration] the op's logical src operands (a list), and
    old[instance] its logical old dst operands (a list), for one kind of op (module
    docstring); ``special``: the share of NaN, infinities and zeros of the named kinds."""
    src, dst = op.src, op.dst
    if op.kind in ref.KINDS:
        dt = op.dtypes[0]
        xs = [[[random_values(rng, src.shape, dt, special)] for _ in range(repeat)] for _ in range(instances)]
        return xs, [[random_values(rng, dst.shape, dt, special)] for _ in range(instances)]
    n_r = math.prod(src.shape[d] for d in op.reduced)
    if op.arg:
        dt, idt = op.dtypes
        scenarios = INT_SCENARIOS if dt in ("i32", "i64") else ARG_SCENARIOS
        scenario = scenarios[int(rng.integers(len(scenarios)))]
        xs = [[[arg_values(rng, op, scenario, special)] for _ in range(repeat)] for _ in range(instances)]
        olds = []
        for i in range(instances):
            pool = xs[i][0][0].reshape(-1)  # values the src holds too: ties with the old pair
            value = random_values(rng, dst.shape, dt, special).reshape(-1)
            same = rng.random(len(value)) < 0.3
            value[same] = pool[rng.integers(len(pool), size=int(same.sum()))]
            olds.append([value.reshape(dst.shape), rng.integers(0, n_r, dst.shape).astype(ref.storage_dtype(idt))])
        return xs, olds
    if op.function in BAD_FUNCTIONS:  # never run: any values
        return ([[[random_values(rng, src.shape, t) for t in op.dtypes] for _ in range(repeat)]
                 for _ in range(instances)],
                [[random_values(rng, dst.shape, t) for t in op.dtypes] for _ in range(instances)])
    comb = FUNCTIONS[op.function]
    coord = _unrows(op, np.broadcast_to(np.arange(n_r), (math.prod(dst.shape), n_r)), src.shape)

    def fresh(shape):
        v = rng.uniform(-1, 1, shape)
        return np.where(v == 0, 0.5, v)

    def sources(v, c, shape):  # a zero (Welford's M2 of one element) becomes a partial's M2 in (0.1, 1)
        out = [np.asarray(s, ref.storage_dtype(t)).reshape(shape) for s, t in zip(comb.sources(v, c), comb.types)]
        return [np.where(s == 0, rng.uniform(0.1, 1, shape).astype(s.dtype), s) if t in ref.FLOATS else s
                for s, t in zip(out, comb.types)]

    xs = [[sources(fresh(src.shape), coord, src.shape) for _ in range(repeat)] for _ in range(instances)]
    return xs, [sources(fresh(dst.shape), rng.integers(0, n_r, dst.shape), dst.shape) for _ in range(instances)]


# --- the combiner functions, for the reference ----------------------------------------------


def with_model(op: ref.ReduceOp) -> ref.ReduceOp:
    """``op`` with ``combine`` set where it names a combiner function: the function over
    tuples of Python values (the reference's), through its numpy twin."""
    if op.function is None or op.combine is not None or op.function in BAD_FUNCTIONS:
        return op
    comb = FUNCTIONS[op.function]
    types = [_NP[t] for t in comb.types]

    def combine(left, right):
        with np.errstate(all="ignore"):
            out = comb.combine(tuple(t(v) for t, v in zip(types, left)), tuple(t(v) for t, v in zip(types, right)))
        return tuple(float(v) if t in ref.FLOATS else int(v) for v, t in zip(out, comb.types))

    return replace(op, combine=combine)


def function_text(op: ref.ReduceOp, name: str) -> str:
    """The ``func.func private @<name>`` of the op's combiner function."""
    if op.function in BAD_FUNCTIONS:
        return BAD_FUNCTIONS[op.function][1].format(name=name)
    return FUNCTIONS[op.function].function_text(name)


_SIGNATURE = "%l0: f32, %l1: i32, %r0: f32, %r1: i32"
# Combiner functions docs/spec.md ("Combiner functions") forbids, for ops on (f32, i32)
# operands: name -> (operand types, the function's text, what is wrong). The compiler
# must reject each.
BAD_FUNCTIONS = {
    "bad_results": (("f32", "i32"), "func.func private @{name}(" + _SIGNATURE + ") -> (f32) {{\n"
                    "  return %l0 : f32\n}}", "one result for two operands"),
    "bad_types": (("f32", "i32"), "func.func private @{name}(%l0: i32, %l1: i32, %r0: i32, %r1: i32) -> (i32, i32) {{\n"
                  "  return %l0, %l1 : i32, i32\n}}", "i32 arguments for an f32 operand"),
    "bad_memory": (("f32", "i32"), "func.func private @{name}(" + _SIGNATURE + ") -> (f32, i32) {{\n"
                   "  %a = memref.alloca() : memref<1xf32>\n  %c0 = arith.constant 0 : index\n"
                   "  memref.store %r0, %a[%c0] : memref<1xf32>\n  %v = memref.load %a[%c0] : memref<1xf32>\n"
                   "  return %v, %r1 : f32, i32\n}}", "a memory access"),
    "bad_region": (("f32", "i32"), "func.func private @{name}(" + _SIGNATURE + ") -> (f32, i32) {{\n"
                   "  %c = arith.cmpi slt, %l1, %r1 : i32\n"
                   "  %v = scf.if %c -> (f32) {{\n    scf.yield %l0 : f32\n"
                   "  }} else {{\n    scf.yield %r0 : f32\n  }}\n"
                   "  %i = arith.minsi %l1, %r1 : i32\n  return %v, %i : f32, i32\n}}", "a nested region"),
}


def gpu_tolerance(op: ref.ReduceOp, terms: int) -> float | None:
    """The relative tolerance of a float result on the GPU of an op whose combiner has
    math ops (the GPU's exp is not the interpreter's, which the reference follows:
    ``combiners.GPU_EXP_ULPS`` per combine, ``terms`` combines); None: bit for bit."""
    if op.function is None or not FUNCTIONS[op.function].uses_math:
        return None
    return GPU_EXP_ULPS * (terms + 1) * 2.0**-23
