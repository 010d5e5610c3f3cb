"""The backward row kernels, written with the builder: softmax, logsumexp, RMSNorm,
LayerNorm; and the column sums that finish RMSNorm's dw and LayerNorm's dw and db.

Each row kernel is a function over the row frame of ``tile_mlir.kernels.rows`` for one
row plan (the forward's: ``plan(M, N, dtype, <forward>)``), all math in f32:

* ``softmax_backward``: dX = Y · (dY − Σ dY·Y), two passes (the sum, the output);
* ``logsumexp_backward``: dX = dL · exp(X − L), one pass, L and dL one value per row;
* ``rmsnorm_backward``: x̂ = X · rstd, g = dY · W, dX = rstd · (g − x̂ · mean(g · x̂));
* ``layernorm_backward``: x̂ = (X − mean) · rstd, dX = rstd · (g − mean(g) − x̂ · mean(g · x̂)).

The norms' column sums (dW = Σ dY · x̂ over the rows, dB = Σ dY) are deterministic, in
two kernels and a fixed order (docs/training-kernels.md):

1. the row kernel runs on a persistent grid of G CTAs, or G clusters of CL CTAs where
   the plan splits a row (``ctas`` = G·CL; None: the launch's grid, ``gpu.grid_dim`` / CL
   clusters, the partial rows a dynamic dim whose extent G·R the argument
   ``partial_rows`` gives, so that one kernel serves every G): CTA (cluster) b takes the
   row groups b, b + G, b + 2G... (R rows a group, row slot s of a group on warp s) and
   adds each row's dY · x̂ (one ``math.fma`` per element) and dY into f32 accumulators
   that start at +0 and follow the row frame's layout, then writes them as partial rows
   b·R + s of a (G·R) × N f32 array (each CTA of a cluster its own columns of them). With
   one chunk per row (K = 1) the accumulators are registers; with K > 1 they are the
   CTA's own partial rows in global memory, read and written chunk by chunk by the thread
   that owns each column (no other thread touches them, so no race).
2. ``column_sums`` adds the G·R partial rows of each column in f32, each of its row warps
   a contiguous segment of them in order from +0, then the segments' sums in ascending
   order (``training.column_sums_grid``), and writes dW (and dB) in the dtype.

No atomics: the same inputs and G give the same bits on every run.

M None builds a kernel for every M (``tile_mlir.kernels.rows.row_kernel``: the row count
is the last argument, ``rows``); ``column_sums`` with P None, for every P (its last
argument).
"""

from __future__ import annotations

from mlir.dialects import arith, math

from .. import build, dynamic_dims, ops
from ..ir import ir
from ..vocab import DEFAULT_CHIP, WARP_SIZE
from .plan import RowPlan
from .rows import Rows, row_kernel
from .training import SUM_ROWS, SUM_V, column_sums_grid


def softmax_backward(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """dX = Y · (dY − Σ dY·Y), row by row: the row's Σ dY·Y, then the output pass, last
    chunk first (it is still in registers)."""
    with row_kernel("softmax_backward", p, M, [("Y", "rows"), ("DY", "rows"), ("DX", "rows")], chip) as r:
        k, y, dy = r.k, r.tile(), r.tile()
        for col, s0, s in r.chunks(y, "Y", carry=r.f32(0.0)):
            r.load(dy, "DY", col)
            for i, v, acc, s1 in r.vectors(y, carry=s0):
                k.yield_(k.reduction("add", arith.mulf(v, _f32(r, dy, i)), acc))
            k.yield_(s1)
        dot = r.splat(r.reduce(s, "sum"))
        for col in r.chunks(y, "Y", reverse=True, kept=True):
            _unless_last(r, col, lambda: r.load(dy, "DY", col))
            for i, v in r.vectors(y):
                r.put(y, i, arith.mulf(v, arith.subf(_f32(r, dy, i), dot)))
            r.store("DX", y, col)
    return k


def logsumexp_backward(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP):
    """dX = dL · exp(X − L), L and dL one value per row (of the dtype): one pass."""
    args = [("X", "rows"), ("L", "row"), ("DL", "row"), ("DX", "rows")]
    with row_kernel("logsumexp_backward", p, M, args, chip) as r:
        x = r.tile()
        lse, dl = r.splat(load_row(r, "L")), r.splat(load_row(r, "DL"))
        for col in r.chunks(x, "X"):
            for i, v in r.vectors(x):
                r.put(x, i, arith.mulf(dl, r.exp(v, lse)))
            r.store("DX", x, col)
    return r.k


def rmsnorm_backward(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP, ctas: int | None = None,
                     residual: bool = False):
    """dX = rstd · (g − x̂ · mean(g · x̂)), g = dY · W, x̂ = X · rstd; and the partial rows
    of dW = Σ dY · x̂ (module docstring), on a persistent grid of ``ctas`` CTAs. With
    ``residual`` (the kernel ``add_rmsnorm_backward``, X being ``add_rmsnorm``'s H): dX
    plus DH, the gradient that reached H itself."""
    args = [("DY", "rows"), *((("DH", "rows"),) if residual else ()), ("X", "rows"), ("W", "cols"),
            ("RSTD", "stat"), ("DX", "rows"), *_partials(p, ctas, ["DWP"])]
    with row_kernel("add_rmsnorm_backward" if residual else "rmsnorm_backward", p, M, args, chip) as r:
        k, w = r.k, r.tile()
        dh = r.tile() if residual else None
        sums = Partials(r, ["DWP"], ctas)
        inputs = Inputs(r, sums, ["X", "DY"], ["RSTD"])
        x, dy = inputs["X"], inputs["DY"]
        for _ in sums.rows():
            rstd = inputs.start()["RSTD"]
            for col, s0, s in r.chunks(carry=r.f32(0.0)):
                r.load_cols(w, "W", col)
                for i, v, acc, s1 in r.vectors(x, carry=s0):
                    g = arith.mulf(_f32(r, dy, i), _f32(r, w, i))
                    k.yield_(k.reduction("add", arith.mulf(g, v), acc))
                k.yield_(s1)
            inputs.load_next()
            # mean(g · x̂) = rstd · Σ g·x / N
            m = r.splat(arith.mulf(rstd, arith.divf(r.reduce(s, "sum"), r.f32(float(p.N)))))
            scale = r.splat(rstd)
            for col in r.chunks(x, "X", reverse=True, kept=_keeps(r)):
                _second_pass_loads(r, col, dy, w)
                if residual:
                    r.load(dh, "DH", col)
                (dw,) = sums.chunk(col)
                for i, v in r.vectors(x):
                    d, xhat = _f32(r, dy, i), arith.mulf(v, scale)
                    g = arith.mulf(d, _f32(r, w, i))
                    k.vstore(math.fma(d, xhat, k.vload(dw, i, r.V)), dw, i)
                    dx = arith.mulf(arith.subf(g, arith.mulf(xhat, m)), scale)
                    r.put(x, i, arith.addf(dx, _f32(r, dh, i)) if residual else dx)
                r.store("DX", x, col)
                sums.done(col)
            inputs.advance()
        sums.finish()
    return k


def add_rmsnorm_backward(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP, ctas: int | None = None):
    """``rmsnorm_backward`` of ``add_rmsnorm``: dX (of X and of R alike) = DH + the norm's dX."""
    return rmsnorm_backward(p, M, chip, ctas, residual=True)


def layernorm_backward(p: RowPlan, M: int | None, chip: str = DEFAULT_CHIP, ctas: int | None = None):
    """dX = rstd · (g − mean(g) − x̂ · mean(g · x̂)), g = dY · W, x̂ = (X − mean) · rstd;
    and the partial rows of dW = Σ dY · x̂ and dB = Σ dY (module docstring), on a
    persistent grid of ``ctas`` CTAs. The padded columns need no mask: their dY and W
    are 0, so g is 0 there."""
    args = [("DY", "rows"), ("X", "rows"), ("W", "cols"), ("MEAN", "stat"), ("RSTD", "stat"), ("DX", "rows"),
            *_partials(p, ctas, ["DWP", "DBP"])]
    with row_kernel("layernorm_backward", p, M, args, chip, operands=2) as r:
        k, w, n = r.k, r.tile(), r.f32(float(p.N))
        sums = Partials(r, ["DWP", "DBP"], ctas)
        inputs = Inputs(r, sums, ["X", "DY"], ["MEAN", "RSTD"])
        x, dy = inputs["X"], inputs["DY"]
        for _ in sums.rows():
            stats = inputs.start()
            center, scale = r.splat(stats["MEAN"]), r.splat(stats["RSTD"])
            zero = r.f32(0.0)
            for col, (a0, b0), (sg, sgx) in r.chunks(carry=[zero, zero]):
                r.load_cols(w, "W", col)
                for i, v, (acc_g, acc_gx), ends in r.vectors(x, carry=[a0, b0]):
                    g = arith.mulf(_f32(r, dy, i), _f32(r, w, i))
                    xhat = arith.mulf(arith.subf(v, center), scale)
                    k.yield_(k.reduction("add", g, acc_g), k.reduction("add", arith.mulf(g, xhat), acc_gx))
                k.yield_(*ends)
            inputs.load_next()
            # One CTA a row: both sums in one combiner reduction, one exchange between the
            # warps (one barrier) a row, not two. A cluster keeps two unless the plan says
            # ``pair``: the pair's exchange between the CTAs needs registers that CTAs of
            # 1024 threads lack (the H200 measured 1024 x 65536 f32, capped at 32
            # registers, spilling 356 bytes: half the speed); the measured table decides.
            if p.CL == 1 or p.pair:
                total_g, total_gx = r.reduce_pair(sg, sgx, _sums)
                mean_g, mean_gx = r.splat(arith.divf(total_g, n)), r.splat(arith.divf(total_gx, n))
            else:
                mean_g = r.splat(arith.divf(r.reduce(sg, "sum"), n))
                mean_gx = r.splat(arith.divf(r.reduce(sgx, "sum"), n))
            for col in r.chunks(x, "X", reverse=True, kept=True):  # x kept: LayerNorm spills less
                _second_pass_loads(r, col, dy, w)
                dw, db = sums.chunk(col)
                for i, v in r.vectors(x):
                    d, xhat = _f32(r, dy, i), arith.mulf(arith.subf(v, center), scale)
                    g = arith.mulf(d, _f32(r, w, i))
                    k.vstore(math.fma(d, xhat, k.vload(dw, i, r.V)), dw, i)
                    k.vstore(arith.addf(k.vload(db, i, r.V), d), db, i)
                    r.put(x, i, arith.mulf(arith.subf(arith.subf(g, mean_g), arith.mulf(xhat, mean_gx)), scale))
                r.store("DX", x, col)
                sums.done(col)
            inputs.advance()
        sums.finish()
    return k


def _sums(left, right):
    """The combine of two (Σg, Σg·x̂) pairs: each sum added on its own."""
    return [arith.addf(left[0], right[0]), arith.addf(left[1], right[1])]


def column_sums(P: int | None, N: int, dtype: str, names=("DWP",), chip: str = DEFAULT_CHIP):
    """Out[c] = Σ_p In[p, c] for each of ``names`` (P × N f32 partial rows), in f32, the
    result in ``dtype``, in the order of docs/training-kernels.md: with the shape
    ``column_sums_grid(N)`` (Wc column warps, Wr row warps a CTA), row warp r adds the
    segment of partial rows r·S, ..., r·S + S − 1 (S: ``Sums.segment(P)``; rows past P
    read as +0) in order from +0, SUM_ROWS loaded at once; then ``tile.reduce`` (cta
    scope, sum) folds the Wr warp sums in ascending warp order (Wr 1: p = 0, ..., P − 1
    from +0 in one chain). Each thread owns SUM_V columns, a warp 32 · SUM_V side by side,
    CTA c the ``columns`` from c · columns. P None: any P, the last argument (``P``,
    index)."""
    shape = column_sums_grid(N)
    Wc, Wr = shape.column_warps, shape.row_warps
    outs = [n[:-1] for n in names]  # DWP -> DW
    rows = "?" if P is None else P
    args = [(n, f"memref<{rows}x{N}xf32>") for n in names] + [(o, f"memref<{N}x{dtype}>") for o in outs]
    args += [("P", "index")] if P is None else []
    tile_layout = f"S[({SUM_ROWS}, ({WARP_SIZE}, {SUM_V})) : ({SUM_V}, (1@laneid, 1))]"  # a warp's rows
    cols, col_strides = f"({Wc}, {WARP_SIZE}, {SUM_V})", "(1@warpid, 1@laneid, 1)"  # a CTA's columns
    sums_layout = f"S[({Wr}, {cols}) : ({Wc}@warpid, {col_strides})]"  # one sum a row warp
    row_layout = f"S[({cols}) : ({col_strides})]" + (f" + R[{Wr} : {Wc}@warpid]" if Wr > 1 else "")
    with build.kernel("column_sums", args, chip=chip, known_block_size=shape.threads, align=16) as k:
        if P is None:
            dynamic_dims.mark(k.func, {i: [len(args) - 1] for i in range(len(names))})
            P = k.args["P"]
        P = k.index(P)
        first = arith.muli(k.block_id(), k.index(shape.columns))
        warp = k.warp_id()
        column = arith.addi(first, arith.muli(arith.remui(warp, k.index(Wc)), k.index(WARP_SIZE * SUM_V)))
        # S = ceil(P / (Wr · SUM_ROWS)) · SUM_ROWS, and row warp r's segment from r · S
        runs = arith.divui(arith.addi(P, k.index(Wr * SUM_ROWS - 1)), k.index(Wr * SUM_ROWS))
        segment = arith.muli(runs, k.index(SUM_ROWS))
        start = arith.muli(arith.divui(warp, k.index(Wc)), segment)
        zero = k.constant(0.0, f"vector<{SUM_V}xf32>")
        tiles = [k.registers([SUM_ROWS * SUM_V], "f32") for _ in names]
        for p0, accs, totals in k.range(0, segment, SUM_ROWS, carry=[zero] * len(names)):
            row, sums = arith.addi(start, p0), []
            for name, tile, acc in zip(names, tiles, accs):
                ops.copy(tile, k.args[name], [row, column], exec_scope="warp", layout=tile_layout)
                for u in range(SUM_ROWS):  # in order: row start + p0 + u
                    acc = arith.addf(acc, k.vload(tile, u * SUM_V, SUM_V))
                sums.append(acc)
            k.yield_(*sums)
        for out, total in zip(outs, totals):
            if Wr > 1:  # the row warps' sums, in ascending warp order
                mine, folded = k.registers([SUM_V], "f32"), k.registers([SUM_V], "f32")
                k.vstore(total, mine, 0)
                ops.reduce(folded, mine, kind="sum", exec_scope="cta", axes=[0], src_layout=sums_layout,
                           dst_layout=row_layout)
                total = k.vload(folded, 0, SUM_V)
            result = k.registers([SUM_V], dtype)
            k.vstore(k.cast(total, dtype), result, 0)
            ops.copy(k.args[out], result, [first], exec_scope="cta", layout=row_layout)
    return k


# --- the steps ----------------------------------------------------------------------------


def _f32(r: Rows, tile, i):
    """The vector of ``tile`` at slot ``i``, in f32."""
    return r.k.cast(r.k.vload(tile, i, r.V), "f32")


# Up to this many threads per CTA (so at least 255 registers a thread), the norms keep x
# and dy in registers from the first pass to the second; with more, they read dy again
# (from L2: the row was just read), RMSNorm x too, which leaves the registers to the
# accumulators (the fewest spills, by ptxas: docs/training-kernels.md).
KEEP_DY_THREADS = 256


def _keeps(r: Rows) -> bool:
    return bool(r.p.prefetch) or r.p.threads <= KEEP_DY_THREADS  # prefetch: the row's tiles stay whole


def _second_pass_loads(r: Rows, col, dy, w) -> None:
    """A norm's second pass: w again (from L1/L2, rather than keep it across the
    reduction), and dy unless it is still in registers (``KEEP_DY_THREADS``)."""
    if _keeps(r):
        _unless_last(r, col, lambda: r.load(dy, "DY", col))
    else:
        r.load(dy, "DY", col)
    r.load_cols(w, "W", col)


def _unless_last(r: Rows, col, load) -> None:
    """``load()`` unless ``col`` is the row's last chunk, which the pass before (first to
    last) left in registers."""
    k = r.k
    last = arith.addi(r.col, k.index((r.p.K - 1) * r.p.CH))  # from the CTA's first column (its rank's)
    with k.if_(arith.cmpi(arith.CmpIPredicate.ne, col, last)):
        load()


def load_row(r: Rows, name: str):
    """``name``[row] (one value per row, of any float type) on each of the CTA's threads
    of the row (each CTA of a cluster reads it), in f32."""
    value = r.k.registers([1], ir.MemRefType(r.args[name].type).element_type)
    _load_value(r, value, name)
    return r.k.cast(r.k.load(value, [0]), "f32")


def _load_value(r: Rows, value, name: str) -> None:
    """``name``[row] (one value per row) into the one-element tile ``value``."""
    ops.copy(value, r.args[name], [r.row], exec_scope="cta", layout=r.layout["ROW"])


class Inputs:
    """A norm backward's per-row inputs in registers, for its loop over rows
    (``Partials.rows``): ``rows`` (x, dy: a tile each, ``inputs[name]``) and ``stats``
    (one value a row: mean, rstd). Each row's iteration calls ``start()`` (the stats, in
    f32, by name), ``load_next()`` after its first pass, ``advance()`` at its end.

    Without the plan's ``prefetch``, ``start()`` loads the row. With it, the first row is
    loaded before the loop, and ``load_next()`` loads the next row (the loop's next
    index; past M, the copies' row tests skip it) into a second set of tiles while this
    row's reduction and second pass run, so the loads' latency overlaps them rather than
    following them (a persistent CTA holds one row at a time: docs/training-kernels.md,
    "The next row, early"); ``advance()`` moves the second set into the first."""

    def __init__(self, r: Rows, sums: "Partials", rows, stats):
        self.r, self.sums, self.rows, self.stats = r, sums, list(rows), list(stats)
        self.prefetch = bool(r.p.prefetch)
        self.now = self._tiles()
        self.ahead = self._tiles() if self.prefetch else None
        if self.prefetch:
            self._load(self.now)  # the first row: the loop's first index, r.row as Rows set it

    def __getitem__(self, name: str):
        return self.now[name]

    def _tiles(self) -> dict:
        r = self.r
        tiles = {name: r.tile() for name in self.rows}
        for name in self.stats:
            tiles[name] = r.k.registers([1], ir.MemRefType(r.args[name].type).element_type)
        return tiles

    def _load(self, tiles: dict) -> None:
        for name in self.rows:
            self.r.load(tiles[name], name)
        for name in self.stats:
            _load_value(self.r, tiles[name], name)

    def start(self) -> dict:
        if not self.prefetch:
            self._load(self.now)
        k = self.r.k
        return {name: k.cast(k.load(self.now[name], [0]), "f32") for name in self.stats}

    def load_next(self) -> None:
        if not self.prefetch:
            return
        r = self.r
        here, r.row = r.row, self.sums.next_row
        try:
            self._load(self.ahead)
        finally:
            r.row = here

    def advance(self) -> None:
        if not self.prefetch:
            return
        k, E = self.r.k, self.r.p.E
        for name in self.rows:
            k.vstore(k.vload(self.ahead[name], 0, E), self.now[name], 0)
        for name in self.stats:
            k.store(k.load(self.ahead[name], [0]), self.now[name], [0])


def _partials(p: RowPlan, ctas: int | None, names) -> list[tuple[str, str]]:
    """The arguments of the partial rows ``names``: (G·R) × N f32 each (G = ctas / CL
    clusters), and for ctas None (the launch's grid) a dynamic leading dim, whose extent
    follows them (``partial_rows``); ``Partials`` marks it."""
    if ctas is not None:
        return [(n, f"memref<{ctas // p.CL * p.R}x{p.N}xf32>") for n in names]
    return [*((n, f"memref<?x{p.N}xf32>") for n in names), ("partial_rows", "index")]


class Partials:
    """The f32 column accumulators of a persistent row kernel (module docstring): one per
    name (a (G·R) × N partial array, G = ctas / CL clusters; ctas None: the grid's).
    ``rows()`` is the loop over this cluster's row groups (it sets ``r.row``);
    ``chunk(col)`` gives the accumulator tiles of a chunk, ``done(col)`` ends it,
    ``finish()`` writes the partial rows (each CTA of a cluster its columns of them)."""

    def __init__(self, r: Rows, names, ctas: int | None):
        self.r, self.names = r, list(names)
        self.groups = ctas // r.p.CL if ctas is not None else None
        k = r.k
        if ctas is None:  # the partial rows' extent: the argument after them
            at = {n: i for i, n in enumerate(k.args)}
            dynamic_dims.mark(k.func, {at[n]: [at["partial_rows"]] for n in names})
        self.first = arith.muli(r.group, k.index(r.p.R))  # this cluster's first partial row
        self.tiles = [k.registers([r.p.E], "f32") for _ in names]
        self.in_registers = r.p.K == 1
        if self.in_registers:
            self._zero()
        else:  # the partial rows themselves accumulate: zero them first
            for col in r.chunks():
                self._zero()
                self._copy(col, store=True)

    def rows(self):
        r, k = self.r, self.r.k
        groups = arith.divui(arith.addi(r.rows(), k.index(r.p.R - 1)), k.index(r.p.R))
        # unsigned, as tile.copy's row tests: with one row a group (groups is M) LLVM
        # proves them true and drops them, as it did for a static M
        if self.groups is not None:
            stride = self.groups
        else:  # the grid's clusters
            stride = k.grid_dim() if r.p.CL == 1 else arith.divui(k.grid_dim(), k.index(r.p.CL))
        for g in k.range(r.group, groups, stride, unsigned=True):
            r.row = arith.muli(g, k.index(r.p.R))
            self.next_row = arith.muli(arith.addi(g, k.index(stride)), k.index(r.p.R))  # ``Inputs.load_next``
            yield g

    def chunk(self, col):
        if not self.in_registers:
            self._copy(col, store=False)
        return self.tiles

    def done(self, col) -> None:
        if not self.in_registers:
            self._copy(col, store=True)

    def finish(self) -> None:
        if self.in_registers:
            self._copy(self.r.col, store=True)

    def _zero(self) -> None:
        k, V = self.r.k, self.r.V
        for tile in self.tiles:
            for i in k.range(0, self.r.p.E, V, unroll=True):
                k.vstore(k.constant(0.0, f"vector<{V}xf32>"), tile, i)

    def _copy(self, col, *, store: bool) -> None:
        layout = self.r.layout["ROWS"]
        for name, tile in zip(self.names, self.tiles):
            where = self.r.args[name]
            dst, src = (where, tile) if store else (tile, where)
            ops.copy(dst, src, [self.first, col], exec_scope="cta", layout=layout)


def column_sums_of(p: RowPlan, P: int, chip: str = DEFAULT_CHIP, arrays: int = 1):
    """``column_sums`` of ``arrays`` partial arrays of P rows, for the N and dtype of plan
    ``p`` (the library's builder signature: plan, rows, chip)."""
    return column_sums(P, p.N, p.dtype, ("DWP", "DBP")[:arrays], chip)


BUILDERS = {"softmax_backward": softmax_backward, "logsumexp_backward": logsumexp_backward,
            "rmsnorm_backward": rmsnorm_backward, "layernorm_backward": layernorm_backward,
            "add_rmsnorm_backward": add_rmsnorm_backward, "column_sums": column_sums_of}
# The forward whose row plan each backward takes.
FORWARD = {"softmax_backward": "softmax", "logsumexp_backward": "logsumexp", "rmsnorm_backward": "rmsnorm",
           "layernorm_backward": "layernorm", "add_rmsnorm_backward": "rmsnorm"}
