"""Thread-block clusters in the CPU interpreter: the blocks of a cluster run together,
reach each other's shared memory (nvvm.mapa, llvm.load/store through !llvm.ptr<7>),
meet at the cluster barrier (nvvm.cluster.arrive/wait), and the race check and the
barrier's errors cover them: a planted race across CTAs, a CTA that never arrives, a
read of a CTA that has exited, and the misuses of the barrier and of mapa.
"""

import re

import numpy as np
import pytest
import tile_mlir
from tile_mlir.interpreter import InterpreterError

N = 64  # threads per block
S = f"memref<{N}xf32, #gpu.address_space<workgroup>>"


def kernel(body: str, cluster: int = 4, grid: int | None = None):
    """``@k(%A, %B: memref<grid*64 x f32>)`` in blocks of 64 threads and clusters of
    ``cluster`` (known_cluster_size); ``%S`` is a workgroup array of 64 f32, ``%g`` the
    thread's global index, ``%rank`` its block's rank in its cluster (index)."""
    n = N * (grid or cluster)
    text = f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {{
    memref.global "private" @S : {S}
    gpu.func @k(%A: memref<{n}xf32>, %B: memref<{n}xf32>) kernel
        attributes {{known_block_size = array<i32: {N}, 1, 1>, known_cluster_size = array<i32: {cluster}, 1, 1>}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %cN = arith.constant {N} : index
      %S = memref.get_global @S : {S}
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %first = arith.muli %b, %cN : index
      %g = arith.addi %first, %t : index
      %rank32 = nvvm.read.ptx.sreg.cluster.ctarank : i32
      %rank = arith.index_cast %rank32 : i32 to index
      %base = memref.extract_aligned_pointer_as_index %S : {S} -> index
      %off = arith.muli %t, %c4 : index
      %addr = arith.addi %base, %off : index
      %addr64 = arith.index_cast %addr : index to i64
      %mine = llvm.inttoptr %addr64 : i64 to !llvm.ptr<3>
{body}
      gpu.return
    }}
  }}
}}
"""
    return tile_mlir.compile(text, backend="interpreter")["k"]


def remote(rank: str, name: str = "x") -> str:
    """%<name> = S[t] of the block of rank ``rank`` (an i32 SSA name), through mapa."""
    return f"""      %p_{name} = nvvm.mapa %mine, {rank} : !llvm.ptr<3> -> !llvm.ptr<7>
      %{name} = llvm.load %p_{name} : !llvm.ptr<7> -> f32"""


WRITE = f"""      %a = memref.load %A[%g] : memref<{{n}}xf32>
      memref.store %a, %S[%t] : {S}"""
BARRIER = "      nvvm.cluster.arrive\n      nvvm.cluster.wait"
NEXT = """      %cC = arith.constant {c} : i32
      %c1_i32 = arith.constant 1 : i32
      %r1 = arith.addi %rank32, %c1_i32 : i32
      %next = arith.remui %r1, %cC : i32"""
STORE = "      memref.store %x, %B[%g] : memref<{n}xf32>"


def exchange(c: int, first: bool = True, second: bool = True, grid: int | None = None) -> str:
    """Each block writes its part of A to S, and reads the next rank's S into B."""
    n = N * (grid or c)
    parts = [WRITE.format(n=n), BARRIER if first else "", NEXT.format(c=c), remote("%next"),
             BARRIER if second else "", STORE.format(n=n)]
    return "\n".join(p for p in parts if p)


@pytest.mark.parametrize("c", [2, 4, 16])
def test_each_block_reads_the_next_blocks_shared_memory(c):
    a = np.random.default_rng(c).uniform(-1, 1, N * c).astype(np.float32)
    b = np.full_like(a, np.nan)
    kernel(exchange(c), c).launch(c, N, a, b)
    np.testing.assert_array_equal(b, np.roll(a.reshape(c, N), -1, axis=0).reshape(-1))


def test_clusters_of_a_grid_are_separate():
    """A grid of 3 clusters of 2: each block reads the other block of its own cluster."""
    a = np.random.default_rng(0).uniform(-1, 1, N * 6).astype(np.float32)
    b = np.full_like(a, np.nan)
    kernel(exchange(2, grid=6), 2, grid=6).launch(6, N, a, b)
    np.testing.assert_array_equal(b, a.reshape(3, 2, N)[:, ::-1].reshape(-1))


def test_where_a_block_is_in_its_cluster():
    body = """      %n32 = nvvm.read.ptx.sreg.cluster.nctarank : i32
      %in32 = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
      %id32 = nvvm.read.ptx.sreg.clusterid.x : i32
      %nid32 = nvvm.read.ptx.sreg.nclusterid.x : i32
      %bin = gpu.cluster_block_id x
      %cid = gpu.cluster_id x
      %dim = gpu.cluster_dim_blocks x
      %ncl = gpu.cluster_dim x
      %v0 = arith.sitofp %rank32 : i32 to f32
      %v1 = arith.sitofp %n32 : i32 to f32
      %v2 = arith.sitofp %in32 : i32 to f32
      %v3 = arith.sitofp %id32 : i32 to f32
      %v4 = arith.sitofp %nid32 : i32 to f32
      %w = arith.addi %bin, %cid : index
      %w2 = arith.addi %w, %dim : index
      %w3 = arith.addi %w2, %ncl : index
      %wi = arith.index_cast %w3 : index to i32
      %v5 = arith.sitofp %wi : i32 to f32
      %c10 = arith.constant 10.0 : f32
      %s1 = arith.mulf %v1, %c10 : f32
      %s2 = arith.addf %v0, %s1 : f32
      %s3 = arith.mulf %v3, %c10 : f32
      %s4 = arith.mulf %s3, %c10 : f32
      %s5 = arith.addf %s2, %s4 : f32
      %e0 = arith.subf %v0, %v2 : f32
      %e1 = arith.subf %v4, %c10 : f32
      %s6 = arith.addf %s5, %e0 : f32
      memref.store %s6, %A[%g] : memref<384xf32>
      memref.store %v5, %B[%g] : memref<384xf32>"""
    a, b = np.zeros(N * 6, np.float32), np.zeros(N * 6, np.float32)
    kernel(body, 2, grid=6).launch(6, N, a, b)
    blocks = np.arange(6)
    rank, cluster = blocks % 2, blocks // 2
    np.testing.assert_array_equal(a.reshape(6, N)[:, 0], rank + 10 * 2 + 100 * cluster)  # ctaid.x == ctarank
    np.testing.assert_array_equal(b.reshape(6, N)[:, 0], rank + cluster + 2 + 3)


def test_a_planted_race_across_ctas():
    """Each block rewrites its own S right after the barrier, while the other block may
    still read it: block 1 runs first after the barrier (it completed it), reads block
    0's S, and waits; block 0 then rewrites its S, which block 1 has read with no
    barrier between."""
    c, n = 2, 2 * N
    reuse = f"""      %two = arith.constant 2.0 : f32
      memref.store %two, %S[%t] : {S}"""
    body = "\n".join([WRITE.format(n=n), BARRIER, NEXT.format(c=c), reuse, remote("%next"), BARRIER, STORE.format(n=n)])
    a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    with pytest.raises(InterpreterError) as e:
        kernel(body, c).launch(c, N, a, b)
    message = re.sub(r"<source>:\d+:\d+", "L", str(e.value))
    assert message == (f"memref.store at L: a race on workgroup memory {S} at index [0]: thread (0, 0, 0) of block "
                       "(1, 0, 0) reads it (llvm.load at L), and thread (0, 0, 0) of block (0, 0, 0) writes it "
                       "(memref.store at L), with no barrier between them")


def test_without_the_first_barrier_a_block_reads_one_that_has_not_started():
    with pytest.raises(InterpreterError, match=r"llvm\.load at .*: thread \(0, 0, 0\) of block \(0, 0, 0\) reads 0x2000100000000, "
                       r"in the shared memory of rank 1 of the cluster, which has not started \(a cluster barrier must come first\)"):
        kernel(exchange(4, first=False), 4).launch(4, N, np.ones(4 * N, np.float32), np.zeros(4 * N, np.float32))


def test_without_the_second_barrier_a_block_reads_one_that_has_exited():
    """Block 3 completes the barrier, reads block 0's S and exits; blocks 0 and 1 go on
    and exit; block 2 then reads block 3's S."""
    with pytest.raises(InterpreterError, match=r"llvm\.load at .*: thread \(0, 0, 0\) of block \(2, 0, 0\) reads .*, in the "
                       r"shared memory of rank 3 of the cluster, which has exited \(a cluster barrier must keep it"):
        kernel(exchange(4, second=False), 4).launch(4, N, np.ones(4 * N, np.float32), np.zeros(4 * N, np.float32))


def test_a_cta_that_never_arrives_is_named():
    body = f"""      %c2 = arith.constant 2 : index
      %skip = arith.cmpi eq, %rank, %c2 : index
      scf.if %skip {{
      }} else {{
{BARRIER}
      }}"""
    with pytest.raises(InterpreterError) as e:
        kernel(body, 4).launch(4, N, np.zeros(4 * N, np.float32), np.zeros(4 * N, np.float32))
    assert re.sub(r"<source>:\d+:\d+", "L", str(e.value)) == (
        "block (3, 0, 0) (rank 3 of its cluster) waits (nvvm.cluster.wait at L), and the cluster barrier can never "
        "complete: thread (0, 0, 0) of block (2, 0, 0) never arrives (its block has exited); waiting: rank 0 at "
        "nvvm.cluster.wait at L, rank 1 at nvvm.cluster.wait at L, rank 3 at nvvm.cluster.wait at L")


def test_a_block_alone_waits_forever_for_its_missing_threads():
    body = """      %c5 = arith.constant 5 : index
      %late = arith.cmpi uge, %t, %c5 : index
      scf.if %late {
        nvvm.cluster.arrive
      }
      nvvm.cluster.wait"""
    with pytest.raises(InterpreterError, match=r"nvvm\.cluster\.wait at .*: thread \(0, 0, 0\) of block \(0, 0, 0\) waits at "
                       "the cluster barrier without arriving first"):
        kernel(body, 1).launch(1, N, np.zeros(N, np.float32), np.zeros(N, np.float32))


def test_arriving_twice_is_an_error():
    with pytest.raises(InterpreterError, match=r"thread \(0, 0, 0\) of block \(0, 0, 0\) arrives at the cluster barrier "
                       "again before it waits"):
        kernel("      nvvm.cluster.arrive\n      nvvm.cluster.arrive", 2).launch(2, N, np.zeros(2 * N, np.float32),
                                                                            np.zeros(2 * N, np.float32))


def test_mapa_to_a_rank_outside_the_cluster():
    body = f"""{BARRIER}
      %c5_i32 = arith.constant 5 : i32
{remote("%c5_i32")}"""
    with pytest.raises(InterpreterError, match=r"nvvm\.mapa at .*: thread \(0, 0, 0\) of block \(1, 0, 0\) maps 0x100000000 to "
                       r"rank 5: a rank outside its cluster of 2 block\(s\)"):
        kernel(body, 2).launch(2, N, np.zeros(2 * N, np.float32), np.zeros(2 * N, np.float32))


def test_a_cluster_pointer_without_mapa():
    body = """      %p = llvm.inttoptr %addr64 : i64 to !llvm.ptr<7>
      %x = llvm.load %p : !llvm.ptr<7> -> f32"""
    with pytest.raises(InterpreterError, match="a shared::cta address used as a shared::cluster one"):
        kernel(body, 2).launch(2, N, np.zeros(2 * N, np.float32), np.zeros(2 * N, np.float32))


def test_a_store_to_another_blocks_shared_memory():
    """Each block stores into the next one's S (llvm.store through !llvm.ptr<7>); after
    the barrier, each reads its own S."""
    c, n = 4, 4 * N
    body = f"""{NEXT.format(c=c)}
      %p = nvvm.mapa %mine, %next : !llvm.ptr<3> -> !llvm.ptr<7>
      %a = memref.load %A[%g] : memref<{n}xf32>
{BARRIER}
      llvm.store %a, %p : f32, !llvm.ptr<7>
{BARRIER}
      %x = memref.load %S[%t] : {S}
{BARRIER}
{STORE.format(n=n)}"""
    a = np.random.default_rng(1).uniform(-1, 1, n).astype(np.float32)
    b = np.full_like(a, np.nan)
    kernel(body, c).launch(c, N, a, b)
    np.testing.assert_array_equal(b, np.roll(a.reshape(c, N), 1, axis=0).reshape(-1))
