// Two rows of 1024 f32, each summed by a thread-block cluster of 4 CTAs of 2 warps
// (docs/lowering-cluster.md shows what it lowers to). Block b works on row b / 4; its
// rank r in the cluster (b mod 4) picks the row's r-th quarter, 256 columns, and its
// thread t holds columns 256 r + 4 t .. 256 r + 4 t + 3, in four registers. The sum
// covers the row's 4 CTAs x 2 warps x 32 lanes x 4 registers: each thread folds its
// registers, the lanes of a warp, the 2 warps of its CTA, and then the 4 CTAs' partials
// through distributed shared memory, in rank order. Every thread of the cluster ends
// with the row's sum; thread 0 of rank 0 stores it to S[row], and every thread stores
// it to B[b * 64 + t]. The kernel fixes its cluster (known_cluster_size): launch it on
// 8 blocks of 64 threads.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @cluster_row_sum(%A: memref<2x1024xf32> {llvm.align = 16 : i64}, %S: memref<2xf32>, %B: memref<512xf32>) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>, known_cluster_size = array<i32: 4, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %c256 = arith.constant 256 : index
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %row = arith.divui %b, %c4 : index
      %r = arith.remui %b, %c4 : index
      %quarter = arith.muli %r, %c256 : index
      %mine = arith.muli %t, %c4 : index
      %col = arith.addi %quarter, %mine : index
      %v = vector.load %A[%row, %col] : memref<2x1024xf32>, vector<4xf32>
      %src = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      vector.store %v, %src[%c0] : memref<4xf32, #gpu.address_space<private>>, vector<4xf32>
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2, 32, 4)) : ((1@cta_in_cluster, 1@warpid, 1@laneid, 1))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">}
        : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
      %sum = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      %first = arith.muli %b, %c64 : index
      %i = arith.addi %first, %t : index
      memref.store %sum, %B[%i] : memref<512xf32>
      %t0 = arith.cmpi eq, %t, %c0 : index
      %r0 = arith.cmpi eq, %r, %c0 : index
      %writer = arith.andi %t0, %r0 : i1
      scf.if %writer {
        memref.store %sum, %S[%row] : memref<2xf32>
      }
      gpu.return
    }
  }
}
