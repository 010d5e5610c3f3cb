"""Tests for tile_mlir.runtime that need no GPU.

Argument checking is tested against real CudaKernels with the driver replaced by one
that fails the test when touched: a bad argument must raise LaunchError before any
driver call. The launch path itself runs against ``FakeDriver``, whose "device memory"
is host memory and whose kernels are Python functions reading the real ``kernelParams``
array, so packing, copies, frees and module selection are checked without CUDA.
"""

import ctypes
import enum
import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import numpy as np
import pytest

from tile_mlir import runtime
from tile_mlir.cache import Artifact, ArtifactError
from tile_mlir.runtime import CudaError, CudaKernel, Kernels, LaunchError
from tile_mlir.signature import ArgSpec, KernelSignature

PYTHON_DIR = Path(__file__).resolve().parents[2] / "python"

SIGS = (
    KernelSignature("add_one", (ArgSpec("memref", "float32", (4,)), ArgSpec("scalar", "int32"))),
    KernelSignature("fill", (ArgSpec("memref", "float32", (2, 2)), ArgSpec("scalar", "float32"))),
    KernelSignature("half", (ArgSpec("memref", "bfloat16", (4,)), ArgSpec("scalar", "bfloat16"))),
)
CUBIN = b"\x7fELF fake cubin\x00"  # NUL-terminated so the fake driver can read it back
PTX = ".version 8.0\n.target sm_90a\n// fake\n"


def fake_artifact(cubin=CUBIN, arch="sm_90a", ptx=PTX):
    return Artifact(ptx=ptx, cubin=cubin, signatures=SIGS, arch=arch)


@pytest.fixture
def kernels():
    return runtime.cuda_kernels(fake_artifact())


def param(params_address, i, ctype):
    """Read argument ``i`` of a kernelParams array (``void**``) as ``ctype``."""
    slot = ctypes.c_uint64.from_address(params_address + 8 * i).value
    return ctype.from_address(slot).value


def floats_at(pointer, n):
    return np.ctypeslib.as_array((ctypes.c_float * n).from_address(pointer))


class FakeDriver:
    """The cuda.bindings.driver calls the runtime makes, on host memory."""

    class CUresult(enum.IntEnum):
        CUDA_SUCCESS = 0
        CUDA_ERROR_INVALID_PTX = 218
        CUDA_ERROR_LAUNCH_FAILED = 719

    CUdevice_attribute = types.SimpleNamespace(
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR="major",
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR="minor",
    )
    CUstream = int

    def __init__(self, capability=(9, 0)):
        self.capability = dict(zip(("major", "minor"), capability))
        self.calls = []
        self.fail = {}  # call name -> CUresult to return
        self.images = []
        self.launches = []
        self.memory = {}
        self.freed = []
        self.kernels = {"add_one": self.add_one, "fill": self.fill, "half": lambda p: None}

    def _result(self, name, *outputs):
        self.calls.append(name)
        return (self.CUresult(self.fail.get(name, 0)), *outputs)

    # Kernels: they read their arguments through kernelParams, as the GPU would.
    def add_one(self, params):
        n = param(params, 1, ctypes.c_int32)
        floats_at(param(params, 0, ctypes.c_uint64), 4)[:n] += 1

    def fill(self, params):
        floats_at(param(params, 0, ctypes.c_uint64), 4)[:] = param(params, 1, ctypes.c_float)

    def cuInit(self, flags):
        return self._result("cuInit")

    def cuDeviceGet(self, ordinal):
        return self._result("cuDeviceGet", "device0")

    def cuDevicePrimaryCtxRetain(self, device):
        return self._result("cuDevicePrimaryCtxRetain", "context0")

    def cuDeviceGetAttribute(self, attribute, device):
        return self._result("cuDeviceGetAttribute", self.capability[attribute])

    def cuCtxSetCurrent(self, context):
        return self._result("cuCtxSetCurrent")

    def cuModuleLoadData(self, address):
        self.images.append(ctypes.string_at(address) + b"\0")  # up to its terminating NUL
        return self._result("cuModuleLoadData", "module0")

    def cuModuleGetFunction(self, module, name):
        return self._result("cuModuleGetFunction", name.decode())

    def cuModuleUnload(self, module):
        return self._result("cuModuleUnload")

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.launches.append(((gx, gy, gz), (bx, by, bz), shared, stream, params))
        result = self._result("cuLaunchKernel")
        if not result[0]:
            self.kernels[f](params)
        return result

    def cuMemAlloc(self, nbytes):
        buffer = ctypes.create_string_buffer(nbytes)
        self.memory[ctypes.addressof(buffer)] = buffer
        return self._result("cuMemAlloc", ctypes.addressof(buffer))

    def cuMemFree(self, pointer):
        self.freed.append(pointer)
        del self.memory[pointer]
        return self._result("cuMemFree")

    def cuMemcpyHtoDAsync(self, dst, src, nbytes, stream):
        ctypes.memmove(dst, src, nbytes)
        return self._result("cuMemcpyHtoDAsync")

    def cuMemcpyDtoHAsync(self, dst, src, nbytes, stream):
        ctypes.memmove(dst, src, nbytes)
        return self._result("cuMemcpyDtoHAsync")

    def cuStreamSynchronize(self, stream):
        return self._result("cuStreamSynchronize")

    def cuGetErrorString(self, code):
        return self._result("cuGetErrorString", b"fake description")


def _install(monkeypatch, driver):
    monkeypatch.setattr(runtime, "_driver", lambda: driver)
    monkeypatch.setattr(runtime, "_device_state", None)
    monkeypatch.setattr(runtime, "_thread", threading.local())


@pytest.fixture
def fake(monkeypatch):
    driver = FakeDriver()
    _install(monkeypatch, driver)
    return driver


@pytest.fixture
def no_driver(monkeypatch):
    """Fail the test if anything touches the CUDA driver."""

    def touched():
        raise AssertionError("the CUDA driver was touched")

    monkeypatch.setattr(runtime, "_driver", touched)


class DeviceArray:
    """A device array through ``__cuda_array_interface__`` (its memory is host memory)."""

    def __init__(self, host, typestr=None, strides=None):
        self.host = host
        self.__cuda_array_interface__ = {
            "shape": host.shape,
            "typestr": typestr or host.dtype.str,
            "data": (host.ctypes.data, False),
            "strides": strides,
            "version": 3,
        }


class DLPackArray:
    """A device array through DLPack only, backed by a numpy array's DLPack capsule."""

    def __init__(self, host, device=(2, 0)):
        self.host, self.device, self.streams = host, device, []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.host.__dlpack__()


class TorchLike:
    """What runtime reads from a torch CUDA tensor (recognized by its type's module)."""

    is_cuda = True

    def __init__(self, host, dtype="torch.float32", contiguous=True, index=0):
        self.host, self.dtype, self.shape = host, dtype, host.shape
        self.device = types.SimpleNamespace(index=index)
        self._contiguous = contiguous

    def data_ptr(self):
        return self.host.ctypes.data

    def is_contiguous(self):
        return self._contiguous


TorchLike.__module__ = "torch"


# --- Kernels ---------------------------------------------------------------------------


def test_kernels_is_a_mapping_with_attributes(kernels):
    assert list(kernels) == ["add_one", "fill", "half"]
    assert len(kernels) == 3
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

BAD_CALLS = {
    "too few args": ("add_one", (F4,), r"add_one\(float32\[4\], scalar int32\) takes 2 argument\(s\), got 1"),
    "too many args": ("add_one", (F4, 1, 2), r"takes 2 argument\(s\), got 3"),
    "wrong shape": ("add_one", (np.zeros(5, np.float32), 1), r"argument 0 must be float32\[4\], got shape \(5,\)"),
    "wrong 2-d shape": ("fill", (np.zeros((4, 1), np.float32), 1.0), r"must be float32\[2, 2\], got shape \(4, 1\)"),
    "wrong dtype": ("add_one", (np.zeros(4, np.float64), 1), "must be float32\\[4\\], got dtype float64"),
    "scalar for an array": ("add_one", (3.0, 1), r"argument 0 is a float32\[4\] buffer, got float 3.0"),
    "array for a scalar": ("add_one", (F4, F4), "argument 1 is a scalar int32, got an array"),
    "float for an int": ("add_one", (F4, 1.5), "argument 1 is a scalar int32, got float"),
    "int out of range": ("add_one", (F4, 2**31), "argument 1: 2147483648 does not fit a scalar int32"),
    "list for an array": ("add_one", ([0.0] * 4, 1), r"argument 0 must be float32\[4\]: a numpy array or a CUDA array .* got list"),
    "object for a scalar": ("add_one", (F4, object()), "argument 1 is a scalar int32, got object"),
    "not contiguous": ("add_one", (np.zeros(8, np.float32)[::2], 1), "argument 0 must be C-contiguous"),
    "device array, wrong shape": ("add_one", (DeviceArray(np.zeros(3, np.float32)), 1), r"got shape \(3,\)"),
    "device array, wrong dtype": ("add_one", (DeviceArray(np.zeros(4, np.int32)), 1), "got dtype int32"),
    "device array, strided": (
        "add_one", (DeviceArray(np.zeros(4, np.float32), strides=(8,)), 1), "must be a C-contiguous device array"),
    "bf16 device array to f32": ("add_one", (DeviceArray(np.zeros(4, np.uint16), "<V2"), 1), "got dtype bfloat16"),
    "DLPack on another GPU": ("add_one", (DLPackArray(np.zeros(4, np.float32), (2, 1)), 1), "on CUDA device 1"),
    "DLPack, strided": ("add_one", (DLPackArray(np.zeros(8, np.float32)[::2]), 1), "C-contiguous device array"),
    "CPU DLPack tensor": ("add_one", (DLPackArray(np.zeros(4, np.float32), (1, 0)), 1), "got DLPackArray"),
    "torch, wrong dtype": ("add_one", (TorchLike(np.zeros(4, np.uint16), "torch.bfloat16"), 1), "got dtype bfloat16"),
    "torch, not contiguous": ("add_one", (TorchLike(F4, contiguous=False), 1), "C-contiguous device array"),
}


@pytest.mark.parametrize("name, args, message", BAD_CALLS.values(), ids=BAD_CALLS.keys())
def test_bad_arguments_raise_launch_error_before_any_cuda_call(kernels, no_driver, name, args, message):
    with pytest.raises(LaunchError, match=message):
        kernels[name](*args)


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
        kernels.add_one(Broken(), 1)


def test_good_arguments_reach_the_driver(kernels, no_driver):
    with pytest.raises(AssertionError, match="driver was touched"):
        kernels.add_one(F4.copy(), 1)


@pytest.mark.parametrize(
    "value, dims",
    [(7, (7, 1, 1)), ((7,), (7, 1, 1)), ((2, 3), (2, 3, 1)), ([2, 3, 4], (2, 3, 4)), (np.int64(5), (5, 1, 1))],
)
def test_dim3(value, dims):
    assert runtime._dim3(value, "grid") == dims


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
    assert runtime._stream_handle(stream) == handle


def test_a_bad_stream_is_a_launch_error(kernels, no_driver):
    with pytest.raises(LaunchError, match="not a CUDA stream"):
        kernels.add_one(F4, 1, stream="default")


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
        with pytest.raises(ImportError, match="needs cuda-python"):
            runtime._driver()
    finally:
        runtime._driver.cache_clear()
        runtime.gpu_available.cache_clear()


@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has an NVIDIA driver")
def test_launching_without_a_driver_is_a_cuda_error(kernels):
    pytest.importorskip("cuda.bindings")
    with pytest.raises(CudaError, match="^cuInit failed: "):
        kernels.add_one(F4.copy(), 1)


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
    kernels.add_one(x, 3, grid=2, block=(32, 2))
    np.testing.assert_array_equal(x, [1, 2, 3, 3])
    assert fake.launches[0][:4] == ((2, 1, 1), (32, 2, 1), 0, 0)
    assert fake.memory == {} and len(fake.freed) == 1  # the device buffer was freed
    assert fake.calls.index("cuMemcpyHtoDAsync") < fake.calls.index("cuLaunchKernel")
    assert fake.calls.index("cuLaunchKernel") < fake.calls.index("cuMemcpyDtoHAsync")
    assert fake.calls.index("cuMemcpyDtoHAsync") < fake.calls.index("cuStreamSynchronize")


def test_a_flat_array_of_the_right_size_is_accepted(kernels, fake):
    out = np.zeros(4, np.float32)
    kernels.fill(out, 2.5)
    np.testing.assert_array_equal(out, [2.5] * 4)


def test_read_only_numpy_arrays_are_inputs_only(kernels, fake):
    x = np.zeros(4, np.float32)
    x.flags.writeable = False
    kernels.add_one(x, 4)
    assert "cuMemcpyDtoHAsync" not in fake.calls
    np.testing.assert_array_equal(x, 0)


def test_device_arrays_are_passed_by_pointer(kernels, fake):
    host = np.zeros(4, np.float32)
    kernels.add_one(DeviceArray(host), 4)
    np.testing.assert_array_equal(host, 1)
    assert not {"cuMemAlloc", "cuMemcpyHtoDAsync", "cuStreamSynchronize"} & set(fake.calls)


def test_dlpack_arrays_are_read_through_the_capsule(kernels, fake):
    host = np.zeros(4, np.float32)
    arr = DLPackArray(host)
    kernels.add_one(arr, 2, stream=7)
    np.testing.assert_array_equal(host, [1, 1, 0, 0])
    assert arr.streams == [7]
    kernels.add_one(arr, 1)
    assert arr.streams[-1] == 1  # DLPack's spelling of the legacy default stream


def test_dlpack_byte_offset_and_dtype(fake):
    base = np.zeros(6, np.float32)
    view = runtime._device_view(DLPackArray(base[2:]), 0, "arg")
    assert view.pointer == base.ctypes.data + 8
    assert (view.dtype, view.shape, view.contiguous, view.device) == ("float32", (4,), True, 0)


def test_torch_like_tensors_and_bf16(kernels, fake):
    bits = np.zeros(4, np.uint16)
    for arg in (
        TorchLike(bits, "torch.bfloat16"),
        DeviceArray(bits, "<V2"),  # torch's __cuda_array_interface__ spelling of bfloat16
    ):
        kernels.half(arg, 1.0)
        params = fake.launches[-1][4]
        assert param(params, 0, ctypes.c_uint64) == bits.ctypes.data
        assert param(params, 1, ctypes.c_uint16) == 0x3F80
    kernels.half(np.zeros(4, np.uint16), -2.0)  # a host bf16 buffer holds the bits as uint16
    assert param(fake.launches[-1][4], 1, ctypes.c_uint16) == 0xC000


@pytest.mark.parametrize(
    "value, bits",
    [(1.0, 0x3F80), (-2.0, 0xC000), (1.00390625, 0x3F80), (1.01171875, 0x3F82), (float("inf"), 0x7F80),
     (float("nan"), 0x7FC0), (3.4e38, 0x7F80)],
)
def test_bf16_rounding(value, bits):
    assert runtime._bf16_bits(value) == bits


def test_kernel_params_are_packed_once_per_kernel(kernels, fake):
    a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
    kernels.add_one(DeviceArray(a), 4)
    kernels.add_one(DeviceArray(b), 2)
    (_, _, _, _, first), (_, _, _, _, second) = fake.launches
    assert first == second  # the same void** array, rewritten in place
    assert param(second, 0, ctypes.c_uint64) == b.ctypes.data
    np.testing.assert_array_equal(a, 1)
    np.testing.assert_array_equal(b, [1, 1, 0, 0])


def test_bind_packs_once_and_launches_on_each_call(kernels, fake):
    host = np.zeros(4, np.float32)
    launch = kernels.add_one.bind(DeviceArray(host), 4, grid=3, block=64, stream=9)
    assert "cuLaunchKernel" not in fake.calls
    launch()
    launch()
    np.testing.assert_array_equal(host, 2)
    assert fake.launches[0][:4] == ((3, 1, 1), (64, 1, 1), 0, 9)
    # a bound launch has its own parameters: an ordinary launch in between changes nothing
    kernels.add_one(DeviceArray(np.zeros(4, np.float32)), 4)
    launch()
    np.testing.assert_array_equal(host, 3)


def test_bind_refuses_numpy_arrays(kernels, fake):
    with pytest.raises(LaunchError, match="bind\\(\\) takes device arrays and scalars; argument 0"):
        kernels.add_one.bind(np.zeros(4, np.float32), 4, grid=1, block=1)


def test_a_bound_launch_that_fails_raises_cuda_error(kernels, fake):
    launch = kernels.add_one.bind(DeviceArray(np.zeros(4, np.float32)), 4, grid=1, block=1)
    fake.fail["cuLaunchKernel"] = FakeDriver.CUresult.CUDA_ERROR_LAUNCH_FAILED
    with pytest.raises(CudaError, match="^cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED"):
        launch()


def test_a_failed_launch_frees_its_buffers(kernels, fake):
    fake.fail["cuLaunchKernel"] = FakeDriver.CUresult.CUDA_ERROR_LAUNCH_FAILED
    with pytest.raises(CudaError, match="cuLaunchKernel failed"):
        kernels.add_one(np.zeros(4, np.float32), 4)
    assert fake.memory == {}


def test_the_context_is_set_once_per_thread_and_the_module_loaded_once(kernels, fake):
    kernels.add_one(DeviceArray(np.zeros(4, np.float32)), 4)
    kernels.fill(DeviceArray(np.zeros(4, np.float32)), 1.0)
    worker = threading.Thread(target=kernels.fill, args=(DeviceArray(np.zeros(4, np.float32)), 1.0))
    worker.start()
    worker.join()
    assert fake.calls.count("cuDevicePrimaryCtxRetain") == 1
    assert fake.calls.count("cuCtxSetCurrent") == 2  # this thread and the worker
    assert fake.images == [CUBIN]  # one module for the artifact, from its cubin


@pytest.mark.parametrize(
    "arch, capability, fits",
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
def test_cubin_fits(arch, capability, fits):
    assert runtime._cubin_fits(arch, capability) is fits


def test_a_cubin_for_another_arch_falls_back_to_ptx(monkeypatch):
    driver = FakeDriver(capability=(10, 0))
    _install(monkeypatch, driver)
    runtime.cuda_kernels(fake_artifact()).add_one(DeviceArray(np.zeros(4, np.float32)), 1)
    assert driver.images == [PTX.encode() + b"\0"]  # NUL-terminated for the JIT


def test_no_fitting_cubin_and_no_ptx():
    with pytest.raises(RuntimeError, match="cubin is for sm_90a, this GPU is sm_100, and it has no PTX"):
        runtime._module_image(fake_artifact(ptx=""), (10, 0))
    assert runtime._module_image(fake_artifact(arch=""), (10, 0)) == CUBIN  # unknown arch: tried as is


# --- compile ---------------------------------------------------------------------------

IR = 'module { gpu.module @m { } }  // "demo"'


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def pipeline(monkeypatch, cache_root):
    """A fake ``tile_mlir.compiler``: counts builds, needs no MLIR."""
    module = types.ModuleType("tile_mlir.compiler")
    module.builds = []

    def build_artifact(text, options):
        module.builds.append((text, options.chip, {"fold": options.fold}))
        return fake_artifact(arch=options.chip)

    def lower_tile_ops(text, options):
        return "lowered " + text, SIGS

    module.build_artifact = build_artifact
    module.lower_tile_ops = lower_tile_ops
    monkeypatch.setitem(sys.modules, "tile_mlir.compiler", module)
    return module


def test_compile_builds_on_a_miss_and_reads_the_cache_on_a_hit(pipeline, monkeypatch):
    k = runtime.compile(IR, backend="cuda", options={"fold": "tree"})
    assert isinstance(k, Kernels) and list(k) == ["add_one", "fill", "half"]
    assert pipeline.builds == [(IR, "sm_90a", {"fold": "tree"})]
    monkeypatch.setitem(sys.modules, "tile_mlir.compiler", None)  # a hit must not need the compiler
    k = runtime.compile(IR, backend="cuda", options={"fold": "tree"})
    assert k.add_one.signature == SIGS[0]


def test_compile_accepts_a_module_object(pipeline):
    class Module:
        def __str__(self):
            return IR

    runtime.compile(Module(), backend="cuda")
    assert pipeline.builds[0][0] == IR


def test_compile_rebuilds_a_corrupt_entry(pipeline, cache_root):
    runtime.compile(IR, backend="cuda")
    (entry,) = [p for p in cache_root.iterdir() if p.name != "by-source"]
    (entry / "kernel.cubin").write_bytes(b"flipped")
    runtime.compile(IR, backend="cuda")
    assert len(pipeline.builds) == 2
    runtime.compile(IR, backend="cuda")
    assert len(pipeline.builds) == 2


def test_compile_without_cache_always_builds(pipeline, cache_root):
    runtime.compile(IR, backend="cuda", cache=False)
    runtime.compile(IR, backend="cuda", cache=False)
    assert len(pipeline.builds) == 2 and not cache_root.exists()


def test_compile_misses_without_mlir_say_so(cache_root, monkeypatch):
    monkeypatch.setitem(sys.modules, "tile_mlir.compiler", None)
    with pytest.raises(ImportError, match="no compiled kernel for this module .* needs the MLIR Python bindings"):
        runtime.compile(IR, backend="cuda")


def test_compile_backends(pipeline, monkeypatch):
    interpreter = types.ModuleType("tile_mlir.interpreter")
    interpreter.interpreted_kernels = lambda text, signatures: {"k": (text, signatures)}
    monkeypatch.setitem(sys.modules, "tile_mlir.interpreter", interpreter)
    # the interpreter runs the module after tile-lower-reduction
    assert dict(runtime.compile(IR, backend="interpreter")) == {"k": ("lowered " + IR, SIGS)}
    monkeypatch.setattr(runtime, "gpu_available", lambda: False)
    assert list(runtime.compile(IR)) == ["k"]
    monkeypatch.setattr(runtime, "gpu_available", lambda: True)
    assert isinstance(runtime.compile(IR), Kernels)
    with pytest.raises(ValueError, match="backend must be"):
        runtime.compile(IR, backend="metal")


def test_a_gpu_machine_launches_cached_kernels_without_mlir_or_cuda(pipeline, cache_root):
    """Compile here; then, in a process where MLIR and cuda-python cannot be imported and
    the MLIR distribution is not installed, compile() finds the kernel through the index."""
    runtime.compile(IR, backend="cuda")
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in ("mlir", "cuda"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        sys.path.insert(0, {str(PYTHON_DIR)!r})
        import numpy as np
        import tile_mlir
        from tile_mlir import cache
        cache._MLIR_DISTRIBUTION = "not-installed-here"
        k = tile_mlir.compile({IR!r}, backend="cuda")
        try:
            k.add_one(np.zeros(5, np.float32), 1)
        except tile_mlir.runtime.LaunchError as e:
            print("LaunchError:", e)
        try:
            k.add_one(np.zeros(4, np.float32), 1)
        except ImportError as e:
            print("ImportError:", e)
        print("modules:", sorted(m for m in sys.modules if m.split(".")[0] in ("mlir", "cuda")))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert "LaunchError: kernel add_one: argument 0 must be float32[4], got shape (5,)" in out
    assert "ImportError: launching kernels on a GPU needs cuda-python" in out
    assert "modules: []" in out


# --- load_kernel -----------------------------------------------------------------------


def test_load_kernel_from_an_artifact_directory(tmp_path, fake):
    fake_artifact().save(tmp_path / "art")
    k = runtime.load_kernel(tmp_path / "art")
    assert isinstance(k, Kernels) and list(k) == ["add_one", "fill", "half"]
    one = runtime.load_kernel(tmp_path / "art", name="fill")
    assert isinstance(one, CudaKernel) and one.name == "fill"
    one(DeviceArray(np.zeros(4, np.float32)), 1.0)
    assert fake.images == [CUBIN]
    with pytest.raises(KeyError, match="no kernel named 'nope'"):
        runtime.load_kernel(tmp_path / "art", name="nope")


@pytest.mark.parametrize("suffix, image", [(".cubin", CUBIN), (".ptx", PTX.encode())])
def test_load_kernel_from_a_file_with_signatures_beside_it(tmp_path, fake, suffix, image):
    (tmp_path / f"kernel{suffix}").write_bytes(image)
    (tmp_path / "signatures.json").write_text(Artifact.signatures_to_json(SIGS))
    k = runtime.load_kernel(tmp_path / f"kernel{suffix}", name="add_one")
    k(DeviceArray(np.zeros(4, np.float32)), 1)
    assert fake.images == [image if suffix == ".cubin" else image + b"\0"]


def test_load_kernel_errors(tmp_path):
    (tmp_path / "kernel.cubin").write_bytes(CUBIN)
    with pytest.raises(FileNotFoundError, match="needs its launch signatures"):
        runtime.load_kernel(tmp_path / "kernel.cubin")
    (tmp_path / "kernel.txt").write_text("")
    with pytest.raises(ValueError, match="expected an artifact directory"):
        runtime.load_kernel(tmp_path / "kernel.txt")
    (tmp_path / "broken").mkdir()
    with pytest.raises(ArtifactError):
        runtime.load_kernel(tmp_path / "broken")


def test_the_runtime_imports_nothing_heavy():
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(PYTHON_DIR)!r}); "
         "import tile_mlir.runtime, tile_mlir.cache; "
         "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mlir', 'cuda')))"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert out.strip() == "[]"
