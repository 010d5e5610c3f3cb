"""A CUDA driver without CUDA, for the launch half's tests (no GPU needed).

``FakeDriver`` answers the cuda.bindings.driver calls the runtime makes: its "device
memory" is host memory and its kernels are Python functions that read the real
``kernelParams`` array, so packing, copies, frees and module selection are checked as
the GPU would see them. ``DeviceArray``, ``DLPackArray`` and ``TorchLike`` are device
arrays over host memory, through each protocol the runtime reads. conftest.py makes
the ``fake``, ``no_driver`` and ``kernels`` fixtures from these.
"""

import ctypes
import enum
import threading
import types

import numpy as np

from tile_mlir import runtime
from tile_mlir.cache import Artifact
from tile_mlir.signature import ArgSpec, KernelSignature

SIGS = (
    KernelSignature("add_one", (ArgSpec("memref", "float32", (4,)), ArgSpec("scalar", "int32"))),
    KernelSignature("fill", (ArgSpec("memref", "float32", (2, 2)), ArgSpec("scalar", "float32"))),
    KernelSignature("half", (ArgSpec("memref", "bfloat16", (4,)), ArgSpec("scalar", "bfloat16"))),
    KernelSignature("add_into", (ArgSpec("memref", "float32", (4,)), ArgSpec("memref", "float32", (4,)))),
)
# Kernels that run in thread-block clusters: of 4 CTAs given at launch, of 16 (non-portable),
# and of 2 that the kernel fixes itself (known_cluster_size). Each adds one, as add_one.
CLUSTER_SIGS = (
    KernelSignature("cluster4", SIGS[0].args, 128, 32, (4, 1, 1)),
    KernelSignature("cluster16", SIGS[0].args, 128, 32, (16, 1, 1)),
    KernelSignature("cluster_fixed", SIGS[0].args, 64, 32, (2, 1, 1), cluster_fixed=True),
)
CUBIN = b"\x7fELF fake cubin\x00"  # NUL-terminated so the fake driver can read it back
PTX = ".version 8.0\n.target sm_90a\n// fake\n"


def fake_artifact(cubin=CUBIN, chip="sm_90a", ptx=PTX, signatures=SIGS):
    return Artifact(ptx=ptx, cubin=cubin, signatures=signatures, chip=chip)


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
        CUDA_ERROR_INVALID_VALUE = 1
        CUDA_ERROR_INVALID_PTX = 218
        CUDA_ERROR_LAUNCH_FAILED = 719
        CUDA_ERROR_INVALID_CLUSTER_SIZE = 912

    CUdevice_attribute = types.SimpleNamespace(
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR="major",
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR="minor",
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN="max shared",
    )
    CUstream = int
    CUlaunchAttributeID = types.SimpleNamespace(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION="cluster dimension")
    CUfunction_attribute = types.SimpleNamespace(
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED="non-portable",
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES="max dynamic shared",
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES="static shared",
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT="carveout",
    )

    class CUlaunchAttribute:
        def __init__(self):
            self.id = None
            self.value = types.SimpleNamespace(clusterDim=types.SimpleNamespace(x=0, y=0, z=0))

    class CUlaunchConfig:
        def __init__(self):
            self.attrs, self.numAttrs = [], 0

    def __init__(self, capability=(9, 0), max_shared=227 * 1024):
        self.capability = dict(zip(("major", "minor"), capability))
        self.capability["max shared"] = max_shared  # per block, with the opt-in
        self.calls = []
        self.fail = {}  # call name -> CUresult to return
        self.images = []
        self.launches = []
        self.memory = {}
        self.freed = []
        self.kernels = {"add_one": self.add_one, "fill": self.fill, "half": lambda p: None, "add_into": self.add_into,
                        "cluster4": self.add_one, "cluster16": self.add_one, "cluster_fixed": self.add_one}
        self.function_attributes = {}  # (function, attribute) -> value
        self.static_shared = {}  # function -> its bytes of static shared memory (default 0)
        self.sm_threads = 132 * 2048  # what cuOccupancyMaxActiveClusters divides among clusters
        self.carveouts = []  # the function's preferred carveout at each launch and occupancy query

    def _result(self, name, *outputs):
        self.calls.append(name)
        return (self.CUresult(self.fail.get(name, 0)), *outputs)

    # Kernels: they read their arguments through kernelParams, as the GPU would.
    def add_one(self, params):
        n = param(params, 1, ctypes.c_int32)
        floats_at(param(params, 0, ctypes.c_uint64), 4)[:n] += 1

    def add_into(self, params):  # reads argument 0, writes argument 1
        x = floats_at(param(params, 0, ctypes.c_uint64), 4)
        floats_at(param(params, 1, ctypes.c_uint64), 4)[:] = x + 1

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
        self.carveouts.append(self.function_attributes.get((f, "carveout"), -1))
        result = self._result("cuLaunchKernel")
        if not result[0] and not self._shared_fits(f, shared):
            return (self.CUresult.CUDA_ERROR_INVALID_VALUE,)
        if not result[0]:
            self.kernels[f](params)
        return result

    def cuLaunchKernelEx(self, config, f, params, extra):
        """Records (grid, block, shared, stream, params, cluster dims or None); the cluster
        must fit (``_cluster_fits``), as the driver checks."""
        cluster = self._cluster_of(config)
        self.launches.append(((config.gridDimX, config.gridDimY, config.gridDimZ),
                              (config.blockDimX, config.blockDimY, config.blockDimZ),
                              config.sharedMemBytes, config.hStream, params, cluster))
        result = self._result("cuLaunchKernelEx")
        if not result[0] and not self._shared_fits(f, config.sharedMemBytes):
            return (self.CUresult.CUDA_ERROR_INVALID_VALUE,)
        if not result[0] and not self._cluster_fits(f, cluster):
            return (self.CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE,)
        if not result[0]:
            self.kernels[f](params)
        return result

    def _shared_fits(self, f, dynamic) -> bool:
        """Static and dynamic shared memory within 48 KB, or the dynamic within what
        the kernel opted into (and that within the device's limit)."""
        static = self.static_shared.get(f, 0)
        allowed = self.function_attributes.get((f, "max dynamic shared"), 48 * 1024 - static)
        return dynamic <= allowed and static + allowed <= self.capability["max shared"]

    def cuFuncGetAttribute(self, attribute, f):
        assert attribute == "static shared"
        return self._result("cuFuncGetAttribute", self.static_shared.get(f, 0))

    def cuFuncSetAttribute(self, f, attribute, value):
        self.function_attributes[(f, attribute)] = value
        return self._result("cuFuncSetAttribute")

    def cuOccupancyMaxActiveClusters(self, f, config):
        cluster = self._cluster_of(config) or (2, 1, 1)  # a fixed size: cluster_fixed's
        result = self._result("cuOccupancyMaxActiveClusters", 0)
        if result[0]:
            return result
        if not self._cluster_fits(f, cluster):
            return (self.CUresult.CUDA_ERROR_INVALID_CLUSTER_SIZE, 0)
        threads = config.blockDimX * config.blockDimY * config.blockDimZ
        return (result[0], self.sm_threads // (threads * cluster[0] * cluster[1] * cluster[2]))

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, f, block, shared):
        """2048 threads an SM, and, with a carveout, as many CTAs as its share of 228 KB
        holds at ``shared`` bytes and 1 KB each."""
        carveout = self.function_attributes.get((f, "carveout"), -1)
        self.carveouts.append(carveout)
        fit = 2048 // block if carveout < 0 else min(2048 // block, carveout * 228 * 1024 // 100 // (shared + 1024))
        return self._result("cuOccupancyMaxActiveBlocksPerMultiprocessor", fit)

    def _cluster_of(self, config):
        for attribute in config.attrs[: config.numAttrs]:
            if attribute.id == self.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
                d = attribute.value.clusterDim
                return (d.x, d.y, d.z)
        return None

    def _cluster_fits(self, f, cluster) -> bool:
        """More than 8 CTAs need the non-portable attribute; more than 16 never fit."""
        ctas = 1 if cluster is None else cluster[0] * cluster[1] * cluster[2]
        non_portable = self.function_attributes.get((f, "non-portable"), 0)
        return ctas <= (16 if non_portable else 8)

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


def install(monkeypatch, driver):
    monkeypatch.setattr(runtime, "_driver", lambda: driver)
    monkeypatch.setattr(runtime, "_device_state", None)
    monkeypatch.setattr(runtime, "_thread", threading.local())


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


class TorchDtype:
    """A torch dtype stand-in: its name, and ``str()`` as torch spells it."""

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


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

    def get_device(self):
        return self.device.index


TorchLike.__module__ = "torch"
