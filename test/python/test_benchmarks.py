"""The benchmarks' parts that need no GPU: the multi-warp row kernels and the cross-warp
latency kernel in the CPU interpreter, the candidate lists, the fused-kernel cases, their
Triton configurations, the cache's kernels and the preflight (with stand-ins for the fused
modules where they are not there), the report's targets and sections from saved results,
and ``python -m benchmarks.run``'s command line."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import kernels as K
from benchmarks import prepare, report, report_multiwarp


@pytest.mark.sweep  # every benchmark kernel in the interpreter (7-13 s): with the sweeps
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


def _row(M, N, dtype, kind, r, vs_triton, pct_copy, vs_torch, pct_read=99.0):
    row = {"M": M, "N": N, "dtype": dtype, "kind": kind, "repeat": r, "ours_cfg": "W8 S1 C4 R1 P",
           "triton_cfg": "BM1 BN4096 w8", "ours_candidates": {"W8 S1 C4 R1 P": 1e-3, "W4 S1 C8 R1": 2e-3},
           "vs_triton": vs_triton, "pct_copy": pct_copy, "vs_torch": vs_torch, "pct_read": pct_read,
           "read_GBs": 4300.0}
    for key in ("ours_GBs", "triton_GBs", "torch_GBs", "copy_GBs"):
        row[key] = 4000.0
    return row


def _results(vs_triton, pct_copy, vs_torch, xwarp_us, cpu_ms_per_op, pct_read=99.0):
    reps = []
    for r, jitter in enumerate((-0.01, 0.0, 0.01)):
        rows = [_row(M, N, dt, kind, r, vs_triton + jitter, pct_copy, vs_torch, pct_read + 100 * jitter)
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
    """Several warps per row: >= 97% of the pure-read kernel (the median of the
    repetitions, which spread by +-1%); the skinny shape, the cross-warp step and the
    lowering cost keep their bars."""
    rng = np.random.default_rng()
    margin = rng.uniform(0.001, 0.05) * (1 if met else -1)
    results = _results(0.9, 90.0, 1.25 + margin, 1.5 - margin, 0.3 - margin, pct_read=97.0 + 20 * margin)
    targets = {t["key"]: t for t in report.targets(results)}
    keys = [f"multiwarp-{M}x{N}-{dt}" for M, N in report_multiwarp.MULTIWARP_LARGE for dt in ("f32", "bf16")]
    for key in (*keys, "multiwarp-skinny", "xwarp", "lowering"):
        assert targets[key]["met"] is met, targets[key]
    assert "of 3 repetitions" in targets[keys[0]]["figure"] and "% of pure read" in targets[keys[0]]["figure"]


def test_the_read_targets_say_when_the_read_kernel_is_missing():
    """Without the pure-read kernel's figure (no cupy there), the row targets are missed,
    and say why; with it, one-warp rows at 16384x4096 and 65536x1024 are judged by it."""
    results = _results(1.05, 101.0, 1.3, 0.2, 0.2)
    for rep in results["multiwarp"]["repeats"]:
        for r in rep:
            del r["pct_read"], r["read_GBs"]
            r["read_missing"] = "ModuleNotFoundError: No module named 'cupy'"
    results["rows"] = [_row(M, N, dt, kind, 0, 1.01, 99.0, 3.0, pct_read) | {"torch_GBs": 1.0}
                       for (M, N), pct_read in (((16384, 4096), 98.0), ((65536, 1024), 96.0))
                       for dt in ("f32",) for kind in ("sum",)]
    targets = {t["key"]: t for t in report.targets(results)}
    t = targets["multiwarp-4096x16384-f32"]
    assert not t["met"] and "pure-read kernel missing: ModuleNotFoundError" in t["figure"]
    assert targets["rows-16384x4096-f32"]["met"] and not targets["rows-65536x1024-f32"]["met"]
    assert "rows-4096x16384-f32" not in targets  # judged in section 1b


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
    assert ok.returncode == 0 and "--repeats" in ok.stdout and "--shapes" in ok.stdout and "--dtypes" in ok.stdout
    # argparse wraps the list of sections where it likes, inside a word too
    assert "xwarp,multiwarp,latency,launch,fused,training,rows,cluster,argmax" in "".join(ok.stdout.split())
    bad = subprocess.run([sys.executable, "-m", "benchmarks.run", "--only", "rows,bogus"], cwd=ROOT, env=env, check=False,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown section(s) bogus" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "benchmarks.run", "--only", "fused", "--kernels", "softmax,gelu"], cwd=ROOT,
                         env=env, check=False, capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown kernel(s) gelu" in bad.stderr


def test_preflight_finds_a_missing_cache(monkeypatch, tmp_path):
    """benchmarks.run stops before any GPU work when the cache lacks the kernels."""
    from benchmarks import run

    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    problems = run.preflight()
    assert len(problems) == 1 and f"{len(prepare.all_kernels())} kernel(s) missing" in problems[0]


# --- benchmark 5: the fused kernels (no GPU: the case list, the Triton configurations,
# the cache's kernels, the preflight, the report) ---

from benchmarks import fused, report_fused, triton_fused  # noqa: E402


@pytest.fixture
def fused_modules(monkeypatch, tmp_path):
    """The fused kernels (tile_mlir.kernels), which load here; a fresh compile cache."""
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    assert not fused.missing()


def test_fused_cases_cover_the_issue():
    """4 kernels x 6 shapes (N = 1000 and 262144 among them) x 2 dtypes, each compiled once."""
    assert len(fused.CASES) == len(set(fused.CASES)) == 48
    assert {c[0] for c in fused.CASES} == {"softmax", "rmsnorm", "layernorm", "logsumexp"}
    assert {(M, N) for _, M, N, _ in fused.CASES} >= {(64, 262144), (16384, 1024), (4096, 4096), (4096, 16384),
                                                     (1024, 65536)}
    assert any(N == 1000 for _, _, N, _ in fused.CASES)
    assert {c[3] for c in fused.CASES} == {"f32", "bf16"}


def test_fused_traffic_counts_bytes_read_and_written():
    M, N = 4096, 1000
    assert fused.traffic("softmax", M, N, "f32") == 2 * M * N * 4
    assert fused.traffic("rmsnorm", M, N, "bf16") == (2 * M * N + N) * 2
    assert fused.traffic("layernorm", M, N, "f32") == (2 * M * N + 2 * N) * 4
    assert fused.traffic("logsumexp", M, N, "bf16") == (M * N + M) * 2


def test_triton_configurations_stay_few():
    """Each Triton configuration is a compile per kernel, dtype and N: at most three per
    row length, BLOCK = next_pow2(N) rows of at most 128 values per thread (262144: one
    configuration, 32 warps), and at most 120 compiles for the section."""
    blocks = {triton_fused.next_pow2(N) for _, N in fused.SHAPES}
    assert triton_fused.next_pow2(1000) == 1024 and triton_fused.next_pow2(1024) == 1024
    assert all(b in triton_fused.BLOCKS for b in blocks)
    assert triton_fused.warps_for(262144) == (32,)
    for b in blocks - {262144}:
        ws = triton_fused.warps_for(b)
        assert 2 <= len(ws) <= 3 and all(b // (32 * w) <= 128 for w in ws), (b, ws)
    compiles = len(fused.KERNELS) * len(fused.DTYPES) * sum(len(triton_fused.warps_for(triton_fused.next_pow2(N)))
                                                            for _, N in fused.SHAPES)
    assert compiles <= 120
    assert sorted(triton_fused.configs()) == sorted({(b, w) for b in triton_fused.BLOCKS for w in triton_fused.warps_for(b)})


def test_prepare_compiles_every_fused_case(fused_modules):
    texts = prepare.all_kernels()
    for name, M, N, dtype in fused.CASES:
        text, fold = texts[fused.label(name, M, N, dtype)]
        assert text == fused.kernel_text(name, M, N, dtype) and fold == "linear"


def test_prepare_remembers_the_fused_texts_for_the_gpu_machine(fused_modules, tmp_path, monkeypatch):
    """benchmarks.prepare keeps each fused case's text by name; a machine without MLIR
    (here: the builder made to fail) reads it back for preflight and the run."""
    from tile_mlir.kernels import library

    fused.remember_texts()
    assert len(list((tmp_path / "by-name").iterdir())) == len(fused.CASES)
    name, M, N, dtype = fused.CASES[0]
    made = fused.kernel_text(name, M, N, dtype)
    library._text.cache_clear()
    monkeypatch.setattr(library, "_built", lambda *a: (_ for _ in ()).throw(ImportError("no MLIR")))
    assert fused.kernel_text(name, M, N, dtype) == made
    library._text.cache_clear()


def test_eps_is_our_kernels_default():
    """torch and Triton get the epsilon our kernels use by default: K.rms_norm's 1e-6,
    K.layer_norm's 1e-5."""
    assert fused.eps_of("rmsnorm", "f32") == fused.eps_of("rmsnorm", "bf16") == 1e-6
    assert fused.eps_of("layernorm", "bf16") == 1e-5


def test_preflight_reports_fused_kernels(fused_modules, monkeypatch):
    """With the cache complete, preflight calls every case's compiled(): a module whose
    compiled() fails is reported before the run; one that does not load, too."""
    from benchmarks import run

    monkeypatch.setattr(prepare, "all_kernels", lambda: {})
    real = fused.ours
    monkeypatch.setattr(fused, "ours", lambda name, M, N, dtype: (_ for _ in ()).throw(RuntimeError("not in the cache"))
                        if name == "logsumexp" else real(name, M, N, dtype))
    problems = run.preflight(("logsumexp",))
    assert len(problems) == 1 and "tile_mlir.kernels.compiled('logsumexp', 64, 262144, 'f32') failed" in problems[0]
    assert "not in the cache" in problems[0]
    problems = run.preflight(("logsumexp",), shapes=((4096, 4096),), dtypes=("bf16",))  # --shapes, --dtypes
    assert len(problems) == 1 and "compiled('logsumexp', 4096, 4096, 'bf16') failed" in problems[0]
    monkeypatch.setattr(fused, "missing", lambda names=(): {n: "ImportError: no" for n in names if n == "softmax"})
    problems = run.preflight(("softmax", "logsumexp"))
    assert len(problems) == 1 and problems[0].startswith("the fused kernel softmax does not load")
    assert run.preflight(()) == []
