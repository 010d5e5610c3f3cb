"""The row plan: how a fused kernel spreads the rows of an M x N matrix over threads.

A ``RowPlan`` says, for one row length N and dtype:

* the threads of a CTA (``threads``): ``rows_per_cta`` rows of ``warps_per_row`` warps;
* the CTAs of a row (``ctas_per_row``: 1 today; a thread-block cluster later);
* the vector width (``vector_bytes``: 16, one ``ld.global.v4.b32``, so V = 4 f32 or 8
  bf16 elements);
* where the row lives (``row_in``: ``registers``): each thread keeps E = C·V elements of
  a *chunk* of CH = 32·W·E columns, C vectors of V, and a row is K chunks.

Three kinds of plan (``kind``), each a way to hold the row:

* ``warp``: one warp per row (W = 1), 4 rows per CTA, for rows that fit in one warp's
  registers (N <= 32·E_MAX: 1024 f32, 2048 bf16): the reductions are lane butterflies;
* ``warps``: W = 2..32 warps per row, one row per CTA, the row in the CTA's registers
  (N <= 16384 f32, 32768 bf16), each reduction a cta-scope ``tile.reduce`` (one barrier);
* ``online``: longer rows: 32 warps per row and K >= 2 chunks; each thread keeps running
  statistics, and every later pass reads the row again, starting with the chunk still
  in registers.

E_MAX, the elements a thread keeps, is 32 registers of data: 32 f32 or 64 bf16 (two to a
register), and half that with 32 warps, where a cta reduction's 32 partials need
registers of their own beside the tile in the 64 a thread of a 1024-thread CTA has.

``plan(M, N, dtype, kernel)`` chooses one and says why (``RowPlan.why``; ``print`` a plan
to read both). The plan does not depend on M (the grid does: ``grid(M)``), nor yet on
the kernel: the four kernels share it. ``python -m tile_mlir.kernels.plan M N [dtype
[kernel]]`` prints the plan of a shape.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field

from ..errors import OptionError
from ..vocab import DTYPE_BYTES, MAX_BLOCK_THREADS, MAX_VECTOR_BYTES, WARP_SIZE

__all__ = ["DTYPES", "KERNELS", "KINDS", "RowPlan", "max_elements", "plan"]

KERNELS = ("softmax", "rmsnorm", "layernorm", "logsumexp")
DTYPES = ("f32", "bf16")
KINDS = ("warp", "warps", "online")
MAX_WARPS = MAX_BLOCK_THREADS // WARP_SIZE  # 32: the largest CTA
ROWS_PER_CTA = 4  # the warp plan: 4 rows (warps) per CTA
DATA_BYTES = 128  # a thread keeps 32 registers of its row (64 bytes with 32 warps)


def max_elements(dtype: str, warps: int) -> int:
    """E_MAX: the elements of a row one thread keeps in registers, for ``warps`` per row."""
    return (DATA_BYTES if warps < MAX_WARPS else DATA_BYTES // 2) // DTYPE_BYTES[dtype]


@dataclass(frozen=True)
class RowPlan:
    """How a kernel spreads rows of N elements of ``dtype`` (module docstring): R rows
    per CTA, W warps per row, C vectors of V elements per thread per chunk (E = C·V), K
    chunks of CH columns per row. ``why`` says why ``plan`` chose it."""

    N: int
    dtype: str  # "f32" | "bf16"
    rows_per_cta: int  # R
    warps_per_row: int  # W
    vectors: int  # C
    chunks: int  # K
    ctas_per_row: int = 1
    vector_bytes: int = MAX_VECTOR_BYTES
    row_in: str = "registers"
    why: str = field(default="", compare=False)

    @property
    def kind(self) -> str:
        return "online" if self.chunks > 1 else ("warp" if self.warps_per_row == 1 else "warps")

    R = property(lambda self: self.rows_per_cta)
    W = property(lambda self: self.warps_per_row)
    C = property(lambda self: self.vectors)
    K = property(lambda self: self.chunks)

    @property
    def V(self) -> int:
        """Elements per vector."""
        return self.vector_bytes // DTYPE_BYTES[self.dtype]

    @property
    def E(self) -> int:
        """Elements per thread per chunk."""
        return self.C * self.V

    @property
    def CH(self) -> int:
        """Columns per chunk."""
        return WARP_SIZE * self.W * self.E

    @property
    def threads(self) -> int:
        """Threads per CTA."""
        return WARP_SIZE * self.R * self.W

    def grid(self, M: int) -> int:
        """CTAs for M rows."""
        return -(-M // self.R) * self.ctas_per_row

    def label(self) -> str:
        """The plan in a few characters: ``warps W8 E16 K1``."""
        return f"{self.kind} R{self.R} W{self.W} E{self.E} K{self.K}"

    def describe(self) -> str:
        return (f"{self.kind}: {self.R} row(s) per CTA of {self.threads} threads, {self.W} warp(s) per row,"
                f" {self.E} elements per thread per chunk, {self.K} chunk(s) of {self.CH} columns")

    def __str__(self) -> str:
        return f"{self.describe()}\n  why: {self.why}" if self.why else self.describe()

    def layouts(self) -> dict[str, str]:
        """The tile layouts: ROWS (a chunk of R rows, cta scope), WEIGHTS (a chunk of a
        weight vector, the same columns, replicated over the R rows), PARTIALS (one value
        per thread, the W·32 of a row along dim 1) and RESULT (one value per row, held by
        each of the row's threads)."""
        R, W, C, V = self.R, self.W, self.C, self.V
        warps = [(W, "1@warpid")] if W > 1 else []
        cols = ([(C, f"{V}")] if C > 1 else []) + warps + [(WARP_SIZE, "1@laneid"), (V, "1")]
        threads = warps + [(WARP_SIZE, "1@laneid")]
        lanes = [(WARP_SIZE, "1@laneid")] + warps
        row = f"{W}@warpid" if R > 1 else "1"

        def modes(iters):
            return f"({', '.join(str(e) for e, _ in iters)})", f"({', '.join(s for _, s in iters)})"

        (ce, cs), (te, ts), (le, ls) = modes(cols), modes(threads), modes(lanes)
        return {
            "ROWS": f"S[({R}, {ce}) : ({row}, {cs})]",
            "WEIGHTS": f"S[({ce}) : ({cs})]" + (f" + R[{R} : {W}@warpid]" if R > 1 else ""),
            "PARTIALS": f"S[({R}, {te}) : ({row}, {ts})]",
            "RESULT": f"S[{R} : {row}] + R[{le} : {ls}]",
        }


def plan(M: int, N: int, dtype: str = "f32", kernel: str | None = None, *, warps: int | None = None,
         vectors: int | None = None) -> RowPlan:
    """The plan for an M x N matrix of ``dtype`` run by ``kernel`` (module docstring),
    with why it was chosen. ``warps`` (per row) and ``vectors`` (16-byte vectors per
    thread per chunk) override the choice, for tests and tuning; the row is then as many
    chunks as it takes."""
    if dtype not in DTYPES:
        raise OptionError(f"dtype must be f32 or bf16, got {dtype!r}")
    if kernel is not None and kernel not in KERNELS:
        raise OptionError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if M < 1 or N < 1:
        raise OptionError(f"the matrix must have at least one row and one column, got {M} x {N}")
    V = MAX_VECTOR_BYTES // DTYPE_BYTES[dtype]
    one_warp, cta = WARP_SIZE * max_elements(dtype, 1), MAX_BLOCK_THREADS * max_elements(dtype, MAX_WARPS)
    if warps is not None:
        why = f"forced: {warps} warp(s) per row" + (f", {vectors} vector(s) per thread" if vectors else "")
    elif N <= one_warp:
        warps, why = 1, (f"N = {N} fits in one warp's registers (at most {one_warp} {dtype} columns,"
                         f" {max_elements(dtype, 1)} per thread): no barrier, 4 rows per CTA")
    elif N <= cta:  # half the budget per thread where the row allows it: more warps, shorter chains
        warps = min(MAX_WARPS, _pow2(-(-N // (WARP_SIZE * max_elements(dtype, 2) // 2))))
        if N > WARP_SIZE * warps * max_elements(dtype, warps):
            warps = MAX_WARPS
        why = (f"N = {N} is more than one warp holds ({one_warp}) and fits in one CTA's registers"
               f" (at most {cta}): {warps} warps give each thread about half its budget of"
               f" {max_elements(dtype, 2)} elements; one barrier per reduction")
    else:
        warps = MAX_WARPS
        why = (f"N = {N} is more than one CTA's registers hold ({cta} {dtype} columns): chunks of {cta},"
               f" running statistics per thread, and each later pass reads the row again")
    if warps not in (1, 2, 4, 8, 16, 32):
        raise OptionError(f"warps per row must be a power of two up to {MAX_WARPS}, got {warps}")
    if vectors is None:
        vectors = min(max_elements(dtype, warps), _round_up(-(-N // (WARP_SIZE * warps)), V)) // V
    if vectors < 1:
        raise OptionError(f"vectors per thread must be at least 1, got {vectors}")
    chunks = -(-N // (WARP_SIZE * warps * V * vectors))
    return RowPlan(N, dtype, ROWS_PER_CTA if warps == 1 else 1, warps, vectors, chunks, why=why)


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(n)))


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tile_mlir.kernels.plan",
                                     description="Print the row plan of an M x N matrix, and why.")
    parser.add_argument("M", type=int)
    parser.add_argument("N", type=int)
    parser.add_argument("dtype", nargs="?", default="f32", choices=DTYPES)
    parser.add_argument("kernel", nargs="?", choices=KERNELS)
    args = parser.parse_args(argv)
    p = plan(args.M, args.N, args.dtype, args.kernel)
    print(f"{args.M} x {args.N} {args.dtype}: {p}\n  grid: {p.grid(args.M)} CTA(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
