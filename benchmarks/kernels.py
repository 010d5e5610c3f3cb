"""MLIR text of the benchmark kernels, one small generator per kind of kernel.

Pure string building: no MLIR import, so the GPU machine (which has no MLIR) regenerates
exactly the text that ``benchmarks.prepare`` compiled and finds it in the compile cache.

* ``row_reduce``: an M x N row-major matrix -> M row sums or maxima (f32 out), with
  ``vector.load`` into a private register tile, a thread-scope ``tile.reduce`` (accum)
  per chunk and a warp-scope ``tile.reduce`` per row.
* ``cta_row_reduce``: the same with W warps per row: a cta-scope ``tile.reduce`` per row
  (the ``cross_warp`` lowering), for rows too long for one warp.
* ``warp_latency``: K dependent warp-scope ``tile.reduce`` in a loop, timed with clock64.
* ``cross_warp_latency``: K dependent cta-scope reductions of 32 warp partials (clock64).
* ``launch_probe``: the 2-argument kernel the launch-overhead benchmark launches.
* ``many_reduces``: a module with n ``tile.reduce`` ops, for tile-lower-reduction's scaling.
"""

from __future__ import annotations

from dataclasses import dataclass

PRIVATE = "#gpu.address_space<private>"
UNROLL = "{llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}"
ITEMSIZE = {"f32": 4, "bf16": 2, "i32": 4}
# Identities for the accumulators' initial values. -0.0 (not 0.0) so that LLVM folds
# ``-0.0 + x`` away; max starts from -inf.
IDENTITY = {("sum", "f32"): "-0.0", ("max", "f32"): "0xFF800000",
            ("sum", "i32"): "0", ("max", "i32"): "-2147483648"}


def _module(body: str, chip: str = "sm_90a") -> str:
    return (
        "module attributes {gpu.container_module} {\n"
        f'  gpu.module @kernels [#nvvm.target<chip = "{chip}">] {{\n{body}  }}\n}}\n'
    )


def _priv(shape, elem: str = "f32") -> str:
    return f"memref<{'x'.join(map(str, shape))}x{elem}, {PRIVATE}>"


# --- 1. row reduction -----------------------------------------------------------------


@dataclass(frozen=True)
class _Rows:
    """An M x N row-major matrix reduced along its rows into M f32 results."""

    M: int
    N: int
    dtype: str  # "f32" | "bf16"; accumulation and output are f32
    kind: str  # "sum" | "max"

    @property
    def V(self) -> int:  # elements per 16-byte vector
        return 16 // ITEMSIZE[self.dtype]


@dataclass(frozen=True)
class RowConfig(_Rows):
    """One row-reduction kernel.

    G lanes share a row (32 // G rows per warp at once); each lane loads C vectors of
    16 bytes per row per chunk, for S rows at once (S*C loads in flight per lane). Each
    warp does R steps of S * (32 // G) rows; W warps per block.
    """

    G: int = 32
    S: int = 1
    C: int = 8
    W: int = 4
    R: int = 1
    unroll_chunks: bool = False
    nc: bool = False  # X noalias + readonly: loads through the non-coherent path (ld.global.nc)
    prefetch: bool = False  # load chunk k+1 before folding chunk k (needs 2+ chunks)

    @property
    def chunks(self) -> int:  # chunk-loop trip count
        return self.N // (self.G * self.V * self.C)

    @property
    def rows_per_step(self) -> int:
        return self.S * (32 // self.G)

    @property
    def warps(self) -> int:
        return self.M // (self.rows_per_step * self.R)

    @property
    def grid(self) -> int:
        return self.warps // self.W

    @property
    def block(self) -> int:
        return 32 * self.W

    @property
    def name(self) -> str:
        return f"row_{self.kind}_{self.dtype}_{self.M}x{self.N}"

    def label(self) -> str:
        flags = [f for f, on in (("U", self.unroll_chunks), ("nc", self.nc), ("P", self.prefetch)) if on]
        return " ".join([f"G{self.G} S{self.S} C{self.C} W{self.W} R{self.R}", *flags])

    def check(self) -> None:
        if 32 % self.G or self.N % (self.G * self.V * self.C) or self.chunks < 1:
            raise ValueError(f"{self}: N must split into G lanes x C vectors of {self.V}")
        if self.prefetch and (self.chunks < 2 or self.unroll_chunks):
            raise ValueError(f"{self}: prefetch needs 2+ chunks and a rolled chunk loop")
        if self.M % (self.rows_per_step * self.R * self.W):
            raise ValueError(f"{self}: M must split into blocks of W warps x R steps x S*32/G rows")


def _warp_layouts(G: int, S: int, C: int) -> tuple[str, str, int]:
    """(src layout, dst layout, reduced axis) for the per-lane accumulators [S, C]:
    S rows per lane, each spread over G lanes x C registers."""
    if G == 32:
        return f"S[({S}, (32, {C})) : ({C}, (1@laneid, 1))]", f"S[{S} : 1] + R[32 : 1@laneid]", 1
    return (
        f"S[({S}, {32 // G}, ({G}, {C})) : ({C}, {G}@laneid, (1@laneid, 1))]",
        f"S[({S}, {32 // G}) : (1, {G}@laneid)] + R[{G} : 1@laneid]",
        2,
    )


def _load_chunk(c: RowConfig, tile: str, k: str, indent: str) -> str:
    """Load chunk ``k`` (an index SSA name) of the S rows into the private tile [S, C, V]:
    lane gl of its row group takes vectors (k*C + j)*G + gl, j < C, so each load
    instruction of the warp reads G*16 contiguous bytes per row."""
    T, V, S, C = c.dtype, c.V, c.S, c.C
    X, tt = f"memref<{c.M}x{c.N}x{T}>", _priv((S, C, V))
    cvt = f"%v32 = arith.extf %v : vector<{V}x{T}> to vector<{V}xf32>\n" if T != "f32" else ""
    load = (f"%v = vector.load %X[%row, %col] : {X}, vector<{V}x{T}>\n{cvt}"
            f"vector.store %v{'32' if cvt else ''}, {tile}[%s, %j, %c0] : {tt}, vector<{V}xf32>\n")
    text = f"""scf.for %s = %c0 to %cS step %c1 {{
  %srw = arith.muli %s, %cRW : index
  %row = arith.addi %row0, %srw : index
  scf.for %j = %c0 to %cC step %c1 {{
    %kc = arith.muli {k}, %cC : index
    %kj = arith.addi %kc, %j : index
    %vg = arith.muli %kj, %cG : index
    %vi = arith.addi %vg, %gl : index
    %col = arith.muli %vi, %cV : index
{load}  }} {UNROLL}
}} {UNROLL}
"""
    return "".join(indent + line + "\n" for line in text.splitlines())


def _constants(c, *named) -> str:
    """The index constants %c0, %c1, %cV, then ``%c<name>`` for each (name, value), then
    %cchunks, %clast and the accumulators' initial value %init, one line each."""
    pairs = (("0", 0), ("1", 1), ("V", c.V), *named, ("chunks", c.chunks), ("last", c.chunks - 1))
    return ("".join(f"      %c{n} = arith.constant {v} : index\n" for n, v in pairs)
            + f"      %init = arith.constant {IDENTITY[(c.kind, 'f32')]} : f32\n")


def _chunk_loops(c, ind: str) -> str:
    """The chunk loop of a row kernel (``RowConfig`` or ``CtaRowConfig``): load chunk k of
    the S rows into %tile, fold it into %acc with a thread-scope ``tile.reduce`` (accum);
    with ``prefetch``, chunk k+1 is loaded into %next before chunk k is folded."""
    S, C, V = c.S, c.C, c.V
    combine = "sum" if c.kind == "sum" else "max"
    fold = (f'"tile.reduce"(%acc, %tile) {{kind = "{combine}", exec_scope = "thread", axes = array<i64: 2>, accum = true}}\n'
            f"  : ({_priv((S, C))}, {_priv((S, C, V))}) -> ()")
    tt = _priv((S, C, V))
    copy = (f"%nv = vector.load %next[%s, %j, %c0] : {tt}, vector<{V}xf32>\n{ind}      "
            f"vector.store %nv, %tile[%s, %j, %c0] : {tt}, vector<{V}xf32>")
    if c.prefetch:  # software pipelining: chunk k+1's loads are issued before chunk k is folded
        return (_load_chunk(c, "%tile", "%c0", ind)
                + f"{ind}scf.for %k = %c0 to %clast step %c1 {{\n"
                + f"{ind}  %k1 = arith.addi %k, %c1 : index\n"
                + _load_chunk(c, "%next", "%k1", ind + "  ")
                + "".join(f"{ind}  {line}\n" for line in fold.splitlines())
                + f"{ind}  scf.for %s = %c0 to %cS step %c1 {{\n{ind}    scf.for %j = %c0 to %cC step %c1 {{\n"
                + f"{ind}      {copy}\n"
                + f"{ind}    }} {UNROLL}\n{ind}  }} {UNROLL}\n"
                + f"{ind}}}\n"
                + "".join(f"{ind}{line}\n" for line in fold.splitlines()))
    return (f"{ind}scf.for %k = %c0 to %cchunks step %c1 {{\n"
            + _load_chunk(c, "%tile", "%k", ind + "  ")
            + "".join(f"{ind}  {line}\n" for line in fold.splitlines())
            + f"{ind}}}{(' ' + UNROLL) if c.unroll_chunks else ''}\n")


def row_reduce(c: RowConfig) -> str:
    """The kernel ``c.name``(X: memref<MxNxT>, Y: memref<Mxf32>), launched on c.grid x c.block."""
    c.check()
    S, C, V = c.S, c.C, c.V
    X, Y = f"memref<{c.M}x{c.N}x{c.dtype}>", f"memref<{c.M}xf32>"
    combine = "sum" if c.kind == "sum" else "max"
    x_attrs, y_attrs = ("llvm.align = 16 : i64, llvm.noalias, llvm.readonly", " {llvm.noalias}") if c.nc else ("llvm.align = 16 : i64", "")
    src_layout, dst_layout, red_axis = _warp_layouts(c.G, S, C)
    chunks = _chunk_loops(c, " " * 8)
    consts = _constants(c, ("G", c.G), ("S", S), ("C", C), ("R", c.R), ("W", c.W), ("32", 32), ("RW", 32 // c.G),
                        ("step", c.rows_per_step), ("warps", c.warps))
    body = f"""    gpu.func @{c.name}(%X: {X} {{{x_attrs}}}, %Y: {Y}{y_attrs}) kernel {{
{consts}      %lane = gpu.lane_id
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bw = arith.muli %bid, %cW : index
      %wib = arith.divui %tid, %c32 : index
      %warp = arith.addi %bw, %wib : index
      %grp = arith.divui %lane, %cG : index
      %gl = arith.remui %lane, %cG : index
      %is_first = arith.cmpi eq, %gl, %c0 : index
      %tile = memref.alloca() : {_priv((S, C, V))}
      %next = memref.alloca() : {_priv((S, C, V))}
      %acc = memref.alloca() : {_priv((S, C))}
      %res = memref.alloca() : {_priv((S,))}
      scf.for %t = %c0 to %cR step %c1 {{
        %tw = arith.muli %t, %cwarps : index
        %blk = arith.addi %tw, %warp : index
        %blk_rows = arith.muli %blk, %cstep : index
        %row0 = arith.addi %blk_rows, %grp : index
        scf.for %s = %c0 to %cS step %c1 {{
          scf.for %j = %c0 to %cC step %c1 {{
            memref.store %init, %acc[%s, %j] : {_priv((S, C))}
          }} {UNROLL}
        }} {UNROLL}
{chunks}        "tile.reduce"(%res, %acc) {{kind = "{combine}", exec_scope = "warp", axes = array<i64: {red_axis}>,
            src_layout = #tile.layout<"{src_layout}">, dst_layout = #tile.layout<"{dst_layout}">}}
          : ({_priv((S,))}, {_priv((S, C))}) -> ()
        scf.if %is_first {{
          scf.for %s = %c0 to %cS step %c1 {{
            %srw = arith.muli %s, %cRW : index
            %row = arith.addi %row0, %srw : index
            %r = memref.load %res[%s] : {_priv((S,))}
            memref.store %r, %Y[%row] : {Y}
          }} {UNROLL}
        }}
      }}
      gpu.return
    }}
"""
    return _module(body)


# Candidate configurations per (M, N); the run picks the fastest of them on the GPU
# (as Triton's autotuner picks among its configs) and reports which it was.
def row_candidates(M: int, N: int, dtype: str, kind: str) -> list[RowConfig]:
    V = 16 // ITEMSIZE[dtype]
    out = []
    if N <= 256:  # several rows per warp, in groups of G lanes
        for G, S, W, R in ((8, 2, 4, 2), (8, 4, 4, 1), (16, 4, 4, 1), (8, 2, 8, 4), (8, 1, 4, 4)):
            C = N // (G * V)
            if C >= 1 and N % (G * V) == 0:
                out.append(RowConfig(M, N, dtype, kind, G=G, S=S, C=C, W=W, R=R))
    else:  # one row per warp at a time, chunks of C vectors per lane
        per_lane = N // (32 * V)
        for S, C, W, R, U, P in ((1, 8, 4, 1, False, False), (1, 16, 4, 1, False, False), (1, 8, 1, 1, False, False),
                                 (1, 4, 4, 1, True, False), (1, 8, 8, 2, False, False), (1, 8, 4, 1, False, True),
                                 (1, 8, 1, 1, False, True), (1, 16, 4, 1, False, True), (1, 4, 4, 1, False, True),
                                 (1, 4, 1, 1, False, True)):
            C = min(C, per_lane)
            if (U and per_lane // C > 8) or (P and per_lane // C < 2):
                continue
            if M % (S * R * W) == 0:
                out.append(RowConfig(M, N, dtype, kind, G=32, S=S, C=C, W=W, R=R, unroll_chunks=U, prefetch=P))
    return list(dict.fromkeys(out))


ROW_SHAPES = ((16384, 4096), (65536, 1024), (4096, 16384), (262144, 128))
ROW_CASES = [(M, N, dt, kind) for dt in ("f32", "bf16") for (M, N) in ROW_SHAPES for kind in ("sum", "max")]


# --- 1b. row reduction, several warps per row -------------------------------------------


@dataclass(frozen=True)
class CtaRowConfig(_Rows):
    """One row-reduction kernel with W warps per row: each block of W warps (32*W
    threads) reduces S rows at once, R times (grid-stride over the rows). Each thread
    loads C vectors of 16 bytes per row per chunk (S*C loads in flight), thread t taking
    vectors (k*C + j)*32*W + t of chunk k, so each load instruction of the block reads
    32*W*16 contiguous bytes of a row. The per-thread accumulators [S, C] are reduced by
    one cta-scope ``tile.reduce`` whose src layout puts the W warps along the row (the
    ``cross_warp`` lowering: in-thread fold, lane butterfly, warp partials through
    workgroup scratch, one barrier, fold in warp order)."""

    W: int = 8
    S: int = 1
    C: int = 4
    R: int = 1
    unroll_chunks: bool = False
    prefetch: bool = False

    @property
    def threads(self) -> int:
        return 32 * self.W

    @property
    def chunks(self) -> int:
        return self.N // (self.threads * self.V * self.C)

    @property
    def grid(self) -> int:
        return self.M // (self.S * self.R)

    @property
    def block(self) -> int:
        return self.threads

    @property
    def name(self) -> str:
        return f"cta_row_{self.kind}_{self.dtype}_{self.M}x{self.N}"

    def label(self) -> str:
        flags = [f for f, on in (("U", self.unroll_chunks), ("P", self.prefetch)) if on]
        return " ".join([f"W{self.W} S{self.S} C{self.C} R{self.R}", *flags])

    def check(self) -> None:
        if self.W < 2 or self.W > 32 or self.W & (self.W - 1):
            raise ValueError(f"{self}: W must be a power of two in 2..32 (warps along the row)")
        if self.N % (self.threads * self.V * self.C) or self.chunks < 1:
            raise ValueError(f"{self}: N must split into 32*W threads x C vectors of {self.V}")
        if self.prefetch and (self.chunks < 2 or self.unroll_chunks):
            raise ValueError(f"{self}: prefetch needs 2+ chunks and a rolled chunk loop")
        if self.M % (self.S * self.R):
            raise ValueError(f"{self}: M must split into blocks of S rows x R steps")


def cta_layouts(W: int, S: int, C: int) -> tuple[str, str]:
    """(src, dst) layouts of the accumulators [S, C]: each of the S rows spread over 32
    lanes x W warps x C registers, reduced (axis 1) into a result every thread holds."""
    return (f"S[({S}, (32, {W}, {C})) : ({C}, (1@laneid, 1@warpid, 1))]",
            f"S[{S} : 1] + R[(32, {W}) : (1@laneid, 1@warpid)]")


def cta_row_reduce(c: CtaRowConfig) -> str:
    """The kernel ``c.name``(X: memref<MxNxT>, Y: memref<Mxf32>), launched on c.grid x c.block
    (the block size is also the function's ``known_block_size``)."""
    c.check()
    S, C, V = c.S, c.C, c.V
    X, Y = f"memref<{c.M}x{c.N}x{c.dtype}>", f"memref<{c.M}xf32>"
    src_layout, dst_layout = cta_layouts(c.W, S, C)
    combine = "sum" if c.kind == "sum" else "max"
    ind = " " * 8 if c.R > 1 else " " * 6
    step = (f"{ind}%tg = arith.muli %t, %cgrid : index\n{ind}%blk = arith.addi %tg, %bid : index\n"
            if c.R > 1 else f"{ind}%blk = arith.addi %bid, %c0 : index\n")
    inner = f"""{step}{ind}%row0 = arith.muli %blk, %cS : index
{ind}scf.for %s = %c0 to %cS step %c1 {{
{ind}  scf.for %j = %c0 to %cC step %c1 {{
{ind}    memref.store %init, %acc[%s, %j] : {_priv((S, C))}
{ind}  }} {UNROLL}
{ind}}} {UNROLL}
{_chunk_loops(c, ind)}{ind}"tile.reduce"(%res, %acc) {{kind = "{combine}", exec_scope = "cta", axes = array<i64: 1>,
{ind}    src_layout = #tile.layout<"{src_layout}">, dst_layout = #tile.layout<"{dst_layout}">}}
{ind}  : ({_priv((S,))}, {_priv((S, C))}) -> ()
{ind}scf.if %is_first {{
{ind}  scf.for %s = %c0 to %cS step %c1 {{
{ind}    %row = arith.addi %row0, %s : index
{ind}    %r = memref.load %res[%s] : {_priv((S,))}
{ind}    memref.store %r, %Y[%row] : {Y}
{ind}  }} {UNROLL}
{ind}}}
"""
    if c.R > 1:  # the reduce runs R times: its scratch is double-buffered (cross_warp's phase)
        inner = f"      scf.for %t = %c0 to %cR step %c1 {{\n{inner}      }}\n"
    body = f"""    gpu.func @{c.name}(%X: {X} {{llvm.align = 16 : i64}}, %Y: {Y}) kernel
        attributes {{known_block_size = array<i32: {c.threads}, 1, 1>}} {{
{_constants(c, ("G", c.threads), ("S", S), ("C", C), ("R", c.R), ("RW", 1), ("grid", c.grid))}      %gl = gpu.thread_id x
      %bid = gpu.block_id x
      %is_first = arith.cmpi eq, %gl, %c0 : index
      %tile = memref.alloca() : {_priv((S, C, V))}
      %next = memref.alloca() : {_priv((S, C, V))}
      %acc = memref.alloca() : {_priv((S, C))}
      %res = memref.alloca() : {_priv((S,))}
{inner}      gpu.return
    }}
"""
    return _module(body)


# The sweep run on the GPU (as Triton's autotuner): (W, S, C, R, unroll, prefetch), C capped
# at the vectors each thread has per row (half of them with prefetch); configurations with fewer blocks than SMs dropped.
CTA_TUNING = ((4, 1, 8, 1, False, False), (8, 1, 4, 1, False, True), (8, 1, 8, 1, False, False),
              (16, 1, 4, 1, False, True), (32, 1, 4, 1, False, False), (32, 1, 2, 1, False, True),
              (8, 2, 4, 1, False, True), (8, 1, 4, 4, False, True))
NUM_SMS = 132  # H200


def cta_row_candidates(M: int, N: int, dtype: str, kind: str) -> list[CtaRowConfig]:
    V, out = 16 // ITEMSIZE[dtype], []
    for W, S, C, R, U, P in CTA_TUNING:
        per_thread = N // (32 * W * V)
        C = min(C, per_thread if not P else per_thread // 2)  # prefetch needs 2+ chunks
        if C < 1 or M % (S * R) or M // (S * R) < NUM_SMS:
            continue
        out.append(CtaRowConfig(M, N, dtype, kind, W=W, S=S, C=C, R=R, unroll_chunks=U, prefetch=P))
    return list(dict.fromkeys(out))


CTA_ROW_CASES = [(M, N, dt, kind) for (M, N) in ((4096, 16384), (1024, 65536))
                 for dt in ("f32", "bf16") for kind in ("sum", "max")] + [(256, 262144, "f32", "sum")]


# --- 2. warp-reduce latency -------------------------------------------------------------


@dataclass(frozen=True)
class LatencyConfig:
    """K dependent warp reductions of ``rows`` values per lane over ``lanes`` lanes
    (32: the whole warp; 4: quads of adjacent lanes, 8 groups)."""

    dtype: str  # "f32" | "i32"
    lanes: int  # 32 | 4
    rows: int = 1  # independent dst slots reduced at once (interleaved butterflies)
    kind: str = "sum"

    @property
    def name(self) -> str:
        return f"lat_{self.kind}_{self.dtype}_l{self.lanes}_r{self.rows}"

    def layouts(self) -> tuple[str, str, int]:
        L, n = self.lanes, self.rows
        if L == 32:
            return f"S[({n}, 32) : (1, 1@laneid)]", f"S[{n} : 1] + R[32 : 1@laneid]", 1
        return (
            f"S[({n}, {32 // L}, {L}) : (1, {L}@laneid, 1@laneid)]",
            f"S[({n}, {32 // L}) : (1, {L}@laneid)] + R[{L} : 1@laneid]",
            2,
        )


def warp_latency(c: LatencyConfig) -> str:
    """``c.name``(A: memref<32*rows x T>, B: memref<32*rows x T>, T: memref<32xi64>, K: index),
    one warp: lane l loads A[l*rows + r], runs K dependent reductions (each one's result is
    the next one's source), stores to B, and clock64 differences (the loop alone) to T[l]."""
    T, n = c.dtype, c.rows
    src_layout, dst_layout, axis = c.layouts()
    buf = f"memref<{32 * n}x{T}>"
    body = f"""    gpu.func @{c.name}(%A: {buf}, %B: {buf}, %Tm: memref<32xi64>, %K: index) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cn = arith.constant {n} : index
      %lane = gpu.lane_id
      %base = arith.muli %lane, %cn : index
      %src = memref.alloca() : {_priv((n,), T)}
      %dst = memref.alloca() : {_priv((n,), T)}
      scf.for %r = %c0 to %cn step %c1 {{
        %i = arith.addi %base, %r : index
        %a = memref.load %A[%i] : {buf}
        memref.store %a, %src[%r] : {_priv((n,), T)}
      }} {UNROLL}
      %t0 = nvvm.read.ptx.sreg.clock64 : i64
      scf.for %k = %c0 to %K step %c1 {{
        "tile.reduce"(%dst, %src) {{kind = "{c.kind}", exec_scope = "warp", axes = array<i64: {axis}>,
            src_layout = #tile.layout<"{src_layout}">, dst_layout = #tile.layout<"{dst_layout}">}}
          : ({_priv((n,), T)}, {_priv((n,), T)}) -> ()
        scf.for %r = %c0 to %cn step %c1 {{
          %d = memref.load %dst[%r] : {_priv((n,), T)}
          memref.store %d, %src[%r] : {_priv((n,), T)}
        }} {UNROLL}
      }}
      %t1 = nvvm.read.ptx.sreg.clock64 : i64
      scf.for %r = %c0 to %cn step %c1 {{
        %i = arith.addi %base, %r : index
        %d = memref.load %src[%r] : {_priv((n,), T)}
        memref.store %d, %B[%i] : {buf}
      }} {UNROLL}
      %dt = arith.subi %t1, %t0 : i64
      memref.store %dt, %Tm[%lane] : memref<32xi64>
      gpu.return
    }}
"""
    return _module(body)


LATENCY_CASES = [
    LatencyConfig("f32", 32), LatencyConfig("i32", 32),
    LatencyConfig("f32", 4), LatencyConfig("i32", 4),
    LatencyConfig("f32", 32, rows=8), LatencyConfig("i32", 32, rows=8),
]


# --- 2b. cross-warp step latency ----------------------------------------------------------

XWARP_WARPS = 32  # one block of 1024 threads
XWARP_FOLDS = ("linear", "tree")  # the Options.fold each is compiled with


def cross_warp_latency(warps: int = XWARP_WARPS, clock: bool = True) -> str:
    """``xwarp_lat_sum_f32_w<warps>``(A: memref<warps x f32>, B, T: memref<32*warps x ...>, K: index),
    one block of ``warps`` warps: warp w's partial is A[w], held by all its lanes (src layout
    ``S[warps : 1@warpid] + R[32 : 1@laneid]``: no in-thread fold, no lane butterfly), and K
    dependent cta-scope sum ``tile.reduce`` run between two clock64 reads: each is only the
    cross-warp exchange (lane 0's store, the barrier, the reads, the fold). Each result times
    1/warps is the next source, so the values stay finite (the mean of A); thread t stores
    its last value to B[t] and its clock difference to T[t]. ``clock=False`` reads 0 for
    the clock (for the CPU interpreter, which has no clock)."""
    n = 32 * warps
    now = "nvvm.read.ptx.sreg.clock64 : i64" if clock else "arith.constant 0 : i64"
    priv = _priv((1,))
    body = f"""    gpu.func @xwarp_lat_sum_f32_w{warps}(%A: memref<{warps}xf32>, %B: memref<{n}xf32>, %Tm: memref<{n}xi64>, %K: index) kernel
        attributes {{known_block_size = array<i32: {n}, 1, 1>}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %scale = arith.constant {1.0 / warps!r} : f32
      %tid = gpu.thread_id x
      %warp = arith.divui %tid, %c32 : index
      %src = memref.alloca() : {priv}
      %dst = memref.alloca() : {priv}
      %a = memref.load %A[%warp] : memref<{warps}xf32>
      memref.store %a, %src[%c0] : {priv}
      %t0 = {now}
      scf.for %k = %c0 to %K step %c1 {{
        "tile.reduce"(%dst, %src) {{kind = "sum", exec_scope = "cta", axes = array<i64: 0>,
            src_layout = #tile.layout<"S[{warps} : 1@warpid] + R[32 : 1@laneid]">,
            dst_layout = #tile.layout<"S[1 : 1] + R[(32, {warps}) : (1@laneid, 1@warpid)]">}}
          : ({priv}, {priv}) -> ()
        %d = memref.load %dst[%c0] : {priv}
        %e = arith.mulf %d, %scale : f32
        memref.store %e, %src[%c0] : {priv}
      }}
      %t1 = {now}
      %r = memref.load %src[%c0] : {priv}
      memref.store %r, %B[%tid] : memref<{n}xf32>
      %dt = arith.subi %t1, %t0 : i64
      memref.store %dt, %Tm[%tid] : memref<{n}xi64>
      gpu.return
    }}
"""
    return _module(body)


# --- 3. launch overhead ---------------------------------------------------------------


LAUNCH_N = 1024


def launch_probe() -> str:
    """``add_one``(A, B: memref<1024xf32>): B[i] = A[i] + 1, one thread per element."""
    body = f"""    gpu.func @add_one(%A: memref<{LAUNCH_N}xf32>, %B: memref<{LAUNCH_N}xf32>) kernel {{
      %one = arith.constant 1.0 : f32
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %b = arith.muli %bid, %bdim : index
      %i = arith.addi %b, %tid : index
      %a = memref.load %A[%i] : memref<{LAUNCH_N}xf32>
      %r = arith.addf %a, %one : f32
      memref.store %r, %B[%i] : memref<{LAUNCH_N}xf32>
      gpu.return
    }}
"""
    return _module(body)


# --- 4. tile-lower-reduction scaling ----------------------------------------------------


def many_reduces(n: int) -> str:
    """A func with n independent warp-scope tile.reduce ops (4 rows x 32 lanes each)."""
    t1, t4 = _priv((4,)), _priv((4,))
    ops = "".join(
        f"""    %d{i} = memref.alloca() : {t1}
    "tile.reduce"(%d{i}, %s) {{kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
        src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[4 : 1] + R[32 : 1@laneid]">}}
      : ({t1}, {t4}) -> ()
"""
        for i in range(n)
    )
    return f"func.func @many(%s: {t4}) {{\n{ops}    return\n}}\n"
