"""The fused row kernels (tile_mlir.kernels: softmax, rmsnorm, layernorm, logsumexp) in
the CPU interpreter, against numpy in float64 on fresh random inputs: every kind of plan
(one warp per row, several warps, a cluster of 2 to 16 CTAs per row; the row in
registers), odd and prime N, f32 and bf16, every output (the rows, and the per-row mean
and rstd); the special values (±inf, NaN, zeros) each kernel documents; the plan's
table and tail; the generated PTX (one 16-byte load of each element, no local memory,
the barriers); the array front end.

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
from tile_mlir.errors import LaunchError, OptionError
from tile_mlir.kernels.plan import candidates, registers_table
from tile_mlir.kernels.reference import REFERENCES
from tile_mlir.testing.fused import ATOL, RTOL, as_f64, check, check_expected, random_inputs, special_rows, to_dtype

NAMES = list(K.KERNELS)  # the forward row kernels (K.SPECS also has the others)

# Register budgets scaled down (16 bytes of row per thread, 2 warps per CTA), so that
# every tier of the plan table, clusters of 16 CTAs included, shows up at a few thousand
# columns, where the interpreter is quick.
SMALL = {dtype: registers_table(dtype, data_bytes=16, max_warps=2, shared=True) for dtype in ("f32", "bf16")}

# (M, N, dtype, plan overrides) -> the kind and CTAs per row it must plan.
SHAPES = [
    (9, 1000, "f32", {"warps": 1}, "warp", 1),
    (6, 1999, "bf16", {"warps": 1}, "warp", 1),
    (3, 3000, "f32", {"warps": 8}, "warps", 1),
    (3, 5000, "bf16", {"warps": 4}, "warps", 1),
    (9, 1000, "f32", {}, None, None),  # the measured short-row plans (measured_plans.json), whatever they are
    (6, 1999, "bf16", {}, None, None),
    (2, 20000, "f32", {"ctas": 2}, "cluster", 2),
    (2, 40000, "bf16", {"ctas": 2}, "cluster", 2),
    (2, 3001, "f32", {"ctas": 8}, "cluster", 8),
    (3, 9000, "bf16", {"warps": 16}, "warps", 1),  # two rows per CTA (layernorm: one)
    (2, 12000, "f32", {}, None, None),  # the measured plan (measured_plans.json), whatever it is
    (5, 3001, "f32", {"ctas": 2, "rows": 2, "warps": 4}, "cluster", 2),  # two rows per cluster, M odd
    (6, 1999, "bf16", {"vectors": 8, "per_sm": 16}, "warp", 1),  # 64 bf16 under 32 registers: softmax's exp twice
    # softmax's and logsumexp's (max, sum) pair in one exchange where the default is two:
    # within a CTA (the warps' pairs combined), in a bf16 cluster, on one warp (no exchange)
    (3, 3000, "f32", {"warps": 8, "pair": True}, "warps", 1),
    (3, 5000, "bf16", {"warps": 4, "pair": True}, "warps", 1),
    (2, 40000, "bf16", {"ctas": 2, "pair": True}, "cluster", 2),
    (5, 3001, "f32", {"ctas": 2, "rows": 2, "warps": 4, "pair": True}, "cluster", 2),
    (6, 1999, "bf16", {"warps": 1, "pair": True}, "warp", 1),
    (5, 97, "f32", {"table": SMALL["f32"]}, "warp", 1),
    (3, 997, "f32", {"table": SMALL["f32"]}, "cluster", 4),
    (3, 1999, "bf16", {"table": SMALL["bf16"]}, "cluster", 4),
    (2, 4093, "f32", {"table": SMALL["f32"]}, "cluster", 16),
    (2, 8191, "bf16", {"table": SMALL["bf16"]}, "cluster", 16),
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
@pytest.mark.parametrize("M, N, dtype, overrides, kind, ctas", SHAPES,
                         ids=lambda v: ("small" if "table" in v else str(v)) if isinstance(v, dict) else str(v))
def test_random_inputs_against_numpy(name, M, N, dtype, overrides, kind, ctas):
    p = K.plan(M, N, dtype, name, **overrides)
    assert (p.kind, p.CL, p.row_in) == ((kind, ctas) if kind else (p.kind, p.CL)) + ("registers",)
    rng = np.random.default_rng()
    x, *params = random_inputs(rng, M, N, dtype, len(K.SPECS[name].params))
    outputs, refs = run(name, x, *params, **overrides)
    assert outputs[0].dtype == x.dtype
    assert_all_agree(name, outputs, refs, dtype)


@pytest.mark.parametrize("M, N, dtype, overrides, kind, ctas", [c for c in SHAPES if "rows" not in c[3]],
                         ids=lambda v: ("small" if "table" in v else str(v)) if isinstance(v, dict) else str(v))
def test_add_rms_norm_against_numpy(M, N, dtype, overrides, kind, ctas):
    """``K.add_rms_norm(x, r, w)``: h is x + r rounded once to the dtype (as torch's
    ``x + r``), bit for bit; y and rstd are RMSNorm's of h, against float64; on every kind
    of RMSNorm's plans (it takes them)."""
    p = K.plan(M, N, dtype, "rmsnorm", **overrides)
    assert (p.kind, p.CL) == ((kind, ctas) if kind else (p.kind, p.CL))
    rng = np.random.default_rng()
    x, r, w = (*random_inputs(rng, M, N, dtype, 0), *random_inputs(rng, M, N, dtype, 1))
    h, y, rstd = K.run("add_rmsnorm", x, r, w, backend="interpreter", eps=1e-6, **overrides)
    want_h = to_dtype(as_f64(x) + as_f64(r), dtype)  # the f32 sum, rounded once to the dtype
    assert h.dtype == x.dtype and np.array_equal(h, want_h)
    want_y, want_rstd = REFERENCES["rmsnorm"](as_f64(want_h), as_f64(w), eps=1e-6)
    assert_agrees(y, want_y, dtype)
    assert_agrees(rstd, want_rstd, "f32")


def test_add_rms_norm_reports_a_residual_of_another_shape():
    x = np.zeros((3, 64), np.float32)
    with pytest.raises(LaunchError, match=r"add_rmsnorm: residual must have x's shape \(3, 64\)"):
        K.add_rms_norm(x, np.zeros((3, 63), np.float32), np.ones(64, np.float32), backend="interpreter")
    with pytest.raises(LaunchError, match="takes x and 2 more array"):
        K.run("add_rmsnorm", x, np.ones(64, np.float32), backend="interpreter")


# --- special values ---------------------------------------------------------------------

INF, NAN = np.inf, np.nan


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("overrides, ctas", [({}, 1), ({"ctas": 4, "warps": 2}, 4), ({"ctas": 16}, 16),
                                             ({"vectors": 8, "per_sm": 16}, 1), ({"warps": 4, "pair": True}, 1)],
                         ids=["one warp", "cluster", "padding", "tight registers", "pair across warps"])
def test_special_values(name, dtype, overrides, ctas):
    """One warp per row; a cluster of 4 CTAs of 2 warps; a cluster of 16 CTAs of one
    warp, most of whose threads hold only padding; one warp of 64 elements a thread
    under a cap of 32 registers (softmax in bf16 then computes exp(x - A) again rather
    than keep E f32); 4 warps with the (max, sum) pair in one exchange (each warp's by
    named reductions, then the warps' pairs combined)."""
    rng = np.random.default_rng()
    N = 300
    assert K.plan(8, N, dtype, **overrides).CL == ctas
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


@pytest.mark.parametrize("N, dtype, kind, W, E, CL", [
    (1000, "f32", "warp", 1, 32, 1), (1024, "f32", "warp", 1, 32, 1), (1025, "f32", "warps", 4, 12, 1),
    (4096, "f32", "warps", 8, 16, 1), (16384, "f32", "warps", 32, 16, 1), (16385, "f32", "cluster", 32, 12, 2),
    (65536, "f32", "cluster", 32, 16, 4), (65537, "f32", "cluster", 32, 12, 8), (262144, "f32", "cluster", 32, 16, 16),
    (2048, "bf16", "warp", 1, 64, 1), (4096, "bf16", "warps", 4, 32, 1), (32768, "bf16", "warps", 32, 32, 1),
    (65536, "bf16", "cluster", 32, 32, 2), (524288, "bf16", "cluster", 32, 32, 16), (100, "f32", "warp", 1, 4, 1),
    (1, "f32", "warp", 1, 4, 1), (1, "bf16", "warp", 1, 8, 1),
])
def test_plan_thresholds(N, dtype, kind, W, E, CL):
    p = K.plan(64, N, dtype)
    assert (p.kind, p.W, p.E, p.CL) == (kind, W, E, CL)
    assert p.CH * p.CL >= N > p.CH * p.CL - 32 * p.W * p.CL * p.V  # the whole row, at most one vector a thread over
    assert p.threads == 32 * p.R * p.W <= 1024 and p.grid(64) == -(-64 // p.R) * p.CL
    assert p.row_in == "registers" and p.vector_bytes == 16
    data_bytes = p.E * {"f32": 4, "bf16": 2}[dtype]
    assert data_bytes <= (128 if p.threads < 1024 else 64)
    assert f"N = {N}" in p.why and p.why in str(p)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_every_length_is_one_read_with_at_most_one_vector_of_tail(dtype):
    """Every N from 1 to the longest row of the small table, and a sample of the default
    table's: the plan holds the whole row, each thread issues the fewest vectors that
    cover it (so the masked tail is at most one vector per thread beyond an even split),
    and it is the first tier that holds N."""
    for table, Ns in ((SMALL[dtype], range(1, SMALL[dtype].longest + 1)),
                      (K.TABLES[dtype], [*range(1, 5000, 7), *range(5000, K.TABLES[dtype].longest + 1, 4099)])):
        for N in Ns:
            p = K.plan(3, N, dtype, table=table)
            threads = 32 * p.W * p.CL
            tier = next(t for t in table.tiers if N <= t.longest)
            # C + S: registers and shared memory (past the registers), the fewest vectors
            assert p.C + p.S == -(-N // (threads * p.V)) and p.CH * p.CL >= N, (N, p.label())
            assert p.S <= tier.shared * p.C and p.C == -(-(p.C + p.S) // (1 + tier.shared))
            assert p.E <= table.elements(p.threads)
            assert (p.CL, p.R) == (tier.ctas, tier.rows) and p.K == 1


def test_the_tables_keep_both_ways_to_fewer_barriers_per_row():
    """The registers tables: bf16 rows of 8193..16384 (4096 x 16384) get two rows of 16
    warps per CTA, so each barrier serves two rows, except LayerNorm (one row per CTA of
    512 threads, where it does not spill); f32 16384 is one row of 32 warps, and 16 warps
    of 32 f32 each is a candidate of the search."""
    softmax = K.plan(4096, 16384, "bf16", table=K.TABLES["bf16"])
    layernorm = K.plan(4096, 16384, "bf16", table=K.TABLES["layernorm", "bf16"])
    assert (softmax.R, softmax.W, softmax.E, softmax.threads) == (2, 16, 32, 1024) and "two rows per CTA" in softmax.why
    assert (layernorm.R, layernorm.W, layernorm.threads) == (1, 16, 512)
    assert K.plan(4096, 8192, "bf16").R == 1 and K.plan(4096, 16385, "bf16").R == 1
    assert ("warps R1 W16 E32 CL1" in [p.label() for p in candidates(16384, "f32")]
            and K.plan(4096, 16384, "f32").label() == "warps R1 W32 E16 CL1")


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", NAMES)
def test_measured_plans_serve_the_lengths_they_were_searched_for(name, dtype):
    """measured_plans.json (benchmarks.plan_search): at each searched N the kernel's plan
    is the fastest measured one, and says so; every N from above half the shortest
    searched length to the longest gets a measured plan that holds the row within the
    register budget, with the fewest vectors; shorter rows keep the registers table."""
    from tile_mlir.kernels.plan import measured_table

    entries = measured_table()[name][dtype]
    assert [e["N"] for e in entries] == sorted(e["N"] for e in entries) and len(entries) >= 3
    for e in entries:
        p = K.plan(64, e["N"], dtype, name)
        assert p.label() == e["label"] and f"measured at N = {e['N']}" in p.why, (e, p)
    first, last = entries[0]["N"], entries[-1]["N"]
    for N in [*range(first // 2 + 1, last + 1, 3331), last]:
        p = K.plan(8, N, dtype, name)
        threads = 32 * p.W * p.CL
        assert "measured" in p.why and p.C == -(-N // (threads * p.V)) and p.CH * p.CL >= N, (N, p.label())
        assert p.E <= K.registers_table(dtype).elements(p.threads) and p.threads * p.O <= 2048
    assert "measured" not in K.plan(8, first // 2, dtype, name).why


def test_a_plan_asks_ptxas_for_its_ctas_per_sm():
    """per_sm = 2 on a CTA of 1024 threads: the kernel carries nvvm.minctasm = 2 (PTX
    .minnctapersm 2, so ptxas keeps a thread at 32 registers); an SM cannot hold more
    than 2048 threads, and the plan says so."""
    p = K.plan(64, 16384, "f32", "softmax", warps=32, per_sm=2)
    assert p.label() == "warps R1 W32 E16 CL1 O2" and p.max_registers == 32 and "2 CTAs per SM" in p.describe()
    assert "nvvm.minctasm = 2 : i32" in K.kernel_text("softmax", 64, 16384, "f32", warps=32, per_sm=2)
    assert "minctasm" not in K.kernel_text("softmax", 64, 16384, "f32", warps=32, per_sm=1)
    with pytest.raises(ValueError, match="an SM holds at most 2048 threads"):
        K.plan(64, 16384, "f32", "softmax", warps=32, per_sm=4)


@pytest.mark.parametrize("N, dtype", [(16384, "f32"), (100003, "f32"), (524288, "bf16"), (777, "bf16")])
def test_candidates_are_every_plan_that_holds_the_row(N, dtype):
    found = candidates(N, dtype)
    labels = [p.label() for p in found]
    assert len(set(labels)) == len(labels) and K.plan(64, N, dtype).label() in labels
    for p in found:
        assert p.CH * p.CL >= N and p.E <= K.registers_table(dtype).elements(p.threads) and p.threads <= 1024
    if N == 524288:
        assert labels == ["cluster R1 W16 E64 CL16", "cluster R1 W32 E32 CL16"]


def test_plan_says_why_and_rejects_what_it_cannot_do(capsys):
    assert "fits in one warp's registers" in K.plan(8, 1000, "f32").why  # no kernel: the registers table
    assert "measured at N = 1024" in K.plan(8, 1000, "f32", "softmax").why  # the kernel's measured plans
    assert "fits in one CTA's registers" in K.plan(8, 4096, "bf16").why
    assert "registers of a cluster of 4 CTAs (at most 65536 f32 columns)" in K.plan(8, 65536, "f32").why
    assert K.plan(8, 1000, "f32", warps=2).why == "forced: warps = 2"
    from tile_mlir.kernels.plan import main

    assert main(["64", "262144", "f32"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("64 x 262144 f32: cluster: 1 row(s) per CTA of 1024 threads, 32 warp(s) per row, 16 CTA(s)")
    assert "why: N = 262144 fits in the registers of a cluster of 16 CTAs" in out and "grid: 1024 CTA(s)" in out
    assert main(["64", "262144", "f32", "softmax"]) == 0
    assert "why: N = 262144: the fastest of" in capsys.readouterr().out
    for call, message in [(lambda: K.plan(4, 100, "f16"), "f32 or bf16"), (lambda: K.plan(4, 100, "f32", warps=3), "power of two"),
                          (lambda: K.plan(4, 100, "f32", vectors=0), "at least 1"), (lambda: K.plan(0, 100, "f32"), "at least one row"),
                          (lambda: K.plan(4, 100, "f32", "gelu"), "kernel must be one of"),
                          (lambda: K.plan(4, 100, "f32", pair="yes"), "pair must be True, False or None"),
                          (lambda: K.plan(4, 1048577, "f32"), r"longer than the longest row the plan table holds on chip \(1048576"),
                          (lambda: K.plan(4, 5000, "f32", warps=2), "a thread of a CTA of 64 keeps at most 32"),
                          (lambda: K.plan(4, 5000, "f32", ctas=32), "at most 16 CTAs per row"),
                          (lambda: K.plan(4, 100, "f32", table=SMALL["bf16"]), "table is for bf16")]:
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("M, N, overrides", [(5, 1000, {}), (3, 997, {"table": SMALL["f32"]})], ids=["warp", "cluster"])
def test_the_row_frame_serves_a_kernel_written_over_chunks(M, N, overrides):
    """rows.py's steps as another kernel (the backward kernels) uses them: r.chunks with a
    carried value walks this CTA's part of the row (one chunk: the plan holds the row),
    r.reduce and r.store_row give the row's sum once, from the first CTA of a cluster."""
    import tile_mlir
    from tile_mlir.kernels.rows import row_kernel

    p = K.plan(M, N, "f32", **overrides)
    with row_kernel("row_sum", p, M, [("X", "rows"), ("S", "stat")]) as r:
        k, x = r.k, r.tile()
        for col, s0, s in r.chunks(x, "X", padding=0.0, carry=r.f32(0.0)):
            for i, v, acc, s1 in r.vectors(x, carry=s0):
                k.yield_(k.reduction("add", v, acc))
            k.yield_(s1)
        r.store_row("S", r.reduce(s, "sum"))
    x = np.random.default_rng().standard_normal((M, N)).astype(np.float32)
    got = np.full(M, np.nan, np.float32)
    tile_mlir.compile(k.module, backend="interpreter").row_sum.launch(p.grid(M), p.threads, x, got)
    np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)


def test_every_way_of_widening_bf16_is_exact():
    """r.vectors(x, nth=n) widens bf16 to f32 in a way of its own for each pass n
    (arith.extf, shifts and masks, an interleave with zeros): each gives every one of the 65536
    bf16 bit patterns (NaNs, infinities, -0.0, subnormals) as the f32 of the same bits."""
    import tile_mlir
    from tile_mlir.kernels.rows import row_kernel

    M, N = 8, 8192
    p = K.plan(M, N, "bf16")
    with row_kernel("widen", p, M, [("X", "rows"), *((f"Y{n}", f"memref<{M}x{N}xf32>") for n in range(3))]) as r:
        x = r.tile()
        r.load(x, "X")
        for n in range(3):
            y = r.tile("f32")
            for i, v in r.vectors(x, nth=n):
                r.put(y, i, v)
            r.store(f"Y{n}", y)
    bits = np.random.default_rng().permutation(np.arange(65536, dtype=np.uint32)).reshape(M, N)
    ys = [np.full((M, N), np.nan, np.float32) for _ in range(3)]
    tile_mlir.compile(r.k.module, backend="interpreter").widen.launch(
        p.grid(M), p.threads, bits.astype(np.uint16), *ys)
    for y in ys:
        assert np.array_equal(y.view(np.uint32), bits << 16)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("name", ["rmsnorm", "layernorm"])
def test_the_norms_hold_a_bf16_row_packed_across_their_reductions(name, tmp_path):
    """At 64 bf16 a thread (1024 x 65536: a cluster of 2 CTAs of 512 threads), each
    pass widens the row its own way, so the row stays two bf16 a register across the
    reductions (32 registers, not 64) and ptxas needs at most 64 registers a thread:
    two CTAs an SM (RMSNorm took 80 and LayerNorm 127 with one way for every pass)."""
    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.options import Options

    plan = {"ctas": 2, "warps": 16}  # the plan measured best before the push (today's may differ)
    assert K.plan(1024, 65536, "bf16", name, **plan).E == 64
    source = tmp_path / "k.ptx"
    source.write_text(lower_to_ptx(K.kernel_text(name, 1024, 65536, "bf16", **plan), Options(chip="sm_90a")).ptx)
    info = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(source), "-o", str(tmp_path / "k.cubin")],
                          check=True, capture_output=True, text=True).stderr
    assert int(re.search(r"Used (\d+) registers", info).group(1)) <= 64, info


def test_the_package_builds_kernels_and_templates_nothing():
    """Every kernel is built with tile_mlir.build (no string.Template anywhere in the
    package); its text has its gpu.func and the plan's block."""
    package = Path(K.__file__).resolve().parents[1]
    assert [p for p in package.rglob("*.py") if "Template(" in p.read_text()] == []
    for name in NAMES:
        for M, N, dtype in ((5, 1000, "f32"), (2, 40000, "bf16")):
            text = K.kernel_text(name, M, N, dtype)
            assert f"gpu.func @{name}(" in text and "tile.copy" in text and "tile.reduce" in text
            assert f"known_block_size = array<i32: {K.plan(M, N, dtype, name).threads}, 1, 1>" in text
            assert "kernels/forward.py" in text  # each op is located at the kernel's Python line,
            assert "kernels/rows.py" not in text  # not at a line of the row frame's helpers


# --- the generated PTX ------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M, N, dtype", [(64, 1000, "f32"), (64, 4096, "bf16"), (8, 40000, "f32"), (8, 262144, "f32")],
                         ids=["warp", "warps", "cluster", "cluster16"])
def test_ptx_has_vector_accesses_and_no_local_memory(name, M, N, dtype, tmp_path):
    """Each element of x is loaded once (C vector loads per thread, and C of each
    weight), the row and the statistics stored once; a reduction is one barrier across
    warps and, in a cluster, one push of the CTA's partial and one wait;
    no local memory in the PTX, and no spill beyond what the measured table records;
    softmax's one exponential per element; the norms' weights loaded a vector at a time."""
    from tile_mlir.kernels.plan import measured_table

    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.options import Options

    p = K.plan(M, N, dtype, name)
    ptx = lower_to_ptx(K.kernel_text(name, M, N, dtype), Options(chip="sm_90a")).ptx
    spec = K.SPECS[name]
    loads = p.C * (1 + len(spec.params))  # x once, and each weight
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == loads
    assert not re.search(r"ld\.global\.(b|f|u)", ptx)  # no scalar global load
    stores = re.findall(r"st\.global\.(v4\.b32|b16|b32)", ptx)
    stats = sum(role == "stat" for _, role in spec.outputs)
    if name == "logsumexp":
        assert stores == ["b16" if dtype == "bf16" else "b32"]
    else:  # the row in 16-byte vectors, then one f32 per statistic
        assert sorted(stores) == sorted(["v4.b32"] * p.C + ["b32"] * stats)
    # softmax's and logsumexp's (max, sum) pair: one combiner reduction over a cluster
    packed = name in ("softmax", "logsumexp") and p.packs_pair(writes_row=name == "softmax")
    reductions = 1 if name == "rmsnorm" or packed else 2
    assert len(re.findall(r"bar\.sync", ptx)) == (0 if p.W == 1 else reductions)
    # a cluster: one cluster barrier, at the entry (the mbarriers' init), and per reduction a
    # push into the CTAs' shared memory and one wait on the CTA's own mbarrier
    assert len(re.findall(r"barrier\.cluster\.arrive", ptx)) == (1 if p.CL > 1 else 0)
    assert len(re.findall(r"mbarrier\.try_wait", ptx)) == (reductions if p.CL > 1 else 0)
    # a slot and an mbarrier a reduction; the pair's: its two words' slots and one mbarrier
    assert len(re.findall(r"mapa\.shared::cluster", ptx)) == ((3 if packed else 2 * reductions) if p.CL > 1 else 0)
    assert (f".reqnctapercluster {p.CL}, 1, 1" in ptx) == (1 < p.CL <= 8)  # 16: given at the launch
    assert ".local" not in ptx
    # one exponential per element and one per thread (its rescale exp(m - A)), in softmax too;
    # the pair adds one a thread (its sum rescaled to its warp's max), one a level of the
    # warps' tree (the lanes share it) and one a CTA partial after the first (logsumexp then
    # has no use for the rescale)
    if packed:
        assert ptx.count("ex2.approx") == p.E + (name == "softmax") + 1 + (p.W.bit_length() - 1) + (p.CL - 1)
    else:
        assert ptx.count("ex2.approx") == (p.E + 1 if name in ("softmax", "logsumexp") else 0)
    if spec.params:  # the norms load each vector of W (and B) just before the row's store that needs it
        accesses = re.findall(r"(ld|st)\.global\.v4", ptx)[p.C:]
        assert accesses == (["ld"] * len(spec.params) + ["st"]) * p.C
    if shutil.which("ptxas"):
        source = tmp_path / "k.ptx"
        source.write_text(ptx)
        info = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(source), "-o", str(tmp_path / "k.cubin")],
                              check=False, capture_output=True, text=True).stderr
        # a measured plan may spill what measured_plans.json says (benchmarks.plan_search); no other
        allowed = next((e["spill_bytes"] for e in measured_table().get(name, {}).get(dtype, [])
                        if e["label"] == p.label()), 0)
        spilled = re.search(r"(\d+) bytes spill stores", info)
        assert (int(spilled.group(1)) if spilled else 0) <= allowed, info


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
    assert (c.grid, c.block) == (-(-10 // c.plan.R), c.plan.threads) and c.plan.kind == "warps"
    assert c.signature == "rmsnorm(x, weight, y, rstd, eps, rows)"
    rng = np.random.default_rng()
    x, w = random_inputs(rng, 10, 3000, "f32", 1)
    y, rstd = np.full_like(x, np.nan), np.full(10, np.nan, np.float32)
    c.kernel.launch(c.grid, c.block, x, w, y, rstd, 1e-5, 10)
    ref, ref_rstd = REFERENCES["rmsnorm"](as_f64(x), as_f64(w), eps=1e-5)
    assert_agrees(y, ref, "f32")
    assert_agrees(rstd, ref_rstd, "f32")
    assert K.compiled("rmsnorm", 10, 3000, "f32", backend="interpreter") is c  # cached


def test_compiled_binds_device_arrays_in_the_documented_order(fake, tmp_path, monkeypatch):
    """What the benchmarks do, on a fake CUDA driver (test/python/fakecuda.py): compiled()
    builds the cubin here, and kernel.bind(grid, block, x, weight, y, rstd, eps, rows) with
    device arrays packs their pointers, eps and M, in that order, for one cuLaunchKernel."""
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    c = K.compiled("rmsnorm", 64, 1000, "bf16", backend="cuda", warps=1)  # one warp a row, 4 rows a CTA
    assert (c.grid, c.block, c.signature) == (16, 128, "rmsnorm(x, weight, y, rstd, eps, rows)")
    assert len(list((tmp_path / "by-name").iterdir())) == 1  # remembered, for a machine without MLIR
    x, w, y = (np.zeros(shape, np.uint16) for shape in ((64, 1000), (1000,), (64, 1000)))
    rstd = np.zeros(64, np.float32)
    devices = [DeviceArray(a, "<V2") for a in (x, w, y)] + [DeviceArray(rstd, "<f4")]
    seen = []
    fake.kernels["rmsnorm"] = lambda p: seen.append(
        [param(p, i, ctypes.c_uint64) for i in range(4)] + [param(p, 4, ctypes.c_float), param(p, 5, ctypes.c_int64)])
    launch = c.kernel.bind(c.grid, c.block, *devices, 1e-6, 64)
    launch()
    assert seen == [[x.ctypes.data, w.ctypes.data, y.ctypes.data, rstd.ctypes.data, np.float32(1e-6), 64]]
    assert fake.launches[-1][:2] == ((16, 1, 1), (128, 1, 1))
    with pytest.raises(LaunchError, match="blocks of 128 threads"):
        c.kernel.bind(c.grid, 256, *devices, 1e-6, 64)


def test_a_cluster_of_sixteen_launches_as_the_runtime_allows_it(fake, tmp_path, monkeypatch):
    """A row of 262144 f32 is a cluster of 16 CTAs, a non-portable size, which the kernel
    leaves to the launch: cuLaunchKernelEx with the cluster dimension, after the
    non-portable cluster size is allowed (fake CUDA driver); a cluster of 4 is fixed in
    the kernel and launches without the attribute."""
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    c = K.compiled("softmax", 2, 262144, "f32", backend="cuda")
    assert (c.grid, c.block, c.plan.CL) == (32, c.plan.threads, 16)
    x = np.zeros((2, 262144), np.float32)
    fake.kernels["softmax"] = lambda p: None
    c.kernel.bind(c.grid, c.block, DeviceArray(x, "<f4"), DeviceArray(x, "<f4"), 2)()
    assert fake.function_attributes[("softmax", "non-portable")] == 1
    assert fake.launches[-1][:2] == ((32, 1, 1), (c.block, 1, 1)) and fake.launches[-1][5] == (16, 1, 1)
    assert "cuLaunchKernel" not in fake.calls
    c = K.compiled("softmax", 2, 65536, "f32", backend="cuda", ctas=4)
    x = np.zeros((2, 65536), np.float32)
    c.kernel.bind(c.grid, c.block, DeviceArray(x, "<f4"), DeviceArray(x, "<f4"), 2)()
    assert fake.launches[-1][:2] == ((8, 1, 1), (1024, 1, 1)) and fake.launches[-1][5] is None


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
    assert K.kernel_text("softmax", 13, 700, "bf16") == made  # one kernel for every M
    with pytest.raises(BindingsTooOld, match=r"python -m tile_mlir.testing.prepare"):
        K.kernel_text("softmax", 12, 701, "bf16")  # built above, not remembered
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
    """The softmax, with the statistics it shares with logsumexp (max_sum and
    row_max_sum: two reductions, or the pair's two steps), is at most 38 lines of code
    (Triton's tutorial kernel is about 17); docs/builder.md gives the counts."""
    from tile_mlir.kernels import forward

    counts = {f.__name__: code_lines(f) for f in (forward.softmax, forward.max_sum, forward.row_max_sum,
                                                   forward.logsumexp, forward.rmsnorm, forward.layernorm)}
    shared = counts["max_sum"] + counts["row_max_sum"]
    assert counts["softmax"] + shared <= 38 and max(counts.values()) <= 40, counts
    doc = (Path(__file__).resolve().parents[2] / "docs" / "builder.md").read_text()
    said = re.search(r"the softmax is (\d+) lines of code, and the statistics it shares with\s+logsumexp (\d+) more;"
                     r" LayerNorm, the longest, (\d+)", doc).groups()
    assert tuple(map(int, said)) == (counts["softmax"], shared, counts["layernorm"])


# Plans that keep part of the row in dynamic shared memory (``row_in`` registers+shared:
# C vectors a thread in registers, then S ≤ shared · C in shared memory): forced, in a
# cluster of 2 with one row or two rows a CTA, N odd, 1 and 3 times the registers' share;
# and the scaled-down table's tier past a cluster of 16's registers (the bf16 tiers: the
# thresholds test below; its cluster of 16 on the GPU, test/gpu/test_fused_gpu.py).
SHARED_SHAPES = [
    (3, 501, "f32", {"ctas": 2, "warps": 1, "rows": 1, "shared": 1}, 1),
    (5, 700, "f32", {"ctas": 2, "warps": 1, "rows": 2, "shared": 2}, 2),
    (2, 5001, "f32", {"table": SMALL["f32"]}, 1),
    (3, 1023, "f32", {"ctas": 2, "warps": 1, "rows": 1, "shared": 3}, 3),
    (3, 999, "bf16", {"ctas": 2, "warps": 1, "rows": 1, "shared": 1}, 1),
    # C of 3 or 4 vectors: a last part of S mod C vectors, through a smaller tile
    (3, 1201, "f32", {"ctas": 2, "warps": 1, "rows": 1, "shared": 1}, 1),
    (4, 1801, "f32", {"ctas": 2, "warps": 1, "rows": 2, "shared": 2}, 2),
    (3, 3501, "bf16", {"ctas": 2, "warps": 1, "rows": 1, "shared": 1}, 1),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("M, N, dtype, overrides, parts", SHARED_SHAPES,
                         ids=lambda v: ("small" if "table" in v else str(v)) if isinstance(v, dict) else str(v))
def test_plans_with_shared_memory_against_numpy(name, M, N, dtype, overrides, parts):
    """Each kernel on a plan that keeps S vectors a thread in dynamic shared memory: the
    launch gives the bytes (``shared_bytes``), every output against float64 (the
    interpreter checks every shared access for races and bounds)."""
    p = K.plan(M, N, dtype, name, **overrides)
    assert p.row_in == "registers+shared" and p.kind == "cluster" and 0 < p.S <= parts * p.C
    assert p.C + p.S == -(-N // (p.CL * p.W * 32 * p.V)), "at most one vector a thread past an even split"
    assert p.shared_bytes == p.S * 16 * p.threads and p.CH * p.CL >= N
    rng = np.random.default_rng()
    x, *params = random_inputs(rng, M, N, dtype, len(K.SPECS[name].params))
    outputs, refs = run(name, x, *params, **overrides)
    assert_all_agree(name, outputs, refs, dtype)


@pytest.mark.parametrize("name", NAMES)
def test_shared_memory_plans_keep_special_rows_as_torch(name):
    """Rows of -inf, NaN and +inf on a shared-memory plan, whose shared part holds them."""
    M, N, dtype = 6, 501, "f32"
    overrides = {"ctas": 2, "warps": 1, "rows": 1, "shared": 1}
    x, *params = random_inputs(np.random.default_rng(5), M, N, dtype, len(K.SPECS[name].params))
    x[1, :] = -np.inf
    x[2, 400] = np.nan  # in the shared part of CTA 1
    x[3, 300] = np.inf
    x[4, 130] = -np.inf  # in the shared part of CTA 0
    outputs, refs = run(name, x, *params, **overrides)
    assert_all_agree(name, outputs, refs, dtype)


@pytest.mark.parametrize("N, dtype, parts", [(262145, "f32", 1), (524288, "f32", 1), (1048576, "f32", 3),
                                             (524289, "bf16", 1), (2097152, "bf16", 3)])
def test_plan_past_the_registers_keeps_the_rest_in_shared_memory(N, dtype, parts):
    p = K.plan(16, N, dtype, "softmax")
    assert (p.kind, p.CL, p.threads, p.row_in) == ("cluster", 16, 1024, "registers+shared")
    assert p.C + p.S == -(-N // (16 * 1024 * p.V)) and (parts - 1) * p.C < p.S <= parts * p.C
    assert p.CH * p.CL >= N and p.shared_bytes <= 192 * 1024
    assert "dynamic shared memory" in p.why and "in dynamic shared memory" in str(p)


def test_what_shared_memory_plans_refuse():
    with pytest.raises(OptionError, match="longer than the longest row"):
        K.plan(16, 1048577, "f32", "softmax")
    for override in ("ctas", "warps", "vectors"):
        with pytest.raises(OptionError, match=f"{override} must be an int"):
            K.plan(16, 1000, "f32", "softmax", **{override: 2.0})
    for bad in (4, 1.5, "1", True):
        with pytest.raises(OptionError, match="shared must be 0 .. 3"):
            K.plan(16, 1000, "f32", "softmax", shared=bad)
    for M, N in (("softmax", 1000), (16, 1000.0), (True, 1000), (16, (1000,))):  # the kernel's name first, a float
        with pytest.raises(OptionError, match=r"M and N must be ints \(plan\(M, N, dtype, kernel\)\)"):
            K.plan(M, N, "f32", "softmax")
    assert K.plan(np.int64(16), np.int64(1000), "f32", "softmax") == K.plan(16, 1000, "f32", "softmax")
    with pytest.raises(OptionError, match="more than the 196608"):
        K.plan(16, 300000, "f32", "softmax", ctas=4, warps=32, shared=3, vectors=5)
    x, r, w = (np.ones(s, np.float32) for s in ((2, 501), (2, 501), (501,)))
    with pytest.raises(OptionError, match="add_rmsnorm keeps its row in registers only"):
        K.run("add_rmsnorm", x, r, w, ctas=2, warps=1, rows=1, shared=1)
