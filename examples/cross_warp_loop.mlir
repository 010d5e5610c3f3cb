// A block of 4 warps sums 3 x 128 floats, 128 at a time: in iteration i thread t holds
// A[128 i + t], and the op adds the 128 values to the running sum (accum = true). The op
// runs three times in a row on the same scratch: its two halves alternate.
// Every thread ends with the sum of all 384 in B[t].
// docs/lowering-cross-warp.md shows what it lowers to.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @cta_loop_sum(%A: memref<384xf32>, %B: memref<128xf32>) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c128 = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %t = gpu.thread_id x
      %src = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      memref.store %zero, %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      scf.for %i = %c0 to %c3 step %c1 {
        %row = arith.muli %i, %c128 : index
        %at = arith.addi %row, %t : index
        %a = memref.load %A[%at] : memref<384xf32>
        memref.store %a, %src[%c0] : memref<1xf32, #gpu.address_space<private>>
        "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cta", axes = array<i64: 0>, accum = true,
            src_layout = #tile.layout<"S[((4, 32)) : ((1@warpid, 1@laneid))]">,
            dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">}
          : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      }
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%t] : memref<128xf32>
      gpu.return
    }
  }
}
