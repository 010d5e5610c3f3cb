"""Benchmark 7 (benchmarks/argmax.py, argmax_kernels.py, report_argmax.py) without a GPU:
every argmax and softmax kernel the GPU run may time, on small shapes in the CPU
interpreter against numpy (ties, NaN and -inf rows; a broken generator fails the check),
the sweeps fit the shapes and the hardware, every kernel is in ``benchmarks.prepare``'s
list, and the report's targets and section from saved results."""

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import argmax as A  # noqa: E402
from benchmarks import argmax_kernels as AK  # noqa: E402
from benchmarks import prepare, report, report_argmax  # noqa: E402


@pytest.mark.sweep  # every benchmark kernel in the interpreter (7-13 s): with the sweeps
def test_every_argmax_kernel_in_the_interpreter():
    """Needs kind = "argmax" and combiner reductions (issue 17)."""
    assert not A.unsupported(), A.unsupported()
    ran = A.check_generators(np.random.default_rng())
    assert ran == len(A.check_configs()) + 16 and ran >= 30  # 4 softmax kernels x 2 dtypes x 2 sizes


def test_the_two_exchange_softmax_in_the_interpreter():
    assert A.check_generators(np.random.default_rng(), which=("two",)) == 4


def test_a_wrong_softmax_fails_the_check(monkeypatch):
    """The check can fail: a softmax that does not divide by the row's sum is caught."""
    original = AK.softmax_rows
    monkeypatch.setattr(A, "softmax_rows", lambda c: original(c).replace("%inv = arith.divf %one, %S", "%inv = arith.divf %one, %one"))
    with pytest.raises(AssertionError, match="wrong in the interpreter"):
        A.check_generators(np.random.default_rng(), which=("two",))


def _far_below_zero(text_of):
    """softmax (two exchanges, 4 warps, one row of 2048 f32) of a row near -1000 whose
    thread 0 holds only -inf (ROWS: its vectors are those of columns 4·(128 j + 0) on),
    in the interpreter, with the kernel text ``text_of(c)``."""
    import tile_mlir

    c = dataclasses.replace(A.softmax_configs("f32")[0], M=1, N=2048, W=4)
    x = (np.random.default_rng().standard_normal((1, 2048)) - 1000).astype(np.float32)
    x[:, (np.arange(2048) // 4) % 128 == 0] = -np.inf
    y = np.zeros_like(x)
    tile_mlir.compile(text_of(c), {"fold": c.fold}, backend="interpreter")[c.name].launch(1, c.block, x, y)
    e = np.exp(x.astype(np.float64) - x.max())
    return y, e / e.sum()


def test_softmax_of_a_row_far_below_zero_with_a_thread_of_minus_inf():
    """The second pass scales the first's exp(x - a) by exp(m - A) / S: a thread of -inf
    has e = 0 and m = -inf, so 0, where exp(a - A) = exp(1000) would make 0 · inf = NaN."""
    y, ref = _far_below_zero(AK.softmax_rows)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-12)
    y, _ = _far_below_zero(lambda c: AK.softmax_rows(c).replace("%ra = arith.subf %m, %A", "%ra = arith.subf %a, %A"))
    assert np.isnan(y).any()  # the test sees the difference


def test_the_kernels_say_what_the_section_measures():
    cands = A.candidates(4096, 16384, "f32")
    c = next(c for c in cands if (c.W, c.RB, c.C) == (4, 1, 8))  # 4 chunks a warp, prefetched
    f, i = dataclasses.replace(c, F=True), dataclasses.replace(c, F=True, I=True)
    assert not c.F and c.K == 4 and c.P and f in cands and i in cands
    text, lanes, sweep = AK.argmax_rows(c), AK.argmax_rows(f), AK.argmax_rows(i)
    assert text.count('kind = "argmax", exec_scope = "warp"') == 2 - (not c.P) and 'kind = "argmax", exec_scope = "cta"' in text
    assert '"tile.copy"' in text and "alignment = 16" in text
    # F: a thread-scope argmax a chunk, one warp-scope combiner reduction a row, then the cta's
    assert lanes.count('kind = "argmax", exec_scope = "thread"') == 2 - (not f.P)
    assert 'kind = "argmax", exec_scope = "warp"' not in lanes and 'kind = "argmax", exec_scope = "cta"' in lanes
    assert lanes.count(f'combiner = @{f.name}_pick, exec_scope = "warp"') == 1
    # I: the warps' chunks interleaved (a warp's next chunk W chunks on), and the warps'
    # (value, column) in a combiner reduction, not a cta-scope argmax by the warps' order
    assert f"%cSTRIDE = arith.constant {i.W * i.CW} : index" in sweep and f"%cFIRST = arith.constant {i.CW} : index" in sweep
    assert f"%cSTRIDE = arith.constant {f.CW} : index" in lanes and f"%cFIRST = arith.constant {f.SEG} : index" in lanes
    assert 'kind = "argmax", exec_scope = "cta"' not in sweep
    assert sweep.count(f'combiner = @{i.name}_pick_warps, exec_scope = "cta"') == 1
    two, packed, lanes, named = (AK.softmax_rows(c) for c in A.softmax_configs("f32"))
    assert two.count('"tile.reduce') == 2 and lanes.count('"tile.reduce') == 1  # tile.reduce2 in the func form
    # the library's form: each warp's max and sum over its lanes (named, no exchange), then
    # one combiner reduction of the warps' pairs
    assert packed.count('"tile.reduce"(') == 2 and packed.count('"tile.reduce2"(') == 1
    assert packed.count('exec_scope = "cta", axes = array<i64: 2>') == 2 and "R[32 : 1@laneid]" in packed
    assert "known_block_size = array<i32: 1024, 1, 1>" in packed
    # QuACK's: the same warps' pairs, written once to shared memory past one barrier, then
    # named warp reductions over the lanes (lane l holding warp l's pair): no cta-scope reduction
    assert named.count('exec_scope = "cta", axes = array<i64: 2>') == 2 and named.count('exec_scope = "warp"') == 2
    assert named.count("gpu.barrier") == 1 and "workgroup(%sh : !SH)" in named and "tile.reduce2" not in named
    assert [c.who for c in A.softmax_configs("f32")] == ["two", *A.ONE_EXCHANGE]


def test_the_sweeps_fit_the_shapes_and_the_hardware():
    for (M, N), dtype in ((s, d) for s in A.SHAPES for d in A.DTYPES):
        cands = A.candidates(M, N, dtype)
        assert len(cands) >= 6, (M, N, dtype)
        for c in cands:
            c.check()
            assert c.W * c.K * c.CW == N and c.grid * c.RB == M and c.block <= 1024 and M * c.W >= A.MIN_WARPS
            assert c.P == (c.K >= 2)
        assert all(N % b == 0 and b <= N for b, _ in A.TRITON[N])
    for dtype in A.DTYPES:
        for c in A.softmax_configs(dtype):
            assert c.plan.K == 1 and c.block == 1024 and (c.M, c.N) == (4096, 16384)
    assert set(A.all_kernels()) <= set(prepare.all_kernels())


def _row(M, N, dtype, pct, vs):
    row = {"M": M, "N": N, "dtype": dtype, "ours_cfg": "W8 RB1 C4 P", "ours_kernel": f"argmax_rows_{dtype}_{M}x{N}",
           "read_cfg": "W8 RB1 C4 P", "read_kernel": f"read_rows_{dtype}_{M}x{N}", "triton_cfg": "BN4096 w8 chunks",
           "pct_read": pct, "vs_torch": vs, "vs_triton": vs, "pct_read_flushed": pct, "vs_torch_flushed": vs,
           "vs_triton_flushed": vs, "ties": 3, "ours_candidates": {"W8 RB1 C4 P": 0.06}, "read_candidates": {"W8 RB1 C4 P": 0.058},
           "triton_candidates": {"BN4096 w8 chunks": 0.07}, "ours_ms": 0.06, "read_ms": 0.058, "two_ms": 1}
    for who in ("ours", "read", "torch", "triton"):
        row[f"{who}_GBs"] = row[f"{who}_flushed_GBs"] = 4000.0
    return row


@pytest.mark.parametrize("met", [True, False])
def test_the_targets_take_the_worst_dtype(met):
    rows = [_row(4096, 16384, "f32", 97.0, 1.1), _row(4096, 16384, "bf16", 96.0 if met else 90.0, 1.05)]
    soft = [{"M": 4096, "N": 16384, "dtype": "f32", "two_ms": 0.1, "packed_ms": 0.09, "saved_us": 10.0, "saved_pct": 10.0,
             "two_GBs": 2000.0, "packed_GBs": 2200.0, "two_kernel": "a", "packed_kernel": "b"}]
    out = report.targets({"argmax": {"rows": rows, "softmax": soft}})
    mine = {t["key"]: t for t in out if t["key"].startswith(("argmax", "softmax-packed"))}
    assert mine["argmax-4096x16384"]["met"] is met and mine["softmax-packed-f32"]["met"]
    assert ("90.0% of the pure read (bf16" in mine["argmax-4096x16384"]["figure"]) is not met
    text = "\n".join(report_argmax.markdown({"argmax": {"rows": rows, "softmax": soft,
                                                         "triton_configs": {"16384": [[4096, 8]]}}}, {}, {}))
    assert "## 7. Argmax over rows" in text and "**W8 RB1 C4 P: 60.0**" in text and "saves" not in text
    assert "| 4096x16384 | f32 | 100.0 | 2000 |" in text


def test_a_ratio_just_short_of_the_target_does_not_read_as_met():
    rows = [_row(4096, 16384, "f32", 99.7, 0.9997)]
    (t,) = [t for t in report.targets({"argmax": {"rows": rows}}) if t["key"] == "argmax-4096x16384"]
    assert "0.9997x Triton" in t["figure"] and t["met"] is False
    rows = [_row(4096, 16384, "f32", 99.7, 1.0123)]
    (t,) = [t for t in report.targets({"argmax": {"rows": rows}}) if t["key"] == "argmax-4096x16384"]
    assert "1.012x Triton" in t["figure"] and t["met"] is True


def test_the_gpu_section_runs_on_stand_ins(monkeypatch):
    """bench_argmax's plumbing on small shapes, with torch, Triton and the kernels replaced
    by numpy (test/python/faketorch.py): every case checked, swept and reported."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import faketorch

    from benchmarks import measure, timing

    faketorch.install(monkeypatch)
    monkeypatch.setattr(A, "unsupported", lambda: None)
    monkeypatch.setattr(A, "SHAPES", ((64, 4096), (16, 16384), (4, 65536)))
    monkeypatch.setattr(A, "SOFTMAX_SHAPE", (4, 16384))
    monkeypatch.setattr(A, "LIBRARY_PAIR", (("softmax", 2, 20000), ("logsumexp", 2, 20000)))  # clusters
    monkeypatch.setattr(A, "MIN_WARPS", 1)
    monkeypatch.setattr(measure, "ROTATE_BYTES", 1)
    times = iter(np.linspace(1.0, 2.0, 1000))  # a different time for every timing
    monkeypatch.setattr(measure, "steady", lambda fns, **kw: (fns[0](), next(times))[1])
    monkeypatch.setattr(measure, "flushed", lambda fn: (fn(), next(times))[1])
    monkeypatch.setattr(A.ceiling, "fastest_read", lambda xs: ([lambda: None], "the read kernel"))
    monkeypatch.setattr(timing, "interleaved", lambda groups: {who: (fns[0](), next(times))[1] for who, fns in groups.items()})
    out = A.bench_argmax(deadline=None)
    assert len(out["rows"]) == 6 and len(out["softmax"]) == 2
    assert all(s["two_ms"] > 0 and s["packed_ms"] > 0 and s["packed_lanes_ms"] > 0 for s in out["softmax"])
    # the library's kernels, each with the pair in two exchanges and in one, checked and timed
    assert [(p["kernel"], p["dtype"]) for p in out["library_pair"]] == [
        ("softmax", "f32"), ("logsumexp", "f32"), ("softmax", "bf16"), ("logsumexp", "bf16")]
    assert all(p["two_ms"] > 0 and p["packed_ms"] > 0 and p["plan"].startswith("cluster") for p in out["library_pair"])
    for r in out["rows"]:
        assert r["ours_cfg"] in r["ours_candidates"] and r["read_cfg"] == "the read kernel"
        assert r["pct_read"] > 0 and r["vs_torch"] > 0 and r["vs_triton"] > 0 and len(r["triton_candidates"]) == 5
        # the three fastest of each side timed again in turns, each side's fastest there compared;
        # ours also capped at CAPS CTAs an SM (the three fastest of those), each a config of its own
        capped = [lb for lb in r["ours_finals"] if " O" in lb]
        assert len(r["triton_finals"]) == A.FINALISTS and len(r["ours_finals"]) == 2 * A.FINALISTS
        assert sorted(capped) == sorted(sorted(r["ours_capped"], key=r["ours_capped"].get)[: A.FINALISTS])
        assert {lb.split(" O")[0] for lb in r["ours_capped"]} == {lb for lb in r["ours_finals"] if " O" not in lb}
        assert all(A.config_of(r["M"], r["N"], r["dtype"], lb).O in A.CAPS for lb in capped)
        for who in ("ours", "triton"):
            assert r[f"{who}_ms"] == min(r[f"{who}_finals"].values()) and r[f"{who}_cfg"] in r[f"{who}_finals"]
    results = {"argmax": out}
    keys = {t["key"] for t in report.targets(results)}
    assert {"argmax-64x4096", "argmax-16x16384", "argmax-4x65536", "softmax-packed-f32", "softmax-packed-bf16",
            "pair-softmax-2x20000-f32", "pair-logsumexp-2x20000-bf16"} <= keys
    assert len(A.reported_kernels(results)) == 6 + 8
    # the SASS dump looks each reported kernel up as benchmarks.prepare compiled it, with its fold
    # (the softmax forms' is "tree": looked up with the default one, their BAR column was empty)
    from benchmarks import run

    compiled, dumped = set(A.all_kernels().values()), run._reported_kernels(results)
    for label, (text, fold) in A.reported_kernels(results).items():
        assert (text, fold) in compiled and dumped[label] == (text, {**run.OPTIONS, "fold": fold})
    assert {fold for _, fold in A.reported_kernels(results).values()} == {"linear", "tree"}
    assert all(s["saved_by"] in A.ONE_EXCHANGE and s["saved_us"] == pytest.approx(
        1e3 * (s["two_ms"] - min(s[f"{w}_ms"] for w in A.ONE_EXCHANGE))) for s in out["softmax"])
    assert "## 7. Argmax over rows" in "\n".join(report_argmax.markdown(results, {}, {}))
    # the barriers of each softmax form and library kernel: the PTX's (compile.json) / the SASS's
    labels = [s[f"{who}_kernel"] for s in out["softmax"] for who in ("two", *A.ONE_EXCHANGE)]
    labels += [p[f"{who}_kernel"] for p in out["library_pair"] for who in ("two", "packed")]
    assert set(labels) <= set(A.all_kernels())  # each one prepare compiles, so compile.json has its facts
    ptx = {label: {"ptx_bar": 10 + i} for i, label in enumerate(labels)}
    sass = {label: {"BAR": 50 + i} for i, label in enumerate(labels)}
    text = "\n".join(report_argmax.markdown(results, sass, ptx))
    soft = [ln for ln in text.splitlines() if ln.startswith("| 4x16384 |")]
    assert len(soft) == 2 and all(f"| {10 + i} / {50 + i} |" in "".join(soft) for i in range(8))
    lib = [ln for ln in text.splitlines() if ln.startswith(("| softmax | 2x20000", "| logsumexp | 2x20000"))]
    assert len(lib) == 4 and all(f"| {10 + i} / {11 + i} |" in "".join(lib) for i in range(8, 16, 2))


def test_ptx_facts_count_the_cta_barriers():
    """benchmarks.prepare's PTX facts: the section's softmax in two exchanges has two CTA
    barriers, QuACK's form one; a warp's or a cluster's barrier is not the CTA's."""
    from tile_mlir import compiler
    from tile_mlir.options import Options

    facts = {c.who: prepare.ptx_facts(compiler.lower_to_ptx(AK.softmax_rows(c), Options(chip=prepare.CHIP, fold=c.fold)).ptx)
             for c in A.softmax_configs("f32") if c.who in ("two", "packed_named")}
    assert facts["two"]["ptx_bar"] == 2 and facts["packed_named"]["ptx_bar"] == 1
    assert facts["packed_named"]["ptx_ex2"] == facts["two"]["ptx_ex2"] + 2  # the warps' sums rescaled, twice
    assert facts["two"]["ptx_shfl"] == facts["packed_named"]["ptx_shfl"] == 20
    assert prepare.ptx_facts("bar.warp.sync -1;\nbarrier.cluster.arrive;\nbarrier.cluster.wait;")["ptx_bar"] == 0
    assert prepare.ptx_facts("bar.sync 0;\nbarrier.sync 1;\nbarrier.cta.sync 0;")["ptx_bar"] == 3
