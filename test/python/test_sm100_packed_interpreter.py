"""The CPU interpreter runs the sm100_packed lowering (its vector ops) and gives the bits of
its documented order (docs/lowering-sm100-packed.md, docs/spec.md "Fold order"):
``even = x0 + x2 + ...``, ``odd = x1 + x3 + ...``, then ``even + odd``, all in float32."""

import numpy as np

import tile_mlir
from tile_mlir.compiler import lower_tile_ops

N = 16
KERNEL = f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {{
    gpu.func @packed_sum(%A: memref<{N}xf32>, %B: memref<1xf32>) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cn = arith.constant {N} : index
      %src = memref.alloca() : memref<{N}xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      scf.for %i = %c0 to %cn step %c1 {{
        %a = memref.load %A[%i] : memref<{N}xf32>
        memref.store %a, %src[%i] : memref<{N}xf32, #gpu.address_space<private>>
      }}
      "tile.reduce"(%dst, %src) {{kind = "sum", exec_scope = "thread", axes = array<i64: 0>}}
        : (memref<1xf32, #gpu.address_space<private>>, memref<{N}xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%c0] : memref<1xf32>
      gpu.return
    }}
  }}
}}"""


def even_odd(a: np.ndarray) -> np.float32:
    even, odd = a[0], a[1]
    for i in range(2, len(a), 2):
        even, odd = np.float32(even + a[i]), np.float32(odd + a[i + 1])
    return np.float32(even + odd)


def linear(a: np.ndarray) -> np.float32:
    acc = a[0]
    for x in a[1:]:
        acc = np.float32(acc + x)
    return acc


def test_sm100_packed_lowers_to_vector_ops():
    lowered, _ = lower_tile_ops(KERNEL)
    assert '"vector.from_elements"' in lowered and '"vector.extract"' in lowered


def test_the_interpreter_gives_the_even_odd_bits():
    kernel = tile_mlir.compile(KERNEL, backend="interpreter").packed_sum
    rng = np.random.default_rng()
    differing = 0
    for _ in range(40):
        a = (rng.standard_normal(N) * 10.0 ** rng.integers(-3, 6, N)).astype(np.float32)
        b = np.full(1, np.nan, np.float32)
        kernel.launch(1, 1, a, b)
        assert b.view(np.uint32)[0] == even_odd(a).view(np.uint32)
        differing += even_odd(a) != linear(a)
    assert differing > 0, "no input told the even/odd order from the linear one"
