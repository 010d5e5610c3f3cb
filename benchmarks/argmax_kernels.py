"""MLIR text of the argmax benchmark's kernels (section 7), generated per shape.

Pure string building, like ``kernels.py``: no MLIR import, so the GPU machine regenerates
the text that ``benchmarks.prepare`` compiled and finds it in the compile cache.

* ``argmax_rows(c)``: an M x N row-major matrix -> the M row argmax indices (i32), ties to
  the smallest column and a NaN winning (torch's rule; docs/spec.md, "argmax / argmin").
  A row goes to W warps (RB rows per block), warp w reading the w-th W-th of the row,
  a contiguous segment, in chunks of 32 x C vectors of 16 bytes (``tile.copy`` at warp
  scope; P: chunk k+1 loaded before chunk k is reduced). Each chunk is one warp-scope
  ``tile.reduce`` with ``kind = "argmax"``: the chunk's maximum and its position in the
  chunk, which is its column minus the chunk's first. A warp keeps the running best of its
  chunks (the first of equal maxima, and the first NaN: the chunks come in column order),
  then one cta-scope ``kind = "argmax"`` over the W warps' bests (held by every lane of
  their warp) names the winning warp, the first of equals, which is the first column; its
  lane 0 stores the column. ``I`` (with ``F``) interleaves the warps instead: the block
  reads its row front to back, chunk k of warp w at columns (k·W + w)·32·E, and the
  cross-warp step is a combiner reduction of the warps' (value, column), the smaller
  column between equals, since the warps' order is no longer the columns'.
* ``softmax_rows(c)``: softmax of an M x N matrix, one 1024-thread block (32 warps) per row,
  the row in registers (``tile_mlir.kernels.plan``'s layouts), with the row's
  (max, sum of exp) combined either by two cta-scope reductions (``maximum``, then ``sum``
  of the rescaled partial sums: two exchanges, two barriers), by one combiner reduction
  of the (max, sum) pair (``packed``: one exchange), or (``named``) by the warps' pairs
  written to shared memory by lane 0 of each warp, one ``gpu.barrier``, and two named
  warp reductions of the W pairs that lane l reads (QuACK's block reduction); all
  compiled with ``fold = tree`` (the lanes fold the 32 warps' partials together: 5
  combines a thread, not 31, which for the pair is 10 exponentials, not 62), and asking
  for 2 blocks per SM (32 registers).
"""

from __future__ import annotations

from dataclasses import dataclass

from tile_mlir.kernels.plan import plan as row_plan
from tile_mlir.vocab import LOG2E
from tile_mlir.testing.triton_port import combiner_reduce

from .kernels import ITEMSIZE, UNROLL, _module, _priv

NEG_INF = {"f32": "0xFF800000", "bf16": "0xFF80"}
# The argmax kernels read their rows once: their copies say so, and their loads get PTX's
# .cs cache operator (docs/spec.md, "Cache hints"). softmax's do not: probe 9
# (docs/runs/2026-12-03-h200-b.md) timed its forms 5% slower with the hint on the loads and
# no faster with it on both; the argmax kernels it timed went 1.2-4.2% faster, but one.
CACHE = 'cache = "streaming",'
SOFTMAX_CACHE = ""
# softmax's second pass multiplies the exponentials of its first by exp(m - A) / S (REUSE_EXP),
# or takes them again, exp(x - A) / S: one exponential an element, or two
REUSE_EXP = True


@dataclass(frozen=True)
class ArgmaxConfig:
    """One kernel: M x N of ``dtype`` ("f32" | "bf16"), W warps per row, RB rows per
    block, C 16-byte vectors per lane per chunk, P prefetch."""

    M: int
    N: int
    dtype: str
    W: int = 4
    RB: int = 1
    C: int = 4
    P: bool = True
    F: bool = False  # each lane folds its chunks first; one warp reduction a row, not one a chunk
    I: bool = False  # the warps' chunks interleaved: the block sweeps its row front to back (needs F)
    O: int = 0  # launched capped at O CTAs an SM (argmax.bind: shared memory and a carveout); 0: as many as fit

    @property
    def V(self) -> int:
        return 16 // ITEMSIZE[self.dtype]

    @property
    def E(self) -> int:  # elements per lane per chunk
        return self.C * self.V

    @property
    def CW(self) -> int:  # columns per warp chunk
        return 32 * self.E

    @property
    def SEG(self) -> int:  # columns per warp
        return self.N // self.W

    @property
    def K(self) -> int:  # chunks per warp
        return self.SEG // self.CW

    @property
    def STRIDE(self) -> int:  # columns from a warp's chunk to its next
        return self.W * self.CW if self.I else self.CW

    @property
    def grid(self) -> int:
        return self.M // self.RB

    @property
    def block(self) -> int:
        return 32 * self.W * self.RB

    @property
    def name(self) -> str:
        return f"argmax_rows_{self.dtype}_{self.M}x{self.N}" + ("_f" if self.F else "") + ("_i" if self.I else "")

    def label(self) -> str:
        return (f"W{self.W} RB{self.RB} C{self.C}" + (" P" if self.P else "") + (" F" if self.F else "")
                + (" I" if self.I else "") + (f" O{self.O}" if self.O else ""))

    def check(self) -> None:
        if self.W not in (1, 2, 4, 8, 16, 32) or self.block > 1024:
            raise ValueError(f"{self}: W must be a power of two, and W x RB warps at most 32")
        if self.N % self.W or self.SEG % self.CW or self.K < 1:
            raise ValueError(f"{self}: a row must split into W segments of chunks of {self.CW} columns")
        if self.P and self.K < 2:
            raise ValueError(f"{self}: prefetch needs 2+ chunks per warp")
        if self.M % self.RB:
            raise ValueError(f"{self}: M must split into blocks of RB rows")
        if self.I and not (self.F and self.W > 1):
            raise ValueError(f"{self}: interleaved warps (I) need F (explicit columns) and W > 1")


def _layouts(c: ArgmaxConfig) -> dict[str, str]:
    """The chunk (1 x CW: vector j of lane l holds columns (j*32 + l)*V ...), a warp's
    result, the W warps' bests of a block's RB rows and the row's result."""
    warps = (f"S[({c.RB}, {c.W}) : ({c.W}@warpid, 1@warpid)]" if c.RB > 1 else f"S[(1, {c.W}) : (1, 1@warpid)]")
    return {
        "chunk": f"S[(1, ({c.C}, 32, {c.V})) : (1, ({c.V}, 1@laneid, 1))]",
        "warp": "S[1 : 1] + R[32 : 1@laneid]",
        "warps": warps + " + R[32 : 1@laneid]",
        "row": (f"S[{c.RB} : {c.W}@warpid]" if c.RB > 1 else "S[1 : 1]") + f" + R[(32, {c.W}) : (1@laneid, 1@warpid)]",
    }


def _load(c: ArgmaxConfig, tile: str, k: str, ind: str) -> str:
    """``tile.copy`` of chunk ``k`` (an index SSA name) of this warp's into ``tile``: at
    %seg0 + k · STRIDE."""
    lay = _layouts(c)["chunk"]
    return (f"{ind}%kc_{tile[1:]} = arith.muli {k}, %cSTRIDE : index\n"
            f"{ind}%col_{tile[1:]} = arith.addi %seg0, %kc_{tile[1:]} : index\n"
            f'{ind}"tile.copy"({tile}, %X, %row, %col_{tile[1:]}) {{exec_scope = "warp", alignment = 16, {CACHE}\n'
            f'{ind}    layout = #tile.layout<"{lay}">}} : ({_priv((c.E,), c.dtype)}, !X, index, index) -> ()\n')


def _step(c: ArgmaxConfig, ind: str, k: str, best: str, bcol: str, out: str) -> str:
    """What the chunk in %x (chunk ``k``) does to the running (``best``, ``bcol``): the
    new ones are ``out`` and ``out``col."""
    lay, T, one = _layouts(c), c.dtype, _priv((1,), c.dtype)
    s = out[1:]  # a suffix that keeps the SSA names of each copy of the step apart
    ext = f"arith.extf %v_{s} : bf16 to f32" if T == "bf16" else f"arith.addf %v_{s}, %fzero : f32"
    if c.F:  # the lane's own E elements: slot i is column (i div V)·32V + lane·V + i mod V of the chunk;
        # folded pairwise (fold = "tree": log2(E) dependent steps, not E - 1), the same (value, slot)
        reduce = (f'{ind}"tile.reduce"(%dv, %di, %x) {{kind = "argmax", exec_scope = "thread", axes = array<i64: 0>, '
                  f'fold = "tree"}}\n'
                  f"{ind}  : ({one}, {_priv((1,), 'i32')}, {_priv((c.E,), T)}) -> ()\n")
        place = (f"{ind}%iq_{s} = arith.divui %i_{s}, %iV : i32\n{ind}%ir_{s} = arith.remui %i_{s}, %iV : i32\n"
                 f"{ind}%iqs_{s} = arith.muli %iq_{s}, %i32V : i32\n{ind}%ia_{s} = arith.addi %iqs_{s}, %lanecol : i32\n"
                 f"{ind}%il_{s} = arith.addi %ia_{s}, %ir_{s} : i32\n")
    else:  # the warp's chunk: the position in the chunk is its column
        reduce = (f'{ind}"tile.reduce"(%dv, %di, %x) {{kind = "argmax", exec_scope = "warp", axes = array<i64: 1>,\n'
                  f'{ind}    src_layout = #tile.layout<"{lay["chunk"]}">, dst_layout = #tile.layout<"{lay["warp"]}">}}\n'
                  f"{ind}  : ({one}, {_priv((1,), 'i32')}, {_priv((c.E,), T)}) -> ()\n")
        place = f"{ind}%il_{s} = arith.addi %i_{s}, %izero : i32\n"
    return (reduce
            + f"{ind}%v_{s} = memref.load %dv[%c0] : {one}\n{ind}%vf_{s} = {ext}\n"
            f"{ind}%i_{s} = memref.load %di[%c0] : {_priv((1,), 'i32')}\n" + place
            + f"{ind}%kcw_{s} = arith.muli {k}, %cSTRIDE : index\n{ind}%cc_{s} = arith.addi %seg0, %kcw_{s} : index\n"
            f"{ind}%cci_{s} = arith.index_cast %cc_{s} : index to i32\n{ind}%c_{s} = arith.addi %cci_{s}, %il_{s} : i32\n"
            # a NaN wins over a number; equal maxima keep the earlier (lower) column
            f"{ind}%gt_{s} = arith.cmpf ogt, %vf_{s}, {best} : f32\n{ind}%vnan_{s} = arith.cmpf uno, %vf_{s}, %vf_{s} : f32\n"
            f"{ind}%bnum_{s} = arith.cmpf ord, {best}, {best} : f32\n{ind}%nan_{s} = arith.andi %vnan_{s}, %bnum_{s} : i1\n"
            f"{ind}%take_{s} = arith.ori %gt_{s}, %nan_{s} : i1\n"
            f"{ind}{out} = arith.select %take_{s}, %vf_{s}, {best} : f32\n"
            f"{ind}{out}col = arith.select %take_{s}, %c_{s}, {bcol} : i32\n")


def _chunks(c: ArgmaxConfig) -> str:
    """The chunks of this warp, in column order, ending with (%fbest, %fbestcol)."""
    ind, E, T = " " * 6, c.E, c.dtype
    carry = "iter_args(%best = %ninf, %bcol = %seg0i) -> (f32, i32)"
    if not c.P:
        return (f"{ind}%fbest, %fbestcol = scf.for %k = %c0 to %cK step %c1 {carry} {{\n" + _load(c, "%x", "%k", ind + "  ")
                + _step(c, ind + "  ", "%k", "%best", "%bcol", "%nbest") + f"{ind}  scf.yield %nbest, %nbestcol : f32, i32\n{ind}}}\n")
    # Chunk 0 first; in the loop, chunk k+1's loads go out before chunk k is reduced, then
    # move from %nx to %x (registers: the copies vanish); the last chunk after the loop.
    move = (f"{ind}  scf.for %j = %c0 to %cE step %cV {{\n"
            f"{ind}    %nv = vector.load %nx[%j] : {_priv((E,), T)}, vector<{c.V}x{T}>\n"
            f"{ind}    vector.store %nv, %x[%j] : {_priv((E,), T)}, vector<{c.V}x{T}>\n"
            f"{ind}  }} {UNROLL}\n")
    return (_load(c, "%x", "%c0", ind)
            + f"{ind}%lbest, %lbestcol = scf.for %k = %c0 to %clast step %c1 {carry} {{\n"
            + f"{ind}  %k1 = arith.addi %k, %c1 : index\n" + _load(c, "%nx", "%k1", ind + "  ")
            + _step(c, ind + "  ", "%k", "%best", "%bcol", "%nbest") + move
            + f"{ind}  scf.yield %nbest, %nbestcol : f32, i32\n{ind}}}\n"
            + _step(c, ind, "%clast", "%lbest", "%lbestcol", "%fbest"))


# The combine of two lanes' (value, column) bests, for ``F``: the greater value, a NaN over
# a number, and between equal values (or two NaNs) the smaller column.
PICK_BODY = ("%agt = arith.cmpf ogt, %r0, %l0 : f32", "%arn = arith.cmpf uno, %r0, %r0 : f32",
             "%aln = arith.cmpf uno, %l0, %l0 : f32", "%alo = arith.cmpf ord, %l0, %l0 : f32",
             "%anan = arith.andi %arn, %alo : i1", "%aeq = arith.cmpf oeq, %r0, %l0 : f32",
             "%abn = arith.andi %arn, %aln : i1", "%asame = arith.ori %aeq, %abn : i1",
             "%alt = arith.cmpi slt, %r1, %l1 : i32", "%atie = arith.andi %asame, %alt : i1",
             "%a1 = arith.ori %agt, %anan : i1", "%atake = arith.ori %a1, %atie : i1",
             "%av = arith.select %atake, %r0, %l0 : f32", "%ac = arith.select %atake, %r1, %l1 : i32")


def _lanes(c: ArgmaxConfig) -> tuple[str, list[str]]:
    """For ``F``: the warp's one reduction of its lanes' (%fbest, %fbestcol) into
    (%wbest, %wbestcol), every lane holding them; and the combiner's function."""
    return _pick(c, "warp", "S[(1, 32) : (1, 1@laneid)]", _layouts(c)["warp"], "%fbest", "%fbestcol", "w", "pick")


def _pick(c: ArgmaxConfig, scope: str, src: str, dst: str, value: str, col: str, out: str, name: str):
    """One combiner reduction (``PICK_BODY``) at ``scope`` of the (``value``, ``col``) pairs
    laid out as ``src`` into (%{out}best, %{out}bestcol), laid out as ``dst``; and the
    combiner's function."""
    ind, f1, i1, t = " " * 6, _priv((1,), "f32"), _priv((1,), "i32"), out
    attrs = [f'exec_scope = "{scope}"', "axes = array<i64: 1>", f'src_layout = #tile.layout<"{src}">',
             f'dst_layout = #tile.layout<"{dst}">']
    op, func = combiner_reduce(f"{c.name}_{name}", [f"%g{t}v", f"%g{t}c", f"%h{t}v", f"%h{t}c"], attrs,
                               [f1, i1, f1, i1], ("f32", "i32"), PICK_BODY, ("%av", "%ac"))
    text = (f"{ind}%h{t}v = memref.alloca() : {f1}\n{ind}%h{t}c = memref.alloca() : {i1}\n"
            f"{ind}%g{t}v = memref.alloca() : {f1}\n{ind}%g{t}c = memref.alloca() : {i1}\n"
            f"{ind}memref.store {value}, %h{t}v[%c0] : {f1}\n{ind}memref.store {col}, %h{t}c[%c0] : {i1}\n"
            + "".join(f"{ind}{line}\n" for line in op)
            + f"{ind}%{out}best = memref.load %g{t}v[%c0] : {f1}\n{ind}%{out}bestcol = memref.load %g{t}c[%c0] : {i1}\n")
    return text, func


def argmax_rows(c: ArgmaxConfig) -> str:
    """``c.name``(X: memref<MxNxT>, Y: memref<Mxi32>) on c.grid x c.block."""
    c.check()
    T, lay = c.dtype, _layouts(c)
    args = f"%X: !X {{llvm.align = 16 : i64}}, %Y: memref<{c.M}xi32>"
    consts = "".join(f"      %c{n} = arith.constant {v} : index\n" for n, v in (
        ("0", 0), ("1", 1), ("32", 32), ("V", c.V), ("E", c.E), ("W", c.W), ("RB", c.RB), ("CW", c.CW), ("SEG", c.SEG),
        ("K", c.K), ("last", c.K - 1), ("STRIDE", c.STRIDE), ("FIRST", c.CW if c.I else c.SEG)))
    lanes, func = _lanes(c) if c.F else ("", [])
    tail, more = _tail(c, lay, *(("%wbest", "%wbestcol") if c.F else ("%fbest", "%fbestcol")))
    funcs = "".join(f"    {line}\n" for line in (*func, *more))
    body = f"""{funcs}    gpu.func @{c.name}({args}) kernel
        attributes {{known_block_size = array<i32: {c.block}, 1, 1>}} {{
{consts}      %ninf = arith.constant 0xFF800000 : f32
      %fzero = arith.constant 0.0 : f32
      %izero = arith.constant 0 : i32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %lane = gpu.lane_id
      %warp = arith.divui %tid, %c32 : index
      %r = arith.divui %warp, %cW : index
      %w = arith.remui %warp, %cW : index
      %rows0 = arith.muli %bid, %cRB : index
      %row = arith.addi %rows0, %r : index
      %seg0 = arith.muli %w, %cFIRST : index
      %seg0i = arith.index_cast %seg0 : index to i32
      %iV = arith.constant {c.V} : i32
      %i32V = arith.constant {32 * c.V} : i32
      %lanei = arith.index_cast %lane : index to i32
      %lanecol = arith.muli %lanei, %iV : i32
      %x = memref.alloca() : {_priv((c.E,), T)}
      %nx = memref.alloca() : {_priv((c.E,), T)}
      %dv = memref.alloca() : {_priv((1,), T)}
      %di = memref.alloca() : {_priv((1,), 'i32')}
{_chunks(c)}{lanes}{tail}      gpu.return
    }}
"""
    return _module(body).replace("module attributes", f"!X = memref<{c.M}x{c.N}x{T}>\nmodule attributes", 1)


def _tail(c: ArgmaxConfig, lay: dict, best: str, bestcol: str) -> tuple[str, list[str]]:
    """After the chunks: the cross-warp step over the warps' (``best``, ``bestcol``), and
    lane 0 of the winning warp storing the column (``I``: every thread holds the row's
    (value, column), and lane 0 of the row's first warp stores it); and the functions of
    its combiner, if any."""
    ind = " " * 6
    lane0 = f"{ind}%first = arith.cmpi eq, %lane, %c0 : index\n"
    if c.W == 1:
        return lane0 + (f"{ind}scf.if %first {{\n{ind}  memref.store {bestcol}, %Y[%row] : memref<{c.M}xi32>\n{ind}}}\n"), []
    if c.I:
        text, func = _pick(c, "cta", lay["warps"], lay["row"], best, bestcol, "r", "pick_warps")
        return (text + lane0 + f"{ind}%w0 = arith.cmpi eq, %w, %c0 : index\n{ind}%store = arith.andi %w0, %first : i1\n"
                f"{ind}scf.if %store {{\n{ind}  memref.store %rbestcol, %Y[%row] : memref<{c.M}xi32>\n{ind}}}\n"), func
    one = _priv((1,), "f32")
    return (f"{ind}%p = memref.alloca() : {one}\n{ind}%qv = memref.alloca() : {one}\n"
            f"{ind}%qi = memref.alloca() : {_priv((1,), 'i32')}\n"
            f"{ind}memref.store {best}, %p[%c0] : {one}\n"
            f'{ind}"tile.reduce"(%qv, %qi, %p) {{kind = "argmax", exec_scope = "cta", axes = array<i64: 1>,\n'
            f'{ind}    src_layout = #tile.layout<"{lay["warps"]}">, dst_layout = #tile.layout<"{lay["row"]}">}}\n'
            f"{ind}  : ({one}, {_priv((1,), 'i32')}, {one}) -> ()\n"
            f"{ind}%pw = memref.load %qi[%c0] : {_priv((1,), 'i32')}\n"
            f"{ind}%wi = arith.index_cast %w : index to i32\n{ind}%mine = arith.cmpi eq, %pw, %wi : i32\n"
            + lane0 + f"{ind}%store = arith.andi %mine, %first : i1\n"
            f"{ind}scf.if %store {{\n{ind}  memref.store {bestcol}, %Y[%row] : memref<{c.M}xi32>\n{ind}}}\n"), []


# --- softmax: the (max, sum of exp) pair in two exchanges or one ------------------------------


@dataclass(frozen=True)
class SoftmaxConfig:
    """Softmax of M x N ``dtype`` rows, one block of W warps per row, the row in its
    registers (``tile_mlir.kernels.plan.plan(M, N, dtype, warps=W)``: one chunk); ``packed``: one combiner
    reduction of (max, sum) across the warps, each warp's own pair by two named warp reductions
    first (the library's form, ``forward.row_max_sum``), and with ``lanes`` the pair's combine in
    the lanes' butterfly too; else two named cta-scope reductions."""

    M: int
    N: int
    dtype: str
    packed: bool
    lanes: bool = False
    named: bool = False  # packed: the warps' pairs exchanged once, then combined by named warp reductions
    W: int = 32
    fold: str = "tree"  # the compile option: with tree, the lanes fold the warps' partials together

    @property
    def plan(self):
        p = row_plan(self.M, self.N, self.dtype, warps=self.W)
        if p.K != 1 or p.R != 1 or p.N != p.CH:
            raise ValueError(f"{self}: the row must be one chunk of the block's registers, got {p.describe()}")
        return p

    @property
    def name(self) -> str:
        return f"softmax_{self.who}_{self.dtype}_{self.M}x{self.N}_w{self.W}"

    @property
    def who(self) -> str:
        """``two``, ``packed``, ``packed_lanes`` or ``packed_named``: the results' key."""
        return "two" if not self.packed else "packed_lanes" if self.lanes else "packed_named" if self.named else "packed"

    def label(self) -> str:
        return {"two": "two exchanges (max, then sum)", "packed": "one exchange (max, sum) across the warps",
                "packed_lanes": "one exchange (max, sum), combined at every step",
                "packed_named": "one exchange of the warps' (max, sum), then named reductions"}[self.who] + f", W{self.W}"

    @property
    def grid(self) -> int:
        return self.M

    @property
    def block(self) -> int:
        return 32 * self.W


# The pair's combine, with one exponential: M = max(m1, m2) (NaN propagates); the pair of
# the smaller max is rescaled by e = exp(-|m1 - m2|), S = fma(s_small, e, s_big); equal
# maxima (-inf, +inf included, where m1 - m2 is NaN) give e = exp2(0) = 1, S = s1 + s2.
# Each s is a sum of exp(x - a(m)), a(m) = m, or 0 where m is -inf (s = 0 there). The
# exponential is exp2 of the argument times log2 e, as the library's (Rows.exp). Swapping
# the two sides gives the same bits.
PAIR_BODY = ("%pM = arith.maximumf %l0, %r0 : f32", "%pd = arith.subf %l0, %r0 : f32",
             "%pad = math.absf %pd : f32", "%peq = arith.cmpf oeq, %l0, %r0 : f32",
             "%pzero = arith.constant 0.0 : f32", "%pz = arith.select %peq, %pzero, %pad : f32",
             f"%pk = arith.constant {-LOG2E!r} : f32", "%pl = arith.mulf %pz, %pk : f32",
             "%pe = math.exp2 %pl : f32", "%pgt = arith.cmpf ogt, %l0, %r0 : f32",
             "%pbig = arith.select %pgt, %l1, %r1 : f32", "%psmall = arith.select %pgt, %r1, %l1 : f32",
             "%pS = math.fma %psmall, %pe, %pbig : f32")


def _max_then_sum(ind: str, one: str, attrs: str, m: str, s: str, tag: str, dst_m: str, dst_s: str) -> str:
    """Two named reductions (``attrs``, into the memrefs ``dst_m`` and ``dst_s``): the max
    %M{tag} of ``m``, then the sum %S{tag} of ``s`` · exp(``m`` - %A{tag}), %A{tag} being
    %M{tag}, or 0 where it is -inf."""
    t = tag
    return (f"{ind}memref.store {m}, %pm[%c0] : {one}\n"
            f'{ind}"tile.reduce"({dst_m}, %pm) {{kind = "maximum", {attrs}}} : ({one}, {one}) -> ()\n'
            f"{ind}%M{t} = memref.load {dst_m}[%c0] : {one}\n{ind}%none{t} = arith.cmpf oeq, %M{t}, %ninf : f32\n"
            f"{ind}%A{t} = arith.select %none{t}, %zero, %M{t} : f32\n{ind}%xd{t} = arith.subf {m}, %A{t} : f32\n"
            f"{ind}%xd2{t} = arith.mulf %xd{t}, %log2e : f32\n{ind}%xe{t} = math.exp2 %xd2{t} : f32\n"
            f"{ind}%xt{t} = arith.mulf {s}, %xe{t} : f32\n{ind}memref.store %xt{t}, %ps[%c0] : {one}\n"
            f'{ind}"tile.reduce"({dst_s}, %ps) {{kind = "sum", {attrs}}} : ({one}, {one}) -> ()\n'
            f"{ind}%S{t} = memref.load {dst_s}[%c0] : {one}\n")


def softmax_rows(c: SoftmaxConfig) -> str:
    """``c.name``(X, Y: memref<MxNxT>) on c.grid x c.block."""
    p, T = c.plan, c.dtype
    lay = p.layouts()
    E, V = p.E, p.V
    ext, trunc = ("arith.extf", "arith.truncf") if T == "bf16" else ("arith.bitcast", "arith.bitcast")
    tile, one = _priv((E,), T), _priv((1,), "f32")
    ind = " " * 6
    attrs = ['exec_scope = "cta"', "axes = array<i64: 1>", f'src_layout = #tile.layout<"{lay["PARTIALS"]}">',
             f'dst_layout = #tile.layout<"{lay["RESULT"]}">']
    func: list[str] = []
    lanes = ", ".join(['exec_scope = "cta"', "axes = array<i64: 2>", f'src_layout = #tile.layout<"{lay.get("LANES")}">',
                       f'dst_layout = #tile.layout<"{lay.get("WARPS")}">'])  # each warp's own, over its lanes
    if c.packed and c.lanes:
        op, func = combiner_reduce(f"{c.name}_pair", ["%qm", "%qs", "%pm", "%ps"], attrs, [one] * 4, ("f32", "f32"),
                                   PAIR_BODY, ("%pM", "%pS"))
        exchange = (f"{ind}memref.store %m, %pm[%c0] : {one}\n{ind}memref.store %s, %ps[%c0] : {one}\n"
                    + "".join(f"{ind}{line}\n" for line in op)
                    + f"{ind}%M = memref.load %qm[%c0] : {one}\n{ind}%S = memref.load %qs[%c0] : {one}\n"
                    f"{ind}%none = arith.cmpf oeq, %M, %ninf : f32\n{ind}%A = arith.select %none, %zero, %M : f32\n")
    elif c.packed and c.named:  # each warp's (max, sum) as below; one exchange of the W pairs, then named reductions
        warp = ", ".join(['exec_scope = "warp"', "axes = array<i64: 1>",
                          'src_layout = #tile.layout<"S[(1, 32) : (1, 1@laneid)]">',
                          'dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">'])
        exchange = (_max_then_sum(ind, one, lanes, "%m", "%s", "w", "%wm", "%ws")
                    # lane 0 of warp w writes (max, sum) at 2w, 2w + 1; one barrier; lane l reads warp l's
                    + f"{ind}%tid = gpu.thread_id x\n{ind}%lane = gpu.lane_id\n{ind}%warp = arith.divui %tid, %c32 : index\n"
                    f"{ind}%at = arith.muli %warp, %c2 : index\n{ind}%at1 = arith.addi %at, %c1 : index\n"
                    f"{ind}%lane0 = arith.cmpi eq, %lane, %c0 : index\n"
                    f"{ind}scf.if %lane0 {{\n{ind}  memref.store %Mw, %sh[%at] : !SH\n{ind}  memref.store %Sw, %sh[%at1] : !SH\n"
                    f"{ind}}}\n{ind}gpu.barrier\n"
                    f"{ind}%mine = arith.cmpi ult, %lane, %cW : index\n{ind}%lw = arith.remui %lane, %cW : index\n"
                    f"{ind}%la = arith.muli %lw, %c2 : index\n{ind}%la1 = arith.addi %la, %c1 : index\n"
                    f"{ind}%lm0 = memref.load %sh[%la] : !SH\n{ind}%ls0 = memref.load %sh[%la1] : !SH\n"
                    f"{ind}%lm = arith.select %mine, %lm0, %ninf : f32\n{ind}%ls = arith.select %mine, %ls0, %zero : f32\n"
                    + _max_then_sum(ind, one, warp, "%lm", "%ls", "", "%qm", "%qs"))
    elif c.packed:  # each warp's (max, sum) by named warp reductions, then the pair across the warps
        warps = ['exec_scope = "cta"', "axes = array<i64: 1>", f'src_layout = #tile.layout<"{lay["WARPS"]}">',
                 f'dst_layout = #tile.layout<"{lay["RESULT"]}">']
        op, func = combiner_reduce(f"{c.name}_pair", ["%qm", "%qs", "%wm", "%ws"], warps, [one] * 4, ("f32", "f32"),
                                   PAIR_BODY, ("%pM", "%pS"))
        exchange = (_max_then_sum(ind, one, lanes, "%m", "%s", "w", "%wm", "%ws")
                    + "".join(f"{ind}{line}\n" for line in op)
                    + f"{ind}%M = memref.load %qm[%c0] : {one}\n{ind}%S = memref.load %qs[%c0] : {one}\n"
                    f"{ind}%none = arith.cmpf oeq, %M, %ninf : f32\n{ind}%A = arith.select %none, %zero, %M : f32\n")
    else:
        exchange = _max_then_sum(ind, one, ", ".join(attrs), "%m", "%s", "", "%qm", "%qs")
    shared = f" workgroup(%sh : !SH)" if c.named else ""
    if REUSE_EXP:  # y = exp(x - a) · (exp(m - A) / S): the thread's exponentials kept from the first pass
        # (m, not a, as forward.max_sum: a thread of -inf has e = 0, and exp(a - A) = exp(-A) may be inf)
        keep = f"        vector.store %e, %ex[%i] : {_priv((E,), 'f32')}, vector<{V}xf32>\n"
        scale = (f"      %ra = arith.subf %m, %A : f32\n      %ra2 = arith.mulf %ra, %log2e : f32\n"
                 f"      %rs = math.exp2 %ra2 : f32\n      %rinv = arith.mulf %rs, %inv : f32\n"
                 f"      %invv = vector.broadcast %rinv : f32 to vector<{V}xf32>\n")
        again = f"        %e = vector.load %ex[%i] : {_priv((E,), 'f32')}, vector<{V}xf32>\n"
    else:  # y = exp(x - A) / S: the exponentials again
        keep = ""
        scale = (f"      %Av = vector.broadcast %A : f32 to vector<{V}xf32>\n"
                 f"      %invv = vector.broadcast %inv : f32 to vector<{V}xf32>\n")
        again = (f"        %xT = vector.load %x[%i] : {tile}, vector<{V}x{T}>\n"
                 f"        %xv = {ext} %xT : vector<{V}x{T}> to vector<{V}xf32>\n"
                 f"        %d = arith.subf %xv, %Av : vector<{V}xf32>\n"
                 f"        %d2 = arith.mulf %d, %log2ev : vector<{V}xf32>\n"
                 f"        %e = math.exp2 %d2 : vector<{V}xf32>\n")
    body = f"""    gpu.func @{c.name}(%X: !X {{llvm.align = 16 : i64}}, %Y: !X {{llvm.align = 16 : i64}}){shared} kernel
        attributes {{known_block_size = array<i32: {c.block}, 1, 1>, nvvm.minctasm = {2048 // c.block} : i32}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c32 = arith.constant 32 : index
      %cW = arith.constant {c.W} : index
      %cV = arith.constant {V} : index
      %cE = arith.constant {E} : index
      %ninf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %log2e = arith.constant {LOG2E!r} : f32
      %log2ev = vector.broadcast %log2e : f32 to vector<{V}xf32>
      %row = gpu.block_id x
      %x = memref.alloca() : {tile}
      %ex = memref.alloca() : {_priv((E,), "f32")}
      %pm = memref.alloca() : {one}
      %ps = memref.alloca() : {one}
      %qm = memref.alloca() : {one}
      %qs = memref.alloca() : {one}
      %wm = memref.alloca() : {one}
      %ws = memref.alloca() : {one}
      "tile.copy"(%x, %X, %row, %c0) {{exec_scope = "cta", {SOFTMAX_CACHE} layout = #tile.layout<"{lay["ROWS"]}">,
          padding = {NEG_INF[T]} : {T}}}
        : ({tile}, !X, index, index) -> ()
      // this thread's max m and sum s of exp(x - a), a = m (0 when m is -inf)
      %xa = vector.load %x[%c0] : {tile}, vector<{E}x{T}>
      %mT = vector.reduction <maximumf>, %xa : vector<{E}x{T}> into {T}
      %m = {ext} %mT : {T} to f32
      %empty = arith.cmpf oeq, %m, %ninf : f32
      %a = arith.select %empty, %zero, %m : f32
      %av = vector.broadcast %a : f32 to vector<{V}xf32>
      %s = scf.for %i = %c0 to %cE step %cV iter_args(%acc = %zero) -> (f32) {{
        %xT = vector.load %x[%i] : {tile}, vector<{V}x{T}>
        %xv = {ext} %xT : vector<{V}x{T}> to vector<{V}xf32>
        %d = arith.subf %xv, %av : vector<{V}xf32>
        %d2 = arith.mulf %d, %log2ev : vector<{V}xf32>
        %e = math.exp2 %d2 : vector<{V}xf32>
{keep}        %r = vector.reduction <add>, %e, %acc : vector<{V}xf32> into f32
        scf.yield %r : f32
      }} {UNROLL}
{exchange}      %inv = arith.divf %one, %S : f32
{scale}      scf.for %i = %c0 to %cE step %cV {{
{again}        %y = arith.mulf %e, %invv : vector<{V}xf32>
        %yT = {trunc} %y : vector<{V}xf32> to vector<{V}x{T}>
        vector.store %yT, %x[%i] : {tile}, vector<{V}x{T}>
      }} {UNROLL}
      "tile.copy"(%Y, %x, %row, %c0) {{exec_scope = "cta", {SOFTMAX_CACHE} layout = #tile.layout<"{lay["ROWS"]}">}}
        : (!X, {tile}, index, index) -> ()
      gpu.return
    }}
"""
    body = "".join(f"    {line}\n" for line in func) + body
    aliases = f"!X = memref<{c.M}x{c.N}x{T}>\n!SH = memref<{2 * c.W}xf32, #gpu.address_space<workgroup>>\n"
    return _module(body).replace("module attributes", aliases + "module attributes", 1)
