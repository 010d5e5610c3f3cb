"""Benchmark 7: argmax over rows, and softmax's (max, sum) pair in one exchange or two.

* Argmax over rows (issue 17), ``SHAPES`` x ``DTYPES`` (16384x4096, 4096x16384 and
  1024x65536, f32 and bf16): ours is the fastest of ``candidates`` (``argmax_kernels.
  argmax_rows``: ``tile.copy`` + warp-scope ``kind = "argmax"`` per chunk, or, ``F``, a
  thread-scope one per chunk, each lane keeping its running best, and one warp-scope
  combiner reduction of the lanes' (value, column) a row; then one cta-scope
  ``kind = "argmax"`` over the warps, or, ``I``, the warps' chunks interleaved so that the
  block reads its row front to back, and one cta-scope combiner reduction of the warps'
  (value, column)), and the library's ``K.argmax`` (the row on chip,
  ``tile_mlir.kernels.selection_kernels``), against ``torch.argmax(x, dim=1)``, the fastest of
  Triton's ``TRITON`` configurations (one program per row: ``tl.argmax`` over a row that
  fits the block, else the elementwise running maximum over chunks and one reduction of
  the (value, index) pairs, ties to the lower index) and the pure-read kernel
  (``ceiling.read_times``: the fastest of its configurations), all in one
  process on the same inputs. Every implementation's indices must equal torch's (ties
  are likely in bf16: each takes the first) before it is timed, steady (input sets
  rotated, ~10x the L2); the three fastest of ours and of Triton's (``FINALISTS``), ours
  also launched capped at ``CAPS`` CTAs an SM (``bind``), with K.argmax, torch and the pure
  read, are then timed steady again in turns, round by round (``timing.interleaved``): each
  side's fastest there is the figure compared, and it is also timed L2-flushed (``measure``). Read GB/s = M·N·itemsize / time;
  *% read* = ours over the pure read's.
* Softmax at 4096x16384 (f32, bf16), one 1024-thread block per row: ``argmax_kernels.
  softmax_rows`` with the row's (max, sum of exp) combined by two cta-scope reductions
  (two exchanges, two barriers) or by one combiner reduction of the pair (one exchange):
  the warps' pairs, each warp's own by two named butterflies first (the library's form),
  or the threads' pairs, the pair's combine in every butterfly step too; or the warps'
  pairs written once to shared memory and finished by named warp reductions (QuACK's);
  each checked against float64 and timed steady, in turns; the time the fastest
  one-exchange form saves.
* The library's ``K.softmax`` and ``K.logsumexp`` where their plan is a cluster, and where
  it is one CTA of several warps (``LIBRARY_PAIR``), built with the pair in two exchanges
  and in one (``pair``): the same check and timing.

``all_kernels()`` is what ``benchmarks.prepare`` compiles (run.py's preflight checks the
cache holds it), ``check_generators(rng)`` runs small versions of every configuration in
the CPU interpreter against numpy (ties, NaN and -inf rows included), ``bench_argmax()``
is the GPU section (``python -m benchmarks.run --only argmax``, about 2-3 minutes) and
``benchmarks.report_argmax`` its part of the report. In a tree without argmax
(``unsupported()``) the section is left out of all three, and says so.
"""

from __future__ import annotations

import bisect
import dataclasses
import traceback

from tile_mlir.testing.triton_port import unsupported

from . import ceiling
from .argmax_kernels import ArgmaxConfig, SoftmaxConfig, argmax_rows, softmax_rows

SHAPES = ((16384, 4096), (4096, 16384), (1024, 65536))
DTYPES = ("f32", "bf16")
# (W warps per row, RB rows per block, C vectors per lane per chunk); P (prefetch) wherever
# a warp has 2+ chunks. Configurations with fewer than 4096 warps in all are left out.
TUNING = ((1, 4, 4), (1, 4, 8), (1, 8, 4), (2, 2, 4), (4, 1, 4), (4, 1, 8), (8, 1, 2), (8, 1, 4), (16, 1, 2), (16, 1, 4),
          (32, 1, 2), (32, 1, 4))
MIN_WARPS = 4096
FINALISTS = 3  # the fastest of a sweep, ours and Triton's alike, timed again in turns
# Our finalists are timed again capped at each of CAPS CTAs an SM (where more fit): fewer CTAs,
# fewer loads in flight, were measured to read faster at these shapes (docs/runs/2026-12-03-h200.md).
# The cap is shared memory, per CTA, at a CARVEOUT percent of the SM's 228 KB for shared memory
# (a 100 KB carveout; L1 keeps the rest, where the loads in flight land).
CAPS = (4, 5)
CARVEOUT = 43
# Triton: (BLOCK_N, num_warps) per row length; BLOCK_N == N is one tl.argmax over the row.
TRITON = {4096: ((4096, 4), (4096, 8), (4096, 16), (1024, 4), (2048, 8)),
          16384: ((16384, 16), (16384, 32), (2048, 8), (4096, 8), (4096, 16)),
          65536: ((2048, 8), (4096, 8), (4096, 16), (8192, 16), (8192, 32))}
SOFTMAX_SHAPE = (4096, 16384)
# The one-exchange forms of softmax_configs, by their results' key: the pair's combiner across
# the warps (the library's), at every step, and the warps' pairs then named reductions (QuACK's).
ONE_EXCHANGE = ("packed", "packed_lanes", "packed_named")
# The library's kernels (kernel, M, N) whose plan is a cluster (the first four) or one CTA
# of several warps (the rest) at these shapes: the pair in one exchange or two (``pair``;
# the default: ``RowPlan.packs_pair``).
LIBRARY_PAIR = (("softmax", 1024, 65536), ("softmax", 64, 262144), ("logsumexp", 1024, 65536),
                ("logsumexp", 64, 262144), ("softmax", 4096, 16384), ("logsumexp", 4096, 16384),
                ("softmax", 16384, 4096), ("logsumexp", 16384, 4096))


def candidates(M: int, N: int, dtype: str) -> list[ArgmaxConfig]:
    """Our configurations for one shape (``TUNING``)."""
    out = []
    for W, RB, C in TUNING:
        c = ArgmaxConfig(M, N, dtype, W=W, RB=RB, C=C, P=False)
        if N % W or (N // W) % c.CW or M * W < MIN_WARPS:
            continue
        c = dataclasses.replace(c, P=c.K >= 2)
        try:
            c.check()
        except ValueError:
            continue
        out += [c, dataclasses.replace(c, F=True)]  # a warp reduction a chunk, or one a row
        if W > 1:  # and the warps' chunks interleaved: the block reads its row front to back
            out.append(dataclasses.replace(c, F=True, I=True))
    return out


def softmax_configs(dtype: str) -> list[SoftmaxConfig]:
    """Two exchanges; one, the pair combined across the warps (the library's form); one, the
    pair combined at every step (the lanes' butterfly too); one, the warps' pairs exchanged
    and then combined by named reductions over the lanes (max, then the rescaled sum)."""
    return [SoftmaxConfig(*SOFTMAX_SHAPE, dtype, packed, lanes, named) for packed, lanes, named in
            ((False, False, False), (True, False, False), (True, True, False), (True, False, True))]


def all_kernels() -> dict[str, tuple[str, str]]:
    """Every kernel of this section, by label: (text, fold option); none where this tree
    has no argmax (``unsupported()``: the section is left out, and says so)."""
    if unsupported():
        return {}
    texts = {}
    for (M, N), dtype in ((s, d) for s in SHAPES for d in DTYPES):
        for c in candidates(M, N, dtype):
            texts[f"{c.name} [{c.label()}]"] = (argmax_rows(c), "linear")
    for dtype in DTYPES:
        for c in softmax_configs(dtype):
            texts[c.name] = (softmax_rows(c), c.fold)
    from tile_mlir import kernels as library

    for (M, N), dtype in ((s, d) for s in SHAPES for d in DTYPES):  # K.argmax, the library's (remembered by name)
        texts[f"K.argmax {M}x{N} {dtype}"] = (library.kernel_text("argmax", M, N, dtype, remember=True), "linear")
    for (name, M, N), dtype, pair in ((c, d, b) for c in LIBRARY_PAIR for d in DTYPES for b in (False, True)):
        texts[library_label(name, M, N, dtype, pair)] = (
            library.kernel_text(name, M, N, dtype, remember=True, pair=pair), "linear")
    return texts


# --- the interpreter check ----------------------------------------------------------------


def small(c: ArgmaxConfig) -> ArgmaxConfig:
    """``c`` on 2 blocks' rows and at most 3 chunks per warp (2 with prefetch: the loop
    and the last chunk after it), with the same W, RB, C and P."""
    chunks = 2 if c.P else min(c.K, 3)
    return dataclasses.replace(c, M=2 * c.RB, N=c.W * c.CW * chunks)


def check_configs() -> list[ArgmaxConfig]:
    every = [c for M, N in SHAPES for d in DTYPES for c in candidates(M, N, d)]
    return list(dict.fromkeys(small(c) for c in every))


def _rows(rng, M: int, N: int):
    """f32 rows with the cases argmax must get right: few distinct values (ties across
    lanes, warps and chunks), NaN (several per row: the first wins), a row of -inf (the
    first column), a row holding +inf and NaN."""
    import numpy as np

    x = rng.integers(-3, 4, (M, N)).astype(np.float32) + rng.standard_normal((M, N)).astype(np.float32) * (rng.random((M, N)) < 0.5)
    for r in range(M):
        what = r % 4
        if what == 1:
            x[r, rng.choice(N, size=3, replace=False)] = np.nan
        elif what == 2:
            x[r] = -np.inf
        elif what == 3:
            x[r, rng.integers(N)] = np.inf
            x[r, rng.choice(N, size=2, replace=False)] = np.nan
    return x


def check_generators(rng, which=("argmax", "two", "packed")) -> int:
    """Run ``check_configs()`` (argmax against numpy's: the first extremum, the first
    NaN) and the softmax kernels (4 warps, and 32 on one row; ``two`` exchanges and
    ``packed``) in tile-mlir's CPU interpreter, those of ``which``; raise if one is wrong.
    Returns how many kernels ran."""
    import numpy as np
    import tile_mlir

    from tile_mlir.testing.cases import narrow, widen

    if unsupported() and set(which) & {"argmax", "packed"}:
        print(f"section 7 (argmax) is left out: {unsupported()}", flush=True)
        which = tuple(w for w in which if w not in ("argmax", "packed"))
    configs = check_configs() if "argmax" in which else []
    for c in configs:
        kernel = tile_mlir.compile(argmax_rows(c), backend="interpreter")[c.name]
        x = _rows(rng, c.M, c.N)
        arg = narrow(x, c.dtype) if c.dtype == "bf16" else x
        x = widen(arg, c.dtype) if c.dtype == "bf16" else x
        y = np.full(c.M, -7, np.int32)
        kernel.launch(c.grid, c.block, arg, y)
        if not np.array_equal(y, np.argmax(x, axis=1)):
            raise AssertionError(f"{c.name} [{c.label()}]: wrong in the interpreter: {y.tolist()}, "
                                 f"numpy {np.argmax(x, axis=1).tolist()}")
    softmax = [c for d in DTYPES for c in softmax_configs(d) if c.who.split("_")[0] in which]
    for c in softmax:
        for small_c in (dataclasses.replace(c, M=2, N=2048 if c.dtype == "f32" else 4096, W=4), dataclasses.replace(c, M=1)):
            _check_softmax(small_c, rng)
    return len(configs) + 2 * len(softmax)


def _check_softmax(c: SoftmaxConfig, rng) -> None:
    import numpy as np
    import tile_mlir

    from tile_mlir.testing.cases import narrow, widen

    kernel = tile_mlir.compile(softmax_rows(c), {"fold": c.fold}, backend="interpreter")[c.name]
    x = narrow(rng.standard_normal((c.M, c.N)) * 3, c.dtype)
    y = np.zeros_like(x)
    kernel.launch(c.grid, c.block, x, y)
    xv = widen(x, c.dtype)
    e = np.exp(xv - xv.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    err = np.linalg.norm(widen(y, c.dtype) - ref) / np.linalg.norm(ref)
    if not err < (1e-5 if c.dtype == "f32" else 4e-3):
        raise AssertionError(f"{c.name} (W{c.W}, {c.M}x{c.N}): wrong in the interpreter (relative error {err:.2e})")


# --- the GPU section ------------------------------------------------------------------------


def _triton_argmax():
    from .triton_argmax import argmax_rows

    return argmax_rows


def config_of(M: int, N: int, dtype: str, label: str) -> ArgmaxConfig:
    """The configuration of one of ``candidates``' labels, with an `` O<k>`` cap or not."""
    base, _, cap = label.partition(" O")
    c = next(c for c in candidates(M, N, dtype) if c.label() == base)
    return dataclasses.replace(c, O=int(cap) if cap else 0)


def bind(c: ArgmaxConfig, xs, ys) -> list | None:
    """The launchers of ``c`` on each (x, y), capped at ``c.O`` CTAs an SM where it asks:
    the fewest bytes of dynamic shared memory that leave room for exactly ``c.O`` at the
    ``CARVEOUT`` (asked of ``max_active_blocks``); None where ``c.O`` or more is all that fits
    anyway, or no size gives ``c.O``."""
    import tile_mlir

    from .measure import OPTIONS

    kern = tile_mlir.compile(argmax_rows(c), OPTIONS, backend="cuda")[c.name]
    extra = {}
    if c.O:
        natural = kern.max_active_blocks(c.block)
        sizes = range(0, CARVEOUT * 228 * 1024 // 100, 128) if natural and natural > c.O else range(0)
        # the CTAs that fit fall as the shared memory grows: the first size at which c.O or fewer fit
        fits = lambda s: (kern.max_active_blocks(c.block, s, carveout=CARVEOUT) or 0) <= c.O  # noqa: E731
        at = bisect.bisect_left(sizes, True, key=fits)
        if at == len(sizes) or kern.max_active_blocks(c.block, sizes[at], carveout=CARVEOUT) != c.O:
            return None
        shared = sizes[at]
        extra = {"shared_mem": shared, "carveout": CARVEOUT}
    return [kern.bind(c.grid, c.block, x, y, **extra) for x, y in zip(xs, ys)]


def _sweep(cands, xs, ys, ok, log, what, required: bool = True):
    """Each of our candidates bound (``bind``: those it can), checked with ``ok(y)`` and
    timed steady: (the ``FINALISTS`` fastest as (config, launchers), every label's ms);
    ``required``: at least one must be timed."""
    import torch

    from .measure import steady

    timed = []
    for cfg in cands:
        bound = bind(cfg, xs, ys)
        if bound is None:
            continue
        ys[0].fill_(-7)
        bound[0]()
        torch.cuda.synchronize()
        if not ok(ys[0]):
            log(f"  FAIL {what} [{cfg.label()}]: wrong result")
            continue
        timed.append((steady(bound), cfg, bound))
        log(f"  {cfg.M}x{cfg.N} {cfg.dtype}: {what} [{cfg.label()}] {timed[-1][0] * 1e3:8.1f} us")
    if not timed and required:
        raise AssertionError(f"{what}: no configuration gave the right result")
    timed.sort(key=lambda t: t[0])
    return [(c, bound) for _, c, bound in timed[:FINALISTS]], {c.label(): t for t, c, _ in timed}


def _final(row: dict, who: str, finalists: dict, times: dict) -> object:
    """The fastest of ``who``'s finalists (label: launchers) by their times in turns:
    its ms and config go into ``row``; returns its launchers."""
    label = min(finalists, key=lambda lb: times[f"{who}:{lb}"])
    row[f"{who}_ms"], row[f"{who}_cfg"] = times[f"{who}:{label}"], label
    row[f"{who}_finals"] = {lb: times[f"{who}:{lb}"] for lb in finalists}
    return finalists[label]


def _case(M: int, N: int, dtype: str, log) -> dict:
    """One shape and dtype: ours, the pure read, torch.argmax and Triton, swept; then the
    ``FINALISTS`` fastest of ours and of Triton's, the fastest pure read, K.argmax and
    torch timed again in turns (``timing.interleaved``), each side's fastest there being
    the figure compared: the same choice for both."""
    import torch

    from .measure import ROTATE_BYTES, flushed, steady
    from .timing import interleaved

    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    nbytes = M * N * (4 if dtype == "f32" else 2)
    nbuf = max(2, -(-ROTATE_BYTES // nbytes))
    xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(nbuf)]
    ref = torch.argmax(xs[0], dim=1)
    ties = int((xs[0] == xs[0].amax(dim=1, keepdim=True)).sum().item()) - M
    row = {"M": M, "N": N, "dtype": dtype, "bytes": nbytes, "input_sets": nbuf, "ties": ties}

    ys = [torch.empty(M, device="cuda", dtype=torch.int32) for _ in range(nbuf)]
    ours, row["ours_candidates"] = _sweep(candidates(M, N, dtype), xs, ys, lambda y: torch.equal(y.long(), ref), log,
                                          "tile-mlir argmax")
    read, row["read_cfg"] = ceiling.fastest_read(xs)
    row["read_flushed_ms"] = flushed(read[0])

    from tile_mlir import kernels as library  # K.argmax: the row on chip, one reduction a row

    c = library.compiled("argmax", M, N, dtype, backend="cuda")
    y64 = [torch.empty(M, device="cuda", dtype=torch.int64) for _ in range(nbuf)]
    bound = [c.kernel.bind(c.grid, c.block, x, y, M) for x, y in zip(xs, y64)]
    y64[0].fill_(-7)
    bound[0]()
    torch.cuda.synchronize()
    if not torch.equal(y64[0], ref):
        raise AssertionError(f"K.argmax {M}x{N} {dtype}: wrong result")
    library = bound
    row |= {"library_flushed_ms": flushed(bound[0]), "library_cfg": c.plan.label()}

    assert torch.equal(torch.argmax(xs[0], dim=1), ref)
    torch_fns = [lambda x=x: torch.argmax(x, dim=1) for x in xs]
    row["torch_flushed_ms"] = flushed(torch_fns[0])

    kernel, tri = _triton_argmax(), []
    for block_n, warps in TRITON[N]:
        def launch(i, block_n=block_n, warps=warps):
            kernel[(M,)](xs[i], ys[i], N, BLOCK_N=block_n, ONE_PASS=block_n == N, num_warps=warps)
        ys[0].fill_(-7)
        launch(0)
        torch.cuda.synchronize()
        label = f"BN{block_n} w{warps}" + (" one tl.argmax" if block_n == N else " chunks")
        if not torch.equal(ys[0].long(), ref):
            log(f"  FAIL triton [{label}]: wrong result")
            continue
        fns = [lambda i=i, f=launch: f(i) for i in range(nbuf)]
        tri.append((steady(fns), label, fns))
        log(f"  {M}x{N} {dtype}: triton [{label}] {tri[-1][0] * 1e3:8.1f} us")
    if not tri:
        raise AssertionError("triton: no configuration gave the right result")
    row["triton_candidates"] = {lb: t for t, lb, _ in tri}
    tri = {lb: fns for _, lb, fns in sorted(tri, key=lambda t: t[0])[:FINALISTS]}
    capped, row["ours_capped"] = _sweep([dataclasses.replace(c, O=k) for c, _ in ours for k in CAPS], xs, ys,
                                        lambda y: torch.equal(y.long(), ref), log, "tile-mlir argmax, capped", False)
    mine = {c.label(): bound for c, bound in (*ours, *capped)}
    times = interleaved({**{f"ours:{lb}": b for lb, b in mine.items()}, **{f"triton:{lb}": f for lb, f in tri.items()},
                         "read": read, "library": library, "torch": torch_fns})
    row |= {f"{who}_ms": times[who] for who in ("read", "library", "torch")}
    row["ours_flushed_ms"] = flushed(_final(row, "ours", mine, times)[0])
    row["ours_kernel"] = config_of(M, N, dtype, row["ours_cfg"]).name
    row["triton_flushed_ms"] = flushed(_final(row, "triton", tri, times)[0])
    row["timing"] = "interleaved"

    for mode in ("", "flushed_"):
        for who in ("ours", "read", "torch", "triton", "library"):
            row[f"{who}_{mode}GBs"] = nbytes / row[f"{who}_{mode}ms"] / 1e6
        row[f"pct_read_{mode}".rstrip("_")] = 100 * row[f"read_{mode}ms"] / row[f"ours_{mode}ms"]
        for who in ("torch", "triton"):
            row[f"vs_{who}_{mode}".rstrip("_")] = row[f"{who}_{mode}ms"] / row[f"ours_{mode}ms"]
    log(f"  {M}x{N} {dtype} argmax: ours {row['ours_GBs']:6.0f} GB/s [{row['ours_cfg']}]  pure read {row['read_GBs']:6.0f} "
        f"[{row['read_cfg']}]  torch {row['torch_GBs']:6.0f}  triton {row['triton_GBs']:6.0f} [{row['triton_cfg']}] -> "
        f"{row['pct_read']:.1f}% of pure read, {row['vs_torch']:.3f}x torch, {row['vs_triton']:.3f}x triton "
        f"({ties} tied maxima in the first input); K.argmax {row['library_GBs']:.0f} [{row['library_cfg']}] | flushed: ours {row['ours_flushed_GBs']:.0f} read "
        f"{row['read_flushed_GBs']:.0f} torch {row['torch_flushed_GBs']:.0f} triton {row['triton_flushed_GBs']:.0f}")
    return row


def softmax_kernel(c: SoftmaxConfig):
    """The CUDA kernel of softmax form ``c``, compiled (or found in the cache) with its own
    fold, as ``all_kernels`` gives it to ``benchmarks.prepare``."""
    import tile_mlir

    from .measure import OPTIONS

    return tile_mlir.compile(softmax_rows(c), OPTIONS | {"fold": c.fold}, backend="cuda")[c.name]


def _softmax(dtype: str, log) -> dict:
    """The kernels of ``softmax_configs(dtype)``: each checked against float64, then timed
    steady in turns (``timing.interleaved``). ``saved`` is what the library's form of the
    pair (``packed``) saves against two exchanges."""
    import torch

    from .measure import ROTATE_BYTES
    from .timing import interleaved

    M, N = SOFTMAX_SHAPE
    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    nbytes = M * N * (4 if dtype == "f32" else 2)
    nbuf = max(2, -(-ROTATE_BYTES // nbytes))
    xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(nbuf)]
    ys = [torch.empty_like(x) for x in xs]
    ref = torch.softmax(xs[0].double(), dim=1)
    out, groups = {"M": M, "N": N, "dtype": dtype, "timing": "interleaved"}, {}
    for c in softmax_configs(dtype):
        kern = softmax_kernel(c)
        bound = [kern.bind(c.grid, c.block, x, y) for x, y in zip(xs, ys)]
        ys[0].fill_(float("nan"))
        bound[0]()
        torch.cuda.synchronize()
        err = ((ys[0].double() - ref).norm() / ref.norm()).item()
        if not err < (1e-5 if dtype == "f32" else 4e-3):
            raise AssertionError(f"{c.name}: wrong result (relative error {err:.2e})")
        groups[c.who] = bound
        out[f"{c.who}_kernel"], out[f"{c.who}_error"] = c.name, err
    for who, t in interleaved(groups).items():
        out[f"{who}_ms"], out[f"{who}_GBs"] = t, 2 * nbytes / t / 1e6
    _saved(out, ONE_EXCHANGE)
    log(f"  softmax {M}x{N} {dtype}, one 1024-thread block per row: two exchanges {1e3 * out['two_ms']:.1f} us "
        f"({out['two_GBs']:.0f} GB/s), one, the pair across the warps {1e3 * out['packed_ms']:.1f} us "
        f"({out['packed_GBs']:.0f} GB/s), one, the pair at every step {1e3 * out['packed_lanes_ms']:.1f} us, one, "
        f"the warps' pairs then named reductions {1e3 * out['packed_named_ms']:.1f} us: the fastest one "
        f"({out['saved_by']}) saves {out['saved_us']:.1f} us ({out['saved_pct']:.1f}%)")
    return out


def _saved(out: dict, forms=("packed",)) -> None:
    """What the fastest of the one-exchange ``forms`` (``saved_by``) saves against two
    exchanges, in µs and %."""
    best = min(forms, key=lambda who: out[f"{who}_ms"])
    out["saved_by"] = best
    out["saved_us"] = 1e3 * (out["two_ms"] - out[f"{best}_ms"])
    out["saved_pct"] = 100 * (out["two_ms"] - out[f"{best}_ms"]) / out["two_ms"]


def library_label(name: str, M: int, N: int, dtype: str, pair: bool) -> str:
    """The label of the library's ``name`` with the pair in one exchange (``pair``) or two,
    in ``all_kernels`` (and so in compile.json's ``ptxas`` facts) and in the results."""
    return f"K.{name} {M}x{N} {dtype} pair={pair}"


def _library_pair(name: str, M: int, N: int, dtype: str, log) -> dict:
    """The library's ``name`` at M x N with the (max, sum) pair in two exchanges and in
    one (``pair``): each checked against float64, timed steady."""
    import torch

    from tile_mlir import kernels as K

    from .measure import ROTATE_BYTES
    from .timing import interleaved

    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    nbytes = M * N * (4 if dtype == "f32" else 2)
    nbuf = max(2, -(-ROTATE_BYTES // nbytes))
    xs = [torch.randn(M, N, device="cuda", dtype=tdt) for _ in range(nbuf)]
    ys = [torch.empty_like(x) if name == "softmax" else torch.empty(M, device="cuda", dtype=tdt) for x in xs]
    ref = (torch.softmax if name == "softmax" else torch.logsumexp)(xs[0].double(), dim=1)
    written = nbytes if name == "softmax" else M * (4 if dtype == "f32" else 2)
    out, groups = {"kernel": name, "M": M, "N": N, "dtype": dtype, "timing": "interleaved"}, {}
    for pair in (False, True):
        c = K.compiled(name, M, N, dtype, pair=pair)
        bound = [c.kernel.bind(c.grid, c.block, x, y, M) for x, y in zip(xs, ys)]
        ys[0].fill_(float("nan"))
        bound[0]()
        torch.cuda.synchronize()
        err = ((ys[0].double() - ref).norm() / ref.norm()).item()
        who = "packed" if pair else "two"
        if not err < (1e-5 if dtype == "f32" else 4e-3):
            raise AssertionError(f"K.{name} {M}x{N} {dtype} pair={pair}: wrong result (relative error {err:.2e})")
        groups[who], out[f"{who}_error"], out["plan"] = bound, err, c.plan.label().rsplit(" ", 1)[0]
        out[f"{who}_kernel"] = library_label(name, M, N, dtype, pair)
    for who, t in interleaved(groups).items():
        out[f"{who}_ms"], out[f"{who}_GBs"] = t, (nbytes + written) / t / 1e6
    _saved(out)
    log(f"  K.{name} {M}x{N} {dtype} [{out['plan']}]: two exchanges {1e3 * out['two_ms']:.1f} us "
        f"({out['two_GBs']:.0f} GB/s), one packed exchange {1e3 * out['packed_ms']:.1f} us "
        f"({out['packed_GBs']:.0f} GB/s): saves {out['saved_us']:.1f} us ({out['saved_pct']:.1f}%)")
    return out


def bench_argmax(deadline: float | None = None) -> dict:
    """Section 7 (module docstring). A case is skipped, and the log says so, when the
    previous one's time says it would end after ``deadline`` seconds of the run."""
    import torch

    from .measure import log

    log.section("7. argmax over rows (read GB/s = M*N*itemsize / median time), against the pure read, torch, Triton")
    if unsupported():
        log(f"  left out: {unsupported()}")
        return {}
    out = {"rows": [], "softmax": [], "triton_configs": {str(n): [list(c) for c in cs] for n, cs in TRITON.items()}}
    last = 0.0
    for (M, N), dtype in ((s, d) for d in DTYPES for s in SHAPES):
        if deadline is not None and log.elapsed() + last > deadline:
            log(f"  {M}x{N} {dtype} skipped: it would end past the run's {deadline:.0f} s deadline")
            continue
        t0 = log.elapsed()
        try:
            out["rows"].append(_case(M, N, dtype, log))
        except Exception:  # noqa: BLE001 - report the case and go on
            log(f"  {M}x{N} {dtype}: failed\n{traceback.format_exc()}")
        torch.cuda.empty_cache()
        last = log.elapsed() - t0
    log.section(f"7. softmax {SOFTMAX_SHAPE[0]}x{SOFTMAX_SHAPE[1]}, one 1024-thread block per row: "
                "(max, sum) in two exchanges or one")
    for dtype in DTYPES:
        try:
            out["softmax"].append(_softmax(dtype, log))
        except Exception:  # noqa: BLE001
            log(f"  softmax {dtype}: failed\n{traceback.format_exc()}")
        torch.cuda.empty_cache()
    log.section("7. the library's softmax and logsumexp over a cluster: (max, sum) in two exchanges or one")
    out["library_pair"] = []
    for (name, M, N), dtype in ((c, d) for d in DTYPES for c in LIBRARY_PAIR):
        try:
            out["library_pair"].append(_library_pair(name, M, N, dtype, log))
        except Exception:  # noqa: BLE001
            log(f"  K.{name} {M}x{N} {dtype}: failed\n{traceback.format_exc()}")
        torch.cuda.empty_cache()
    return out


def reported_kernels(results: dict) -> dict[str, tuple[str, str]]:
    """The section's chosen kernels by label: (text, fold option), for the SASS dump. The
    softmax forms are compiled with their own fold (``SoftmaxConfig.fold``): looked up with
    another, they are not in the compile cache, and their SASS facts (BAR) would be missing."""
    texts = {}
    for r in results.get("argmax", {}).get("rows", []):
        cfg = config_of(r["M"], r["N"], r["dtype"], r["ours_cfg"])
        texts[f"{cfg.name} [{cfg.label()}]"] = (argmax_rows(cfg), "linear")
    for s in results.get("argmax", {}).get("softmax", []):
        for c in softmax_configs(s["dtype"]):
            texts[c.name] = (softmax_rows(c), c.fold)
    return texts
