"""One kernel per (kernel, N, dtype, plan), whatever the row count M: the forward and
backward kernels take M as their last argument (``rows``: tile_mlir.dynamic_dims), so a
batch that changes compiles nothing. Each function is called at several M in the CPU
interpreter, whose bounds checks and race detector are on (a CTA's rows partly past M,
M = 1, 3, 7 in a plan of 4 rows per CTA, must read and write nothing there); its results
are checked against float64 numpy formulas at every M, and its builds counted through
the library's one build hook (``library._built``): one per (kernel, N, dtype)."""

import re
from collections import Counter

import numpy as np
import pytest
from test_backward import agrees, formulas
from test_fused import SMALL, assert_all_agree, eps_of
from tile_mlir import kernels as K
from tile_mlir.kernels import library
from tile_mlir.kernels.reference import REFERENCES
from tile_mlir.testing.fused import as_f64, random_inputs, to_dtype

I = {"backend": "interpreter"}
MS = (1, 3, 7, 64)
PARAMS = {"softmax": 0, "logsumexp": 0, "rmsnorm": 1, "layernorm": 2}


@pytest.fixture
def builds(monkeypatch):
    """The kernels built from here on, as a Counter of (name, M, N, dtype, extra): the
    library's caches are emptied, and every build (``library._built``) is recorded."""
    for cached in (library._kernel, library._compiled, library._compiled_for, library._text):
        cached.cache_clear()
    seen, real = Counter(), library._built

    def recording(name, M, p, chip, extra=()):
        seen[name, M, p.N, p.dtype, extra] += 1
        return real(name, M, p, chip, extra)

    monkeypatch.setattr(library, "_built", recording)
    yield seen
    for cached in (library._kernel, library._compiled, library._compiled_for, library._text):
        cached.cache_clear()  # nothing built through the recorder stays for later tests


def built_once_for_any_m(seen: Counter, names) -> None:
    assert sorted(key[0] for key in seen) == sorted(names)
    assert all(M is None and count == 1 for (_, M, *_), count in seen.items()), seen


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("N, small", [(40, False), (997, True)], ids=["warp", "cluster"])
def test_forward_kernels_compile_once_for_every_m(builds, N, small, dtype):
    """softmax, logsumexp, RMSNorm, LayerNorm at M = 1, 3, 7, 64 (and M from a 3-d x):
    one build each, right at every M. ``cluster``: the scaled-down table spreads a row
    over a cluster of CTAs (the grid: M's rows times the CTAs of a row)."""
    rng = np.random.default_rng()
    overrides = {"table": SMALL[dtype]} if small else {}
    kinds = set()
    for M in MS:
        for name, params in PARAMS.items():
            x, *ps = random_inputs(rng, M, N, dtype, params)
            outputs = K.run(name, x, *ps, **I, **eps_of(name), **overrides)
            refs = REFERENCES[name](*(as_f64(a) for a in (x, *ps)), **eps_of(name))
            assert_all_agree(name, outputs, refs, dtype)
            kinds.add(K.compiled(name, M, N, dtype, **I, **overrides).plan.kind)
    x = to_dtype(rng.standard_normal((2, 5, N)), dtype)  # M = 10 from the leading dims
    assert_all_agree("softmax", K.run("softmax", x, **I, **overrides), REFERENCES["softmax"](as_f64(x)), dtype)
    assert kinds == ({"cluster"} if small else {"warp"})
    built_once_for_any_m(builds, PARAMS)


def test_a_changing_m_changes_only_the_grid(builds):
    """compiled() at several M: the same kernel, the grid M's (4 rows per CTA)."""
    cs = [K.compiled("softmax", M, 40, "f32", **I) for M in MS]
    assert len({id(c.kernel) for c in cs}) == 1 and [c.grid for c in cs] == [1, 1, 2, 16]
    assert cs[0].signature == "softmax(x, y, rows)"
    built_once_for_any_m(builds, ["softmax"])


def backward_inputs(rng, name, M, N, dtype):
    """The backward's inputs at M rows, its statistics from the float64 forward."""
    x, dy = (rng.standard_normal((M, N)) * 2 + 0.3 for _ in range(2))
    w, b = 1 + 0.5 * rng.standard_normal(N), rng.standard_normal(N)
    x, dy, w, b = (as_f64(to_dtype(a, dtype)) for a in (x, dy, w, b))
    if name == "softmax_backward":
        return REFERENCES["softmax"](x)[0], dy
    if name == "logsumexp_backward":
        return x, REFERENCES["logsumexp"](x)[0], rng.standard_normal(M)
    if name == "rmsnorm_backward":
        return dy, x, w, REFERENCES["rmsnorm"](x, w, 1e-6)[1]
    if name == "add_rmsnorm_backward":  # x as add_rms_norm's h, and the gradient that reached it
        return dy, as_f64(to_dtype(rng.standard_normal((M, N)), dtype)), x, w, REFERENCES["rmsnorm"](x, w, 1e-6)[1]
    return dy, x, w, *REFERENCES["layernorm"](x, w, b, 1e-5)[1:]


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
# the cluster case (about 19 s in the interpreter) runs with the sweeps (CI), not in the
# README's test command, which keeps one warp per row
@pytest.mark.parametrize("N, plan", [(45, "warp"), (45, "warps"),
                                     pytest.param(997, "cluster", marks=pytest.mark.sweep)],
                         ids=["one warp per row", "two warps per row", "cluster"])
def test_backward_kernels_compile_once_for_every_m(builds, N, plan, dtype):
    """The backward passes at M = 1, 3, 7, 64 (4 rows per CTA; ``cluster``: the
    scaled-down table splits a row over a cluster), the norms on their default
    persistent grid (which grows with M) and on 3 CTAs (clusters): one build of each row
    kernel and of each column sums (dW; dW and dB), right at every M."""
    rng = np.random.default_rng()
    overrides = {"warp": {}, "warps": {"warps": 2}, "cluster": {"table": SMALL[dtype]}}[plan]
    kinds = set()
    for M in MS:
        for name, spec in K.BACKWARD.items():
            args = [a.astype(np.float32) if role == "stat" else to_dtype(a, dtype)
                    for a, (_, role) in zip(backward_inputs(rng, name, M, N, dtype), spec.inputs)]
            wants = formulas(name, *(as_f64(a) for a in args))
            rows, _ = K.compiled_backward(name, M, N, dtype, **I, **overrides)
            kinds.add(rows.plan.kind)
            for ctas in (None, 3 * rows.plan.CL) if spec.sums else (None,):
                outs = K.run_backward(name, *args, **I, ctas=ctas, **overrides)
                outs = outs if isinstance(outs, tuple) else (outs,)
                assert len(outs) == len(wants)
                for got, want in zip(outs, wants):
                    assert got.dtype == args[0].dtype
                    agrees(got, want, dtype)
    assert kinds == {"cluster" if plan == "cluster" else "warp" if plan == "warp" else "warps"}
    built_once_for_any_m(builds, [*K.BACKWARD, "column_sums", "column_sums"])
    assert {extra for name, *_, extra in builds if name == "column_sums"} == {(("arrays", 1),), (("arrays", 2),)}


@pytest.mark.parametrize("name", ["rmsnorm_backward", "layernorm_backward"])
def test_the_persistent_loop_lets_llvm_drop_the_row_tests(name, tmp_path):
    """A norm's backward of one row a CTA (4096 f32 columns: 8 warps) loops over its rows
    up to M, unsigned (``k.range(..., unsigned=True)``), as tile.copy tests a row against
    the dynamic extent M: LLVM proves those tests true and drops them, so the kernel is
    no longer than with a static M (no branch per row access, no spill). Compiled for
    every ``ctas`` alike: the grid strides the loop."""
    import shutil
    import subprocess

    from tile_mlir.compiler import lower_to_ptx
    from tile_mlir.options import Options

    texts = K.text_backward(name, 4096, 4096, "f32")
    assert K.compiled_backward(name, 4096, 4096, "f32", **I)[0].plan.R == 1
    ptx = lower_to_ptx(texts[0], Options(chip="sm_90a")).ptx
    assert "scf.for unsigned" in texts[0] and ".local" not in ptx
    assert len(re.findall(r"\bbra\b", ptx)) <= 16, "a branch around each row access: the row tests are left"
    if shutil.which("ptxas"):
        (tmp_path / "k.ptx").write_text(ptx)
        info = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                              check=False, capture_output=True, text=True).stderr
        assert " 0 bytes spill stores" in info, info
