"""What this run measured behind each missed target: the ncu figures of its kernels (and of
the copy and the pure read at its shape) and the SASS counts of ours.

``benchmarks.run --ncu`` profiles, after the timings, the kernels of the targets the run
missed (``cases``: ``benchmarks.ncu_limits.profile``, one launch each, clocks not
locked) and keeps the rows in ``results["ncu"]``; the report (``measured``) then adds a
line to each missed target's note, under "What limits the missed targets", so every
miss states its figures from the same run as its timing. Keys are the targets' (see
``report.targets``): ``fused-<kernel>-<M>x<N>-<dtype>``, ``train-<backward>-<M>x<N>-<dtype>``
and ``argmax-<M>x<N>``; other targets (cross-entropy, the exchange comparisons) have no
profiled kernel here.
"""

from __future__ import annotations

from . import fused as F
from .ncu_limits import BACKWARD


def _parse(key: str):
    """(section, kernel, M, N, dtype) of a target's key, or None where it has no kernel here."""
    parts = key.split("-")
    try:
        if parts[0] in ("fused", "train") and len(parts) == 4:
            M, N = (int(v) for v in parts[2].split("x"))
            return parts[0], parts[1], M, N, parts[3]
        if parts[0] == "argmax" and len(parts) == 2:
            M, N = (int(v) for v in parts[1].split("x"))
            return "argmax", None, M, N, None
    except ValueError:
        return None
    return None


def cases(keys, results: dict) -> list[dict]:
    """The ncu cases (``benchmarks.ncu_limits.cases``' form) behind the targets ``keys``:
    ours (fused: the library's plan; training: the backward's kernels), and the copy and
    the pure read at each shape and dtype; for argmax, the run's fastest configurations
    of ours and of Triton's."""
    out, ceilings = [], {}
    for key in keys:
        p = _parse(key)
        if p is None:
            continue
        section, name, M, N, dtype = p
        if section == "argmax":
            for row in (r for r in results.get("argmax", {}).get("rows", []) if (r["M"], r["N"]) == (M, N)):
                ceilings.setdefault((M, N, row["dtype"]), True)
                out += [{"what": f"argmax:{row['ours_cfg']}", "M": M, "N": N, "dtype": row["dtype"]},
                        {"what": f"argmax-triton:{row['triton_cfg']}", "M": M, "N": N, "dtype": row["dtype"]}]
            continue
        if (section == "fused" and name in F.KERNELS) or (section == "train" and name in BACKWARD):
            ceilings.setdefault((M, N, dtype), True)
            out.append({"what": name if section == "fused" else f"backward:{name}", "M": M, "N": N, "dtype": dtype})
    first = [{"what": what, "M": M, "N": N, "dtype": dtype} for M, N, dtype in ceilings for what in ("copy", "read")]
    return first + out


def _one(r: dict) -> str:
    def pct(k):
        return "n/a" if r.get(k) is None else f"{r[k]:.0f}%"

    stalls = ", ".join(f"{s} {v:.1f}" for s, v in list(r.get("stalls", {}).items())[:3])
    us = "n/a" if r.get("us") is None else f"{r['us']:.1f} us"
    regs = "n/a" if r.get("registers") is None else f"{r['registers']:.0f}"
    return (f"{us}, DRAM {pct('dram_pct')} of peak, issue slots {pct('issue_pct')} busy, warps {pct('occupancy_pct')} "
            f"(max {pct('theoretical_pct')}), {regs} registers" + (f", stalls per issue: {stalls}" if stalls else ""))


def measured(results: dict, key: str) -> str:
    """The line this run's ncu rows and SASS give the missed target ``key``, or ""."""
    p = _parse(key)
    rows = results.get("ncu", [])
    if p is None or not rows:
        return ""
    section, name, M, N, dtype = p
    at = [r for r in rows if (r["M"], r["N"]) == (M, N) and (dtype is None or r["dtype"] == dtype)]
    if section == "fused":
        ours = [r for r in at if r["what"] == name]
    elif section == "train":
        ours = [r for r in at if r["what"].startswith(f"backward:{name}")]
    else:
        ours = [r for r in at if r["what"].startswith("argmax")]
    if not ours:
        return ""
    parts = []
    for r in ours:
        who = r["what"] if section != "fused" else f"ours [{r.get('plan', '?')}]"
        parts.append(f"{who} {r['dtype']}: {_one(r)}")
    for what in ("copy", "read"):
        for r in (r for r in at if r["what"] == what):
            parts.append(f"{'the copy' if what == 'copy' else 'the pure read'} {r['dtype']}: {_one(r)}")
    sass = results.get("sass", {})
    if section == "fused":
        s = sass.get(F.label(name, M, N, dtype), {})
        if s:
            parts.append("SASS: " + ", ".join(f"{k} {v}" for k, v in s.items() if v))
    return " **Measured in this run** (ncu, one launch each, clocks not locked): " + "; ".join(parts) + "."
