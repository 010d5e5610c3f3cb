"""The benchmarks' peers, ceilings and training parts that need no GPU: the rates and the
best peer of a fused case, the targets and sections of benchmarks 5 and 6 from fake
results (peers missing, refused, failed, wrong; ours not built), the merge of several
runs' results, ncu's CSV in both layouts, and the case lists."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import fused, ncu_bytes, peers, report, report_fused, report_training, training  # noqa: E402

LIGER_REFUSED = "refused: Liger's kernels take rows of at most 65536 columns (calculate_settings raises for N = 262144)"


def _fused_row(name, M, N, dtype, pct_copy, vs_best, rng):
    """A fused case as ``fused.fused_case`` writes it: times in ms from the figures asked for."""
    x_bytes = M * N * fused.ITEMSIZE[dtype]
    row = {"kernel": name, "M": M, "N": N, "dtype": dtype, "bytes": fused.traffic(name, M, N, dtype), "eps": 1e-5,
           "ours_grid": M, "ours_block": 128, "triton_cfg": "w8", "triton_candidates_us": {"w8": 30.1},
           "triton_tune_s": 1.5, "errors": {"tile-mlir": 1e-7, "triton": 2e-7}, "status": {}}
    copy_ms = 2 * x_bytes / 4000e6
    for mode in ("", "flushed_"):
        row[f"copy_{mode}ms"] = copy_ms
        row[f"read_{mode}ms"] = copy_ms / 2.1
        ours = row["bytes"] / (4000e6 * pct_copy / 100)
        row[f"ours_{mode}ms"] = ours
        row[f"triton_{mode}ms"] = ours * vs_best  # the best peer
        row[f"torch_{mode}ms"] = ours * vs_best * rng.uniform(1.01, 2)
        row[f"compile_{mode}ms"] = ours * vs_best * rng.uniform(1.01, 2)
    row["status"] = {"triton": "ok", "torch": "ok", "compile": "ok"}
    if N > peers.LIGER_MAX_N:
        row["status"]["liger"] = LIGER_REFUSED
    elif name == "logsumexp":
        row["status"]["liger"] = "missing: Liger-Kernel has no logsumexp kernel"
    else:
        row["status"]["liger"] = "wrong: liger: wrong result (error 5e-3, tolerance 0.004)"
        for mode in ("", "flushed_"):
            row[f"liger_{mode}ms"] = row[f"ours_{mode}ms"] * vs_best * 3
    fused.rates(row, x_bytes)
    return row


def _fused_results(pct_copy, vs_best, drop=(), seed=None):
    rng = np.random.default_rng(seed)
    rows = [_fused_row(n, M, N, dt, pct_copy, vs_best * report_fused.bar(M, N), rng) for n, M, N, dt in fused.CASES
            if (n, M, N, dt) not in drop]
    return {"fused": {"kernels": list(fused.KERNELS), "shapes": [list(s) for s in fused.SHAPES],
                      "dtypes": list(fused.DTYPES), "rows": rows, "tolerance": fused.TOLERANCE, "liger": "0.8.5",
                      "failed": [{"kernel": n, "M": M, "N": N, "dtype": dt, "error": "AssertionError: wrong"}
                                 for n, M, N, dt in drop], "skipped": [], "triton_configs": {"1024": [2, 4, 8]}}}


def test_rates_pick_the_fastest_peer_with_a_figure():
    row = _fused_row("softmax", 64, 262144, "f32", 96.0, 1.5, np.random.default_rng(0))
    assert row["best_peer"] == "triton" and row["vs_best"] == pytest.approx(1.5)
    assert row["pct_copy"] == pytest.approx(96.0)
    assert row["read_GBs"] == pytest.approx(2.1 * row["copy_GBs"] / 2)  # one read of x, over the read's time
    assert "liger_GBs" not in row and row["vs_triton"] == pytest.approx(1.5)


@pytest.mark.parametrize("met", [True, False])
def test_fused_targets_per_kernel_shape_and_dtype(met):
    """Every kernel x shape x dtype: >= 95% of copy and >= 1.0x the best peer (2x at
    64x262144); a bar missed by a little on one case misses exactly that target."""
    rng = np.random.default_rng()
    margin = rng.uniform(0.002, 0.05)
    results = _fused_results(95.0 + 100 * margin, 1.0 + margin)
    targets = {t["key"]: t for t in report.targets(results)}
    keys = [f"fused-{n}-{M}x{N}-{dt}" for n, M, N, dt in fused.CASES]
    assert set(keys) <= set(targets) and len(keys) == 48
    assert all(targets[k]["met"] for k in keys)
    assert ">= 2.0x the best peer" in targets["fused-softmax-64x262144-f32"]["target"]
    assert "Liger refused" in targets["fused-softmax-64x262144-f32"]["figure"]
    if not met:
        one = rng.integers(len(results["fused"]["rows"]))
        r = results["fused"]["rows"][one]
        if rng.integers(2):
            r["pct_copy"] = 95.0 * (1 - margin)
        else:
            r["vs_best"] = report_fused.bar(r["M"], r["N"]) * (1 - margin)
        targets = {t["key"]: t for t in report.targets(results)}
        missed = [k for k in keys if not targets[k]["met"]]
        assert missed == [f"fused-{r['kernel']}-{r['M']}x{r['N']}-{r['dtype']}"]


def test_fused_report_says_why_a_peer_has_no_figure():
    drop = {("layernorm", 1024, 65536, "bf16")}
    results = _fused_results(90.0, 0.9, drop=drop, seed=1)
    targets = {t["key"]: t for t in report.targets(results)}
    assert targets["fused-layernorm-1024x65536-bf16"]["figure"].startswith("not measured: failed")
    text = report.markdown(results)
    assert "## 5. Fused kernels" in text and "### RMSNorm (with weight)" in text
    assert "Liger-Kernel 0.8.5 (from its wheel)" in text
    assert "| 64x262144 | f32 |" in text and "| refused |" in text and "(wrong) |" in text
    assert f"- Liger: {LIGER_REFUSED}" in text and "Liger: missing: Liger-Kernel has no logsumexp kernel" in text
    assert "layernorm_bf16_1024x65536 failed**: AssertionError: wrong" in text
    assert report_fused.NOTES["fused-softmax-4096x16384"] in text  # the note of a missed target, by kernel and shape
    assert "What limits the missed targets" in text


def test_fused_report_without_liger():
    results = _fused_results(99.0, 1.2, seed=2)
    results["fused"]["liger"] = "missing: liger_kernel does not import (ModuleNotFoundError: x)"
    assert "Liger-Kernel (**missing: liger_kernel does not import" in report.markdown(results)


def test_fused_plot(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    assert report_fused.plot(_fused_results(95.0, 1.1, seed=3), tmp_path, plt) == ["fused.png"]
    assert (tmp_path / "fused.png").stat().st_size > 10000


# --- benchmark 6: the training kernels ---


def _train_row(name, M, N, dtype, pct_copy, vs, ours=True):
    x_bytes = M * N * fused.ITEMSIZE[dtype]
    row = {"kernel": name, "M": M, "N": N, "dtype": dtype, "bytes": training.traffic(name, M, N, dtype),
           "errors": {}, "status": {"torch": "ok", "compile": "ok", "liger": "ok"}}
    ours_ms = row["bytes"] / (4000e6 * pct_copy / 100)
    for mode in ("", "flushed_"):
        row[f"copy_{mode}ms"] = 2 * x_bytes / 4000e6
        if ours:
            row[f"ours_{mode}ms"] = ours_ms
        row[f"torch_{mode}ms"] = ours_ms * vs * 2
        row[f"compile_{mode}ms"] = ours_ms * vs * (1.5 if name == "cross_entropy" else 1.0)  # the best peer
        row[f"liger_{mode}ms"] = ours_ms * vs * (1.0 if name == "cross_entropy" else 3.0)
    row["status"]["ours"] = "ok" if ours else "not built: tile_mlir.kernels has no rms_norm_backward"
    if N > peers.LIGER_MAX_N and name != "cross_entropy":
        row["status"]["liger"] = LIGER_REFUSED
        del row["liger_ms"], row["liger_flushed_ms"]
    training.rates(row)
    return row


def _train_results(pct_bwd, vs_bwd, pct_ce, vs_ce, not_built=()):
    rows = [_train_row(n, M, N, dt, pct_ce if n == "cross_entropy" else pct_bwd,
                       vs_ce if n == "cross_entropy" else vs_bwd, n not in not_built) for n, M, N, dt in training.CASES]
    return {"training": {"kernels": list(training.KERNELS), "cases": [list(c) for c in training.CASES], "rows": rows,
                         "failed": [], "skipped": [], "tolerance": fused.TOLERANCE, "liger": "0.8.5"}}


def test_training_cases_and_bytes():
    assert len(training.CASES) == 2 + 6 + 6 + 3
    assert ("cross_entropy", 4096, 262144, "bf16") in training.CASES
    M, N = 4096, 4096
    assert training.traffic("rmsnorm_backward", M, N, "f32") == (3 * M * N + 2 * N) * 4
    assert training.traffic("layernorm_backward", M, N, "bf16") == (3 * M * N + 4 * N) * 2
    assert training.traffic("softmax_backward", M, N, "f32") == 3 * M * N * 4
    assert training.traffic("cross_entropy", 8192, 131072, "bf16") == 2 * 8192 * 131072 * 2


@pytest.mark.parametrize("met", [True, False])
def test_training_targets(met):
    """Backward: >= 90% of copy and >= 1.3x the best peer; cross-entropy: >= 1.8x Liger
    and >= 85% of copy."""
    m = np.random.default_rng().uniform(0.002, 0.05) * (1 if met else -1)
    results = _train_results(90 * (1 + m), 1.3 * (1 + m), 85 * (1 + m), 1.8 * (1 + m))
    targets = {t["key"]: t for t in report.targets(results)}
    keys = [f"train-{n}-{M}x{N}-{dt}" for n, M, N, dt in training.CASES]
    assert all(targets[k]["met"] is met for k in keys), [targets[k] for k in keys if targets[k]["met"] is not met]
    assert "x Liger" in targets["train-cross_entropy-8192x131072-bf16"]["figure"]


def test_training_report_when_ours_is_not_built():
    results = _train_results(95, 1.5, 90, 2.0, not_built=("rmsnorm_backward",))
    targets = {t["key"]: t for t in report.targets(results)}
    t = targets["train-rmsnorm_backward-4096x16384-f32"]
    assert not t["met"] and t["figure"].startswith("ours: not built: tile_mlir.kernels has no rms_norm_backward")
    assert "torch.compile" in t["figure"]  # the peers' figures all the same
    text = report.markdown(results)
    assert "## 6. Training kernels" in text and "| RMSNorm backward (dx, dw) | 1024x65536 | f32 | not built" in text
    assert "- tile-mlir: not built: tile_mlir.kernels has no rms_norm_backward" in text


def test_merge_concatenates_the_split_sections():
    a = _fused_results(99, 1.2, seed=4)
    b = _fused_results(98, 1.1, seed=5)
    a["fused"]["rows"] = [r for r in a["fused"]["rows"] if r["dtype"] == "f32"]
    a["fused"]["dtypes"], b["fused"]["dtypes"] = ["f32"], ["bf16"]
    b["fused"]["rows"] = [r for r in b["fused"]["rows"] if r["dtype"] == "bf16"]
    copy = {"what": "copy", "M": 64, "N": 262144, "dtype": "f32", "us": 31.0}
    a |= {"sass": {"softmax_f32_64x262144": {"BAR": 4}}, "ncu": [copy, {**copy, "what": "softmax"}]}
    b |= {"sass": {"softmax_bf16_64x262144": {"BAR": 2}}, "ncu": [{**copy, "us": 30.0}, {**copy, "dtype": "bf16"}]}
    merged = report.merge([a | {"env": {"gpu": "x"}}, b | _train_results(95, 1.5, 90, 2.0)])
    assert len(merged["fused"]["rows"]) == 48 and merged["fused"]["dtypes"] == ["f32", "bf16"]
    assert set(merged["sass"]) == {"softmax_f32_64x262144", "softmax_bf16_64x262144"}
    assert [(r["what"], r["dtype"], r["us"]) for r in merged["ncu"]] == [
        ("softmax", "f32", 31.0), ("copy", "f32", 30.0), ("copy", "bf16", 31.0)]  # a case profiled twice: the last
    assert "training" in merged and merged["env"] == {"gpu": "x"}
    assert all(t["met"] for t in report.targets(merged) if t["key"].startswith(("fused", "train")))


def test_report_command_merges(tmp_path):
    import json

    a, b = tmp_path / "a", tmp_path / "b"
    for d, res in ((a, _fused_results(99, 1.2, seed=6)), (b, _train_results(95, 1.5, 90, 2.0))):
        d.mkdir()
        (d / "results.json").write_text(json.dumps(res))
    assert report.main([str(a / "results.json"), str(b / "results.json"), "--out", str(tmp_path / "all")]) == 0
    text = (tmp_path / "all" / "results.md").read_text()
    assert "## 5. Fused kernels" in text and "## 6. Training kernels" in text
    assert "training" in json.loads((tmp_path / "all" / "results.json").read_text())


# --- ncu's CSV ---

_DETAILS = '''==PROF== Connected to process 4242 (/usr/bin/python3.12)
==PROF== Profiling "copy_kernel": 0%....50%....100% - 1 pass
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3.12","127.0.0.1","void at::native::copy_kernel(float*)","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","268,435,456"
"0","4242","python3.12","127.0.0.1","void at::native::copy_kernel(float*)","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","Mbyte","268.44"
==PROF== Profiling "softmax": 0%....50%....100% - 1 pass
"1","4242","python3.12","127.0.0.1","softmax","1","7","(1024, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","Gbyte","0.54"
"1","4242","python3.12","127.0.0.1","softmax","1","7","(1024, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","268435456"
==PROF== Disconnected from process 4242
'''
_RAW = '''==WARNING== Note: Running with uncontrolled GPU clocks.
"ID","Process ID","Kernel Name","dram__bytes_read.sum","dram__bytes_write.sum"
"","","","KB","byte"
"0","1","read_u4","262,144","12"
'''


def test_ncu_csv_in_both_layouts():
    ks = ncu_bytes.parse_csv(_DETAILS)
    assert [k["id"] for k in ks] == [0, 1] and ks[1]["name"] == "softmax"
    assert ks[0]["dram__bytes_read.sum"] == 268435456 and ks[0]["dram__bytes_write.sum"] == pytest.approx(268.44e6)
    assert ks[1]["dram__bytes_read.sum"] == pytest.approx(0.54e9)
    raw = ncu_bytes.parse_csv(_RAW)
    assert raw == [{"id": 0, "name": "read_u4", "dram__bytes_read.sum": 262144e3, "dram__bytes_write.sum": 12.0}]
    with pytest.raises(ValueError, match="no CSV header"):
        ncu_bytes.parse_csv("==ERROR== the profiler could not start\n")
    assert ncu_bytes.to_bytes("1,024", "KiB") == 1024 * 1024
    with pytest.raises(ValueError, match="unknown unit"):
        ncu_bytes.to_bytes("1", "cycle")


def test_ncu_lines_pair_cases_and_kernels():
    todo = [{"what": "copy", "M": 4096, "N": 16384, "dtype": "f32"},
            {"what": "read", "M": 4096, "N": 16384, "dtype": "f32", "error": "ModuleNotFoundError: cupy"},
            {"what": "softmax", "M": 4096, "N": 16384, "dtype": "f32", "plan": "warps R1 W32 E16 K1"}]
    lines = ncu_bytes.report(todo, ncu_bytes.parse_csv(_DETAILS))
    assert "read  2.01x written  1.00x" in lines[1] and "softmax [warps R1 W32 E16 K1]" in lines[1]
    assert lines[0].startswith("copy") and "read  1.00x written  1.00x" in lines[0]
    assert lines[2] == "read 4096x16384 f32: not launched (ModuleNotFoundError: cupy)"
    cases = ncu_bytes.cases(("softmax", "rmsnorm"), ("f32",), ((64, 262144),))
    assert [c["what"] for c in cases] == ["copy", "read", "softmax", "rmsnorm"]


def test_liger_missing_or_refused():
    assert peers.refuses(65536) is None and peers.refuses(65537).startswith("refused:")
    if not isinstance(peers._liger(), str):
        pytest.skip("liger_kernel imports here")
    with pytest.raises(peers.Unavailable, match="^missing: liger_kernel does not import"):
        peers.liger_forward("softmax", 1024, 1e-5)
    assert peers.liger_version().startswith("missing:")


_LIMITS = '''"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"
"0","rmsnorm","gpu__time_duration.sum","usecond","16.5"
"0","rmsnorm","dram__bytes_read.sum","Mbyte","33.6"
"0","rmsnorm","dram__bytes_write.sum","byte","33,554,432"
"0","rmsnorm","smsp__issue_active.avg.pct_of_peak_sustained_active","%","41.4"
"0","rmsnorm","launch__registers_per_thread","register/thread","32"
"0","rmsnorm","smsp__inst_executed.sum","inst","2,500,000"
"0","rmsnorm","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","","2.5"
"0","rmsnorm","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","","22.7"
'''


def test_ncu_limits_reads_every_unit_and_orders_the_stalls():
    from benchmarks import ncu_limits

    (k,) = ncu_bytes.parse_csv(_LIMITS, ncu_limits.LIMITS)
    assert k["gpu__time_duration.sum"] == pytest.approx(16500)  # nanoseconds
    assert k["dram__bytes_read.sum"] == pytest.approx(33.6e6) and k["dram__bytes_write.sum"] == 33554432
    f = ncu_limits.figures(k)
    assert f["us"] == pytest.approx(16.5) and f["registers"] == 32 and f["issue_pct"] == pytest.approx(41.4)
    assert f["dram_GBs"] == pytest.approx((33.6e6 + 33554432) / 16500)  # bytes per ns = GB/s
    assert list(f["stalls"]) == ["long_scoreboard", "barrier"] and f["sm_pct"] is None
    line = ncu_limits.line({"what": "rmsnorm", "M": 4096, "N": 4096, "dtype": "bf16"}, f)
    assert "16.50 us" in line and "issue 41.4%" in line and "stalls: long_scoreboard 22.70, barrier 2.50" in line
    assert "2.5M instructions" in line
    assert "SM n/a%" in line  # a figure ncu did not give is said so, not made up
    f.pop("instructions")
    assert "n/a instructions" in ncu_limits.line({"what": "rmsnorm", "M": 4096, "N": 4096, "dtype": "bf16"}, f)


def test_ncu_limits_cases():
    from benchmarks import ncu_limits

    argmax = {"argmax": {"rows": [{"M": 1024, "N": 65536, "dtype": "f32", "ours_cfg": "W4 RB1 C4 P F",
                                   "triton_cfg": "BN4096 w8 chunks"}]}}
    cs = ncu_limits.cases(("rmsnorm",), ("bf16",), ((4096, 4096),), True, argmax)
    assert [c["what"] for c in cs] == ["copy", "read", "rmsnorm", "triton:rmsnorm", "read", "argmax:W4 RB1 C4 P F",
                                       "argmax-triton:BN4096 w8 chunks"]
    assert all((c["M"], c["N"]) == (4096, 4096) and c["dtype"] == "bf16" for c in cs[:4])
    assert [c["what"] for c in ncu_limits.cases(("rmsnorm",), ("f32",), ((64, 262144),), False)] == [
        "copy", "read", "rmsnorm"]
    soft = ncu_limits.cases((), ("bf16",), (), False, None, (), softmax=True)
    assert [c["what"] for c in soft] == ["copy", "read", "softmax:two", "softmax:packed", "softmax:packed_lanes",
                                         "softmax:packed_named", "pair:softmax:two", "pair:softmax:packed",
                                         "pair:logsumexp:two", "pair:logsumexp:packed"]
    assert all((c["M"], c["N"], c["dtype"]) == (4096, 16384, "bf16") for c in soft)
    # each library case is a kernel that benchmarks.prepare compiles (argmax.LIBRARY_PAIR)
    from benchmarks import argmax
    assert {(n, 4096, 16384) for n in ("softmax", "logsumexp")} <= set(argmax.LIBRARY_PAIR)


def test_training_reports_the_kernels_alone_beside_the_api_call():
    """Benchmark 6 times ours twice: the functional API's call (the figure the targets
    read) and the same kernels as bound launches (its host work left out), said beside it."""
    row = _train_row("rmsnorm_backward", 4096, 4096, "bf16", 50.0, 1.5)
    row.pop("pct_copy_kernels", None)
    pct = np.random.default_rng().uniform(60, 95)
    for mode in ("", "flushed_"):
        row[f"ours_kernels_{mode}ms"] = row["bytes"] / (4000e6 * pct / 100)
    row["status"]["ours_kernels"] = "ok"
    training.rates(row)
    assert row["pct_copy_kernels"] == pytest.approx(pct) and row["pct_copy"] == pytest.approx(50.0)
    text, met = report_training.figure(row)
    assert not met and text.startswith("50.0% of copy")  # the target reads the API's call
    assert f"the kernels alone (bound launches): {row['ours_kernels_GBs']:.0f} GB/s, {pct:.1f}% of copy" in text
    assert "ours_kernels" in training.summary(row)


@pytest.mark.parametrize("argv, message", [(["--shapes", "4096by4096"], "--shapes takes MxN"),
                                           (["--shapes", "4096x4096x2"], "--shapes takes MxN"),
                                           (["--argmax", "/nonexistent/results.json"], "not a readable"),
                                           (["--kernels", "gelu"], "unknown kernel"),
                                           (["--backward", "gelu_backward"], "unknown backward")])
def test_ncu_limits_says_what_is_wrong_with_its_arguments(argv, message, capsys):
    from benchmarks import ncu_limits

    with pytest.raises(SystemExit) as e:
        ncu_limits.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_a_missed_target_states_the_ncu_figures_of_its_own_run():
    """``benchmarks.run --ncu``: the kernels behind the missed targets (ours, with the copy
    and the pure read at their shapes) are profiled, and each missed target's note in
    results.md gives those figures; a met target's kernels are not profiled."""
    from benchmarks import report_limits

    rng = np.random.default_rng()
    results = _fused_results(99, 1.2, seed=int(rng.integers(1 << 30))) | _train_results(95, 1.5, 90, 2.0)
    miss = next(r for r in results["fused"]["rows"] if (r["kernel"], r["M"], r["N"], r["dtype"]) == (
        "layernorm", 1024, 65536, "bf16"))
    for mode in ("", "flushed_"):
        miss[f"ours_{mode}ms"] *= 1.4
    fused.rates(miss, 1024 * 65536 * 2)
    bwd = next(r for r in results["training"]["rows"] if r["kernel"] == "rmsnorm_backward" and r["dtype"] == "f32"
               and (r["M"], r["N"]) == (4096, 4096))
    bwd["pct_copy"] = 70.0
    missed = [t["key"] for t in report.targets(results) if not t["met"]]
    assert missed == ["fused-layernorm-1024x65536-bf16", "train-rmsnorm_backward-4096x4096-f32"]
    todo = report_limits.cases(missed, results)
    assert [(c["what"], c["M"], c["N"], c["dtype"]) for c in todo] == [
        ("copy", 1024, 65536, "bf16"), ("read", 1024, 65536, "bf16"), ("copy", 4096, 4096, "f32"),
        ("read", 4096, 4096, "f32"), ("layernorm", 1024, 65536, "bf16"), ("backward:rmsnorm_backward", 4096, 4096, "f32")]
    us = rng.uniform(20, 200, size=len(todo) + 1)  # the backward launches two kernels
    stall = {"long_scoreboard": float(rng.uniform(2, 30)), "barrier": 1.25}
    profiled = [{**c, "us": float(t), "dram_pct": 61.5, "issue_pct": 37.0, "occupancy_pct": 24.0,
                 "theoretical_pct": 25.0, "registers": 128.0, "stalls": stall}
                for c, t in zip([*todo[:4], {**todo[4], "plan": "cluster R1 W16 E16 CL8"},
                                 {**todo[5], "what": "backward:rmsnorm_backward #1 rmsnorm_backward"},
                                 {**todo[5], "what": "backward:rmsnorm_backward #2 column_sums"}], us)]
    results["ncu"] = profiled
    results["sass"] = {fused.label("layernorm", 1024, 65536, "bf16"): {"instructions": 1234, "BAR": 4, "local": 0}}
    text = report.markdown(results)
    notes = {t: next(ln for ln in text.splitlines() if ln.startswith(f"- **{t}")) for t in (
        "LayerNorm (with weight and bias) 1024x65536 bf16", "RMSNorm backward (dx, dw) 4096x4096 f32")}
    ln = notes["LayerNorm (with weight and bias) 1024x65536 bf16"]
    assert f"ours [cluster R1 W16 E16 CL8] bf16: {us[4]:.1f} us, DRAM 62% of peak, issue slots 37% busy" in ln
    assert f"the copy bf16: {us[0]:.1f} us" in ln and f"the pure read bf16: {us[1]:.1f} us" in ln
    assert f"long_scoreboard {stall['long_scoreboard']:.1f}" in ln and "SASS: instructions 1234, BAR 4" in ln
    assert "local" not in ln.split("SASS:")[1]  # a zero count is left out
    ln = notes["RMSNorm backward (dx, dw) 4096x4096 f32"]
    assert f"#1 rmsnorm_backward f32: {us[5]:.1f} us" in ln and f"#2 column_sums f32: {us[6]:.1f} us" in ln
    assert f"the copy f32: {us[2]:.1f} us" in ln and "1024x65536" not in ln.split("**Measured")[1]
    assert text.count("**Measured in this run**") == 2


def test_plan_search_table_pools_runs_and_counts_a_candidate_once(tmp_path, monkeypatch):
    """``plan_search table``: the candidates of a case from several runs pooled, one
    measured in two runs counted once with its faster figure; the fastest that does not
    spill past MAX_SPILL_BYTES chosen; a length the runs did not search keeps its entry."""
    import json

    from benchmarks import plan_search

    rng = np.random.default_rng()
    gb = {label: float(rng.uniform(2000, 3000)) for label in ("a", "b", "c")}
    spill = {"a": 0, "b": 0, "c": plan_search.MAX_SPILL_BYTES + 8}
    monkeypatch.setattr(plan_search, "spills", lambda k, M, N, d, ov: spill[ov["tag"]])

    def run(labels, factor):
        plans = [{"label": f"plan {x}", "overrides": {"tag": x, "warps": 4}, "status": "ok", "gbps": gb[x] * factor}
                 for x in labels]
        return {"device": "H200", "cases": [{"kernel": "softmax", "N": 4096, "dtype": "f32", "M": 64, "copy_gbps": 3900.0,
                                             "plans": plans}]}
    paths = []
    for i, (labels, factor) in enumerate(((("a", "b", "c"), 1.0), (("b",), 1.5))):
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps(run(labels, factor)))
    dest = tmp_path / "table.json"
    old = {"N": 1024, "label": "kept", "ctas": 1}
    dest.write_text(json.dumps({"plans": {"softmax": {"f32": [old]}}}))
    assert plan_search.table([str(p) for p in paths], dest) == 0
    entries = json.loads(dest.read_text())["plans"]["softmax"]["f32"]
    assert entries[0] == old and len(entries) == 2
    new = entries[1]
    best = max(("a", gb["a"]), ("b", gb["b"] * 1.5), key=lambda kv: kv[1])  # "c" spills
    assert new["candidates"] == 3 and new["label"] == f"plan {best[0]}" and new["gbps"] == round(best[1])
    faster = [x for x in ("c",) if gb[x] > best[1]]
    assert len(new.get("faster_but_spills", [])) == len(faster)
