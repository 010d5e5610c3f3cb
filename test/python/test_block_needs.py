"""A kernel's tile ops decide which blocks it can run on (``KernelSignature.check_block``):
whole warps for a warp-scope op, whole warpgroups for a warpgroup-scope op, exactly the
layout's warps for a cta-scope op; and a cluster-scope op, which clusters
(``KernelSignature.cluster``, ``check_grid``). A launch on any other block would compute a wrong
answer without a word; instead the CUDA runtime and the interpreter both refuse it,
before anything runs."""

import numpy as np
import pytest

from tile_mlir import runtime
from tile_mlir.cache import Artifact
from tile_mlir.compiler import kernel_signatures, lower_tile_ops
from tile_mlir.errors import CompileError, LaunchError
from tile_mlir.interpreter import interpreted_kernels
from tile_mlir.ir import ir, make_context
from tile_mlir.signature import KernelSignature

PRIV = "#gpu.address_space<private>"
CTA4 = ('kind = "sum", exec_scope = "cta", axes = array<i64: 0, 1>, '
        'src_layout = #tile.layout<"S[(4, 32) : (1@warpid, 1@laneid)]">, '
        'dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">')
WARP = ('kind = "max", exec_scope = "warp", axes = array<i64: 0>, '
        'src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">')
WG = ('kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>, '
      'src_layout = #tile.layout<"S[128 : 1@tid_in_wg]">, dst_layout = #tile.layout<"S[1 : 1] + R[128 : 1@tid_in_wg]">')


def kernel(*attrs: str, block: str = "") -> str:
    """A kernel where thread t reduces A[t] with each op in turn and stores B[t]."""
    ops = "\n".join(
        f'      "tile.reduce"(%dst, %src) {{{a}}} : (memref<1xf32, {PRIV}>, memref<1xf32, {PRIV}>) -> ()'
        for a in attrs
    )
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {{
    gpu.func @k(%A: memref<1024xf32>, %B: memref<1024xf32>) kernel{block} {{
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %src = memref.alloca() : memref<1xf32, {PRIV}>
      %dst = memref.alloca() : memref<1xf32, {PRIV}>
      %a = memref.load %A[%t] : memref<1024xf32>
      memref.store %a, %src[%c0] : memref<1xf32, {PRIV}>
{ops}
      %b = memref.load %dst[%c0] : memref<1xf32, {PRIV}>
      memref.store %b, %B[%t] : memref<1024xf32>
      gpu.return
    }}
  }}
}}
"""


def signature(text: str) -> KernelSignature:
    with make_context():
        (sig,) = kernel_signatures(ir.Module.parse(text))
    return sig


@pytest.mark.parametrize(
    "attrs, exact, multiple",
    [((WARP,), None, 32), ((WG,), None, 128), ((CTA4,), 128, 32), ((WARP, CTA4), 128, 32), ((), None, 1)],
)
def test_the_signature_says_what_blocks_the_ops_need(attrs, exact, multiple):
    sig = signature(kernel(*attrs))
    assert (sig.block_threads, sig.block_multiple) == (exact, multiple)
    assert KernelSignature.from_json(sig.to_json()) == sig


def test_two_cta_ops_of_different_sizes_cannot_share_a_kernel():
    cta2 = CTA4.replace("(4, 32)", "(2, 32)").replace("(32, 4)", "(32, 2)")
    with pytest.raises(CompileError, match="its block must have both 128 and 64 threads"):
        signature(kernel(CTA4, cta2))


@pytest.mark.parametrize(
    "attrs, block, message",
    [
        ((CTA4,), 256, r"needs blocks of 128 threads \(its cta- or cluster-scope tile ops span 4 warps\), got \(256, 1, 1\)"),
        ((CTA4,), (32, 2), r"needs blocks of 128 threads .* got \(32, 2, 1\) = 64 threads"),
        ((WARP,), 48, r"needs whole warps \(32 threads\) per block .* got \(48, 1, 1\)"),
        ((WG,), 64, r"needs whole warpgroups \(128 threads\) per block"),
    ],
)
def test_the_interpreter_refuses_a_wrong_block(attrs, block, message):
    lowered, sigs = lower_tile_ops(kernel(*attrs))
    (k,) = interpreted_kernels(lowered, sigs).values()
    b = np.full(1024, np.nan, np.float32)
    with pytest.raises(LaunchError, match=message):
        k.launch(1, block, np.random.default_rng().random(1024, np.float32), b)
    assert np.isnan(b).all()  # nothing ran


def test_the_interpreter_runs_the_right_block():
    lowered, sigs = lower_tile_ops(kernel(CTA4))
    (k,) = interpreted_kernels(lowered, sigs).values()
    a, b = np.random.default_rng().random(1024, np.float32), np.full(1024, np.nan, np.float32)
    k.launch(1, 128, a, b)
    assert np.allclose(b[:128], a[:128].astype(np.float64).sum(), rtol=1e-5)


def test_the_cuda_runtime_refuses_a_wrong_block_before_any_driver_call(no_driver):
    sig = signature(kernel(CTA4))
    (k,) = runtime.cuda_kernels(Artifact(ptx="", cubin=b"x", signatures=(sig,), chip="sm_90a")).values()
    a, b = np.zeros(1024, np.float32), np.zeros(1024, np.float32)
    for launch in (lambda: k.launch(1, 64, a, b), lambda: k.bind(1, 64, a, b)):
        with pytest.raises(LaunchError, match="needs blocks of 128 threads"):
            launch()


def test_known_block_size_is_what_the_block_must_be():
    block = " attributes {known_block_size = array<i32: 32, 2, 1>}"
    sig = signature(kernel(WARP, block=block))
    assert (sig.block_threads, sig.block_multiple) == (64, 32)
    with pytest.raises(CompileError, match="the block has 64 threads .* at cta scope they must match"):
        lower_tile_ops(kernel(CTA4, block=block))  # tile-verify says so first


CLUSTER4 = ('kind = "sum", exec_scope = "cluster", axes = array<i64: 0>, '
            'src_layout = #tile.layout<"S[((4, 2, 32)) : ((1@cta_in_cluster, 1@warpid, 1@laneid))]">, '
            'dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">')

CLUSTER1 = ('kind = "sum", exec_scope = "cluster", axes = array<i64: 0>, '
            'src_layout = #tile.layout<"S[((2, 32)) : ((1@warpid, 1@laneid))]">, '
            'dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2) : (1@laneid, 1@warpid)]">')


@pytest.mark.parametrize(
    "attrs, block, cluster, fixed",
    [
        ((CLUSTER4,), "", (4, 1, 1), False),  # the layouts' CTAs, given at launch
        ((CLUSTER4,), " attributes {known_cluster_size = array<i32: 2, 2, 1>}", (2, 2, 1), True),  # the kernel's own
        ((), " attributes {known_cluster_size = array<i32: 8, 1, 1>}", (8, 1, 1), True),  # no op needs it, the kernel does
        ((CLUSTER1,), "", None, False),  # a cluster of one: no cluster launch
        ((WARP,), "", None, False),
    ],
)
def test_the_signature_says_what_cluster_the_ops_need(attrs, block, cluster, fixed):
    sig = signature(kernel(*attrs, block=block))
    assert (sig.cluster, sig.cluster_fixed) == (cluster, fixed)
    assert KernelSignature.from_json(sig.to_json()) == sig
    if attrs and attrs[0] == CLUSTER4:
        assert (sig.block_threads, sig.block_multiple) == (64, 32)


def test_two_cluster_ops_of_different_sizes_cannot_share_a_kernel():
    cluster2 = CLUSTER4.replace("(4, 2, 32)", "(2, 2, 32)").replace("(32, 2, 4)", "(32, 2, 2)")
    with pytest.raises(CompileError, match="its cluster-scope tile ops span clusters of 2 and 4 CTAs"):
        signature(kernel(CLUSTER4, cluster2))


def test_the_interpreter_runs_one_cluster_and_refuses_partial_ones():
    lowered, sigs = lower_tile_ops(kernel(CLUSTER4))
    (k,) = interpreted_kernels(lowered, sigs).values()
    a, b = np.random.default_rng().random(1024, np.float32), np.full(1024, np.nan, np.float32)
    with pytest.raises(LaunchError, match=r"runs in clusters of 4 CTA\(s\) .* got grid \(2, 1, 1\)"):
        k.launch(2, 64, a, b)
    assert np.isnan(b).all()
    k.launch(4, 64, a, b)  # thread t of each block reads A[t]: 4 copies of A[:64]
    assert np.allclose(b[:64], 4 * a[:64].astype(np.float64).sum(), rtol=1e-5)
    assert (b[:64] == b[0]).all()


# A cta-scope op whose layouts name no thread axis: each thread reduces (copies) its own
# tile, so the op needs nothing of the block (it used to be held to one warp: refused
# in a block of 128 threads by tile-verify, and by the launch).
CTA_OWN = 'kind = "sum", exec_scope = "cta", axes = array<i64: 0>'


def own_tiles(block: str = "", scope: str = "cta") -> str:
    """Thread t copies A[4t .. 4t+3] into its registers and sums them into B[t], with a
    copy and a reduce at ``scope`` and no layouts (each thread's own tile)."""
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {{
    gpu.func @own(%A: memref<4096xf32>, %B: memref<1024xf32>) kernel{block} {{
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %o = arith.muli %t, %c4 : index
      %src = memref.alloca() : memref<4xf32, {PRIV}>
      %dst = memref.alloca() : memref<1xf32, {PRIV}>
      "tile.copy"(%src, %A, %o) {{exec_scope = "{scope}"}} : (memref<4xf32, {PRIV}>, memref<4096xf32>, index) -> ()
      "tile.reduce"(%dst, %src) {{kind = "sum", exec_scope = "{scope}", axes = array<i64: 0>}} : (memref<1xf32, {PRIV}>, memref<4xf32, {PRIV}>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, {PRIV}>
      memref.store %b, %B[%t] : memref<1024xf32>
      gpu.return
    }}
  }}
}}
"""


def test_a_cta_op_with_no_thread_axis_needs_nothing_of_the_block():
    assert (signature(kernel(CTA_OWN)).block_threads, signature(kernel(CTA_OWN)).block_multiple) == (None, 1)
    sig = signature(own_tiles())
    assert (sig.block_threads, sig.block_multiple) == (None, 1)
    sig = signature(own_tiles(' attributes {known_block_size = array<i32: 128, 1, 1>}'))
    assert (sig.block_threads, sig.block_multiple) == (128, 1)


@pytest.mark.parametrize("block, threads", [(" attributes {known_block_size = array<i32: 128, 1, 1>}", 128),
                                            ("", 128), ("", 48), ("", 1)])
def test_each_thread_of_a_cta_reduces_its_own_tile(block, threads):
    lowered, sigs = lower_tile_ops(own_tiles(block))
    (k,) = interpreted_kernels(lowered, sigs).values()
    rng = np.random.default_rng()
    a, b = rng.standard_normal(4096).astype(np.float32), np.full(1024, np.nan, np.float32)
    k.launch(1, threads, a, b)
    want = a[: 4 * threads].astype(np.float64).reshape(threads, 4).sum(axis=1)
    assert np.allclose(b[:threads], want, rtol=1e-6, atol=1e-6)
    assert np.isnan(b[threads:]).all()


@pytest.mark.parametrize("op", ["tile.reduce", "tile.copy"])
def test_a_warpgroup_op_in_a_block_of_64_is_refused_at_the_op(op):
    text = own_tiles(" attributes {known_block_size = array<i32: 64, 1, 1>}", scope="warpgroup")
    with pytest.raises(CompileError) as e:
        lower_tile_ops(text)
    line = next(n for n, code in enumerate(text.split("\n"), 1) if f'"{op}"' in code)
    assert (f"<source>:{line}:7: error: '{op}' op a warpgroup-scope op runs on whole warpgroups (128 threads "
            "each), but the block has 64 threads (known_block_size = [64, 1, 1])") in str(e.value)


def test_a_warp_op_in_a_block_of_48_is_refused_at_the_op():
    text = own_tiles(" attributes {known_block_size = array<i32: 48, 1, 1>}", scope="warp")
    with pytest.raises(CompileError, match=r"'tile.reduce' op a warp-scope op runs on whole warps \(32 threads each\)"):
        lower_tile_ops(text)
