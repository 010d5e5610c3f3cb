"""The measured search behind the fused kernels' plan table (issue 18): every candidate
plan of ``tile_mlir.kernels.plan.candidates`` for the long rows, timed on the GPU, the
fastest kept per (kernel, dtype, N) in ``python/tile_mlir/kernels/measured_plans.json``,
which ``plan()`` reads.

Three steps::

    python -m benchmarks.plan_search prepare --cache .plan-cache     # here (MLIR): compile every candidate
    python -m benchmarks.plan_search run --out DIR                   # there (GPU, TILE_MLIR_CACHE_DIR=.plan-cache)
    python -m benchmarks.plan_search table DIR/plan_search.json      # here: write the measured table

``--short`` searches the forwards' short rows instead (``SHORT_N``: 1024 and 4096
columns): every one-CTA plan, CTAs of 64 to 1024 threads (``short_plans``), at the same
256 MB of input.

The norms' backward passes (``BACKWARD``: ``rmsnorm_backward``, ``layernorm_backward``) are
searched the same way, with ``--kernels rmsnorm_backward,layernorm_backward``: their
candidates are the plans of ``BACKWARD_N`` (``backward_plans``: one CTA a row up to 16384
columns, a cluster at 65536), with and without the next row loaded early, each timed as
the whole call (its row kernel over the persistent grid, then the column sums) at the
benchmark's rows (4096; 1024 of 65536), on as many input sets as fill ``measure.ROTATE_BYTES``, and
checked against torch's autograd in float64 (dx and dw). ``plan_search table`` keeps them
under their own names, which ``tile_mlir.kernels.training.backward_plan`` reads.

Cross-entropy's fused kernel (``LOSS``: ``cross_entropy_fused``, the loss and dlogits
from one read of the logits) is searched with ``--kernels cross_entropy_fused``, at the
vocabularies ``LOSS_N`` (32768 holds a 32000 vocabulary; 131072 and 262144 are benchmark
6's), on the long rows' candidates with the pair in one exchange or two (``loss_plans``; run
with ``--elements 8,16,32,64``): each timed alone (bound launches, ``dloss`` = 1, the
mean of every row), checked against float64 (the mean loss and dlogits,
``benchmarks.training.ce_error``). ``tile_mlir.kernels.library`` gives all three
cross-entropy kernels the plan kept, so the loss alone and the fused kernel give the same
bits.

The table keeps the fastest candidate that spills at most ``MAX_SPILL_BYTES`` (said with
its spill, and the faster ones it passed over). A candidate is a plan (CTAs per row, rows
per CTA, warps per row) with the fewest 16-byte
vectors that cover the row, and either no occupancy demand or the most CTAs of its size an
SM holds (``per_sm``: ptxas then caps the registers at 65536 / (threads x per_sm)). Each
is checked against torch in float64 (the tolerances of ``benchmarks.fused``) before it is
timed steady (rotating input sets); a wrong one is recorded and never chosen.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .fused import ITEMSIZE, PARAMS, PER_ROW, STATS, TOLERANCE, eps_of, error, reference, traffic

KERNELS = ("softmax", "logsumexp", "rmsnorm", "layernorm")
SEARCH_N = {"f32": (16384, 65536, 262144), "bf16": (16384, 65536, 262144, 524288)}
SHORT_N = (1024, 4096)  # short rows: one CTA a row, searched with every CTA size (``short_plans``)
BACKWARD = ("rmsnorm_backward", "layernorm_backward")
BACKWARD_N = (512, 4096, 16384, 65536)  # a train step's d_model and the benchmark's rows
BACKWARD_CTA_N = 16384  # the backward's longest row searched on one CTA; longer on clusters
LOSS = ("cross_entropy_fused",)
LOSS_N = (32768, 131072, 262144)  # vocabularies: a train step's 32000, and benchmark 6's
BACKWARD_M = 4096  # the rows of benchmark 6 and of a train step's batch: the persistent grid depends on M
BACKWARD_CLUSTER_M = 1024  # benchmark 6's rows of 65536
X_BYTES = 256 << 20  # each input set; two sets rotate
# A plan may spill this much (a few registers, to L1) if it is still the fastest: the search
# found LayerNorm bf16 plans that spill 16-24 bytes 1.2-1.9x faster than any that do not.
MAX_SPILL_BYTES = 64
TABLE = Path(__file__).resolve().parent.parent / "python" / "tile_mlir" / "kernels" / "measured_plans.json"


def rows(N: int, dtype: str) -> int:
    """M of the searched matrix: ``X_BYTES`` of input."""
    return max(16, X_BYTES // (N * ITEMSIZE[dtype]))


def _overrides(N: int, dtype: str, keep, ctas: str | None = "ctas") -> list[dict]:
    """The overrides (``ctas``, ``rows``, ``warps``, ``per_sm``) of every candidate plan of
    rows of N (``tile_mlir.kernels.plan.candidates``: the fewest vectors that cover the
    row, within the register budget) that ``keep`` takes, each with and without the most
    CTAs of its size an SM holds (``per_sm``: ptxas then caps the registers); the CTAs a
    row under the name ``ctas`` (the backwards': ``cluster``), or not at all (None)."""
    from tile_mlir.kernels.plan import SM_REGISTERS, SM_THREADS, candidates

    found = []
    for p in candidates(N, dtype):
        if not keep(p):
            continue
        base = ({ctas: p.CL} if ctas else {}) | {"rows": p.R, "warps": p.W, "per_sm": 1}
        found.append(base)
        most = SM_THREADS // p.threads
        if most > 1 and SM_REGISTERS // (p.threads * most) >= 32:
            found.append(base | {"per_sm": most})
    return found


def search_plans(N: int, dtype: str, elements=(8, 16, 32)) -> list[dict]:
    """The forwards' long rows: CTAs of 256..1024 threads, 8..32 elements a thread, two
    rows a CTA only without a cluster."""
    return _overrides(N, dtype, lambda p: p.threads >= 256 and p.E in elements and not (p.R > 1 and p.CL > 1))


def short_plans(N: int, dtype: str) -> list[dict]:
    """The forwards' short rows: one CTA a row, R rows of W warps in CTAs of 64 to 1024
    threads."""
    return _overrides(N, dtype, lambda p: p.CL == 1 and p.threads >= 64)


def loss_plans(N: int, dtype: str, elements=(8, 16, 32, 64)) -> list[dict]:
    """Cross-entropy's fused kernel: the long rows' candidates, each with the (max, sum)
    pair in one exchange and in two (``pair``: ``RowPlan.packs_pair``)."""
    return [ov | {"pair": pair} for ov in search_plans(N, dtype, elements) for pair in (False, True)]


def backward_plans(N: int, dtype: str, kernel: str = "rmsnorm_backward") -> list[dict]:
    """A norm's backward: where a CTA holds the row (N <= ``BACKWARD_CTA_N``), one CTA a
    row, one row of W warps or R rows of one warp, CTAs of 64 threads or more; past it, a
    cluster of CL CTAs a row (``cluster``: ``compiled_backward``'s ``ctas`` is the
    persistent grid's size), one row of 256 threads or more a CTA, at most the bytes of
    ``BACKWARD_ELEMENTS`` f32 a thread (the norms keep x, dy and the f32 accumulators; bf16
    rows of as few elements a thread as f32 moved half the bytes a row, in as long a wait
    on the exchange). Each with and without the next row loaded early (``prefetch``);
    LayerNorm's on a cluster, with its two sums in one exchange (``pair``) or two."""
    from tile_mlir.kernels.plan import DTYPE_BYTES
    from tile_mlir.kernels.training import BACKWARD_ELEMENTS

    if N <= BACKWARD_CTA_N:
        found = _overrides(N, dtype, lambda p: p.CL == 1 and p.threads >= 64 and not (p.W > 1 and p.R > 1), None)
    else:
        found = _overrides(N, dtype, lambda p: p.CL > 1 and p.R == 1 and p.threads >= 256
                           and p.E * DTYPE_BYTES[dtype] <= BACKWARD_ELEMENTS * 4, "cluster")
    found = [ov | {"prefetch": on} for ov in found for on in (False, True)]
    if N <= BACKWARD_CTA_N or kernel != "layernorm_backward":
        return found
    return [ov | pair for ov in found for pair in ({}, {"pair": True})]  # LayerNorm's two sums: one exchange or two


def cases(kernels=KERNELS, dtypes=("f32", "bf16"), elements=(8, 16, 32), short: bool = False
          ) -> list[tuple[str, int, int, str, dict]]:
    """(kernel, M, N, dtype, overrides) of every searched plan: the forwards' long rows
    (``SEARCH_N``), or with ``short`` their short rows (``SHORT_N``), and the backwards'."""
    out = []
    for k in kernels:
        for d in dtypes:
            if k in BACKWARD:
                out += [(k, BACKWARD_M if N <= BACKWARD_CTA_N else BACKWARD_CLUSTER_M, N, d, ov) for N in BACKWARD_N
                        for ov in backward_plans(N, d, k)]
            elif k in LOSS:
                out += [(k, rows(N, d), N, d, ov) for N in LOSS_N for ov in loss_plans(N, d, elements)]
            elif short:
                out += [(k, rows(N, d), N, d, ov) for N in SHORT_N for ov in short_plans(N, d)]
            else:
                out += [(k, rows(N, d), N, d, ov) for N in SEARCH_N[d] for ov in search_plans(N, d, elements)]
    return out


def prepare(cache: str, kernels=KERNELS, dtypes=("f32", "bf16"), elements=(8, 16, 32), short: bool = False) -> int:
    """Compile every candidate into ``cache`` (and remember its text by name there)."""
    os.environ["TILE_MLIR_CACHE_DIR"] = cache
    from tile_mlir import kernels as K

    todo, t0, failed = cases(kernels, dtypes, elements, short), time.perf_counter(), 0
    for i, (k, M, N, d, ov) in enumerate(todo):
        try:
            if k in BACKWARD:
                K.text_backward(k, M, N, d, remember=True, **ov)
                K.compiled_backward(k, M, N, d, backend="cuda", **ov)
            else:
                K.kernel_text(k, M, N, d, remember=True, **ov)
                K.compiled(k, M, N, d, backend="cuda", **ov)
        except Exception as e:  # noqa: BLE001 - a candidate that does not build is said, and skipped
            failed += 1
            print(f"{k} {M}x{N} {d} {ov}: {type(e).__name__}: {str(e)[:200]}", flush=True)
        if i % 50 == 49:
            print(f"{i + 1}/{len(todo)} compiled, {time.perf_counter() - t0:.0f} s", flush=True)
    print(f"{len(todo) - failed} of {len(todo)} candidates compiled into {cache} in {time.perf_counter() - t0:.0f} s")
    return 0


def run(out: str, kernels=KERNELS, dtypes=("f32", "bf16"), elements=(8, 16, 32), short: bool = False) -> int:
    """On the GPU: every candidate of every case checked and timed; ``out``/plan_search.json."""
    import torch

    from tile_mlir import kernels as K

    from .measure import copy_times

    Path(out).mkdir(parents=True, exist_ok=True)
    results, t0 = [], time.perf_counter()
    groups: dict[tuple, list[dict]] = {}
    for k, M, N, d, ov in cases(kernels, dtypes, elements, short):
        groups.setdefault((k, M, N, d), []).append(ov)
    for (k, M, N, d), plans in groups.items():
        if k in BACKWARD or k in LOSS:
            results.append((_backward_case if k in BACKWARD else _loss_case)(k, M, N, d, plans, t0))
            (Path(out) / "plan_search.json").write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                                                    "cases": results}, indent=1))
            continue
        tdt = torch.float32 if d == "f32" else torch.bfloat16
        xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(2)]
        params = [torch.randn(N, device="cuda", dtype=tdt) for _ in PARAMS[k]]
        ys = [torch.empty((M,) if k in PER_ROW else (M, N), device="cuda", dtype=tdt) for _ in range(2)]
        stats = [[torch.empty(M, device="cuda", dtype=torch.float32) for _ in STATS.get(k, ())] for _ in range(2)]
        eps = eps_of(k, d)
        scalars = (eps,) if PARAMS[k] else ()
        ref = reference(k, xs[0], params, eps)
        copy_ms = copy_times(xs)[0]
        case = {"kernel": k, "M": M, "N": N, "dtype": d, "bytes": traffic(k, M, N, d), "copy_ms": copy_ms,
                "copy_gbps": 2 * M * N * ITEMSIZE[d] / copy_ms / 1e6, "plans": []}
        for ov in plans:
            entry = {"overrides": ov}
            try:
                c = K.compiled(k, M, N, d, backend="cuda", **ov)
                entry["label"] = c.plan.label()
                bound = [c.kernel.bind(c.grid, c.block, xs[i], *params, ys[i], *stats[i], *scalars, M) for i in range(2)]
                ys[0].fill_(float("nan"))
                bound[0]()
                torch.cuda.synchronize()
                _judge(entry, error(ys[0], ref), bound, case["bytes"], d)
            except Exception as e:  # noqa: BLE001 - one candidate failing must not lose the search
                entry["status"] = f"failed: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
            _keep(case, entry, ov)
        _best(case, t0)
        results.append(case)
        del xs, ys, stats
        torch.cuda.empty_cache()
        (Path(out) / "plan_search.json").write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                                                "cases": results}, indent=1))
    return 0


def _judge(entry: dict, err: float, calls, nbytes: int, d: str) -> None:
    """A checked candidate: its error against torch in float64 and, within the dtype's
    tolerance, its steady time (ms and GB/s of ``nbytes``); else it is wrong."""
    from .measure import steady

    entry["error"] = err
    if not err < TOLERANCE[d]:
        entry["status"] = f"wrong: error {err:.3g}"
    else:
        ms = steady(calls, target_ms=15.0, repeat=3)
        entry |= {"ms": ms, "gbps": nbytes / ms / 1e6, "status": "ok"}


def _keep(case: dict, entry: dict, ov: dict) -> None:
    case["plans"].append(entry)
    print(f"{case['kernel']} {case['M']}x{case['N']} {case['dtype']} {entry.get('label', ov)}: "
          f"{entry.get('gbps', 0):.0f} GB/s {entry['status'] if entry['status'] != 'ok' else ''}", flush=True)


def _best(case: dict, t0: float) -> None:
    """The case's fastest right candidate, kept and said."""
    ok = [p for p in case["plans"] if p["status"] == "ok"]
    if ok:
        case["best"] = best = max(ok, key=lambda p: p["gbps"])
        print(f"== {case['kernel']} {case['M']}x{case['N']} {case['dtype']}: best {best['label']} {best['gbps']:.0f} GB/s"
              f" ({100 * best['gbps'] / case['copy_gbps']:.1f}% of copy {case['copy_gbps']:.0f})"
              f" [{time.perf_counter() - t0:.0f} s]", flush=True)


def _backward_case(k: str, M: int, N: int, d: str, plans: list[dict], t0: float) -> dict:
    """One backward case: every plan's whole call (row kernel, then column sums) checked
    against torch's autograd in float64 and timed steady over rotating input sets."""
    import torch

    from tile_mlir import kernels as K

    from .measure import ROTATE_BYTES, copy_times
    from .training import bound_backward

    tdt = torch.float32 if d == "f32" else torch.bfloat16
    nbuf = max(2, -(-ROTATE_BYTES // (2 * M * N * ITEMSIZE[d])))
    eps = 1e-6 if k == "rmsnorm_backward" else 1e-5
    sets = []
    for _ in range(nbuf):
        x, dy = torch.randn(M, N, device="cuda", dtype=tdt), torch.randn(M, N, device="cuda", dtype=tdt)
        x32 = x.float()
        mean = x32.mean(-1) if k == "layernorm_backward" else None
        var = (x32 * x32).mean(-1) if mean is None else x32.var(-1, unbiased=False)
        sets.append((x, dy, mean, torch.rsqrt(var + eps)))
    w = torch.randn(N, device="cuda", dtype=tdt)
    x64, w64 = sets[0][0].double().requires_grad_(), w.double().requires_grad_()
    if k == "rmsnorm_backward":
        y64 = torch.nn.functional.rms_norm(x64, (N,), w64, eps)
    else:
        y64 = torch.nn.functional.layer_norm(x64, (N,), w64, torch.zeros_like(w64), eps)
    y64.backward(sets[0][1].double())
    ref_dx, ref_dw = x64.grad, w64.grad
    copy_ms = copy_times([s[0] for s in sets[:2]])[0]
    nbytes = 3 * M * N * ITEMSIZE[d]  # x and dy read, dx written (the partials: the kernel's own cost)
    case = {"kernel": k, "M": M, "N": N, "dtype": d, "bytes": nbytes, "copy_ms": copy_ms,
            "copy_gbps": 2 * M * N * ITEMSIZE[d] / copy_ms / 1e6, "sets": nbuf, "plans": []}
    for ov in plans:
        entry = {"overrides": ov}
        try:
            rows_, _ = K.compiled_backward(k, M, N, d, backend="cuda", **ov)
            entry["label"], entry["ctas_launched"] = rows_.plan.label(), rows_.grid
            if rows_.plan.CL != ov.get("cluster", 1):
                raise ValueError(f"the plan {rows_.plan.label()} is not {ov.get('cluster', 1)} CTA(s) a row")
            bound = [bound_backward(k, M, N, d, (dy, x, w, *((rstd,) if mean is None else (mean, rstd))), **ov)
                     for x, dy, mean, rstd in sets]
            calls, outs = [c for c, _ in bound], [(o[0], o[1]) for _, o in bound]
            outs[0][0].fill_(float("nan"))
            calls[0]()
            torch.cuda.synchronize()
            _judge(entry, max(error(outs[0][0], ref_dx), error(outs[0][1], ref_dw)), calls, nbytes, d)
        except Exception as e:  # noqa: BLE001 - one candidate failing must not lose the search
            entry["status"] = f"failed: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
        _keep(case, entry, ov)
    _best(case, t0)
    del sets
    torch.cuda.empty_cache()
    return case


def _loss_case(k: str, M: int, N: int, d: str, plans: list[dict], t0: float) -> dict:
    """One cross-entropy case: every plan of the fused kernel checked against float64
    (the mean loss and dlogits) and timed steady on two input sets; GB/s of the logits
    read once and dlogits written once."""
    import torch

    from tile_mlir import kernels as K

    from .measure import copy_times
    from .training import _ce_reference, ce_error

    tdt = torch.float32 if d == "f32" else torch.bfloat16
    xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(2)]
    ts = [torch.randint(0, N, (M,), device="cuda", dtype=torch.int64) for _ in range(2)]
    outs = [(torch.empty(M, device="cuda"), torch.empty(M, device="cuda"), torch.empty_like(x)) for x in xs]
    scale = torch.full((1,), 1.0 / M, device="cuda")  # the mean's, every row counted
    ref_loss, ref_grads = _ce_reference(xs[0], ts[0])
    copy_ms = copy_times(xs)[0]
    nbytes = 2 * M * N * ITEMSIZE[d]
    case = {"kernel": k, "M": M, "N": N, "dtype": d, "bytes": nbytes, "copy_ms": copy_ms,
            "copy_gbps": nbytes / copy_ms / 1e6, "plans": []}
    for ov in plans:
        entry = {"overrides": ov}
        try:
            c = K.compiled(k, M, N, d, backend="cuda", **ov)
            entry["label"] = c.plan.label()
            bound = [c.kernel.bind(c.grid, c.block, xs[i], ts[i], *outs[i], scale, -100, 0.0, M) for i in range(2)]
            outs[0][2].fill_(float("nan"))
            bound[0]()
            torch.cuda.synchronize()
            _judge(entry, ce_error(outs[0][0].double().sum() / M, outs[0][2], ref_loss, ref_grads), bound, nbytes, d)
        except Exception as e:  # noqa: BLE001 - one candidate failing must not lose the search
            entry["status"] = f"failed: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
        _keep(case, entry, ov)
    _best(case, t0)
    del xs, outs
    torch.cuda.empty_cache()
    return case


def table(paths: list[str], dest: Path = TABLE) -> int:
    """The measured table from runs' plan_search.json (their candidates of a case pooled; a
    candidate two runs measured counts once, with its faster figure): per kernel and dtype,
    the searched row lengths, each with its fastest plan's overrides and figures; a
    (kernel, dtype, N) the runs did not search keeps its entry of ``dest``."""
    runs = [json.loads(Path(path).read_text()) for path in paths]
    data, pooled = runs[0], {}
    for run_ in runs:
        for case in run_["cases"]:
            key = (case["kernel"], case["N"], case["dtype"])
            mine = pooled.setdefault(key, {**case, "plans": []})
            for plan in case["plans"]:
                same = next((i for i, p in enumerate(mine["plans"]) if p["label"] == plan["label"]), None)
                if same is None:
                    mine["plans"].append(plan)
                elif plan["status"] == "ok" and (mine["plans"][same]["status"] != "ok"
                                                 or plan["gbps"] > mine["plans"][same]["gbps"]):
                    mine["plans"][same] = plan
    measured: dict = {}
    for case in pooled.values():
        ok = sorted((p for p in case["plans"] if p["status"] == "ok"), key=lambda p: -p["gbps"])
        k, M, N, d = case["kernel"], case["M"], case["N"], case["dtype"]
        for p in ok:
            p["spill_bytes"] = spills(k, M, N, d, p["overrides"])
        kept = [p for p in ok if p["spill_bytes"] <= MAX_SPILL_BYTES]
        if not kept:
            continue
        b = kept[0]
        ov = dict(b["overrides"])
        entry = {"N": N, "ctas": ov.pop("cluster", 1), **ov, "label": b["label"], "M": M, "gbps": round(b["gbps"]),
                 "copy_gbps": round(case["copy_gbps"]), "candidates": len(case["plans"]),
                 "spill_bytes": b["spill_bytes"]}
        faster = [p for p in ok if p["gbps"] > b["gbps"]]
        if faster:  # said, never chosen: they spill more than MAX_SPILL_BYTES
            entry["faster_but_spills"] = [f"{p['label']} {p['gbps']:.0f} GB/s, {p['spill_bytes']} bytes" for p in faster]
        measured.setdefault(k, {}).setdefault(d, []).append(entry)
    kept = json.loads(dest.read_text())["plans"] if dest.exists() else {}
    for k, per in kept.items():  # the lengths these runs did not search keep their entries
        for d, entries in per.items():
            searched = {e["N"] for e in measured.get(k, {}).get(d, [])}
            measured.setdefault(k, {}).setdefault(d, []).extend(e for e in entries if e["N"] not in searched)
    for per in measured.values():
        for entries in per.values():
            entries.sort(key=lambda e: e["N"])
    doc = {"what": "the fastest plan of each searched row length, measured by python -m benchmarks.plan_search",
           "device": data.get("device", "?"), "plans": dict(sorted(measured.items()))}
    dest.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {dest}")
    return 0


def spills(kernel: str, M: int, N: int, dtype: str, overrides: dict) -> int:
    """The bytes ptxas spills in the candidate's kernel (here: MLIR and ptxas;
    ``prepare.ptxas_resources``)."""
    from tile_mlir import kernels as K
    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.options import Options

    from .prepare import CHIP, ptxas_resources

    text = (K.text_backward(kernel, M, N, dtype, **overrides)[0] if kernel in BACKWARD
            else K.kernel_text(kernel, M, N, dtype, **overrides))
    ptx = lower_to_ptx(text, Options(chip=CHIP)).ptx
    return ptxas_resources(ptx).get("spill_stores", 0)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.plan_search", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("--cache", default=".plan-cache")
    a.add_argument("--kernels", default=",".join(KERNELS))
    a.add_argument("--dtypes", default="f32,bf16")
    a.add_argument("--elements", default="8,16,32", help="elements a thread of the searched plans")
    a.add_argument("--short", action="store_true", help="the forwards' short rows (SHORT_N), not their long ones")
    b = sub.add_parser("run")
    b.add_argument("--out", required=True)
    b.add_argument("--kernels", default=",".join(KERNELS))
    b.add_argument("--dtypes", default="f32,bf16")
    b.add_argument("--elements", default="8,16,32")
    b.add_argument("--short", action="store_true")
    c = sub.add_parser("table")
    c.add_argument("results", nargs="+")
    args = p.parse_args(argv)
    elements = tuple(int(e) for e in getattr(args, "elements", "8").split(","))
    if args.cmd == "prepare":
        return prepare(args.cache, tuple(args.kernels.split(",")), tuple(args.dtypes.split(",")), elements, args.short)
    if args.cmd == "run":
        return run(args.out, tuple(args.kernels.split(",")), tuple(args.dtypes.split(",")), elements, args.short)
    return table(args.results)


if __name__ == "__main__":
    sys.exit(main())
