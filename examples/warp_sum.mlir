module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @warp_sum(%A: memref<32xf32>, %B: memref<32xf32>) kernel {
      %c0 = arith.constant 0 : index
      %lane = gpu.lane_id
      %src = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %a = memref.load %A[%lane] : memref<32xf32>
      memref.store %a, %src[%c0] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">}
        : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%lane] : memref<32xf32>
      gpu.return
    }
  }
}
