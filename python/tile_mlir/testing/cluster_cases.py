"""The conformance cases of the cluster scope: one ``tile.reduce`` over the CTAs of a
thread-block cluster (the ``cluster`` variant), on the GPU and in the interpreter.

Each case is a ``ReduceCase`` at ``cluster`` scope, launched as one cluster of
``grid()`` blocks (``tile_mlir.testing.cases``). ``CLUSTER_PATTERNS`` are the layout
pairs, ``cluster_case`` instantiates one per kind and dtype, and ``CLUSTER_CASES`` is the
matrix: clusters of 2, 4, 8 and 16 CTAs reduced whole, every kind, f32, bf16 and i32,
with and without accum; NaN, infinities and signed zeros in every kind, in f32 and bf16
(f16 and f64 too for 4 CTAs);
and the shapes that take the lowering's other paths (rows kept on CTA bits, replicas over
CTAs, kept warps, several dst slots, no warp exchange, a loop, a cluster of one). Half
the sizes are fixed by the kernel (``known_cluster_size``), the others given at launch.
``tile_mlir.testing.matrix.CASES`` includes them. No MLIR here.
"""

from __future__ import annotations

from collections import namedtuple

from ..vocab import FLOAT_DTYPES, KINDS
from .cases import ReduceCase

CLUSTER_DTYPES = ("f32", "bf16", "i32")


# A layout pair to instantiate per kind and dtype; ``repeat > 1`` puts the op in a loop,
# ``fixed`` makes the kernel declare its cluster (known_cluster_size).
_Pattern = namedtuple("_Pattern", "tag axes src_shape src_layout dst_shape dst_layout repeat fixed",
                      defaults=(1, False))


def _whole(ctas: int, warps: int = 2, regs: int = 2, fixed: bool = False) -> _Pattern:
    """A flat tile on (CTA, warp, lane, slot), reduced over all of it: in-thread fold,
    5 butterfly steps, the warps of each CTA, then the ``ctas`` CTAs."""
    return _Pattern(
        f"cl{ctas}_all", (0,), (regs,),
        f"S[(({ctas}, {warps}, 32, {regs})) : ((1@cta_in_cluster, 1@warpid, 1@laneid, 1))]",
        (1,), f"S[1 : 1] + R[(32, {warps}, {ctas}) : (1@laneid, 1@warpid, 1@cta_in_cluster)]", fixed=fixed,
    )


CLUSTER_PATTERNS = {
    p.tag: p
    for p in (
        _whole(2, fixed=True), _whole(4), _whole(8, fixed=True), _whole(16),
        # 2 rows on CTA bit 1, each over CTA bit 0, 2 warps, 32 lanes and 2 slots: the CTAs
        # a thread reads depend on its own rank.
        _Pattern("cl4_rows", (1,), (2,), "S[(2, (2, 2, 32, 2)) : (2@cta_in_cluster, (1@cta_in_cluster, 1@warpid, 1@laneid, 1))]",
                 (1,), "S[2 : 2@cta_in_cluster] + R[(32, 2, 2) : (1@laneid, 1@warpid, 1@cta_in_cluster)]"),
        # The src replicated over CTA bit 1: two independent copies of the reduction.
        _Pattern("cl4_replica", (0,), (2,), "S[((2, 32, 2)) : ((1@cta_in_cluster, 1@laneid, 1))] + R[2 : 2@cta_in_cluster]",
                 (1,), "S[1 : 1] + R[(32, 4) : (1@laneid, 1@cta_in_cluster)]"),
        # 2 rows on the warps, each over 8 CTAs and the lanes: no exchange between warps.
        _Pattern("cl8_kept_warps", (1,), (1,), "S[(2, (8, 32)) : (1@warpid, (1@cta_in_cluster, 1@laneid))]",
                 (1,), "S[2 : 1@warpid] + R[(32, 8) : (1@laneid, 1@cta_in_cluster)]", fixed=True),
        # 4 dst slots per thread, each over 2 CTAs and 32 lanes (one warp).
        _Pattern("cl2_slots", (1,), (4,), "S[(4, (2, 32)) : (1, (1@cta_in_cluster, 1@laneid))]",
                 (4,), "S[4 : 1] + R[(32, 2) : (1@laneid, 1@cta_in_cluster)]"),
        # Inside a loop of 3 iterations (accumulating): the op runs again on its scratch.
        _Pattern("loop3_cl4", (0,), (2,), "S[((4, 2, 32, 2)) : ((1@cta_in_cluster, 1@warpid, 1@laneid, 1))]",
                 (1,), "S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]", repeat=3),
        # A cluster of one CTA: the cta path, no exchange between CTAs, no cluster launch.
        _Pattern("cl1", (0,), (2,), "S[((2, 32, 2)) : ((1@warpid, 1@laneid, 1))]",
                 (1,), "S[1 : 1] + R[(32, 2) : (1@laneid, 1@warpid)]"),
    )
}


def cluster_case(tag: str, kind: str, dtype: str, accum: bool, special: bool = False,
                 dispatch: str | None = None) -> ReduceCase:
    """A cluster-scope case over one of ``CLUSTER_PATTERNS``; ``dispatch`` forces a
    variant (``"cluster"``: the pull protocol, where ``cluster_push`` would be chosen)."""
    p = CLUSTER_PATTERNS[tag]
    name = "_".join(["cluster", dtype, kind, tag] + ["accum"] * accum + ["special"] * special
                    + ([dispatch] if dispatch else []))
    return ReduceCase(name, kind, dtype, "cluster", p.axes, accum, p.src_shape, p.dst_shape, p.src_layout,
                      p.dst_layout, special=special, repeat=p.repeat, cluster_fixed=p.fixed, dispatch=dispatch)


def _matrix() -> tuple[ReduceCase, ...]:
    cases: dict[str, ReduceCase] = {}

    def add(case: ReduceCase) -> None:
        cases.setdefault(case.name, case)

    for ctas in (2, 4, 8, 16):
        for dtype in CLUSTER_DTYPES:
            for kind in KINDS:
                add(cluster_case(f"cl{ctas}_all", kind, dtype, accum=kind == "sum"))
        for dtype in FLOAT_DTYPES:
            for kind in KINDS:
                if ctas == 4 or dtype in ("f32", "bf16"):
                    add(cluster_case(f"cl{ctas}_all", kind, dtype, accum=False, special=True))
    for tag in ("cl4_rows", "cl4_replica", "cl8_kept_warps", "cl2_slots", "cl1"):
        for kind in ("sum", "max", "minimum"):
            add(cluster_case(tag, kind, "f32", accum=kind == "max"))
    for kind in KINDS:
        add(cluster_case("loop3_cl4", kind, "f32", accum=True, special=kind != "sum"))
    add(cluster_case("loop3_cl4", "sum", "i32", accum=True))
    # the pull protocol (variant cluster), where the push one is the default
    for tag in ("cl4_all", "cl16_all", "cl4_rows", "cl4_replica", "cl8_kept_warps", "cl2_slots", "loop3_cl4"):
        add(cluster_case(tag, "sum", "f32", accum=True, dispatch="cluster"))
    add(cluster_case("cl4_all", "max", "bf16", accum=False, special=True, dispatch="cluster"))
    return tuple(cases.values())


CLUSTER_CASES: tuple[ReduceCase, ...] = _matrix()
