"""K.argmax and K.argmin (``tile_mlir.kernels.selection``) in the CPU interpreter, against
numpy's argmax/argmin of the values in float64 (the first of equal extrema; numpy's NaN
rule is torch's: the first NaN wins): f32 and bf16, every kind of row plan (one warp a
row with several rows a CTA and a row count they do not divide, several warps a row, a
row over a cluster of CTAs), N not a power of two, ties across lanes, warps and CTAs,
rows of NaN, -inf, +inf and signed zeros, leading dims, and bad input."""

import numpy as np
import pytest
from tile_mlir import kernels as K
from tile_mlir.errors import LaunchError
from tile_mlir.testing.fused import as_f64, plan_overrides, to_dtype

# (M, N, plan overrides): "small" scales the plan table down so that a row spreads over a
# cluster of CTAs at a few thousand columns
SHAPES = [(7, 37, {}), (6, 1000, {}), (3, 3001, {}), (5, 1000, "small"), (3, 4093, "small")]


def special_rows(rng, M, N, dtype):
    """Integers in [-3, 3] (ties everywhere), then, row by row: several NaNs, all -inf, a
    +inf among NaNs, only zeros of both signs, only NaN, and the rest as drawn."""
    x = rng.integers(-3, 4, (M, N)).astype(np.float64)
    kinds = ["nan", "neg_inf", "inf_nan", "zeros", "all_nan", "plain"]
    for r in range(M):
        kind = kinds[r % len(kinds)]
        if kind == "nan":
            x[r, rng.choice(N, size=min(3, N), replace=False)] = np.nan
        elif kind == "neg_inf":
            x[r] = -np.inf
        elif kind == "inf_nan":
            x[r, rng.integers(N)] = np.inf
            x[r, rng.integers(N)] = np.nan
        elif kind == "zeros":
            x[r] = np.where(rng.random(N) < 0.5, -0.0, 0.0)
        elif kind == "all_nan":
            x[r] = np.nan
    return to_dtype(x, dtype)


@pytest.mark.parametrize("M, N, overrides", SHAPES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_argmax_and_argmin_against_numpy(M, N, overrides, dtype):
    overrides = plan_overrides(overrides, M, N, dtype)
    rng = np.random.default_rng([M, N, len(dtype)])
    x = special_rows(rng, M, N, dtype)
    a = as_f64(x)
    got_max, got_min = K.argmax(x, **overrides), K.argmin(x, **overrides)
    assert got_max.dtype == np.int64 and got_max.shape == (M,)
    assert np.array_equal(got_max, np.argmax(a, axis=1)), (got_max, np.argmax(a, axis=1))
    assert np.array_equal(got_min, np.argmin(a, axis=1)), (got_min, np.argmin(a, axis=1))


def test_the_plan_kinds_are_the_ones_asked():
    assert K.plan(7, 37, "f32").kind == "warp" and K.plan(7, 37, "f32").R > 1
    assert K.plan(3, 3001, "f32").kind == "warps"


def test_leading_dims_are_rows():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 50)).astype(np.float32)
    got = K.argmax(x)
    assert got.shape == (2, 3) and np.array_equal(got, x.argmax(-1))


def test_the_last_column_and_ties_across_the_row():
    """The extremum in the last column only (the masked tail's vector); a tie between the
    first and the last column goes to the first."""
    for N in (37, 1000, 3001):
        x = np.zeros((2, N), np.float32)
        x[0, -1] = 1.0
        x[1, 0] = x[1, -1] = 2.0
        assert K.argmax(x).tolist() == [N - 1, 0]
        assert K.argmin(-x).tolist() == [N - 1, 0]


def test_bad_input_is_reported():
    with pytest.raises(LaunchError, match="f32 or bf16"):
        K.argmax(np.ones((2, 8), np.int32))
    with pytest.raises(LaunchError, match="at least one dim"):
        K.argmax(np.float32(1.0))
