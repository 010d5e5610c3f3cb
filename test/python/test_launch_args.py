"""One launch API for both backends (issue 16 item 7): an interpreted kernel's ``launch``
and ``bind`` take the CUDA kernel's arguments (``shared_mem``, ``stream``) and make the
same checks with the same errors (``arrays.check_launch`` and ``arrays.argument``, used
by both), and no error message shows an argument's data: a summary (type, shape, dtype)
stands for it.

The CUDA kernels are fakecuda's (the driver is never touched: every call here is
refused before it); the interpreted ones run the same signatures on the CPU.
"""

import numpy as np
import pytest
from fakecuda import SIGS, DeviceArray, DLPackArray, TorchLike, fake_artifact
from tile_mlir import arrays, runtime
from tile_mlir.errors import LaunchError
from tile_mlir.interpreter import interpreted_kernels

# The fake artifact's kernels as MLIR, for the interpreter: add_one(x, n) adds 1 to
# x[:n], fill(y, v) sets y to v, half(h, s) stores s in h[0], add_into(x, y): y = x + 1.
MODULE = """
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @add_one(%X: memref<4xf32>, %n: i32) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %one = arith.constant 1.0 : f32
      %t = gpu.thread_id x
      %end = arith.index_cast %n : i32 to index
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        scf.for %i = %c0 to %end step %c1 {
          %x = memref.load %X[%i] : memref<4xf32>
          %y = arith.addf %x, %one : f32
          memref.store %y, %X[%i] : memref<4xf32>
        }
      }
      gpu.return
    }
    gpu.func @fill(%Y: memref<2x2xf32>, %v: f32) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      memref.store %v, %Y[%c0, %c0] : memref<2x2xf32>
      memref.store %v, %Y[%c0, %c1] : memref<2x2xf32>
      memref.store %v, %Y[%c1, %c0] : memref<2x2xf32>
      memref.store %v, %Y[%c1, %c1] : memref<2x2xf32>
      gpu.return
    }
    gpu.func @half(%H: memref<4xbf16>, %s: bf16) kernel {
      %c0 = arith.constant 0 : index
      memref.store %s, %H[%c0] : memref<4xbf16>
      gpu.return
    }
    gpu.func @add_into(%X: memref<4xf32>, %Y: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      %v = vector.load %X[%c0] : memref<4xf32>, vector<4xf32>
      %b = vector.broadcast %one : f32 to vector<4xf32>
      %w = arith.addf %v, %b : vector<4xf32>
      vector.store %w, %Y[%c0] : memref<4xf32>, vector<4xf32>
      gpu.return
    }
  }
}
"""


@pytest.fixture(scope="module")
def interpreted():
    return runtime.Kernels(interpreted_kernels(MODULE, SIGS))


@pytest.fixture
def rng():
    return np.random.default_rng(20261203)


F4 = np.arange(1, 5, dtype=np.float32)
BIG = [0.5] * 200_000  # its repr alone is a megabyte

# (kernel, args, keywords, the message); each of them raises LaunchError on both backends.
BAD_CALLS = {
    "too few args": ("add_one", (F4,), {}, r"add_one\(float32\[4\], scalar int32\) takes 2 argument\(s\), got 1"),
    "too many args": ("add_one", (F4, 1, 2), {}, r"takes 2 argument\(s\), got 3"),
    "wrong shape": ("add_one", (np.ones(5, np.float32), 1), {}, r"argument 0 must be float32\[4\], got shape \(5,\)"),
    "wrong 2-d shape": ("fill", (np.ones((4, 1), np.float32), 1.0), {}, r"float32\[2, 2\], got shape \(4, 1\)"),
    "wrong dtype": ("add_one", (np.ones(4, np.float64), 1), {}, r"must be float32\[4\], got dtype float64"),
    "scalar for an array": ("add_one", (3.0, 1), {}, r"argument 0 is a float32\[4\] buffer, got float 3.0$"),
    "array for a scalar": ("add_one", (F4, F4), {}, r"argument 1 is a scalar int32, got a float32\[4\] array$"),
    "float for an int": ("add_one", (F4, 1.5), {}, r"argument 1 is a scalar int32, got float 1.5$"),
    "int out of range": ("add_one", (F4, 2**31), {}, r"argument 1: int 2147483648 does not fit a scalar int32$"),
    "int beyond any float": ("fill", (F4, 10**400), {}, r"argument 1: int of 1329 bits does not fit a scalar float32$"),
    "int beyond str()": ("add_one", (F4, 10**5000), {}, r"argument 1: int of 16610 bits does not fit a scalar int32$"),
    "list for an array": ("add_one", (BIG, 1), {},
                          r"argument 0 must be float32\[4\]: a numpy array or a CUDA array .* got list of 200000 items$"),
    "list for a scalar": ("add_one", (F4, BIG), {}, r"argument 1 is a scalar int32, got list of 200000 items$"),
    "object for a scalar": ("add_one", (F4, object()), {}, r"argument 1 is a scalar int32, got object$"),
    "str for a bool scalar's kin": ("fill", (F4, "1.0"), {}, r"argument 1 is a scalar float32, got str of 3 characters$"),
    "bad grid": ("add_one", (F4, 1), {"grid": BIG}, r"grid must be a positive int or a tuple of 1 to 3, got list of 200000"),
    "bad block": ("add_one", (F4, 1), {"block": (0,)}, r"block must be a positive int or a tuple of 1 to 3, got tuple"),
    "too many threads": ("add_one", (F4, 1), {"block": (32, 33)}, r"block \(32, 33, 1\) has 1056 threads, over 1024"),
    "bad shared_mem": ("add_one", (F4, 1), {"shared_mem": BIG}, r"shared_mem must be a non-negative int .*got list of 200000"),
    "negative shared_mem": ("add_one", (F4, 1), {"shared_mem": -1}, r"shared_mem must be a non-negative int .*got int -1$"),
    "bad stream": ("add_one", (F4, 1), {"stream": BIG}, r"not a CUDA stream: list of 200000 items$"),
}


def call(kernel, how, args, keywords):
    keywords = dict(keywords)
    grid, block = keywords.pop("grid", 1), keywords.pop("block", 1)
    if how == "launch":
        return kernel.launch(grid, block, *args, **keywords)
    return kernel.bind(grid, block, *args, **keywords)


@pytest.mark.parametrize("how", ["launch", "bind"])
@pytest.mark.parametrize("name, args, keywords, message", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_both_backends_refuse_a_bad_call_with_the_same_short_error(interpreted, no_driver, how, name, args,
                                                                    keywords, message):
    errors = []
    for kernels in (runtime.cuda_kernels(fake_artifact()), interpreted):
        with pytest.raises(LaunchError, match=message) as info:
            call(kernels[name], how, args, keywords)
        errors.append(str(info.value))
        assert len(errors[-1]) < 400, errors[-1][:400]
    assert errors[0] == errors[1]


def test_an_interpreted_kernel_launches_as_a_cuda_kernel_does(interpreted, rng):
    x = rng.uniform(0.5, 2, 4).astype(np.float32)
    y = x.copy()
    interpreted.add_one.launch(1, 32, y, 3, shared_mem=0, stream=None)
    np.testing.assert_array_equal(y, x + np.array([1, 1, 1, 0], np.float32))
    interpreted.add_one.launch((1, 1), (32, 1, 1), y, np.int32(4), shared_mem=np.int64(128), stream=7)
    np.testing.assert_array_equal(y, x + np.array([2, 2, 2, 1], np.float32))


def test_an_interpreted_kernel_binds(interpreted, rng):
    x = rng.uniform(0.5, 2, 4).astype(np.float32)
    y = x.copy()
    bound = interpreted.add_one.bind(1, 32, y, 2, stream=3)
    np.testing.assert_array_equal(y, x)  # nothing ran yet
    bound()
    bound()
    np.testing.assert_array_equal(y, x + np.array([2, 2, 0, 0], np.float32))
    assert bound.kernel is interpreted.add_one and bound.args[0] is y


def test_the_interpreter_refuses_device_arrays_by_name(interpreted, no_driver):
    for device in (DeviceArray(F4.copy()), DLPackArray(F4.copy()), TorchLike(F4.copy())):
        with pytest.raises(LaunchError, match=r"kernel add_one: argument 0 is a CUDA array \((\w+\.)?\w+ float32\[4\]\), but "
                                              r"the interpreter runs on the CPU: pass a numpy array"):
            interpreted.add_one.launch(1, 32, device, 1)


def test_both_backends_take_any_numpy_layout(interpreted, fake, rng):
    """A numpy array is copied (CUDA) or read in place (interpreter): a non-contiguous
    one is fine for both, and gets its result back."""
    x = rng.uniform(0.5, 2, 8).astype(np.float32)
    for kernels in (runtime.cuda_kernels(fake_artifact()), interpreted):
        y = x.copy()
        kernels.add_one.launch(1, 32, y[::2], 4)
        np.testing.assert_array_equal(y[::2], x[::2] + 1)
        np.testing.assert_array_equal(y[1::2], x[1::2])
        out = np.zeros((2, 2), np.float32, order="F")
        kernels.fill.launch(1, 32, out, 2.5)
        np.testing.assert_array_equal(out, np.full((2, 2), 2.5, np.float32))
        z = np.zeros(4, np.float32)
        kernels.add_into.launch(1, 32, np.broadcast_to(np.float32(1.5), (4,)), z)  # read-only, an input
        np.testing.assert_array_equal(z, 2.5)


@pytest.mark.parametrize(
    "value, text",
    [
        (np.zeros((3, 4), np.float32), "ndarray float32[3, 4]"),
        (TorchLike(np.zeros((2, 3), np.float32), "torch.float16"), "TorchLike torch.float16[2, 3]"),
        ([1, 2, 3], "list of 3 items"),
        ((1,), "tuple of 1 item"),
        ({"a": 1}, "dict of 1 item"),
        ("x" * 10_000, "str of 10000 characters"),
        (1.5, "float 1.5"),
        (np.float32(2.0), "float32 2.0"),
        (10**100, "int of 333 bits"),
        (True, "bool True"),
        (None, "NoneType"),
        (object(), "object"),
    ],
)
def test_summary_names_the_kind_never_the_data(value, text):
    assert arrays.summary(value) == text
