"""What the row kernels share: the frame of a kernel over rows, for one plan.

``row_kernel(name, plan, M, args)`` opens a ``tile_mlir.build.kernel`` over the rows of an
M x N matrix and hands over a ``Rows``: the builder (``r.k``), the plan (``r.p``), this
CTA's first row (``r.row``) and first column (``r.col``: ``rank · CH`` in a cluster of
CL CTAs per row, else 0), and the handful of steps every row kernel is made of, each a
few upstream builders and a ``tile_mlir.ops`` op:

* ``load``: this CTA's part of a row into a register tile, with ``tile.copy`` (the
  ``ROWS`` layout: 16-byte vectors, the columns past N padded);
* ``vectors``: an unrolled loop over the tile's V-element vectors, each in f32 (the
  kernel's passes over a bf16 tile each widening it its own way: ``widen``);
  ``inside(i)``: which lanes of the vector at slot i are columns of the row;
* ``reduce``: one value per thread reduced over the row's threads (``tile.reduce``,
  ``PARTIALS`` to ``RESULT``: lane butterflies, across warps one barrier, at cluster
  scope across the CTAs one exchange through distributed shared memory);
* ``store``, ``store_row``, ``load_cols``: a CTA's part of a row, one value per row (from
  the first CTA of the row's cluster), a part of a per-column vector (weight, bias),
  through ``tile.copy``; ``col_vector``, ``store_vector``: one 16-byte vector of a
  per-column vector, of a row (the norms' output loop: one vector at a time);
* ``chunks``: the row's chunks, loaded one by one (for kernels that walk the row; a
  plan holds the whole row, so it is this CTA's one part).

Each op is located at the kernel's line that asked for it (``build.helpers``), not at a
line of this module. The argument roles of ``row_kernel``: ``rows`` (M x N of the dtype), ``cols`` (N),
``row`` (M, one value per row of the dtype), ``stat`` (M, f32), ``targets`` (M, int64),
and the scalars ``f32``, ``i64`` and ``index``; any other role is taken as the
argument's MLIR type (the backward kernels' partial sums).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace

from mlir.dialects import arith, math, vector

from .. import build, dynamic_dims, ops
from ..errors import BuildError, OptionError
from ..ir import ir
from ..vocab import DEFAULT_CHIP, LOG2E, MAX_PORTABLE_CLUSTER_CTAS, WARP_SIZE
from .plan import RowPlan

MAX_VECTOR_ALIGN = 16

build.helpers(__file__)  # the ops built here are located at the kernel's line that asked for them


def arg_types(p: RowPlan, M: int) -> dict[str, str]:
    """The MLIR type of each argument role, for M rows of plan ``p`` (M ``"?"``: a
    dynamic dim, whose extent an ``index`` argument gives: ``tile_mlir.dynamic_dims``)."""
    T = p.dtype
    return {"rows": f"memref<{M}x{p.N}x{T}>", "cols": f"memref<{p.N}x{T}>", "row": f"memref<{M}x{T}>",
            "stat": f"memref<{M}xf32>", "targets": f"memref<{M}xi64>", "f32": "f32", "i64": "i64",
            "index": "index"}


# The roles of the arguments with one row (or value) per row of x: their leading dim is M.
PER_ROW = ("rows", "row", "stat", "targets")


@contextmanager
def row_kernel(name: str, p: RowPlan, M: int | None, args, chip: str = DEFAULT_CHIP, operands: int = 1,
               shared: bool = False):
    """A kernel ``name`` over M rows of plan ``p``; ``args``: (name, role) pairs (a role
    ``arg_types`` does not name is the argument's MLIR type); ``operands``: the most
    operands of the kernel's combiner reductions (``Rows.reduce_many``) whatever the plan
    (a cluster, or a plan with ``pair``, gets 2 anyway). M None: one kernel for every
    M, the row count an argument ``rows`` (``index``; added last unless ``args`` has it),
    which gives the extent of the dynamic leading dim of every per-row argument
    (``PER_ROW``: ``tile_mlir.dynamic_dims``). A
    cluster of up to 8 CTAs is fixed in the kernel (``known_cluster_size``, PTX
    ``.reqnctapercluster``); one of 16, a non-portable size, is given at the launch
    (``cuLaunchKernelEx``'s cluster dimension, the way proven on the H200 at 16), as the
    runtime does for a kernel whose cluster its layouts name. ``shared``: the kernel keeps
    its row tile's vectors past the registers in dynamic shared memory where the plan says
    so (``RowPlan.S``; ``Rows.load``); a kernel without it refuses such a plan."""
    if p.S and not shared:
        raise OptionError(f"{name} keeps its row in registers only; the plan {p.label()} puts {p.S * p.V} elements"
                          f" a thread in shared memory (N = {p.N} is longer than the registers of a cluster hold)")
    if M is None and "rows" not in (n for n, _ in args):
        args = [*args, ("rows", "index")]
    types = arg_types(p, "?" if M is None else M)
    with build.kernel(name, [(n, types.get(role, role)) for n, role in args], chip=chip, known_block_size=p.threads,
                      known_cluster_size=p.CL if 1 < p.CL <= MAX_PORTABLE_CLUSTER_CTAS else None,
                      align=MAX_VECTOR_ALIGN, min_ctas_per_sm=p.O if p.O > 1 else None) as k:
        if M is None:
            rows = [n for n, _ in args].index("rows")
            dynamic_dims.mark(k.func, {i: [rows] for i, (_, role) in enumerate(args) if role in PER_ROW})
        yield Rows(k, p, M, operands)


class Rows:
    """A row kernel being built (module docstring). ``k``: the ``build.KernelBuilder``;
    ``p``: the plan; ``row``, ``col``: this CTA's first row and column; ``group``: its
    cluster's index in the grid (its block id with one CTA per row); ``rank``: its rank
    in the row's cluster (None for one CTA per row); ``T``: the element type; ``V``: the
    elements of a vector; ``args``: the kernel's arguments by name."""

    def __init__(self, k: build.KernelBuilder, p: RowPlan, M: int | None = None, operands: int = 1):
        self.k, self.p, self.args, self._M = k, p, k.args, M
        self.T, self.V = p.dtype, p.V
        self.layout = p.layouts()
        self._single = replace(p, vectors=1).layouts()  # one vector per thread: col_vector, store_vector
        # the CTA's cluster (block id div CL; the block id with one CTA per row): its row group
        self.group = k.block_id() if p.CL == 1 else arith.divui(k.block_id(), k.index(p.CL))
        self.row = arith.muli(self.group, k.index(p.R))
        # The CTA's place in its row: block id mod CL, which is its cluster rank in a
        # one-dimensional grid launched in clusters of CL, and still names its columns
        # where a kernel with no cluster-scope op (cross-entropy's backward) is launched
        # without clusters (a cluster of 16 is not fixed in the kernel: the runtime
        # launches one only for a kernel whose layouts name its CTAs).
        self.rank = arith.remui(k.block_id(), k.index(p.CL)) if p.CL > 1 else None
        self.col = arith.muli(self.rank, k.index(p.CH)) if p.CL > 1 else k.index(0)
        self._one, self._all = k.registers([1], "f32"), k.registers([1], "f32")
        # the row tile whose vectors E .. E + S·V - 1 are in dynamic shared memory (``load``):
        # S vectors a thread, vector s of thread t at element (s · threads + t) · V
        self._kept, self._in_shared = None, False
        self._shared = k.dynamic_shared([p.S * p.threads * p.V], p.dtype) if p.S else None
        # the register tile the last part of S mod C vectors passes through (``_shared_parts``)
        self._stage = k.registers([p.S % p.C * p.V], p.dtype) if p.S % p.C else None
        # reduce_many's operands past the first (allocas belong at the entry)
        more = max(operands, 2 if p.CL > 1 or p.pair else 1) - 1
        self._ones = [self._one, *(k.registers([1], "f32") for _ in range(more))]
        self._alls = [self._all, *(k.registers([1], "f32") for _ in range(more))]

    # --- values ---------------------------------------------------------------------

    def thread_row(self):
        """The row of the matrix this thread's part of the CTA holds: the CTA's first row
        plus its warp's row slot, warp id div W, which is how ``RowPlan.layouts`` lays R
        rows of W warps in a CTA (the rows' stride ``W@warpid``: warps r·W .. r·W + W - 1
        hold row r). Not clamped to M."""
        if self.p.R == 1:
            return self.row
        return arith.addi(self.row, arith.divui(self.k.warp_id(), self.k.index(self.p.W)))

    def rows(self):
        """The row count M, an ``index``: the constant, or the argument ``rows`` (M None)."""
        return self.k.index(self._M) if self._M is not None else self.args["rows"]

    def f32(self, value: float):
        return self.k.constant(value, "f32")

    def splat(self, value):
        """A vector of V copies of the f32 ``value``."""
        return self.k.splat(value, self.V)

    def eq(self, a, b):
        return arith.cmpf(arith.CmpFPredicate.OEQ, a, b)

    def exp(self, x, shift):
        """exp(x - shift), f32 scalars or vectors, as exp2((x - shift) · log2 e): one
        ``ex2.approx.f32`` after the subtraction and the product, as Triton's ``tl.exp``,
        where ``math.exp`` (libdevice's ``__nv_expf``) spends about ten instructions on a
        range reduction. The product's rounding adds at most about 3e-6 relative error
        where the result is tiny (|x - shift| near 87), far less near 1 (docs/fused-kernels.md,
        "Exponentials"); NaN and ±inf pass as they do through exp."""
        d = arith.subf(x, shift)
        return math.exp2(arith.mulf(d, self.k.constant(LOG2E, d.type)))

    def tile(self, dtype: str | None = None):
        """A register tile of a chunk: E elements of the dtype (or of ``dtype``)."""
        return self.k.registers([self.p.E], dtype or self.T)

    # --- loops ------------------------------------------------------------------------

    def chunks(self, tile=None, name: str = "X", *, reverse: bool = False, kept: bool = False,
               padding=None, carry=()):
        """For each chunk of the row (last first with ``reverse``), its first column;
        with ``tile``, the chunk of ``name`` is loaded into it first, except, with
        ``kept``, the chunk the pass starts with, which the previous pass left there.
        With ``carry``, also the carried values and the loop's results, as ``k.range``."""
        k, K = self.k, self.p.K
        for it in k.range(K, carry=carry):
            j = it if not carry else it[0]
            if reverse:
                j = arith.subi(arith.subi(k.index(K), j), k.index(1))
            col = arith.addi(self.col, arith.muli(j, k.index(self.p.CH)))
            if tile is not None:
                if kept:
                    with k.if_(arith.cmpi(arith.CmpIPredicate.ne, it if not carry else it[0], k.index(0))):
                        self.load(tile, name, col, padding=padding)
                else:
                    self.load(tile, name, col, padding=padding)
            yield col if not carry else (col, *it[1:])

    def vectors(self, tile, carry=None, *, nth: int = 0):
        """For each vector of ``tile`` (an unrolled loop): its first slot and its value in
        f32; with ``carry``, also the carried value and the loop's result. ``nth``: which
        pass over ``tile`` this is (0, 1, 2), where a kernel makes several: each widens
        bf16 in its own way (``widen``)."""
        k, p = self.k, self.p
        for it in k.range(0, p.E, self.V, carry=carry if carry is not None else (), unroll=True):
            i = it if carry is None else it[0]
            v = self.widen(k.vload(tile, i, self.V), nth)
            yield (i, v) if carry is None else (i, v, *it[1:])
        if tile is not self._kept:
            return
        # the vectors in shared memory: slots E .. E + S·V - 1, the first loop's result carried on
        carry = None if carry is None else it[2]
        self._in_shared = True
        try:
            for it in k.range(p.E, p.E + p.S * self.V, self.V, carry=carry if carry is not None else (),
                              unroll=True):
                i = it if carry is None else it[0]
                v = self.widen(k.vload(self._shared, self._shared_index(i), self.V), nth)
                yield (i, v) if carry is None else (i, v, *it[1:])
        finally:
            self._in_shared = False

    def _shared_index(self, i):
        """Where this thread's vector of slot ``i`` (E .. E + S·V - 1) of the row tile is in
        the shared part: vector s = (i - E) / V at element (s · threads + t) · V."""
        k, p = self.k, self.p
        s = arith.divui(arith.subi(i, k.index(p.E)), k.index(self.V))
        return arith.muli(arith.addi(arith.muli(s, k.index(p.threads)), k.thread_id()), k.index(self.V))

    def widen(self, v, nth: int = 0):
        """The vector ``v`` in f32, exactly. A bf16 vector is widened in one of three ways,
        by ``nth``: ``arith.extf``, shifts and masks of its pairs as integers, or
        interleaved with zeros. With one way for every pass, LLVM and ptxas reuse the
        first pass's f32 values in the next ones and hold the row unpacked (a register an
        element) across the reductions between them, not packed (two bf16 a register):
        ptxas gave LayerNorm 127 registers at 64 bf16 a thread, 58 with a way a pass."""
        k, V, H = self.k, self.V, self.V // 2
        way = nth % 3
        if ir.VectorType(v.type).element_type != ir.BF16Type.get() or way == 0:
            return k.cast(v, "f32")
        if way == 2:  # bf16 b is the f32 of high half b and low half 0
            zeros = k.constant(0.0, f"vector<{V}xbf16>")
            halves = vector.shuffle(zeros, v, [j for pair in zip(range(V), range(V, 2 * V)) for j in pair])
            return vector.bitcast(ir.VectorType.get([V], ir.F32Type.get()), halves)
        pairs = vector.bitcast(ir.VectorType.get([H], ir.IntegerType.get_signless(32)), v)  # 2j: the low half
        low = arith.shli(pairs, k.constant(16, f"vector<{H}xi32>"))
        high = arith.andi(pairs, k.constant(-65536, f"vector<{H}xi32>"))
        low, high = (arith.bitcast(ir.VectorType.get([H], ir.F32Type.get()), h) for h in (low, high))
        return vector.shuffle(low, high, [j for pair in zip(range(H), range(H, V)) for j in pair])

    def thread_column(self):
        """This thread's first column within a chunk of its CTA's part of the row: vector c
        of its tile starts c·32·W·V columns further (``RowPlan.layouts``' ROWS: within a
        row, the thread index mod 32·W, V elements each, the same in each of the R rows)."""
        k = self.k
        return arith.muli(arith.remui(k.thread_id(), k.index(WARP_SIZE * self.p.W)), k.index(self.V))

    def inside(self, i):
        """Which lanes of the tile's vector at slot ``i`` (an index) hold columns of the
        row: a vector of V i1 (the columns past N are padding)."""
        k, p, V = self.k, self.p, self.V
        lead = self.thread_column()
        first = arith.addi(arith.addi(self.col, lead), arith.muli(i, k.index(WARP_SIZE * p.W)))
        lanes = k.constant(list(range(V)), f"vector<{V}xindex>")
        return arith.cmpi(arith.CmpIPredicate.slt, lanes, k.splat(arith.subi(k.index(p.N), first), V))

    def put(self, tile, i, value) -> None:
        """Store the f32 vector ``value`` into ``tile`` at slot ``i``, in the tile's type
        (in a pass over the row tile's shared part, into shared memory)."""
        element = ir.MemRefType(tile.type).element_type
        if self._in_shared and tile is self._kept:
            self.k.vstore(self.k.cast(value, element), self._shared, self._shared_index(i))
            return
        if self._in_shared and not isinstance(i, int):  # a slot of the row, not a staging tile's 0
            raise BuildError("in a pass over the row's vectors in shared memory, only the row's tile has those"
                             " slots (a plan with shared memory keeps no other tile of the row)")
        self.k.vstore(self.k.cast(value, element), tile, i)

    def max(self, tile):
        """The largest element of ``tile``, in f32 (one ``vector.reduction``; and its vectors
        in shared memory, one each)."""
        k = self.k
        top = k.cast(k.reduction("maximumf", k.vload(tile, 0, self.p.E)), "f32")
        if tile is not self._kept:
            return top
        for i, acc, result in k.range(self.p.E, self.p.E + self.p.S * self.V, self.V, carry=top, unroll=True):
            v = k.vload(self._shared, self._shared_index(i), self.V)
            k.yield_(arith.maximumf(acc, k.cast(k.reduction("maximumf", v), "f32")))
        return result

    def reduce(self, value, kind: str):
        """``value`` (one f32 per thread) reduced over the row's threads: every thread of
        the row gets the result."""
        return self._reduce(value, kind, "PARTIALS", "RESULT", 1)

    def reduce_lanes(self, value, kind: str):
        """``value`` (one f32 per thread) reduced over each warp's lanes: every lane gets
        its warp's result (the WARPS layout), a butterfly with no exchange; where a row is
        one warp, the row's (``reduce``)."""
        if "WARPS" not in self.layout:
            return self.reduce(value, kind)
        return self._reduce(value, kind, "LANES", "WARPS", 2)

    def _reduce(self, value, kind: str, src: str, dst: str, axis: int):
        k = self.k
        k.store(value, self._one, [0])
        ops.reduce(self._all, self._one, kind=kind, exec_scope=self._scope, axes=[axis],
                   src_layout=self.layout[src], dst_layout=self.layout[dst])
        return k.load(self._all, [0])

    @property
    def _scope(self) -> str:
        return "cluster" if self.p.CL > 1 else "cta"

    def reduce_pair(self, a, b, combine):
        """The pairs (``a``, ``b``) (two f32 per thread) folded over the row's threads by
        ``combine``: ``reduce_many`` of two."""
        return self.reduce_many([a, b], combine)

    def reduce_many(self, values, combine, *, per_warp: bool = False):
        """The tuples ``values`` (f32, one each per thread) folded over the row's threads by
        ``combine`` (``ops.reduce``'s callable): one combiner reduction, so one exchange
        through scratch and, in a cluster, one through distributed shared memory, where a
        ``reduce`` a value takes one each. Every thread of the row gets the tuple.
        ``per_warp``: the values are the warps' (``reduce_lanes``' results, the WARPS
        layout), folded over the row's warps and CTAs, so the combine runs only after the
        exchange, not in the lanes' butterfly; where a row is one warp, they are the row's
        already and come back as they are."""
        k, n = self.k, len(values)
        if per_warp and "WARPS" not in self.layout:
            return tuple(values)
        if n > len(self._ones):
            raise BuildError(f"a combiner reduction of {n} values needs row_kernel(..., operands={n})")
        for value, one in zip(values, self._ones):
            k.store(value, one, [0])
        # the warps' tuples folded pairwise, the lanes of each warp sharing the tree
        # (``fold = "tree"``): log2(W) combines a thread, not W - 1 (docs/lowering-cross-warp.md)
        ops.reduce(self._alls[:n], self._ones[:n], combine=combine, exec_scope=self._scope, axes=[1],
                   fold="tree" if per_warp else None,
                   src_layout=self.layout["WARPS" if per_warp else "PARTIALS"], dst_layout=self.layout["RESULT"])
        return tuple(k.load(a, [0]) for a in self._alls[:n])

    # --- memory -----------------------------------------------------------------------

    def load(self, tile, name: str, col=None, *, padding=None, cache=None) -> None:
        """This CTA's part of rows ``name`` (from column ``col``, default ``self.col``)
        into ``tile``, the columns past N as ``padding``; ``cache="streaming"``: rows
        that the kernel reads once (``tile.copy``'s cache hint, ``ld.global.cs``). Where the plan keeps S vectors a
        thread in shared memory, ``tile`` is the row's tile: its S vectors are loaded first,
        C at a time through ``tile`` (each part a ``tile.copy`` of the ROWS layout, C·32·W·V
        columns further), and stored to shared memory; then its C vectors. ``vectors``,
        ``put``, ``max`` and ``store`` then take both parts."""
        col = self.col if col is None else col
        p, k = self.p, self.k
        if p.S:
            if self._kept is not None and self._kept is not tile:
                raise BuildError("a plan with shared memory keeps one row tile's vectors there; this kernel loads"
                                 " a second")
            self._kept = tile
            for first, stage, layout in self._shared_parts(tile):
                ops.copy(stage, self.args[name], [self.row, arith.addi(col, k.index(first * WARP_SIZE * p.W))],
                         exec_scope="cta", layout=layout, padding=padding, cache=cache)
                for c in range(ir.MemRefType(stage.type).shape[0] // self.V):
                    i = k.index(first + c * self.V)
                    k.vstore(k.vload(stage, c * self.V, self.V), self._shared, self._shared_index(i))
        ops.copy(tile, self.args[name], [self.row, col], exec_scope="cta", layout=self.layout["ROWS"],
                 padding=padding, cache=cache)

    def load_cols(self, tile, name: str, col=None) -> None:
        """This CTA's part of the per-column vector ``name`` (from column ``col``, default
        ``self.col``) into ``tile``."""
        col = self.col if col is None else col
        ops.copy(tile, self.args[name], [col], exec_scope="cta", layout=self.layout["WEIGHTS"])

    def col_vector(self, name: str, i):
        """The V columns of the per-column vector ``name`` that slot ``i`` of this
        thread's row tile holds, in f32: one 16-byte ``tile.copy`` of a single vector
        (``WEIGHTS`` of one vector per thread), where the kernel needs it, rather than a
        whole tile beside the row (every row reads the same columns: L1 and L2 hits)."""
        k = self.k
        one = k.registers([self.V], self.T)
        ops.copy(one, self.args[name], [self._vector_col(i)], exec_scope="cta", layout=self._single["WEIGHTS"])
        return k.cast(k.vload(one, 0, self.V), "f32")

    def store_vector(self, name: str, i, value) -> None:
        """The f32 vector ``value``, slot ``i`` of this thread's row tile, into rows
        ``name`` in the dtype: one 16-byte ``tile.copy``. A kernel that loads with
        ``col_vector`` in the same loop stores this way, each result as it is made: the
        loads of the next slot then stay after this store (the arguments may alias), so
        the compiler cannot hoist them all above the loop and hold them beside the row."""
        one = self.k.registers([self.V], self.T)
        self.put(one, 0, value)
        ops.copy(self.args[name], one, [self.row, self._vector_col(i)], exec_scope="cta", layout=self._single["ROWS"])

    def _vector_col(self, i):
        """The first column of the vector at slot ``i`` of the row tile (as the layouts
        place it: ``col + i · 32 · W``, for the thread of lane and warp 0)."""
        return arith.addi(self.col, arith.muli(i, self.k.index(WARP_SIZE * self.p.W)))

    def store(self, name: str, tile, col=None) -> None:
        """``tile`` into this CTA's part of rows ``name`` (from column ``col``, default
        ``self.col``)."""
        col = self.col if col is None else col
        ops.copy(self.args[name], tile, [self.row, col], exec_scope="cta", layout=self.layout["ROWS"])
        if tile is not self._kept:
            return
        p, k = self.p, self.k
        for first, stage, layout in self._shared_parts(tile):  # through tile, stored already
            for c in range(ir.MemRefType(stage.type).shape[0] // self.V):
                i = k.index(first + c * self.V)
                k.vstore(k.vload(self._shared, self._shared_index(i), self.V), stage, [c * self.V])
            ops.copy(self.args[name], stage, [self.row, arith.addi(col, k.index(first * WARP_SIZE * p.W))],
                     exec_scope="cta", layout=layout)

    def _shared_parts(self, tile):
        """The shared part of the row tile as it goes between memory and shared memory: for
        each part, its first slot (E + b·C·V), the register tile it passes through
        (``tile`` for a part of C vectors, a smaller one for the last part's S mod C) and
        the part's ROWS layout."""
        p = self.p
        for b in range(-(-p.S // p.C)):
            n = min(p.C, p.S - b * p.C)
            if n == p.C:
                yield p.E + b * p.C * self.V, tile, self.layout["ROWS"]
            else:
                yield p.E + b * p.C * self.V, self._stage, replace(p, vectors=n, shared_vectors=0).layouts()["ROWS"]

    def store_row(self, name: str, value) -> None:
        """The f32 ``value`` (the row's, on each of its threads) into ``name``[row], in
        the element type of ``name``: one store per row, from the first CTA of its cluster."""
        k = self.k
        element = ir.MemRefType(self.args[name].type).element_type
        out = k.registers([1], element)
        k.store(k.cast(value, element), out, [0])
        if self.rank is None:
            ops.copy(self.args[name], out, [self.row], exec_scope="cta", layout=self.layout["ROW"])
            return
        with k.if_(arith.cmpi(arith.CmpIPredicate.eq, self.rank, k.index(0))):
            ops.copy(self.args[name], out, [self.row], exec_scope="cta", layout=self.layout["ROW"])
