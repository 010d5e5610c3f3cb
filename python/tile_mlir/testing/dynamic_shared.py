"""A block-wide sum through dynamic shared memory, for the interpreter's tests
(test/python/test_dynamic_shared.py) and the GPU's (test/gpu/test_dynamic_shared_gpu.py).

``tree_sum(offset)``: ``B[0]`` = the sum of ``A[0..127]``, one block of 128 threads. Each
thread stores its element into a ``memref.view`` of ``gpu.dynamic_shared_memory`` that
starts ``offset`` bytes in; then ``s[t] += s[t + h]`` for h = 64, 32, ... 1, a barrier
after each step; thread 0 stores ``s[0]``. The launch needs ``needed(offset)`` bytes of
``shared_mem``: above 48 KB for ``LARGE_OFFSET``, which needs the opt-in attribute on the
GPU. ``tree_reference`` is the same order in float32, in numpy.

``resident()``: the GPU's own count of the CTAs an SM holds at once, for the test of
``CudaKernel.bind``'s ``carveout``: thread 0 of each CTA adds one to its SM's counter
(``%smid``), keeps the counter's peak, spins ``SPIN`` clock cycles and takes its one off
(an atomic whose result it waits for, so that the next CTA on the SM counts after it).
"""

from __future__ import annotations

import numpy as np

from ..vocab import DEFAULT_CHIP

THREADS = 128
OFFSET = 64  # small: the floats start 64 bytes in
LARGE_OFFSET = 100_000  # past 48 KB: the launch needs the opt-in
WG = "#gpu.address_space<workgroup>"


def needed(offset: int = OFFSET) -> int:
    """The bytes of dynamic shared memory the kernel's view reaches."""
    return offset + 4 * THREADS


def tree_sum(offset: int = OFFSET, barriers: bool = True, extra: str = "", chip: str = DEFAULT_CHIP) -> str:
    """The kernel's text (module docstring); without ``barriers`` the stores and the first
    step race; ``extra`` comes right after the stores."""
    sync = "      gpu.barrier\n" if barriers else ""
    steps = "".join(f"""
      %h{h} = arith.constant {h} : index
      %in{h} = arith.cmpi ult, %t, %h{h} : index
      scf.if %in{h} {{
        %u{h} = arith.addi %t, %h{h} : index
        %a{h} = memref.load %s[%t] : memref<{THREADS}xf32, {WG}>
        %b{h} = memref.load %s[%u{h}] : memref<{THREADS}xf32, {WG}>
        %c{h} = arith.addf %a{h}, %b{h} : f32
        memref.store %c{h}, %s[%t] : memref<{THREADS}xf32, {WG}>
      }}
      gpu.barrier
""" for h in (64, 32, 16, 8, 4, 2, 1))
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @k [#nvvm.target<chip = "{chip}">] {{
    gpu.func @tree(%A: memref<{THREADS}xf32>, %B: memref<1xf32>) kernel {{
      %c0 = arith.constant 0 : index
      %off = arith.constant {offset} : index
      %t = gpu.thread_id x
      %dyn = gpu.dynamic_shared_memory : memref<?xi8, {WG}>
      %s = memref.view %dyn[%off][] : memref<?xi8, {WG}> to memref<{THREADS}xf32, {WG}>
      %a = memref.load %A[%t] : memref<{THREADS}xf32>
      memref.store %a, %s[%t] : memref<{THREADS}xf32, {WG}>
{extra}{sync}{steps}
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {{
        %r = memref.load %s[%c0] : memref<{THREADS}xf32, {WG}>
        memref.store %r, %B[%c0] : memref<1xf32>
      }}
      gpu.return
    }}
  }}
}}
"""


def tree_reference(a: np.ndarray) -> np.float32:
    """The kernel's sum, in its order, in float32."""
    s = np.asarray(a, np.float32).copy()
    h = THREADS // 2
    while h:
        s[:h] = s[:h] + s[h : 2 * h]
        h //= 2
    return s[0]


class TreeSumCase:
    """The kernel at one offset, as ``tile_mlir.testing.prepare`` takes its cases."""

    def __init__(self, offset: int):
        self.offset = offset
        self.name = f"dynamic_shared_tree_sum_{offset}"

    def kernel_text(self, chip: str = DEFAULT_CHIP) -> str:
        return tree_sum(self.offset, chip=chip)


def resident(chip: str = DEFAULT_CHIP) -> str:
    """``resident(ACTIVE, PEAK: memref<1024xi32>, SPIN: i64)``: module docstring."""
    return f"""
module attributes {{gpu.container_module}} {{
  gpu.module @k [#nvvm.target<chip = "{chip}">] {{
    gpu.func @resident(%ACTIVE: memref<1024xi32>, %PEAK: memref<1024xi32>, %SPIN: i64) kernel {{
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {{
        %sm = nvvm.read.ptx.sreg.smid : i32
        %smi = arith.index_cast %sm : i32 to index
        %one = arith.constant 1 : i32
        %old = memref.atomic_rmw addi %one, %ACTIVE[%smi] : (i32, memref<1024xi32>) -> i32
        %now = arith.addi %old, %one : i32
        %seen = memref.atomic_rmw maxs %now, %PEAK[%smi] : (i32, memref<1024xi32>) -> i32
        %start = nvvm.read.ptx.sreg.clock64 : i64
        scf.while : () -> () {{
          %clock = nvvm.read.ptx.sreg.clock64 : i64
          %spun = arith.subi %clock, %start : i64
          %more = arith.cmpi slt, %spun, %SPIN : i64
          scf.condition(%more)
        }} do {{
          scf.yield
        }}
        %minus = arith.constant -1 : i32
        %left = memref.atomic_rmw addi %minus, %ACTIVE[%smi] : (i32, memref<1024xi32>) -> i32
        // the count it left, used (never below 0): an atom that returns, which the CTA waits
        // for before it exits, not a reduction that may land after the next CTA's add
        %c0i = arith.constant 0 : i32
        %below = arith.cmpi slt, %left, %c0i : i32
        scf.if %below {{
          memref.store %left, %PEAK[%smi] : memref<1024xi32>
        }}
      }}
      gpu.return
    }}
  }}
}}
"""


class ResidentCase:
    """``resident()``, as ``tile_mlir.testing.prepare`` takes its cases."""

    name = "dynamic_shared_resident"

    def kernel_text(self, chip: str = DEFAULT_CHIP) -> str:
        return resident(chip)


# The offsets the GPU suite launches, and their cases (which prepare compiles).
GPU_OFFSETS = (OFFSET, LARGE_OFFSET)
CASES = (*(TreeSumCase(offset) for offset in GPU_OFFSETS), ResidentCase())
