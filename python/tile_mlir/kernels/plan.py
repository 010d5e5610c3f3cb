"""The row plan: how a fused kernel spreads the rows of an M x N matrix over threads.

Every plan keeps the whole row on chip, so each element of x is read from HBM once. A
``RowPlan`` says, for one row length N and dtype:

* the threads of a CTA (``threads``): ``rows_per_cta`` rows of ``warps_per_row`` warps;
* the CTAs of a row (``ctas_per_row``): 1, or a thread-block cluster of 2..16 CTAs, CTA
  ``rank`` holding the row's columns from ``rank * CH``;
* the vector width (``vector_bytes``: 16, one ``ld.global.v4.b32``, so V = 4 f32 or 8
  bf16 elements);
* where the row lives (``row_in``): ``registers``, each thread keeping E = C·V elements, C
  vectors of V, so a CTA holds CH = 32·W·E columns of its row and a row CL·CH; or
  ``registers+shared``, where a row is longer than the registers of a cluster of 16 hold:
  then each thread also keeps S ≤ j·C vectors (j = 1..3, ``SHARED_PARTS``; the T = C + S
  it needs split as C = ⌈T / (1 + j)⌉ and S = T - C) in dynamic shared memory (at most 192
  KB a CTA), vector c of its part at column 32·W·V·c for c < C + S, so CH = 32·W·(C +
  S)·V, and a row of up to 1048576 f32 or 2097152 bf16 columns is still read once
  (``Rows.load``: the shared part goes through the register tile, C vectors at a time).

Three kinds of plan (``kind``):

* ``warp``: one warp per row, 4 rows per CTA: the reductions are lane butterflies;
* ``warps``: W = 2..32 warps per row in one CTA (R rows per CTA): each reduction a
  cta-scope ``tile.reduce`` (one barrier, shared by the CTA's R rows);
* ``cluster``: a row over a cluster of CL = 2..16 CTAs: each reduction a cluster-scope
  ``tile.reduce`` (the CTA's barrier, then one exchange of the CTAs' partials through
  distributed shared memory between two cluster barriers).

**The plan table** (``Table``): tiers, each the longest row it serves and how (CTAs,
warps, rows per CTA, the parts in shared memory; warps ``None``: the rule below); ``plan`` takes the first tier that
holds N. ``registers_table`` derives the default from the registers; a measured table
can replace it (``plan(..., table=)``), and tests scale it down (``data_bytes``,
``max_warps``) so that a cluster of 16 shows up at a few thousand columns.

E_MAX, the elements a thread keeps, is ``data_bytes`` (128: 32 registers, 32 f32 or 64
bf16) of them, and half that in a CTA of 1024 threads, where a thread has 64 registers
and a cta reduction's 32 partials need registers of their own. The rule for W (a tier's
warps ``None``): the power of two that gives each thread about half of E_MAX, then more
warps until the CTA's share of the row fits. C is the fewest vectors that cover the row
(the masked tail: at most one vector per thread beyond an even split).

``plan(M, N, dtype, kernel)`` chooses and says why (``RowPlan.why``; ``print`` a plan to
read both). The plan does not depend on M (the grid does: ``grid(M)``), nor yet on the
kernel. ``python -m tile_mlir.kernels.plan M N [dtype [kernel]]`` prints a shape's plan.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import operator
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import OptionError
from ..vocab import DTYPE_BYTES, MAX_BLOCK_THREADS, MAX_CLUSTER_CTAS, MAX_VECTOR_BYTES, WARP_SIZE

__all__ = ["DTYPES", "KERNELS", "KINDS", "TABLES", "RowPlan", "Table", "Tier", "candidates", "max_elements", "plan",
           "registers_table"]

KERNELS = ("softmax", "rmsnorm", "layernorm", "logsumexp")
DTYPES = ("f32", "bf16")
KINDS = ("warp", "warps", "cluster")
MAX_WARPS = MAX_BLOCK_THREADS // WARP_SIZE  # 32: the largest CTA
ROWS_PER_CTA = 4  # the warp plan: 4 rows (warps) per CTA
DATA_BYTES = 128  # a thread keeps 32 registers of its row (64 bytes in a CTA of 1024 threads)
CLUSTERS = (2, 4, 8, 16)
SM_REGISTERS = 65536  # the register file of an SM (sm_80 .. sm_100)
SHARED_PARTS = 3  # the registers' share of the row, at most this many times over, in shared memory
SHARED_BUDGET = 192 * 1024  # the most dynamic shared memory a plan keeps its row in (sm_90 allows 227 KB)
SM_THREADS = 2048  # the most threads an SM holds at once
MAX_THREAD_REGISTERS = 255


def max_elements(dtype: str, threads: int, data_bytes: int = DATA_BYTES) -> int:
    """E_MAX: the elements of a row one thread of a CTA of ``threads`` keeps in registers."""
    return (data_bytes if threads < MAX_BLOCK_THREADS else data_bytes // 2) // DTYPE_BYTES[dtype]


@dataclass(frozen=True)
class Tier:
    """One line of the plan table: rows of up to ``longest`` columns get ``ctas`` CTAs per
    row, ``warps`` warps per row (None: the rule of the module docstring) and ``rows``
    rows per CTA; ``why`` is what ``plan`` says of it."""

    longest: int
    ctas: int = 1
    warps: int | None = None
    rows: int = 1
    why: str = ""
    per_sm: int = 1
    shared: int = 0  # parts of C vectors a thread keeps in dynamic shared memory (S = shared · C)


@dataclass(frozen=True)
class Table:
    """The tiers of one dtype, shortest rows first, and the register budget they assume:
    ``data_bytes`` of row per thread (halved in a CTA of 1024 threads), at most
    ``max_warps`` warps per CTA."""

    dtype: str
    tiers: tuple[Tier, ...]
    data_bytes: int = DATA_BYTES
    max_warps: int = MAX_WARPS

    def elements(self, threads: int) -> int:
        return max_elements(self.dtype, threads, self.data_bytes)

    @property
    def longest(self) -> int:
        return self.tiers[-1].longest


def registers_table(dtype: str, data_bytes: int = DATA_BYTES, max_warps: int = MAX_WARPS,
                    shared: bool = False) -> Table:
    """The plan table the registers give: one warp per row while a warp holds the row,
    one CTA of up to ``max_warps`` warps while it does, then clusters of 2, 4, 8, 16;
    with ``shared`` (the forward kernels' ``TABLES``), then a cluster of 16 with 1..3 times
    its registers' share of the row in dynamic shared memory."""
    t, R = Table(dtype, (), data_bytes, max_warps), min(ROWS_PER_CTA, max_warps)
    warp, cta = WARP_SIZE * t.elements(WARP_SIZE * R), WARP_SIZE * max_warps * t.elements(WARP_SIZE * max_warps)
    tiers = [Tier(warp, 1, 1, R, f"fits in one warp's registers (at most {warp} {dtype} columns):"
                                 f" no barrier, {R} rows per CTA"),
             Tier(cta, 1, None, 1, f"fits in one CTA's registers (at most {cta} {dtype} columns):"
                                   " one barrier per reduction")]
    tiers += [Tier(c * cta, c, None, 1, f"fits in the registers of a cluster of {c} CTAs (at most {c * cta}"
                                        f" {dtype} columns): per reduction, a barrier in each CTA and one"
                                        " exchange of their partials through distributed shared memory")
              for c in CLUSTERS]
    top = CLUSTERS[-1]
    tiers += [Tier((1 + j) * top * cta, top, max_warps, 1, f"fits in the registers and dynamic shared memory of a"
                   f" cluster of {top} CTAs (at most {(1 + j) * top * cta} {dtype} columns: {j} time(s) the"
                   " registers' share of the row in shared memory)", shared=j)
              for j in range(1, SHARED_PARTS + 1) if shared]
    return replace(t, tiers=tuple(tiers))


def _with(table: Table, *tiers: Tier) -> Table:
    """``table`` with ``tiers`` added, each serving the rows up to its length that the
    next tier would (a tier of the same length is replaced)."""
    kept = [t for t in table.tiers if t.longest not in {n.longest for n in tiers}]
    return replace(table, tiers=tuple(sorted([*kept, *tiers], key=lambda t: t.longest)))


# bf16 rows of 8193..16384: two rows per CTA of 1024 threads (16 warps each, 32 bf16 per
# thread), so that each barrier serves two rows; LayerNorm keeps one row per CTA of 512,
# where its weight and bias tiles leave no spill (two rows spill 24 bytes).
TWO_ROWS = Tier(16384, 1, 16, 2, "fits in 16 warps' registers (at most 16384 bf16 columns): two rows per CTA of"
                                 " 1024 threads, each barrier serving both")

# The plan tables, by dtype, and by (kernel, dtype) where a kernel differs: from the
# registers today; the benchmark's measured search (``candidates``) is what should fill them.
TABLES = {"f32": registers_table("f32", shared=True),
          "bf16": _with(registers_table("bf16", shared=True), replace(registers_table("bf16").tiers[1], longest=8192),
                        TWO_ROWS),
          ("layernorm", "bf16"): registers_table("bf16", shared=True)}


@dataclass(frozen=True)
class RowPlan:
    """How a kernel spreads rows of N elements of ``dtype`` (module docstring): R rows
    per CTA, W warps per row, CL CTAs per row, C vectors of V elements per thread
    (E = C·V). ``why`` says why ``plan`` chose it."""

    N: int
    dtype: str  # "f32" | "bf16"
    rows_per_cta: int  # R
    warps_per_row: int  # W
    vectors: int  # C
    ctas_per_row: int = 1  # CL
    ctas_per_sm: int = 1  # O: the CTAs an SM must hold at once (ptxas caps the registers)
    vector_bytes: int = MAX_VECTOR_BYTES
    shared_vectors: int = 0  # S: vectors per thread kept in dynamic shared memory, after the C in registers
    pair: bool | None = None  # softmax's (max, sum) in one exchange; None: packs_pair's rule
    prefetch: bool | None = None  # a persistent row loop loads its next row early; None: not decided here
    why: str = field(default="", compare=False)

    @property
    def kind(self) -> str:
        return "cluster" if self.ctas_per_row > 1 else ("warp" if self.warps_per_row == 1 else "warps")

    R = property(lambda self: self.rows_per_cta)
    W = property(lambda self: self.warps_per_row)
    C = property(lambda self: self.vectors)
    CL = property(lambda self: self.ctas_per_row)
    O = property(lambda self: self.ctas_per_sm)
    S = property(lambda self: self.shared_vectors)
    K = property(lambda self: 1)  # chunks per CTA: the row is held whole

    @property
    def row_in(self) -> str:
        """Where a thread keeps its part of the row: ``registers``, or ``registers+shared``
        (C vectors in registers, then S in dynamic shared memory)."""
        return "registers+shared" if self.S else "registers"

    @property
    def shared_bytes(self) -> int:
        """The dynamic shared memory a CTA keeps its S vectors a thread in (0 without)."""
        return self.S * self.vector_bytes * self.threads

    @property
    def V(self) -> int:
        """Elements per vector."""
        return self.vector_bytes // DTYPE_BYTES[self.dtype]

    @property
    def E(self) -> int:
        """Elements per thread in registers."""
        return self.C * self.V

    @property
    def CH(self) -> int:
        """Columns per CTA (the CTA of rank r holds columns r·CH .. (r + 1)·CH - 1): C + S
        vectors a thread, vector c at column 32·W·V·c of the CTA's part."""
        return WARP_SIZE * self.W * (self.C + self.S) * self.V

    @property
    def threads(self) -> int:
        """Threads per CTA."""
        return WARP_SIZE * self.R * self.W

    def packs_pair(self, writes_row: bool) -> bool:
        """Whether softmax's, logsumexp's and cross-entropy's (max, sum of exp) pair
        crosses the row's threads in one combiner reduction (one exchange) rather than
        two named ones: ``pair`` where given, else over a cluster, but for a bf16 kernel
        that writes the row after (``writes_row``: softmax, the fused cross-entropy),
        where the H200 measured one exchange 10% slower than two (docs/fused-kernels.md,
        "One exchange for the pair")."""
        if self.pair is not None:
            return self.pair
        return self.CL > 1 and not (writes_row and self.dtype == "bf16")

    def grid(self, M: int) -> int:
        """CTAs for M rows."""
        return -(-M // self.R) * self.CL

    def label(self) -> str:
        """The plan in a few characters: ``cluster R1 W32 E16 CL4`` (`` O2``: 2 CTAs per SM;
        `` P``: a persistent loop loads its next row early)."""
        return (f"{self.kind} R{self.R} W{self.W} E{self.E} CL{self.CL}" + (f" O{self.O}" if self.O > 1 else "")
                + (f" S{self.S}" if self.S else "")
                + ("" if self.pair is None else (" pair" if self.pair else " two"))
                + (" P" if self.prefetch else ""))

    @property
    def max_registers(self) -> int:
        """The registers a thread may use so that an SM holds ``ctas_per_sm`` CTAs."""
        return min(MAX_THREAD_REGISTERS, SM_REGISTERS // (self.threads * self.O) // 8 * 8)

    def describe(self) -> str:
        sm = f", {self.O} CTAs per SM (at most {self.max_registers} registers a thread)" if self.O > 1 else ""
        shared = (f" in registers and {self.S * self.V} in dynamic shared memory ({self.shared_bytes} bytes a CTA)"
                  if self.S else "")
        return (f"{self.kind}: {self.R} row(s) per CTA of {self.threads} threads, {self.W} warp(s) per row,"
                f" {self.CL} CTA(s) per row, {self.E} elements per thread{shared} ({self.CH * self.CL} columns){sm}"
                + (", the next row's inputs loaded before this row is reduced" if self.prefetch else ""))

    def __str__(self) -> str:
        return f"{self.describe()}\n  why: {self.why}" if self.why else self.describe()

    def layouts(self) -> dict[str, str]:
        """The tile layouts: ROWS (a CTA's part of R rows, cta scope), WEIGHTS (the same
        columns of a weight vector, replicated over the R rows), PARTIALS (one value per
        thread, the CL·W·32 of a row along dim 1; cluster scope with CL > 1), RESULT (one
        value per row, held by each of the row's threads) and ROW (RESULT as one CTA
        sees it: what a CTA stores). Where a row spans several warps: LANES (PARTIALS as
        R x CL·W x 32, the lanes on dim 2) and WARPS (one value per warp of a row, held by
        each of its lanes), so that a reduction over LANES' dim 2 leaves WARPS, and one
        over WARPS' dim 1 leaves RESULT."""
        R, W, C, V, CL = self.R, self.W, self.C, self.V, self.CL
        warps = [(W, "1@warpid")] if W > 1 else []
        ctas = [(CL, "1@cta_in_cluster")] if CL > 1 else []
        cols = ([(C, f"{V}")] if C > 1 else []) + warps + [(WARP_SIZE, "1@laneid"), (V, "1")]
        row = f"{W}@warpid" if R > 1 else "1"

        def modes(iters):
            return f"({', '.join(str(e) for e, _ in iters)})", f"({', '.join(s for _, s in iters)})"

        lane = [(WARP_SIZE, "1@laneid")]
        (ce, cs), (te, ts) = modes(cols), modes(ctas + warps + lane)
        (le, ls), (oe, os_) = modes(lane + warps + ctas), modes(lane + warps)
        out = {
            "ROWS": f"S[({R}, {ce}) : ({row}, {cs})]",
            "WEIGHTS": f"S[({ce}) : ({cs})]" + (f" + R[{R} : {W}@warpid]" if R > 1 else ""),
            "PARTIALS": f"S[({R}, {te}) : ({row}, {ts})]",
            "RESULT": f"S[{R} : {row}] + R[{le} : {ls}]",
            "ROW": f"S[{R} : {row}] + R[{oe} : {os_}]",
        }
        if ctas or warps:
            ge, gs = modes(ctas + warps)
            out["LANES"] = f"S[({R}, {ge}, {WARP_SIZE}) : ({row}, {gs}, 1@laneid)]"
            out["WARPS"] = f"S[({R}, {ge}) : ({row}, {gs})] + R[{WARP_SIZE} : 1@laneid]"
        return out


def plan(M: int, N: int, dtype: str = "f32", kernel: str | None = None, *, ctas: int | None = None,
         warps: int | None = None, rows: int | None = None, vectors: int | None = None,
         per_sm: int | None = None, shared: int | None = None, pair: bool | None = None,
         table: Table | None = None) -> RowPlan:
    """The plan for an M x N matrix of ``dtype`` run by ``kernel`` (module docstring),
    with why it was chosen: the first tier of ``table`` (default ``TABLES[kernel, dtype]``,
    else ``TABLES[dtype]``) that holds N. ``ctas``, ``warps`` (per row), ``rows`` (per CTA) and ``vectors`` (16-byte
    vectors per thread), ``per_sm`` (CTAs an SM must hold at once) and ``shared`` (the parts
    of C vectors a thread keeps in dynamic shared memory beyond its C in registers: S =
    shared · C; 0: registers only, the tiers with shared memory left out, for a kernel that
    keeps its row in registers) override the tier's, for tests and tuning; the plan must still
    hold the row within the table's register budget and ``SHARED_BUDGET``. ``pair`` forces
    the (max, sum) pair's exchanges (``RowPlan.packs_pair``)."""
    if pair is not None and not isinstance(pair, bool):
        raise OptionError(f"pair must be True, False or None, got {pair!r}")
    p = _plan(M, N, dtype, kernel, ctas=ctas, warps=warps, rows=rows, vectors=vectors, per_sm=per_sm,
              shared=shared, table=table)
    return p if pair is None else replace(p, pair=pair, why=f"{p.why}; forced: pair = {pair}")


def _plan(M: int, N: int, dtype: str, kernel: str | None, *, ctas, warps, rows, vectors, per_sm, shared,
          table: Table | None) -> RowPlan:
    """``plan`` but for ``pair``."""
    if dtype not in DTYPES:
        raise OptionError(f"dtype must be f32 or bf16, got {dtype!r}")
    if kernel is not None and kernel not in KERNELS:
        raise OptionError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    try:  # plan("softmax", ...) is plan(M, N, dtype, kernel); numpy's ints are ints
        if isinstance(M, bool) or isinstance(N, bool):
            raise TypeError
        M, N = operator.index(M), operator.index(N)
    except TypeError:
        raise OptionError(f"M and N must be ints (plan(M, N, dtype, kernel)), got {M!r} x {N!r}") from None
    if M < 1 or N < 1:
        raise OptionError(f"the matrix must have at least one row and one column, got {M} x {N}")
    forced_any = any(v is not None for v in (ctas, warps, rows, vectors, per_sm)) or bool(shared)
    if table is None and not forced_any and kernel is not None:
        chosen = measured_plan(kernel, N, dtype)
        if chosen is not None:
            return chosen
    table = table or TABLES.get((kernel, dtype), TABLES[dtype])
    if table.dtype != dtype:
        raise OptionError(f"the plan table is for {table.dtype}, not {dtype}")
    tiers = [t for t in table.tiers if not (shared == 0 and t.shared)]  # shared=0: registers only
    tier = next((t for t in tiers if N <= t.longest), None)
    if tier is None:
        raise OptionError(f"N = {N} is longer than the longest row the plan table holds on chip ({tiers[-1].longest}"
                          f" {dtype} columns: {tiers[-1].ctas} CTAs' registers"
                          + (" and shared memory)" if tiers[-1].shared else ")"))
    forced = {k: v for k, v in (("ctas", ctas), ("warps", warps), ("rows", rows), ("vectors", vectors),
                                ("per_sm", per_sm), ("shared", shared)) if v}
    for name, value in (("ctas", ctas), ("warps", warps), ("rows", rows), ("vectors", vectors), ("per_sm", per_sm)):
        if value is not None and type(value) is not int:
            raise OptionError(f"{name} must be an int, got {value!r}")
    for name, value in (("ctas", ctas), ("warps", warps), ("rows", rows)):
        if value is not None and (value < 1 or value & (value - 1)):
            raise OptionError(f"{name} must be a power of two, got {value}")
    if vectors is not None and vectors < 1:
        raise OptionError(f"vectors per thread must be at least 1, got {vectors}")
    if shared is not None and (type(shared) is not int or not 0 <= shared <= SHARED_PARTS):
        raise OptionError(f"shared must be 0 .. {SHARED_PARTS} (parts of the registers' share in shared memory),"
                          f" got {shared}")
    J = tier.shared if shared is None else shared
    CL = ctas or tier.ctas
    # forced warps: as many of the tier's rows as fit in a CTA
    R = rows or (min(tier.rows, max(1, table.max_warps // warps)) if warps else tier.rows)
    W = warps or tier.warps or _warps(table, -(-N // CL), R)
    if CL > MAX_CLUSTER_CTAS or R * W > table.max_warps:
        raise OptionError(f"a plan has at most {MAX_CLUSTER_CTAS} CTAs per row and {table.max_warps} warps per CTA,"
                          f" got {CL} CTA(s) of {R} row(s) of {W} warp(s)")
    V = MAX_VECTOR_BYTES // DTYPE_BYTES[dtype]
    T = -(-N // (CL * WARP_SIZE * W * V))  # the fewest vectors a thread that cover the row
    C = vectors or -(-T // (1 + J))  # with J parts in shared memory: C in registers, the other T - C there
    S = J * C if vectors else T - C
    O = per_sm or tier.per_sm
    p = RowPlan(N, dtype, R, W, C, CL, O, shared_vectors=S if J else 0)
    if O < 1 or p.threads * O > SM_THREADS:
        raise OptionError(f"an SM holds at most {SM_THREADS} threads: {O} CTA(s) of {p.threads} threads do not fit")
    budget = table.elements(p.threads)
    if p.shared_bytes > SHARED_BUDGET:
        raise OptionError(f"the plan {p.label()} keeps {p.shared_bytes} bytes of its row in shared memory a CTA,"
                          f" more than the {SHARED_BUDGET} a plan may")
    if p.E > budget or p.CH * CL < N:
        raise OptionError(f"the plan {p.label()} holds {p.CH * CL} columns with {p.E} {dtype} elements per thread;"
                          f" N = {N} needs at least N columns, and a thread of a CTA of {p.threads} keeps at most"
                          f" {budget}")
    why = (f"forced: {', '.join(f'{k} = {v}' for k, v in forced.items())}" if forced else f"N = {N} {tier.why}")
    return replace(p, why=why)


MEASURED = Path(__file__).with_name("measured_plans.json")


@functools.lru_cache(maxsize=None)
def measured_table() -> dict:
    """The measured plans (``measured_plans.json``, written by ``python -m
    benchmarks.plan_search``): per kernel and dtype, the searched row lengths, shortest
    first, each with the overrides of its fastest plan."""
    try:
        return json.loads(MEASURED.read_text())["plans"]
    except FileNotFoundError:
        return {}


def measured_plan(kernel: str, N: int, dtype: str, searched: str | None = None) -> RowPlan | None:
    """The measured plan for rows of N, if the search covers N: that of the shortest
    searched length N_m >= N, for N above the searched length before it (above N_m / 2 for
    the shortest): its CTAs of W warps (R rows, ``per_sm``), as few of them as hold N with
    the elements a thread had at N_m (the search found fewer, fuller CTAs faster), and the
    fewest vectors that cover N. ``searched``: the name the table keeps the entries under,
    where it is not ``kernel``'s (a backward pass's, on its forward's register budget)."""
    entries = measured_table().get(searched or kernel, {}).get(dtype, [])
    previous = None
    for e in entries:
        if N <= e["N"]:
            if N <= (previous if previous is not None else e["N"] // 2):
                return None
            at = plan(1, e["N"], dtype, kernel, ctas=e["ctas"], rows=e["rows"], warps=e["warps"], per_sm=e["per_sm"])
            CL = min(e["ctas"], _pow2(-(-N // (WARP_SIZE * at.W * at.E))))
            p = plan(1, N, dtype, kernel, ctas=CL, rows=e["rows"], warps=e["warps"], per_sm=e["per_sm"],
                     pair=e.get("pair"))
            return replace(p, prefetch=e.get("prefetch"),
                           why=f"N = {N}: the fastest of {e['candidates']} plans measured at N = {e['N']}"
                               f" ({e['label']}, {e['gbps']} GB/s, copy {e['copy_gbps']} GB/s, {MEASURED.name})"
                               + (f", over {CL} CTA(s)" if CL != e["ctas"] else ""))
        previous = e["N"]
    return None


def candidates(N: int, dtype: str = "f32", table: Table | None = None) -> list[RowPlan]:
    """Every plan that holds a row of N within the register budget of ``table``: CTAs
    per row, rows per CTA and warps per row, each a power of two, with the fewest vectors
    that cover the row. What a measured search times to fill a table."""
    table = table or registers_table(dtype)
    found = []
    for CL in (1, *CLUSTERS):
        for R in (1, 2, 4):
            for W in (1, 2, 4, 8, 16, 32):
                try:
                    found.append(plan(1, N, dtype, ctas=CL, rows=R, warps=W, table=table))
                except OptionError:
                    pass
    return found


def _warps(table: Table, share: int, R: int) -> int:
    """W for a CTA's ``share`` of the row: the power of two that gives each thread about
    half of E_MAX, then more until the CTA holds its share."""
    half = table.elements(2 * WARP_SIZE) // 2
    W = min(table.max_warps // R, _pow2(-(-share // (WARP_SIZE * half))))
    while W < table.max_warps // R and WARP_SIZE * W * table.elements(WARP_SIZE * R * W) < share:
        W *= 2
    return W


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(n)))


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
