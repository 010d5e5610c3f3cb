"""Tests for the launch half (tile_mlir.runtime, tile_mlir.arrays) that need no GPU.

Argument checking is tested against real CudaKernels with the driver replaced by one
that fails the test when touched (the ``no_driver`` fixture): a bad argument must raise
LaunchError before any driver call. The launch path itself runs against
``fakecuda.FakeDriver`` (the ``fake`` fixture), whose "device memory" is host memory and
whose kernels are Python functions reading the real ``kernelParams`` array, so packing,
copies, frees and module selection are checked without CUDA.
"""

import ctypes
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from fakecuda import CUBIN, PTX, SIGS, DeviceArray, DLPackArray, FakeDriver, TorchLike, fake_artifact, install, param
from tile_mlir import arrays, runtime
from tile_mlir.errors import ArtifactError, CudaBindingsMissing, CudaError, LaunchError
from tile_mlir.runtime import CudaKernel



# --- Kernels ---------------------------------------------------------------------------


def test_kernels_is_a_mapping_with_attributes(kernels):
    assert list(kernels) == ["add_one", "fill", "half", "add_into"]
    assert len(kernels) == 4
    assert kernels.add_one is kernels["add_one"]
    assert isinstance(kernels.fill, CudaKernel)
    assert kernels.fill.name == "fill" and kernels.fill.signature == SIGS[1]
    assert "add_one" in dir(kernels)
    assert repr(kernels.add_one) == "<CudaKernel add_one(float32[4], scalar int32)>"
    with pytest.raises(AttributeError, match="no kernel named 'nope'"):
        kernels.nope
    with pytest.raises(KeyError, match="no kernel named 'nope'"):
        kernels["nope"]


# --- argument checking: LaunchError, before any driver call ----------------------------

F4 = np.zeros(4, np.float32)

# The checks both backends make (shapes, dtypes, scalars, grid, block, shared_mem,
# stream) are in test_launch_args.py; these are the device arrays'.
BAD_CALLS = {
    "device array, wrong shape": ("add_one", (DeviceArray(np.zeros(3, np.float32)), 1), r"got shape \(3,\)"),
    "device array, wrong dtype": ("add_one", (DeviceArray(np.zeros(4, np.int32)), 1), "got dtype int32"),
    "device array, strided": (
        "add_one", (DeviceArray(np.zeros(4, np.float32), strides=(8,)), 1), "must be a C-contiguous device array"),
    "bf16 device array to f32": ("add_one", (DeviceArray(np.zeros(4, np.uint16), "<V2"), 1), "got dtype bfloat16"),
    "DLPack on another GPU": ("add_one", (DLPackArray(np.zeros(4, np.float32), (2, 1)), 1), "on CUDA device 1"),
    "DLPack, strided": ("add_one", (DLPackArray(np.zeros(8, np.float32)[::2]), 1), "C-contiguous device array"),
    "CPU DLPack tensor": ("add_one", (DLPackArray(np.zeros(4, np.float32), (1, 0)), 1), "got DLPackArray$"),
    "torch, wrong dtype": ("add_one", (TorchLike(np.zeros(4, np.uint16), "torch.bfloat16"), 1), "got dtype bfloat16"),
    "torch, not contiguous": ("add_one", (TorchLike(F4, contiguous=False), 1), "C-contiguous device array"),
    "device array for a scalar": ("add_one", (F4, DeviceArray(F4)), r"argument 1 is a scalar int32, got a float32\[4\] array$"),
}


@pytest.mark.parametrize("name, args, message", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_device_arrays_raise_launch_error_before_any_cuda_call(kernels, no_driver, name, args, message):
    with pytest.raises(LaunchError, match=message):
        kernels[name].launch(1, 1, *args)


def test_one_launch_convention(kernels, fake):
    """launch(grid, block, *args) is the only way in: a kernel is not callable."""
    assert not callable(kernels.add_one)
    with pytest.raises(TypeError, match="not callable"):
        kernels.add_one(F4.copy(), 1, grid=1, block=1)
    assert fake.calls == []


def test_launch_error_is_a_type_error():
    assert issubclass(LaunchError, TypeError)


@pytest.mark.parametrize("grid", [0, (1, 2, 3, 4), (), "8", (2.0,), None])
def test_bad_grid_or_block(kernels, no_driver, grid):
    with pytest.raises(LaunchError, match="grid must be"):
        kernels.add_one.launch(grid, 32, F4, 1)
    with pytest.raises(LaunchError, match="block must be"):
        kernels.add_one.launch(1, grid, F4, 1)


def test_a_cuda_array_interface_that_raises_is_a_launch_error(kernels, no_driver):
    class Broken:
        @property
        def __cuda_array_interface__(self):
            raise RuntimeError("requires grad")

    with pytest.raises(LaunchError, match="argument 0: its __cuda_array_interface__ failed: requires grad"):
        kernels.add_one.launch(1, 1, Broken(), 1)


def test_good_arguments_reach_the_driver(kernels, no_driver):
    with pytest.raises(AssertionError, match="driver was touched"):
        kernels.add_one.launch(1, 1, F4.copy(), 1)


@pytest.mark.parametrize(
    "value, dims",
    [(7, (7, 1, 1)), ((7,), (7, 1, 1)), ((2, 3), (2, 3, 1)), ([2, 3, 4], (2, 3, 4)), (np.int64(5), (5, 1, 1))],
)
def test_dim3(value, dims):
    assert arrays.dim3(value, "grid") == dims


class _TorchStream:
    cuda_stream = 11


class _CupyStream:
    ptr = 12


class _CoreStream:
    def __cuda_stream__(self):
        return (0, 13)


@pytest.mark.parametrize(
    "stream, handle", [(None, 0), (5, 5), (_TorchStream(), 11), (_CupyStream(), 12), (_CoreStream(), 13)]
)
def test_stream_handles(stream, handle):
    assert arrays.stream_handle(stream) == handle


def test_a_bad_stream_is_a_launch_error(kernels, no_driver):
    with pytest.raises(LaunchError, match="not a CUDA stream"):
        kernels.add_one.launch(1, 1, F4, 1, stream="default")


# --- no GPU here -----------------------------------------------------------------------


def test_gpu_available_is_a_bool_and_does_not_raise():
    assert isinstance(runtime.gpu_available(), bool)


@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has an NVIDIA driver")
def test_gpu_available_is_false_without_a_gpu():
    assert runtime.gpu_available() is False


def test_gpu_available_is_false_without_cuda_python(monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    runtime._driver.cache_clear()
    runtime.gpu_available.cache_clear()
    try:
        assert runtime.gpu_available() is False
        with pytest.raises(CudaBindingsMissing, match="needs cuda-python"):
            runtime._driver()
    finally:
        runtime._driver.cache_clear()
        runtime.gpu_available.cache_clear()


@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has an NVIDIA driver")
def test_launching_without_a_driver_is_a_cuda_error(kernels):
    pytest.importorskip("cuda.bindings")
    with pytest.raises(CudaError, match="^cuInit failed: "):
        kernels.add_one.launch(1, 1, F4.copy(), 1)


# --- CudaError -------------------------------------------------------------------------


def test_check_returns_the_outputs():
    ok = FakeDriver.CUresult.CUDA_SUCCESS
    assert runtime._check((ok,), "cuInit") is None
    assert runtime._check((ok, 5), "cuDeviceGet") == 5
    assert runtime._check((ok, 1, 2), "cuX") == (1, 2)


def test_cuda_error_names_the_call_and_the_error_with_a_driver(fake):
    with pytest.raises(CudaError) as info:
        runtime._check((FakeDriver.CUresult.CUDA_ERROR_INVALID_PTX, None), "cuModuleLoadData")
    assert str(info.value) == "cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX (fake description)"
    assert info.value.call == "cuModuleLoadData" and info.value.code == 218


def test_cuda_error_from_real_codes_without_a_driver():
    driver = pytest.importorskip("cuda.bindings.driver")
    with pytest.raises(CudaError, match=r"^cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX\b") as info:
        runtime._check((driver.CUresult.CUDA_ERROR_INVALID_PTX, None), "cuModuleLoadData")
    assert info.value.code == 218
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(CudaError, match="^cuLaunchKernel failed: CUresult 99999$"):
        runtime._check((99999,), "cuLaunchKernel")


# --- the launch path, on the fake driver -------------------------------------------------


def test_numpy_arrays_are_copied_in_and_back(kernels, fake):
    x = np.arange(4, dtype=np.float32)
    kernels.add_one.launch(2, (32, 2), x, 3)
    np.testing.assert_array_equal(x, [1, 2, 3, 3])
    assert fake.launches[0][:4] == ((2, 1, 1), (32, 2, 1), 0, 0)
    assert fake.memory == {} and len(fake.freed) == 1  # the device buffer was freed
    assert fake.calls.index("cuMemcpyHtoDAsync") < fake.calls.index("cuLaunchKernel")
    assert fake.calls.index("cuLaunchKernel") < fake.calls.index("cuMemcpyDtoHAsync")
    assert fake.calls.index("cuMemcpyDtoHAsync") < fake.calls.index("cuStreamSynchronize")


def test_a_flat_array_of_the_right_size_is_accepted(kernels, fake):
    out = np.zeros(4, np.float32)
    kernels.fill.launch(1, 1, out, 2.5)
    np.testing.assert_array_equal(out, [2.5] * 4)


def read_only(array):
    array.flags.writeable = False
    return array


def test_read_only_numpy_arrays_are_fine_as_inputs(kernels, fake):
    x = read_only(np.arange(4, dtype=np.float32))
    y = np.zeros(4, np.float32)
    kernels.add_into.launch(1, 1, x, y)
    np.testing.assert_array_equal(y, [1, 2, 3, 4])
    np.testing.assert_array_equal(x, [0, 1, 2, 3])
    assert fake.memory == {}


def test_a_read_only_numpy_array_the_kernel_writes_is_a_launch_error(kernels, fake):
    """The kernel's result would be lost: say so, rather than leave the array unwritten."""
    x = read_only(np.zeros(4, np.float32))
    with pytest.raises(
        LaunchError, match=r"kernel add_one: argument 0 is a read-only numpy array, but the kernel wrote to it; pass a writeable"
    ):
        kernels.add_one.launch(1, 1, x, 4)
    np.testing.assert_array_equal(x, 0)
    assert fake.memory == {}  # the device buffers were freed all the same
    kernels.add_one.launch(1, 1, x, 0)  # a launch that writes nothing to it is fine


@pytest.mark.parametrize(
    "before, after, written",
    [
        ([1.0, 2.0], [1.0, 2.0], False),
        ([1.0, np.nan], [1.0, np.nan], False),  # the same bits: NaN is no change
        ([0.0, 2.0], [-0.0, 2.0], True),  # equal values, other bits: written
        ([1.0, 2.0], [1.0, 2.5], True),
    ],
)
def test_check_unwritten_compares_bits(before, after, written):
    before, after = read_only(np.array(before, np.float32)), np.array(after, np.float32)
    if written:
        with pytest.raises(LaunchError, match="kernel k: argument 3 is a read-only numpy array"):
            arrays.check_unwritten("k", 3, before, after)
    else:
        arrays.check_unwritten("k", 3, before, after)


def test_device_arrays_are_passed_by_pointer(kernels, fake):
    host = np.zeros(4, np.float32)
    kernels.add_one.launch(1, 1, DeviceArray(host), 4)
    np.testing.assert_array_equal(host, 1)
    assert not {"cuMemAlloc", "cuMemcpyHtoDAsync", "cuStreamSynchronize"} & set(fake.calls)


def test_dlpack_arrays_are_read_through_the_capsule(kernels, fake):
    host = np.zeros(4, np.float32)
    arr = DLPackArray(host)
    kernels.add_one.launch(1, 1, arr, 2, stream=7)
    np.testing.assert_array_equal(host, [1, 1, 0, 0])
    assert arr.streams == [7]
    kernels.add_one.launch(1, 1, arr, 1)
    assert arr.streams[-1] == 1  # DLPack's spelling of the legacy default stream


def test_dlpack_byte_offset_and_dtype(fake):
    base = np.zeros(6, np.float32)
    view = arrays.device_view(DLPackArray(base[2:]), 0, "arg")
    assert view.pointer == base.ctypes.data + 8
    assert (view.dtype, view.shape, view.contiguous, view.device) == ("float32", (4,), True, 0)


def test_torch_like_tensors_and_bf16(kernels, fake):
    bits = np.zeros(4, np.uint16)
    for arg in (
        TorchLike(bits, "torch.bfloat16"),
        DeviceArray(bits, "<V2"),  # torch's __cuda_array_interface__ spelling of bfloat16
    ):
        kernels.half.launch(1, 1, arg, 1.0)
        params = fake.launches[-1][4]
        assert param(params, 0, ctypes.c_uint64) == bits.ctypes.data
        assert param(params, 1, ctypes.c_uint16) == 0x3F80
    kernels.half.launch(1, 1, np.zeros(4, np.uint16), -2.0)  # a host bf16 buffer holds the bits as uint16
    assert param(fake.launches[-1][4], 1, ctypes.c_uint16) == 0xC000


# A bf16 scalar argument: rounded once to nearest even (not through f32: the fifth), a
# NaN the quiet NaN with its sign. The interpreter packs the same bits
# (test_interpreter_nan_bits.py).
BF16_SCALARS = [(1.0, 0x3F80), (-2.0, 0xC000), (1.00390625, 0x3F80), (1.01171875, 0x3F82),
                (1 + 2**-8 + 2**-30, 0x3F81), (float("inf"), 0x7F80), (float("nan"), 0x7FC0),
                (-float("nan"), 0xFFC0), (3.4e38, 0x7F80), (-0.0, 0x8000), (2.0**-133, 0x0001), (3, 0x4040)]


@pytest.mark.parametrize("value, bits", BF16_SCALARS)
def test_a_bf16_scalar_is_packed_rounded_once(value, bits, kernels, fake):
    kernels.half.launch(1, 1, np.zeros(4, np.uint16), value)
    assert param(fake.launches[-1][4], 1, ctypes.c_uint16) == bits


def test_a_bf16_scalar_beyond_any_float_is_a_launch_error(kernels, fake):
    with pytest.raises(LaunchError, match="argument 1: int of 1329 bits does not fit a scalar bfloat16"):
        kernels.half.launch(1, 1, np.zeros(4, np.uint16), 10**400)


def test_kernel_params_are_packed_once_per_kernel(kernels, fake):
    a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
    kernels.add_one.launch(1, 1, DeviceArray(a), 4)
    kernels.add_one.launch(1, 1, DeviceArray(b), 2)
    (_, _, _, _, first), (_, _, _, _, second) = fake.launches
    assert first == second  # the same void** array, rewritten in place
    assert param(second, 0, ctypes.c_uint64) == b.ctypes.data
    np.testing.assert_array_equal(a, 1)
    np.testing.assert_array_equal(b, [1, 1, 0, 0])


def test_bind_packs_once_and_launches_on_each_call(kernels, fake):
    host = np.zeros(4, np.float32)
    launch = kernels.add_one.bind(3, 64, DeviceArray(host), 4, stream=9)
    assert "cuLaunchKernel" not in fake.calls
    launch()
    launch()
    np.testing.assert_array_equal(host, 2)
    assert fake.launches[0][:4] == ((3, 1, 1), (64, 1, 1), 0, 9)
    # a bound launch has its own parameters: an ordinary launch in between changes nothing
    kernels.add_one.launch(1, 1, DeviceArray(np.zeros(4, np.float32)), 4)
    launch()
    np.testing.assert_array_equal(host, 3)


def test_a_bound_carveout_is_set_for_each_launch_and_reset_after(kernels, fake):
    """bind(..., carveout=p): the function's preferred shared-memory carveout is p for the
    bound launches only; other launches, before and after, keep the driver's default."""
    host = np.zeros(4, np.float32)
    capped = kernels.add_one.bind(2, 64, DeviceArray(host), 4, shared_mem=19456, carveout=43)
    kernels.add_one.launch(1, 1, DeviceArray(host), 4)
    capped()
    kernels.add_one.launch(1, 1, DeviceArray(host), 4)
    capped()
    assert fake.carveouts == [-1, 43, -1, 43]
    assert fake.launches[1][:3] == ((2, 1, 1), (64, 1, 1), 19456)
    assert fake.function_attributes[("add_one", "carveout")] == -1
    np.testing.assert_array_equal(host, 4)


def test_a_bound_carveout_holds_the_kernels_lock(kernels, fake):
    """The set, the launch and the reset under the lock that ``launch`` takes too: an
    ordinary launch from another thread waits, and cannot run with the carveout set."""
    k, host = kernels.add_one, np.zeros(4, np.float32)
    capped = k.bind(1, 32, DeviceArray(host), 4, shared_mem=1024, carveout=43)
    with k._lock:
        done = threading.Event()
        threading.Thread(target=lambda: (capped(), done.set())).start()
        assert not done.wait(0.2)  # the bound launch waits for the lock
        assert fake.carveouts == []
    assert done.wait(5) and fake.carveouts == [43]


def test_max_active_blocks_with_shared_memory_and_a_carveout(kernels, fake):
    """The occupancy query takes the dynamic shared memory and the carveout (set for the
    query only): what a bound launch with both gets."""
    k = kernels["add_one"]
    assert k.max_active_blocks(256, 19456, carveout=43) == 4  # 43% of 228 KB holds 4 CTAs of 20 KB
    assert k.max_active_blocks(256, 19456) == 8 and fake.carveouts == [43, -1]


@pytest.mark.parametrize("carveout", [101, -1, 2.5, True, "43"])
def test_a_carveout_is_a_percentage(kernels, no_driver, carveout):
    """Checked before any driver call, by the same code for both backends."""
    with pytest.raises(LaunchError, match=f"kernel add_one: carveout must be a percentage, an int from 0 to 100, "
                                          f"got {re.escape(repr(carveout))}"):
        kernels.add_one.bind(1, 1, DeviceArray(np.zeros(4, np.float32)), 4, carveout=carveout)
    with pytest.raises(LaunchError, match="carveout must be a percentage"):
        kernels.add_one.max_active_blocks(32, carveout=carveout)


def test_bind_refuses_numpy_arrays(kernels, fake):
    with pytest.raises(LaunchError, match="bind\\(\\) takes device arrays and scalars; argument 0"):
        kernels.add_one.bind(1, 1, np.zeros(4, np.float32), 4)


def test_a_bound_launch_that_fails_raises_cuda_error(kernels, fake):
    launch = kernels.add_one.bind(1, 1, DeviceArray(np.zeros(4, np.float32)), 4)
    fake.fail["cuLaunchKernel"] = FakeDriver.CUresult.CUDA_ERROR_LAUNCH_FAILED
    with pytest.raises(CudaError, match="^cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED"):
        launch()


def test_a_failed_launch_frees_its_buffers(kernels, fake):
    fake.fail["cuLaunchKernel"] = FakeDriver.CUresult.CUDA_ERROR_LAUNCH_FAILED
    with pytest.raises(CudaError, match="cuLaunchKernel failed"):
        kernels.add_one.launch(1, 1, np.zeros(4, np.float32), 4)
    assert fake.memory == {}


def test_the_context_is_set_once_per_thread_and_the_module_loaded_once(kernels, fake):
    kernels.add_one.launch(1, 1, DeviceArray(np.zeros(4, np.float32)), 4)
    kernels.fill.launch(1, 1, DeviceArray(np.zeros(4, np.float32)), 1.0)
    worker = threading.Thread(target=kernels.fill.launch, args=(1, 1, DeviceArray(np.zeros(4, np.float32)), 1.0))
    worker.start()
    worker.join()
    assert fake.calls.count("cuDevicePrimaryCtxRetain") == 1
    assert fake.calls.count("cuCtxSetCurrent") == 2  # this thread and the worker
    assert fake.images == [CUBIN]  # one module for the artifact, from its cubin


@pytest.mark.parametrize(
    "chip, capability, fits",
    [
        ("sm_90a", (9, 0), True),
        ("sm_90a", (10, 0), False),
        ("sm_90", (9, 0), True),
        ("sm_80", (8, 6), True),
        ("sm_86", (8, 0), False),
        ("sm_80", (9, 0), False),
        ("sm_100a", (10, 0), True),
        ("sm_100f", (10, 3), True),
        ("compute_90", (9, 0), False),
    ],
)
def test_cubin_fits(chip, capability, fits):
    assert runtime._cubin_fits(chip, capability) is fits


def test_a_cubin_for_another_chip_falls_back_to_ptx(monkeypatch):
    driver = FakeDriver(capability=(10, 0))
    install(monkeypatch, driver)
    runtime.cuda_kernels(fake_artifact()).add_one.launch(1, 1, DeviceArray(np.zeros(4, np.float32)), 1)
    assert driver.images == [PTX.encode() + b"\0"]  # NUL-terminated for the JIT


def test_no_fitting_cubin_and_no_ptx():
    with pytest.raises(ArtifactError, match="cubin is for sm_90a, this GPU is sm_100, and it has no PTX"):
        runtime._module_image(fake_artifact(ptx=""), (10, 0))
    assert runtime._module_image(fake_artifact(chip=""), (10, 0)) == CUBIN  # unknown chip: tried as is


def test_max_active_blocks_asks_the_driver_and_says_none_without_a_figure(kernels, fake):
    """CudaKernel.max_active_blocks: the CTAs of a block size an SM holds at once, as the
    driver's occupancy query says; None where the query fails (no GPU, an old driver)."""
    k = kernels["add_one"]
    assert k.max_active_blocks(256) == 8 and k.max_active_blocks(1024) == 2
    assert "cuOccupancyMaxActiveBlocksPerMultiprocessor" in fake.calls
    fake.fail["cuOccupancyMaxActiveBlocksPerMultiprocessor"] = 1
    assert k.max_active_blocks(256) is None
