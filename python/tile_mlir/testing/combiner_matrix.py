"""The combiner conformance matrix (``COMBINER_CASES``), the special inputs of argmax and
argmin (``scenarios``), and running a case (``run``, ``run_case``): see
``tile_mlir.testing.combiner_cases`` for the case itself. Pure numpy: it runs on the GPU
machine. test/python/test_combiners.py runs the matrix in the interpreter,
test/gpu/test_combiners_gpu.py on the GPU.
"""

from __future__ import annotations

import zlib

import numpy as np

from ..vocab import ARG_KINDS, DTYPES
from .cases import is_float, narrow, storage_dtype
from .combiner_cases import CombinerCase
from .combiners import COMBINERS


# --- argmax/argmin scenarios -------------------------------------------------------------

# Where the two copies of the best value of a tie sit: in one thread, on two lanes of one
# warp, in two warps of one CTA, in two CTAs (bits of the layout's thread index).
_TIES = {"tie_in_thread": lambda a, b: a == b, "tie_across_lanes": lambda a, b: a != b and a >> 5 == b >> 5,
         "tie_across_warps": lambda a, b: a >> 5 != b >> 5 and a >> 10 == b >> 10,
         "tie_across_ctas": lambda a, b: a >> 10 != b >> 10}


def scenarios(case: CombinerCase, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """``(name, x)``: the special inputs of an argmax/argmin case (module docstring)."""
    shape = case.terms(np.zeros(case.tile_shape)).shape
    n, R = shape
    best = 1.0 if case.combiner == "argmax" else -1.0
    out = []
    base = lambda: rng.uniform(-0.5, 0.5, shape)  # noqa: E731
    if not is_float(case.dtype):
        base = lambda: rng.integers(-1000, 1000, shape)  # noqa: E731
        best = 5000 if case.combiner == "argmax" else -5000
    threads = case.threads_of
    for name, related in _TIES.items():
        t = base()
        ok = True
        for e in range(n):
            p = int(rng.integers(0, R))
            others = [q for q in range(R) if q != p and related(int(threads[e, p]), int(threads[e, q]))]
            if not others:
                ok = False
                break
            t[e, p] = t[e, int(rng.choice(others))] = best
        if ok:
            out.append((name, t))
    if not is_float(case.dtype):
        info = np.iinfo(storage_dtype(case.dtype))
        out.append(("few_values", rng.choice(np.array([-2, -1, 1, 2]), size=shape)))
        out.append(("extremes", rng.choice(np.array([info.min, info.max, -1, 0], np.int64), size=shape)))
        return [(name, case.from_terms(t)) for name, t in out]
    out.append(("few_values", rng.choice([0.25, 0.5, 0.75, 1.0], size=shape)))
    zero_loser = -0.5 if case.combiner == "argmax" else 0.5
    out.append(("signed_zeros", rng.choice([-0.0, 0.0, zero_loser], size=shape)))
    for name, at in (("nan_first", 0), ("nan_last", R - 1)):
        t = base()
        t[:, at] = np.nan
        out.append((name, t))
    out.append(("nan_only", np.full(shape, np.nan)))
    # Every other dst element holds a NaN, or only zeros and losers, the others numbers:
    # a thread with several dst elements folds some of each.
    for name, special in (("nan_every_other", None), ("zeros_every_other", [-0.0, 0.0, zero_loser])):
        t = base()
        for e in range(0, n, 2):
            if special is None:
                t[e, int(rng.integers(0, R))] = np.nan
            else:
                t[e] = rng.choice(special, size=R)
        out.append((name, t))
    t = base()
    t[rng.random(shape) < 0.2] = np.nan
    out.append(("some_nans", t))
    out.append(("all_neg_inf", np.full(shape, -np.inf)))
    out.append(("all_pos_inf", np.full(shape, np.inf)))
    t = base()
    t[rng.random(shape) < 0.5] = -np.inf if case.combiner == "argmax" else np.inf
    out.append(("some_inf", t))
    return [(name, case.from_terms(t)) for name, t in out]


# --- the matrix ----------------------------------------------------------------------------

# (scope, axes, src memref shape, src_layout, dst memref shape, dst_layout, cluster fixed)
PATTERNS = {
    # Two reduced dims, default layouts: the index is row-major over both.
    "t3x4x5": ("thread", (0, 2), (3, 4, 5), None, (4,), None, False),
    "t2x8": ("thread", (1,), (2, 8), None, (2,), None, False),
    # 128 elements per row over 32 lanes x 4 registers, lanes outer (c = 4 lane + slot)...
    "w_lanes_outer": ("warp", (1,), (8,), "S[(2, (32, 4)) : (4, (1@laneid, 1))]", (2,), "S[2 : 1] + R[32 : 1@laneid]", False),
    # ... and registers outer (c = 32 slot + lane): the butterfly's lower lane does not
    # hold all the lower coordinates.
    "w_lanes_inner": ("warp", (1,), (8,), "S[(2, (4, 32)) : (4, (1, 1@laneid))]", (2,), "S[2 : 1] + R[32 : 1@laneid]", False),
    # Groups of 8 adjacent lanes, 4 of them kept.
    "w_groups8": ("warp", (1,), (1,), "S[(4, 8) : (8@laneid, 1@laneid)]", (1,), "S[4 : 8@laneid] + R[8 : 1@laneid]", False),
    "wg_all": ("warpgroup", (0, 1, 2), (2,), "S[(4, 32, 2) : (1@wid_in_wg, 1@laneid, 1)]",
               (1,), "S[1 : 1] + R[(32, 4) : (1@laneid, 1@wid_in_wg)]", False),
    "cta8_rows": ("cta", (1,), (2,), "S[(2, (4, 32, 2)) : (4@warpid, (1@warpid, 1@laneid, 1))]",
                  (1,), "S[2 : 4@warpid] + R[(32, 4) : (1@laneid, 1@warpid)]", False),
    "cl4_all": ("cluster", (0,), (2,), "S[((4, 2, 32, 2)) : ((1@cta_in_cluster, 1@warpid, 1@laneid, 1))]",
                (1,), "S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]", True),
    # 4 dst slots, each over 2 CTAs and 32 lanes: no warp exchange; the cluster from the launch.
    "cl2_slots": ("cluster", (1,), (4,), "S[(4, (2, 32)) : (1, (1@cta_in_cluster, 1@laneid))]",
                  (4,), "S[4 : 1] + R[(32, 2) : (1@laneid, 1@cta_in_cluster)]", False),
}
# (src shape, axes, dst shape) of the shared cases, per scope.
SHARED = {"thread": ((4, 8, 6), (1,), (4, 6)), "warp": ((32, 7), (1,), (32,)),
          "warpgroup": ((3, 40), (1,), (3,)), "cta": ((8, 16, 2, 22), (2, 3), (8, 16))}


def combiner_case(combiner: str, dtype: str, where: str, accum: bool = False, special: bool = False,
                  index_dtype: str = "i32") -> CombinerCase:
    """A case at one of ``PATTERNS``, or ``shared_<scope>``."""
    parts = [combiner] + ([dtype] if combiner in ARG_KINDS else []) + [where] + ["accum"] * accum
    parts += ["special"] * special + ([index_dtype] if index_dtype != "i32" else [])
    name = "comb_" + "_".join(parts)
    if where.startswith("shared_"):
        scope = where.removeprefix("shared_")
        src, axes, dst = SHARED[scope]
        return CombinerCase(name, combiner, dtype, scope, axes, accum, src, dst, shared=True, special=special,
                            index_dtype=index_dtype)
    scope, axes, src, src_l, dst, dst_l, fixed = PATTERNS[where]
    return CombinerCase(name, combiner, dtype, scope, axes, accum, src, dst, src_l, dst_l, special=special,
                        cluster_fixed=fixed, index_dtype=index_dtype)


def _matrix() -> tuple[CombinerCase, ...]:
    cases = []
    arg_patterns = ("t3x4x5", "w_lanes_inner", "wg_all", "cta8_rows", "cl4_all")
    for kind in ARG_KINDS:
        for dtype in DTYPES:
            cases += [combiner_case(kind, dtype, where, special=True) for where in arg_patterns]
        for n, dtype in enumerate(DTYPES):
            cases.append(combiner_case(kind, dtype, "shared_" + ("thread", "warp", "warpgroup", "cta")[n % 4],
                                       special=True))
    cases += [combiner_case("argmax", "f32", "w_lanes_outer", accum=True, special=True),
              combiner_case("argmin", "bf16", "cl2_slots", accum=True, special=True),
              combiner_case("argmax", "i32", "shared_warp", accum=True),
              combiner_case("argmin", "f16", "w_groups8", index_dtype="i64", special=True)]
    for name in COMBINERS:
        for where in ("t2x8", "w_lanes_outer", "w_lanes_inner", "w_groups8", "wg_all", "cta8_rows", "cl4_all",
                      "cl2_slots", "shared_warp", "shared_cta"):
            cases.append(combiner_case(name, "f32", where))
    for name in ("first", "welford", "matrix", "online_softmax"):
        cases += [combiner_case(name, "f32", "w_lanes_inner", accum=True),
                  combiner_case(name, "f32", "shared_thread", accum=True),
                  combiner_case(name, "f32", "cl4_all", accum=True)]
    cases += [combiner_case("last", "f32", "shared_warpgroup"), combiner_case("matrix", "f32", "shared_warpgroup")]
    return tuple(cases)


COMBINER_CASES: tuple[CombinerCase, ...] = _matrix()


def run(case: CombinerCase, kernel, rng: np.random.Generator, exact: bool = True, fold: str = "linear") -> list[str]:
    """Launch ``kernel`` on random inputs (and the special scenarios of a special case);
    every problem found, prefixed with its scenario."""
    problems = []
    for scenario, x in [("random", case.random_x(rng)), *(scenarios(case, rng) if case.special else [])]:
        srcs = case.sources(x)
        olds = case.random_old(rng) if case.accum else None
        buffers = case.buffers(srcs, olds)
        kernel.launch(case.grid(), case.block(), *buffers)
        results, wrong = case.results(buffers)
        srcs = [narrow(s, t) for s, t in zip(srcs, case.src_types)]
        found = wrong + case.check(x, srcs, olds, results, exact, fold)
        problems += [f"[{scenario}] {p}" for p in found]
    return problems


def case_rng(case: CombinerCase, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(case.name.encode())])


def run_case(case: CombinerCase, backend: str, seed: int, fold: str = "linear") -> list[str]:
    """Compile ``case`` for ``CHIP`` with ``fold`` (``backend="cuda"``: from the compile
    cache that ``tile_mlir.testing.prepare`` fills), launch and check it. On the GPU, a
    combiner with math ops matches the model within GPU_EXP_ULPS per combine."""
    import tile_mlir  # noqa: PLC0415

    from .conformance import CHIP  # noqa: PLC0415

    options = {"chip": CHIP} if fold == "linear" else {"chip": CHIP, "fold": fold}
    kernel = tile_mlir.compile(case.kernel_text(CHIP), options, backend=backend)[case.name]
    return run(case, kernel, case_rng(case, seed), exact=backend != "cuda", fold=fold)
