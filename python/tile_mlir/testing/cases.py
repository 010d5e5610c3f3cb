"""One conformance case of ``tile.reduce``: its kernel, its inputs, its numpy reference.

Each ``ReduceCase`` is one ``tile.reduce`` wrapped in a complete kernel
(``kernel_text``), plus everything needed to run it and judge the result with
numpy alone. ``tile_mlir.testing.matrix`` lists the cases of the conformance matrix.
This module imports no MLIR, so it runs on the GPU machine.

The kernel ``@<name>(%A: memref<T x NSRC x dt>, %B: memref<T x NDST x dt>)``,
launched as one block of ``T = case.threads()`` threads, does::

    src (private memref, the case's src shape) <- A[tid, :]      row-major flat index
    dst (private memref, the case's dst shape) <- B[tid, :]      only with accum
    "tile.reduce"(dst, src) {...}
    B[tid, :] <- dst

So register slot ``s`` of thread ``t`` is ``A[t, s]`` before and ``B[t, s]`` after.

A cluster-scope case runs on ``case.grid()`` blocks of ``case.block()`` threads, one
thread-block cluster (``T = grid * block``), and its ``tid`` is ``block id * block +
thread id``: the row of a thread of CTA ``c`` of the cluster. With ``cluster_fixed`` the
kernel declares its cluster (``known_cluster_size``), else the launch gives it.

With ``repeat = n > 1`` the op sits inside an ``scf.for`` of ``n`` iterations (so its
lowering must expect to run again), and A holds one src tile per iteration::

    dst <- B[tid, :]                                        only with accum
    scf.for i in 0..n:  src <- A[i, tid, :];  "tile.reduce"(dst, src)
    B[tid, :] <- dst

The logical src input ``x`` then has a leading dim of ``n``: with accum the result is
``old`` combined with every iteration's reduction in turn, without it the last
iteration's reduction.
The copies are straight-line, one load and one store per element, rather than
``scf.for`` loops as in ``examples/demo.mlir``: LLVM only partially unrolls a loop
of more than about 16 iterations, and its dynamic indices would then put the
private arrays in local memory whatever the lowering does. With static copies,
``ld.local``/``st.local`` in the PTX can only come from the lowering itself.
A layout maps each logical coordinate to ``Place(lane, warp, slot)`` places, and
the place's thread is ``lane + 32 * warp`` (the thread index within the scope; in a
cluster ``1024 * cta + `` the thread's in its block, which is row ``cta * block +`` it).

The host side, for inputs ``x`` (logical src tensor) and ``old`` (logical dst tensor):

* ``pack(x)`` fills every place of every coordinate of ``x`` (replicas included);
  unused slots hold ``poison``.
* ``pack_dst(v)`` does the same for a logical dst tensor; ``output_buffer(old)`` is
  the B to launch with: ``poison`` everywhere, or with accum ``pack_dst(old)``.
* ``unpack(B)`` lists, per dst coordinate, every place holding it and its value.
* ``reference(x, old)`` is the logical dst in float64 (int64 for integers).
* ``check(x, old, B)`` lists every mismatch (empty when right).

**Poison.** Floats: a quiet NaN whose payload no arithmetic produces (NVIDIA GPUs
return the canonical NaN), so ``check`` tells an unwritten place from a NaN
result. Integers: the ``0x7f7f...`` byte pattern.

**Values in memory.** f32, f16, f64, i32, i64 are the numpy dtypes of those names;
bf16 is ``np.uint16`` holding the bits (``tile_mlir.bf16``: converted from float64 with
round-to-nearest-even, once).

**Tolerances** (docs/spec.md, "Semantics"; ``check``):

* integers: exact (sums wrap to the dtype);
* max, min: exact; NaN is ignored, an all-NaN reduction is NaN, and -0.0 < +0.0
  (a max over {-0.0, +0.0} is +0.0, a min is -0.0);
* maximum, minimum: exact, NaN propagates, and -0.0 < +0.0 (a maximum over
  {-0.0, +0.0} is +0.0, a minimum is -0.0);
* sum: ``|got - ref| <= n * eps(dtype) * (sum |x| + |old|)`` with ``n`` the number
  of terms (the old value counts as one); an infinite or NaN reference must be
  matched exactly (the same infinity, or a NaN);
* always: every replica of one dst element is bit-identical to the others.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import bf16
from ..layout import Place, TileLayout
from ..vocab import DEFAULT_CHIP, DTYPES, FLOAT_DTYPES, KINDS, MAX_BLOCK_THREADS, SCOPE_THREADS, WARP_SIZE  # noqa: F401  (DTYPES, KINDS: re-exported)

# How each dtype sits in a numpy array, and the unsigned type of its bits.
_STORAGE = {
    "f32": np.float32, "f16": np.float16, "bf16": np.uint16, "f64": np.float64,
    "i32": np.int32, "i64": np.int64,
}
_BITS = {
    "f32": np.uint32, "f16": np.uint16, "bf16": np.uint16, "f64": np.uint64,
    "i32": np.uint32, "i64": np.uint64,
}
_POISON_BITS = {
    "f32": 0x7FE0DEAD,
    "f16": 0x7E5A,
    "bf16": 0x7FDA,
    "f64": 0x7FFC0BADDEADBEEF,
    "i32": 0x7F7F7F7F,
    "i64": 0x7F7F7F7F7F7F7F7F,
}
# The machine epsilon (2**-mantissa bits) of each float dtype.
_EPS = {"f32": 2.0**-23, "f16": 2.0**-10, "bf16": 2.0**-7, "f64": 2.0**-52}


# --- dtype conversions -------------------------------------------------------------------


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def storage_dtype(dtype: str) -> np.dtype:
    """The numpy dtype of a host buffer of ``dtype`` (bf16: ``uint16`` bits)."""
    return np.dtype(_STORAGE[dtype])


def poison(dtype: str, shape) -> np.ndarray:
    """A host buffer of ``dtype`` filled with the poison value (module docstring)."""
    return np.full(shape, _POISON_BITS[dtype], dtype=_BITS[dtype]).view(_STORAGE[dtype])


def bits(a: np.ndarray, dtype: str) -> np.ndarray:
    """The raw bits of a host buffer of ``dtype``, as unsigned integers."""
    return np.asarray(a, dtype=_STORAGE[dtype]).view(_BITS[dtype])


def widen(a: np.ndarray, dtype: str) -> np.ndarray:
    """Host values of ``dtype`` -> float64 (floats) or int64 (integers), exactly."""
    a = np.asarray(a, dtype=_STORAGE[dtype])
    if dtype == "bf16":
        return bf16.from_bits(a).astype(np.float64)
    return a.astype(np.float64 if is_float(dtype) else np.int64)


def narrow(v: np.ndarray, dtype: str) -> np.ndarray:
    """float64/int values -> host values of ``dtype`` (round to nearest even, once; ints
    wrap; a bf16 NaN is the quiet NaN with its sign)."""
    v = np.asarray(v)
    if dtype != "bf16":
        return v.astype(_STORAGE[dtype])
    return bf16.to_bits(v)


# --- one case ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReduceCase:
    """One ``tile.reduce`` in a kernel; see the module docstring."""

    name: str  # a valid MLIR symbol, unique in CASES
    kind: str  # sum max min maximum minimum
    dtype: str  # f32 f16 bf16 f64 i32 i64
    exec_scope: str  # thread warp warpgroup
    axes: tuple[int, ...]  # as written on the op (may be negative)
    accum: bool
    src_shape: tuple[int, ...]  # the private memref shapes
    dst_shape: tuple[int, ...]
    src_layout: str | None = None  # layout text; None: row-major over the memref, registers only
    dst_layout: str | None = None
    special: bool = False  # run with special_inputs (NaN, infinities, signed zeros)
    repeat: int = 1  # iterations of the loop around the op (1: no loop)
    cluster_fixed: bool = False  # a cluster case's kernel declares its known_cluster_size
    dispatch: str | None = None  # forces a lowering variant (the op's dispatch attribute)

    def threads(self) -> int:
        """The threads of one instance of the exec scope: the rows of A and B. For a cta,
        the src layout's warps; for a cluster, its CTAs' (``grid() * block()``)."""
        return self.grid() * self.block()

    def block(self) -> int:
        """The threads of the block a launch has (for a cta or a cluster: the src
        layout's warps)."""
        if self.exec_scope in ("cta", "cluster"):
            return WARP_SIZE * (TileLayout.parse(self.src_layout).reach("warpid") + 1)
        return SCOPE_THREADS[self.exec_scope]

    def grid(self) -> int:
        """The blocks a launch has: one, or the CTAs of the cluster."""
        if self.exec_scope != "cluster":
            return 1
        return TileLayout.parse(self.src_layout).reach("cta_in_cluster") + 1

    @property
    def x_shape(self) -> tuple[int, ...]:
        """The shape of the logical src input: the src tile's, after a dim of ``repeat``
        iterations when there is a loop."""
        return ((self.repeat,) if self.repeat > 1 else ()) + self.src_tile.shape

    def buffer_shapes(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The shapes of the kernel's arguments A and B (module docstring)."""
        a = (self.threads(), math.prod(self.src_shape))
        return ((self.repeat, *a) if self.repeat > 1 else a), (self.threads(), math.prod(self.dst_shape))

    # -- layouts and places --------------------------------------------------------------

    @cached_property
    def src_tile(self) -> TileLayout:
        return _layout(self.src_layout, self.src_shape)

    @cached_property
    def dst_tile(self) -> TileLayout:
        return _layout(self.dst_layout, self.dst_shape)

    @property
    def reduced_dims(self) -> tuple[int, ...]:
        """The reduced logical src dims, non-negative and ascending."""
        rank = self.src_tile.rank
        return tuple(sorted({a % rank for a in self.axes}))

    @cached_property
    def _src_index(self) -> tuple[np.ndarray, ...]:
        return _place_index(self.src_tile, self.block())

    @cached_property
    def _dst_index(self) -> tuple[np.ndarray, ...]:
        return _place_index(self.dst_tile, self.block())

    # -- the kernel ---------------------------------------------------------------------

    def kernel_text(self, chip: str = DEFAULT_CHIP) -> str:
        """A complete module: ``gpu.module @kernels`` with the kernel ``@<name>``."""
        dt, threads = self.dtype, self.threads()
        a_type, b_type = (f"memref<{'x'.join(map(str, shape))}x{dt}>" for shape in self.buffer_shapes())
        src_type, dst_type = private_type(self.src_shape, dt), private_type(self.dst_shape, dt)
        n_consts = max(math.prod(self.src_shape), math.prod(self.dst_shape))
        attrs = [
            f'kind = "{self.kind}"',
            f'exec_scope = "{self.exec_scope}"',
            f"axes = array<i64: {', '.join(map(str, self.axes))}>",
            f"accum = {'true' if self.accum else 'false'}",
        ]
        if self.src_layout is not None:
            attrs.append(f'src_layout = #tile.layout<"{self.src_layout}">')
        if self.dst_layout is not None:
            attrs.append(f'dst_layout = #tile.layout<"{self.dst_layout}">')
        if self.dispatch is not None:
            attrs.append(f'dispatch = "{self.dispatch}"')

        body = ["%tid = gpu.thread_id x"] if self.exec_scope != "cluster" else [
            "%tx = gpu.thread_id x",
            "%bid = gpu.block_id x",
            f"%cblock = arith.constant {self.block()} : index",
            "%first = arith.muli %bid, %cblock : index",
            "%tid = arith.addi %first, %tx : index  // the thread's row: block id * block + thread id",
        ]
        body += [f"%c{n} = arith.constant {n} : index" for n in range(n_consts)]
        body += [f"%src = memref.alloca() : {src_type}", f"%dst = memref.alloca() : {dst_type}"]
        if self.accum:
            body.append("// B[tid, :] -> dst: the old values")
            body += _copies("o", self.dst_shape, "%B", b_type, "%dst", dst_type, load_global=True)
        reduce = [
            f'"tile.reduce"(%dst, %src) {{{", ".join(attrs)}}}',
            f"  : ({dst_type}, {src_type}) -> ()",
        ]
        if self.repeat == 1:
            body.append("// A[tid, :] -> src")
            body += _copies("a", self.src_shape, "%A", a_type, "%src", src_type, load_global=True)
            body += reduce
        else:
            body += [
                "%lo = arith.constant 0 : index",
                f"%hi = arith.constant {self.repeat} : index",
                "%step = arith.constant 1 : index",
                "scf.for %i = %lo to %hi step %step {",
                "  // A[i, tid, :] -> src",
                *("  " + line for line in _copies("a", self.src_shape, "%A", a_type, "%src", src_type, True, "%i, ")),
                *("  " + line for line in reduce),
                # A real loop on the GPU too: the op's code runs again, not a copy of it.
                "} {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}",
            ]
        body.append("// dst -> B[tid, :]")
        body += _copies("b", self.dst_shape, "%B", b_type, "%dst", dst_type, load_global=False)
        body.append("gpu.return")
        where, attributes = f"one block of {threads} thread(s)", ""
        if self.exec_scope == "cluster":
            where = f"a cluster of {self.grid()} block(s) of {self.block()} thread(s)"
            if self.cluster_fixed:
                attributes = f" attributes {{known_cluster_size = array<i32: {self.grid()}, 1, 1>}}"
        lines = [
            f"// Conformance case {self.name}: {where}.",
            "module attributes {gpu.container_module} {",
            f'  gpu.module @kernels [#nvvm.target<chip = "{chip}">] {{',
            f"    gpu.func @{self.name}(%A: {a_type}, %B: {b_type}) kernel{attributes} {{",
            *("      " + line for line in body),
            "    }",
            "  }",
            "}",
        ]
        return "\n".join(lines) + "\n"

    # -- host buffers --------------------------------------------------------------------

    def pack(self, x: np.ndarray) -> np.ndarray:
        """Logical src input -> ``A[threads, src numel]`` (every place of every element);
        with a loop, ``A[repeat, threads, src numel]``, one tile per iteration."""
        if self.repeat == 1:
            return self._pack(x, self.src_tile, self.src_shape, self._src_index)
        x = np.asarray(x)
        if x.shape != self.x_shape:
            raise ValueError(f"{self.name}: got shape {x.shape}, expected {self.x_shape}")
        return np.stack([self._pack(xi, self.src_tile, self.src_shape, self._src_index) for xi in x])

    def pack_dst(self, values: np.ndarray) -> np.ndarray:
        """Logical dst tensor -> ``B[threads, dst numel]``, the same way as ``pack``."""
        return self._pack(values, self.dst_tile, self.dst_shape, self._dst_index)

    def output_buffer(self, old: np.ndarray | None) -> np.ndarray:
        """The B to launch with: all poison, or with accum ``pack_dst(old)``."""
        if self.accum:
            return self.pack_dst(old)
        return poison(self.dtype, (self.threads(), math.prod(self.dst_shape)))

    def _pack(self, values, layout: TileLayout, memref_shape, index) -> np.ndarray:
        values = np.asarray(values, dtype=storage_dtype(self.dtype))
        if values.shape != layout.shape:
            raise ValueError(f"{self.name}: got shape {values.shape}, the layout has {layout.shape}")
        buf = poison(self.dtype, (self.threads(), math.prod(memref_shape)))
        coord, row, slot, _ = index
        buf[row, slot] = values.reshape(-1)[coord]
        return buf

    def owned(self, b: np.ndarray) -> np.ndarray:
        """The values of ``B`` at every place the dst layout gives an element (replicas
        included), flat; what a lane holds outside the layout is not part of the result."""
        _, row, slot, _ = self._dst_index
        return np.asarray(b).reshape(self.threads(), -1)[row, slot]

    def unpack(self, b: np.ndarray) -> dict[tuple[int, ...], list[tuple[Place, object]]]:
        """``B`` -> for each dst logical coordinate, every (place, raw value) holding it."""
        b = np.asarray(b, dtype=storage_dtype(self.dtype)).reshape(self.threads(), -1)
        coords = list(itertools.product(*map(range, self.dst_tile.shape)))
        out: dict[tuple[int, ...], list[tuple[Place, object]]] = {c: [] for c in coords}
        for k, row, s, t in zip(*self._dst_index):
            out[coords[k]].append((Place(int(t) % WARP_SIZE, int(t) // WARP_SIZE, int(s)), b[row, s]))
        return out

    # -- judging ----------------------------------------------------------------------

    def _terms(self, x: np.ndarray, old: np.ndarray | None) -> np.ndarray:
        """The values each dst element combines: shape (dst numel, terms), widened.

        Row k lists the src elements reduced into dst element k (row-major), then
        the old value with accum. With a loop: every iteration's with accum, else the
        last one's.
        """
        v = widen(x, self.dtype)
        if self.repeat > 1:
            v = v if self.accum else v[-1:]
        else:
            v = v[np.newaxis]
        red = [1 + d for d in self.reduced_dims]
        kept = [d for d in range(1, v.ndim) if d not in red]
        n_dst = math.prod(self.dst_tile.shape)
        terms = np.concatenate([np.transpose(vi, [d - 1 for d in kept + red]).reshape(n_dst, -1) for vi in v], axis=1)
        if self.accum:
            terms = np.concatenate([terms, widen(old, self.dtype).reshape(n_dst, 1)], axis=1)
        return terms

    def reference(self, x: np.ndarray, old: np.ndarray | None) -> np.ndarray:
        """The logical dst (docs/spec.md, "Semantics"), float64 (int64 for integers, wrapped)."""
        with np.errstate(invalid="ignore"):  # inf - inf is NaN, as on the GPU
            return self._reduce(self._terms(x, old)).reshape(self.dst_tile.shape)

    def _reduce(self, terms: np.ndarray) -> np.ndarray:
        """``reference`` over the rows of ``_terms``."""
        if not is_float(self.dtype):
            if self.kind == "sum":
                ref = narrow(terms.sum(axis=1), self.dtype).astype(np.int64)
            elif self.kind in ("max", "maximum"):
                ref = terms.max(axis=1)
            else:
                ref = terms.min(axis=1)
        elif self.kind == "sum":
            ref = terms.sum(axis=1)
        elif self.kind == "max":
            ref = np.fmax.reduce(terms, axis=1)
        elif self.kind == "min":
            ref = np.fmin.reduce(terms, axis=1)
        else:  # IEEE maximum/minimum: NaN propagates
            ref = (np.maximum if self.kind == "maximum" else np.minimum).reduce(terms, axis=1)
        if self.kind != "sum":
            # Every max/min orders -0.0 below +0.0. So a zero maximum is +0.0 iff some
            # term is +0.0, and a zero minimum is -0.0 iff some term is.
            minimum = self.kind in ("min", "minimum")
            has_winner = np.any((terms == 0) & (np.signbit(terms) == minimum), axis=1)
            negative = has_winner == minimum
            ref = np.where(ref == 0, np.where(negative, -0.0, 0.0), ref)
        return ref

    def sum_bound(self, x: np.ndarray, old: np.ndarray | None) -> np.ndarray:
        """Per dst element, the allowed |got - ref| of a float sum (module docstring)."""
        terms = self._terms(x, old)
        n = terms.shape[1]
        return (n * _EPS[self.dtype] * np.abs(terms).sum(axis=1)).reshape(self.dst_tile.shape)

    def check(self, x: np.ndarray, old: np.ndarray | None, b: np.ndarray) -> list[str]:
        """Every mismatch between ``B`` and the reference; empty when ``B`` is right.

        Per dst element: one line if its replicas are not bit-identical, and one line
        if some place holds poison (never written) or a wrong value.
        """
        ref = self.reference(x, old)
        bound = self.sum_bound(x, old) if self.kind == "sum" and is_float(self.dtype) else None
        poison_bits = _POISON_BITS[self.dtype]
        problems = []
        for coord, held in self.unpack(b).items():
            expected = ref[coord]
            raw = [bits(value, self.dtype) for _, value in held]
            if len(set(int(r) for r in raw)) > 1:
                problems.append(f"dst{list(coord)}: replicas differ: {_replica_groups(held, raw)}")
            bad = []
            for (place, value), r in zip(held, raw):
                if int(r) == poison_bits:
                    bad.append(f"{_where(place)}: never written (poison)")
                    continue
                got = widen(value, self.dtype)[()]
                if not self._matches(got, expected, None if bound is None else bound[coord]):
                    bad.append(f"{_where(place)}: got {_show(got, r)}")
            if bad:
                problems.append(
                    f"dst{list(coord)}: expected {_show(expected)}, {len(bad)} of {len(held)} "
                    f"place(s) wrong, e.g. {bad[0]}"
                )
        return problems

    def _matches(self, got, expected, bound) -> bool:
        if not is_float(self.dtype):
            return got == expected
        if np.isnan(expected) or np.isnan(got):
            return bool(np.isnan(expected) and np.isnan(got))
        if self.kind == "sum" and np.isfinite(expected):
            return bool(abs(got - expected) <= bound)
        if got != expected:
            return False
        zero_sign_matters = self.kind != "sum" and expected == 0
        return not zero_sign_matters or np.signbit(got) == np.signbit(expected)

    # -- inputs -------------------------------------------------------------------------

    def random_inputs(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Fresh random ``(x, old)``, never zero: floats in [-1, 1], small signed ints."""
        return (
            _random_values(rng, self.x_shape, self.dtype),
            _random_values(rng, self.dst_tile.shape, self.dtype),
        )


# --- special values ------------------------------------------------------------------------


def _mixed(rng, shape):
    """Random values, with each of NaN, +inf, -inf, -0.0 and +0.0 sprinkled in."""
    v = rng.uniform(-1, 1, shape)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])
    mask = rng.random(shape) < 0.3
    v[mask] = rng.choice(specials, size=int(mask.sum()))
    return v


def _some_nans(rng, shape):
    """Random finite values, a few of them NaN."""
    v = rng.uniform(-1, 1, shape)
    v[rng.random(shape) < 0.25] = np.nan
    return v


def _signed_zeros(rng, shape):
    """-0.0 and +0.0, with negatives or (coin flip) positives: max or min is a zero."""
    sign = rng.choice([-1.0, 1.0])
    v = sign * rng.uniform(0.5, 1, shape)
    mask = rng.random(shape) < 0.5
    v[mask] = rng.choice([-0.0, 0.0], size=int(mask.sum()))
    return v


def _negative_zeros(rng, shape):
    """-0.0 only: every kind gives -0.0 (``check`` insists for maximum and minimum)."""
    return np.full(shape, -0.0)


def _one_infinity(rng, shape):
    """All -inf or all +inf (coin flip), a few NaN: max over all -inf is -inf, not a finite identity."""
    v = np.full(shape, rng.choice([-np.inf, np.inf]))
    v[rng.random(shape) < 0.25] = np.nan
    return v


def _all_nan(rng, shape):
    return np.full(shape, np.nan)


def _nan_payloads(rng, shape):
    """NaNs only, each with its own payload: an f64 NaN result keeps an operand's
    payload on NVIDIA GPUs, and the lanes of a butterfly must agree all the same."""
    payload = rng.integers(1, 2**51, size=shape, dtype=np.uint64)
    return (np.uint64(0x7FF8000000000000) | payload).view(np.float64)


SPECIAL_SCENARIOS = {
    "mixed": _mixed,
    "some_nans": _some_nans,
    "signed_zeros": _signed_zeros,
    "negative_zeros": _negative_zeros,
    "one_infinity": _one_infinity,
    "all_nan": _all_nan,
    "nan_payloads": _nan_payloads,
}


def special_inputs(case: ReduceCase, rng: np.random.Generator) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``(scenario, x, old)`` for every scenario of ``SPECIAL_SCENARIOS`` (floats only).

    Each scenario fills ``x`` and ``old`` from its own generator; mixed together they
    hold NaN, +inf, -inf, -0.0 and +0.0 among random values.
    """
    if not is_float(case.dtype):
        raise ValueError(f"{case.name}: special inputs are for float dtypes, not {case.dtype}")
    return [
        (name, narrow(gen(rng, case.x_shape), case.dtype),
         narrow(gen(rng, case.dst_tile.shape), case.dtype))
        for name, gen in SPECIAL_SCENARIOS.items()
    ]


# --- helpers ---------------------------------------------------------------------------


def _layout(text: str | None, shape: tuple[int, ...]) -> TileLayout:
    return TileLayout.row_major(shape) if text is None else TileLayout.parse(text)


def _place_index(layout: TileLayout, block: int) -> tuple[np.ndarray, ...]:
    """Every (row-major coordinate index, buffer row, slot, thread) of a layout, as four
    arrays; the thread is the layout's (``1024 * cta + `` the thread's in its block), the
    row ``cta * block +`` the thread's in its block."""
    rows = []
    for k, coord in enumerate(itertools.product(*map(range, layout.shape))):
        for place in sorted(layout.forward(coord)):
            t = place.lane + WARP_SIZE * place.warp
            cta, local = divmod(t, MAX_BLOCK_THREADS)
            rows.append((k, cta * block + local, place.slot, t))
    return tuple(np.array(col, dtype=np.int64) for col in zip(*rows))


def _random_values(rng, shape, dtype: str) -> np.ndarray:
    if is_float(dtype):
        v = widen(narrow(rng.uniform(-1, 1, shape), dtype), dtype)
        return narrow(np.where(v == 0, 0.5, v), dtype)  # never zero
    magnitude = rng.integers(1, 100, shape)
    return (magnitude * rng.choice([-1, 1], shape)).astype(storage_dtype(dtype))


def private_type(shape, dtype: str) -> str:
    return f"memref<{'x'.join(map(str, shape))}x{dtype}, #gpu.address_space<private>>"


def _copies(
    p: str, shape, glob: str, glob_type: str, loc: str, loc_type: str, load_global: bool, lead: str = ""
) -> list[str]:
    """Straight-line copies between ``glob[lead tid, flat]`` and ``loc[i...]``, one per element.

    ``flat`` is the row-major index of ``i...`` over ``shape``; ``p`` prefixes the
    SSA names so that two copies never clash. The direction is global -> private
    with ``load_global``, else private -> global.
    """
    lines = []
    for flat, idx in enumerate(itertools.product(*map(range, shape))):
        here = f"{loc}[{', '.join(f'%c{i}' for i in idx)}] : {loc_type}"
        there = f"{glob}[{lead}%tid, %c{flat}] : {glob_type}"
        load, store = (there, here) if load_global else (here, there)
        lines.append(f"%{p}{flat} = memref.load {load}")
        lines.append(f"memref.store %{p}{flat}, {store}")
    return lines


def _where(place: Place) -> str:
    cta, warp = divmod(place.warp, MAX_BLOCK_THREADS // WARP_SIZE)
    return f"lane {place.lane}{f' warp {warp}' if warp else ''}{f' cta {cta}' if cta else ''} slot {place.slot}"


def _replica_groups(held, raw) -> str:
    """``0x7e00 at 8 places (lane 1 slot 0, lane 5 slot 0, ...); 0xfe00 at ...``."""
    groups: dict[int, list[Place]] = {}
    for (place, _), r in zip(held, raw):
        groups.setdefault(int(r), []).append(place)
    parts = []
    for r, places in groups.items():
        shown = ", ".join(map(_where, places[:3])) + (", ..." if len(places) > 3 else "")
        parts.append(f"0x{r:x} at {len(places)} place(s) ({shown})")
    return "; ".join(parts)


def _show(value, raw=None) -> str:
    text = repr(float(value)) if isinstance(value, (float, np.floating)) else str(int(value))
    return text if raw is None else f"{text} (0x{int(raw):x})"
