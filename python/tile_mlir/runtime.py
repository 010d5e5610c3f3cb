"""Launch compiled kernels through cuda-python (``cuda.bindings.driver``).

The launch half of tile-mlir: it imports nothing from the compiler (no MLIR), and the
driver bindings only on the first launch, so a GPU machine without MLIR launches cached
kernels and a machine without CUDA can still check arguments. ``tile_mlir.compile`` and
``tile_mlir.load_kernel`` (``tile_mlir.api``) make the ``Kernels`` this module launches.

A launch, ``kernel.launch(grid, block, *args, shared_mem=0, stream=None)``, in order:

1. ``arrays.check_launch`` checks the grid, block, shared memory and stream (once per
   configuration: the driver call it makes is kept), and ``params.Packer`` checks every
   argument against the kernel's signature and writes it into the kernel's
   pre-allocated ``kernelParams`` buffer (torch tensors and numbers the fast way). This
   is pure Python; a bad argument raises ``LaunchError`` before any driver call.
2. The first launch of a kernel of an artifact retains device 0's primary context (the one
   CuPy and torch use too) and loads the artifact's module: the cubin if it was built
   for this device's chip, else the PTX through the driver's JIT.
3. numpy arrays are copied to fresh device buffers, the kernel is launched, and the
   buffers are copied back; the call returns after the stream has synchronized. A
   writeable array receives the result. A read-only array is an input only: if the kernel
   wrote to it, the launch raises ``LaunchError`` (``arrays.check_unwritten``) rather than
   lose the result. Device arrays (``__cuda_array_interface__`` or DLPack: CuPy, torch)
   are passed by pointer, with no copy and no synchronization.

A kernel whose signature names a thread-block cluster (``KernelSignature.cluster``)
launches through ``cuLaunchKernelEx``: with ``CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`` when
the launch gives the cluster shape, without it when the kernel fixes its own
(``cluster_fixed``: PTX ``.reqnctapercluster``). Before its first launch on a block and
shared-memory size, a cluster of more than 8 CTAs gets
``CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED``, and ``cuOccupancyMaxActiveClusters``
must find room for one cluster on the GPU; else, or if the launch itself fails, the
``CudaError`` names the cluster shape, the block and the shared memory.

**Dynamic shared memory.** ``shared_mem`` bytes go to the launch (``sharedMemBytes``).
The first launch (or bind) of a kernel that asks for more than it has had checks it
against the device's limit per block less the kernel's static shared memory
(``cuFuncGetAttribute``: a ``LaunchError`` above it) and, where static and dynamic
exceed 48 KB, opts in with ``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``. A bound
launch may also name a ``carveout`` (``bind``): with the dynamic shared memory, it caps how
many CTAs an SM holds (``max_active_blocks`` says how many).

Every driver call goes through ``_check``, which turns its error code into a ``CudaError``
naming the call.
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading
from collections.abc import Mapping

import numpy as np

from .arrays import check_carveout, check_launch, check_shared, check_unwritten, dim3, shared_bytes, stream_handle
from .params import Packer, Params, pack
from .cache import Artifact
from .errors import (
    ArtifactError,
    CudaBindingsMissing,
    CudaError,
    KernelNotFound,
    LaunchError,
    OptionError,
)
from .signature import KernelSignature
from .vocab import DEFAULT_SHARED_BYTES_PER_BLOCK, MAX_PORTABLE_CLUSTER_CTAS, Chip

__all__ = [
    "BoundLaunch",
    "CudaKernel",
    "Kernels",
    "cuda_kernels",
    "gpu_available",
]


# --- the driver and its errors ------------------------------------------------------


@functools.cache
def _driver():
    """``cuda.bindings.driver``, imported on first use."""
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise CudaBindingsMissing("launching kernels on a GPU needs cuda-python: "
                                  "pip install 'cuda-bindings>=13'") from e
    return driver


def _error_text(code) -> str:
    """``CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)``; just the name without a driver."""
    driver = _driver()
    try:
        name = driver.CUresult(int(code)).name
    except ValueError:
        return f"CUresult {int(code)}"
    try:
        status, text = driver.cuGetErrorString(code)
    except Exception:  # the driver library is missing: the name has to do
        return name
    return name if status or not text else f"{name} ({text.decode() if isinstance(text, bytes) else text})"


def _check(result: tuple, call: str):
    """Unpack a driver call's ``(CUresult, *outputs)``: its output(s), or CudaError."""
    if result[0]:
        raise CudaError(call, int(result[0]), _error_text(result[0]))
    return None if len(result) == 1 else result[1] if len(result) == 2 else result[1:]


@functools.cache
def gpu_available() -> bool:
    """Whether a CUDA device can be used here. Never raises."""
    try:
        driver = _driver()
        if driver.cuInit(0)[0]:
            return False
        err, count = driver.cuDeviceGetCount()
        return not err and count > 0
    except Exception:  # no cuda-python, or no driver library: no GPU
        return False


# --- device 0 ------------------------------------------------------------------------


class _Device:
    """Device 0: its primary context (retained once, for the process) and its capability."""

    def __init__(self):
        driver = _driver()
        try:
            result = driver.cuInit(0)
        except Exception as e:  # cuda-python raises when the driver library is absent
            raise CudaError("cuInit", None, f"no usable CUDA driver ({e})") from e
        _check(result, "cuInit")
        device = _check(driver.cuDeviceGet(0), "cuDeviceGet")
        self.context = _check(driver.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
        attr = driver.CUdevice_attribute
        major, minor, self.max_shared = (
            _check(driver.cuDeviceGetAttribute(a, device), "cuDeviceGetAttribute")
            for a in (
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,  # per block, opted in
            )
        )
        self.capability = (major, minor)


_device_state: _Device | None = None
_device_lock = threading.Lock()
_thread = threading.local()


def _device() -> _Device:
    """The shared device state, with its context made current in the calling thread."""
    global _device_state
    if _device_state is None:
        with _device_lock:
            if _device_state is None:
                _device_state = _Device()
    if getattr(_thread, "context", None) is not _device_state.context:
        _check(_driver().cuCtxSetCurrent(_device_state.context), "cuCtxSetCurrent")
        _thread.context = _device_state.context
    return _device_state


def _cubin_fits(chip: str, capability: tuple[int, int]) -> bool:
    """Whether a cubin built for ``chip`` runs on a device of this compute capability
    (``vocab.Chip.runs_on``); a chip that is not an ``sm_XX`` name fits nothing."""
    try:
        return Chip.parse(chip).runs_on(capability)
    except OptionError:
        return False


def _module_image(artifact: Artifact, capability: tuple[int, int]) -> bytes:
    """What to load: the cubin if it fits (or its chip is unknown), else the PTX to JIT."""
    if artifact.cubin is not None and (not artifact.chip or _cubin_fits(artifact.chip, capability)):
        return artifact.cubin
    if artifact.ptx:
        return artifact.ptx.encode() + b"\0"
    raise ArtifactError(f"the artifact's cubin is for {artifact.chip}, this GPU is sm_{capability[0]}{capability[1]},"
                        " and it has no PTX for the driver to compile")


class _CudaModule:
    """One artifact's CUmodule, loaded on the first launch of any of its kernels."""

    def __init__(self, artifact: Artifact):
        self.artifact = artifact
        self._handle = None
        self._lock = threading.Lock()

    def function(self, name: str):
        driver = _driver()
        with self._lock:
            if self._handle is None:
                image = _module_image(self.artifact, _device().capability)
                buffer = ctypes.create_string_buffer(image, len(image))
                self._handle = _check(driver.cuModuleLoadData(ctypes.addressof(buffer)), "cuModuleLoadData")
        return _check(driver.cuModuleGetFunction(self._handle, name.encode()), "cuModuleGetFunction")

    def __del__(self):
        if self._handle is not None:
            try:
                _driver().cuModuleUnload(self._handle)
            except Exception:  # at interpreter exit the bindings may already be gone
                pass


# --- kernels -------------------------------------------------------------------------


class CudaKernel:
    """One kernel of a loaded artifact, launched through cuLaunchKernel (cuLaunchKernelEx
    for a cluster: module docstring).

    Arguments follow ``signature``: for each memref a numpy array (copied in and back; a
    read-only one is an input only) or a device array (``__cuda_array_interface__`` or
    DLPack, zero copy), for each scalar a Python or numpy scalar. A kernel may be
    launched from several threads; launches of one kernel are serialized while its
    parameters are packed.
    """

    def __init__(self, module: _CudaModule, signature: KernelSignature):
        self.name = signature.name
        self.signature = signature
        self._module = module
        self._function = None
        self._packer = Packer(signature)
        self._params = self._packer.params
        self._calls: dict = {}  # (grid, block, shared_mem, stream) -> its checked _Call
        self._lock = threading.Lock()
        self._cluster_checked: set = set()  # (block, shared_mem) that can hold a cluster
        self._shared_ok = 0  # bytes of dynamic shared memory a launch may have without a check
        self._static_shared = None  # the function's bytes of static shared memory, once asked

    def __repr__(self) -> str:
        return f"<CudaKernel {self.signature.describe()}>"

    def launch(self, grid, block, *args, shared_mem: int = 0, stream=None) -> None:
        """Launch on ``grid`` blocks of ``block`` threads (each an int or a tuple of up to
        3), with ``shared_mem`` bytes of dynamic shared memory, on ``stream`` (None: the
        default stream; an int handle, a cuda.core, torch or CuPy stream).

        The fast path, for a hot loop: a launch configuration is checked once and its
        driver call kept (``_calls``), and ``params.Packer`` takes torch tensors and numbers
        straight into the kernel's parameters."""
        if stream is None:
            handle = 0
        elif type(stream) is int:
            handle = stream
        else:
            handle = stream_handle(stream)
        if type(grid) is int and type(block) is int and type(shared_mem) is int:
            key = (grid, block, shared_mem, handle)  # exact ints only: 1.0 == 1 must not hit
        else:
            key = (dim3(grid, "grid"), dim3(block, "block"), shared_bytes(shared_mem), handle)
        with self._lock:
            call = self._calls.get(key)
            if call is None:  # check it all before any driver call
                config = check_launch(self.signature, grid, block, shared_mem, handle)
            host = self._packer.fill(args, handle)
            if call is None:
                call = self._configure(config, key)
            _device()  # the context must be current in the launching thread
            if host:
                self._launch_copying(call, handle, host)
            else:
                call()

    def launch_trusted(self, grid: int, block: int, stream: int, values: tuple) -> None:
        """``launch`` for a caller that has checked its arguments itself, the per-call path
        of ``tile_mlir.kernels`` on torch tensors: ``values`` holds, per argument, a
        device pointer (an int, aligned, of the right array) for a memref and a Python
        number within its dtype for a scalar; ``grid`` and ``block`` are ints, ``stream``
        a handle. Nothing here checks them again: a wrong value is a wrong launch. A
        kernel with a 16-bit float scalar (its slot takes bits) has no such path."""
        key = (grid, block, 0, stream)
        with self._lock:
            call = self._calls.get(key)
            if call is None:
                call = self._configure(check_launch(self.signature, grid, block, 0, stream), key)
            slots = self._params.slots
            for i, (value, scalar) in enumerate(zip(values, self._trusted)):
                if scalar is None:
                    slots[i] = value
                else:
                    scalar.value = value
            _device()
            call()

    @functools.cached_property
    def memref_align(self) -> int:
        """The largest alignment in bytes that the kernel asks of a memref argument."""
        return max((a.align for a in self.signature.args if a.kind == "memref"), default=1)

    @functools.cached_property
    def _trusted(self) -> tuple:
        """Per argument: None for a memref, else the ctypes view of its slot."""
        if any(a.kind == "scalar" and a.dtype in ("float16", "bfloat16") for a in self.signature.args):
            raise LaunchError(f"kernel {self.name}: launch_trusted takes no 16-bit float scalar; use launch")
        return tuple(self._params.scalars.get(i) for i in range(len(self.signature.args)))

    def _configure(self, config: tuple, key) -> _Call:
        """The driver call of a checked launch configuration (``arrays.check_launch``),
        kept for the next launch like it (a few dozen at most)."""
        grid, block, shared_mem, handle = config
        call = self._call(self._cu_function(), grid, block, shared_mem, _driver().CUstream(handle),
                          self._params.address)
        if len(self._calls) >= 64:
            self._calls.clear()
        self._calls[key] = call
        return call

    def bind(self, grid, block, *args, shared_mem: int = 0, stream=None, carveout: int | None = None) -> BoundLaunch:
        """Check and pack ``args`` once for a launch on ``grid`` x ``block``; return a
        zero-argument callable that only launches (the arguments as ``launch`` takes them).

        For benchmarks and hot loops. The arguments must be device arrays and scalars
        (a numpy array needs copies around every launch); the callable keeps them alive.
        ``carveout`` (an int, 0-100): the percentage of the SM's shared memory to prefer
        over L1 (CUDA's preferred carveout, a hint the driver rounds up to a size the SM
        has), set on the function for each launch of the callable and reset after.
        """
        carveout = check_carveout(self.signature, carveout)
        grid, block, shared_mem, handle = check_launch(self.signature, grid, block, shared_mem, stream)
        params = Params(self.signature)
        host = pack(self.signature, args, params, handle)
        if host:
            raise LaunchError(
                f"kernel {self.name}: bind() takes device arrays and scalars;"
                f" argument {host[0][0]} is a numpy array"
            )
        function = self._cu_function()
        with self._lock:
            call = self._call(function, grid, block, shared_mem, _driver().CUstream(handle), params.address)
        if carveout is not None:
            call = _Carveout(function, carveout, call, self._lock)
        return BoundLaunch(self, args, params, call)

    def _call(self, function, grid, block, shared_mem: int, stream, params: int) -> _Call:
        """The driver call that launches: cuLaunchKernel, or cuLaunchKernelEx for a
        cluster (checked first, once per block and shared-memory size). Called with the
        kernel's lock held."""
        driver = _driver()
        sig = self.signature
        if shared_mem > self._shared_ok:
            self._allow_shared(function, shared_mem)
        if sig.cluster_ctas == 1:
            return _Call(driver.cuLaunchKernel, (function, *grid, *block, shared_mem, stream, params, 0),
                         "cuLaunchKernel", "")
        config = _launch_config(grid, block, shared_mem, stream, None if sig.cluster_fixed else sig.cluster)
        what = (f" (kernel {self.name} in clusters of {sig.cluster_ctas} CTAs {tuple(sig.cluster)}, blocks of "
                f"{math.prod(block)} threads, {shared_mem} bytes of dynamic shared memory)")
        if (block, shared_mem) not in self._cluster_checked:
            self._check_cluster(function, config, what)
            self._cluster_checked.add((block, shared_mem))
        return _Call(driver.cuLaunchKernelEx, (config, function, params, 0), "cuLaunchKernelEx", what)

    def _allow_shared(self, function, shared_mem: int) -> None:
        """Make sure a block can have ``shared_mem`` bytes of dynamic shared memory: within
        the device's limit per block less the kernel's static shared memory (else
        LaunchError), and, where static and dynamic exceed the 48 KB a kernel gets
        without asking, opted into with ``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``
        (once per larger size)."""
        driver = _driver()
        attr = driver.CUfunction_attribute
        if self._static_shared is None:
            self._static_shared = _check(
                driver.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function), "cuFuncGetAttribute")
        check_shared(self.signature, shared_mem, _device().max_shared, self._static_shared)
        if self._static_shared + shared_mem > DEFAULT_SHARED_BYTES_PER_BLOCK:
            _check(driver.cuFuncSetAttribute(function, attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_mem),
                   "cuFuncSetAttribute")
        self._shared_ok = shared_mem

    def _check_cluster(self, function, config, what: str) -> None:
        """Allow a non-portable cluster size (over 8 CTAs), and make sure that the GPU
        can hold one cluster of this launch at all."""
        driver = _driver()
        if self.signature.cluster_ctas > MAX_PORTABLE_CLUSTER_CTAS:
            attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
            _check_in(driver.cuFuncSetAttribute(function, attribute, 1), "cuFuncSetAttribute", what)
        count = _check_in(driver.cuOccupancyMaxActiveClusters(function, config), "cuOccupancyMaxActiveClusters", what)
        if not count:
            raise CudaError("cuOccupancyMaxActiveClusters", None,
                            f"this GPU cannot schedule a single cluster{what}: fewer CTAs per cluster, "
                            "fewer threads or less shared memory per CTA would fit")

    def max_active_clusters(self, block: int) -> int | None:
        """How many clusters of this kernel (its signature's cluster, blocks of ``block``
        threads) the GPU holds at once (``cuOccupancyMaxActiveClusters``); None for a
        kernel without clusters, or where there is no GPU or the driver does not say."""
        sig = self.signature
        if sig.cluster_ctas <= 1:
            return None
        try:
            config = _launch_config((sig.cluster_ctas, 1, 1), (block, 1, 1), 0, 0,
                                    None if sig.cluster_fixed else sig.cluster)
            err, count = _driver().cuOccupancyMaxActiveClusters(self._cu_function(), config)
            return None if int(err) else int(count)
        except Exception:  # noqa: BLE001 - no GPU, or a driver without the query: no figure
            return None

    def max_active_blocks(self, block: int, shared_mem: int = 0, carveout=None) -> int | None:
        """How many CTAs of ``block`` threads of this kernel, with ``shared_mem`` bytes of
        dynamic shared memory and ``bind``'s ``carveout``, one SM holds at once
        (``cuOccupancyMaxActiveBlocksPerMultiprocessor``: its registers and shared memory
        decide); None where there is no GPU or the driver does not say."""
        carveout = check_carveout(self.signature, carveout)
        try:
            function = self._cu_function()
            occupancy = _driver().cuOccupancyMaxActiveBlocksPerMultiprocessor
            query = functools.partial(occupancy, function, block, shared_mem)
            err, count = query() if carveout is None else _Carveout(function, carveout, query, self._lock)()
            return None if int(err) else int(count)
        except Exception:  # noqa: BLE001 - no GPU, or a driver without the query: no figure
            return None

    def _cu_function(self):
        _device()  # the context must be current in the launching thread
        if self._function is None:
            self._function = self._module.function(self.name)
        return self._function

    def _launch_copying(self, call: _Call, stream, host) -> None:
        """Copy the numpy arrays in, launch, copy them back, synchronize.

        A writeable contiguous array gets the device buffer back in place, a writeable
        non-contiguous one through a scratch array. A read-only one gets it back into a
        scratch array, to check that the kernel did not write to it
        (``arrays.check_unwritten``): its result would otherwise be silently lost.
        """
        driver = _driver()
        buffers = []  # (index, array, device pointer)
        try:
            for i, array in host:
                pointer = 0
                if array.nbytes:
                    pointer = _check(driver.cuMemAlloc(array.nbytes), "cuMemAlloc")
                    buffers.append((i, array, pointer))
                    source = np.ascontiguousarray(array)  # the array itself, if it is contiguous
                    _check(
                        driver.cuMemcpyHtoDAsync(pointer, source.ctypes.data, array.nbytes, stream),
                        "cuMemcpyHtoDAsync",
                    )
                self._params.slots[i] = int(pointer)
            call()
            back = []  # (index, array, its buffer after the launch): read-only or non-contiguous
            for i, array, pointer in buffers:
                target = array
                if not (array.flags.writeable and array.flags.c_contiguous):
                    target = np.empty(array.shape, array.dtype)
                    back.append((i, array, target))
                _check(
                    driver.cuMemcpyDtoHAsync(target.ctypes.data, pointer, array.nbytes, stream),
                    "cuMemcpyDtoHAsync",
                )
            _check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize")
        finally:
            for _, _, pointer in buffers:
                driver.cuMemFree(pointer)  # best effort: an error above is the one to report
        for i, array, after in back:
            if array.flags.writeable:
                array[...] = after
            else:
                check_unwritten(self.name, i, array, after)


class _Call:
    """One driver launch call, ready to make: ``fn(*args)``; a failure is a CudaError
    naming ``name``, with ``what`` (the cluster shape, for a cluster launch) added."""

    __slots__ = ("args", "fn", "name", "what")

    def __init__(self, fn, args: tuple, name: str, what: str):
        self.fn, self.args, self.name, self.what = fn, args, name, what

    def __call__(self) -> None:
        err = self.fn(*self.args)[0]
        if err:
            raise CudaError(self.name, int(err), _error_text(err) + self.what)


class _Carveout:
    """``call()`` with the function's preferred shared-memory carveout at ``percent``, and
    back at the driver's default (-1) after, under the kernel's ``lock`` (which ``launch``
    holds too), so that a launch in another thread does not inherit it."""

    __slots__ = ("call", "function", "lock", "percent")

    def __init__(self, function, percent: int, call, lock):
        self.function, self.percent, self.call, self.lock = function, percent, call, lock

    def __call__(self):
        driver = _driver()
        attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
        with self.lock:
            _check(driver.cuFuncSetAttribute(self.function, attribute, self.percent), "cuFuncSetAttribute")
            try:
                return self.call()
            finally:
                _check(driver.cuFuncSetAttribute(self.function, attribute, -1), "cuFuncSetAttribute")


def _check_in(result: tuple, call: str, what: str):
    """``_check``, with ``what`` added to the error's message."""
    if result[0]:
        raise CudaError(call, int(result[0]), _error_text(result[0]) + what)
    return _check(result, call)


def _launch_config(grid, block, shared_mem: int, stream, cluster):
    """A CUlaunchConfig for cuLaunchKernelEx, with the cluster dimension attribute when
    ``cluster`` (CTAs along x, y, z) is given."""
    driver = _driver()
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = block
    config.sharedMemBytes = shared_mem
    config.hStream = driver.CUstream(stream) if isinstance(stream, int) else stream
    if cluster is None:
        config.numAttrs = 0
        return config
    attribute = driver.CUlaunchAttribute()
    attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    attribute.value.clusterDim.x, attribute.value.clusterDim.y, attribute.value.clusterDim.z = cluster
    config.attrs = [attribute]
    config.numAttrs = 1
    return config


class BoundLaunch:
    """A launch with its arguments packed (``CudaKernel.bind``): calling it only calls
    cuLaunchKernel (cuLaunchKernelEx for a cluster)."""

    __slots__ = ("_call", "_params", "args", "kernel")

    def __init__(self, kernel: CudaKernel, args: tuple, params: Params, call: _Call):
        self.kernel = kernel
        self.args = args  # keeps the device arrays alive
        self._params = params
        self._call = call

    def __call__(self) -> None:
        _device()
        self._call()


class Kernels(Mapping):
    """Kernels by name, as items or attributes: ``kernels["demo"]``, ``kernels.demo``."""

    def __init__(self, kernels: dict):
        self._kernels = dict(kernels)

    def __getitem__(self, name: str):
        try:
            return self._kernels[name]
        except KeyError:
            raise self._not_found(name) from None

    def __iter__(self):
        return iter(self._kernels)

    def __len__(self) -> int:
        return len(self._kernels)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._kernels[name]
        except KeyError:
            raise self._not_found(name) from None

    def _not_found(self, name) -> KernelNotFound:
        return KernelNotFound(f"no kernel named {name!r}; there are {sorted(self._kernels)}")

    def __dir__(self):
        return [*super().__dir__(), *self._kernels]

    def __repr__(self) -> str:
        return f"Kernels({', '.join(self._kernels)})"


def cuda_kernels(artifact: Artifact) -> Kernels:
    """The artifact's kernels, sharing one module that is loaded on the first launch."""
    module = _CudaModule(artifact)
    return Kernels({s.name: CudaKernel(module, s) for s in artifact.signatures})
