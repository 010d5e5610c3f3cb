"""The GPU conformance matrix: which ``ReduceCase`` s run, on the GPU and in the interpreter.

``CASES`` lists every case, each with a unique name
``<scope>_<dtype>_<kind>_<tag>[_accum][_special]``: the thread-scope shapes of
``THREAD_SHAPES`` and the layout pairs of ``PATTERNS`` (warp, warpgroup and cta scope),
instantiated per kind, dtype and accum by ``thread_case`` and ``pattern_case``, and the
cluster-scope cases of ``tile_mlir.testing.cluster_cases``.
``tile_mlir.testing.cases`` holds the case itself (kernel, inputs, reference, check).
Like it, this module imports no MLIR.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..vocab import DTYPES, FLOAT_DTYPES, KINDS
from .cases import ReduceCase
from .cluster_cases import CLUSTER_CASES

# (tag, src memref shape, axes, dst memref shape): thread-scope shapes of rank 1 to 3.
THREAD_SHAPES = (
    ("1_to_1", (1,), (0,), (1,)),
    ("4_to_1", (4,), (0,), (1,)),
    ("7_to_1", (7,), (0,), (1,)),
    ("16_to_1", (16,), (0,), (1,)),
    ("32_to_1", (32,), (0,), (1,)),
    ("4x8_to_8", (4, 8), (0,), (8,)),
    ("4x8_to_4", (4, 8), (1,), (4,)),
    ("3x4x5_to_4", (3, 4, 5), (0, 2), (4,)),
    ("2x3x4_to_2x3", (2, 3, 4), (-1,), (2, 3)),
    ("2x3x4_to_3x4", (2, 3, 4), (0,), (3, 4)),
)


@dataclass(frozen=True)
class _Pattern:
    """A layout pair at some scope, to instantiate per kind and dtype; ``repeat > 1``
    puts the op in a loop (``ReduceCase.repeat``)."""

    tag: str
    scope: str
    axes: tuple[int, ...]
    src_shape: tuple[int, ...]
    src_layout: str
    dst_shape: tuple[int, ...]
    dst_layout: str
    repeat: int = 1


PATTERNS = {
    p.tag: p
    for p in (
        # 32 rows, one per lane, each folded in registers: no shuffle.
        _Pattern("rowperlane", "warp", (1,), (64,), "S[(32, 64) : (1@laneid, 1)]",
                 (1,), "S[32 : 1@laneid]"),
        # One element per lane, reduced over all 32 lanes: 5 butterfly steps.
        _Pattern("fulllane", "warp", (0,), (1,), "S[32 : 1@laneid]",
                 (1,), "S[1 : 1] + R[32 : 1@laneid]"),
        # Four columns, each over all 32 lanes: 4 interleaved butterflies.
        _Pattern("lanes_x4", "warp", (0,), (4,), "S[(32, 4) : (1@laneid, 1)]",
                 (4,), "S[4 : 1] + R[32 : 1@laneid]"),
        # Groups of 8 adjacent lanes (lane bits 0-2).
        _Pattern("groups8", "warp", (1,), (1,), "S[(4, 8) : (8@laneid, 1@laneid)]",
                 (1,), "S[4 : 8@laneid] + R[8 : 1@laneid]"),
        # Strided groups {i, i+8, i+16, i+24} (lane bits 3-4: the replica stride decides the group).
        _Pattern("strided8", "warp", (1,), (1,), "S[(8, 4) : (1@laneid, 8@laneid)]",
                 (1,), "S[8 : 1@laneid] + R[4 : 8@laneid]"),
        # Quads of adjacent lanes (lane bits 0-1), one element per lane.
        _Pattern("quads", "warp", (1,), (1,), "S[(8, 4) : (4@laneid, 1@laneid)]",
                 (1,), "S[8 : 4@laneid] + R[4 : 1@laneid]"),
        # The mma-accumulator-like layout, rows reduced over their quad: 4 dst slots.
        _Pattern("mma", "warp", (1,), (8,), "S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]",
                 (4,), "S[((8, 4)) : ((4@laneid, 1))] + R[4 : 1@laneid]"),
        # A src replicated over lane bits 3-4, folded over 8 registers, then lane bits 0-2.
        _Pattern("fold_and_lanes", "warp", (1,), (32,), "S[(4, (8, 8)) : (8, (1, 1@laneid))] + R[4 : 8@laneid]",
                 (4,), "S[4 : 1] + R[(8, 4) : (1@laneid, 8@laneid)]"),
        # Warpgroup, one row per thread, reduced within the thread.
        _Pattern("wg_rows", "warpgroup", (1,), (16,), "S[(128, 16) : (1@tid_in_wg, 1)]",
                 (1,), "S[128 : 1@tid_in_wg]"),
        # Warpgroup over wid_in_wg and laneid, reduced within the thread.
        _Pattern("wg_warps", "warpgroup", (2,), (8,), "S[(4, 32, 8) : (1@wid_in_wg, 1@laneid, 1)]",
                 (1,), "S[(4, 32) : (1@wid_in_wg, 1@laneid)]"),
        # A src register replica: slots 8..15 repeat slots 0..7; each element counts once.
        _Pattern("reg_replica_src", "thread", (0,), (16,), "S[8 : 1] + R[2 : 8]",
                 (1,), "S[1 : 1]"),
        # A dst register replica: each result lands in slots s and s + 4.
        _Pattern("reg_replica_dst", "thread", (1,), (32,), "S[(4, 8) : (8, 1)]",
                 (8,), "S[4 : 1] + R[2 : 4]"),
        # A dst replicated over lanes and registers at once.
        _Pattern("reg_replica_lanes", "warp", (0,), (4,), "S[(32, 4) : (1@laneid, 1)]",
                 (8,), "S[4 : 1] + R[(32, 2) : (1@laneid, 4)]"),
        # Across warps (cross_warp): a warpgroup over its 4 warps, and ctas of 2 and 8
        # warps, whole or in two rows.
        _Pattern("wg_all", "warpgroup", (0,), (2,), "S[(128, 2) : (1@tid_in_wg, 1)]",
                 (2,), "S[2 : 1] + R[128 : 1@tid_in_wg]"),
        _Pattern("wg_over_warps", "warpgroup", (0,), (4,), "S[(4, 32, 4) : (1@wid_in_wg, 1@laneid, 1)]",
                 (4,), "S[(32, 4) : (1@laneid, 1)] + R[4 : 1@wid_in_wg]"),
        _Pattern("cta2_all", "cta", (0, 1, 2), (4,), "S[(2, 32, 4) : (1@warpid, 1@laneid, 1)]",
                 (1,), "S[1 : 1] + R[(32, 2) : (1@laneid, 1@warpid)]"),
        _Pattern("cta8_rows", "cta", (1,), (2,), "S[(2, (4, 32, 2)) : (4@warpid, (1@warpid, 1@laneid, 1))]",
                 (1,), "S[2 : 4@warpid] + R[(32, 4) : (1@laneid, 1@warpid)]"),
        # One reduced dim kept with extent 1, the other dropped.
        _Pattern("keep_mixed", "thread", (0, 2), (24,), "S[(2, 3, 4)]",
                 (3,), "S[(1, 3)]"),
        # 24 rows on lanes 0..23 (not a power of two): lanes 24..31 hold nothing.
        _Pattern("lanes24", "warp", (1,), (4,), "S[(24, 4) : (1@laneid, 1)]",
                 (1,), "S[24 : 1@laneid]"),
        # 3 kept rows on lanes 0, 8, 16, each reduced over its 8 adjacent lanes.
        _Pattern("lanes3x8", "warp", (1,), (1,), "S[(3, 8) : (8@laneid, 1@laneid)]",
                 (1,), "S[3 : 8@laneid] + R[8 : 1@laneid]"),
        # Kept iters of 3 and 2 rows on lanes {0, 3, 6} + {0, 4}: their sums reach lane 10,
        # below the reduced lane bit 4 (with it at bit 3, tile-verify would refuse).
        _Pattern("kept_sum", "warp", (2,), (1,), "S[((3), (2), 2) : ((3@laneid), (4@laneid), 16@laneid)]",
                 (1,), "S[((3), (2)) : ((3@laneid), (4@laneid))] + R[2 : 16@laneid]"),
        # A kept iter on lanes {0, 3, 6} and a replica on lane bit 3: sums up to 14, below
        # the reduced bit 4.
        _Pattern("kept_replica_sum", "warp", (1,), (1,), "S[((3), 2) : ((3@laneid), 16@laneid)] + R[2 : 8@laneid]",
                 (1,), "S[(3) : (3@laneid)] + R[(2, 2) : (8@laneid, 16@laneid)]"),
        # 3 kept rows on warps 0-2, each reduced over 2 slots, 32 lanes and warp bit 2: 7 warps.
        _Pattern("cta_kept3", "cta", (1,), (2,), "S[(3, (2, 32, 2)) : (1@warpid, (4@warpid, 1@laneid, 1))]",
                 (1,), "S[3 : 1@warpid] + R[(32, 2) : (1@laneid, 4@warpid)]"),
    )
}


def _blocked(warps: int, regs: int) -> _Pattern:
    """A cta of ``warps`` warps, each element of one flat tile on (warp, lane, slot),
    reduced over all of it: in-thread fold, 5 butterfly steps, then ``warps`` partials."""
    return _Pattern(
        f"cta{warps}_all", "cta", (0, 1, 2), (regs,), f"S[({warps}, 32, {regs}) : (1@warpid, 1@laneid, 1)]",
        (1,), f"S[1 : 1] + R[(32, {warps}) : (1@laneid, 1@warpid)]",
    )


def _mma(name: str, scope: str, warps_m: int, warps_n: int, reps_n: int) -> tuple[_Pattern, ...]:
    """An mma accumulator tile of ``warps_m x warps_n`` warps (warp bits on M first), each
    warp ``16 x 8 reps_n``; reduced over N (``<name>_n``) and over M (``<name>_m``).

    One m16n8 fragment puts row r and column c of its 16 x 8 tile on lane
    ``4 (r mod 8) + c / 2``, slot ``2 (r / 8) + c mod 2``: rows ``(2, 8) : (2, 4@laneid)``,
    columns ``(4, 2) : (1@laneid, 1)``. ``reps_n`` fragments along N follow in registers
    (slot ``4 rep + ...``, the order of wgmma's accumulator)."""
    warp = "wid_in_wg" if scope == "warpgroup" else "warpid"
    m = ([(warps_m, f"1@{warp}")] if warps_m > 1 else []) + [(2, "2"), (8, "4@laneid")]
    n_warps = [(warps_n, f"{warps_m}@{warp}")] if warps_n > 1 else []
    n = n_warps + ([(reps_n, "4")] if reps_n > 1 else []) + [(4, "1@laneid"), (2, "1")]
    # The dst keeps one dim, its registers compact; it replicates over the other's thread iters.
    m_kept = [(e, "1" if s == "2" else s) for e, s in m]
    n_kept = [(e, "2" if s == "4" else s) for e, s in n]
    src = _text([m, n])
    over_m = [(8, "4@laneid")] + ([(warps_m, f"1@{warp}")] if warps_m > 1 else [])
    return (
        _Pattern(f"{name}_n", scope, (1,), (4 * reps_n,), src, (2,), _text([m_kept], [(4, "1@laneid"), *n_warps])),
        _Pattern(f"{name}_m", scope, (0,), (4 * reps_n,), src, (2 * reps_n,), _text([n_kept], over_m)),
    )


def _text(dims, replica=()) -> str:
    """``S[((e, ...), ...) : ((s, ...), ...)] + R[(e, ...) : (s, ...)]`` from (extent, stride) lists."""
    def group(items):
        return "(" + ", ".join(items) + ")"

    shard = f"S[{group(group(str(e) for e, _ in d) for d in dims)} : {group(group(s for _, s in d) for d in dims)}]"
    if not replica:
        return shard
    return f"{shard} + R[{group(str(e) for e, _ in replica)} : {group(s for _, s in replica)}]"


# Triton's mma v2 tiles (4 warps: 2 x 2, 4 x 1, 1 x 4), Hopper's wgmma accumulator over 2
# warpgroups along N (8 warps), and one warpgroup's wgmma accumulator (across wid_in_wg).
_MMA = (
    *_mma("mma2x2", "cta", 2, 2, 1),
    *_mma("mma4x1", "cta", 4, 1, 2),
    *_mma("mma1x4", "cta", 1, 4, 1),
    *_mma("wgmma8", "cta", 4, 2, 4),
    _mma("wg_mma", "warpgroup", 4, 1, 2)[1],
)


# Across warps (the cross_warp variant): blocked ctas, mma tiles, warpgroups, loops.
PATTERNS.update(
    (p.tag, p)
    for p in (
        *(_blocked(w, r) for w, r in ((4, 4), (8, 2), (16, 2), (32, 2))),
        # Rows kept, warps split between the rows and the reduced dim.
        _Pattern(  # 4 rows on lane bits 3-4; the reduced dim on 2 warps x lane bits 0-2 x 2 slots
            "cta2_rows", "cta", (1,), (2,), "S[(4, (2, 8, 2)) : (8@laneid, (1@warpid, 1@laneid, 1))]",
            (1,), "S[4 : 8@laneid] + R[(8, 2) : (1@laneid, 1@warpid)]",
        ),
        _Pattern(  # 2 rows on warp bit 1, each over warp bit 0, 32 lanes and 4 slots
            "cta4_rows", "cta", (1,), (4,), "S[(2, (2, 32, 4)) : (2@warpid, (1@warpid, 1@laneid, 1))]",
            (1,), "S[2 : 2@warpid] + R[(32, 2) : (1@laneid, 1@warpid)]",
        ),
        _Pattern(  # 4 rows on the low warp bits, reduced over the high ones
            "cta16_rows", "cta", (1,), (1,), "S[(4, (4, 32)) : (1@warpid, (4@warpid, 1@laneid))]",
            (1,), "S[4 : 1@warpid] + R[(32, 4) : (1@laneid, 4@warpid)]",
        ),
        _Pattern(  # 64 rows on the lanes and warp bit 4, reduced over warp bits 0-3 and 2 slots: no shuffle
            "cta32_rows", "cta", (1,), (2,), "S[((2, 32), (16, 2)) : ((16@warpid, 1@laneid), (1@warpid, 1))]",
            (1,), "S[((2, 32)) : ((16@warpid, 1@laneid))] + R[16 : 1@warpid]",
        ),
        _Pattern(  # a src replicated over lane bits 3-4; 8 rows on lane bits 0-2, reduced over 4 warps
            "cta4_replica", "cta", (1,), (4,), "S[(8, (4, 4)) : (1@laneid, (1@warpid, 1))] + R[4 : 8@laneid]",
            (1,), "S[8 : 1@laneid] + R[(4, 4) : (8@laneid, 1@warpid)]",
        ),
        *_MMA,
        # A warpgroup with kept lanes and replicas: 4 rows on lane bits 0-1, each over the
        # 4 warps, lane bit 2 and 4 slots; the src replicated over lane bits 3-4, the dst
        # over lanes, warps and two slots.
        _Pattern(
            "wg_kept_replica", "warpgroup", (1,), (4,),
            "S[(4, (4, 2, 4)) : (1@laneid, (1@wid_in_wg, 4@laneid, 1))] + R[4 : 8@laneid]",
            (2,), "S[4 : 1@laneid] + R[(2, 4, 4, 2) : (4@laneid, 8@laneid, 1@wid_in_wg, 1)]",
        ),
    )
)
# Inside a loop of 3 iterations, over 4 warps: ctas, and a warpgroup (its named barrier).
PATTERNS.update(
    (tag, replace(PATTERNS[base], tag=tag, repeat=3))
    for tag, base in (
        ("loop3_cta4", "cta4_all"), ("loop3_cta4_rows", "cta4_rows"), ("loop3_wg", "wg_over_warps"),
    )
)


def thread_case(tag: str, kind: str, dtype: str, accum: bool, special: bool = False) -> ReduceCase:
    """A thread-scope case over one of ``THREAD_SHAPES``, without layouts."""
    _, src, axes, dst = next(s for s in THREAD_SHAPES if s[0] == tag)
    return ReduceCase(
        _case_name("thread", dtype, kind, tag, accum, special),
        kind, dtype, "thread", axes, accum, src, dst, special=special,
    )


def pattern_case(tag: str, kind: str, dtype: str, accum: bool, special: bool = False) -> ReduceCase:
    """A case over one of ``PATTERNS``."""
    p = PATTERNS[tag]
    return ReduceCase(
        _case_name(p.scope, dtype, kind, tag, accum, special),
        kind, dtype, p.scope, p.axes, accum, p.src_shape, p.dst_shape,
        p.src_layout, p.dst_layout, special=special, repeat=p.repeat,
    )


def _case_name(scope, dtype, kind, tag, accum, special) -> str:
    return "_".join([scope, dtype, kind, tag] + ["accum"] * accum + ["special"] * special)


def _matrix() -> tuple[ReduceCase, ...]:
    cases: dict[str, ReduceCase] = {}

    def add(case: ReduceCase) -> None:
        if cases.setdefault(case.name, case) != case:
            raise AssertionError(f"two different cases named {case.name}")

    both = (False, True)
    # The thread-scope matrix: every shape, sum/max/min, with and without accum.
    for tag, _, _, _ in THREAD_SHAPES:
        for kind in ("sum", "max", "min"):
            for accum in both:
                add(thread_case(tag, kind, "f32", accum))
    # Every layout pattern, every kind, with and without accum, in f32.
    for tag in PATTERNS:
        for kind in KINDS:
            for accum in both:
                add(pattern_case(tag, kind, "f32", accum))
    # Every dtype x every kind: the full-lane warp case and the 4 -> 1 thread case.
    for dtype in DTYPES:
        for kind in KINDS:
            add(thread_case("4_to_1", kind, dtype, False))
            for accum in both:
                add(pattern_case("fulllane", kind, dtype, accum))
    # Multi-slot and strided butterflies in the other widths (16- and 64-bit shuffles).
    for dtype in DTYPES:
        for tag in ("lanes_x4", "mma", "strided8"):
            add(pattern_case(tag, "sum", dtype, False))
    # NaN, infinities and signed zeros: every kind and float dtype.
    for dtype in FLOAT_DTYPES:
        for kind in KINDS:
            add(thread_case("7_to_1", kind, dtype, False, special=True))
            add(pattern_case("mma", kind, dtype, False, special=True))
            for accum in both:
                add(pattern_case("fulllane", kind, dtype, accum, special=True))
    # Across warps in every dtype (16- and 64-bit partials in the scratch): a blocked cta,
    # an mma tile, a warpgroup with replicas, and the loop (accumulating).
    for dtype in DTYPES:
        for tag in ("cta8_all", "mma2x2_n", "wg_kept_replica", "loop3_cta4"):
            for kind in ("sum", "max"):
                add(pattern_case(tag, kind, dtype, PATTERNS[tag].repeat > 1))
    # NaN, infinities and signed zeros across warps: every kind and float dtype.
    for dtype in FLOAT_DTYPES:
        for kind in KINDS:
            add(pattern_case("mma2x2_n", kind, dtype, False, special=True))
            for accum in both:
                add(pattern_case("cta8_all", kind, dtype, accum, special=True))
    for kind in KINDS:
        add(pattern_case("loop3_cta4", kind, "f32", True, special=True))
    return tuple(cases.values())


# The cluster scope's cases (tile_mlir.testing.cluster_cases) run with the others.
CASES: tuple[ReduceCase, ...] = _matrix() + CLUSTER_CASES
