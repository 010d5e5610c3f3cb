"""The conformance matrix of the ``shared`` variant: tiles in workgroup memory.

Each ``SharedCase`` is one ``tile.reduce`` whose operands are workgroup buffers, in a
complete kernel (``kernel_text``), plus what it takes to run it and judge the result
with numpy alone. Like ``cases``, whose packing, references, special inputs and checks
it reuses (through ``logical``, the same reduction as a one-thread ``ReduceCase``), this
module imports no MLIR, so it runs on the GPU machine.

The kernel ``@<name>(%A: memref<NSRC x dt>, %B: memref<NDST x dt>)``, launched as one
block of ``case.block`` threads (its ``known_block_size``), does::

    src, dst: workgroup memref.globals of the case's shapes
    every thread of the block: src <- A, dst <- B           (row-major, element i by
                                                             thread i mod block)
    gpu.barrier
    the threads of the scope's instance ``case.instance`` (all of them, unless the
    case is a sub-scope one: one warp of 8, one warpgroup of 2, one thread of 256):
        "tile.reduce"(dst, src) {...}
        B <- dst, element i by the instance's thread T - 1 - (i mod T)

So B is the logical dst, flat, after the launch. dst always starts as B: the old values
with accum, else ``cases.poison``, so that an element the op never writes shows as
poison. The threads that copy dst out (in reverse) are not the ones that wrote it (lane
0 of each group), so the result is only right, and the interpreter only race-free, if
the op's own barrier makes dst visible to its whole scope.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..vocab import (
    CANONICAL_NAN_BITS,
    DEFAULT_CHIP,
    FLOAT_DTYPES,
    KINDS,
    SCOPE_THREADS,
    shared_group_size,
)
from .cases import ReduceCase, bits, narrow, poison, storage_dtype, widen
from .cases import special_inputs as logical_special_inputs

# (tag, src shape, axes, dst shape): the seed's shared matrix, and one for a block
# of 48 threads (16-lane groups, the second one in a partial warp).
SHAPES = (
    ("32x32_rows", (32, 32), (1,), (32,)),
    ("32x32_cols", (32, 32), (0,), (32,)),
    ("8x16x2x22", (8, 16, 2, 22), (2, 3), (8, 16)),
    ("4x8x6", (4, 8, 6), (1,), (4, 6)),
    ("32x7", (32, 7), (1,), (32,)),
)
ODD_SHAPE = ("3x40", (3, 40), (1,), (3,))

CTA_BLOCK = 256  # a cta case's block: 8 warps
SUB_BLOCK = 256  # the block of a sub-scope case


@dataclass(frozen=True)
class SharedCase:
    """One ``tile.reduce`` over workgroup tiles in a kernel; see the module docstring."""

    name: str  # a valid MLIR symbol, unique in SHARED_CASES
    kind: str
    dtype: str
    exec_scope: str  # thread warp warpgroup cta
    axes: tuple[int, ...]
    accum: bool
    src_shape: tuple[int, ...]
    dst_shape: tuple[int, ...]
    block: int  # threads in the block
    instance: int = 0  # which instance of the scope runs the op (a sub-scope case: > 0)
    special: bool = False  # also run with cases.special_inputs

    def threads(self) -> int:
        """The block size (what to launch with)."""
        return self.block

    @property
    def scope_threads(self) -> int:
        """T: the threads of one instance of the scope."""
        return self.block if self.exec_scope == "cta" else SCOPE_THREADS[self.exec_scope]

    @cached_property
    def logical(self) -> ReduceCase:
        """The same reduction as a one-thread register case: its reference, special
        inputs and ``check`` judge this case (B is its one thread's dst)."""
        return ReduceCase(
            self.name, self.kind, self.dtype, "thread", self.axes, self.accum,
            self.src_shape, self.dst_shape, special=self.special,
        )  # fmt: skip

    # -- host buffers -------------------------------------------------------------------

    def random_inputs(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return self.logical.random_inputs(rng)

    def input_buffer(self, x: np.ndarray) -> np.ndarray:
        """A, from the logical src tensor."""
        return np.ascontiguousarray(x, dtype=storage_dtype(self.dtype)).reshape(-1)

    def output_buffer(self, old: np.ndarray | None) -> np.ndarray:
        """B to launch with: the old values with accum, else poison."""
        if self.accum:
            return np.array(old, dtype=storage_dtype(self.dtype)).reshape(-1)
        return poison(self.dtype, math.prod(self.dst_shape))

    def check(self, x: np.ndarray, old: np.ndarray | None, b: np.ndarray, fold: str = "linear") -> list[str]:
        """Every mismatch between B and the reference (``cases.ReduceCase.check``: NaN,
        signed zeros, sum bounds), then every element whose bits are not those of the
        documented order (``ordered``)."""
        problems = self.logical.check(x, old, np.asarray(b).reshape(1, -1))
        want, got = bits(self.ordered(x, old, fold), self.dtype), bits(b, self.dtype).reshape(-1)
        for e in np.flatnonzero(want != got)[:8]:
            problems.append(f"dst[{e}]: bits 0x{int(got[e]):x}, the documented {fold} order gives 0x{int(want[e]):x}")
        return problems

    def ordered(self, x: np.ndarray, old: np.ndarray | None, fold: str = "linear") -> np.ndarray:
        """The flat dst, bit for bit, as the ``shared`` variant's documented order makes it
        (docs/lowering-shared.md): per dst element, G lanes each fold every G-th term (in
        order; ``tree``: pairwise), a butterfly over the lanes, highest bit first, read at
        lane 0, then accum; every combine rounds to the dtype; a NaN result is canonical."""
        logical = self.logical
        red = list(logical.reduced_dims)
        v = widen(x, self.dtype)
        kept = [d for d in range(v.ndim) if d not in red]
        terms = np.transpose(v, kept + red).reshape(math.prod(self.dst_shape), -1)
        G = shared_group_size(terms.shape[0], terms.shape[1], self.scope_threads)
        olds = widen(old, self.dtype).reshape(-1) if self.accum else None
        out = np.empty(terms.shape[0])
        for e, row in enumerate(terms):
            lanes = [self._fold(list(row[j::G]), fold) for j in range(G)]
            step = G // 2
            while step:
                lanes = [self._op(lanes[j], lanes[j ^ step]) for j in range(G)]
                step //= 2
            out[e] = lanes[0] if olds is None else self._op(olds[e], lanes[0])
        result = bits(narrow(out, self.dtype), self.dtype)
        result[np.isnan(out)] = CANONICAL_NAN_BITS[self.dtype]
        return result.view(storage_dtype(self.dtype))

    def _fold(self, values: list, fold: str) -> float:
        if fold != "tree":
            acc = values[0]
            for v in values[1:]:
                acc = self._op(acc, v)
            return acc
        while len(values) > 1:
            pairs = [self._op(a, b) for a, b in zip(values[0::2], values[1::2])]
            values = pairs + values[len(pairs) * 2 :]
        return values[0]

    def _op(self, a: float, b: float) -> float:
        """One combine of two dtype values (held as float64), rounded to the dtype.

        max/min ignore NaN, maximum/minimum propagate it, and all four order -0 below +0
        (docs/spec.md, "NaN and signed zeros")."""
        if self.kind == "sum":
            with np.errstate(invalid="ignore"):  # inf - inf is NaN, as on the GPU
                return float(widen(narrow(np.float64(a) + np.float64(b), self.dtype), self.dtype))
        if math.isnan(a) or math.isnan(b):
            if self.kind in ("max", "min") and not (math.isnan(a) and math.isnan(b)):
                return b if math.isnan(a) else a
            return math.nan
        if a == b == 0:  # -0 < +0
            negative = math.copysign(1, a) < 0, math.copysign(1, b) < 0
            keep_negative = all(negative) if self.kind in ("max", "maximum") else any(negative)
            return -0.0 if keep_negative else 0.0
        return max(a, b) if self.kind in ("max", "maximum") else min(a, b)

    # -- the kernel ---------------------------------------------------------------------

    def kernel_text(self, chip: str = DEFAULT_CHIP) -> str:
        """A complete module: ``gpu.module @kernels`` with the kernel ``@<name>``."""
        dt, n_src, n_dst = self.dtype, math.prod(self.src_shape), math.prod(self.dst_shape)
        a_type, b_type = f"memref<{n_src}x{dt}>", f"memref<{n_dst}x{dt}>"
        src_type, dst_type = _workgroup_type(self.src_shape, dt), _workgroup_type(self.dst_shape, dt)
        k = _Kernel()
        body = ["%tid = gpu.thread_id x"]
        body += [f"%src = memref.get_global @{self.name}_src : {src_type}",
                 f"%dst = memref.get_global @{self.name}_dst : {dst_type}"]  # fmt: skip
        body.append("// A -> src, B -> dst (old values or poison): every thread of the block")
        body += k.copy("a", n_src, self.block, "%tid", ("%A", a_type, None), ("%src", src_type, self.src_shape))
        body += k.copy("o", n_dst, self.block, "%tid", ("%B", b_type, None), ("%dst", dst_type, self.dst_shape))
        body.append("gpu.barrier")
        attrs = ", ".join([
            f'kind = "{self.kind}"', f'exec_scope = "{self.exec_scope}"',
            f"axes = array<i64: {', '.join(map(str, self.axes))}>",
            f"accum = {'true' if self.accum else 'false'}",
        ])  # fmt: skip
        T = self.scope_threads
        if T == self.block:
            scoped, t = [], "%tid"
        else:  # a sub-scope case: only the threads of instance ``self.instance``
            t = "%c0" if T == 1 else "%ts"
            scoped = [f"%inst = arith.divui %tid, {k.const(T)} : index"] if T > 1 else []
            scoped.append(f"%mine = arith.cmpi eq, {'%inst' if T > 1 else '%tid'}, {k.const(self.instance)} : index")
            if T > 1:
                scoped.append(f"%ts = arith.remui %tid, {k.const(T)} : index")
        k.const(0)
        op = [f'"tile.reduce"(%dst, %src) {{{attrs}}} : ({dst_type}, {src_type}) -> ()',
              f"// dst -> B: the {self.exec_scope}'s threads, in reverse order"]  # fmt: skip
        if T > 1:
            op.append(f"%tr = arith.subi {k.const(T - 1)}, {t} : index")
            t = "%tr"
        op += k.copy("b", n_dst, T, t, ("%dst", dst_type, self.dst_shape), ("%B", b_type, None))
        if scoped:
            body += scoped + ["scf.if %mine {"] + ["  " + line for line in op] + ["}"]
        else:
            body += op
        body.append("gpu.return")
        where = f"; {self.exec_scope} {self.instance} runs the op" if T != self.block else ""
        lines = [
            f"// Conformance case {self.name} (shared): one block of {self.block} thread(s){where}.",
            "module attributes {gpu.container_module} {",
            f'  gpu.module @kernels [#nvvm.target<chip = "{chip}">] {{',
            f'    memref.global "private" @{self.name}_src : {src_type}',
            f'    memref.global "private" @{self.name}_dst : {dst_type}',
            (f"    gpu.func @{self.name}(%A: {a_type}, %B: {b_type}) kernel "
             f"attributes {{known_block_size = array<i32: {self.block}, 1, 1>}} {{"),
            *("      " + line for line in k.constants() + body),
            "    }",
            "  }",
            "}",
        ]
        return "\n".join(lines) + "\n"


class _Kernel:
    """The index constants a kernel's text uses (declared once, at its top) and its copies."""

    def __init__(self):
        self._values: set[int] = set()
        self._copies = 0

    def const(self, v: int) -> str:
        self._values.add(v)
        return f"%c{v}"

    def constants(self) -> list[str]:
        return [f"%c{v} = arith.constant {v} : index" for v in sorted(self._values)]

    def copy(self, p: str, n: int, threads: int, t: str, source, target) -> list[str]:
        """Element i of n from ``source`` to ``target`` by thread ``t`` = i mod ``threads``.

        ``source`` and ``target`` are (value, type, shape); a shape of None is the flat
        global buffer, else the flat index is split row-major over the shape.
        """
        one, rounds = self.const(1), -(-n // threads)
        i = f"%{p}i"
        lines = [
            f"scf.for {i} = {self.const(0)} to {self.const(rounds)} step {one} {{",
            f"  %{p}f = arith.muli {i}, {self.const(threads)} : index",
            f"  %{p}x = arith.addi %{p}f, {t} : index",
            f"  %{p}ok = arith.cmpi ult, %{p}x, {self.const(n)} : index",
            f"  scf.if %{p}ok {{",
        ]
        inner = []
        value, type_, shape = source
        inner += self._unflatten(f"{p}s", f"%{p}x", shape)
        inner.append(f"%{p}v = memref.load {value}[{self._indices(f'{p}s', f'%{p}x', shape)}] : {type_}")
        value, type_, shape = target
        inner += self._unflatten(f"{p}d", f"%{p}x", shape)
        inner.append(f"memref.store %{p}v, {value}[{self._indices(f'{p}d', f'%{p}x', shape)}] : {type_}")
        return lines + ["    " + line for line in inner] + ["  }", "}"]

    def _unflatten(self, p: str, flat: str, shape) -> list[str]:
        """``%<p>q<d>`` (the flat index over dims 0..d) and ``%<p>r<d>`` (dim d's index)."""
        if shape is None or len(shape) == 1:
            return []
        lines, q = [], flat
        for d in range(len(shape) - 1, 0, -1):
            lines.append(f"%{p}r{d} = arith.remui {q}, {self.const(shape[d])} : index")
            lines.append(f"%{p}q{d} = arith.divui {q}, {self.const(shape[d])} : index")
            q = f"%{p}q{d}"
        return lines

    @staticmethod
    def _indices(p: str, flat: str, shape) -> str:
        if shape is None or len(shape) == 1:
            return flat
        return ", ".join([f"%{p}q1"] + [f"%{p}r{d}" for d in range(1, len(shape))])


def _workgroup_type(shape, dtype: str) -> str:
    return f"memref<{'x'.join(map(str, shape))}x{dtype}, #gpu.address_space<workgroup>>"


# --- the matrix ----------------------------------------------------------------------------

SCOPE_ORDER = ("thread", "warp", "warpgroup", "cta")
# A sub-scope case's scope -> the instance that runs the op in a block of SUB_BLOCK.
SUB_SCOPES = {"warp": 5, "warpgroup": 1, "thread": 77}


def shared_case(tag: str, kind: str, dtype: str, accum: bool, scope: str, *, instance: int | None = None,
                block: int | None = None, special: bool = False) -> SharedCase:
    """A case over one of ``SHAPES`` (or ``ODD_SHAPE``); ``instance`` makes it a sub-scope
    case in a block of SUB_BLOCK threads."""
    _, src, axes, dst = next(s for s in (*SHAPES, ODD_SHAPE) if s[0] == tag)
    whole = CTA_BLOCK if scope == "cta" else SCOPE_THREADS[scope]  # the block of a plain case
    if block is None:
        block = SUB_BLOCK if instance is not None else whole
    parts = ["shared", scope, dtype, kind, tag]
    parts += [f"of{block}"] if block != whole else []
    parts += [f"at{instance}"] if instance is not None else []
    parts += ["accum"] * accum + ["special"] * special
    return SharedCase("_".join(parts), kind, dtype, scope, axes, accum, src, dst, block, instance or 0, special)


def _matrix() -> tuple[SharedCase, ...]:
    cases: dict[str, SharedCase] = {}

    def add(case: SharedCase) -> None:
        if cases.setdefault(case.name, case) != case:
            raise AssertionError(f"two different cases named {case.name}")

    # The seed's matrix: every shape, f32 and f16, sum/max/min, accum on and off; the
    # scope cycles, so every shape meets every scope across the combinations.
    n = 0
    for tag, *_ in SHAPES:
        for dtype in ("f32", "f16"):
            for kind in ("sum", "max", "min"):
                for accum in (False, True):
                    add(shared_case(tag, kind, dtype, accum, SCOPE_ORDER[n % 4]))
                    n += 1
    # Every shape at every scope, in f32 sums.
    for tag, *_ in SHAPES:
        for scope in SCOPE_ORDER:
            add(shared_case(tag, "sum", "f32", False, scope))
    # Sub-scopes: one warp of 8, one warpgroup of 2, one thread of 256.
    for scope, instance in SUB_SCOPES.items():
        for tag, kind, accum in (("32x32_rows", "sum", True), ("4x8x6", "max", False), ("32x7", "min", True)):
            add(shared_case(tag, kind, "f32", accum, scope, instance=instance))
    # A block of 48 threads: 16-lane groups, one of them in the partial second warp.
    add(shared_case("3x40", "sum", "f32", True, "cta", block=48))
    # NaN, infinities and signed zeros: every kind and float dtype, every scope.
    n = 0
    for dtype in FLOAT_DTYPES:
        for kind in KINDS:
            add(shared_case("32x7" if n % 2 else "4x8x6", kind, dtype, n % 3 == 0, SCOPE_ORDER[n % 4], special=True))
            n += 1
    return tuple(cases.values())


SHARED_CASES: tuple[SharedCase, ...] = _matrix()


def special_inputs(case: SharedCase, rng: np.random.Generator) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """``cases.special_inputs`` of the case's logical reduction."""
    return logical_special_inputs(case.logical, rng)


def run(case: SharedCase, kernel, rng: np.random.Generator, fold: str = "linear") -> list[str]:
    """Launch ``kernel`` (the case's, compiled with ``fold``) on fresh random inputs and,
    for a special case, every scenario of ``special_inputs``; return every problem
    ``check`` finds, each prefixed with its scenario."""
    inputs = [("random", *case.random_inputs(rng))]
    if case.special:
        inputs += special_inputs(case, rng)
    problems = []
    for scenario, x, old in inputs:
        b = case.output_buffer(old)
        kernel.launch(1, case.threads(), case.input_buffer(x), b)
        problems += [f"[{scenario}] {p}" for p in case.check(x, old, b, fold)]
    return problems
