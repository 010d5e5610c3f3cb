"""Kernels with dynamic-dim memref arguments (``memref<?x8xf32>``) in the interpreter.

The extents come from the arrays a launch passes (``memref.dim`` reads them); one kernel
runs on several shapes without being built again by the caller. Checked against numpy on
fresh random data, through a hand-written kernel and through ``tile_mlir.compile`` of a
tile.copy / tile.reduce row sum whose row count is a runtime dim.
"""

from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from test_interpreter import kernel
from tile_mlir.compiler import lower_to_ptx
from tile_mlir.errors import CompileError, InterpreterError, LaunchError
from tile_mlir.signature import ArgSpec, KernelSignature
from tile_mlir.testing.copies import row_sum_reference

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rng():
    return np.random.default_rng(20261203)


def _data(rng, shape):
    x = (rng.uniform(0.25, 4.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(np.float32)
    x.reshape(-1)[:: 11] = -0.0
    return x


ROW_SUMS = """
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %row = arith.addi %base, %tid : index
      %m = memref.dim %X, %c0 : memref<?x?xf32>
      %n = memref.dim %X, %c1 : memref<?x?xf32>
      %inside = arith.cmpi ult, %row, %m : index
      scf.if %inside {
        %zero = arith.constant 0.0 : f32
        %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
          %v = memref.load %X[%row, %j] : memref<?x?xf32>
          %a = arith.addf %acc, %v : f32
          scf.yield %a : f32
        }
        memref.store %s, %Y[%row, %c0] : memref<?x2xf32>
        %mi = arith.index_cast %m : index to i32
        %nf = arith.sitofp %mi : i32 to f32
        memref.store %nf, %Y[%row, %c1] : memref<?x2xf32>
      }"""


def _sequential_sums(x):
    out = np.zeros(x.shape[0], np.float32)
    for j in range(x.shape[1]):
        out = out + x[:, j]
    return out


def test_one_kernel_runs_on_every_shape(rng):
    """Row sums (in order, in f32) of M x N for several M and N, and memref.dim's M."""
    k = kernel("%X: memref<?x?xf32>, %Y: memref<?x2xf32>", ROW_SUMS)
    assert k.signature.args[0] == ArgSpec("memref", "float32", (None, None))
    for m, n in [(5, 3), (37, 8), (64, 1), (37, 8), (1, 20)]:
        x, y = _data(rng, (m, n)), np.zeros((m, 2), np.float32)
        k.launch(-(-m // 16), 16, x, y)
        np.testing.assert_array_equal(y[:, 0], _sequential_sums(x))
        np.testing.assert_array_equal(y[:, 1], np.full(m, m, np.float32))


def test_a_dynamic_argument_is_checked_at_launch(rng):
    k = kernel("%X: memref<?x8xf32>", "")
    assert k.signature.args[0].describe() == "float32[?, 8]"
    with pytest.raises(LaunchError, match=r"argument 0 must be float32\[\?, 8\], got shape \(4, 7\)"):
        k.launch(1, 32, np.zeros((4, 7), np.float32))
    with pytest.raises(LaunchError, match=r"must be float32\[\?, 8\], got shape \(32,\)"):
        k.launch(1, 32, np.zeros(32, np.float32))  # no flattening: the rank says the extents
    with pytest.raises(LaunchError, match=r"must be float32\[\?, 8\], got dtype float64"):
        k.launch(1, 32, np.zeros((4, 8)))
    k.launch(1, 32, np.zeros((0, 8), np.float32))  # no rows: nothing to do


def test_a_cast_to_a_static_shape_is_checked_when_it_runs(rng):
    body = """
      %c0 = arith.constant 0 : index
      %S = memref.cast %X : memref<?x8xf32> to memref<4x8xf32>
      %v = memref.load %S[%c0, %c0] : memref<4x8xf32>
      memref.store %v, %S[%c0, %c0] : memref<4x8xf32>"""
    k = kernel("%X: memref<?x8xf32>", body)
    x = _data(rng, (4, 8))
    k.launch(1, 1, x)
    with pytest.raises(InterpreterError, match=r"memref.cast at .*: the memref has shape \[5, 8\], not \[4, 8\]"):
        k.launch(1, 1, _data(rng, (5, 8)))


def test_signatures_keep_dynamic_dims():
    sig = KernelSignature("k", (ArgSpec("memref", "float32", (None, 4096)), ArgSpec("scalar", "int32")))
    assert KernelSignature.from_json(sig.to_json()) == sig
    assert sig.describe() == "k(float32[?, 4096], scalar int32)"


def _row_sum_text() -> str:
    text = (ROOT / "examples" / "row_sum_copy.mlir").read_text()
    return text.replace("memref<4096x1000xf32>", "memref<?x1000xf32>").replace("memref<4096xf32>", "memref<?xf32>")


@pytest.mark.parametrize("m", [12, 7, 1])
def test_a_tile_kernel_whose_row_count_is_a_runtime_dim(m, rng):
    """examples/row_sum_copy.mlir with M a dynamic dim, through tile_mlir.compile: rows
    past M are padding for the copies and skipped by the store."""
    kernels = tile_mlir.compile(_row_sum_text(), backend="interpreter")
    assert kernels.row_sum.signature.args[0] == ArgSpec("memref", "float32", (None, 1000))
    x = _data(rng, (m, 1000))
    y = np.zeros(m, np.float32)
    kernels.row_sum.launch(-(-m // 4), 128, x, y)
    np.testing.assert_array_equal(y, row_sum_reference(x))


def test_the_cuda_backend_says_dynamic_dims_run_only_in_the_interpreter():
    with pytest.raises(CompileError, match=r"argument 0 is memref<\?x1000xf32>: .*interpreter"):
        lower_to_ptx(_row_sum_text())
