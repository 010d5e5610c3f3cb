// The demonstration (docs/spec.md, "The demonstration"): one
// thread reduces a 4-element f32 register vector to a scalar. The kernel loads
// A into registers, runs tile.reduce at thread scope, and stores the sum to B.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @demo(%A: memref<4xf32>, %B: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %A_local = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
      %B_local = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      scf.for %i = %c0 to %c4 step %c1 {
        %a = memref.load %A[%i] : memref<4xf32>
        memref.store %a, %A_local[%i] : memref<4xf32, #gpu.address_space<private>>
      }
      "tile.reduce"(%B_local, %A_local) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>, accum = false}
        : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %B_local[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%c0] : memref<1xf32>
      gpu.return
    }
  }
}
