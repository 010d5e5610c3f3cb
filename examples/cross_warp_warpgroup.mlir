// Each warpgroup of a 256-thread block sums its 128 floats: thread t holds A[t], and
// every thread of warpgroup w ends with the sum of A[128 w .. 128 w + 127] in B[t].
// docs/lowering-cross-warp.md shows what it lowers to.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @warpgroup_sum(%A: memref<256xf32>, %B: memref<256xf32>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %src = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %a = memref.load %A[%t] : memref<256xf32>
      memref.store %a, %src[%c0] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[128 : 1@tid_in_wg]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[128 : 1@tid_in_wg]">}
        : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%t] : memref<256xf32>
      gpu.return
    }
  }
}
