"""Misaligned pointers: the alignment a kernel's code assumes of each memref argument is
recorded in its signature (``tile_mlir.alignment``) and checked at every launch and
bind, on the GPU (device arrays, through the fake driver) and in the interpreter (the
numpy arrays it runs on in place). Issue 15 item 8: a torch view 4 bytes past a 16-byte
boundary made tile.copy's 16-byte vector loads fault and poisoned the CUDA context.
"""

import json

import numpy as np
import pytest
import tile_mlir
from fakecuda import DeviceArray, DLPackArray, TorchLike, fake_artifact
from tile_mlir import runtime
from tile_mlir.compiler import lower_tile_ops, lower_to_ptx
from tile_mlir.errors import LaunchError
from tile_mlir.signature import ArgSpec, KernelSignature

# X and Y are copied with 16-byte vector accesses (tile.copy); Z only by memref.store.
TEXT = """
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @twice(%X: memref<32x8xf32>, %Y: memref<32x8xf32>, %Z: memref<32xf32> ZATTR) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %r = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%r, %X, %c0, %c0) {exec_scope = "warp", layout = #tile.layout<"S[(32, 8) : (1@laneid, 1)]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<32x8xf32>, index, index) -> ()
      "tile.copy"(%Y, %r, %c0, %c0) {exec_scope = "warp", layout = #tile.layout<"S[(32, 8) : (1@laneid, 1)]">}
        : (memref<32x8xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
      %v = memref.load %r[%c0] : memref<8xf32, #gpu.address_space<private>>
      memref.store %v, %Z[%t] : memref<32xf32>
      gpu.return
    }
  }
}
"""


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def misaligned(array: np.ndarray, by: int) -> np.ndarray:
    """A copy of ``array`` whose data starts ``by`` bytes past a 64-byte boundary."""
    raw = np.empty(array.nbytes + 64 + by, np.uint8)
    start = (-raw.ctypes.data) % 64 + by
    out = raw[start : start + array.nbytes].view(array.dtype).reshape(array.shape)
    out[...] = array
    return out


# --- what the signature records ------------------------------------------------------


def test_the_signature_records_what_the_lowered_code_assumes():
    _, (sig,) = lower_tile_ops(TEXT.replace("ZATTR", ""))
    assert [a.align for a in sig.args] == [16, 16, 4]  # vector accesses, vector accesses, f32 stores
    _, (sig,) = lower_tile_ops(TEXT.replace("ZATTR", "{llvm.align = 32 : i64}"))
    assert [a.align for a in sig.args] == [16, 16, 32]  # a declared alignment is a promise the code may use


def test_the_cuda_compile_records_the_same():
    (sig,) = lower_to_ptx(TEXT.replace("ZATTR", "")).signatures
    assert [a.align for a in sig.args] == [16, 16, 4]


def test_signatures_keep_alignments_through_json_and_old_ones_load():
    sig = KernelSignature("k", (ArgSpec("memref", "float32", (4,), 4), ArgSpec("scalar", "int32")))
    assert KernelSignature.from_json(sig.to_json()) == sig
    assert json.loads(sig.to_json())["args"] == [["memref", "float32", [4], 4], ["scalar", "int32", []]]
    # written before alignments were recorded: what tile.copy assumed of every global memref
    old = KernelSignature.from_json('{"name": "k", "args": [["memref", "float32", [4]], ["scalar", "int32", []]]}')
    assert [a.align for a in old.args] == [16, 1]


# --- on the GPU (the fake driver) ----------------------------------------------------------


def offsets(host, by):
    """Device arrays through each protocol, ``by`` bytes past a 16-byte boundary."""
    view = misaligned(host, by)
    return {"cuda_array_interface": DeviceArray(view), "dlpack": DLPackArray(view), "torch": TorchLike(view)}


@pytest.mark.parametrize("protocol", ["cuda_array_interface", "dlpack", "torch"])
@pytest.mark.parametrize("by", [4, 8, 12])
def test_a_misaligned_device_array_is_a_launch_error_before_any_cuda_call(kernels, no_driver, rng, protocol, by):
    arg = offsets(rng.standard_normal(4).astype(np.float32), by)[protocol]
    message = (rf"kernel add_one: argument 0 \(float32\[4\]\) is misaligned: its address 0x[0-9a-f]+ % 16 = {by}, "
               r"but the kernel's compiled code needs 16-byte alignment")
    with pytest.raises(LaunchError, match=message):
        kernels.add_one.launch(1, 1, arg, 1)
    with pytest.raises(LaunchError, match=message):
        kernels.add_one.bind(1, 1, arg, 1)


def test_an_aligned_view_and_a_kernel_that_needs_less_launch(monkeypatch, fake, rng):
    x = rng.standard_normal(4).astype(np.float32)
    view = misaligned(x, 16)  # a view, but on a 16-byte boundary
    runtime.cuda_kernels(fake_artifact()).add_one.launch(1, 1, DeviceArray(view), 4)
    np.testing.assert_array_equal(view, x + 1)
    needs4 = KernelSignature("add_one", (ArgSpec("memref", "float32", (4,), 4), ArgSpec("scalar", "int32")))
    kernel = runtime.cuda_kernels(fake_artifact(signatures=(needs4,))).add_one
    view = misaligned(x, 4)
    kernel.launch(1, 1, DeviceArray(view), 4)
    kernel.bind(1, 1, TorchLike(view), 4)()
    np.testing.assert_array_equal(view, x + 2)


def test_numpy_arrays_are_copied_to_aligned_buffers(kernels, fake, rng):
    """A numpy view goes to a fresh device buffer: its own address does not matter."""
    x = rng.standard_normal(4).astype(np.float32)
    view = misaligned(x, 4)
    kernels.add_one.launch(1, 1, view, 4)
    np.testing.assert_array_equal(view, x + 1)


# --- in the interpreter ---------------------------------------------------------------


def test_the_interpreter_checks_the_arrays_it_runs_on(rng):
    kernel = tile_mlir.compile(TEXT.replace("ZATTR", ""), backend="interpreter").twice
    x = rng.standard_normal((32, 8)).astype(np.float32)
    for by in (4, 8, 12):
        with pytest.raises(LaunchError, match=rf"argument 0 \(float32\[32, 8\]\) is misaligned: its address "
                                              rf"0x[0-9a-f]+ % 16 = {by}, but .* needs 16-byte alignment"):
            kernel.launch(1, 32, misaligned(x, by), np.zeros((32, 8), np.float32), np.zeros(32, np.float32))
    with pytest.raises(LaunchError, match=r"argument 1 \(float32\[32, 8\]\) is misaligned: .* % 16 = 4"):
        kernel.launch(1, 32, x, misaligned(x, 4), np.zeros(32, np.float32))
    # Z needs only its element's alignment; a numpy view a[1:] of a float32 array is 4 bytes off
    y, z = np.zeros((32, 8), np.float32), np.zeros(33, np.float32)
    kernel.launch(1, 32, misaligned(x, 16), y, z[1:])
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(z[1:], x[:, 0])
