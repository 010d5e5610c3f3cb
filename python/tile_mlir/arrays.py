"""Kernel arguments, as a launch sees them: grid sizes, streams, arrays and parameters.

Pure Python and numpy (no CUDA call, no MLIR), shared by the CUDA runtime
(``tile_mlir.runtime``) and usable by any other launcher:

* ``dim3`` and ``stream_handle`` normalize a launch's grid/block sizes and its stream;
* ``device_view`` reads a device array (a torch CUDA tensor, ``__cuda_array_interface__``
  or DLPack) into a ``DeviceView``: its pointer, dtype, shape, contiguity and device;
* ``Params`` is a kernel's ``kernelParams`` block, allocated once, and ``pack`` checks a
  launch's arguments against the kernel's signature and writes them into it;
* ``check_unwritten`` is the rule for read-only numpy arrays: fine as inputs, an error
  if the kernel wrote to them (their result would be lost).
"""

from __future__ import annotations

import ctypes
import functools
from typing import NamedTuple

import numpy as np

from . import bf16
from .errors import LaunchError
from .signature import ArgSpec, KernelSignature


def dim3(value, what: str) -> tuple[int, int, int]:
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


def shared_bytes(value) -> int:
    """A launch's dynamic shared memory size: a non-negative int of bytes."""
    if type(value) is int and value >= 0:  # the common case, fast
        return value
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise LaunchError(f"shared_mem must be a non-negative int (bytes), got {value!r}")
    return int(value)


def stream_handle(stream) -> int:
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


def _torch_view(tensor) -> DeviceView:
    """A torch CUDA tensor, read through its own accessors (faster than its CAI)."""
    return DeviceView(
        tensor.data_ptr(),
        str(tensor.dtype).removeprefix("torch."),
        tuple(tensor.shape),
        tensor.is_contiguous(),
        tensor.device.index,
    )


def _cai_view(cai: dict, where: str) -> DeviceView:
    try:
        dtype, itemsize = _typestr_dtype(cai["typestr"])
    except TypeError:
        raise LaunchError(f"{where}: unknown __cuda_array_interface__ typestr {cai['typestr']!r}") from None
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


# --- kernelParams --------------------------------------------------------------------


class Params:
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
        if view.dtype.kind in "iu" and spec.dtype != "bfloat16":
            info = np.iinfo(view.dtype)
            if not info.min <= int(value) <= info.max:
                raise LaunchError(f"{where}: {value!r} does not fit a {spec.describe()}")
            view[0] = int(value)
            return
        try:  # bf16: rounded once, as the interpreter does; NaN: the quiet NaN, its sign kept
            view[0] = bf16.to_bits(value) if spec.dtype == "bfloat16" else value
        except OverflowError:  # an int beyond any float
            raise LaunchError(f"{where}: {value!r} does not fit a {spec.describe()}") from None


def pack(sig: KernelSignature, args: tuple, params: Params, stream: int) -> list[tuple[int, np.ndarray]]:
    """Check ``args`` against ``sig`` and write them into ``params``; return the host
    (numpy) arrays, as (index, array), for the caller to copy to the device.

    Device pointers and scalars are written here. No CUDA call happens in here: a bad
    argument raises ``LaunchError`` before the driver is touched.
    """
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
        view = device_view(arg, stream, where)
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


def check_unwritten(kernel: str, i: int, before: np.ndarray, after: np.ndarray) -> None:
    """The rule for a read-only numpy argument: it may be an input, but a launch cannot
    give it a result. ``before`` is the array as passed, ``after`` the kernel's copy of it
    once the launch is done; if their bytes differ the kernel wrote to it, and the result
    would be silently lost, so this raises ``LaunchError``."""
    if not np.array_equal(before.reshape(-1).view(np.uint8), after.reshape(-1).view(np.uint8)):
        raise LaunchError(
            f"kernel {kernel}: argument {i} is a read-only numpy array, but the kernel wrote to it;"
            " pass a writeable array (np.array(x) makes one) to get the result back"
        )
