"""Test data for the fused row kernels (``tile_mlir.kernels``: softmax, rmsnorm,
layernorm, logsumexp), shared by the interpreter tests (test/python/test_fused.py), the
GPU tests (test/gpu/test_fused_gpu.py) and ``python -m tile_mlir.kernels``: random
inputs, their conversions to and from bf16 bits, the check against a float64 reference,
rows of special values and what each kernel must give for them (docs/fused-kernels.md,
"Special values"), the shapes the GPU tests run, and the norms' backward column sums in
their documented order (``model_sums``). numpy only.
"""

import numpy as np

from .. import bf16

INF, NAN = np.inf, np.nan

# The kernels and shapes test/gpu/test_fused_gpu.py checks on the GPU (the benchmark's
# shapes of issue 18: 64 x 262144 is a cluster of 16 CTAs per row in f32, 8 in bf16),
# and the default shape of ``python -m tile_mlir.kernels``, both
# dtypes: ``python -m tile_mlir.testing.prepare`` compiles them ahead, for a GPU machine
# without MLIR.
KERNELS = ("softmax", "rmsnorm", "layernorm", "logsumexp")
DTYPES = ("f32", "bf16")
# The last two keep part of the row in dynamic shared memory (``registers+shared`` plans:
# 64 KB a CTA at 524288 f32 and 1048576 bf16, 192 KB at 1048576 f32).
GPU_SHAPES = ((16384, 1024), (4096, 4096), (4096, 16384), (1024, 65536), (16384, 1000), (64, 262144), (64, 524288),
              (16, 1048576))
MAIN_SHAPE = (37, 1000)
GPU_CASES = [(name, M, N, dtype) for name in KERNELS for (M, N) in (*GPU_SHAPES, MAIN_SHAPE) for dtype in DTYPES]

# The backward kernels (``tile_mlir.kernels.training.BACKWARD``) at issue 19's benchmark
# shapes, which test/gpu/test_backward_gpu.py runs (each norm: its row kernel and its
# column sums): one CTA per row, then a cluster of 8 at 1024 x 65536, and of 16 at
# 262144 (the longest f32 row), in few rows.
BACKWARD_KERNELS = ("softmax_backward", "logsumexp_backward", "rmsnorm_backward", "layernorm_backward")
BACKWARD_SHAPES = ((4096, 4096), (4096, 16384), (1024, 65536), (256, 262144))
BACKWARD_CASES = [(name, M, N, dtype) for name in BACKWARD_KERNELS for (M, N) in BACKWARD_SHAPES for dtype in DTYPES]

# How close a kernel's output must be to the float64 reference: within RTOL·|ref| + ATOL.
# bf16: one rounding of the output, and f32 math. A statistic (mean, rstd) is f32 for
# either dtype.
RTOL = {"f32": 2e-5, "bf16": 2.0**-8}
ATOL = {"f32": 1e-6, "bf16": 1e-5}


def plan_overrides(overrides, M: int, N: int, dtype: str) -> dict:
    """A test case's plan overrides: a dict as given, or ``"small"``: a plan table scaled
    down (16 bytes of row a thread, 2 warps a CTA) so that a row of a few thousand columns
    spreads over a cluster of CTAs, which it checks."""
    if overrides != "small":
        return overrides
    from ..kernels.plan import plan, registers_table

    table = registers_table(dtype, data_bytes=16, max_warps=2)
    assert plan(M, N, dtype, table=table).CL > 1, (M, N, dtype)
    return {"table": table}


def to_dtype(a, dtype: str) -> np.ndarray:
    """``a`` as an array of ``dtype``: float32, or bf16 as uint16 bits."""
    return bf16.to_bits(np.asarray(a, np.float32)) if dtype == "bf16" else np.asarray(a, np.float32)


def as_f64(a) -> np.ndarray:
    """An f32 or bf16 (uint16 bits, or ml_dtypes.bfloat16) array's values in float64."""
    a = np.asarray(a)
    return (bf16.from_bits(a) if a.dtype == np.uint16 else a).astype(np.float64)


def random_inputs(rng, M: int, N: int, dtype: str, params: int) -> list[np.ndarray]:
    """x (M x N, standard normal) and ``params`` per-column vectors (around 1), in dtype."""
    arrays = [rng.standard_normal((M, N)), *(1 + 0.5 * rng.standard_normal(N) for _ in range(params))]
    return [to_dtype(a, dtype) for a in arrays]


def check(y, ref: np.ndarray, dtype: str) -> tuple[float, bool]:
    """(max abs error, whether y agrees with the float64 ``ref``): within RTOL·|ref| + ATOL,
    and NaN exactly where ref is NaN, infinities equal."""
    got = as_f64(y)
    finite = np.isfinite(ref)
    special = ~finite & ~np.isnan(ref)
    same_special = np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[special], ref[special])
    error = float(np.max(np.abs(got[finite] - ref[finite]), initial=0.0))
    ok = same_special and bool(np.all(np.abs(got[finite] - ref[finite]) <= RTOL[dtype] * np.abs(ref[finite]) + ATOL[dtype]))
    return error, ok


def special_rows(rng, N, huge=True):
    """Named rows of N values: random ones with ±inf and NaN in random places, and rows of
    only zeros, only -inf, one constant; with ``huge``, one with ±3e38 (whose square
    overflows f32: not for the norms, which square x in f32, as torch does) and one of
    values around -200 (whose exp underflows f32: for softmax and logsumexp)."""
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
        **({"huge": at([3e38, -3e38]),
            "far below 0": -200 + rng.standard_normal(N)} if huge else {}),  # exp(x) underflows, exp(-x) overflows
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


# Cross-entropy's shapes on the GPU (test/gpu/test_cross_entropy_gpu.py): (M, V); its
# kernels (forward, backward, fused, the fused one's scale by dloss, and the two one-CTA
# kernels over the rows, which have one plan each) and both dtypes of each are compiled
# ahead by prepare.
CE_GPU_SHAPES = ((4096, 32000), (64, 131072), (16, 256000), (37, 1000))
CE_GPU_CASES = [(name, M, V, dtype) for name in ("cross_entropy", "cross_entropy_backward", "cross_entropy_fused",
                                                 "scale_unless_one")
                for (M, V) in CE_GPU_SHAPES for dtype in DTYPES]
CE_GPU_CASES += [(name, 1, 1, "f32") for name in ("cross_entropy_reduce", "cross_entropy_row_scale")]  # one plan each

# argmax and argmin on the GPU (test/gpu/test_selection_gpu.py): the vocabularies of
# cross-entropy and the argmax benchmark's rows, both dtypes, compiled ahead by prepare.
SELECTION_GPU_SHAPES = CE_GPU_SHAPES + ((16384, 4096), (1024, 65536))
SELECTION_GPU_CASES = [(name, M, N, dtype) for name in ("argmax", "argmin")
                       for (M, N) in SELECTION_GPU_SHAPES for dtype in DTYPES]

# tile_mlir.torch's shapes on the GPU (test/gpu/test_torch_gpu.py; the second is the
# RMSNorm of benchmarks/train_step.py, whose cross-entropy is CE_GPU_SHAPES' first): every
# kernel of tile_mlir.kernels.SPECS but cross-entropy's, compiled ahead by prepare.
TORCH_GPU_SHAPES = ((256, 1024, "f32"), (256, 1024, "bf16"), (4096, 512, "f32"))
# the backward kernels that tile_mlir.torch's autograd calls at those shapes
TORCH_BACKWARD_KERNELS = (*BACKWARD_KERNELS, "add_rmsnorm_backward")


def model_sums(partials, row_warps: int) -> np.ndarray:
    """The column sums of the P × N f32 ``partials`` in the order docs/training-kernels.md
    gives (dw and db, step 2), in numpy f32: segments of S = ⌈P / (row_warps · 32)⌉ · 32
    rows, segment r the rows r·S ... r·S + S − 1 below P, each added in order from +0;
    then the segment sums added in ascending r (from the first)."""
    P, N = partials.shape
    S = -(-P // (row_warps * 32)) * 32
    segments = []
    for r in range(row_warps):
        acc = np.zeros(N, np.float32)
        for p in range(r * S, min(r * S + S, P)):
            acc = acc + partials[p]
        segments.append(acc)
    total = segments[0]
    for acc in segments[1:]:
        total = total + acc
    return total
