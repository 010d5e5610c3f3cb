"""What the row kernels share: the frame of a kernel over rows, for one plan.

``row_kernel(name, plan, M, args)`` opens a ``tile_mlir.build.kernel`` over the rows of an
M x N matrix and hands over a ``Rows``: the builder (``r.k``), the plan (``r.p``), this
CTA's first row, and the handful of steps every row kernel is made of, each a few
upstream builders and a ``tile_mlir.ops`` op:

* ``chunks``: a loop over the row's chunks (``scf.for``), first to last or last to
  first, loading each into a register tile with ``tile.copy`` (the ``ROWS`` layout:
  16-byte vectors, the columns past N padded), except the one a pass starts with that is
  still in registers;
* ``vectors``: an unrolled loop over the tile's V-element vectors, each in f32;
* ``reduce``: one value per thread reduced over the row's threads (``tile.reduce`` at cta
  scope, ``PARTIALS`` to ``RESULT``): lane butterflies, and across warps one barrier;
* ``store``, ``store_row``, ``load_cols``: a chunk of a row, one value per row, a chunk
  of a per-column vector (weight, bias), through ``tile.copy``.

Each op is located at the kernel's line that asked for it (``build.helpers``), not at a
line of this module. The argument roles of ``row_kernel``: ``rows`` (M x N of the dtype), ``cols`` (N),
``row`` (M, one value per row of the dtype), ``stat`` (M, f32) and ``f32`` (a scalar).
"""

from __future__ import annotations

from contextlib import contextmanager

from mlir.dialects import arith

from .. import build, ops
from ..ir import ir
from ..vocab import DEFAULT_CHIP
from .plan import RowPlan

MAX_VECTOR_ALIGN = 16

build.helpers(__file__)  # the ops built here are located at the kernel's line that asked for them


def arg_types(p: RowPlan, M: int) -> dict[str, str]:
    """The MLIR type of each argument role, for M rows of plan ``p``."""
    T = p.dtype
    return {"rows": f"memref<{M}x{p.N}x{T}>", "cols": f"memref<{p.N}x{T}>", "row": f"memref<{M}x{T}>",
            "stat": f"memref<{M}xf32>", "f32": "f32"}


@contextmanager
def row_kernel(name: str, p: RowPlan, M: int, args, chip: str = DEFAULT_CHIP):
    """A kernel ``name`` over M rows of plan ``p``; ``args``: (name, role) pairs."""
    types = arg_types(p, M)
    with build.kernel(name, [(n, types[role]) for n, role in args], chip=chip, known_block_size=p.threads,
                      align=MAX_VECTOR_ALIGN) as k:
        yield Rows(k, p)


class Rows:
    """A row kernel being built (module docstring). ``k``: the ``build.KernelBuilder``;
    ``p``: the plan; ``row``: this CTA's first row; ``T``: the element type; ``V``: the
    elements of a vector; ``args``: the kernel's arguments by name."""

    def __init__(self, k: build.KernelBuilder, p: RowPlan):
        self.k, self.p, self.args = k, p, k.args
        self.T, self.V = p.dtype, p.V
        self.layout = p.layouts()
        self.row = arith.muli(k.block_id(), k.index(p.R))
        self._one, self._all = k.registers([1], "f32"), k.registers([1], "f32")

    # --- values ---------------------------------------------------------------------

    def f32(self, value: float):
        return self.k.constant(value, "f32")

    def splat(self, value):
        """A vector of V copies of the f32 ``value``."""
        return self.k.splat(value, self.V)

    def eq(self, a, b):
        return arith.cmpf(arith.CmpFPredicate.OEQ, a, b)

    def tile(self):
        """A register tile of a chunk: E elements of the dtype."""
        return self.k.registers([self.p.E], self.T)

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
            col = arith.muli(j, k.index(self.p.CH))
            if tile is not None:
                if kept:
                    with k.if_(arith.cmpi(arith.CmpIPredicate.ne, it if not carry else it[0], k.index(0))):
                        self.load(tile, name, col, padding=padding)
                else:
                    self.load(tile, name, col, padding=padding)
            yield col if not carry else (col, *it[1:])

    def vectors(self, tile, carry=None):
        """For each vector of ``tile`` (an unrolled loop): its first slot and its value in
        f32; with ``carry``, also the carried value and the loop's result."""
        k = self.k
        for it in k.range(0, self.p.E, self.V, carry=carry if carry is not None else (), unroll=True):
            i = it if carry is None else it[0]
            v = k.cast(k.vload(tile, i, self.V), "f32")
            yield (i, v) if carry is None else (i, v, *it[1:])

    def put(self, tile, i, value) -> None:
        """Store the f32 vector ``value`` into ``tile`` at slot ``i``, in the dtype."""
        self.k.vstore(self.k.cast(value, self.T), tile, i)

    def max(self, tile):
        """The largest element of ``tile``, in f32 (one ``vector.reduction``)."""
        k = self.k
        return k.cast(k.reduction("maximumf", k.vload(tile, 0, self.p.E)), "f32")

    def reduce(self, value, kind: str):
        """``value`` (one f32 per thread) reduced over the row's threads: every thread of
        the row gets the result."""
        k = self.k
        k.store(value, self._one, [0])
        ops.reduce(self._all, self._one, kind=kind, exec_scope="cta", axes=[1],
                   src_layout=self.layout["PARTIALS"], dst_layout=self.layout["RESULT"])
        return k.load(self._all, [0])

    # --- memory -----------------------------------------------------------------------

    def load(self, tile, name: str, col, *, padding=None) -> None:
        """The chunk of rows ``name`` from column ``col`` into ``tile``."""
        ops.copy(tile, self.args[name], [self.row, col], exec_scope="cta", layout=self.layout["ROWS"],
                 padding=padding)

    def load_cols(self, tile, name: str, col) -> None:
        """The chunk of the per-column vector ``name`` from column ``col`` into ``tile``."""
        ops.copy(tile, self.args[name], [col], exec_scope="cta", layout=self.layout["WEIGHTS"])

    def store(self, name: str, tile, col) -> None:
        """``tile`` into the chunk of rows ``name`` from column ``col``."""
        ops.copy(self.args[name], tile, [self.row, col], exec_scope="cta", layout=self.layout["ROWS"])

    def store_row(self, name: str, value) -> None:
        """The f32 ``value`` (the row's, on each of its threads) into ``name``[row], in
        the element type of ``name``: one store per row."""
        k = self.k
        element = ir.MemRefType(self.args[name].type).element_type
        out = k.registers([1], element)
        k.store(k.cast(value, element), out, [0])
        ops.copy(self.args[name], out, [self.row], exec_scope="cta", layout=self.layout["RESULT"])
