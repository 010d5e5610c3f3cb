"""Test data for the fused row kernels of examples/ (softmax, rmsnorm, layernorm,
logsumexp), shared by the interpreter tests (test/python/test_fused.py) and the GPU tests
(test/gpu/test_fused_gpu.py): rows of special values, and what each kernel must give for
them (docs/fused-kernels.md, "Special values").
"""

import numpy as np

INF, NAN = np.inf, np.nan


def special_rows(rng, N, huge=True):
    """Named rows of N values: random ones with ±inf and NaN in random places, and rows of
    only zeros, only -inf, one constant; with ``huge``, one with ±3e38 (whose square
    overflows f32: not for the norms, which square x in f32, as torch does)."""
    def at(values):
        row = rng.standard_normal(N)
        row[rng.choice(N, len(values), replace=False)] = values
        return row

    return {
        "finite": rng.standard_normal(N),
        "+inf": at([INF]),
        "-inf": at([-INF, -INF]),
        "nan": at([NAN]),
        "+inf and -inf": at([INF, -INF]),
        "all -inf": np.full(N, -INF),
        "zeros": np.zeros(N),
        "constant": np.full(N, 3.5),
        **({"huge": at([3e38, -3e38])} if huge else {}),
    }


# What torch gives for whole rows of these (docs/fused-kernels.md, "Special values"): the
# value of every element of the row's output ("nan", "+inf", "-inf", "0"). The other rows
# are checked against the numpy reference, which follows torch's formula in float64.
EXPECTED = {
    "softmax": {"+inf": "nan", "nan": "nan", "+inf and -inf": "nan", "all -inf": "nan"},
    "logsumexp": {"nan": "nan", "+inf": "+inf", "+inf and -inf": "+inf", "all -inf": "-inf"},
    "rmsnorm": {"nan": "nan", "all -inf": "nan", "zeros": "0"},
    "layernorm": {"+inf": "nan", "-inf": "nan", "nan": "nan", "+inf and -inf": "nan", "all -inf": "nan"},
}


def check_expected(name: str, labels, got: np.ndarray) -> None:
    """Assert that each row of ``got`` (float64 values, in the order of ``labels``) is what
    EXPECTED says for its label."""
    for label, row in zip(labels, got):
        want = EXPECTED[name].get(label)
        if want is not None:
            ok = np.isnan(row).all() if want == "nan" else (row == float(want)).all()
            assert ok, f"{name}, row {label!r}: expected {want} everywhere, got {np.ravel(row)[:8]}"
