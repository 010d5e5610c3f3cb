"""Ops that run again: a ``tile.reduce`` inside ``scf.for``, at every scope and variant.

docs/spec.md promises that scratch is never raced, "not between two ops, and not by the
same op in a loop". Each ``LoopCase`` is one kernel that runs its op three times with
``accum``, for the interpreter (whose race detector sees any reuse of scratch that the
lowering's barriers do not protect) and for the GPU (test/gpu/test_loops_gpu.py). It
imports no MLIR, so it runs on the GPU machine.

Thread t of block b holds one i32, v = A[b * T + t]; the op sums it over the threads
that the layouts group together, with accum, and v doubles after each run. So every
thread of a group ends with 0 + S + 2 S + 4 S = 7 S, S being the group's sum of the
first values (``expected``). The groups are written down per case from what the layouts
mean (docs/spec.md, "Forward map"), not from the lowering.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..vocab import DEFAULT_CHIP

RUNS = 3


@dataclass(frozen=True)
class LoopCase:
    name: str
    exec_scope: str
    block: int  # threads per block
    cluster: int | None  # CTAs per cluster (known_cluster_size), or None
    src_layout: str | None  # None: the shared variant (workgroup operands, no layouts)
    dst_layout: str | None
    axes: tuple[int, ...]
    group: Callable[[int, int], int]  # (global thread index, block) -> its group's key

    @property
    def grid(self) -> int:
        return 2 * (self.cluster or 1)

    @property
    def threads(self) -> int:
        return self.block * self.grid

    def expected(self, a: np.ndarray) -> np.ndarray:
        """What every thread stores: 7 x its group's sum (int64)."""
        keys = np.array([self.group(g, self.block) for g in range(self.threads)])
        sums = {k: a[keys == k].astype(np.int64).sum() for k in set(keys.tolist())}
        return np.array([(2**RUNS - 1) * sums[k] for k in keys.tolist()], np.int64)

    def kernel_text(self, chip: str = DEFAULT_CHIP) -> str:
        n, T = self.threads, self.block
        cluster = f", known_cluster_size = array<i32: {self.cluster}, 1, 1>" if self.cluster else ""
        axes = ", ".join(map(str, self.axes))
        reg = "memref<1xi32, #gpu.address_space<private>>"
        if self.src_layout is None:  # the shared variant: the block's values in workgroup memory
            src_t, dst_t = f"memref<{T}xi32, #gpu.address_space<workgroup>>", "memref<1xi32, #gpu.address_space<workgroup>>"
            globals_ = (f'    memref.global "private" @{self.name}_src : {src_t}\n'
                        f'    memref.global "private" @{self.name}_dst : {dst_t}\n')
            setup = (f"      %src = memref.get_global @{self.name}_src : {src_t}\n"
                     f"      %dst = memref.get_global @{self.name}_dst : {dst_t}\n"
                     f"      memref.store %v, %src[%t] : {src_t}\n"
                     f"      %first_t = arith.cmpi eq, %t, %c0 : index\n"
                     f"      scf.if %first_t {{\n        memref.store %zero, %dst[%c0] : {dst_t}\n      }}\n"
                     f"      gpu.barrier\n")
            layouts, at = "", "%t"
            double = (f"        %w = memref.load %src[%t] : {src_t}\n        %w2 = arith.addi %w, %w : i32\n"
                      f"        memref.store %w2, %src[%t] : {src_t}\n        gpu.barrier\n")
        else:
            src_t = dst_t = reg
            globals_ = ""
            setup = (f"      %src = memref.alloca() : {reg}\n      %dst = memref.alloca() : {reg}\n"
                     f"      memref.store %v, %src[%c0] : {reg}\n      memref.store %zero, %dst[%c0] : {reg}\n")
            layouts = (f', src_layout = #tile.layout<"{self.src_layout}">,'
                       f' dst_layout = #tile.layout<"{self.dst_layout}">')
            at = "%c0"
            double = (f"        %w = memref.load %src[%c0] : {reg}\n        %w2 = arith.addi %w, %w : i32\n"
                      f"        memref.store %w2, %src[%c0] : {reg}\n")
        return f"""// Loop case {self.name}: an op that runs {RUNS} times (testing/loops.py).
module attributes {{gpu.container_module}} {{
  gpu.module @kernels [#nvvm.target<chip = "{chip}">] {{
{globals_}    gpu.func @{self.name}(%A: memref<{n}xi32>, %B: memref<{n}xi32>) kernel
        attributes {{known_block_size = array<i32: {T}, 1, 1>{cluster}}} {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cruns = arith.constant {RUNS} : index
      %cT = arith.constant {T} : index
      %zero = arith.constant 0 : i32
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %first = arith.muli %b, %cT : index
      %g = arith.addi %first, %t : index
      %v = memref.load %A[%g] : memref<{n}xi32>
{setup}      scf.for %i = %c0 to %cruns step %c1 {{
        "tile.reduce"(%dst, %src) {{kind = "sum", exec_scope = "{self.exec_scope}", axes = array<i64: {axes}>,
            accum = true{layouts}}} : ({dst_t}, {src_t}) -> ()
{double}      }}
      %s = memref.load %dst[%c0] : {dst_t}
      memref.store %s, %B[%g] : memref<{n}xi32>
      gpu.return
    }}
  }}
}}
"""


def _per(n: int) -> Callable[[int, int], int]:
    return lambda g, T: g // n


def _per_blocks(k: int) -> Callable[[int, int], int]:
    return lambda g, T: g // (k * T)


CASES = (
    LoopCase("loop_thread", "thread", 32, None, "S[1]", "S[1]", (0,), _per(1)),
    LoopCase("loop_warp", "warp", 64, None, "S[32 : 1@laneid]", "S[1 : 1] + R[32 : 1@laneid]", (0,), _per(32)),
    LoopCase("loop_warp_half", "warp", 32, None, "S[(2, 16) : (16@laneid, 1@laneid)]",
             "S[(2, 1) : (16@laneid, 1)] + R[16 : 1@laneid]", (1,), _per(16)),
    LoopCase("loop_warpgroup", "warpgroup", 256, None, "S[(4, 32) : (1@wid_in_wg, 1@laneid)]",
             "S[1 : 1] + R[(4, 32) : (1@wid_in_wg, 1@laneid)]", (0, 1), _per(128)),
    LoopCase("loop_cta", "cta", 128, None, "S[(4, 32) : (1@warpid, 1@laneid)]",
             "S[1 : 1] + R[(4, 32) : (1@warpid, 1@laneid)]", (0, 1), _per(128)),
    LoopCase("loop_cta_kept_warps", "cta", 128, None, "S[(2, 2, 32) : (2@warpid, 1@warpid, 1@laneid)]",
             "S[(2, 1) : (2@warpid, 1)] + R[(2, 32) : (1@warpid, 1@laneid)]", (1, 2), _per(64)),
    # Issue 15 item 2: warp bits reduced and no CTA bit (CTAs hold different rows, or a
    # cluster of one CTA): no cluster barrier protects the warp scratch.
    LoopCase("loop_cluster_rows_per_cta", "cluster", 64, 2,
             "S[(2, (2, 32)) : (1@cta_in_cluster, (1@warpid, 1@laneid))]",
             "S[(2, 1) : (1@cta_in_cluster, 1)] + R[(2, 32) : (1@warpid, 1@laneid)]", (1,), _per_blocks(1)),
    LoopCase("loop_cluster_of_one", "cluster", 64, 1, "S[(2, 32) : (1@warpid, 1@laneid)]",
             "S[1 : 1] + R[(2, 32) : (1@warpid, 1@laneid)]", (0, 1), _per_blocks(1)),
    LoopCase("loop_cluster_ctas", "cluster", 32, 4, "S[(4, 32) : (1@cta_in_cluster, 1@laneid)]",
             "S[1 : 1] + R[(4, 32) : (1@cta_in_cluster, 1@laneid)]", (0, 1), _per_blocks(4)),
    LoopCase("loop_cluster_ctas_and_warps", "cluster", 64, 2,
             "S[(2, 2, 32) : (1@cta_in_cluster, 1@warpid, 1@laneid)]",
             "S[1 : 1] + R[(2, 2, 32) : (1@cta_in_cluster, 1@warpid, 1@laneid)]", (0, 1, 2), _per_blocks(2)),
    LoopCase("loop_shared_cta", "cta", 64, None, None, None, (0,), _per_blocks(1)),
)
