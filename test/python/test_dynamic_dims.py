"""Dynamic dims of kernel arguments (``tile_mlir.dynamic_dims``): a memref argument whose
leading dim comes from an integer argument (``tile.dims``) compiles for the GPU (a bare
pointer, rebuilt with memref.reinterpret_cast) and runs in the interpreter for any
extent; an unbound or badly bound dynamic dim is a located CompileError."""

import numpy as np
import pytest
import tile_mlir
from mlir.dialects import arith
from tile_mlir import build, dynamic_dims
from tile_mlir.compiler import lower_to_ptx
from tile_mlir.errors import CompileError
from tile_mlir.options import Options


def doubling(dims=None, rows_type="index"):
    """Y[r, j] = 2·X[r, j] for the row r of each block (one thread per column)."""
    with build.kernel("double", [("X", "memref<?x8xf32>"), ("Y", "memref<?x8xf32>"), ("rows", rows_type)],
                      known_block_size=8) as k:
        if dims is not None:
            dynamic_dims.mark(k.func, dims)
        row, col = k.block_id(), k.thread_id()
        k.store(arith.mulf(k.load(k.args["X"], [row, col]), k.constant(2.0, "f32")), k.args["Y"], [row, col])
    return k.module


def test_a_bound_dynamic_dim_compiles_for_the_gpu():
    text = str(doubling({0: [2], 1: [2]}))
    low = lower_to_ptx(text, Options(chip="sm_90a"))
    assert low.signatures[0].describe() == "double(float32[?, 8], float32[?, 8], scalar int64)"
    params = [line for line in low.ptx.splitlines() if line.strip().startswith(".param")]
    assert len(params) == 3 and ".ptr" in params[0] and ".ptr" in params[1]
    i32 = lower_to_ptx(str(doubling({0: [2], 1: [2]}, rows_type="i32")), Options(chip="sm_90a"))
    assert i32.signatures[0].describe() == "double(float32[?, 8], float32[?, 8], scalar int32)"


@pytest.mark.parametrize("M", [1, 5])
def test_the_interpreter_runs_it_for_any_extent(M):
    kernels = tile_mlir.compile(doubling({0: [2], 1: [2]}), backend="interpreter")
    x = np.random.default_rng(M).standard_normal((M, 8)).astype(np.float32)
    y = np.zeros_like(x)
    kernels["double"].launch(M, 8, x, y, M)
    np.testing.assert_array_equal(y, 2 * x)


@pytest.mark.parametrize("dims, message", [
    (None, "a dynamic dim runs only in the interpreter"),
    ({0: [2]}, "a dynamic dim runs only in the interpreter"),  # Y unbound
    ({0: [2, 2], 1: [2]}, r"tile.dims names 2 argument\(s\) for its 1 dynamic dim"),
    ({0: [1], 1: [2]}, "tile.dims entry 1 is not an integer argument"),
    ({0: [7], 1: [2]}, "tile.dims entry 7 is not an integer argument"),
])
def test_an_unbound_or_badly_bound_dim_is_an_error(dims, message):
    with pytest.raises(CompileError, match=message):
        lower_to_ptx(str(doubling(dims)), Options(chip="sm_90a"))
