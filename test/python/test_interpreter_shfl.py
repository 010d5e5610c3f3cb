"""``nvvm.shfl.sync`` in the interpreter: member masks that name part of a warp.

Each kernel is checked against a numpy transcription of PTX's ``shfl.sync`` pseudo-code
(``ptx_shfl``), and each misuse PTX leaves undefined (a lane outside its own mask, a
named lane that does not take part, two masks that disagree, a read from a lane the
mask does not name) must be an error that names a thread.
"""

import numpy as np
import pytest
from test_interpreter import kernel, nonzero
from tile_mlir.interpreter import InterpreterError


@pytest.fixture
def rng():
    return np.random.default_rng(91)


def ptx_shfl(values, mode: str, b: int, c: int, lanes):
    """PTX ISA, shfl.sync: the value each lane of ``lanes`` gets (``values`` by lane)."""
    out = {}
    for lane in lanes:
        segmask, clamp = (c >> 8) & 31, c & 31
        max_lane = (lane & segmask) | (clamp & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j, p = lane - b, lane - b >= max_lane
        elif mode == "down":
            j, p = lane + b, lane + b <= max_lane
        elif mode == "bfly":
            j, p = lane ^ b, (lane ^ b) <= max_lane
        else:
            j = min_lane | (b & ~segmask)
            p = j <= max_lane
        out[lane] = values[j if p else lane]
    return out


def group_kernel(mode: str, b: int, c: int, group: int, run_groups: str = "all"):
    """Lane t: x = A[t]; its group of ``group`` lanes (a member mask of those lanes)
    shuffles x; B[t] = the result. ``run_groups="even"``: odd groups skip the shuffle."""
    skip = "" if run_groups == "all" else """
      %gi = arith.divui %t, %cg : index
      %odd = arith.remui %gi, %c2 : index
      %run = arith.cmpi eq, %odd, %c0 : index"""
    shuffle = f"""
        %s = nvvm.shfl.sync {mode} %mask, %x, %b, %c : f32 -> f32
        memref.store %s, %B[%t] : memref<64xf32>"""
    body = f"""
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c31 = arith.constant 31 : index
      %cg = arith.constant {group} : index
      %lanes = arith.constant {(1 << group) - 1 if group < 32 else -1} : i32
      %b = arith.constant {b} : i32
      %c = arith.constant {c} : i32
      %x = memref.load %A[%t] : memref<64xf32>
      %lane = arith.andi %t, %c31 : index
      %off = arith.remui %lane, %cg : index
      %first = arith.subi %lane, %off : index
      %first32 = arith.index_cast %first : index to i32
      %mask = arith.shli %lanes, %first32 : i32{skip}"""
    if run_groups == "all":
        return kernel("%A: memref<64xf32>, %B: memref<64xf32>", body + shuffle)
    return kernel("%A: memref<64xf32>, %B: memref<64xf32>", body + "\n      scf.if %run {" + shuffle + "\n      }")


@pytest.mark.parametrize(
    "mode, b, c, group",
    [("bfly", 4, 0x1F, 8), ("bfly", 1, 0x1F, 2), ("bfly", 16, 0x1F, 32), ("down", 1, 0x1F, 32),
     ("up", 2, 0, 32), ("idx", 3, 0x1C1F, 4), ("down", 2, 0x181F, 8)],
)  # fmt: skip
def test_groups_shuffle_under_their_own_masks(rng, mode, b, c, group):
    """Every group of ``group`` lanes shuffles with its own mask, as PTX says. (idx and
    down with a segment mask of c's bits 8-12 stay inside their segment.)"""
    a, out = nonzero(rng, 64), np.zeros(64, np.float32)
    group_kernel(mode, b, c, group).launch(1, 64, a, out)
    for warp in range(2):
        want = ptx_shfl(a[32 * warp : 32 * warp + 32], mode, b, c, range(32))
        np.testing.assert_array_equal(out[32 * warp : 32 * warp + 32], [want[lane] for lane in range(32)])


def test_groups_of_one_warp_may_diverge():
    """Even groups shuffle while odd groups of the same warp skip it: their masks name
    only their own lanes, so neither waits for the other."""
    a, out = np.arange(64, dtype=np.float32) + 1, np.zeros(64, np.float32)
    group_kernel("bfly", 2, 0x1F, 4, run_groups="even").launch(1, 64, a, out)
    lanes = np.arange(64)
    runs = (lanes // 4) % 2 == 0
    np.testing.assert_array_equal(out[runs], a[lanes[runs] ^ 2])
    assert (out[~runs] == 0).all()


def test_a_mask_that_names_a_diverged_lane_is_an_error():
    """Lanes 0-3 shuffle with a mask of lanes 0-7: lane 0 names lane 4, which does not
    take part: on the GPU lane 0 would wait for it, or read garbage."""
    bad = kernel(
        "%A: memref<64xf32>, %B: memref<64xf32>",
        """
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %mask = arith.constant 255 : i32
      %b = arith.constant 1 : i32
      %c = arith.constant 31 : i32
      %x = memref.load %A[%t] : memref<64xf32>
      %low = arith.cmpi ult, %t, %c4 : index
      scf.if %low {
        %s = nvvm.shfl.sync bfly %mask, %x, %b, %c : f32 -> f32
        memref.store %s, %B[%t] : memref<64xf32>
      }""",
    )
    with pytest.raises(InterpreterError, match=r"nvvm\.shfl\.sync at .*: the member mask 0x000000ff of thread \(0, 0, 0\) "
                       r"of block \(0, 0, 0\) names lane 4, and thread \(4, 0, 0\) of block \(0, 0, 0\) does not execute it"):  # fmt: skip
        bad.launch(1, 64, np.ones(64, np.float32), np.zeros(64, np.float32))


def one_shuffle(mask: str, b: int = 1) -> str:
    """Every thread shuffles bfly ``b`` with the member mask ``mask`` (an i32 value)."""
    return f"""
      %t = gpu.thread_id x
      %x = memref.load %A[%t] : memref<64xf32>
      %b = arith.constant {b} : i32
      %c = arith.constant 31 : i32
      %t32 = arith.index_cast %t : index to i32
      %one = arith.constant 1 : i32
      %c16 = arith.constant 16 : i32
      %c65535 = arith.constant 65535 : i32
      %lane = arith.remui %t32, %c16 : i32
      {mask}
      %s = nvvm.shfl.sync bfly %mask, %x, %b, %c : f32 -> f32
      memref.store %s, %B[%t] : memref<64xf32>"""


@pytest.mark.parametrize(
    "mask, b, message",
    [
        # each lane names only itself: lane 0 reads lane 1, which its mask does not name
        ("%mask = arith.shli %one, %t32 : i32", 1, r"thread \(0, 0, 0\) .* reads lane 1, which its member mask 0x00000001 does not name"),
        # lanes name the lane 16 below or above them, never themselves
        ("%mask = arith.shli %one, %lane : i32", 16, r"thread \(16, 0, 0\) .* executes it, but its member mask 0x00000001 does not name its lane 16"),
        # lanes 0-15 name lanes 0-15, lanes 16-31 all 32 lanes: lane 16 names lane 0, whose mask differs
        (("%hi = arith.cmpi uge, %t32, %c16 : i32\n      %full = arith.constant -1 : i32\n"
          "      %mask = arith.select %hi, %full, %c65535 : i32"), 1,
         r"member mask 0xffffffff of thread \(16, 0, 0\) .* names lane 0, and thread \(0, 0, 0\) .* executes it with mask 0x0000ffff"),
    ],
)  # fmt: skip
def test_masks_ptx_leaves_undefined_are_errors(mask, b, message):
    k = kernel("%A: memref<64xf32>, %B: memref<64xf32>", one_shuffle(mask, b))
    with pytest.raises(InterpreterError, match=message):
        k.launch(1, 32, np.ones(64, np.float32), np.zeros(64, np.float32))


def test_a_partial_warp_shuffles_among_the_lanes_it_has(rng):
    """A block of 48 threads: the second warp has lanes 0-15. A mask of those lanes (or
    one naming lanes the block does not have, which count as exited) works while no lane
    reads a missing one; bfly 16 would read lane 16 + i, which does not exist."""
    a = nonzero(rng, 64)
    own_lanes = ("%c32 = arith.constant 32 : i32\n      %full = arith.constant -1 : i32\n"
                 "      %first = arith.cmpi ult, %t32, %c32 : i32\n      %mask = arith.select %first, %full, %c65535 : i32")
    for mask in (own_lanes, "%mask = arith.constant -1 : i32"):
        out = np.zeros(64, np.float32)
        kernel("%A: memref<64xf32>, %B: memref<64xf32>", one_shuffle(mask, 4)).launch(1, 48, a, out)
        np.testing.assert_array_equal(out[:48], a[np.arange(48) ^ 4])
    k = kernel("%A: memref<64xf32>, %B: memref<64xf32>", one_shuffle("%mask = arith.constant -1 : i32", 16))
    with pytest.raises(InterpreterError, match=r"thread \(32, 0, 0\) .* reads lane 16, which the block does not have"):
        k.launch(1, 48, a, np.zeros(64, np.float32))
