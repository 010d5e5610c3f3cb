"""The fused row kernels (tile_mlir.kernels: softmax, rmsnorm, layernorm, logsumexp) in
the CPU interpreter, against numpy in float64 on fresh random inputs: every kind of plan
(one warp per row, several warps, online), N not a power of two, f32 and bf16, every
output (the rows, and the per-row mean and rstd); the special values (±inf, NaN, zeros)
each kernel documents; the plan's thresholds; the generated PTX (16-byte vector loads
and stores, no local memory); the array front end.

test/gpu/test_fused_gpu.py runs the same kernels on the GPU against torch;
test/python/test_kernels_api.py checks the functional API (K.softmax, K.rms_norm...).
"""

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from fakecuda import DeviceArray, param
from tile_mlir import kernels as K
from tile_mlir.errors import LaunchError
from tile_mlir.kernels.reference import REFERENCES
from tile_mlir.testing.fused import ATOL, RTOL, as_f64, check, check_expected, random_inputs, special_rows, to_dtype

NAMES = list(K.SPECS)

# (M, N, dtype, plan overrides) -> the kind it must plan. The interpreter is slow on big
# blocks, so the online kind is also forced on a short row (2 warps, 1 vector each).
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


def eps_of(name):
    eps = K.SPECS[name].eps
    return {"eps": eps} if eps is not None else {}


def run(name, x, *params, **overrides):
    """Kernel ``name`` on x (and its params) in the interpreter, and the float64 reference."""
    outputs = K.run(name, x, *params, backend="interpreter", **eps_of(name), **overrides)
    return outputs, REFERENCES[name](*(as_f64(a) for a in (x, *params)), **eps_of(name))


def assert_agrees(y, ref, dtype):
    error, ok = check(y, ref, dtype)
    bad = ~np.isclose(as_f64(y), ref, rtol=RTOL[dtype], atol=ATOL[dtype], equal_nan=True)
    assert ok, f"max abs error {error:.3g}; first disagreements at {np.argwhere(bad)[:5].tolist()}"


def assert_all_agree(name, outputs, refs, dtype):
    assert len(outputs) == len(refs) == len(K.SPECS[name].outputs)
    for (output, role), y, ref in zip(K.SPECS[name].outputs, outputs, refs):
        assert y.shape == ref.shape, output
        assert y.dtype == (np.float32 if role == "stat" else outputs[0].dtype), output
        assert_agrees(y, ref, "f32" if role == "stat" else dtype)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M, N, dtype, overrides, kind", SHAPES, ids=lambda v: str(v) if not isinstance(v, dict) else "")
def test_random_inputs_against_numpy(name, M, N, dtype, overrides, kind):
    assert K.plan(M, N, dtype, name, **overrides).kind == kind
    rng = np.random.default_rng()
    x, *params = random_inputs(rng, M, N, dtype, len(K.SPECS[name].params))
    outputs, refs = run(name, x, *params, **overrides)
    assert outputs[0].dtype == x.dtype
    assert_all_agree(name, outputs, refs, dtype)


# --- special values ---------------------------------------------------------------------

INF, NAN = np.inf, np.nan


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("overrides", [{}, {"warps": 2, "vectors": 1}], ids=["one warp", "online"])
def test_special_values(name, dtype, overrides):
    rng = np.random.default_rng()
    N = 300
    rows = special_rows(rng, N, huge=not K.SPECS[name].params)
    x = to_dtype(np.stack(list(rows.values())), dtype)
    params = [to_dtype(1 + 0.5 * rng.standard_normal(N), dtype) for _ in K.SPECS[name].params]
    outputs, refs = run(name, x, *params, **overrides)
    check_expected(name, rows, as_f64(outputs[0]))
    check_expected(name, rows, refs[0])
    assert_all_agree(name, outputs, refs, dtype)


def test_special_values_spelled_out():
    """The documented results, written out rather than taken from the reference."""
    x = np.array([[1.0, INF, 2.0], [-INF, -INF, -INF], [0.0, -INF, 0.0], [1.0, NAN, 2.0]], np.float32)
    s = K.softmax(x, backend="interpreter")
    assert np.isnan(s[:2]).all() and np.isnan(s[3]).all()
    assert s[2].tolist() == [0.5, 0.0, 0.5]
    lse = K.logsumexp(x, backend="interpreter")
    assert lse[0] == INF and lse[1] == -INF and np.isnan(lse[3])
    assert np.isclose(lse[2], np.log(2.0))
    w = np.ones(3, np.float32)
    r, rstd = K.rms_norm(np.array([[0, 0, 0], [1.0, INF, 2.0]], np.float32), w, eps=1e-6, backend="interpreter")
    assert r[0].tolist() == [0.0, 0.0, 0.0] and np.isclose(rstd[0], 1e3, rtol=1e-6)
    assert r[1][0] == 0.0 and np.isnan(r[1][1]) and r[1][2] == 0.0 and rstd[1] == 0.0
    b = np.array([0.25, -1.0, 2.0], np.float32)
    ln, mean, rstd = K.layer_norm(np.zeros((2, 3), np.float32), w, b, backend="interpreter")
    assert ln.tolist() == [b.tolist()] * 2 and mean.tolist() == [0.0, 0.0]
    assert np.allclose(rstd, 1 / np.sqrt(1e-5), rtol=1e-6)


def test_layernorm_ignores_the_padding_in_the_variance():
    """Rows far from 0 (mean 1000, std 1), N = 1000 in a tile of 1024 columns: the 24
    padded columns hold 0, and would add 24 x 1000^2 to the sum of squares if counted."""
    rng = np.random.default_rng()
    x = (1000 + rng.standard_normal((4, 1000))).astype(np.float32)
    w, b = np.ones(1000, np.float32), np.zeros(1000, np.float32)
    assert K.plan(4, 1000, "f32").E * 32 == 1024
    (y, mean, rstd), (ref, ref_mean, ref_rstd) = run("layernorm", x, w, b)
    assert np.abs(y - ref).max() < 2e-3  # x itself is only known to 6e-5 in f32
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-3)


# --- the plan ---------------------------------------------------------------------------


@pytest.mark.parametrize("N, dtype, kind, W, E, K_", [
    (1000, "f32", "warp", 1, 32, 1), (1024, "f32", "warp", 1, 32, 1), (1025, "f32", "warps", 4, 12, 1),
    (4096, "f32", "warps", 8, 16, 1), (16384, "f32", "warps", 32, 16, 1), (16385, "f32", "online", 32, 16, 2),
    (65536, "f32", "online", 32, 16, 4), (2048, "bf16", "warp", 1, 64, 1), (4096, "bf16", "warps", 4, 32, 1),
    (32768, "bf16", "warps", 32, 32, 1), (65536, "bf16", "online", 32, 32, 2), (100, "f32", "warp", 1, 4, 1),
])
def test_plan_thresholds(N, dtype, kind, W, E, K_):
    p = K.plan(64, N, dtype)
    assert (p.kind, p.W, p.E, p.K) == (kind, W, E, K_)
    assert p.CH * p.K >= N > p.CH * (p.K - 1)  # as many chunks as the row needs
    assert p.threads == 32 * p.R * p.W <= 1024 and p.grid(64) * p.R >= 64
    assert p.ctas_per_row == 1 and p.row_in == "registers" and p.vector_bytes == 16
    data_bytes = p.E * {"f32": 4, "bf16": 2}[dtype]
    assert data_bytes <= (128 if p.W < 32 else 64)
    assert f"N = {N}" in p.why and p.why in str(p)


def test_plan_says_why_and_rejects_what_it_cannot_do(capsys):
    assert "fits in one warp's registers" in K.plan(8, 1000, "f32", "softmax").why
    assert "fits in one CTA's registers" in K.plan(8, 4096, "bf16").why
    assert "more than one CTA's registers hold (16384 f32 columns)" in K.plan(8, 65536, "f32").why
    assert K.plan(8, 1000, "f32", warps=2).why == "forced: 2 warp(s) per row"
    from tile_mlir.kernels.plan import main

    assert main(["4096", "16384", "bf16", "softmax"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4096 x 16384 bf16: warps: 1 row(s) per CTA of 512 threads") and "why: " in out
    for call, message in [(lambda: K.plan(4, 100, "f16"), "f32 or bf16"), (lambda: K.plan(4, 100, "f32", warps=3), "power of two"),
                          (lambda: K.plan(4, 100, "f32", vectors=0), "at least 1"), (lambda: K.plan(0, 100, "f32"), "at least one row"),
                          (lambda: K.plan(4, 100, "f32", "gelu"), "kernel must be one of")]:
        with pytest.raises(ValueError, match=message):
            call()


def test_the_package_builds_kernels_and_templates_nothing():
    """Every kernel is built with tile_mlir.build (no string.Template anywhere in the
    package); its text has its gpu.func and the plan's block."""
    package = Path(K.__file__).resolve().parents[1]
    assert [p for p in package.rglob("*.py") if "Template(" in p.read_text()] == []
    for name in NAMES:
        for M, N, dtype in ((5, 1000, "f32"), (2, 40000, "bf16")):
            text = K.kernel_text(name, M, N, dtype)
            assert f"gpu.func @{name}(" in text and "tile.copy" in text and "tile.reduce" in text
            assert f"known_block_size = array<i32: {K.plan(M, N, dtype).threads}, 1, 1>" in text
            assert "kernels/forward.py" in text  # each op is located at the kernel's Python line,
            assert "kernels/rows.py" not in text  # not at a line of the row frame's helpers


# --- the generated PTX ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M, N, dtype", [(64, 1000, "f32"), (64, 4096, "bf16"), (8, 40000, "f32")],
                         ids=["warp", "warps", "online"])
def test_ptx_has_vector_accesses_and_no_local_memory(name, M, N, dtype, tmp_path):
    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.options import Options

    p = K.plan(M, N, dtype)
    ptx = lower_to_ptx(K.kernel_text(name, M, N, dtype), Options(chip="sm_90a")).ptx
    spec = K.SPECS[name]
    passes = {"logsumexp": 1, "layernorm": 3}.get(name, 2)
    loads = p.C * (1 + len(spec.params) + (passes - 1) * (p.K > 1))  # x, each weight, x again in each later pass
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == loads
    assert not re.search(r"ld\.global\.(b|f|u)", ptx)  # no scalar global load
    stores = re.findall(r"st\.global\.(v4\.b32|b16|b32)", ptx)
    stats = sum(role == "stat" for _, role in spec.outputs)
    if name == "logsumexp":
        assert stores == ["b16" if dtype == "bf16" else "b32"]
    else:  # the row in 16-byte vectors, then one f32 per statistic
        assert sorted(stores) == sorted(["v4.b32"] * p.C + ["b32"] * stats)
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
    x = to_dtype(rng.standard_normal((2, 3, 200)), "bf16")
    y = K.softmax(x, backend="interpreter")
    assert y.dtype == np.uint16 and y.shape == (2, 3, 200)
    assert_agrees(y, REFERENCES["softmax"](as_f64(x))[0], "bf16")
    lse = K.logsumexp(x, backend="interpreter")
    assert lse.shape == (2, 3) and lse.dtype == np.uint16


def test_bad_arrays_are_reported_without_their_data():
    x = np.zeros((2, 8), np.float32)
    with pytest.raises(LaunchError, match=r"f32 or bf16 .*numpy.ndarray of shape \(2, 8\) and dtype float64"):
        K.softmax(x.astype(np.float64), backend="interpreter")
    with pytest.raises(LaunchError, match=r"weight must have shape \(8,\), got numpy.ndarray of shape \(7,\)"):
        K.rms_norm(x, np.ones(7, np.float32), backend="interpreter")
    with pytest.raises(LaunchError, match="x's dtype"):
        K.rms_norm(x, np.ones(8, np.uint16), backend="interpreter")
    with pytest.raises(LaunchError, match="takes x and 2"):
        K.run("layernorm", x, np.ones(8, np.float32), backend="interpreter")
    with pytest.raises(LaunchError, match="numpy arrays or torch tensors, got list") as info:
        K.rms_norm(x, [0.5] * 8, backend="interpreter")
    assert "0.5" not in str(info.value)
    with pytest.raises(ValueError, match="at least one column"):
        K.softmax(np.zeros((3, 0), np.float32), backend="interpreter")
    assert K.softmax(np.zeros((0, 5), np.float32), backend="interpreter").shape == (0, 5)


def test_compiled_is_what_a_benchmark_launches():
    c = K.compiled("rmsnorm", 10, 3000, "f32", backend="interpreter")
    assert (c.grid, c.block) == (10, c.plan.threads) and c.plan.kind == "warps"
    assert c.signature == "rmsnorm(x, weight, y, rstd, eps)"
    rng = np.random.default_rng()
    x, w = random_inputs(rng, 10, 3000, "f32", 1)
    y, rstd = np.full_like(x, np.nan), np.full(10, np.nan, np.float32)
    c.kernel.launch(c.grid, c.block, x, w, y, rstd, 1e-5)
    ref, ref_rstd = REFERENCES["rmsnorm"](as_f64(x), as_f64(w), eps=1e-5)
    assert_agrees(y, ref, "f32")
    assert_agrees(rstd, ref_rstd, "f32")
    assert K.compiled("rmsnorm", 10, 3000, "f32", backend="interpreter") is c  # cached


def test_compiled_binds_device_arrays_in_the_documented_order(fake, tmp_path, monkeypatch):
    """What the benchmarks do, on a fake CUDA driver (test/python/fakecuda.py): compiled()
    builds the cubin here, and kernel.bind(grid, block, x, weight, y, rstd, eps) with
    device arrays packs their pointers and eps, in that order, for one cuLaunchKernel."""
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    c = K.compiled("rmsnorm", 64, 1000, "bf16", backend="cuda")
    assert (c.grid, c.block, c.signature) == (16, 128, "rmsnorm(x, weight, y, rstd, eps)")
    assert len(list((tmp_path / "by-name").iterdir())) == 1  # remembered, for a machine without MLIR
    x, w, y = (np.zeros(shape, np.uint16) for shape in ((64, 1000), (1000,), (64, 1000)))
    rstd = np.zeros(64, np.float32)
    devices = [DeviceArray(a, "<V2") for a in (x, w, y)] + [DeviceArray(rstd, "<f4")]
    seen = []
    fake.kernels["rmsnorm"] = lambda p: seen.append(
        [param(p, i, ctypes.c_uint64) for i in range(4)] + [param(p, 4, ctypes.c_float)])
    launch = c.kernel.bind(c.grid, c.block, *devices, 1e-6)
    launch()
    assert seen == [[x.ctypes.data, w.ctypes.data, y.ctypes.data, rstd.ctypes.data, np.float32(1e-6)]]
    assert fake.launches[-1][:2] == ((16, 1, 1), (128, 1, 1))
    with pytest.raises(LaunchError, match="blocks of 128 threads"):
        c.kernel.bind(c.grid, 256, *devices, 1e-6)


def test_a_machine_without_mlir_finds_the_kernel_by_name(tmp_path, monkeypatch):
    """Where MLIR is, the text of a kernel made for the cache (remember=True, or compiled
    for the GPU) is remembered by name; where it is not, kernel_text reads it back, and
    without it says how to make it."""
    from tile_mlir.errors import BindingsTooOld
    from tile_mlir.kernels import library

    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    library._text.cache_clear()
    made = K.kernel_text("softmax", 12, 700, "bf16", remember=True)
    assert K.kernel_text("softmax", 12, 701, "bf16") and len(list((tmp_path / "by-name").iterdir())) == 1
    library._text.cache_clear()

    def no_mlir(*args):
        raise ImportError("No module named 'mlir'")

    monkeypatch.setattr(library, "_built", no_mlir)
    assert K.kernel_text("softmax", 12, 700, "bf16") == made
    with pytest.raises(BindingsTooOld, match=r"python -m tile_mlir.testing.prepare"):
        K.kernel_text("softmax", 13, 700, "bf16")
    library._text.cache_clear()


def test_torch_tensors_on_the_cpu():
    torch = pytest.importorskip("torch")
    x = torch.randn(5, 300, dtype=torch.bfloat16)
    y = K.softmax(x, backend="interpreter")
    assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16
    torch.testing.assert_close(y.double(), torch.softmax(x.double(), -1), rtol=2**-8, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_the_demo_prints_the_check(name, capsys):
    from tile_mlir.kernels.__main__ import main

    assert main([name, "--shape", "6x300"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("plan: warp: ") and lines[1].startswith("  why: ")
    for line, (output, _) in zip(lines[2:], K.SPECS[name].outputs, strict=True):
        assert re.fullmatch(rf"{name} 6x300 f32 \(interpreter\): {output}: max abs error \S+ vs numpy float64: OK", line)


@pytest.mark.parametrize("name", NAMES)
def test_the_examples_are_what_the_builder_writes(name):
    """examples/<name>.mlir is the builder's kernel for 37 x 1000 f32, as --emit prints it:
    one source of truth (python/tile_mlir/kernels/forward.py)."""
    from tile_mlir.kernels.__main__ import emitted

    example = Path(__file__).resolve().parents[2] / "examples" / f"{name}.mlir"
    assert example.read_text() == emitted(name, 37, 1000, "f32"), (
        f"regenerate it: python -m tile_mlir.kernels {name} --emit > examples/{name}.mlir")


def code_lines(function) -> int:
    """Lines of code of a function: not blank, not a comment, not its docstring."""
    import ast
    import inspect

    source = inspect.getsource(function)
    doc = ast.get_docstring(ast.parse(source).body[0]) or ""
    lines = [line for line in source.splitlines() if line.strip() and not line.strip().startswith("#")]
    return len(lines) - len(doc.splitlines())


def test_each_kernel_fits_on_a_screen():
    """The softmax, with the first pass it shares with logsumexp, is at most 35 lines of
    code (Triton's tutorial kernel is about 17); docs/builder.md gives the counts."""
    from tile_mlir.kernels import forward

    counts = {f.__name__: code_lines(f) for f in (forward.softmax, forward.online_max_sum, forward.logsumexp,
                                                   forward.rmsnorm, forward.layernorm)}
    assert counts["softmax"] + counts["online_max_sum"] <= 35 and max(counts.values()) <= 40, counts
    doc = (Path(__file__).resolve().parents[2] / "docs" / "builder.md").read_text()
    said = re.search(r"the softmax is (\d+) lines of code, and the first pass it shares with\s+logsumexp (\d+) more;"
                     r" LayerNorm, the longest, (\d+)", doc).groups()
    assert tuple(map(int, said)) == (counts["softmax"], counts["online_max_sum"], counts["layernorm"])
