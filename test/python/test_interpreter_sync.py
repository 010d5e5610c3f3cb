"""Several warps and blocks in the interpreter: workgroup memory, barriers (gpu.barrier,
named nvvm.barrier over some warps, nvvm.bar.warp.sync), and the errors for a barrier
that not every thread of its scope reaches and for a race on workgroup memory (and on
global memory, within ``global_races()``).
"""

import numpy as np
import pytest
from test_interpreter import kernel
from tile_mlir.interpreter import InterpreterError, global_races

SCRATCH = "workgroup(%S : memref<64xf32, #gpu.address_space<workgroup>>)"
S = "memref<64xf32, #gpu.address_space<workgroup>>"


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def exchange(barrier: str, distance: int) -> str:
    """Thread t stores A[t] to S[t], then (after ``barrier``) reads S[(t + distance) % 64]."""
    return f"""
      %t = gpu.thread_id x
      %c64 = arith.constant 64 : index
      %d = arith.constant {distance} : index
      %a = memref.load %A[%t] : memref<64xf32>
      memref.store %a, %S[%t] : {S}
      {barrier}
      %u = arith.addi %t, %d : index
      %o = arith.remui %u, %c64 : index
      %x = memref.load %S[%o] : {S}
      memref.store %x, %B[%t] : memref<64xf32>"""


ARGS = "%A: memref<64xf32>, %B: memref<64xf32>"


@pytest.mark.parametrize("distance", [1, 32])
def test_a_planted_race_names_both_threads_and_ops(rng, distance):
    """Without the barrier, thread t reads what thread t + d wrote: in the same warp
    (d = 1; lanes are not in lockstep on the GPU either) or in another (d = 32)."""
    a, b = rng.uniform(1, 2, 64).astype(np.float32), np.zeros(64, np.float32)
    kernel(ARGS, exchange("gpu.barrier", distance), SCRATCH).launch(1, 64, a, b)
    np.testing.assert_array_equal(b, np.roll(a, -distance))
    with pytest.raises(InterpreterError) as e:
        kernel(ARGS, exchange("", distance), SCRATCH).launch(1, 64, a, b)
    assert str(e.value) == (
        f"memref.load at -:14:12: a race on workgroup memory {S} at index [{distance}]: "
        f"thread ({distance}, 0, 0) of block (0, 0, 0) writes it (memref.store at -:10:7), and thread (0, 0, 0) "
        "of block (0, 0, 0) reads it (memref.load at -:14:12), with no barrier between them"
    )


def test_write_after_read_and_write_after_write_races():
    read_then_write = f"""
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c5 = arith.constant 5 : index
      %one = arith.constant 1.0 : f32
      %x = memref.load %S[%c0] : {S}
      %is5 = arith.cmpi eq, %t, %c5 : index
      scf.if %is5 {{
        memref.store %one, %S[%c0] : {S}
      }}"""
    with pytest.raises(InterpreterError, match=r"thread \(0, 0, 0\) of block \(0, 0, 0\) reads it \(memref\.load at -:10:12\), "
                       r"and thread \(5, 0, 0\) of block \(0, 0, 0\) writes it \(memref\.store at -:13:9\)"):  # fmt: skip
        kernel(ARGS, read_then_write, SCRATCH).launch(1, 64, np.zeros(64, np.float32), np.zeros(64, np.float32))
    everyone_writes = f"""
      %c3 = arith.constant 3 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %S[%c3] : {S}"""
    with pytest.raises(InterpreterError, match=r"index \[3\]: thread \(0, 0, 0\) .* writes it .*thread \(1, 0, 0\) .* writes it"):
        kernel(ARGS, everyone_writes, SCRATCH).launch(1, 64, np.zeros(64, np.float32), np.zeros(64, np.float32))
    kernel(ARGS, everyone_writes, SCRATCH).launch(1, 1, np.zeros(64, np.float32), np.zeros(64, np.float32))


def test_one_thread_may_write_and_read_its_own_elements_without_barriers():
    body = f"""
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %S[%t] : {S}
      %x = memref.load %S[%t] : {S}
      %y = arith.addf %x, %one : f32
      memref.store %y, %S[%t] : {S}
      %z = memref.load %S[%t] : {S}
      memref.store %z, %B[%t] : memref<64xf32>"""
    b = np.zeros(64, np.float32)
    kernel(ARGS, body, SCRATCH).launch(1, 64, np.zeros(64, np.float32), b)
    assert (b == 2).all()


def butterfly(v: str, out: str) -> str:
    """A warp's butterfly sum of %{v} into %{out}."""
    lines, cur = [], v
    for k, off in enumerate((16, 8, 4, 2, 1)):
        lines.append(f"""
      %o{out}{k} = arith.constant {off} : i32
      %p{out}{k}, %ok{out}{k} = gpu.shuffle xor %{cur}, %o{out}{k}, %w : f32
      %{out}{k} = arith.addf %{cur}, %p{out}{k} : f32""")
        cur = f"{out}{k}"
    lines.append(f"\n      %{out} = arith.addf %{cur}, %zero : f32")
    return "".join(lines)


def reduction(rounds: int, last_barrier: str) -> str:
    """Each block sums its 128 inputs (4 warps): a butterfly per warp, lane 0 of each warp
    writes its partial to S[warp], a barrier, warp 0 sums the 4 partials and thread 0
    writes the total to S[0], a barrier, every thread reads it and adds it to its output.
    ``rounds`` times, with ``last_barrier`` at the end of a round."""
    return f"""
      %t = gpu.thread_id x
      %bid = gpu.block_id x
      %lane = gpu.lane_id
      %warp = gpu.subgroup_id : index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %cr = arith.constant {rounds} : index
      %c128 = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %w = arith.constant 32 : i32
      %base = arith.muli %bid, %c128 : index
      %i = arith.addi %base, %t : index
      %a = memref.load %A[%i] : memref<384xf32>
      %first = arith.cmpi eq, %lane, %c0 : index
      %inwarp0 = arith.cmpi eq, %warp, %c0 : index
      %fewer = arith.cmpi ult, %lane, %c4 : index
      %out = scf.for %r = %c0 to %cr step %c1 iter_args(%acc = %zero) -> (f32) {{
        {butterfly("a", "ws")}
        scf.if %first {{
          memref.store %ws, %S[%warp] : memref<4xf32, #gpu.address_space<workgroup>>
        }}
        gpu.barrier
        scf.if %inwarp0 {{
          %p = scf.if %fewer -> (f32) {{
            %q = memref.load %S[%lane] : memref<4xf32, #gpu.address_space<workgroup>>
            scf.yield %q : f32
          }} else {{
            scf.yield %zero : f32
          }}
          {butterfly("p", "tot")}
          %is0 = arith.cmpi eq, %t, %c0 : index
          scf.if %is0 {{
            memref.store %tot, %S[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
          }}
        }}
        gpu.barrier
        %total = memref.load %S[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
        %next = arith.addf %acc, %total : f32
        {last_barrier}
        scf.yield %next : f32
      }}
      memref.store %out, %B[%i] : memref<384xf32>"""


REDUCTION_ARGS = "%A: memref<384xf32>, %B: memref<384xf32>"
REDUCTION_SCRATCH = "workgroup(%S : memref<4xf32, #gpu.address_space<workgroup>>)"


def test_a_reduction_through_workgroup_memory_over_warps_and_blocks(rng):
    a = rng.integers(-50, 50, 384).astype(np.float32)  # integers: every order sums exactly
    b = np.zeros(384, np.float32)
    kernel(REDUCTION_ARGS, reduction(3, "gpu.barrier"), REDUCTION_SCRATCH).launch(3, 128, a, b)
    totals = a.reshape(3, 128).sum(axis=1)
    np.testing.assert_array_equal(b, np.repeat(3 * totals, 128))


def test_a_reduction_in_a_loop_without_its_last_barrier_races(rng):
    """Round 2's partials overwrite S[warp] while other threads may still read round 1's
    total from S[0]: thread 0 reads S[0] in round 1, lane 0 of warp 0 (thread 0 again)
    writes it... and threads 1.. read it."""
    a = rng.integers(-50, 50, 384).astype(np.float32)
    k = kernel(REDUCTION_ARGS, reduction(2, ""), REDUCTION_SCRATCH)
    with pytest.raises(InterpreterError, match=r"race on workgroup memory memref<4xf32, #gpu.address_space<workgroup>> "
                       r"at index \[0\]: thread \(1, 0, 0\) of block \(0, 0, 0\) reads it .*thread \(0, 0, 0\) of block "
                       r"\(0, 0, 0\) writes it"):  # fmt: skip
        k.launch(3, 128, a, np.zeros(384, np.float32))
    kernel(REDUCTION_ARGS, reduction(1, ""), REDUCTION_SCRATCH).launch(3, 128, a, np.zeros(384, np.float32))


def test_a_barrier_in_divergent_code_names_a_thread_that_misses_it():
    body = """
      %t = gpu.thread_id x
      %c40 = arith.constant 40 : index
      %low = arith.cmpi ult, %t, %c40 : index
      scf.if %low {
        gpu.barrier
      }"""
    with pytest.raises(InterpreterError, match=r"gpu\.barrier at -:10:9: reached by 40 of 64 threads of block \(0, 0, 0\): "
                       r"thread \(40, 0, 0\) of block \(0, 0, 0\) does not reach it"):  # fmt: skip
        kernel(ARGS, body).launch(1, 64, np.zeros(64, np.float32), np.zeros(64, np.float32))


NAMED = f"""
      %t = gpu.thread_id x
      %warp = gpu.subgroup_id : index
      %c2 = arith.constant 2 : index
      %c40 = arith.constant 40 : index
      %c1 = arith.constant 1 : i32
      %count = arith.constant COUNT : i32
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %a = memref.load %A[%t] : memref<128xf32>
      %pair = arith.cmpi ult, %warp, %c2 : index
      scf.if %pair {{
        memref.store %a, %S[%t] : {S}
        nvvm.barrier id = %c1 number_of_threads = %count
        %u = arith.addi %t, %c32 : index
        %o = arith.remui %u, %c64 : index
        %x = memref.load %S[%o] : {S}
        memref.store %x, %B[%t] : memref<64xf32>
      }}
      READER"""
NAMED_ARGS = "%A: memref<128xf32>, %B: memref<64xf32>, %C: memref<128xf32>"


def named(count: int, reader: str = "", lanes: str = "") -> str:
    body = NAMED.replace("COUNT", str(count)).replace("READER", reader)
    if lanes:  # only some lanes of warp 1 take the branch
        body = body.replace("%pair = arith.cmpi ult, %warp, %c2 : index", f"%pair = arith.cmpi ult, %t, {lanes} : index")
    return body


READ_BY_WARP_3 = f"""%c3 = arith.constant 3 : index
      %w3 = arith.cmpi eq, %warp, %c3 : index
      scf.if %w3 {{
        %zero = arith.constant 0 : index
        %y = memref.load %S[%zero] : {S}
        memref.store %y, %C[%t] : memref<128xf32>
      }}"""


def test_a_named_barrier_over_two_of_four_warps(rng):
    a, b = rng.uniform(1, 2, 128).astype(np.float32), np.zeros(64, np.float32)
    kernel(NAMED_ARGS, named(64), SCRATCH).launch(1, 128, a, b, np.zeros(128, np.float32))
    np.testing.assert_array_equal(b, np.roll(a[:64], -32))
    # warp 3 did not take part: what warp 0 wrote is not ordered before warp 3's read
    with pytest.raises(InterpreterError, match=r"memref\.load at .*index \[0\]: thread \(0, 0, 0\) .* writes it .*"
                       r"thread \(96, 0, 0\) .* reads it"):  # fmt: skip
        kernel(NAMED_ARGS, named(64, READ_BY_WARP_3), SCRATCH).launch(1, 128, a, b, np.zeros(128, np.float32))


def test_a_named_barrier_whose_count_does_not_match_the_arriving_warps():
    args = (np.zeros(128, np.float32), np.zeros(64, np.float32), np.zeros(128, np.float32))
    with pytest.raises(InterpreterError, match=r"nvvm\.barrier at .*: barrier 1 waits for 96 threads, and 64 arrive "
                       r"\(warps 0, 1 of block \(0, 0, 0\)\): thread \(0, 0, 0\) of block \(0, 0, 0\) would wait forever"):  # fmt: skip
        kernel(NAMED_ARGS, named(96), SCRATCH).launch(1, 128, *args)
    with pytest.raises(InterpreterError, match=r"barrier 1 waits for 32 threads, and 64 arrive .*pass a barrier meant for fewer"):
        kernel(NAMED_ARGS, named(32), SCRATCH).launch(1, 128, *args)
    with pytest.raises(InterpreterError, match=r"warp 1 reaches it with 8 of 32 lanes: thread \(40, 0, 0\) of block \(0, 0, 0\) does not"):
        kernel(NAMED_ARGS, named(64, lanes="%c40"), SCRATCH).launch(1, 128, *args)


def test_warp_sync_orders_a_warps_lanes():
    body = f"""
      %t = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %a = memref.load %A[%t] : memref<64xf32>
      memref.store %a, %S[%t] : {S}
      SYNC
      %u = arith.addi %t, %c1 : index
      %lane = arith.remui %u, %c32 : index
      %row = arith.divui %t, %c32 : index
      %base = arith.muli %row, %c32 : index
      %o = arith.addi %base, %lane : index
      %x = memref.load %S[%o] : {S}
      memref.store %x, %B[%t] : memref<64xf32>"""
    a, b = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    sync = "%m = arith.constant -1 : i32\n      nvvm.bar.warp.sync %m : i32"
    kernel(ARGS, body.replace("SYNC", sync), SCRATCH).launch(1, 64, a, b)
    np.testing.assert_array_equal(b, a.reshape(2, 32)[:, (np.arange(32) + 1) % 32].reshape(-1))
    with pytest.raises(InterpreterError, match="race on workgroup memory"):
        kernel(ARGS, body.replace("SYNC", ""), SCRATCH).launch(1, 64, a, b)


def test_vector_accesses_to_workgroup_memory_are_checked():
    body = f"""
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c60 = arith.constant 60 : index
      %v = arith.constant dense<1.0> : vector<4xf32>
      %at = arith.muli %t, %c4 : index
      vector.store %v, %S[%at] : {S}, vector<4xf32>
      BARRIER
      %back = arith.subi %c60, %at : index
      %r = vector.load %S[%back] : {S}, vector<4xf32>
      %s = vector.reduction <add>, %r : vector<4xf32> into f32
      memref.store %s, %B[%t] : memref<64xf32>"""
    b = np.zeros(64, np.float32)
    kernel(ARGS, body.replace("BARRIER", "gpu.barrier"), SCRATCH).launch(1, 16, np.zeros(64, np.float32), b)
    assert (b[:16] == 4).all()
    with pytest.raises(InterpreterError, match=r"vector\.load at .*index \[60\]: thread \(15, 0, 0\) .* writes it "
                       r"\(vector\.store at .*\), and thread \(0, 0, 0\) .* reads it"):  # fmt: skip
        kernel(ARGS, body.replace("BARRIER", ""), SCRATCH).launch(1, 16, np.zeros(64, np.float32), b)


def test_each_block_has_its_own_workgroup_memory(rng):
    """Block b's threads write S and read it back after a barrier: blocks never see each
    other's values, and fresh workgroup memory holds NaN (poison) in each block."""
    body = f"""
      %t = gpu.thread_id x
      %bid = gpu.block_id x
      %c64 = arith.constant 64 : index
      %base = arith.muli %bid, %c64 : index
      %i = arith.addi %base, %t : index
      %fresh = memref.load %S[%t] : {S}
      gpu.barrier
      %a = memref.load %A[%i] : memref<192xf32>
      memref.store %a, %S[%t] : {S}
      gpu.barrier
      %c63 = arith.constant 63 : index
      %r = arith.subi %c63, %t : index
      %x = memref.load %S[%r] : {S}
      %y = arith.addf %x, %fresh : f32
      %isnan = arith.cmpf uno, %fresh, %fresh : f32
      %out = arith.select %isnan, %x, %y : f32
      memref.store %out, %B[%i] : memref<192xf32>"""
    a, b = rng.uniform(1, 2, 192).astype(np.float32), np.zeros(192, np.float32)
    kernel("%A: memref<192xf32>, %B: memref<192xf32>", body, SCRATCH).launch(3, 64, a, b)
    np.testing.assert_array_equal(b, a.reshape(3, 64)[:, ::-1].reshape(-1))


def per_warpgroup(read_other: bool) -> str:
    """256 threads: thread t writes S[t], meets its warpgroup g = t / 128 on barrier 8 + g
    (128 threads), then reads S[t ^ 64], written in its own warpgroup, or (``read_other``)
    S[t ^ 128], written in the other one."""
    flip = 128 if read_other else 64
    return f"""
      %t = gpu.thread_id x
      %c7 = arith.constant 7 : index
      %flip = arith.constant {flip} : index
      %g = arith.shrui %t, %c7 : index
      %a = memref.load %A[%t] : memref<256xf32>
      memref.store %a, %S[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      %g32 = arith.index_cast %g : index to i32
      %c8_i32 = arith.constant 8 : i32
      %id = arith.addi %g32, %c8_i32 : i32
      %n = arith.constant 128 : i32
      nvvm.barrier id = %id number_of_threads = %n
      %j = arith.xori %t, %flip : index
      %x = memref.load %S[%j] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %x, %B[%t] : memref<256xf32>"""


def test_each_warpgroup_meets_on_its_own_named_barrier(rng):
    """Warps that reach one nvvm.barrier op with different ids are different barriers:
    each warpgroup's barrier orders its own threads, and reading what the other
    warpgroup wrote races."""
    args = "%A: memref<256xf32>, %B: memref<256xf32>"
    scratch = "workgroup(%S : memref<256xf32, #gpu.address_space<workgroup>>)"
    a, b = rng.uniform(1, 2, 256).astype(np.float32), np.zeros(256, np.float32)
    kernel(args, per_warpgroup(False), scratch).launch(1, 256, a, b)
    np.testing.assert_array_equal(b, a[np.arange(256) ^ 64])
    with pytest.raises(InterpreterError, match=r"a race on workgroup memory .* writes it .* reads it"):
        kernel(args, per_warpgroup(True), scratch).launch(1, 256, a, b)


def shifted(barrier: str, distance: int) -> str:
    """Thread t reads A[t xor distance], then (after ``barrier``) writes it plus 1 to
    B[t]: with B = A (in place), B[t] is the element thread t xor distance read."""
    return f"""
      %t = gpu.thread_id x
      %d = arith.constant {distance} : index
      %one = arith.constant 1.0 : f32
      %o = arith.xori %t, %d : index
      %x = memref.load %A[%o] : memref<64xf32>
      {barrier}
      %y = arith.addf %x, %one : f32
      memref.store %y, %B[%t] : memref<64xf32>"""


WARP_SYNC = "%m = arith.constant -1 : i32\n      nvvm.bar.warp.sync %m : i32"


@pytest.mark.parametrize("distance, barrier, race", [(1, "", True), (1, WARP_SYNC, False), (32, WARP_SYNC, True),
                                                     (32, "gpu.barrier", False)])
def test_races_on_global_memory_within_global_races(rng, distance, barrier, race):
    """Global memory is checked as workgroup memory within ``global_races()``: the array
    arguments, one shadow for two arguments that are the same memory (an output over its
    input). A write over what another lane of the warp read needs nvvm.bar.warp.sync
    between them; over what another warp read, a barrier."""
    a = rng.uniform(1, 2, 64).astype(np.float32)
    k = kernel(ARGS, shifted(barrier, distance))
    b = np.zeros(64, np.float32)
    with global_races():
        k.launch(1, 64, a, b)  # two arrays: nothing to race
    np.testing.assert_array_equal(b, a[np.arange(64) ^ distance] + 1)
    inplace = a.copy()
    k.launch(1, 64, inplace, inplace)  # not checked outside global_races()
    np.testing.assert_array_equal(inplace, a[np.arange(64) ^ distance] + 1)
    inplace = a.copy()
    if not race:
        with global_races():
            k.launch(1, 64, inplace, inplace)
        np.testing.assert_array_equal(inplace, a[np.arange(64) ^ distance] + 1)
        return
    with global_races(), pytest.raises(InterpreterError) as e:
        k.launch(1, 64, inplace, inplace)
    store = f"memref.store at -:{13 + barrier.count(chr(10))}:7"
    assert str(e.value) == (
        f"{store}: a race on global memory argument 0 (float32[64]) = argument 1 (float32[64]) at index [0]: "
        f"thread ({distance}, 0, 0) of block (0, 0, 0) reads it (memref.load at -:10:12), and thread (0, 0, 0) "
        f"of block (0, 0, 0) writes it ({store}), with no barrier between them"
    )
