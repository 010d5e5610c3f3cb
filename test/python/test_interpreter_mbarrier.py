"""mbarriers in the CPU interpreter (interpreter/mbarrier.py), on the protocol of the
cluster_push lowering written by hand: each of 4 CTAs pushes one value into every CTA's
shared memory (nvvm.mapa + llvm.store) and arrives at that CTA's mbarrier (release at
cluster scope); each waits on its own (try_wait on the phase parity, acquire at cluster
scope) and sums the 4 values. Then each rule broken once: no init barrier, a wait at cta
scope, a relaxed arrive, a read before the wait, a count the arrivals never reach, more
arrivals than the phase expects, and a second init.
"""

import numpy as np
import pytest
import tile_mlir
from tile_mlir.interpreter import InterpreterError

N, CTAS = 64, 4
WG = "#gpu.address_space<workgroup>"
INIT = """      nvvm.mbarrier.init %mp, %count, predicate = %t0 : !llvm.ptr<3>, i32, i1
      nvvm.fence.mbarrier.init
      nvvm.cluster.arrive.relaxed
      nvvm.cluster.wait"""
PUSH = """      scf.if %pusher {
        %target = arith.index_cast %t : index to i32
        %rr = nvvm.mapa %slot, %target : !llvm.ptr<3> -> !llvm.ptr<7>
        llvm.store %v, %rr : f32, !llvm.ptr<7>
        %rm = nvvm.mapa %mp, %target : !llvm.ptr<3> -> !llvm.ptr<7>
        nvvm.mbarrier.arrive %rm {ARRIVE} : !llvm.ptr<7>
      }"""
WAIT = """      scf.while : () -> () {
        %done = nvvm.mbarrier.try_wait %mp, %c0_i32 {WAIT} : !llvm.ptr<3>, i32 -> i1
        %more = arith.xori %done, %true : i1
        scf.condition(%more)
      } do {
        scf.yield
      }"""
SUM = f"""      %r0 = memref.load %R[%c0] : memref<{CTAS}xf32, {WG}>
      %r1 = memref.load %R[%c1] : memref<{CTAS}xf32, {WG}>
      %r2 = memref.load %R[%c2] : memref<{CTAS}xf32, {WG}>
      %r3 = memref.load %R[%c3] : memref<{CTAS}xf32, {WG}>
      %s01 = arith.addf %r0, %r1 : f32
      %s012 = arith.addf %s01, %r2 : f32
      %s = arith.addf %s012, %r3 : f32
      memref.store %s, %B[%g] : memref<{N * CTAS}xf32>"""
CLUSTER = "{scope = #nvvm.mem_scope<cluster>}"


def kernel(parts, count: int = CTAS):
    """``@k(%A: memref<4xf32>, %B: memref<256xf32>)``: 4 blocks of 64 threads, one
    cluster; ``parts`` the body after the setup (%v = A[block], %slot the address of
    R[rank], %mp the mbarrier's, %t0 thread 0, %pusher threads 0-3)."""
    body = "\n".join(parts)
    text = f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {{
    memref.global "private" @R : memref<{CTAS}xf32, {WG}> {{alignment = 16 : i64}}
    memref.global "private" @M : memref<1xi64, {WG}> {{alignment = 16 : i64}}
    gpu.func @k(%A: memref<{CTAS}xf32>, %B: memref<{N * CTAS}xf32>) kernel
        attributes {{known_block_size = array<i32: {N}, 1, 1>, known_cluster_size = array<i32: {CTAS}, 1, 1>}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %cN = arith.constant {N} : index
      %c0_i32 = arith.constant 0 : i32
      %count = arith.constant {count} : i32
      %true = arith.constant true
      %R = memref.get_global @R : memref<{CTAS}xf32, {WG}>
      %M = memref.get_global @M : memref<1xi64, {WG}>
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %first = arith.muli %b, %cN : index
      %g = arith.addi %first, %t : index
      %t0 = arith.cmpi eq, %t, %c0 : index
      %pusher = arith.cmpi ult, %t, %c4 : index
      %rank32 = nvvm.read.ptx.sreg.cluster.ctarank : i32
      %rank = arith.index_cast %rank32 : i32 to index
      %v = memref.load %A[%b] : memref<{CTAS}xf32>
      %rbase = memref.extract_aligned_pointer_as_index %R : memref<{CTAS}xf32, {WG}> -> index
      %off = arith.muli %rank, %c4 : index
      %raddr = arith.addi %rbase, %off : index
      %raddr64 = arith.index_cast %raddr : index to i64
      %slot = llvm.inttoptr %raddr64 : i64 to !llvm.ptr<3>
      %mbase = memref.extract_aligned_pointer_as_index %M : memref<1xi64, {WG}> -> index
      %mbase64 = arith.index_cast %mbase : index to i64
      %mp = llvm.inttoptr %mbase64 : i64 to !llvm.ptr<3>
{body}
      gpu.return
    }}
  }}
}}
"""
    return tile_mlir.compile(text, backend="interpreter")["k"]


def launch(k, seed: int = 0):
    a = np.random.default_rng(seed).uniform(-1, 1, CTAS).astype(np.float32)
    b = np.full(N * CTAS, np.nan, np.float32)
    k.launch(CTAS, N, a, b)
    return a, b


def protocol(arrive: str = CLUSTER, wait: str = CLUSTER, init: str = INIT, read_first: bool = False):
    parts = [init, PUSH.replace("{ARRIVE}", arrive)]
    parts += [SUM, WAIT.replace("{WAIT}", wait)] if read_first else [WAIT.replace("{WAIT}", wait), SUM]
    return parts


def test_the_push_protocol_sums_every_ctas_value():
    a, b = launch(kernel(protocol()), seed=1)
    # each CTA folds R[0..3] in rank order: the same f32 sum in every thread of the cluster
    want = ((a[0] + a[1]) + a[2]) + a[3]
    assert np.array_equal(b, np.full(N * CTAS, want, np.float32))


def test_without_the_init_barrier_a_push_reaches_a_block_that_has_not_started():
    init = INIT.replace("      nvvm.cluster.arrive.relaxed\n      nvvm.cluster.wait", "")
    with pytest.raises(InterpreterError, match="which has not started"):
        launch(kernel(protocol(init=init)))


def test_a_wait_at_cta_scope_does_not_order_the_other_ctas_pushes():
    with pytest.raises(InterpreterError, match=r"a race on workgroup memory .* writes it \(llvm\.store.* reads it"
                                               r" \(memref\.load"):
        launch(kernel(protocol(wait="")))


def test_a_relaxed_arrive_does_not_release_the_push():
    with pytest.raises(InterpreterError, match="a race on workgroup memory"):
        launch(kernel(protocol(arrive="{relaxed = true, scope = #nvvm.mem_scope<cluster>}")))


def test_a_read_before_the_wait_races():
    with pytest.raises(InterpreterError, match="a race on workgroup memory"):
        launch(kernel(protocol(read_first=True)))


def test_a_phase_the_arrivals_never_complete_is_named():
    with pytest.raises(InterpreterError, match=r"can never complete the phase a thread waits for: 1 of its 5 "
                                               r"arrival\(s\) of phase 0 never come"):
        launch(kernel(protocol(), count=CTAS + 1))


def test_more_arrivals_than_the_phase_expects_is_an_error():
    # a count of 3 completes phase 0 at the third push, and the fourth starts phase 1;
    # an arrive that takes 2 off a pending count of 1 is what PTX leaves undefined
    parts = protocol()
    parts[1] = parts[1].replace("nvvm.mbarrier.arrive %rm {ARRIVE} : !llvm.ptr<7>".replace("{ARRIVE}", CLUSTER),
                                "%two = arith.constant 2 : i32\n        nvvm.mbarrier.arrive %rm, %two " + CLUSTER
                                + " : !llvm.ptr<7>")
    with pytest.raises(InterpreterError, match=r"arrives 2 time\(s\) at the mbarrier .* expects only"):
        launch(kernel(parts, count=3))


def test_two_threads_initializing_one_mbarrier_race():
    init = INIT.replace("predicate = %t0", "predicate = %pusher")
    with pytest.raises(InterpreterError, match="a race on workgroup memory"):
        launch(kernel(protocol(init=init)))
