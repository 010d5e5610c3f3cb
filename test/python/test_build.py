"""Tests for tile_mlir.build: the kernel builder makes launchable modules, locates each op
at the Python line that built it, and reports misuse as TileErrors."""

import inspect

import numpy as np
import pytest

import tile_mlir
from mlir import ir
from mlir.dialects import arith
from mlir.dialects._ods_common import _cext
from tile_mlir import build, ops
from tile_mlir.errors import BuildError, CompileError, OptionError
from tile_mlir.ir import find_ops

F32x32 = "memref<32xf32>"


def warp_sum(chip="sm_90a"):
    with build.kernel("warp_sum", [("A", F32x32), ("B", F32x32)], chip=chip) as k:
        lane = k.lane_id()
        src, dst = k.registers([1], "f32"), k.registers([1], "f32")
        k.store(k.load(k.args["A"], [lane]), src, [0])
        ops.reduce(dst, src, kind="sum", exec_scope="warp", axes=[0],
                   src_layout="S[32 : 1@laneid]", dst_layout="S[1 : 1] + R[32 : 1@laneid]")
        k.store(k.load(dst, [0]), k.args["B"], [lane])
    return k


def test_the_module_is_a_launchable_frame():
    k = warp_sum(chip="sm_80")
    text = str(k.module)
    assert text.startswith("module attributes {gpu.container_module} {")
    assert 'gpu.module @kernels [#nvvm.target<chip = "sm_80">]' in text
    assert "gpu.func @warp_sum(%arg0: memref<32xf32>, %arg1: memref<32xf32>) kernel" in text
    assert list(k.args) == ["A", "B"] and k.args["B"].type == ir.Type.parse(F32x32, k.context)
    body = [op.operation.name for op in k.block.operations]
    assert body[-1] == "gpu.return" and body.count("gpu.return") == 1
    assert "memref<1xf32, #gpu.address_space<private>>" in text
    k.module.operation.verify()


def test_it_launches_in_the_interpreter(rng=np.random.default_rng(0)):
    kernels = tile_mlir.compile(warp_sum().module, backend="interpreter")
    a, b = rng.standard_normal(32).astype(np.float32), np.full(32, np.nan, np.float32)
    kernels.warp_sum.launch(1, 32, a, b)
    np.testing.assert_allclose(b, np.full(32, a.astype(np.float64).sum()), rtol=1e-5)


def test_helpers_and_upstream_builders_mix():
    """thread_id, constants, a 2-d register tile and a plain arith op, with a dict of args."""
    with build.kernel("row_max", {"X": "memref<4x8xi32>", "Y": "memref<4xi32>"}) as k:
        t = k.thread_id("x")
        regs = k.registers([8], "i32")
        for j in range(8):
            k.store(k.load(k.args["X"], [t, j]), regs, [j])
        out = k.registers([1], "i32")
        ops.reduce(out, regs, kind="max", exec_scope="thread", axes=[0])
        bias = k.constant(100, "i32")
        k.store(arith.addi(k.load(out, [0]), bias), k.args["Y"], [t])
    x = np.random.default_rng(1).integers(-1000, 1000, (4, 8)).astype(np.int32)
    y = np.zeros(4, np.int32)
    tile_mlir.compile(k.module, backend="interpreter").row_max.launch(1, 4, x, y)
    np.testing.assert_array_equal(y, x.max(axis=1) + 100)


def test_ops_are_located_at_the_line_that_built_them():
    with build.kernel("k", [("A", F32x32)]) as k:
        src, dst = k.registers([4], "f32"), k.registers([1], "f32")
        line = inspect.currentframe().f_lineno + 1
        ops.reduce(dst, src, kind="sum", exec_scope="thread", axes=[0])
    (reduce,) = find_ops(k.module.operation, "tile.reduce")
    assert f'"{__file__}":{line}:' in str(reduce.location)


def test_a_compile_error_names_the_python_line():
    """A rule only the lowering can check (the forced variant does not apply) fails at
    compile time, located at the line that built the op."""
    with build.kernel("bad", [("A", F32x32)]) as k:
        src, dst = k.registers([4], "f32"), k.registers([1], "f32")
        line = inspect.currentframe().f_lineno + 1
        ops.reduce(dst, src, kind="sum", exec_scope="thread", axes=[0], dispatch="shared")
    with pytest.raises(CompileError, match=r"no variant of tile.reduce applies") as info:
        tile_mlir.compile(k.module, backend="interpreter")
    assert f"{__file__}:{line}:8: error: 'tile.reduce' op no variant" in str(info.value)
    assert info.value.stage == "tile-lower-reduction"


def test_an_error_in_the_body_propagates_and_leaves_nothing_current():
    with pytest.raises(ZeroDivisionError):
        with build.kernel("k", [("A", F32x32)]) as k:
            k.lane_id()
            1 / 0
    assert ir.Context.current is None  # nothing left current
    assert not _cext.globals.loc_tracebacks_enabled()
    assert "gpu.return" not in str(k.module)


def test_an_invalid_body_is_a_compile_error_at_the_block_end():
    with pytest.raises(CompileError, match=r"verify failed:\nkernel k:\n.*'memref.store' op failed to verify"):
        with build.kernel("k", [("A", F32x32)]) as k:
            k.store(k.constant(1, "i32"), k.args["A"], [0])  # an i32 into f32 memory


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: build.kernel("k", [("A", F32x32), ("A", F32x32)]), BuildError, r"argument names must differ, got \['A', 'A'\]"),
        (lambda: build.kernel("k", [("A", "memref<32xf3>")]), BuildError, r"not an MLIR type: 'memref<32xf3>'"),
        (lambda: build.kernel("k", [("A", F32x32)], chip="ampere"), OptionError, "chip must look like sm_90a"),
    ],
)
def test_bad_kernels(make, error, message):
    with pytest.raises(error, match=message):
        make()
    assert issubclass(error, tile_mlir.TileError)


def test_bad_helper_arguments():
    with pytest.raises(BuildError, match="dim must be x, y or z, got 'w'"):
        with build.kernel("k", [("A", F32x32)]) as k:
            k.thread_id("w")
    with pytest.raises(BuildError, match="not an MLIR type: 'float'"):
        with build.kernel("k", [("A", F32x32)]) as k:
            k.registers([4], "float")


# --- whole kernels: ids, loops, branches, vector math, shared memory ---------------------

from mlir.dialects import gpu, math  # noqa: E402


def test_the_frame_takes_block_and_cluster_sizes_and_alignment():
    with build.kernel("k", [("A", F32x32), ("n", "i32")], known_block_size=64, known_cluster_size=(2, 1),
                      align=16) as k:
        pass
    text = str(k.module)
    assert "known_block_size = array<i32: 64, 1, 1>" in text and "known_cluster_size = array<i32: 2, 1, 1>" in text
    assert "%arg0: memref<32xf32> {llvm.align = 16 : i64}, %arg1: i32)" in text
    with pytest.raises(BuildError, match=r"known_block_size must be one to three positive ints, got \[0\]"):
        build.kernel("k", [("A", F32x32)], known_block_size=0)


def test_where_each_thread_is():
    """lane, warp, thread, block, block and grid sizes, for 2 x 3 blocks of 64 threads."""
    out = {name: "memref<6x64xi32>" for name in ("lane", "warp", "tid", "bid", "bdim", "gdim")}
    with build.kernel("ids", out) as k:
        t, b = k.thread_id(), arith.addi(k.block_id("x"), arith.muli(k.block_id("y"), k.grid_dim("x")))
        values = {"lane": k.lane_id(), "warp": k.warp_id(), "tid": t, "bid": b, "bdim": k.block_dim(),
                  "gdim": arith.muli(k.grid_dim("x"), k.grid_dim("y"))}
        for name, v in values.items():
            k.store(k.cast(v, "i32"), k.args[name], [b, t])
    arrays = {name: np.full((6, 64), -1, np.int32) for name in out}
    tile_mlir.compile(k.module, backend="interpreter").ids.launch((2, 3), 64, *arrays.values())
    t = np.arange(64)
    np.testing.assert_array_equal(arrays["lane"], np.tile(t % 32, (6, 1)))
    np.testing.assert_array_equal(arrays["warp"], np.tile(t // 32, (6, 1)))
    np.testing.assert_array_equal(arrays["tid"], np.tile(t, (6, 1)))
    np.testing.assert_array_equal(arrays["bid"], np.repeat(np.arange(6), 64).reshape(6, 64))
    assert (arrays["bdim"] == 64).all() and (arrays["gdim"] == 6).all()


def test_where_each_block_of_a_cluster_is():
    with build.kernel("ranks", {"R": "memref<8xi32>", "C": "memref<8xi32>"}, known_cluster_size=4) as k:
        b = k.block_id()
        k.store(k.cast(k.cluster_rank(), "i32"), k.args["R"], [b])
        k.store(k.cast(k.cluster_id(), "i32"), k.args["C"], [b])
    r, c = np.full(8, -1, np.int32), np.full(8, -1, np.int32)
    tile_mlir.compile(k.module, backend="interpreter").ranks.launch(8, 1, r, c)
    assert r.tolist() == [0, 1, 2, 3] * 2 and c.tolist() == [0] * 4 + [1] * 4


def test_loops_carry_values_and_branches_choose(rng=np.random.default_rng()):
    """Per thread: the running max and the sum of a row of 16 (two carried values), then a
    branch with results: the sum where the max is positive, else -1; an unrolled loop
    with no carried value scales the row."""
    with build.kernel("stats", {"X": "memref<32x16xf32>", "Y": "memref<32xf32>", "Z": "memref<32x16xf32>"}) as k:
        t = k.thread_id()
        start = [k.constant(float("-inf"), "f32"), k.constant(0.0, "f32")]
        for i, (m, s), (m_end, s_end) in k.range(16, carry=start):
            x = k.load(k.args["X"], [t, i])
            k.yield_(arith.maximumf(m, x), arith.addf(s, x))
        choice = k.if_(arith.cmpf(arith.CmpFPredicate.OGT, m_end, k.constant(0.0, "f32")), ["f32"])
        with choice:
            k.yield_(s_end)
        with choice.else_():
            k.yield_(k.constant(-1.0, "f32"))
        k.store(choice.results[0], k.args["Y"], [t])
        for i in k.range(0, 16, 4, unroll=True):
            with k.if_(arith.cmpf(arith.CmpFPredicate.OGT, m_end, k.constant(0.0, "f32"))):
                k.vstore(arith.mulf(k.vload(k.args["X"], [t, i], 4), k.splat(m_end, 4)), k.args["Z"], [t, i])
    assert "#llvm.loop_annotation<unroll = #loop_unroll>" in str(k.module)
    x = rng.standard_normal((32, 16)).astype(np.float32)
    x[3] = -np.abs(x[3])  # a row whose max is negative
    y, z = np.full(32, np.nan, np.float32), np.zeros((32, 16), np.float32)
    tile_mlir.compile(k.module, backend="interpreter").stats.launch(1, 32, x, y, z)
    positive = x.max(axis=1) > 0
    np.testing.assert_allclose(y, np.where(positive, x.astype(np.float64).sum(axis=1), -1.0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(z, np.where(positive[:, None], x * x.max(axis=1, keepdims=True), 0.0))


def test_vector_math_in_f32_on_bf16_data(rng=np.random.default_rng()):
    """bf16 in (uint16 bits), f32 math (exp, rsqrt, fma, max, select), bf16 out: the
    builder's casts are extf and truncf (to nearest even)."""
    with build.kernel("vmath", {"X": "memref<32x8xbf16>", "Y": "memref<32x8xbf16>"}) as k:
        t = k.thread_id()
        x = k.cast(k.vload(k.args["X"], [t, 0], 8), "f32")
        e = math.exp(math.fma(x, k.constant(0.5, "vector<8xf32>"), k.constant(-1.0, "vector<8xf32>")))
        r = math.rsqrt(arith.addf(arith.mulf(x, x), k.constant(1.0, "vector<8xf32>")))
        pos = arith.cmpf(arith.CmpFPredicate.OGT, x, k.constant(0.0, "vector<8xf32>"))
        y = arith.select(pos, arith.maximumf(e, r), r)
        k.vstore(k.cast(y, "bf16"), k.args["Y"], [t, 0])
    bf16 = pytest.importorskip("ml_dtypes").bfloat16
    x = rng.standard_normal((32, 8)).astype(bf16)
    y = np.zeros_like(x)
    tile_mlir.compile(k.module, backend="interpreter").vmath.launch(1, 32, x, y)
    xf = x.astype(np.float64)
    e, r = np.exp(xf * 0.5 - 1), 1 / np.sqrt(xf * xf + 1)
    want = np.where(xf > 0, np.maximum(e, r), r)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=2**-8)


def test_a_shared_buffer_passes_values_between_warps(rng=np.random.default_rng()):
    with build.kernel("swap", {"X": "memref<64xf32>", "Y": "memref<64xf32>"}, known_block_size=64) as k:
        buf = k.shared([64], "f32")
        t = k.thread_id()
        k.store(k.load(k.args["X"], [t]), buf, [t])
        gpu.barrier()
        k.store(k.load(buf, [arith.xori(t, k.index(32))]), k.args["Y"], [t])
    assert "memref.global \"private\" @swap_shared_0 : memref<64xf32, #gpu.address_space<workgroup>>" in str(k.module)
    x, y = rng.standard_normal(64).astype(np.float32), np.zeros(64, np.float32)
    tile_mlir.compile(k.module, backend="interpreter").swap.launch(1, 64, x, y)
    np.testing.assert_array_equal(y, np.roll(x, 32))


def test_control_flow_misuse_is_reported():
    with pytest.raises(BuildError, match=r"carries 1 value\(s\) ends its body with k.yield_"):
        with build.kernel("k", [("A", F32x32)]) as k:
            for i, acc, s in k.range(4, carry=k.constant(0.0, "f32")):
                pass
    with pytest.raises(BuildError, match="has no else-branch"):
        with build.kernel("k", [("A", F32x32)]) as k:
            with k.if_(arith.cmpi(arith.CmpIPredicate.eq, k.lane_id(), k.index(0))).else_():
                pass
    with pytest.raises(BuildError, match="reduction kind must be one of add, mul"):
        with build.kernel("k", [("A", F32x32)]) as k:
            k.reduction("sum", k.vload(k.args["A"], 0, 4))
