// Row sums of a 4096 x 1000 f32 matrix: one warp per row, four warps per block.
//
// Each warp walks its row in chunks of 256 columns: tile.copy loads a chunk, 8
// consecutive elements per lane (two 16-byte vector loads), and pads the columns past
// 1000 with 0; tile.reduce adds the chunk into the running sum, which every lane holds;
// a last tile.copy stores it from lane 0 (replica copy 0). No index math by hand.
//
// test/Examples/row_sum_copy.mlir runs it through the whole pipeline to PTX:
//   tile-opt examples/row_sum_copy.mlir --tile-to-ptx | FileCheck examples/row_sum_copy.mlir \
//     --implicit-check-not=ld.global.b32 --implicit-check-not=.local
// and test/python/test_copy.py runs the kernel in the interpreter against numpy.
//
// Each chunk is two 16-byte vector loads per lane, each predicated on its vector being
// inside the matrix (no scalar load anywhere, no local memory); the sum across the warp
// is a butterfly of five shuffles; lane 0 stores the row's sum.
// CHECK-LABEL: .entry row_sum(
// CHECK-COUNT-2: ld.global.v4.b32
// CHECK:         st.global.b32
// CHECK:         ret;
// SUM-LABEL:     .entry row_sum(
// SUM-COUNT-5:   shfl.sync.bfly.b32
// SUM-NOT:       shfl.sync

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @row_sum(%X: memref<4096x1000xf32>, %Y: memref<4096xf32>) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c256 = arith.constant 256 : index
      %c1000 = arith.constant 1000 : index
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %block = gpu.block_id x
      %warp = arith.divui %tid, %c32 : index
      %first = arith.muli %block, %c4 : index
      %row = arith.addi %first, %warp : index
      %chunk = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      %sum = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      memref.store %zero, %sum[%c0] : memref<1xf32, #gpu.address_space<private>>
      scf.for %col = %c0 to %c1000 step %c256 {
        "tile.copy"(%chunk, %X, %row, %col) {exec_scope = "warp", padding = 0.0 : f32,
            layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
          : (memref<8xf32, #gpu.address_space<private>>, memref<4096x1000xf32>, index, index) -> ()
        "tile.reduce"(%sum, %chunk) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, accum = true,
            src_layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">,
            dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">}
          : (memref<1xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
      }
      "tile.copy"(%Y, %sum, %row) {exec_scope = "warp", layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">}
        : (memref<4096xf32>, memref<1xf32, #gpu.address_space<private>>, index) -> ()
      gpu.return
    }
  }
}
