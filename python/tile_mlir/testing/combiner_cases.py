"""Conformance cases of combiner reductions (docs/spec.md, "Combiner reductions"):
argmax/argmin and combiner functions, at every scope, in registers and in workgroup
memory, for the interpreter and the GPU. Pure numpy: it runs on the GPU machine.

A ``CombinerCase`` is one ``tile.reduce`` (``tile.reduce<k>``) in a kernel with one
buffer per operand: ``A<j>`` for src j, then ``B<j>`` for dst j. Register cases lay each
buffer out as ``tile_mlir.testing.cases`` does (``A<j>[thread, slot]``, one
``ReduceCase`` per operand type packs and unpacks it); workgroup cases hold the logical
tile, flat, as ``tile_mlir.testing.shared_cases`` does. The judges:

* argmax/argmin (``arg_reference``), from the meaning alone: per dst element, the index
  of the first NaN if there is one (and the canonical NaN), else the first index of the
  greatest (smallest) value, -0 and +0 being equal; with accum, the old pair competes
  with the result by the same rule. Every replica must hold those bits.
* a combiner (``tile_mlir.testing.combiners``): the documented order (``ordered``),
  bit for bit: the thread's elements folded in row-major order, the accumulator left;
  the lane butterfly, highest bit first, the lower lane's partial left; the warps' then
  the CTAs' partials folded in ascending order; accum with the old value left (the
  ``shared`` variant: G lanes each fold a contiguous run of elements, then the
  butterfly). And its meaning (``combiners.meaning``) within float64 tolerances, for an
  associative combiner over the sequence the fold meets the elements in (``sequence``).

``tile_mlir.testing.combiner_matrix`` lists the cases, the special inputs of argmax and
argmin, and runs a case.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..layout import TileLayout
from ..vocab import ARG_KINDS, CANONICAL_NAN_BITS, DEFAULT_CHIP, SCOPE_THREADS, WARP_SIZE, shared_group_size
from .cases import ReduceCase, _copies, bits, is_float, narrow, poison, private_type, storage_dtype, widen
from .combiners import COMBINERS, GPU_EXP_ULPS, meaning
from .shared_cases import _Kernel, _workgroup_type



@dataclass(frozen=True)
class CombinerCase:
    name: str
    combiner: str  # argmax, argmin, or a name of combiners.COMBINERS
    dtype: str  # argmax/argmin: the value's; a combiner's types are its own
    exec_scope: str
    axes: tuple[int, ...]
    accum: bool
    src_shape: tuple[int, ...]  # register cases: the thread's memref; shared: the tile
    dst_shape: tuple[int, ...]
    src_layout: str | None = None
    dst_layout: str | None = None
    shared: bool = False  # operands in workgroup memory (the shared variant)
    special: bool = False
    cluster_fixed: bool = False
    index_dtype: str = "i32"

    # -- operands ------------------------------------------------------------------------

    @property
    def arg(self) -> bool:
        return self.combiner in ARG_KINDS

    @property
    def dst_types(self) -> tuple[str, ...]:
        return (self.dtype, self.index_dtype) if self.arg else COMBINERS[self.combiner].types

    @property
    def src_types(self) -> tuple[str, ...]:
        return (self.dtype,) if self.arg else COMBINERS[self.combiner].types

    def operand(self, dtype: str) -> ReduceCase:
        """The case's layouts as a one-operand register case of ``dtype``: it packs and
        unpacks that operand's buffers."""
        return ReduceCase(self.name, "sum", dtype, self.exec_scope, self.axes, self.accum, self.src_shape,
                          self.dst_shape, self.src_layout, self.dst_layout, cluster_fixed=self.cluster_fixed)

    @cached_property
    def shape(self) -> ReduceCase:
        return self.operand(self.dst_types[0])

    def block(self) -> int:
        return CTA_BLOCK if self.shared and self.exec_scope == "cta" else \
            SCOPE_THREADS[self.exec_scope] if self.shared else self.shape.block()

    def grid(self) -> int:
        return 1 if self.shared else self.shape.grid()

    @cached_property
    def reduced_dims(self) -> tuple[int, ...]:
        return self.shape.reduced_dims

    @cached_property
    def tile_shape(self) -> tuple[int, ...]:
        return self.src_shape if self.shared else self.shape.src_tile.shape

    @cached_property
    def n_dst(self) -> int:
        return math.prod(e for d, e in enumerate(self.tile_shape) if d not in self.reduced_dims)

    def terms(self, v: np.ndarray) -> np.ndarray:
        """A logical src tensor as (dst elements, reduced coordinates), both row-major."""
        kept = [d for d in range(len(self.tile_shape)) if d not in self.reduced_dims]
        return np.transpose(np.asarray(v), kept + list(self.reduced_dims)).reshape(self.n_dst, -1)

    def from_terms(self, t: np.ndarray) -> np.ndarray:
        """The inverse of ``terms``."""
        kept = [d for d in range(len(self.tile_shape)) if d not in self.reduced_dims]
        order = kept + list(self.reduced_dims)
        shaped = np.asarray(t).reshape([self.tile_shape[d] for d in order])
        return np.transpose(shaped, np.argsort(order))

    @cached_property
    def threads_of(self) -> np.ndarray:
        """(dst elements, reduced coordinates): the layout's thread index holding each
        element (lane + 32 * warp, + 1024 * CTA in a cluster); 0 for workgroup tiles."""
        if self.shared:
            return np.zeros((self.n_dst, math.prod(self.tile_shape) // self.n_dst), np.int64)
        return self.terms(layout_threads(self.shape.src_tile))

    # -- inputs --------------------------------------------------------------------------

    def random_x(self, rng: np.random.Generator) -> np.ndarray:
        """A logical src tensor: floats in [-1, 1] (never 0), small signed integers."""
        if self.arg and not is_float(self.dtype):
            return rng.integers(-1000, 1000, self.tile_shape).astype(np.int64)
        v = rng.uniform(-1, 1, self.tile_shape)
        return np.where(v == 0, 0.5, v)

    def sources(self, x: np.ndarray) -> list[np.ndarray]:
        """The logical src operands for the logical input ``x`` (float64 or int64)."""
        if self.arg:
            return [narrow(x, self.dtype)]
        coord = self.from_terms(np.broadcast_to(np.arange(self.terms(x).shape[1]), self.terms(x).shape))
        return COMBINERS[self.combiner].sources(x, coord)

    def random_old(self, rng: np.random.Generator) -> list[np.ndarray]:
        """Old dst values, one logical tensor per dst operand (used with accum)."""
        shape = self.shape.dst_tile.shape if not self.shared else self.dst_shape
        if self.arg:
            index = rng.integers(0, self.terms(np.zeros(self.tile_shape)).shape[1], shape)
            return [narrow(self.random_x(rng).reshape(-1)[: math.prod(shape)].reshape(shape), self.dtype),
                    index.astype(storage_dtype(self.index_dtype))]
        x = rng.uniform(-1, 1, shape)
        return COMBINERS[self.combiner].sources(x, np.full(shape, 7))

    # -- judging -------------------------------------------------------------------------

    def expected(self, srcs: list[np.ndarray], olds: list[np.ndarray] | None, fold: str = "linear") -> list[np.ndarray]:
        """Per dst operand, the flat dst (dst elements in row-major order), in its dtype."""
        if self.arg:
            return arg_reference(self.combiner, self.dtype, self.terms(srcs[0]),
                                 None if olds is None else [o.reshape(-1) for o in olds], self.index_dtype)
        return self.ordered(srcs, olds, fold)

    def ordered(self, srcs, olds, fold: str = "linear") -> list[np.ndarray]:
        """The documented order (module docstring), applied with the combiner in numpy."""
        comb = COMBINERS[self.combiner]
        terms = [self.terms(s) for s in srcs]
        out = []
        for e in range(self.n_dst):
            partials = [tuple(t[e, r] for t in terms) for r in range(terms[0].shape[1])]
            result = self._order_shared(comb.combine, partials, fold) if self.shared else \
                self._order_registers(comb.combine, partials, self.threads_of[e], fold)
            if olds is not None:
                result = comb.combine(tuple(o.reshape(-1)[e] for o in olds), result)
            out.append(result)
        return [np.array([p[j] for p in out], storage_dtype(t)) for j, t in enumerate(self.dst_types)]

    @staticmethod
    def _order_registers(combine, partials, threads, fold):
        mask = int(np.bitwise_or.reduce(threads ^ threads[0]))
        groups: dict[int, list] = {}
        for r, p in enumerate(partials):  # in row-major order of the reduced coordinates
            groups.setdefault(int(threads[r]) & mask, []).append(p)
        value = {tb: _fold(combine, ps, fold) for tb, ps in groups.items()}
        for b in sorted((b for b in range(5) if mask >> b & 1), reverse=True):
            for tb in [tb for tb in value if not tb >> b & 1]:
                value[tb] = value[tb | 1 << b] = combine(value[tb], value[tb | 1 << b])
        lanes = sum(1 << b for b in range(5))
        warps = {tb: p for tb, p in value.items() if not tb & lanes}
        ctas = {}
        for tb in sorted(warps):  # ascending warp bits within each CTA
            ctas.setdefault(tb >> 10, []).append(warps[tb])
        return _fold(combine, [_fold(combine, ps, fold) for _, ps in sorted(ctas.items())], fold)

    def sequence(self) -> np.ndarray:
        """Per dst element, the reduced coordinates in the order the documented fold meets
        them: CTAs, then warps, ascending; the lanes in bit-reversed order of their reduced
        lane bits (the butterfly pairs the highest bit first); in a thread, row-major. The
        shared variant: its G lanes in bit-reversed order, each lane's elements in order."""
        n, R = self.threads_of.shape
        if self.shared:
            G = shared_group_size(n, R, self.block())
            lanes = sorted(range(G), key=lambda j: _reversed(j, G.bit_length() - 1))
            chunks = _chunks(R, G)
            return np.array([[r for j in lanes for r in chunks[j]]] * n)
        return fold_sequence(self.threads_of)

    def _order_shared(self, combine, partials, fold):
        G = shared_group_size(self.n_dst, len(partials), self.block())
        lanes = [_fold(combine, [partials[r] for r in chunk], fold) for chunk in _chunks(len(partials), G)]
        step = G // 2
        while step:
            lanes = [combine(lanes[j & ~step], lanes[j | step]) for j in range(G)]
            step //= 2
        return lanes[0]

    def check(self, x, srcs, olds, results: list[np.ndarray], exact: bool = True, fold: str = "linear") -> list[str]:
        """Every mismatch between the dst operands' results (flat, row-major, one array of
        values per dst; for register cases, ``values`` checked every replica equal) and
        the expected bits; with a combiner also its meaning. ``exact=False`` lets a float
        result of a combiner with math ops differ from the model by GPU_EXP_ULPS ulps per
        combine (the GPU's exp is not the interpreter's)."""
        want = self.expected(srcs, olds, fold)
        problems = []
        for j, (dt, w, got) in enumerate(zip(self.dst_types, want, results)):
            wb, gb = bits(w, dt).reshape(-1), bits(got, dt).reshape(-1)
            if not exact and is_float(dt) and self.combiner in COMBINERS and COMBINERS[self.combiner].uses_math:
                terms = self.terms(srcs[0]).shape[1]
                tol = GPU_EXP_ULPS * (terms + 1) * 2.0**-23
                bad = ~np.isclose(widen(got, dt).reshape(-1), widen(w, dt).reshape(-1), rtol=tol, atol=0)
            else:
                bad = wb != gb
            for e in np.flatnonzero(bad)[:6]:
                problems.append(f"dst {j} [{e}]: got 0x{int(gb[e]):x} ({got.reshape(-1)[e]!r}), "
                                f"expected 0x{int(wb[e]):x} ({w.reshape(-1)[e]!r})")
        if not self.arg and olds is None:
            comb = COMBINERS[self.combiner]
            values = self.terms(x if comb.meaning_source is None else srcs[comb.meaning_source])
            coord = np.broadcast_to(np.arange(values.shape[1]), values.shape)
            problems += meaning(self.combiner, widen(values, self.src_types[comb.meaning_source or 0])
                                if comb.meaning_source is not None else values, coord, [r.reshape(-1) for r in results],
                                self.sequence())
        return problems

    # -- the kernel ----------------------------------------------------------------------

    def op_text(self, dsts: list[str], srcs: list[str], dst_types: list[str], src_types: list[str]) -> list[str]:
        attrs = [f'kind = "{self.combiner}"' if self.arg else f"combiner = @{self.name}_combine",
                 f'exec_scope = "{self.exec_scope}"', f"axes = array<i64: {', '.join(map(str, self.axes))}>",
                 f"accum = {'true' if self.accum else 'false'}"]
        if self.src_layout is not None:
            attrs.append(f'src_layout = #tile.layout<"{self.src_layout}">')
        if self.dst_layout is not None:
            attrs.append(f'dst_layout = #tile.layout<"{self.dst_layout}">')
        op = "tile.reduce" if self.arg or len(dsts) == 1 else f"tile.reduce{len(dsts)}"
        return [f'"{op}"({", ".join(dsts + srcs)}) {{{", ".join(attrs)}}}',
                f"  : ({', '.join(dst_types + src_types)}) -> ()"]

    def buffer_types(self) -> list[str]:
        """The kernel's arguments: A<j> per src, then B<j> per dst."""
        if self.shared:
            ns, nd = math.prod(self.src_shape), math.prod(self.dst_shape)
            return [f"memref<{ns}x{t}>" for t in self.src_types] + [f"memref<{nd}x{t}>" for t in self.dst_types]
        (a, b) = self.shape.buffer_shapes()
        return ([f"memref<{'x'.join(map(str, a))}x{t}>" for t in self.src_types]
                + [f"memref<{'x'.join(map(str, b))}x{t}>" for t in self.dst_types])

    def kernel_text(self, chip: str = DEFAULT_CHIP) -> str:
        types = self.buffer_types()
        ks = len(self.src_types)
        args = [f"%A{j}: {t}" for j, t in enumerate(types[:ks])] + [f"%B{j}: {t}" for j, t in enumerate(types[ks:])]
        globals_, body, attributes = (self._shared_body(types) if self.shared else self._register_body(types))
        combiner = [] if self.arg else COMBINERS[self.combiner].function_text(f"{self.name}_combine").splitlines()
        lines = [
            f"// Combiner conformance case {self.name}.",
            "module attributes {gpu.container_module} {",
            f'  gpu.module @kernels [#nvvm.target<chip = "{chip}">] {{',
            *("    " + line for line in globals_ + combiner),
            f"    gpu.func @{self.name}({', '.join(args)}) kernel{attributes} {{",
            *("      " + line for line in body),
            "      gpu.return",
            "    }",
            "  }",
            "}",
        ]
        return "\n".join(lines) + "\n"

    def _register_body(self, types):
        ks = len(self.src_types)
        body = ["%tid = gpu.thread_id x"] if self.exec_scope != "cluster" else [
            "%tx = gpu.thread_id x", "%bid = gpu.block_id x", f"%cblock = arith.constant {self.block()} : index",
            "%first = arith.muli %bid, %cblock : index", "%tid = arith.addi %first, %tx : index"]
        n = max(math.prod(self.src_shape), math.prod(self.dst_shape))
        body += [f"%c{i} = arith.constant {i} : index" for i in range(n)]
        st = [private_type(self.src_shape, t) for t in self.src_types]
        dt = [private_type(self.dst_shape, t) for t in self.dst_types]
        body += [f"%src{j} = memref.alloca() : {t}" for j, t in enumerate(st)]
        body += [f"%dst{j} = memref.alloca() : {t}" for j, t in enumerate(dt)]
        for j, t in enumerate(dt):
            if self.accum:
                body += _copies(f"o{j}_", self.dst_shape, f"%B{j}", types[ks + j], f"%dst{j}", t, load_global=True)
        for j, t in enumerate(st):
            body += _copies(f"a{j}_", self.src_shape, f"%A{j}", types[j], f"%src{j}", t, load_global=True)
        body += self.op_text([f"%dst{j}" for j in range(len(dt))], [f"%src{j}" for j in range(ks)], dt, st)
        for j, t in enumerate(dt):
            body += _copies(f"b{j}_", self.dst_shape, f"%B{j}", types[ks + j], f"%dst{j}", t, load_global=False)
        attributes = ""
        if self.exec_scope == "cluster" and self.cluster_fixed:
            attributes = f" attributes {{known_cluster_size = array<i32: {self.grid()}, 1, 1>}}"
        return [], body, attributes

    def _shared_body(self, types):
        ks, T = len(self.src_types), self.block()
        k = _Kernel()
        st = [_workgroup_type(self.src_shape, t) for t in self.src_types]
        dt = [_workgroup_type(self.dst_shape, t) for t in self.dst_types]
        globals_ = [f'memref.global "private" @{self.name}_src{j} : {t}' for j, t in enumerate(st)]
        globals_ += [f'memref.global "private" @{self.name}_dst{j} : {t}' for j, t in enumerate(dt)]
        body = ["%tid = gpu.thread_id x"]
        body += [f"%src{j} = memref.get_global @{self.name}_src{j} : {t}" for j, t in enumerate(st)]
        body += [f"%dst{j} = memref.get_global @{self.name}_dst{j} : {t}" for j, t in enumerate(dt)]
        ns, nd = math.prod(self.src_shape), math.prod(self.dst_shape)
        for j, t in enumerate(st):
            body += k.copy(f"a{j}", ns, T, "%tid", (f"%A{j}", types[j], None), (f"%src{j}", t, self.src_shape))
        for j, t in enumerate(dt):
            body += k.copy(f"o{j}", nd, T, "%tid", (f"%B{j}", types[ks + j], None), (f"%dst{j}", t, self.dst_shape))
        body.append("gpu.barrier")
        body += self.op_text([f"%dst{j}" for j in range(len(dt))], [f"%src{j}" for j in range(ks)], dt, st)
        t = "%tid"
        if T > 1:
            body.append(f"%tr = arith.subi {k.const(T - 1)}, %tid : index")
            t = "%tr"
        for j, ty in enumerate(dt):
            body += k.copy(f"b{j}", nd, T, t, (f"%dst{j}", ty, self.dst_shape), (f"%B{j}", types[ks + j], None))
        return globals_, k.constants() + body, f" attributes {{known_block_size = array<i32: {T}, 1, 1>}}"

    # -- running -------------------------------------------------------------------------

    def buffers(self, srcs, olds) -> list[np.ndarray]:
        """The launch's arguments for logical src operands and old dsts (None: poison)."""
        out = []
        for s, t in zip(srcs, self.src_types):
            s = narrow(s, t)
            out.append(np.ascontiguousarray(s, storage_dtype(t)).reshape(-1) if self.shared else self.operand(t).pack(s))
        for j, t in enumerate(self.dst_types):
            if self.shared:
                out.append(np.array(olds[j], storage_dtype(t)).reshape(-1) if olds is not None else
                           poison(t, math.prod(self.dst_shape)))
            else:
                op = self.operand(t)
                out.append(op.pack_dst(olds[j]) if olds is not None else
                           poison(t, (op.threads(), math.prod(self.dst_shape))))
        return out

    def results(self, buffers) -> tuple[list[np.ndarray], list[str]]:
        """The dst operands after a launch (flat, row-major), and every dst element whose
        places (replicas) disagree or were never written."""
        ks, out, problems = len(self.src_types), [], []
        for j, t in enumerate(self.dst_types):
            b = buffers[ks + j]
            if self.shared:
                out.append(np.asarray(b, storage_dtype(t)).reshape(-1))
                continue
            held = self.operand(t).unpack(b)
            values = []
            for coord, places in held.items():
                raw = {int(bits(v, t)) for _, v in places}
                if len(raw) > 1:
                    problems.append(f"dst {j} {list(coord)}: replicas differ: {sorted(hex(r) for r in raw)}")
                values.append(places[0][1])
            out.append(np.array(values, storage_dtype(t)))
        return out, problems


CTA_BLOCK = 256


def layout_threads(layout: TileLayout) -> np.ndarray:
    """Per element of ``layout``'s tile, the thread that holds it (its lowest place):
    lane + 32 * warp, + 1024 * CTA in a cluster."""
    t = np.empty(layout.shape, np.int64)
    for coord in itertools.product(*map(range, layout.shape)):
        place = min(layout.forward(coord))
        t[coord] = place.lane + WARP_SIZE * place.warp
    return t


def fold_sequence(threads: np.ndarray) -> np.ndarray:
    """Per dst element (a row of ``threads``: the thread holding each reduced coordinate,
    row-major), the coordinates in the order docs/spec.md's fold meets them: CTAs, then
    warps, ascending; the lanes in bit-reversed order of their reduced lane bits (the
    butterfly pairs the highest bit first); in a thread, row-major. Written from the
    spec's words, not from the lowering."""
    out = []
    for row in threads:
        mask = int(np.bitwise_or.reduce(row ^ row[0]))
        lane_bits = [b for b in range(5) if mask >> b & 1]

        def key(r, row=row, lane_bits=lane_bits, mask=mask):
            t = int(row[r]) & mask
            flipped = sum((t >> b & 1) << (len(lane_bits) - 1 - i) for i, b in enumerate(lane_bits))
            return t >> 10, (t >> 5) & 31, flipped, r

        out.append(sorted(range(len(row)), key=key))
    return np.array(out)


def _chunks(R: int, G: int) -> list[range]:
    """The contiguous elements each of G lanes folds in the shared variant with a combiner
    function: q = R // G each, the first R % G lanes one more."""
    q, extra = divmod(R, G)
    return [range(j * q + min(j, extra), (j + 1) * q + min(j + 1, extra)) for j in range(G)]


def _reversed(j: int, nbits: int) -> int:
    return int(format(j, f"0{nbits}b")[::-1], 2) if nbits else 0


def _fold(combine, partials, fold: str):
    if fold != "tree":
        acc = partials[0]
        for p in partials[1:]:
            acc = combine(acc, p)
        return acc
    while len(partials) > 1:
        pairs = [combine(a, b) for a, b in zip(partials[0::2], partials[1::2])]
        partials = pairs + partials[len(pairs) * 2:]
    return partials[0]


def arg_reference(kind: str, dtype: str, terms: np.ndarray, olds, index_dtype: str = "i32") -> list[np.ndarray]:
    """argmax/argmin from the meaning (module docstring): per row of ``terms`` (values of
    ``dtype``), (the value, its index); ``olds``: the old (values, indices), or None."""
    v = widen(terms, dtype)
    nan = np.isnan(v) if is_float(dtype) else np.zeros(v.shape, bool)
    has_nan = nan.any(axis=1)
    with np.errstate(invalid="ignore"):
        best = np.where(has_nan, np.argmax(nan, axis=1),
                        (np.argmax if kind == "argmax" else np.argmin)(np.where(nan, 0, v), axis=1))
    rows = np.arange(len(v))
    value, index = np.asarray(terms)[rows, best], best.astype(np.int64)
    if olds is not None:
        ov, oi = olds
        value, index = _arg_accum(kind, dtype, (ov, oi.astype(np.int64)), (value, index))
    value_bits = bits(value, dtype).copy()
    if is_float(dtype):
        value_bits[np.isnan(widen(value, dtype))] = CANONICAL_NAN_BITS[dtype]
    return [value_bits.view(storage_dtype(dtype)), index.astype(storage_dtype(index_dtype))]


def _arg_accum(kind, dtype, old, new):
    """The better pair of ``old`` and ``new`` per element: a NaN first, else the greater
    (smaller) value, else the smaller index; the old one on a complete tie."""
    (ov, oi), (nv, ni) = old, new
    a, b = widen(ov, dtype), widen(nv, dtype)
    an, bn = np.isnan(a), np.isnan(b)
    smaller = ni < oi
    with np.errstate(invalid="ignore"):
        better = (b > a) if kind == "argmax" else (b < a)
        take = np.where(an, bn & smaller, bn | better | ((b == a) & smaller))
    return np.where(take, nv, ov), np.where(take, ni, oi)
