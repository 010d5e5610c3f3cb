// A block of 8 warps takes the maximum of each row of a 2 x 256 tile. Row r lies on
// warps 4r .. 4r+3; warp w's lane l holds columns 64 (w mod 4) + 2 l and the next one,
// in two registers, so thread t holds A[2 t] and A[2 t + 1]. Every thread of row r's
// warps ends with the row's maximum, and stores it in B[t].
// docs/lowering-cross-warp.md shows what it lowers to.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @cta_row_max(%A: memref<512xf32>, %B: memref<256xf32>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %t = gpu.thread_id x
      %src = memref.alloca() : memref<2xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %i0 = arith.muli %t, %c2 : index
      %i1 = arith.addi %i0, %c1 : index
      %a0 = memref.load %A[%i0] : memref<512xf32>
      %a1 = memref.load %A[%i1] : memref<512xf32>
      memref.store %a0, %src[%c0] : memref<2xf32, #gpu.address_space<private>>
      memref.store %a1, %src[%c1] : memref<2xf32, #gpu.address_space<private>>
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "cta", axes = array<i64: 1>,
          src_layout = #tile.layout<"S[(2, (4, 32, 2)) : (4@warpid, (1@warpid, 1@laneid, 1))]">,
          dst_layout = #tile.layout<"S[2 : 4@warpid] + R[(32, 4) : (1@laneid, 1@warpid)]">}
        : (memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%t] : memref<256xf32>
      gpu.return
    }
  }
}
