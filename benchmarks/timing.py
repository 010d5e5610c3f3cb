"""The two timings of the GPU benchmarks (``benchmarks.measure`` gives them to the rest):
``steady(fns)``, the CUDA-event median of back-to-back calls rotating through input sets,
and ``flushed(fn)``, ``triton.testing.do_bench`` with the L2 flushed between runs; and
``interleaved(groups)``, ``steady`` of several implementations in turns, for a final
comparison that a drift of the GPU's clock over the run cannot tilt. Here
so that ``ceiling`` (the pure-read kernel, which ``measure`` calls) takes them without
importing ``measure``."""

from __future__ import annotations

import statistics
import time


def steady(fns, target_ms: float = 30.0, repeat: int = 5) -> float:
    """Median ms per call of back-to-back calls cycling through ``fns`` (one per input
    set, so that no input is still in L2), timed with CUDA events around the loop."""
    import torch

    for f in fns:
        f()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for f in fns:
        f()
    torch.cuda.synchronize()
    per_call = (time.perf_counter() - t0) / len(fns)
    iters = len(fns) * max(2, int(target_ms / 1e3 / per_call / len(fns)))
    samples = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(iters):
            fns[i % len(fns)]()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / iters)
    return statistics.median(samples)


def interleaved(groups: dict, rounds: int = 7, target_ms: float = 30.0) -> dict:
    """The median ms per call of each group's ``fns`` (``steady``'s loop, one a turn), the
    groups timed in turns, ``rounds`` times, each round in the reverse order of the last:
    where ``steady`` times one implementation and then the next, a clock that drifts over
    the run (the GPU warming) favours one side; here it falls on all of them alike."""
    samples: dict = {name: [] for name in groups}
    for r in range(rounds):
        for name in (list(groups) if r % 2 == 0 else list(reversed(groups))):
            samples[name].append(steady(groups[name], target_ms, repeat=1))
    return {name: statistics.median(s) for name, s in samples.items()}


def flushed(fn) -> float:
    """Median time of fn in ms (triton.testing.do_bench: CUDA events, L2 flushed between runs)."""
    import triton.testing

    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
