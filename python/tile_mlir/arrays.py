"""Kernel arguments, as a launch sees them: grid sizes, streams, arrays and parameters.

Pure Python and numpy (no CUDA call, no MLIR), shared by the CUDA runtime
(``tile_mlir.runtime``) and usable by any other launcher:

* ``dim3`` and ``stream_handle`` normalize a launch's grid/block sizes and its stream;
  ``torch_stream`` reads torch's current stream, fast;
* ``device_view`` reads a device array (a torch CUDA tensor, ``__cuda_array_interface__``
  or DLPack) into a ``DeviceView``: its pointer, dtype, shape, contiguity and device;
* ``check_launch`` and ``argument`` are the checks of every launch, CUDA or interpreted
  (``params`` packs what they pass for cuLaunchKernel);
* ``check_unwritten`` is the rule for read-only numpy arrays: fine as inputs, an error
  if the kernel wrote to them (their result would be lost).
"""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import NamedTuple

import numpy as np

from . import bf16
from .errors import LaunchError
from .signature import KernelSignature, summary  # noqa: F401  (summary: for both backends)


def dim3(value, what: str) -> tuple[int, int, int]:
    """A grid or block size: an int, or a tuple of 1 to 3 ints, padded with ones."""
    if type(value) is int and value >= 1:  # the common case, fast
        return (value, 1, 1)
    dims = (value,) if isinstance(value, (int, np.integer)) else value
    try:
        dims = tuple(dims) if len(dims) <= 3 else ()
    except TypeError:
        dims = ()
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and d >= 1 for d in dims):
        raise LaunchError(f"{what} must be a positive int or a tuple of 1 to 3, got {summary(value)}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


def shared_bytes(value) -> int:
    """A launch's dynamic shared memory size: a non-negative int of bytes."""
    if type(value) is int and value >= 0:  # the common case, fast
        return value
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise LaunchError(f"shared_mem must be a non-negative int (bytes), got {summary(value)}")
    return int(value)


def stream_handle(stream) -> int:
    """A stream as a raw handle, from None (the default stream), an int, a driver
    ``CUstream``, a cuda.core stream (``__cuda_stream__``), a torch stream
    (``.cuda_stream``) or a CuPy stream (``.ptr``)."""
    if stream is None:
        return 0
    if type(stream) is int:
        return stream
    try:
        if hasattr(stream, "__cuda_stream__"):
            return int(stream.__cuda_stream__()[1])
        for attr in ("cuda_stream", "ptr"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        if isinstance(stream, (str, bytes, float, bool)):
            raise TypeError
        return int(stream)
    except (TypeError, ValueError):
        raise LaunchError(f"not a CUDA stream: {summary(stream)}") from None


def torch_stream(device: int = 0) -> int:
    """The handle of torch's current CUDA stream on ``device``, for ``stream=``: read the
    way torch's own launchers read it (``torch._C._cuda_getCurrentRawStream``, a fraction
    of ``torch.cuda.current_stream()``'s cost), else through that. The caller has
    imported torch; this never imports it."""
    torch = sys.modules["torch"]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(device) if raw is not None else torch.cuda.current_stream(device).cuda_stream


def check_launch(sig: KernelSignature, grid, block, shared_mem, stream) -> tuple:
    """The checks every launch and bind makes first, on either backend: the grid and
    block (``dim3``; the block must suit the kernel's tile ops, ``check_block``, and the
    grid its clusters, ``check_grid``), ``shared_mem`` and ``stream``. Returns them
    normalized: (grid, block, bytes, stream handle)."""
    grid, block = dim3(grid, "grid"), dim3(block, "block")
    sig.check_block(block)
    sig.check_grid(grid)
    return grid, block, shared_bytes(shared_mem), stream_handle(stream)


def check_shared(sig: KernelSignature, shared_mem: int, limit: int, static: int) -> None:
    """Raise LaunchError if a block cannot have ``shared_mem`` bytes of dynamic shared
    memory: at most ``limit`` bytes of shared memory in all (the device's opt-in limit
    per block), less the kernel's ``static`` bytes."""
    if shared_mem > limit - static:
        raise LaunchError(
            f"kernel {sig.name}: shared_mem={shared_mem} bytes of dynamic shared memory, but a block of it can "
            f"have at most {max(limit - static, 0)} ({limit} bytes per block, less its {static} bytes of static "
            "shared memory)"
        )


def check_carveout(sig: KernelSignature, carveout) -> int | None:
    """``bind``'s ``carveout``: None, or an int from 0 to 100 (a percentage), else LaunchError."""
    if carveout is not None and (type(carveout) is not int or not 0 <= carveout <= 100):
        raise LaunchError(f"kernel {sig.name}: carveout must be a percentage, an int from 0 to 100, got {carveout!r}")
    return carveout


# What ``argument`` found: a numpy array, a device pointer, or a scalar's value.
HOST, DEVICE, SCALAR = "host", "device", "scalar"


def argument(sig: KernelSignature, i: int, arg, stream: int, device: bool = True) -> tuple[str, object]:
    """Check argument ``i`` of a launch against ``sig``, for either backend: (HOST, the
    numpy array: any layout, its dtype and shape checked), (DEVICE, its pointer: a
    contiguous CUDA array on device 0, as aligned as the kernel needs) or (SCALAR, its
    value, checked to fit). Where there is no device (``device=False``: the
    interpreter), a CUDA array is an error that says so."""
    spec = sig.args[i]
    if isinstance(arg, np.ndarray):
        sig.check_array(i, arg.dtype.name, arg.shape)
        return HOST, arg
    where = f"kernel {sig.name}: argument {i}"
    view = device_view(arg, stream, where)
    if view is not None:
        if not device:
            raise LaunchError(f"{where} is a CUDA array ({type(arg).__name__} {view.dtype}[{', '.join(map(str, view.shape))}]), "
                              "but the interpreter runs on the CPU: pass a numpy array")
        sig.check_array(i, view.dtype, view.shape)
        if not view.contiguous:
            raise LaunchError(f"{where} must be a C-contiguous device array")
        if view.device not in (None, 0):
            raise LaunchError(f"{where} is on CUDA device {view.device}; kernels run on device 0")
        sig.check_aligned(i, view.pointer)
        return DEVICE, view.pointer
    if spec.kind == "memref" and not isinstance(arg, (int, float, np.generic)):
        raise LaunchError(f"{where} must be {spec.describe()}: a numpy array or a CUDA array"
                          f" (__cuda_array_interface__ or DLPack), got {summary(arg)}")
    sig.check_scalar(i, arg)
    return SCALAR, arg


# --- device arrays ---------------------------------------------------------------------


class DeviceView(NamedTuple):
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
    return ("bfloat16" if bf16.is_bf16(dtype) else dtype.name), dtype.itemsize


def _c_contiguous(shape, strides, itemsize: int) -> bool:
    expected = itemsize
    for n, stride in zip(reversed(shape), reversed(strides)):
        if n != 1 and stride != expected:
            return False
        expected *= n
    return True


def _is_torch_cuda(obj) -> bool:
    """Whether ``obj`` is a torch CUDA tensor: a ``torch.Tensor`` once torch is imported
    (never imported here), or an object of a torch module's type."""
    torch = sys.modules.get("torch")
    tensor = getattr(torch, "Tensor", None)
    is_tensor = isinstance(obj, tensor) if isinstance(tensor, type) else type(obj).__module__.startswith("torch")
    return is_tensor and getattr(obj, "is_cuda", False) is True


def _torch_view(tensor) -> DeviceView:
    """A torch CUDA tensor, read through its own accessors (faster than its CAI)."""
    return DeviceView(
        tensor.data_ptr(),
        str(tensor.dtype).removeprefix("torch."),
        tuple(tensor.shape),
        tensor.is_contiguous(),
        tensor.get_device(),
    )


def _cai_view(cai: dict, where: str) -> DeviceView:
    try:
        dtype, itemsize = _typestr_dtype(cai["typestr"])
    except TypeError:
        typestr = cai["typestr"]
        shown = repr(typestr) if isinstance(typestr, str) and len(typestr) <= 16 else summary(typestr)
        raise LaunchError(f"{where}: unknown __cuda_array_interface__ typestr {shown}") from None
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    contiguous = strides is None or _c_contiguous(shape, strides, itemsize)
    return DeviceView(cai["data"][0] or 0, dtype, shape, contiguous, None)


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


def _dlpack_view(obj, device: int, stream: int, where: str) -> DeviceView:
    # DLPack spells the legacy default stream 1 (0 is reserved as ambiguous).
    try:
        capsule = obj.__dlpack__(stream=stream or 1)
    except Exception as e:  # producers raise various errors for what they cannot export
        raise LaunchError(f"{where}: its __dlpack__ failed: {e}") from e
    tensor = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    dt = tensor.dtype
    if dt.lanes != 1 or dt.code not in _DL_TYPE_NAMES:
        raise LaunchError(f"{where}: unsupported DLPack dtype (code {dt.code}, {dt.bits} bits, {dt.lanes} lanes)")
    shape = tuple(tensor.shape[d] for d in range(tensor.ndim))
    contiguous = not tensor.strides or _c_contiguous(
        shape, [tensor.strides[d] for d in range(tensor.ndim)], 1
    )
    return DeviceView(
        (tensor.data or 0) + tensor.byte_offset,
        _DL_TYPE_NAMES[dt.code].format(dt.bits),
        shape,
        contiguous,
        device,
    )


def device_view(obj, stream: int, where: str) -> DeviceView | None:
    """Describe a CUDA array argument; None if ``obj`` is not one.

    Tries a torch CUDA tensor's accessors, then ``__cuda_array_interface__``, then DLPack.
    """
    if _is_torch_cuda(obj):
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


def check_unwritten(kernel: str, i: int, before: np.ndarray, after: np.ndarray) -> None:
    """The rule for a read-only numpy argument: it may be an input, but a launch cannot
    give it a result. ``before`` is the array as passed, ``after`` the kernel's copy of it
    once the launch is done; if their bytes differ the kernel wrote to it, and the result
    would be silently lost, so this raises ``LaunchError``."""
    if not np.array_equal(np.ascontiguousarray(before).reshape(-1).view(np.uint8), after.reshape(-1).view(np.uint8)):
        raise LaunchError(
            f"kernel {kernel}: argument {i} is a read-only numpy array, but the kernel wrote to it;"
            " pass a writeable array (np.array(x) makes one) to get the result back"
        )
