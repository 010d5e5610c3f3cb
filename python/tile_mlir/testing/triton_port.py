"""Triton's own reduction tests, ported to ``tile.reduce``: argmax/argmin and combiners.

Ported from Triton's ``python/test/unit/language/test_core.py``
(https://github.com/triton-lang/triton/blob/main/python/test/unit/language/test_core.py):

* ``test_reduce1d``: the ``argmin-tie-break-left`` / ``argmax-tie-break-left`` cases (and
  ``min-with-indices`` / ``max-with-indices``, whose value is our value dst), shapes 32, 64,
  128 and 512, ``num_warps = 4``, with ties planted as Triton does (``x[3:10] =
  x[argmax]``);
* ``test_reduce``: its argmin/argmax configurations: ``(1, 1024)`` along axis 1 for every
  dtype, ``(2, 32)``, ``(4, 32)``, ``(4, 128)`` along axes 0 and 1, the 3-d shapes
  ``(2, 32, 16)``, ``(32, 2, 16)``, ``(32, 16, 2)`` along each axis, and ``keep_dims`` on
  ``(32, 32)`` and ``(32, 2, 16)``;
* ``test_generic_reduction``: ``tl.reduce`` with a ``combine_fn`` over a tuple: Welford's
  (mean, m2, weight) on 512 ``torch.rand`` values against ``torch.var_mean(correction=0)``,
  and the one-operand ``_sum_combine`` (``tl.reduce((x,), 0, ...)`` and ``tl.reduce(x, 0,
  ...)``);
* the combiners of ``test_scan2d`` (``get_first_element``, "associative but not
  commutative"; ``linear_recurrence``; ``cummax``, a (value, index) pair), as reductions:
  the reduction is the scan's last element, which is what ``test_scan2d`` checks there.
  ``linear_recurrence`` draws its factors from {-1, 1}, not Triton's {-1, 0, 1}: a zero
  factor restarts the recurrence, so most of a row would not count.

Each ``PortCase`` is one kernel with one ``tile.reduce``, launched as one block (a CTA of
4 or 16 warps, as Triton's ``num_warps``, or one warp, or one thread). Its layouts are
Triton's: registers innermost (``sizePerThread``), then lanes, then warps; the "wrapped"
variants put the registers outermost, as a Triton blocked layout does when the tensor is
larger than the CTA tile; a tensor smaller than the CTA is replicated over the warps. As
in ``tile_mlir.testing.cases``, thread ``t`` loads every place it holds from row ``t`` of
one buffer per src and stores every dst place to row ``t`` of one buffer per dst, so
``check`` sees every replica.

**Where tile-mlir's contract differs from Triton's, the tests hold tile-mlir's.**

* Triton checks ``x[z_ref] == x[z_tri]``: any index of the extremum passes. tile-mlir's
  argmax/argmin gives the smallest index (docs/spec.md): the index must equal numpy's.
* Triton leaves NaN to the comparisons of its combine (``value1 > value2`` is false for a
  NaN, so the result depends on the order). tile-mlir's argmax/argmin follow torch: a NaN
  wins, the first NaN's index and the canonical NaN. The scenarios ``nans``, ``all_nan``
  and ``infinite`` (groups of -inf for argmax, +inf for argmin) test that.
* Triton's ``tl.reduce`` promises nothing for a combiner that is associative but not
  commutative (its scans do: ``test_scan2d``). tile-mlir's (docs/spec.md, "Associativity
  is the user's contract") gives ``f`` over the partials in a documented sequence, the
  same bits on every replica. ``first`` is the lowest coordinate's element on any layout;
  ``linear_recurrence`` and ``cummax`` fold their numpy formula in row-major order where
  that sequence is row-major, else (``out_of_order``: over lanes, or registers outside
  the warps) in the sequence (``combiner_cases.fold_sequence``), on inputs where the two
  orders give different results.
* Triton's dtypes without a tile-mlir counterpart (int8, int16, unsigned) are left out.

Imports no MLIR: test/python/test_triton_reduce_port.py runs the cases in the CPU
interpreter and test/gpu/test_triton_reduce_port_gpu.py on the GPU, from the cache that
``python -m tile_mlir.testing.prepare`` fills.
"""

from __future__ import annotations

import itertools
import math
import os
import zlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import vocab
from ..layout import TileLayout
from ..vocab import CANONICAL_NAN_BITS, DEFAULT_CHIP, WARP_SIZE
from .cases import _copies, _place_index, bits, is_float, narrow, poison, private_type, storage_dtype, widen
from .combiner_cases import fold_sequence, layout_threads

UPSTREAM = "https://github.com/triton-lang/triton/blob/main/python/test/unit/language/test_core.py"
DTYPES = ("i32", "i64", "f16", "f32", "f64", "bf16")  # Triton's dtypes_with_bfloat16 that tile-mlir has
ARG_KINDS = ("argmax", "argmin")
# How a combiner is written: "region" (the contract: the op's region, ending in tile.yield),
# or "func" (``combiner = @f``, a func.func beside the kernel, on the op ``tile.reduce``
# for one operand pair and ``tile.reduce<k>`` for k pairs), the form of a tree whose
# vocabulary has ``reduce_op_name``. TILE_MLIR_COMBINER_FORM=region|func overrides it. The
# tests, ``tile_mlir.testing.prepare`` and ``benchmarks.prepare`` all read it, and so does
# the GPU side (pure Python), so both sides write the same text.
FORM = os.environ.get("TILE_MLIR_COMBINER_FORM", "func" if hasattr(vocab, "reduce_op_name") else "region")


def unsupported() -> str | None:
    """Why this tree's tile_mlir cannot build these kernels (its vocabulary has no argmax
    kind: combiner reductions have not landed), or None. Pure Python, so the compile side
    and the GPU side agree on it."""
    if any(isinstance(v, tuple) and "argmax" in v for v in vars(vocab).values()):
        return None
    return "tile_mlir.vocab names no argmax kind (combiner reductions, issue 17, are not in this tree)"


# --- the combiners (tl.reduce combine_fn), as region text and a numpy meaning ----------------


@dataclass(frozen=True)
class Combiner:
    """A ``combine_fn``: its operand types, its region body (arguments ``%l0.. %r0..``,
    results named in ``yields``) and ``meaning(groups)``: the k results of each group,
    from the k src arrays of shape (groups, n), the reduced elements in the order to fold them."""

    name: str
    types: tuple[str, ...]
    body: tuple[str, ...]
    yields: tuple[str, ...]
    meaning: object
    tolerance: tuple | None = None  # per operand (rtol, atol) against float64, or None: exact


def combiner_reduce(name: str, operands, attrs, operand_types, types, body, yields,
                    form: str = FORM) -> tuple[list[str], list[str]]:
    """A ``tile.reduce`` of ``operands`` (dsts, then srcs; ``operand_types``, ``attrs``)
    that combines with a combiner: arguments ``%l0.. %r0..`` of ``types``, the ``body``
    lines, ``yields``. Returns (the op's lines, the lines of a ``func.func @name`` to put in
    the ``gpu.module``: none for the region form; ``FORM``)."""
    args = ", ".join([f"%l{j}: {t}" for j, t in enumerate(types)] + [f"%r{j}: {t}" for j, t in enumerate(types)])
    signature = f"({', '.join(operand_types)}) -> ()"
    if form == "func":
        op = "tile.reduce" if len(types) == 1 else f"tile.reduce{len(types)}"
        return ([f'"{op}"({", ".join(operands)}) {{combiner = @{name}, {", ".join(attrs)}}}', f"  : {signature}"],
                [f"func.func private @{name}({args}) -> ({', '.join(types)}) {{", *("  " + line for line in body),
                 f"  func.return {', '.join(yields)} : {', '.join(types)}", "}"])
    return ([f'"tile.reduce"({", ".join(operands)}) ({{', f"^bb0({args}):", *("  " + line for line in body),
             f'  "tile.yield"({", ".join(yields)}) : ({", ".join(types)}) -> ()',
             f"}}) {{{', '.join(attrs)}}}", f"  : {signature}"], [])


def _fold(groups, f):
    """The left fold of ``f`` over each group: what the scan's last element is."""
    acc = [g[:, 0] for g in groups]
    for j in range(1, groups[0].shape[1]):
        acc = f(*acc, *(g[:, j] for g in groups))
    return acc


def _welford_meaning(groups):
    x = groups[0].astype(np.float64)
    return [x.mean(axis=1), x.var(axis=1) * x.shape[1], np.full(x.shape[0], float(x.shape[1]))]


COMBINERS = {c.name: c for c in (
    # Triton's _welford_combine: (mean, m2, weight), m2 + m2 + delta * delta * weight_1 * w2_over_w.
    Combiner("welford", ("f32", "f32", "f32"), (
        "%delta = arith.subf %r0, %l0 : f32", "%w = arith.addf %l2, %r2 : f32",
        "%ratio = arith.divf %r2, %w : f32", "%step = arith.mulf %delta, %ratio : f32",
        "%mean = arith.addf %l0, %step : f32", "%mm = arith.addf %l1, %r1 : f32",
        "%dd = arith.mulf %delta, %delta : f32", "%ddw = arith.mulf %dd, %l2 : f32",
        "%ddwr = arith.mulf %ddw, %ratio : f32", "%m2 = arith.addf %mm, %ddwr : f32"),
        # torch.testing.assert_close's f32 tolerance, as Triton's test; it compares m2 / weight
        # (weight = 512) with atol 1e-5, so m2 gets 512 x that.
        ("%mean", "%m2", "%w"), _welford_meaning, tolerance=((1.3e-6, 1e-5), (1.3e-6, 512e-5), None)),
    # Triton's _sum_combine, one operand (tl.reduce((x,), 0, _sum_combine)).
    Combiner("sum", ("f32",), ("%s = arith.addf %l0, %r0 : f32",), ("%s",),
             lambda g: [g[0].astype(np.float64).sum(axis=1)], tolerance=((1.3e-6, 1e-5),)),
    # test_scan2d's get_first_element: associative, not commutative.
    Combiner("first", ("f32",), (), ("%l0",), lambda g: [g[0][:, 0]]),
    # test_scan2d's linear_recurrence: x_i = a_i * x_(i-1) + b_i, on i32 in {-1, 0, 1} (exact).
    Combiner("linear_recurrence", ("i32", "i32"), (
        "%a = arith.muli %l0, %r0 : i32", "%ba = arith.muli %l1, %r0 : i32", "%b = arith.addi %ba, %r1 : i32"),
        ("%a", "%b"), lambda g: _fold(g, lambda a1, b1, a2, b2: (a1 * a2, b1 * a2 + b2))),
    # test_scan2d's cummax: (value, i64 index), the left one only when strictly greater.
    Combiner("cummax", ("i32", "i64"), (
        "%gt = arith.cmpi sgt, %l0, %r0 : i32", "%v = arith.select %gt, %l0, %r0 : i32",
        "%i = arith.select %gt, %l1, %r1 : i64"),
        ("%v", "%i"), lambda g: _fold(g, lambda v1, i1, v2, i2: (np.where(v1 > v2, v1, v2), np.where(v1 > v2, i1, i2)))),
)}


# --- one case ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PortCase:
    name: str  # a valid MLIR symbol, unique in CASES
    upstream: str  # the Triton test and parameters it ports
    exec_scope: str
    src_layout: str
    dst_layout: str
    axes: tuple[int, ...]
    kind: str | None = None  # argmax / argmin; None: ``combiner``
    dtype: str = "f32"  # the src dtype of an argmax/argmin
    combiner: str | None = None
    # A combiner that is associative but not commutative, on a layout whose documented
    # fold visits the reduced coordinates out of row-major order: the reference folds in
    # that order (``sequence``), not numpy's (module docstring).
    out_of_order: bool = False

    # -- operands ----------------------------------------------------------------------------

    @property
    def src_types(self) -> tuple[str, ...]:
        return (self.dtype,) if self.kind else COMBINERS[self.combiner].types

    @property
    def dst_types(self) -> tuple[str, ...]:
        return (self.dtype, "i32") if self.kind else COMBINERS[self.combiner].types

    @cached_property
    def src_tile(self) -> TileLayout:
        return TileLayout.parse(self.src_layout)

    @cached_property
    def dst_tile(self) -> TileLayout:
        return TileLayout.parse(self.dst_layout)

    @property
    def reduced_dims(self) -> tuple[int, ...]:
        return tuple(sorted({a % self.src_tile.rank for a in self.axes}))

    def block(self) -> int:
        """Threads in the launch's one block: the scope's, or the layout's warps for a cta."""
        if self.exec_scope == "cta":
            return WARP_SIZE * (self.src_tile.reach("warpid") + 1)
        return {"thread": 1, "warp": WARP_SIZE}[self.exec_scope]

    # -- the kernel --------------------------------------------------------------------------

    def kernel_text(self, chip: str = DEFAULT_CHIP, form: str = FORM) -> str:
        """``@<name>(%A0.., %B0..)``: thread t loads src j from row t of A<j>, reduces, stores
        dst j to row t of B<j>. A combiner is the op's region ending in ``tile.yield``
        (docs/spec.md); ``form="func"`` writes it as ``combiner = @<name>_combine``, a
        ``func.func`` beside the kernel, instead (``FORM``)."""
        T, ns, nd = self.block(), self.src_tile.span, self.dst_tile.span
        a_types = [f"memref<{T}x{ns}x{t}>" for t in self.src_types]
        b_types = [f"memref<{T}x{nd}x{t}>" for t in self.dst_types]
        s_types = [private_type((ns,), t) for t in self.src_types]
        d_types = [private_type((nd,), t) for t in self.dst_types]
        args = [f"%A{j}: {t}" for j, t in enumerate(a_types)] + [f"%B{j}: {t}" for j, t in enumerate(b_types)]
        body = ["%tid = gpu.thread_id x"] + [f"%c{n} = arith.constant {n} : index" for n in range(max(ns, nd))]
        body += [f"%s{j} = memref.alloca() : {t}" for j, t in enumerate(s_types)]
        body += [f"%d{j} = memref.alloca() : {t}" for j, t in enumerate(d_types)]
        for j, (a, s) in enumerate(zip(a_types, s_types)):
            body += _copies(f"a{j}_", (ns,), f"%A{j}", a, f"%s{j}", s, load_global=True)
        op, func = self._combiner_lines(s_types, d_types, form)
        body += op
        for j, (b, d) in enumerate(zip(b_types, d_types)):
            body += _copies(f"b{j}_", (nd,), f"%B{j}", b, f"%d{j}", d, load_global=False)
        body.append("gpu.return")
        known = f" attributes {{known_block_size = array<i32: {T}, 1, 1>}}"
        return "\n".join([
            f"// Triton port {self.name}: {self.upstream}; one block of {T} thread(s).",
            "module attributes {gpu.container_module} {",
            f'  gpu.module @kernels [#nvvm.target<chip = "{chip}">] {{',
            *("    " + line for line in func),
            f"    gpu.func @{self.name}({', '.join(args)}) kernel{known} {{",
            *("      " + line for line in body), "    }", "  }", "}", ""])

    def _combiner_lines(self, s_types, d_types, form: str) -> tuple[list[str], list[str]]:
        operands = [f"%d{j}" for j in range(len(d_types))] + [f"%s{j}" for j in range(len(s_types))]
        attrs = [f'exec_scope = "{self.exec_scope}"', f"axes = array<i64: {', '.join(map(str, self.axes))}>",
                 "accum = false", f'src_layout = #tile.layout<"{self.src_layout}">',
                 f'dst_layout = #tile.layout<"{self.dst_layout}">']
        if self.kind:
            return [f'"tile.reduce"({", ".join(operands)}) {{kind = "{self.kind}", {", ".join(attrs)}}}',
                    f"  : ({', '.join(d_types + s_types)}) -> ()"], []
        c = COMBINERS[self.combiner]
        return combiner_reduce(f"{self.name}_combine", operands, attrs, d_types + s_types, c.types, c.body, c.yields, form)

    # -- host buffers ------------------------------------------------------------------------

    @cached_property
    def _src_index(self):
        return _place_index(self.src_tile, self.block())

    @cached_property
    def _dst_index(self):
        return _place_index(self.dst_tile, self.block())

    def pack(self, xs: list[np.ndarray]) -> list[np.ndarray]:
        """The logical srcs -> one ``A[threads, span]`` buffer per src, every place filled."""
        out = []
        for x, t in zip(xs, self.src_types):
            buf = poison(t, (self.block(), self.src_tile.span))
            coord, row, slot, _ = self._src_index
            buf[row, slot] = np.asarray(x, storage_dtype(t)).reshape(-1)[coord]
            out.append(buf)
        return out

    def outputs(self) -> list[np.ndarray]:
        """The dst buffers to launch with, poisoned."""
        return [poison(t, (self.block(), self.dst_tile.span)) for t in self.dst_types]

    # -- the reference -----------------------------------------------------------------------

    def groups(self, x: np.ndarray) -> np.ndarray:
        """(dst elements, reduced elements): each dst element's src elements, the reduced
        coordinates in row-major order (the order that defines argmax's index)."""
        x = np.asarray(x)
        kept = [d for d in range(x.ndim) if d not in self.reduced_dims]
        return np.transpose(x, kept + list(self.reduced_dims)).reshape(math.prod(self.dst_tile.shape), -1)

    @cached_property
    def sequence(self) -> np.ndarray:
        """Per row of ``groups``, its columns in the order docs/spec.md's fold meets them."""
        return fold_sequence(self.groups(layout_threads(self.src_tile)))

    def expected(self, xs: list[np.ndarray], row_major: bool = False) -> list[np.ndarray]:
        """Each dst's logical values: float64/int64, argmax's value in the src dtype's
        storage. A combiner folds in row-major order, an ``out_of_order`` one in
        ``sequence`` unless ``row_major``."""
        shape = self.dst_tile.shape
        if self.kind:
            g = self.groups(widen(xs[0], self.dtype))
            index = (np.argmax if self.kind == "argmax" else np.argmin)(g, axis=1)  # first extremum, first NaN
            value = np.take_along_axis(self.groups(np.asarray(xs[0], storage_dtype(self.dtype))), index[:, None], 1)[:, 0]
            return [value.reshape(shape), index.reshape(shape)]
        c = COMBINERS[self.combiner]
        groups = [self.groups(widen(x, t)) for x, t in zip(xs, c.types)]
        if self.out_of_order and not row_major:
            groups = [np.take_along_axis(g, self.sequence, 1) for g in groups]
        return [np.asarray(r).reshape(shape) for r in c.meaning(groups)]

    def check(self, xs: list[np.ndarray], bs: list[np.ndarray]) -> list[str]:
        """Every mismatch of the dst buffers ``bs`` (every replica of every element) against
        ``expected(xs)``; empty when right."""
        problems = []
        tolerances = (None, None) if self.kind else (COMBINERS[self.combiner].tolerance or (None,) * len(bs))
        coords = list(itertools.product(*map(range, self.dst_tile.shape)))
        k_idx, row, slot, thread = self._dst_index
        for j, (b, t, want, tolerance) in enumerate(zip(bs, self.dst_types, self.expected(xs), tolerances)):
            arg_value = self.kind is not None and j == 0  # argmax's value: in the src's storage
            raw = bits(b, t)[row, slot]
            for k in range(len(coords)):
                held = raw[k_idx == k]
                got = np.asarray(b, storage_dtype(t))[row[k_idx == k], slot[k_idx == k]]
                where = f"dst {j} ({t}) at {list(coords[k])}"
                if len(set(held.tolist())) > 1:
                    problems.append(f"{where}: its {len(held)} replicas differ: {sorted(set(hex(h) for h in held.tolist()))}")
                    continue
                if not _agrees(got[0], held[0], want.reshape(-1)[k], t, arg_value, tolerance):
                    problems.append(f"{where}: got {_show(got[0], t, True)}, expected {_show(want.reshape(-1)[k], t, arg_value)}"
                                    + (f" (thread {thread[k_idx == k][0]})" if len(held) else ""))
        return problems

    # -- inputs --------------------------------------------------------------------------------

    def scenarios(self) -> tuple[str, ...]:
        if self.kind and is_float(self.dtype):
            return ("triton", "ties", "nans", "all_nan", "infinite")
        return ("triton", "ties") if self.kind else ("triton",)

    def inputs(self, seed: int) -> list[tuple[str, list[np.ndarray]]]:
        """``(scenario, srcs)`` for each of ``scenarios()``, from a stream of its own. An
        ``out_of_order`` case draws again, at most 20 times, until ``order_shows``: with
        two rows of 1024, cummax's orders agree on about 1 draw in 8."""
        rng = np.random.default_rng([seed, zlib.crc32(self.name.encode())])
        out = []
        for s in self.scenarios():
            xs = self._draw(s, rng)
            for _ in range(20 if self.out_of_order else 0):
                if self.order_shows(xs):
                    break
                xs = self._draw(s, rng)
            out.append((s, xs))
        return out

    def order_shows(self, xs: list[np.ndarray]) -> int:
        """How many dst values the documented order's reference and row-major's differ in."""
        return sum(int(np.sum(a != b)) for a, b in zip(self.expected(xs), self.expected(xs, row_major=True)))

    def _draw(self, scenario: str, rng) -> list[np.ndarray]:
        shape = self.src_tile.shape
        if not self.kind:
            return _combiner_inputs(self.combiner, shape, rng, self)
        t = self.dtype
        if not is_float(t):  # Triton's numpy_random: the dtype's whole range
            info = np.iinfo(storage_dtype(t))
            x = rng.integers(info.min, info.max, shape, dtype=storage_dtype(t), endpoint=True)
        else:
            x = narrow(rng.standard_normal(shape), t)
        g = self.groups(np.arange(x.size).reshape(shape))  # flat positions of each group's elements
        flat = x.reshape(-1).copy()
        pick = np.argmax if self.kind == "argmax" else np.argmin
        for row in g:
            if scenario == "triton":  # test_reduce1d plants ties at 3..9; test_reduce plants none
                if x.ndim == 1 and row.size >= 10:
                    flat[row[3:10]] = flat[row[pick(widen(flat[row], t))]]
            elif scenario == "ties":
                where = rng.choice(row.size, size=max(2, row.size // 8), replace=False)
                flat[row[where]] = flat[row[pick(widen(flat[row], t))]]
            elif scenario == "nans":
                flat[row[rng.choice(row.size, size=max(2, row.size // 8), replace=False)]] = narrow(np.nan, t)
            elif scenario == "all_nan":
                flat[row] = narrow(np.full(row.size, np.nan), t)
            elif scenario == "infinite":
                flat[row] = narrow(np.full(row.size, -np.inf if self.kind == "argmax" else np.inf), t)
        return [flat.reshape(shape)]


def _combiner_inputs(name: str, shape, rng, case: PortCase) -> list[np.ndarray]:
    if name == "welford":  # torch.rand: mean = x, m2 = 0, weight = 1
        x = rng.random(shape).astype(np.float32)
        return [x, np.zeros(shape, np.float32), np.ones(shape, np.float32)]
    if name == "sum":
        return [rng.random(shape).astype(np.float32)]
    if name == "first":
        return [rng.standard_normal(shape).astype(np.float32)]
    if name == "linear_recurrence":  # Triton: randint(-1, 2); a = 0 restarts the recurrence, so a is +-1 here
        return [rng.choice(np.array([-1, 1], np.int32), shape), rng.integers(-1, 2, shape).astype(np.int32)]
    # cummax: few distinct values (ties), and each element's coordinate along the reduced axis
    index = np.indices(shape)[case.reduced_dims[0]].astype(np.int64)
    return [rng.integers(-4, 4, shape).astype(np.int32), index]


def _agrees(got, raw, want, dtype: str, arg_value: bool, tolerance) -> bool:
    if is_float(dtype):
        w = float(widen(np.asarray(want, storage_dtype(dtype)), dtype) if arg_value else want)
        if np.isnan(w):
            return int(raw) == CANONICAL_NAN_BITS[dtype] if arg_value else bool(np.isnan(widen(got, dtype)))
        g = float(widen(got, dtype))
        if tolerance is not None:
            return abs(g - w) <= tolerance[1] + tolerance[0] * abs(w)
        return g == w
    return int(got) == int(want)


def _show(v, dtype: str, storage: bool) -> str:
    """A value for a message: ``v`` in the dtype's storage (bits for bf16), or already wide."""
    wide = widen(np.asarray(v, storage_dtype(dtype)), dtype)[()] if storage else v
    return repr(float(wide)) if is_float(dtype) else str(int(wide))


def run_case(case: PortCase, backend: str, seed: int, form: str = FORM) -> list[str]:
    """Compile ``case`` (the GPU: from the compile cache), launch it on every scenario's
    inputs and check (an ``out_of_order`` case also that its inputs tell its order from
    row-major order); every problem, prefixed by its scenario."""
    import tile_mlir

    text = case.kernel_text(DEFAULT_CHIP, form)
    kernel = tile_mlir.compile(text, {"chip": DEFAULT_CHIP}, backend=backend)[case.name]
    problems = []
    for scenario, xs in case.inputs(seed):
        bs = case.outputs()
        kernel.launch(1, case.block(), *case.pack(xs), *bs)
        problems += [f"[{scenario}] {p}" for p in case.check(xs, bs)]
        if case.out_of_order and not case.order_shows(xs):
            problems.append(f"[{scenario}] the inputs cannot tell the documented order from row-major order")
    return problems


# --- layouts: Triton's blocked layouts in tile-mlir's notation ---------------------------------
#
# A layout is given per dim as its iters, outer first: (extent, where), ``where`` a thread
# stride such as "1@laneid" or "m" for registers, whose strides are filled in row-major
# over the register iters. ``_layouts`` derives the dst: the kept dims' iters (a reduced
# dim kept with extent 1 under ``keep``), replicated over the src's replicas and every
# thread iter of the reduced dims.

Iters = list[tuple[int, str]]


def _registers(dims: list[Iters]) -> list[Iters]:
    regs = [e for d in dims for e, w in d if w == "m"]
    strides = [math.prod(regs[i + 1:]) for i in range(len(regs))]
    out, i = [], 0
    for d in dims:
        row = []
        for e, w in d:
            if w == "m":
                w, i = str(strides[i]), i + 1
            row.append((e, w))
        out.append(row)
    return out


def _mode(iters: Iters) -> tuple[str, str]:
    if len(iters) == 1:
        return str(iters[0][0]), iters[0][1]
    return f"({', '.join(str(e) for e, _ in iters)})", f"({', '.join(w for _, w in iters)})"


def _text(dims: list[Iters], replica: Iters) -> str:
    modes = [_mode(d) for d in _registers(dims)]
    if len(modes) == 1:
        e, s = modes[0]
        shard = f"S[{e} : {s}]" if len(dims[0]) == 1 else f"S[({e}) : ({s})]"
    else:
        shard = f"S[({', '.join(e for e, _ in modes)}) : ({', '.join(s for _, s in modes)})]"
    if not replica:
        return shard
    e, s = _mode(replica)
    return f"{shard} + R[{e} : {s}]"


def _layouts(dims: list[Iters], replica: Iters, axes: tuple[int, ...], keep: bool) -> tuple[str, str]:
    reduced = {a % len(dims) for a in axes}
    kept = [[(1, "m")] if i in reduced else d for i, d in enumerate(dims) if keep or i not in reduced]
    threads = replica + [(e, w) for i in sorted(reduced) for e, w in dims[i] if w != "m"]
    return _text(dims, replica), _text(kept or [[(1, "m")]], threads)


def _blocked_1d(n: int, warps: int, wrapped: bool = False) -> tuple[list[Iters], Iters]:
    """n elements over ``warps`` warps, as Triton's 1-d blocked layout: registers
    innermost (``wrapped``: outermost), then lanes, then warps; a tensor smaller than the
    CTA is replicated over the warps it does not fill."""
    lanes = [(WARP_SIZE, "1@laneid")]
    if n < WARP_SIZE * warps:
        used = n // WARP_SIZE
        on = [(used, "1@warpid")] if used > 1 else []
        return [on + lanes], ([(warps // used, f"{used}@warpid")] if warps // used > 1 else [])
    regs = [(n // (WARP_SIZE * warps), "m")] if n > WARP_SIZE * warps else []
    threads = ([(warps, "1@warpid")] if warps > 1 else []) + lanes
    return [regs + threads if wrapped else threads + regs], []


def _dtype_name(t: str) -> str:
    return {"i32": "int32", "i64": "int64", "f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16"}[t]


def _argcases() -> list[PortCase]:
    out = []
    for kind, t in itertools.product(ARG_KINDS, DTYPES):
        test = f"{kind}-tie-break-left"
        for n, wrapped in ((32, False), (64, False), (128, False), (512, False), (512, True)):
            dims, rep = _blocked_1d(n, 4, wrapped)
            src, dst = _layouts(dims, rep, (0,), True)
            out.append(PortCase(f"tp_r1d_{kind}_{t}_{n}{'_wrap' if wrapped else ''}",
                                f"test_reduce1d[{test}-{_dtype_name(t)}-{n}], num_warps=4", "cta", src, dst, (0,), kind, t))
        for wrapped in (False, True):  # test_reduce's reduce_configs1: (1, 1024) along axis 1, every dtype
            regs, threads = [(8, "m")], [(4, "1@warpid"), (WARP_SIZE, "1@laneid")]
            src, dst = _layouts([[(1, "m")], regs + threads if wrapped else threads + regs], [], (1,), False)
            out.append(PortCase(f"tp_r2d_{kind}_{t}_1x1024{'_wrap' if wrapped else ''}",
                                f"test_reduce[{kind}-{_dtype_name(t)}-(1, 1024)-1-False]", "cta", src, dst, (1,), kind, t))
        if t in ("f32", "bf16", "i32"):  # one warp per row, one thread (num_warps=1, and in-thread only)
            for n in (32, 64):
                src, dst = _layouts(_blocked_1d(n, 1)[0], [], (0,), True)
                out.append(PortCase(f"tp_r1d_warp_{kind}_{t}_{n}", f"test_reduce1d[{test}-{_dtype_name(t)}-{n}], num_warps=1",
                                    "warp", src, dst, (0,), kind, t))
            src, dst = _layouts([[(32, "m")]], [], (0,), True)
            out.append(PortCase(f"tp_r1d_thread_{kind}_{t}_32", f"test_reduce1d[{test}-{_dtype_name(t)}-32], one thread",
                                "thread", src, dst, (0,), kind, t))
    # test_reduce's float32 configurations: 2-d along each axis, 3-d along each axis, keep_dims.
    shapes = {
        (2, 32): ([[(2, "1@warpid")], [(WARP_SIZE, "1@laneid")]], [(2, "2@warpid")]),
        (4, 32): ([[(4, "1@warpid")], [(WARP_SIZE, "1@laneid")]], []),
        (4, 128): ([[(4, "1@warpid")], [(WARP_SIZE, "1@laneid"), (4, "m")]], []),
        (32, 32): ([[(4, "1@warpid"), (8, "m")], [(WARP_SIZE, "1@laneid")]], []),
        (2, 32, 16): ([[(2, "m")], [(WARP_SIZE, "1@laneid")], [(4, "1@warpid"), (4, "m")]], []),
        (32, 2, 16): ([[(WARP_SIZE, "1@laneid")], [(2, "1@warpid")], [(2, "2@warpid"), (8, "m")]], []),
        (32, 16, 2): ([[(4, "1@warpid"), (8, "4@laneid")], [(4, "1@laneid"), (4, "m")], [(2, "m")]], []),
    }
    runs = [(s, a, False) for s in ((2, 32), (4, 32), (4, 128)) for a in (0, 1)]
    runs += [(s, a, False) for s in ((2, 32, 16), (32, 2, 16), (32, 16, 2)) for a in (0, 1, 2)]
    runs += [((32, 32), a, True) for a in (0, 1)] + [((32, 2, 16), a, True) for a in (0, 1, 2)]
    for kind, (shape, axis, keep) in itertools.product(ARG_KINDS, runs):
        src, dst = _layouts(*shapes[shape], (axis,), keep)
        tag = "x".join(map(str, shape))
        out.append(PortCase(f"tp_r{len(shape)}d_{kind}_f32_{tag}_a{axis}{'_keep' if keep else ''}",
                            f"test_reduce[{kind}-float32-{shape}-{axis}-{keep}]", "cta", src, dst, (axis,), kind, "f32"))
    # A row per warp: test_reduce's (4, 32) along axis 1 with the rows in registers.
    for kind in ARG_KINDS:
        src, dst = _layouts([[(4, "m")], [(WARP_SIZE, "1@laneid")]], [], (1,), False)
        out.append(PortCase(f"tp_r2d_warp_{kind}_f32_4x32_a1", f"test_reduce[{kind}-float32-(4, 32)-1-False], num_warps=1",
                            "warp", src, dst, (1,), kind, "f32"))
    return out


def _combiner_cases() -> list[PortCase]:
    out = []
    for name in ("welford", "sum"):  # test_generic_reduction: SIZE = 512, num_warps = 4
        for tag, (dims, rep), scope in (("", _blocked_1d(512, 4), "cta"), ("_wrap", _blocked_1d(512, 4, True), "cta"),
                                        ("_warp", _blocked_1d(512, 1), "warp")):
            src, dst = _layouts(dims, rep, (0,), True)
            out.append(PortCase(f"tp_generic_{name}_512{tag}", f"test_generic_reduction ({name}), SIZE=512",
                                scope, src, dst, (0,), combiner=name))
    # test_scan2d's shapes, with 4 and 16 warps (and one thread): (shape, axis, warps) ->
    # (dims, replica, whether the documented fold visits the reduced coordinates in order).
    # Out of order: lanes (a butterfly pairs them from the highest lane bit), and
    # registers that are not the lowest digits of the coordinate (a thread folds its own
    # first).
    lanes = (WARP_SIZE, "1@laneid")
    scans = {
        ((8, 32), 1, 4): ([[(4, "1@warpid"), (2, "m")], [lanes]], [], False),
        ((8, 32), 0, 4): ([[(4, "1@warpid"), (2, "m")], [lanes]], [], True),
        ((64, 8), 0, 16): ([[(16, "1@warpid"), (4, "m")], [(8, "m")]], [lanes], True),
        ((16, 8), 1, 0): ([[(16, "m")], [(8, "m")]], [], True),
        ((2, 1024), 1, 16): ([[(2, "m")], [(16, "1@warpid"), lanes, (2, "m")]], [], False),
        ((1024, 2), 0, 16): ([[(16, "1@warpid"), lanes, (2, "m")], [(2, "m")]], [], False),
        ((32, 32), 0, 4): ([[(8, "m"), (4, "1@warpid")], [lanes]], [], False),
    }
    for name, ((shape, axis, warps), (dims, rep, in_order)) in itertools.product(
            ("first", "linear_recurrence", "cummax"), scans.items()):
        src, dst = _layouts(dims, rep, (axis,), False)
        tag = "x".join(map(str, shape))
        out.append(PortCase(f"tp_scan_{name}_{tag}_a{axis}_{f'w{warps}' if warps else 'thread'}",
                            f"test_scan2d[{name}-{shape}-axis {axis}-num_warps {warps}], as a reduction",
                            "cta" if warps else "thread", src, dst, (axis,), combiner=name,
                            out_of_order=not in_order and name != "first"))
    return out


CASES = tuple(_argcases() + _combiner_cases())
