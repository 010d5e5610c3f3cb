"""The fused row kernels of examples/ (softmax, rmsnorm, layernorm, logsumexp) in the CPU
interpreter, against numpy in float64 on fresh random inputs: every form of the plan (one
warp per row, several warps, online), N not a power of two, f32 and bf16; the special
values (±inf, NaN, zeros) each kernel documents; the plan's thresholds; the generated
PTX (16-byte vector loads and stores, no local memory); the array front end.

test/gpu/test_fused_gpu.py runs the same kernels on the GPU against torch.
"""

import ctypes
import re
import shutil
import subprocess

import numpy as np
import pytest
from fakecuda import DeviceArray, param
from tile_mlir.errors import LaunchError
from tile_mlir.examples import _rowwise as rw
from tile_mlir.examples import layernorm, logsumexp, rmsnorm, softmax
from tile_mlir.testing.fused import check_expected, special_rows

MODULES = {m.KERNEL.name: m for m in (softmax, rmsnorm, layernorm, logsumexp)}

# (M, N, dtype, plan overrides) -> the form it must plan. The interpreter is slow on
# big blocks, so the online form is also forced on a short row (2 warps, 1 vector each).
SHAPES = [
    (9, 1000, "f32", {}, "warp"),
    (6, 1999, "bf16", {}, "warp"),
    (3, 3000, "f32", {}, "warps"),
    (3, 5000, "bf16", {}, "warps"),
    (2, 20000, "f32", {}, "online"),
    (2, 40000, "bf16", {}, "online"),
    (5, 1000, "f32", {"warps": 2, "vectors": 1}, "online"),
    (5, 999, "bf16", {"warps": 2, "vectors": 1}, "online"),
]


def run(name, x, *params, **overrides):
    """The kernel ``name`` on x (and its params) in the interpreter, and the float64 reference."""
    module = MODULES[name]
    kernel = module.KERNEL
    eps = {"eps": kernel.eps("bf16" if x.dtype == np.uint16 else "f32")} if kernel.params else {}
    y = kernel(x, *params, backend="interpreter", **eps, **overrides)
    return y, module.reference(*(rw.as_f64(a) for a in (x, *params)), **eps)


def assert_agrees(y, ref, dtype):
    error, ok = rw.check(y, ref, dtype)
    bad = ~np.isclose(rw.as_f64(y), ref, rtol=rw.RTOL[dtype], atol=rw.ATOL[dtype], equal_nan=True)
    assert ok, f"max abs error {error:.3g}; first disagreements at {np.argwhere(bad)[:5].tolist()}"


@pytest.mark.parametrize("name", list(MODULES))
@pytest.mark.parametrize("M, N, dtype, overrides, form", SHAPES, ids=lambda v: str(v) if not isinstance(v, dict) else "")
def test_random_inputs_against_numpy(name, M, N, dtype, overrides, form):
    assert rw.plan(M, N, dtype, **overrides).form == form
    rng = np.random.default_rng()
    x, *params = rw.random_inputs(rng, M, N, dtype, len(MODULES[name].KERNEL.params))
    y, ref = run(name, x, *params, **overrides)
    assert y.dtype == x.dtype and y.shape == ref.shape
    assert_agrees(y, ref, dtype)


# --- special values ---------------------------------------------------------------------

INF, NAN = np.inf, np.nan


@pytest.mark.parametrize("name", list(MODULES))
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("overrides", [{}, {"warps": 2, "vectors": 1}], ids=["one warp", "online"])
def test_special_values(name, dtype, overrides):
    rng = np.random.default_rng()
    N = 300
    rows = special_rows(rng, N, huge=not MODULES[name].KERNEL.params)
    x = rw.to_dtype(np.stack(list(rows.values())), dtype)
    params = [rw.to_dtype(1 + 0.5 * rng.standard_normal(N), dtype) for _ in MODULES[name].KERNEL.params]
    y, ref = run(name, x, *params, **overrides)
    check_expected(name, rows, rw.as_f64(y))
    check_expected(name, rows, ref)
    assert_agrees(y, ref, dtype)


def test_special_values_spelled_out():
    """The documented results, written out rather than taken from the reference."""
    x = np.array([[1.0, INF, 2.0], [-INF, -INF, -INF], [0.0, -INF, 0.0], [1.0, NAN, 2.0]], np.float32)
    s = softmax.softmax(x, backend="interpreter")
    assert np.isnan(s[:2]).all() and np.isnan(s[3]).all()
    assert s[2].tolist() == [0.5, 0.0, 0.5]
    lse = logsumexp.logsumexp(x, backend="interpreter")
    assert lse[0] == INF and lse[1] == -INF and np.isnan(lse[3])
    assert np.isclose(lse[2], np.log(2.0))
    w = np.ones(3, np.float32)
    r = rmsnorm.rmsnorm(np.array([[0, 0, 0], [1.0, INF, 2.0]], np.float32), w, backend="interpreter")
    assert r[0].tolist() == [0.0, 0.0, 0.0]
    assert r[1][0] == 0.0 and np.isnan(r[1][1]) and r[1][2] == 0.0
    b = np.array([0.25, -1.0, 2.0], np.float32)
    ln = layernorm.layernorm(np.zeros((2, 3), np.float32), w, b, backend="interpreter")
    assert ln.tolist() == [b.tolist()] * 2


def test_layernorm_ignores_the_padding_in_the_variance():
    """Rows far from 0 (mean 1000, std 1), N = 1000 in a tile of 1024 columns: the 24
    padded columns hold 0, and would add 24 x 1000^2 to the sum of squares if counted."""
    rng = np.random.default_rng()
    x = (1000 + rng.standard_normal((4, 1000))).astype(np.float32)
    w, b = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    assert rw.plan(4, 1000, "f32").E * 32 == 1024
    y, ref = run("layernorm", x, w, b)
    assert np.abs(y - ref).max() < 2e-3  # x itself is only known to 6e-5 in f32


# --- the plan ---------------------------------------------------------------------------


@pytest.mark.parametrize("N, dtype, form, W, E, K", [
    (1000, "f32", "warp", 1, 32, 1), (1024, "f32", "warp", 1, 32, 1), (1025, "f32", "warps", 4, 12, 1),
    (4096, "f32", "warps", 8, 16, 1), (16384, "f32", "warps", 32, 16, 1), (16385, "f32", "online", 32, 16, 2),
    (65536, "f32", "online", 32, 16, 4), (2048, "bf16", "warp", 1, 64, 1), (4096, "bf16", "warps", 4, 32, 1),
    (32768, "bf16", "warps", 32, 32, 1), (65536, "bf16", "online", 32, 32, 2), (100, "f32", "warp", 1, 4, 1),
])
def test_plan_thresholds(N, dtype, form, W, E, K):
    p = rw.plan(64, N, dtype)
    assert (p.form, p.W, p.E, p.K) == (form, W, E, K)
    assert p.CH * p.K >= N > p.CH * (p.K - 1)  # as many chunks as the row needs
    assert p.block == 32 * p.R * p.W <= 1024 and p.grid * p.R >= 64
    data_bytes = p.E * rw.ITEMSIZE[dtype]
    assert data_bytes <= (128 if p.W < 32 else 64)


def test_plan_rejects_what_it_cannot_do():
    with pytest.raises(ValueError, match="f32 or bf16"):
        rw.plan(4, 100, "f16")
    with pytest.raises(ValueError, match="power of two"):
        rw.plan(4, 100, "f32", warps=3)
    with pytest.raises(ValueError, match="at least 1"):
        rw.plan(4, 100, "f32", vectors=0)
    with pytest.raises(ValueError, match="at least one row"):
        rw.plan(0, 100, "f32")


def test_kernel_text_fills_every_field():
    for name, module in MODULES.items():
        for p in (rw.plan(5, 1000, "f32"), rw.plan(2, 40000, "bf16")):
            text = module.kernel_text(p.M, p.N, p.dtype)
            assert "${" not in text and f"gpu.func @{name}(" in text
            assert f"known_block_size = array<i32: {p.block}, 1, 1>" in text


# --- the generated PTX ------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MODULES))
@pytest.mark.parametrize("M, N, dtype", [(64, 1000, "f32"), (64, 4096, "bf16"), (8, 40000, "f32")],
                         ids=["warp", "warps", "online"])
def test_ptx_has_vector_accesses_and_no_local_memory(name, M, N, dtype, tmp_path):
    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.options import Options

    p = rw.plan(M, N, dtype)
    ptx = lower_to_ptx(MODULES[name].kernel_text(M, N, dtype), Options(chip="sm_90a")).ptx
    params = len(MODULES[name].KERNEL.params)
    passes = {"logsumexp": 1, "layernorm": 3}.get(name, 2)
    loads = p.C * (1 + params + (passes - 1) * (p.K > 1))  # x, each weight, x again in each later pass
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == loads
    assert not re.search(r"ld\.global\.(b|f|u)", ptx)  # no scalar global load
    stores = re.findall(r"st\.global\.(v4\.b32|b16|b32)", ptx)
    assert stores == (["b16" if dtype == "bf16" else "b32"] if name == "logsumexp" else ["v4.b32"] * p.C)
    assert ".local" not in ptx
    assert len(re.findall(r"bar\.sync", ptx)) == (0 if p.W == 1 else 2 if name != "rmsnorm" else 1)
    if shutil.which("ptxas"):
        source = tmp_path / "k.ptx"
        source.write_text(ptx)
        info = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(source), "-o", str(tmp_path / "k.cubin")],
                              check=False, capture_output=True, text=True).stderr
        assert "0 bytes spill stores" in info or "spill" not in info, info
        assert not re.search(r"[1-9]\d* bytes stack frame", info), info


# --- the array front end ----------------------------------------------------------------


def test_leading_dims_are_rows_and_bf16_bits_round_trip():
    rng = np.random.default_rng()
    x = rw.to_dtype(rng.standard_normal((2, 3, 200)), "bf16")
    y = softmax.softmax(x, backend="interpreter")
    assert y.dtype == np.uint16 and y.shape == (2, 3, 200)
    assert_agrees(y, softmax.reference(rw.as_f64(x)), "bf16")
    lse = logsumexp.logsumexp(x, backend="interpreter")
    assert lse.shape == (2, 3)


def test_bad_arrays_are_reported():
    x = np.zeros((2, 8), np.float32)
    with pytest.raises(TypeError, match="f32 or bf16"):
        softmax.softmax(x.astype(np.float64), backend="interpreter")
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        rmsnorm.rmsnorm(x, np.ones(7, np.float32), backend="interpreter")
    with pytest.raises(TypeError, match="x's dtype"):
        rmsnorm.rmsnorm(x, np.ones(8, np.uint16), backend="interpreter")
    with pytest.raises(TypeError, match="takes x and 2"):
        layernorm.KERNEL(x, np.ones(8, np.float32), backend="interpreter")


def test_compiled_is_what_a_benchmark_launches():
    c = rmsnorm.compiled(10, 3000, "f32", backend="interpreter")
    assert (c.grid, c.block) == (10, c.plan.block) and c.plan.form == "warps"
    assert c.signature == "rmsnorm(x, weight, y, eps)"
    rng = np.random.default_rng()
    x, w = rw.random_inputs(rng, 10, 3000, "f32", 1)
    y = np.full_like(x, np.nan)
    c.kernel.launch(c.grid, c.block, x, w, y, 1e-5)
    assert_agrees(y, rmsnorm.reference(rw.as_f64(x), rw.as_f64(w), eps=1e-5), "f32")
    assert rmsnorm.compiled(10, 3000, "f32", backend="interpreter") is c  # cached


def test_compiled_binds_device_arrays_in_the_documented_order(fake, tmp_path, monkeypatch):
    """What the benchmarks do, on a fake CUDA driver (test/python/fakecuda.py): compiled()
    builds the cubin here, and kernel.bind(grid, block, x, weight, y, eps) with device
    arrays packs their pointers and eps, in that order, for one cuLaunchKernel."""
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    c = rmsnorm.compiled(64, 1000, "bf16", backend="cuda")
    assert (c.grid, c.block, c.signature) == (16, 128, "rmsnorm(x, weight, y, eps)")
    x, w, y = (np.zeros(shape, np.uint16) for shape in ((64, 1000), (1000,), (64, 1000)))
    seen = []
    fake.kernels["rmsnorm"] = lambda p: seen.append(
        [param(p, i, ctypes.c_uint64) for i in range(3)] + [param(p, 3, ctypes.c_float)])
    launch = c.kernel.bind(c.grid, c.block, *(DeviceArray(a, "<V2") for a in (x, w, y)), 1e-6)
    launch()
    assert seen == [[x.ctypes.data, w.ctypes.data, y.ctypes.data, np.float32(1e-6)]]
    assert fake.launches[-1][:2] == ((16, 1, 1), (128, 1, 1))
    with pytest.raises(LaunchError, match="blocks of 128 threads"):
        c.kernel.bind(c.grid, 256, *(DeviceArray(a, "<V2") for a in (x, w, y)), 1e-6)


def test_torch_tensors_on_the_cpu():
    torch = pytest.importorskip("torch")
    x = torch.randn(5, 300, dtype=torch.bfloat16)
    y = softmax.softmax(x, backend="interpreter")
    assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16
    torch.testing.assert_close(y.double(), torch.softmax(x.double(), -1), rtol=2**-8, atol=1e-5)


@pytest.mark.parametrize("name", list(MODULES))
def test_main_prints_the_check(name, capsys):
    assert MODULES[name].KERNEL.main(MODULES[name].reference, ["--shape", "6x300"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.fullmatch(rf"{name} 6x300 f32 \(interpreter\): max abs error \S+ vs numpy float64: OK", last), last
