"""Compile modules and launch their kernels through cuda-python (``cuda.bindings.driver``).

This module imports neither MLIR nor CUDA when it is imported. ``compile`` imports the
compiler (``tile_mlir.pipeline``) only on a cache miss, and the driver bindings are
imported on the first launch, so a GPU machine without MLIR launches cached kernels and
a machine without CUDA can still compile, cache and check arguments.

A launch, in order:

1. ``CudaKernel._pack`` checks every argument against the kernel's signature and writes
   it into the kernel's pre-allocated ``kernelParams`` buffer. This is pure Python; a bad
   argument raises ``LaunchError`` before any driver call.
2. The first launch of a kernel of an artifact retains device 0's primary context (the one
   CuPy and torch use too) and loads the artifact's module: the cubin if it was built
   for this device, else the PTX through the driver's JIT.
3. numpy arrays are copied to fresh device buffers, the kernel is launched, and writeable
   arrays are copied back (read-only arrays are inputs only); the call returns after the
   stream has synchronized. Device arrays (``__cuda_array_interface__`` or DLPack: CuPy,
   torch) are passed by pointer, with no copy and no synchronization.

Every driver call goes through ``_check``, which turns its error code into a ``CudaError``
naming the call.
"""

from __future__ import annotations

import ctypes
import functools
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import cache as _cache
from .cache import Artifact
from .errors import CudaError, LaunchError
from .signature import ArgSpec, KernelSignature

__all__ = [
    "CudaError",
    "CudaKernel",
    "BoundLaunch",
    "Kernels",
    "LaunchError",
    "compile",
    "cuda_kernels",
    "gpu_available",
    "load_kernel",
]


# --- the driver and its errors ------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _driver():
    """``cuda.bindings.driver``, imported on first use."""
    try:
        from cuda.bindings import driver
    except ImportError as e:
        raise ImportError(
            "launching kernels on a GPU needs cuda-python: pip install 'cuda-bindings>=13'"
        ) from e
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
    if status or not text:
        return name
    return f"{name} ({text.decode() if isinstance(text, bytes) else text})"


def _check(result: tuple, call: str):
    """Unpack a driver call's ``(CUresult, *outputs)``: its output(s), or CudaError."""
    if result[0]:
        raise CudaError(call, int(result[0]), _error_text(result[0]))
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


@functools.lru_cache(maxsize=None)
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
        self.capability = tuple(
            _check(driver.cuDeviceGetAttribute(a, device), "cuDeviceGetAttribute")
            for a in (
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            )
        )


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


_ARCH = re.compile(r"sm_(\d+)(\d)([af]?)")


def _cubin_fits(arch: str, capability: tuple[int, int]) -> bool:
    """Whether a cubin built for ``arch`` runs on a device of this compute capability.

    An arch-specific target (``sm_90a``) runs only on exactly that capability; a plain
    (``sm_86``) or family (``sm_100f``) one on the same major with an equal or higher minor.
    """
    m = _ARCH.fullmatch(arch)
    if m is None:
        return False
    major, minor = int(m[1]), int(m[2])
    if m[3] == "a":
        return (major, minor) == tuple(capability)
    return major == capability[0] and minor <= capability[1]


def _module_image(artifact: Artifact, capability: tuple[int, int]) -> bytes:
    """What to load: the cubin if it fits (or its arch is unknown), else the PTX to JIT."""
    if artifact.cubin is not None and (not artifact.arch or _cubin_fits(artifact.arch, capability)):
        return artifact.cubin
    if artifact.ptx:
        return artifact.ptx.encode() + b"\0"
    raise RuntimeError(
        f"the artifact's cubin is for {artifact.arch}, this GPU is sm_{capability[0]}{capability[1]},"
        " and it has no PTX for the driver to compile"
    )


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
                self._handle = _check(
                    driver.cuModuleLoadData(ctypes.addressof(buffer)), "cuModuleLoadData"
                )
        return _check(driver.cuModuleGetFunction(self._handle, name.encode()), "cuModuleGetFunction")

    def __del__(self):
        if self._handle is not None:
            try:
                _driver().cuModuleUnload(self._handle)
            except Exception:  # at interpreter exit the bindings may already be gone
                pass


# --- arguments -----------------------------------------------------------------------


def _dim3(value, what: str) -> tuple[int, int, int]:
    """A grid or block size: an int, or a tuple of 1 to 3 ints, padded with ones."""
    if type(value) is int and value >= 1:  # the common case, fast
        return (value, 1, 1)
    dims = (value,) if isinstance(value, (int, np.integer)) else value
    try:
        dims = tuple(dims)
    except TypeError:
        dims = ()
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and d >= 1 for d in dims):
        raise LaunchError(f"{what} must be a positive int or a tuple of 1 to 3, got {value!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


def _stream_handle(stream) -> int:
    """A stream as a raw handle, from None (the default stream), an int, a driver
    ``CUstream``, a cuda.core stream (``__cuda_stream__``), a torch stream
    (``.cuda_stream``) or a CuPy stream (``.ptr``)."""
    if stream is None:
        return 0
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    for attr in ("cuda_stream", "ptr"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    try:
        return int(stream)
    except (TypeError, ValueError):
        raise LaunchError(f"not a CUDA stream: {stream!r}") from None


class _DeviceView(NamedTuple):
    """What a launch needs to know about a device array."""

    pointer: int
    dtype: str  # numpy dtype name, or "bfloat16"
    shape: tuple[int, ...]
    contiguous: bool
    device: int | None  # CUDA device ordinal, None when the protocol does not say


@functools.lru_cache(maxsize=None)
def _typestr_dtype(typestr: str) -> tuple[str, int]:
    """(dtype name, itemsize) of a ``__cuda_array_interface__`` typestr.

    torch and ml_dtypes spell bfloat16 ``<V2``, an opaque 2-byte type.
    """
    dtype = np.dtype(typestr)
    return ("bfloat16" if dtype.kind == "V" and dtype.itemsize == 2 else dtype.name), dtype.itemsize


def _c_contiguous(shape, strides, itemsize: int) -> bool:
    expected = itemsize
    for n, stride in zip(reversed(shape), reversed(strides)):
        if n != 1 and stride != expected:
            return False
        expected *= n
    return True


def _torch_view(tensor) -> _DeviceView:
    """A torch CUDA tensor, read through its own accessors (faster than its CAI)."""
    return _DeviceView(
        tensor.data_ptr(),
        str(tensor.dtype).removeprefix("torch."),
        tuple(tensor.shape),
        tensor.is_contiguous(),
        tensor.device.index,
    )


def _cai_view(cai: dict, where: str) -> _DeviceView:
    try:
        dtype, itemsize = _typestr_dtype(cai["typestr"])
    except TypeError:
        raise LaunchError(f"{where}: unknown __cuda_array_interface__ typestr {cai['typestr']!r}") from None
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    contiguous = strides is None or _c_contiguous(shape, strides, itemsize)
    return _DeviceView(cai["data"][0] or 0, dtype, shape, contiguous, None)


# DLPack, read in place through ctypes (DLPack 0.x "dltensor" capsules; every producer
# makes one when asked without max_version). The capsule is not consumed: dropping it
# runs the producer's deleter, and the array argument keeps the memory alive.
_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DL_TYPE_NAMES = {0: "int{}", 1: "uint{}", 2: "float{}", 4: "bfloat{}", 6: "bool"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dlpack_view(obj, device: int, stream: int, where: str) -> _DeviceView:
    # DLPack spells the legacy default stream 1 (0 is reserved as ambiguous).
    capsule = obj.__dlpack__(stream=stream or 1)
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    dt = tensor.dtype
    if dt.lanes != 1 or dt.code not in _DL_TYPE_NAMES:
        raise LaunchError(f"{where}: unsupported DLPack dtype (code {dt.code}, {dt.bits} bits, {dt.lanes} lanes)")
    shape = tuple(tensor.shape[d] for d in range(tensor.ndim))
    contiguous = not tensor.strides or _c_contiguous(
        shape, [tensor.strides[d] for d in range(tensor.ndim)], 1
    )
    return _DeviceView(
        (tensor.data or 0) + tensor.byte_offset,
        _DL_TYPE_NAMES[dt.code].format(dt.bits),
        shape,
        contiguous,
        device,
    )


def _device_view(obj, stream: int, where: str) -> _DeviceView | None:
    """Describe a CUDA array argument; None if ``obj`` is not one.

    Tries a torch CUDA tensor's accessors, then ``__cuda_array_interface__``, then DLPack.
    """
    if type(obj).__module__.startswith("torch") and getattr(obj, "is_cuda", False) is True:
        return _torch_view(obj)
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except Exception as e:  # producers raise various errors for what they cannot export
        raise LaunchError(f"{where}: its __cuda_array_interface__ failed: {e}") from e
    if cai is not None:
        return _cai_view(cai, where)
    if hasattr(obj, "__dlpack_device__"):
        device_type, device = obj.__dlpack_device__()
        if device_type in (_DL_CUDA, _DL_CUDA_MANAGED):
            return _dlpack_view(obj, device, stream, where)
    return None


def _bf16_bits(value) -> int:
    """``value`` rounded to bfloat16 (to nearest even), as its 16 bits."""
    bits = int(np.float32(value).view(np.uint32))
    if bits & 0x7FFFFFFF > 0x7F800000:
        return 0x7FC0  # NaN
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


class _Params:
    """A kernel's ``kernelParams``, allocated once: an 8-byte value slot per argument, and
    the array of slot addresses (the ``void**`` that cuLaunchKernel reads). A launch only
    writes values into the slots."""

    def __init__(self, signature: KernelSignature):
        n = len(signature.args)
        self.slots = np.zeros(max(n, 1), np.uint64)  # device pointers go here as uint64
        base = self.slots.ctypes.data
        self.argv = np.array([base + 8 * i for i in range(n)], np.uint64)
        self.address = int(self.argv.ctypes.data) if n else 0
        self.scalars = {
            i: self.slots[i : i + 1].view(np.uint16 if a.dtype == "bfloat16" else a.dtype)
            for i, a in enumerate(signature.args)
            if a.kind == "scalar"
        }

    def set_scalar(self, i: int, spec: ArgSpec, value, where: str) -> None:
        view = self.scalars[i]
        if spec.dtype == "bfloat16":
            view[0] = _bf16_bits(value)
        elif view.dtype.kind in "iu":
            info = np.iinfo(view.dtype)
            if not info.min <= int(value) <= info.max:
                raise LaunchError(f"{where}: {value!r} does not fit a {spec.describe()}")
            view[0] = int(value)
        else:
            view[0] = value


# --- kernels -------------------------------------------------------------------------


class CudaKernel:
    """One kernel of a loaded artifact, launched through cuLaunchKernel.

    Arguments follow ``signature``: a numpy array (copied in and back), a device array
    (``__cuda_array_interface__`` or DLPack, zero copy) for each memref, a Python or
    numpy scalar for each scalar. A kernel may be launched from several threads; launches
    of one kernel are serialized while its parameters are packed.
    """

    def __init__(self, module: _CudaModule, signature: KernelSignature):
        self.name = signature.name
        self.signature = signature
        self._module = module
        self._function = None
        self._params = _Params(signature)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<CudaKernel {self.signature.describe()}>"

    def __call__(self, *args, grid=(1, 1, 1), block=(1, 1, 1), shared_mem=0, stream=None):
        self.launch(grid, block, *args, shared_mem=shared_mem, stream=stream)

    def launch(self, grid, block, *args, shared_mem: int = 0, stream=None) -> None:
        """Launch on ``grid`` x ``block`` (ints or tuples of up to 3)."""
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        stream = _stream_handle(stream)
        with self._lock:
            host = self._pack(args, self._params, stream)
            function = self._cu_function()
            if host:
                self._launch_copying(function, grid, block, shared_mem, stream, host)
            else:
                _check(
                    _driver().cuLaunchKernel(
                        function, *grid, *block, shared_mem, stream, self._params.address, 0
                    ),
                    "cuLaunchKernel",
                )

    def bind(self, *args, grid, block, shared_mem: int = 0, stream=None) -> "BoundLaunch":
        """Check and pack ``args`` once; return a zero-argument callable that only launches.

        For benchmarks and hot loops. The arguments must be device arrays and scalars
        (a numpy array needs copies around every launch); the callable keeps them alive.
        """
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        handle = _stream_handle(stream)
        params = _Params(self.signature)
        host = self._pack(args, params, handle)
        if host:
            raise LaunchError(
                f"kernel {self.name}: bind() takes device arrays and scalars;"
                f" argument {host[0][0]} is a numpy array"
            )
        function = self._cu_function()
        call = (function, *grid, *block, shared_mem, _driver().CUstream(handle), params.address, 0)
        return BoundLaunch(self, args, params, call)

    def _cu_function(self):
        _device()  # the context must be current in the launching thread
        if self._function is None:
            self._function = self._module.function(self.name)
        return self._function

    def _pack(self, args: tuple, params: _Params, stream: int) -> list[tuple[int, np.ndarray]]:
        """Check ``args`` and write them into ``params``; return the host arrays to copy.

        Device pointers and scalars are written here; each numpy array comes back as
        (index, array) for the caller to copy in. No CUDA call happens in here.
        """
        sig = self.signature
        sig.check_count(args)
        host = []
        for i, (arg, spec) in enumerate(zip(args, sig.args)):
            where = f"kernel {sig.name}: argument {i}"
            if isinstance(arg, np.ndarray):
                sig.check_array(i, arg.dtype.name, arg.shape)
                if not arg.flags.c_contiguous:
                    raise LaunchError(f"{where} must be C-contiguous; pass np.ascontiguousarray(...)")
                host.append((i, arg))
                continue
            view = _device_view(arg, stream, where)
            if view is not None:
                sig.check_array(i, view.dtype, view.shape)
                if not view.contiguous:
                    raise LaunchError(f"{where} must be a C-contiguous device array")
                if view.device not in (None, 0):
                    raise LaunchError(f"{where} is on CUDA device {view.device}; kernels run on device 0")
                params.slots[i] = view.pointer
            elif spec.kind == "scalar" or isinstance(arg, (int, float, np.generic)):
                sig.check_scalar(i, arg)
                params.set_scalar(i, spec, arg, where)
            else:
                raise LaunchError(
                    f"{where} must be {spec.describe()}: a numpy array or a CUDA array"
                    f" (__cuda_array_interface__ or DLPack), got {type(arg).__name__}"
                )
        return host

    def _launch_copying(self, function, grid, block, shared_mem, stream, host) -> None:
        """Copy the numpy arrays in, launch, copy the writeable ones back, synchronize."""
        driver = _driver()
        buffers = []  # (array, device pointer)
        try:
            for i, array in host:
                pointer = 0
                if array.nbytes:
                    pointer = _check(driver.cuMemAlloc(array.nbytes), "cuMemAlloc")
                    buffers.append((array, pointer))
                    _check(
                        driver.cuMemcpyHtoDAsync(pointer, array.ctypes.data, array.nbytes, stream),
                        "cuMemcpyHtoDAsync",
                    )
                self._params.slots[i] = int(pointer)
            _check(
                driver.cuLaunchKernel(
                    function, *grid, *block, shared_mem, stream, self._params.address, 0
                ),
                "cuLaunchKernel",
            )
            for array, pointer in buffers:
                if array.flags.writeable:
                    _check(
                        driver.cuMemcpyDtoHAsync(array.ctypes.data, pointer, array.nbytes, stream),
                        "cuMemcpyDtoHAsync",
                    )
            _check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize")
        finally:
            for _, pointer in buffers:
                driver.cuMemFree(pointer)  # best effort: an error above is the one to report


class BoundLaunch:
    """A launch with its arguments packed (``CudaKernel.bind``): calling it only calls
    cuLaunchKernel."""

    __slots__ = ("kernel", "args", "_params", "_call", "_launch")

    def __init__(self, kernel: CudaKernel, args: tuple, params: _Params, call: tuple):
        self.kernel = kernel
        self.args = args  # keeps the device arrays alive
        self._params = params
        self._call = call
        self._launch = _driver().cuLaunchKernel

    def __call__(self) -> None:
        _device()
        err = self._launch(*self._call)[0]
        if err:
            raise CudaError("cuLaunchKernel", int(err), _error_text(err))


class Kernels(Mapping):
    """Kernels by name, as items or attributes: ``kernels["demo"]``, ``kernels.demo``."""

    def __init__(self, kernels: dict):
        self._kernels = dict(kernels)

    def __getitem__(self, name: str):
        try:
            return self._kernels[name]
        except KeyError:
            raise KeyError(f"no kernel named {name!r}; there are {sorted(self._kernels)}") from None

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
            raise AttributeError(f"no kernel named {name!r}; there are {sorted(self._kernels)}") from None

    def __dir__(self):
        return [*super().__dir__(), *self._kernels]

    def __repr__(self) -> str:
        return f"Kernels({', '.join(self._kernels)})"


def cuda_kernels(artifact: Artifact) -> Kernels:
    """The artifact's kernels, sharing one module that is loaded on the first launch."""
    module = _CudaModule(artifact)
    return Kernels({s.name: CudaKernel(module, s) for s in artifact.signatures})


# --- entry points --------------------------------------------------------------------


def compile(module_or_text, *, arch="sm_90a", backend="auto", cache=True, options=None):  # noqa: A001
    """Compile a module (``ir.Module`` or its text) and return its kernels.

    ``backend``: ``"cuda"`` (CudaKernel), ``"interpreter"`` (runs on the CPU), or
    ``"auto"``: cuda when a GPU is available. With ``cache``, the on-disk compile cache is
    consulted first; a hit needs no MLIR. ``options`` go to ``pipeline.build_artifact``.
    Building a CUDA backend makes no CUDA call: modules load on the first launch.
    """
    text = module_or_text if isinstance(module_or_text, str) else str(module_or_text)
    options = dict(options or {})
    if backend == "auto":
        backend = "cuda" if gpu_available() else "interpreter"
    if backend not in ("cuda", "interpreter"):
        raise ValueError(f"backend must be 'auto', 'cuda' or 'interpreter', got {backend!r}")

    if backend == "interpreter":
        from .interpreter import interpreted_kernels
        from .compiler import lower_tile_ops
        from .options import Options

        lowered, signatures = lower_tile_ops(text, Options.from_mapping(options))
        return Kernels(interpreted_kernels(lowered, signatures))

    artifact = _cache.lookup(text, arch, options) if cache else None
    if artifact is None:
        try:
            from .compiler import build_artifact
            from .options import Options
        except ImportError as e:
            raise ImportError(
                f"no compiled kernel for this module ({arch}) in the compile cache at"
                f" {_cache.cache_dir()}, and compiling it needs the MLIR Python bindings ({e})"
            ) from e
        artifact = build_artifact(text, Options.from_mapping({**options, "chip": arch}))
        if cache:
            artifact = _cache.store(text, arch, options, artifact)
    return cuda_kernels(artifact)


def load_kernel(path, name: str | None = None):
    """Kernels from a saved artifact: a directory (``Artifact.save``), or a ``.cubin`` or
    ``.ptx`` file with ``signatures.json`` beside it. One CudaKernel if ``name`` is given,
    else all of them as Kernels. A bare cubin is loaded as is, whatever its arch."""
    path = Path(path)
    if path.is_dir():
        artifact = Artifact.load(path)
    elif path.suffix in (".cubin", ".ptx"):
        signatures_path = path.with_name("signatures.json")
        try:
            signatures = Artifact.signatures_from_json(signatures_path.read_text())
        except OSError as e:
            raise FileNotFoundError(f"{path} needs its launch signatures in {signatures_path}") from e
        if path.suffix == ".cubin":
            artifact = Artifact(ptx="", cubin=path.read_bytes(), signatures=signatures, arch="")
        else:
            artifact = Artifact(ptx=path.read_text(), cubin=None, signatures=signatures, arch="")
    else:
        raise ValueError(f"{path}: expected an artifact directory, a .cubin or a .ptx file")
    kernels = cuda_kernels(artifact)
    return kernels if name is None else kernels[name]
