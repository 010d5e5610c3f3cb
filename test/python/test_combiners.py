"""Combiner reductions (docs/spec.md, "Combiner reductions") in the CPU interpreter.

* Every case of ``tile_mlir.testing.combiner_cases.COMBINER_CASES``: argmax/argmin at every
  scope and dtype against numpy's meaning (ties, NaN, infinities), combiner functions
  (first, last, online softmax, Welford, a 2x2 matrix product) against the documented
  order bit for bit and against their meaning; test/gpu/test_combiners_gpu.py runs the
  same cases on the GPU.
* The tree fold, a combiner op in a loop, the builder (``ops.reduce`` with
  ``combine=`` and ``kind="argmax"``), and what the lowering leaves behind.
"""

import numpy as np
import pytest

import tile_mlir
from tile_mlir import BuildError, build, ops
from tile_mlir.compiler import lower_tile_ops
from tile_mlir.testing.combiner_matrix import COMBINER_CASES, combiner_case, run_case
from tile_mlir.testing.conformance import session_seed

SEED = session_seed()


def _message(case, problems):
    return f"{case.name} (TILE_MLIR_SEED={SEED} repeats it):\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("case", COMBINER_CASES, ids=lambda case: case.name)
def test_case_in_the_interpreter(case):
    problems = run_case(case, "interpreter", SEED)
    assert not problems, _message(case, problems)


@pytest.mark.parametrize("where", ["t2x8", "w_lanes_inner", "wg_all", "cta8_rows", "cl4_all", "shared_cta"])
@pytest.mark.parametrize("name", ["matrix", "welford"])
def test_tree_fold(name, where):
    """fold=tree: pairwise in the thread and across warps and CTAs, the lower pair left."""
    case = combiner_case(name, "f32", where)
    problems = run_case(case, "interpreter", SEED, fold="tree")
    assert not problems, _message(case, problems)


@pytest.mark.parametrize("where", ["t3x4x5", "w_lanes_inner", "cta8_rows"])
@pytest.mark.parametrize("dtype", ["f32", "bf16", "f16", "i32"])
@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_tree_fold_arg(kind, dtype, where):
    """fold=tree for argmax/argmin: the value phase of a thread's own fold pairwise (of
    16-bit pairs in w_lanes_inner and cta8_rows), the ties, signed zeros and NaNs of
    the special inputs."""
    case = combiner_case(kind, dtype, where, special=True)
    problems = run_case(case, "interpreter", SEED, fold="tree")
    assert not problems, _message(case, problems)


# --- the builder ---------------------------------------------------------------------------

WARP = dict(exec_scope="warp", axes=[0, 1], src_layout="S[(4, 32) : (1, 1@laneid)]",
            dst_layout="S[1 : 1] + R[32 : 1@laneid]")


def _warp_kernel(name, build_op, dst_types):
    """A warp kernel: lane l holds A[l, 0..3] in registers (element 32 r + l of the
    reduced 128), ``build_op(k, src, dsts)`` reduces them, lane l stores each dst j to
    B<j>[l]."""
    args = [("A", "memref<32x4xf32>")] + [(f"B{j}", f"memref<32x{t}>") for j, t in enumerate(dst_types)]
    with build.kernel(name, args) as k:
        lane = k.lane_id()
        src = k.registers([4], "f32")
        for r in range(4):
            k.store(k.load(k.args["A"], [lane, r]), src, [r])
        dsts = [k.registers([1], t) for t in dst_types]
        build_op(k, src, dsts)
        for j, d in enumerate(dsts):
            k.store(k.load(d, [0]), k.args[f"B{j}"], [lane])
    return k.module


def test_the_builder_makes_an_argmax():
    module = _warp_kernel("argmax", lambda k, src, dsts: ops.reduce(dsts, src, kind="argmax", **WARP), ["f32", "i32"])
    a = np.random.default_rng(SEED).uniform(-1, 1, (32, 4)).astype(np.float32)
    a[5, 2] = a[17, 3] = 2.0  # a tie: elements 32 * 2 + 5 = 69 and 32 * 3 + 17 = 113
    v, i = np.zeros(32, np.float32), np.zeros(32, np.int32)
    tile_mlir.compile(module, backend="interpreter").argmax.launch(1, 32, a, v, i)
    assert (v == 2.0).all() and (i == 69).all()


def test_the_builder_makes_a_combiner_from_a_callable():
    """combine= receives the left and right value lists and builds the body with upstream
    builders; here the online softmax pair, with math.exp."""
    from mlir.dialects import arith, math

    def online_softmax(left, right):
        (lm, ls), (rm, rs) = left, right
        m = arith.maxnumf(lm, rm)
        scaled = [arith.mulf(s, math.exp(arith.subf(x, m))) for x, s in ((lm, ls), (rm, rs))]
        return [m, arith.addf(*scaled)]

    def build_op(k, src, dsts):
        ones = k.registers([4], "f32")
        for r in range(4):
            k.store(k.constant(1.0, "f32"), ones, [r])
        ops.reduce(dsts, [src, ones], combine=online_softmax, **WARP)

    module = _warp_kernel("softmax", build_op, ["f32", "f32"])
    text = str(module)
    assert "func.func private @online_softmax" in text and '"tile.reduce2"' in text
    a = np.random.default_rng(SEED).uniform(-4, 4, (32, 4)).astype(np.float32)
    m, s = np.zeros(32, np.float32), np.zeros(32, np.float32)
    tile_mlir.compile(module, backend="interpreter").softmax.launch(1, 32, a, m, s)
    assert (m == a.max()).all()
    assert np.allclose(s, np.exp(a.astype(np.float64) - a.max()).sum(), rtol=1e-5)


def test_the_builder_names_each_combiner_once():
    """Two ops with callables of one name get two functions (@last, @last_1)."""
    def last(left, right):
        return right

    def build_op(k, src, dsts):
        ops.reduce([dsts[0]], [src], combine=last, **WARP)
        ops.reduce([dsts[1]], [src], combine=lambda left, right: left, **WARP)
        ops.reduce([dsts[2]], [src], combine=last, **WARP)

    text = str(_warp_kernel("two", build_op, ["f32", "f32", "f32"]))
    assert text.count("func.func private @last") == 2 and "@last_1" in text and "@tile_combiner" in text


@pytest.mark.parametrize("call, message", [
    (lambda d, s: ops.reduce(d, s, exec_scope="warp"), "missing attribute 'kind' (one of"),
    (lambda d, s: ops.reduce(d, s, kind="sum", combine=lambda l, r: l, exec_scope="warp"), "never both"),
    (lambda d, s: ops.reduce([d, d], [s], combine=lambda l, r: l, exec_scope="warp"), "takes 2 operands (dst, src), got 3"),
    (lambda d, s: ops.reduce([d] * 9, [s] * 9, combine=lambda l, r: l, exec_scope="warp"), "at most 8 operand pairs"),
])
def test_the_builder_rejects_what_it_cannot_build(call, message):
    """A BuildError whose first line says what is wrong (the rest quotes the user's line)."""
    with build.kernel("bad", []) as k:
        d, s = k.registers([1], "f32"), k.registers([4], "f32")
        with pytest.raises(BuildError) as info:
            call(d, s)
    assert message in str(info.value).splitlines()[0]


@pytest.mark.parametrize("combine, message", [
    (lambda l, r: [l[0]], "returned 1 value(s), but the op reduces 2 operand(s)"),
    (lambda l, r: [l[0], 1.0], "value 1 is a float, not an MLIR value"),
    (lambda l, r: [l[0], l[0]], "value 1 is f32, but operand 1 is i32"),
])
def test_a_combiner_that_returns_the_wrong_values_is_a_build_error(combine, message):
    """At the line of the ops.reduce call, and no combiner function is left behind."""
    with pytest.raises(BuildError) as info:
        _warp_kernel("short", lambda k, src, dsts: ops.reduce(dsts, [src, dsts[1]], combine=combine, **WARP),
                     ["f32", "i32"])
    first = str(info.value).splitlines()[0]
    assert "test_combiners.py:" in first and message in first


# --- a combiner op that runs again ---------------------------------------------------------

LOOP = """
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    func.func private @pair(%la: i32, %lb: i64, %ra: i32, %rb: i64) -> (i32, i64) {
      %a = arith.addi %la, %ra : i32
      %b = arith.addi %lb, %rb : i64
      return %a, %b : i32, i64
    }
    gpu.func @loop(%A: memref<SCOPE_THREADSxi32>, %B: memref<SCOPE_THREADSxi32>, %C: memref<SCOPE_THREADSxi64>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %sa = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
      %sb = memref.alloca() : memref<1xi64, #gpu.address_space<private>>
      %da = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
      %db = memref.alloca() : memref<1xi64, #gpu.address_space<private>>
      %zero = arith.constant 0 : i32
      %zero64 = arith.constant 0 : i64
      memref.store %zero, %da[%c0] : memref<1xi32, #gpu.address_space<private>>
      memref.store %zero64, %db[%c0] : memref<1xi64, #gpu.address_space<private>>
      %v = memref.load %A[%t] : memref<SCOPE_THREADSxi32>
      scf.for %i = %c0 to %c3 step %c1 {
        %i32 = arith.index_cast %i : index to i32
        %w = arith.shli %v, %i32 : i32
        %w64 = arith.extsi %w : i32 to i64
        %big = arith.constant 4294967296 : i64
        %wb = arith.muli %w64, %big : i64
        memref.store %w, %sa[%c0] : memref<1xi32, #gpu.address_space<private>>
        memref.store %wb, %sb[%c0] : memref<1xi64, #gpu.address_space<private>>
        "tile.reduce2"(%da, %db, %sa, %sb) {combiner = @pair, exec_scope = "SCOPE", axes = array<i64: 0>, accum = true,
            src_layout = #tile.layout<"SRC">, dst_layout = #tile.layout<"DST">}
          : (memref<1xi32, #gpu.address_space<private>>, memref<1xi64, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<1xi64, #gpu.address_space<private>>) -> ()
      } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}
      %ra = memref.load %da[%c0] : memref<1xi32, #gpu.address_space<private>>
      %rb = memref.load %db[%c0] : memref<1xi64, #gpu.address_space<private>>
      memref.store %ra, %B[%t] : memref<SCOPE_THREADSxi32>
      memref.store %rb, %C[%t] : memref<SCOPE_THREADSxi64>
      gpu.return
    }
  }
}
"""


@pytest.mark.parametrize("scope, src, dst, group", [
    ("cta", "S[((8, 32)) : ((1@warpid, 1@laneid))]", "S[1 : 1] + R[(32, 8) : (1@laneid, 1@warpid)]", 256),
    ("warpgroup", "S[128 : 1@tid_in_wg]", "S[1 : 1] + R[128 : 1@tid_in_wg]", 128),
])
def test_a_combiner_in_a_loop_never_races_on_its_scratch(scope, src, dst, group):
    """Three runs with accum, an i32 and an i64 operand through one scratch of words: the
    interpreter reports any reuse of the scratch that the barriers do not order, and
    each group ends with 7 x its sum (the value doubles each run)."""
    text = LOOP.replace("SCOPE_THREADS", "256").replace("SCOPE", scope).replace("SRC", src).replace("DST", dst)
    kernel = tile_mlir.compile(text, backend="interpreter").loop
    a = np.random.default_rng(SEED).integers(-1000, 1000, 256).astype(np.int32)
    b, c = np.zeros(256, np.int32), np.zeros(256, np.int64)
    kernel.launch(1, 256, a, b, c)
    sums = 7 * a.astype(np.int64).reshape(-1, group).sum(axis=1)
    assert (b == np.repeat(sums, group).astype(np.int32)).all()
    assert (c == np.repeat(sums, group) << 32).all()


def test_the_interpreter_runs_every_op_a_combiner_may_hold():
    """A combiner holds arith and math ops: the interpreter runs every one that the GPU
    pipeline lowers (its GPU bits: docs/interpreter.md). The three it lacks do not reach
    the GPU either: convert-gpu-to-nvvm leaves them (math.clampf) or they take f4/f8
    operands that no tile has (arith.scaling_extf/truncf)."""
    from mlir.dialects import _arith_ops_gen, _math_ops_gen

    import tile_mlir.interpreter.kernel  # noqa: F401  (registers the handlers)
    from tile_mlir.interpreter.core import HANDLERS

    ops_ = {cls.OPERATION_NAME for module in (_arith_ops_gen, _math_ops_gen) for cls in vars(module).values()
            if hasattr(cls, "OPERATION_NAME")}
    assert ops_ - set(HANDLERS) == {"arith.scaling_extf", "arith.scaling_truncf", "math.clampf"}


def test_irdl_limits_that_make_the_combiner_a_function():
    """docs/spec.md ("Why a function, not a region"): in IRDL, an op declared with a region
    must always carry one, and an IRDL op cannot end a block (it is no terminator), while
    an upstream terminator without a parent constraint can. Should a newer MLIR lift
    either, this test fails, and the combiner may become a region."""
    from mlir.dialects import irdl
    from mlir.ir import Context, Location, Module

    with Context() as ctx, Location.unknown():
        irdl.load_dialects(Module.parse("""
        irdl.dialect @t {
          irdl.operation @red {
            %a = irdl.any
            irdl.operands(x: %a)
            %r = irdl.region
            irdl.regions(body: %r)
          }
          irdl.operation @yield {
            %a = irdl.any
            irdl.operands(v: variadic %a)
          }
        }"""))
        ctx.allow_unregistered_dialects = False

        def parse(body):
            return Module.parse(f'func.func @f(%x: f32) {{\n"t.red"(%x) {body} : (f32) -> ()\nreturn\n}}')

        region = '({{\n^bb0(%v: f32):\n  %s = arith.addf %v, %v : f32\n  {}(%s) : (f32) -> ()\n}})'
        with pytest.raises(Exception, match="block with no terminator"):
            parse(region.format('"t.yield"'))
        parse(region.format('"gpu.yield"'))  # another dialect's terminator verifies
        parse("({})")  # an empty region: what an op with a kind would have to carry
        with pytest.raises(Exception, match="unexpected number of regions: expected 1 but got 0"):
            parse("")
