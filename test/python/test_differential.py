"""Differential property tests: lowered kernels in the CPU interpreter vs numpy float64.

Each example draws a random valid ``tile.reduce`` configuration
(``tile_mlir.testing.differential.random_case``: layouts with random thread-bit
assignments, warp bits included, and registers, shapes, positive and negative axes,
kind, dtype, accum, thread, warp, warpgroup, cta or cluster scope), lowers it with
``tile-lower-reduction`` (a quarter of the cases with ``fold=tree``), runs it in
the interpreter on fresh random inputs and checks every dst place against the
numpy reference (``ReduceCase.check``: integers exact, max/min exact with the NaN
rules of docs/spec.md, sums within n * eps * sum|x| for n terms, replicas
bit-identical). The workgroup scratch of an op across warps must fit in a block.

hypothesis drives the configuration through ``randoms()``, so a failure shrinks to
a small configuration; the failure message carries the case and its lowered IR.
The number of cases run is printed at the end of the session.

``test_every_drawn_case_is_valid`` checks a fixed sample of draws against the rules
(``tile_mlir.analysis``), and that the draws cover what they should.
"""

import random
import re
from collections import Counter

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tile_mlir.analysis import analyze
from tile_mlir.compiler import lower_tile_ops
from tile_mlir.interpreter import interpreted_kernels
from tile_mlir.ir import find_ops, ir, make_context
from tile_mlir.options import Options
from tile_mlir.testing.differential import SCRATCH_LIMIT, iter_bits, random_case

EXAMPLES = 2000
RUN = {"cases": 0}  # read by conftest's terminal summary


@settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False), st.integers(0, 2**32 - 1))
def test_interpreter_matches_numpy(rng, seed):
    case = random_case(rng, "diff")
    fold = "tree" if rng.random() < 0.25 else "linear"
    lowered, signatures = lower_tile_ops(case.kernel_text(), Options(fold=fold))
    scratch = [int(n) for n in re.findall(r'tile\.scratch = "[^"]*: (\d+) bytes"', lowered)]
    assert sum(scratch) <= SCRATCH_LIMIT, f"{case}: scratch of {scratch} bytes"
    x, old = case.random_inputs(np.random.default_rng(seed))
    old = old if case.accum else None
    a, b = case.pack(x), case.output_buffer(old)
    interpreted_kernels(lowered, signatures)[case.name].launch(case.grid(), case.block(), a, b)
    RUN["cases"] += 1
    problems = case.check(x, old, b)
    assert not problems, f"{case} fold={fold}\n" + "\n".join(problems[:5]) + f"\nlowered IR:\n{lowered}"


def test_every_drawn_case_is_valid():
    """1000 draws: all valid; among them, reductions across warps at warpgroup scope (over
    wid_in_wg and over tid_in_wg bits 5-6) and at cta scope (2 to 32 warps), replicas over
    warp bits, ops within warps at every scope, and reductions across the CTAs of
    clusters of 2 to 16, some across warps too, some with CTAs kept or replicated."""
    seen = Counter()
    with make_context(), ir.Location.unknown():
        for i in range(1000):
            case = random_case(random.Random(f"valid:{i}"))
            module = ir.Module.parse(case.kernel_text())  # alive while its op is analysed
            analysis = analyze(find_ops(module.operation, "tile.reduce")[0])
            assert analysis.errors == [], (case, analysis.errors)
            info = analysis.info
            crossing = "across warps" if info.reduced_warp_bits else "within warps"
            seen[case.exec_scope, crossing] += 1
            if case.exec_scope == "cta" and info.reduced_warp_bits:
                seen["cta warps", case.threads() // 32] += 1
            if case.exec_scope == "cluster" and info.reduced_cta_bits:
                seen["cluster ctas", info.cluster_ctas] += 1
                seen["cluster", "across warps"] += bool(info.reduced_warp_bits)
                seen["cluster ctas kept or replicated"] += info.cluster_ctas > 1 << len(info.reduced_cta_bits)
            for it in (it for d in info.axes for it in info.src_layout.shard[d]):
                if any(b >= 5 for b in iter_bits(it)):
                    seen["across warps by", it.axis] += 1
            if any(b >= 5 for b in info.src_replica_bits):
                seen["replica over warp bits"] += 1
    assert seen["warp", "within warps"] and seen["thread", "within warps"], seen
    for scope in ("warpgroup", "cta"):
        assert seen[scope, "within warps"] and seen[scope, "across warps"] >= 50, seen
    assert all(seen["cta warps", w] for w in (2, 4, 8, 16, 32)), seen
    assert all(seen["across warps by", axis] for axis in ("tid_in_wg", "wid_in_wg", "warpid")), seen
    assert seen["replica over warp bits"] >= 20, seen
    assert all(seen["cluster ctas", c] for c in (2, 4, 8, 16)), seen
    assert seen["cluster", "across warps"] >= 10 and seen["cluster ctas kept or replicated"] >= 10, seen
