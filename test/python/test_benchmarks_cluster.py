"""Benchmark 1c (benchmarks/cluster.py, report_cluster.py) without a GPU: every cluster
configuration the GPU run may time, on small shapes in the CPU interpreter (and a broken
generator fails that check), the sweep fits the shapes and the hardware, every kernel is
in ``benchmarks.prepare``'s list, and the report's targets and section from saved
results."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import cluster as C
from benchmarks import prepare, report, report_cluster


@pytest.mark.sweep  # every cluster benchmark kernel in the interpreter (about 6 s): with the sweeps
def test_every_cluster_configuration_in_the_interpreter():
    assert C.check_generators(np.random.default_rng()) == len(C.check_configs()) >= 10


def test_a_wrong_cluster_kernel_fails_the_check(monkeypatch):
    """The check can fail: CTAs that all read the first part of their row give wrong sums."""
    original = C.cluster_row_reduce
    monkeypatch.setattr(C, "cluster_row_reduce", lambda c: original(c).replace(
        "%pv = arith.muli %part, %cPV : index", "%pv = arith.muli %part, %c0 : index"))
    with pytest.raises(AssertionError, match="wrong in the interpreter"):
        C.check_generators(np.random.default_rng())


def test_the_sweeps_fit_the_shapes_and_the_hardware():
    for M, N in C.SHAPES:
        for kind in C.KINDS:
            ours, single = C.candidates(M, N, kind), C.single_cta_candidates(M, N, kind)
            assert len(ours) >= 4 and single, (M, N)
            for c in ours:
                assert c.CL * c.threads * c.V * c.C * c.chunks == N and c.chunks >= 2
                assert c.grid == M * c.CL and c.block <= 1024 and c.CL <= 16
            assert all(c.grid == M for c in single)
    for M in C.PLOT_ROWS:
        ours, single = C.plot_configs(M)
        assert ours and single and all(c.M * c.N == C.PLOT_TOTAL for c in ours + single), M
    labels = prepare.all_kernels()
    assert set(C.all_kernels()) <= set(labels)


def _row(M, N, kind, pct_copy, vs_torch):
    row = {"M": M, "N": N, "dtype": "f32", "kind": kind, "ours_cfg": "CL4 W16 C4 P", "ours_kernel": f"cluster_row_{kind}",
           "single_cfg": "W16 S1 C4 R1 P", "triton_cfg": "BM1 BN4096 w8", "pct_copy": pct_copy, "vs_torch": vs_torch,
           "vs_single": 1.5, "vs_triton": 2.0, "pct_copy_flushed": pct_copy, "vs_torch_flushed": vs_torch,
           "ours_candidates": {"CL4 W16 C4 P": 0.07, "CL8 W8 C4 P": 0.08}, "single_candidates": {"W16 S1 C4 R1 P": 0.1}}
    for who in ("ours", "single", "torch", "triton", "copy"):
        row[f"{who}_GBs"] = row[f"{who}_flushed_GBs"] = 3000.0
    return row


@pytest.mark.parametrize("met", [True, False])
def test_the_targets_take_the_worst_kind(met):
    margin = np.random.default_rng().uniform(0.001, 0.05) * (1 if met else -1)
    rows = [_row(M, N, kind, 95 + 100 * margin + (kind == "max"), 1.2 + margin + (kind == "max"))
            for M, N in C.SHAPES for kind in C.KINDS]
    results = {"cluster": {"rows": rows, "plot": [], "triton_num_ctas": [
        {"num_ctas": 2, "compiled": False, "message": "RuntimeError: PlanCTA failed"}], "triton_configs": [[1, 4096, 8]]}}
    targets = {t["key"]: t for t in report.targets(results)}
    for M, N in C.SHAPES:
        t = targets[f"cluster-{M}x{N}"]
        assert t["met"] is met and "(sum: ours" in t["figure"], t
    text = "\n".join(report_cluster.markdown(results, {}, {}))
    assert "## 1c. Long rows, a thread-block cluster per row" in text
    assert "num_ctas=2: failed (RuntimeError: PlanCTA failed)" in text
    assert "**CL4 W16 C4 P: 70.0**" in text
