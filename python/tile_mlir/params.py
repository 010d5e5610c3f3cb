"""A kernel's ``kernelParams``: a launch's arguments packed for ``cuLaunchKernel``.

* ``Params`` is the block itself, allocated once per kernel (and per bound launch): an
  8-byte slot per argument and the ``void**`` array of their addresses;
* ``pack`` checks every argument (``arrays.argument``, the checks both backends make)
  and writes it into a ``Params``;
* ``Packer`` is the launch's fast path, for what hot loops pass: torch CUDA tensors (read
  through ``data_ptr()`` and the tensor's own accessors, compared with what the kernel
  was compiled for, without DLPack or ``__cuda_array_interface__``), Python ints and
  floats. Anything else, or anything that does not match, goes through ``pack``, so the
  checks and their errors are the same either way.

torch is never imported here: a tensor is recognized once ``torch`` is in
``sys.modules`` (the caller's tensors put it there).
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from . import bf16
from .arrays import DEVICE, HOST, argument
from .signature import ArgSpec, KernelSignature


class Params:
    """A kernel's ``kernelParams``, allocated once: an 8-byte value slot per argument, and
    the array of slot addresses (the ``void**`` that cuLaunchKernel reads). A launch only
    writes values into the slots: a device pointer into ``slots[i]``, a scalar through
    ``scalars[i]``, a ctypes view of its slot."""

    def __init__(self, signature: KernelSignature):
        n = len(signature.args)
        self.slots = (ctypes.c_uint64 * max(n, 1))()
        base = ctypes.addressof(self.slots)
        self.argv = (ctypes.c_uint64 * max(n, 1))(*(base + 8 * i for i in range(n)))
        self.address = ctypes.addressof(self.argv) if n else 0
        self.scalars = {i: _SCALAR_CTYPES[a.dtype].from_buffer(self.slots, 8 * i)
                        for i, a in enumerate(signature.args) if a.kind == "scalar"}

    def set_scalar(self, i: int, spec: ArgSpec, value) -> None:
        """Write a checked scalar (``KernelSignature.check_scalar``) into its slot."""
        bits = _TO_BITS.get(spec.dtype)
        self.scalars[i].value = value if bits is None else bits(value)


def _f16_bits(value) -> int:
    with np.errstate(over="ignore"):  # a value beyond float16 is its infinity
        return int(np.float16(value).view(np.uint16))


def _bf16_bits(value) -> int:
    """Rounded once to the nearest bf16, a NaN the quiet NaN with its sign (``bf16``)."""
    return int(bf16.to_bits(value))


_TO_BITS = {"bfloat16": _bf16_bits, "float16": _f16_bits}


# The C type of a scalar argument's slot, by dtype; bfloat16 goes as its 16 bits.
_SCALAR_CTYPES = {
    "float32": ctypes.c_float, "float64": ctypes.c_double, "float16": ctypes.c_uint16, "bfloat16": ctypes.c_uint16,
    "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "bool": ctypes.c_bool,
}


def pack(sig: KernelSignature, args: tuple, params: Params, stream: int) -> list[tuple[int, np.ndarray]]:
    """Check ``args`` against ``sig`` (``argument``) and write them into ``params``;
    return the host (numpy) arrays, as (index, array), for the caller to copy to the
    device (to a fresh buffer, aligned whatever the array's own address).

    No CUDA call happens in here: a bad argument raises ``LaunchError`` before the
    driver is touched.
    """
    sig.check_count(args)
    host = []
    for i, arg in enumerate(args):
        kind, value = argument(sig, i, arg, stream)
        if kind is HOST:
            host.append((i, value))
        elif kind is DEVICE:
            params.slots[i] = value
        else:
            params.set_scalar(i, sig.args[i], value)
    return host


# How the fast path takes an argument, by its exact type (``_kind``).
_TORCH, _INT, _FLOAT, _OTHER = 0, 1, 2, 3
_KINDS: dict[type, int] = {int: _INT, float: _FLOAT}


def _kind(t: type) -> int:
    """_TORCH for a torch.Tensor (or a subclass), else _OTHER; remembered per type once
    torch is imported."""
    torch = sys.modules.get("torch")
    tensor = getattr(torch, "Tensor", None)
    if isinstance(tensor, type) and issubclass(t, tensor):
        _KINDS[t] = _TORCH
        return _TORCH
    if torch is not None:
        _KINDS[t] = _OTHER
    return _OTHER


class _Arg:
    """What the fast path needs of one argument: for a memref, its shape, the torch dtype
    (looked up once torch is there) and alignment; for a scalar, its slot and range."""

    __slots__ = ("align", "dtype", "high", "low", "memref", "shape", "slot", "takes_float", "torch_dtype")

    def __init__(self, spec: ArgSpec, slot):
        self.memref = spec.kind == "memref"
        self.shape, self.dtype, self.align = spec.shape, spec.dtype, spec.align
        self.torch_dtype = None
        self.slot = slot  # a scalar's ctypes view of its slot
        self.low = self.high = None  # an integer's range, when ints go straight in
        self.takes_float = spec.kind == "scalar" and spec.dtype in ("float32", "float64")
        if spec.kind == "scalar" and spec.dtype in _INT_RANGES:
            self.low, self.high = _INT_RANGES[spec.dtype]


_INT_RANGES = {f"int{b}": (-(1 << (b - 1)), (1 << (b - 1)) - 1) for b in (8, 16, 32, 64)}
_INT_RANGES.update({f"uint{b}": (0, (1 << b) - 1) for b in (8, 16, 32, 64)})


class Packer:
    """A kernel's launch arguments, packed into its ``Params`` the fast way where it can
    (module docstring): ``fill(args, stream)`` returns the numpy arrays to copy, as
    ``pack`` does. Not thread-safe: the kernel's lock guards it."""

    def __init__(self, signature: KernelSignature):
        self.signature = signature
        self.params = Params(signature)
        self._args = tuple(_Arg(a, self.params.scalars.get(i)) for i, a in enumerate(signature.args))
        self._torch = None  # the torch module, once a tensor came

    def fill(self, args: tuple, stream: int) -> list:
        specs = self._args
        if len(args) != len(specs):
            return pack(self.signature, args, self.params, stream)
        slots = self.params.slots
        host = None
        for i, arg in enumerate(args):
            t = type(arg)
            kind = _KINDS.get(t)
            if kind is None:
                kind = _kind(t)
            a = specs[i]
            if kind == _TORCH and a.memref:
                dtype = a.torch_dtype
                if dtype is None:
                    dtype = a.torch_dtype = self._torch_dtype(a.dtype)
                pointer = arg.data_ptr()
                if (arg.dtype is dtype and arg.shape == a.shape and not pointer % a.align and arg.is_cuda
                        and arg.get_device() == 0 and arg.is_contiguous()):
                    slots[i] = pointer
                    continue
            elif kind == _INT and a.low is not None:
                if a.low <= arg <= a.high:
                    a.slot.value = arg
                    continue
            elif kind == _FLOAT and a.takes_float:
                a.slot.value = arg
                continue
            # anything else: the full check, the same as pack's (and its error)
            what, value = argument(self.signature, i, arg, stream)
            if what is HOST:
                host = [] if host is None else host
                host.append((i, value))
            elif what is DEVICE:
                slots[i] = value
            else:
                self.params.set_scalar(i, self.signature.args[i], value)
        return host or []

    def _torch_dtype(self, name: str):
        """The torch dtype of a numpy dtype name (torch spells them alike), or a sentinel
        no tensor has."""
        torch = sys.modules.get("torch")
        dtype = getattr(torch, name, None) if torch is not None else None
        return dtype if dtype is not None else _NO_DTYPE


_NO_DTYPE = object()
