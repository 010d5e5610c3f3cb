"""bfloat16 on the host: rounding, NaN, bits, and numpy interop, defined once.

A bf16 is the top 16 bits of an f32. numpy has no bf16 dtype, so host code holds bf16
arrays as their bits (``uint16``), or as ``ml_dtypes.bfloat16`` arrays, which are the
same bits (``bits_of``); the interpreter computes in float32 values that are exactly
bf16 (``rounded``).

* ``to_bits(x)``: numbers (f64, f32, f16, integers, bf16) -> bf16 bits, rounded once to
  nearest even (f64 through f32 rounded to odd, which rounds the same as once; integers
  through f64, so those beyond 2**53 round twice). A NaN becomes the quiet NaN
  ``0x7FC0`` with the NaN's sign, as ml_dtypes and torch convert; ``nan=`` gives one
  pattern for every NaN instead (a GPU's ``cvt`` gives the canonical ``0x7FFF``).
* ``from_bits(b)``: bits -> float32 values, exactly (a shift: a NaN keeps its payload,
  a signaling NaN stays signaling).
* ``rounded(x)``: ``from_bits(to_bits(x))``; ``truncated(v)``: the bits of float32
  values that are already bf16 (the top half, NaN payloads included).

``to_bits`` uses ml_dtypes where it is installed, else ``numpy_to_bits``, which gives the
same bits (test/python/test_bf16.py checks the two against each other).
"""

from __future__ import annotations

import numpy as np

try:  # a small wheel of numpy dtypes; a GPU machine may lack it
    import ml_dtypes
except ImportError:  # pragma: no cover - depends on the machine
    ml_dtypes = None

DTYPE = np.dtype(ml_dtypes.bfloat16) if ml_dtypes is not None else None  # None without ml_dtypes
QUIET_NAN = 0x7FC0  # what a host conversion makes of a NaN, with the NaN's sign
_SIGN = 0x8000


def is_bf16(dtype) -> bool:
    """Whether a numpy dtype is ml_dtypes' bfloat16 (torch and ml_dtypes spell it as the
    opaque 2-byte ``<V2`` in array interfaces)."""
    dtype = np.dtype(dtype)
    return dtype.kind == "V" and dtype.itemsize == 2  # ml_dtypes' is kind V too


def bits_of(a) -> np.ndarray:
    """The bits of a bf16 array, ``uint16`` bits or ``ml_dtypes.bfloat16``, as a
    ``uint16`` view (no copy)."""
    a = np.asarray(a)
    if a.dtype == np.uint16:
        return a
    if is_bf16(a.dtype):
        return a.view(np.uint16)
    raise TypeError(f"a bf16 array holds uint16 bits or ml_dtypes.bfloat16, not {a.dtype}")


def _float(x) -> np.ndarray:
    """``x`` as float32 (f32, f16: exactly) or float64 (the rest), never a copy of a
    float32 or float64 array."""
    x = np.asarray(x)
    if x.dtype == np.float32 or x.dtype == np.float64:
        return x
    if x.dtype == np.float16:
        return x.astype(np.float32)
    return x.astype(np.float64)


def round_to_odd_f32(x) -> np.ndarray:
    """float64 -> float32 rounded to odd (a bit lost sets the last bit), so that rounding
    it again to a narrower type (bf16) is the same as rounding once."""
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        y = x.astype(np.float32)
    back = y.astype(np.float64)
    bits = y.view(np.uint32) - (np.abs(back) > np.abs(x)).astype(np.uint32)
    bits |= ((back != x) & (x == x)).astype(np.uint32)
    return bits.view(np.float32)


def numpy_to_bits(x) -> np.ndarray:
    """``to_bits`` in plain numpy (NaN: the quiet NaN with its sign)."""
    x = _float(x)
    if x.dtype == np.float64:
        x = round_to_odd_f32(x)
    b = x.reshape(-1).view(np.uint32).astype(np.uint64)  # room for the carry
    out = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    if np.count_nonzero(nan):
        out[nan] = ((b[nan] >> 16) & _SIGN).astype(np.uint16) | QUIET_NAN
    return out.reshape(x.shape)


def ml_dtypes_to_bits(x) -> np.ndarray:
    """``to_bits`` through ml_dtypes (ImportError without it)."""
    if DTYPE is None:
        raise ImportError("ml_dtypes is not installed")
    x = _float(x)
    if x.dtype == np.float32:  # the interpreter's case: no overflow, no warning to silence
        return x.astype(DTYPE).view(np.uint16)
    with np.errstate(over="ignore"):  # beyond bf16's range: infinity
        return x.astype(DTYPE).view(np.uint16)


def to_bits(x, nan: int | None = None) -> np.ndarray:
    """Numbers -> bf16 bits (``uint16``, an array of ``x``'s shape); a bf16 array's own
    bits. ``nan``: the bits of every NaN (default: ``QUIET_NAN`` with the NaN's sign)."""
    a = np.asarray(x)
    if is_bf16(a.dtype):
        return a.view(np.uint16)
    out = (numpy_to_bits if DTYPE is None else ml_dtypes_to_bits)(a)
    if nan is not None:
        isnan = (out & 0x7FFF) > 0x7F80
        if np.count_nonzero(isnan):
            out = np.where(isnan, np.uint16(nan), out)
    return out


def from_bits(bits) -> np.ndarray:
    """bf16 bits -> float32 values, exactly."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def rounded(x, nan: int | None = None):
    """Numbers -> float32 values rounded to bf16 (see ``to_bits``); a scalar for a scalar."""
    return from_bits(to_bits(x, nan))[()]


def truncated(values) -> np.ndarray:
    """The bf16 bits of float32 values that are bf16 already: their top half."""
    return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def as_ml_dtypes(bits) -> np.ndarray:
    """``uint16`` bits as an ``ml_dtypes.bfloat16`` array (a view; ImportError without it)."""
    if DTYPE is None:
        raise ImportError("ml_dtypes is not installed")
    return np.asarray(bits, np.uint16).view(DTYPE)
