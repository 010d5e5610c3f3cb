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
    with build.kernel("bad", [("A", F32x32)]) as k:
        src, dst = k.registers([4], "f32"), k.registers([1], "f32")
        line = inspect.currentframe().f_lineno + 1
        ops.reduce(dst, src, kind="sum", exec_scope="thread", axes=[3])
    with pytest.raises(CompileError, match=r"axes: 3 is out of range") as info:
        tile_mlir.compile(k.module, backend="interpreter")
    assert f"{__file__}:{line}:8: error: 'tile.reduce' op axes: 3 is out of range" in str(info.value)
    assert info.value.stage == "tile-verify"


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
