"""The benchmarks' parts that need no GPU: the multi-warp row kernels and the cross-warp
latency kernel in the CPU interpreter, the candidate lists, the report's targets and
sections from saved results, and ``python -m benchmarks.run``'s command line."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import kernels as K
from benchmarks import prepare, report, report_multiwarp


def test_generators_in_the_interpreter():
    """Every multi-warp configuration the GPU run may time (on small shapes), the one-warp
    checks and the cross-warp latency kernel, on fresh random inputs against numpy."""
    prepare.check_generators(seed=None)


def test_a_wrong_multi_warp_kernel_fails_the_check(monkeypatch):
    """The check can fail: threads that load overlapping vectors give wrong sums."""
    original = K.cta_row_reduce

    def overlapping(c):
        text = original(c)
        return text.replace(f"%cG = arith.constant {c.threads} : index", f"%cG = arith.constant {c.threads // 2} : index")

    monkeypatch.setattr(K, "cta_row_reduce", overlapping)
    with pytest.raises(AssertionError, match="wrong in the interpreter"):
        prepare.check_generators(seed=None)


def test_candidates_fit_the_shapes_and_the_chip():
    for case in K.CTA_ROW_CASES:
        cands = K.cta_row_candidates(*case)
        assert len(cands) >= 4, case
        for c in cands:
            c.check()
            assert c.grid >= K.NUM_SMS and c.block <= 1024 and c.grid * c.S * c.R == c.M
            assert c.chunks * c.threads * c.V * c.C == c.N


def _row(M, N, dtype, kind, r, vs_triton, pct_copy, vs_torch):
    row = {"M": M, "N": N, "dtype": dtype, "kind": kind, "repeat": r, "ours_cfg": "W8 S1 C4 R1 P",
           "triton_cfg": "BM1 BN4096 w8", "ours_candidates": {"W8 S1 C4 R1 P": 1e-3, "W4 S1 C8 R1": 2e-3},
           "vs_triton": vs_triton, "pct_copy": pct_copy, "vs_torch": vs_torch}
    for key in ("ours_GBs", "triton_GBs", "torch_GBs", "copy_GBs"):
        row[key] = 4000.0
    return row


def _results(vs_triton, pct_copy, vs_torch, xwarp_us, cpu_ms_per_op):
    reps = []
    for r, jitter in enumerate((-0.01, 0.0, 0.01)):
        rows = [_row(M, N, dt, kind, r, vs_triton + jitter, pct_copy, vs_torch)
                for M, N in report_multiwarp.MULTIWARP_LARGE for dt in ("f32", "bf16") for kind in ("sum", "max")]
        rows.append(_row(256, 262144, "f32", "sum", r, vs_triton, pct_copy, vs_torch + jitter))
        reps.append(rows)
    return {"multiwarp": {"repeats": reps, "how": "test"},
            "xwarp": [{"name": "tile-mlir (linear fold)", "cycles": 300.0, "us": xwarp_us, "ok": True,
                       "k1": 100, "k2": 1100, "k_long": 100000}],
            "compile": {"lowering_scaling": [{"ops": 1000, "ms": 900.0, "ms_per_op": 0.9,
                                              "cpu_ms_per_op": cpu_ms_per_op, "samples": 3}]}}


@pytest.mark.parametrize("met", [True, False])
def test_targets_use_the_median_of_the_repetitions(met):
    rng = np.random.default_rng()
    margin = rng.uniform(0.001, 0.05) * (1 if met else -1)
    results = _results(1.02 + margin, 100.0 + 100 * margin, 1.25 + margin, 1.5 - margin, 0.3 - margin)
    targets = {t["key"]: t for t in report.targets(results)}
    keys = [f"multiwarp-{M}x{N}-{dt}" for M, N in report_multiwarp.MULTIWARP_LARGE for dt in ("f32", "bf16")]
    for key in (*keys, "multiwarp-skinny", "xwarp", "lowering"):
        assert targets[key]["met"] is met, targets[key]
    assert "of 3 repetitions" in targets[keys[0]]["figure"]


def test_report_has_the_new_sections():
    results = _results(1.05, 101.0, 1.3, 0.2, 0.2)
    text = report.markdown(results)
    assert "## 1b. Row reduction, several warps per row" in text
    assert "## 2b. Cross-warp step latency" in text
    assert "| 4096x16384 | f32 | sum |" in text and "(T(1100) − T(100)) / (1100 − 100)" in text
    assert "**W8 S1 C4 R1 P: 1.0**" in text  # the sweep, with the chosen configuration


def test_run_command_line():
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}
    ok = subprocess.run([sys.executable, "-m", "benchmarks.run", "--help"], cwd=ROOT, env=env, check=False,
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "xwarp,multiwarp,latency,launch,rows" in ok.stdout and "--repeats" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "benchmarks.run", "--only", "rows,bogus"], cwd=ROOT, env=env, check=False,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown section(s) bogus" in bad.stderr


def test_preflight_finds_a_missing_cache(monkeypatch, tmp_path):
    """benchmarks.run stops before any GPU work when the cache lacks the kernels."""
    from benchmarks import run

    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    problems = run.preflight()
    assert len(problems) == 1 and f"{len(prepare.all_kernels())} kernel(s) missing" in problems[0]
