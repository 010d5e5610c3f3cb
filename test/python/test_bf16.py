"""tile_mlir.bf16: the one definition of bf16 on the host.

Its two paths, ml_dtypes and plain numpy, must give the same bits on every input: random
bit patterns of f32 and f64 (NaN payloads of both signs, infinities, -0.0 and subnormals
among them), every f16, exact ties and the values just beside them, integers. Both are
also checked against an exact model written here (Python's fractions), and NaN rules
against the module's documentation.
"""

from fractions import Fraction

import numpy as np
import pytest
from tile_mlir import bf16

ml = pytest.importorskip("ml_dtypes")
# NaNs widened to f64 here, and infinities minus themselves, are inputs, not mistakes
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def _value(b: int) -> Fraction:
    """The magnitude of positive bf16 bits ``b``; 0x7F80 stands for 2**128, which is
    where rounding to nearest even goes to infinity."""
    if b == 0x7F80:
        return Fraction(2) ** 128
    return Fraction(float(np.uint32(b << 16).view(np.float32)))


def exact_bits(x: float) -> int:
    """The bf16 nearest to the float ``x`` (ties to even), by exact arithmetic; NaN is
    the quiet NaN with its sign."""
    sign = 0x8000 if np.signbit(x) else 0
    if np.isnan(x):
        return sign | 0x7FC0
    q = Fraction(abs(float(x))) if np.isfinite(x) else Fraction(2) ** 200
    lo, hi = 0, 0x7F80  # the largest b with _value(b) <= q, by bisection
    if q >= _value(hi):
        return sign | 0x7F80
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _value(mid) <= q else (lo, mid)
    below, above = q - _value(lo), _value(hi) - q
    return sign | (lo if below < above or (below == above and lo % 2 == 0) else hi)


def f32_patterns(rng, n):
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    bits[::7] = (bits[::7] & 0xFFFF0000) | 0x8000  # exact ties
    bits[1::7] = (bits[1::7] & 0xFFFF0000) | 0x8001  # just above
    bits[2::7] = (bits[2::7] & 0xFFFF0000) | 0x7FFF  # just below
    bits[3::7] = (bits[3::7] & 0x807FFFFF) | 0x7F800000  # NaN payloads and infinities
    bits[4::7] &= 0x807FFFFF  # subnormals and zeros
    special = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7F7F8000, 0x7F7F7FFF, 0xFF7F8000, 0x00008000,
               0x00018000, 0x7FC00000, 0xFFFFFFFF, 0x7F800001, 0xFF800001]
    return np.concatenate([bits, np.array(special, np.uint32)]).view(np.float32)


def f64_values(rng, n):
    bits = rng.integers(0, 2**63, n, dtype=np.uint64) | (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))
    x = bits.view(np.float64).copy()
    # values in bf16's range, at and beside ties, so rounding is exercised there
    ties = f32_patterns(rng, n).astype(np.float64)
    tiny = np.ldexp(1.0, -40) * np.abs(ties)
    special = [np.inf, -np.inf, -0.0, 1e-50, -1e-50, 2.0**-134, 3 * 2.0**-135, 3.4e38, 3.3961776e38, 1e300]
    return np.concatenate([x, ties, ties + tiny, ties - tiny, np.array(special)])


def test_the_two_paths_agree_on_f32(rng):
    x = f32_patterns(rng, 200_000)
    np.testing.assert_array_equal(bf16.numpy_to_bits(x), bf16.ml_dtypes_to_bits(x))


def test_the_two_paths_agree_on_f64(rng):
    x = f64_values(rng, 100_000)
    np.testing.assert_array_equal(bf16.numpy_to_bits(x), bf16.ml_dtypes_to_bits(x))


def test_the_two_paths_agree_on_every_f16_and_on_integers(rng):
    h = np.arange(2**16, dtype=np.uint16).view(np.float16)
    np.testing.assert_array_equal(bf16.numpy_to_bits(h), bf16.ml_dtypes_to_bits(h))
    i = np.concatenate([rng.integers(-(2**53), 2**53, 10_000), np.arange(-600, 600)])
    np.testing.assert_array_equal(bf16.numpy_to_bits(i), bf16.ml_dtypes_to_bits(i))


def test_rounding_is_exact_round_to_nearest_even(rng):
    """Against exact arithmetic, on samples of both kinds of input."""
    for x in (f32_patterns(rng, 3000).astype(np.float64), f64_values(rng, 1000)):
        want = [exact_bits(float(v)) for v in x]
        assert bf16.numpy_to_bits(x).tolist() == want
        assert bf16.ml_dtypes_to_bits(x).tolist() == want


def test_nan_rules():
    """A NaN is the quiet NaN with its sign, or the bits ``nan=`` gives; bits -> values
    is a shift that keeps every NaN payload."""
    nans = np.array([0x7FC12345, 0xFFC00000, 0x7F800001, 0xFF812345], np.uint32).view(np.float32)
    assert bf16.to_bits(nans).tolist() == [0x7FC0, 0xFFC0, 0x7FC0, 0xFFC0]
    assert bf16.to_bits(nans, nan=0x7FFF).tolist() == [0x7FFF] * 4
    assert bf16.to_bits(np.array([1.0, np.nan]), nan=0x7FFF).tolist() == [0x3F80, 0x7FFF]
    payloads = np.array([0x7FC1, 0xFFC0, 0x7F81, 0xFFFF], np.uint16)
    assert bf16.from_bits(payloads).view(np.uint32).tolist() == [b << 16 for b in payloads.tolist()]
    assert bf16.truncated(bf16.from_bits(payloads)).tolist() == payloads.tolist()


def test_scalars_arrays_and_numpy_interop():
    assert bf16.to_bits(1.0 + 2.0**-8 + 2.0**-30).tolist() == 0x3F81  # rounded once, not via f32
    assert bf16.rounded(np.float32(3.0)) == np.float32(3.0) and bf16.rounded(2).dtype == np.float32
    assert bf16.to_bits(np.ones((2, 3), np.float32)).shape == (2, 3)
    ml_array = np.array([1.5, -2.0], ml.bfloat16)
    assert bf16.is_bf16(ml_array.dtype) and not bf16.is_bf16(np.uint16)
    assert bf16.bits_of(ml_array).tolist() == [0x3FC0, 0xC000]
    assert bf16.to_bits(ml_array).tolist() == [0x3FC0, 0xC000]  # already bf16: its bits
    assert bf16.as_ml_dtypes(np.array([0x3FC0], np.uint16)).astype(np.float32).tolist() == [1.5]
    with pytest.raises(TypeError, match="uint16 bits or ml_dtypes.bfloat16"):
        bf16.bits_of(np.zeros(2, np.float32))


def test_without_ml_dtypes_the_numpy_path_runs(monkeypatch, rng):
    x = f64_values(rng, 1000)
    want = bf16.to_bits(x, nan=0x7FFF)
    monkeypatch.setattr(bf16, "DTYPE", None)
    np.testing.assert_array_equal(bf16.to_bits(x, nan=0x7FFF), want)
    with pytest.raises(ImportError):
        bf16.ml_dtypes_to_bits(x)
