// rmsnorm over the rows of a 37 x 1000 f32 matrix, as tile_mlir.kernels builds it with the plan
// warps: 1 row(s) per CTA of 128 threads, 4 warp(s) per row, 1 CTA(s) per row, 8 elements per thread (1024 columns).
// Arguments: %arg0 = X, %arg1 = W, %arg2 = Y, %arg3 = RSTD, %arg4 = eps.
// Written by python/tile_mlir/kernels/forward.py; regenerate with
//   python -m tile_mlir.kernels rmsnorm --shape 37x1000 --dtype f32 --emit > examples/rmsnorm.mlir
#loop_unroll = #llvm.loop_unroll<full = true>
#loop_annotation = #llvm.loop_annotation<unroll = #loop_unroll>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @rmsnorm(%arg0: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg1: memref<1000xf32> {llvm.align = 16 : i64}, %arg2: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg3: memref<37xf32> {llvm.align = 16 : i64}, %arg4: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %block_id_x = gpu.block_id  x
      %c1 = arith.constant 1 : index
      %0 = arith.muli %block_id_x, %c1 : index
      %c0 = arith.constant 0 : index
      %alloca = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_0 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_1 = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%alloca_1, %arg0, %0, %c0) {exec_scope = "cta", layout = #tile.layout<"S[(1, (2, 4, 32, 4)) : (1, (4, 1@warpid, 1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
      %cst = arith.constant 0.000000e+00 : f32
      %c0_2 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c4 = arith.constant 4 : index
      %1 = scf.for %arg5 = %c0_2 to %c8 step %c4 iter_args(%arg6 = %cst) -> (f32) {
        %7 = vector.load %alloca_1[%arg5] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %8 = arith.mulf %7, %7 : vector<4xf32>
        %9 = vector.reduction <add>, %8, %arg6 : vector<4xf32> into f32
        scf.yield %9 : f32
      } {llvm.loop_annotation = #loop_annotation}
      %c0_3 = arith.constant 0 : index
      memref.store %1, %alloca[%c0_3] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(1, (4, 32)) : (1, (1@warpid, 1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_4 = arith.constant 0 : index
      %2 = memref.load %alloca_0[%c0_4] : memref<1xf32, #gpu.address_space<private>>
      %cst_5 = arith.constant 1.000000e+03 : f32
      %3 = arith.divf %2, %cst_5 : f32
      %4 = arith.addf %3, %arg4 : f32
      %5 = math.rsqrt %4 : f32
      %alloca_6 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %c0_7 = arith.constant 0 : index
      memref.store %5, %alloca_6[%c0_7] : memref<1xf32, #gpu.address_space<private>>
      "tile.copy"(%arg3, %alloca_6, %0) {exec_scope = "cta", layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">} : (memref<37xf32>, memref<1xf32, #gpu.address_space<private>>, index) -> ()
      %6 = vector.broadcast %5 : f32 to vector<4xf32>
      %c0_8 = arith.constant 0 : index
      %c8_9 = arith.constant 8 : index
      %c4_10 = arith.constant 4 : index
      scf.for %arg5 = %c0_8 to %c8_9 step %c4_10 {
        %7 = vector.load %alloca_1[%arg5] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %8 = arith.mulf %7, %6 : vector<4xf32>
        %alloca_11 = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
        %c128 = arith.constant 128 : index
        %9 = arith.muli %arg5, %c128 : index
        %10 = arith.addi %c0, %9 : index
        "tile.copy"(%alloca_11, %arg1, %10) {exec_scope = "cta", layout = #tile.layout<"S[((4, 32, 4)) : ((1@warpid, 1@laneid, 1))]">} : (memref<4xf32, #gpu.address_space<private>>, memref<1000xf32>, index) -> ()
        %c0_12 = arith.constant 0 : index
        %11 = vector.load %alloca_11[%c0_12] : memref<4xf32, #gpu.address_space<private>>, vector<4xf32>
        %12 = arith.mulf %8, %11 : vector<4xf32>
        %alloca_13 = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
        %c0_14 = arith.constant 0 : index
        vector.store %12, %alloca_13[%c0_14] : memref<4xf32, #gpu.address_space<private>>, vector<4xf32>
        %c128_15 = arith.constant 128 : index
        %13 = arith.muli %arg5, %c128_15 : index
        %14 = arith.addi %c0, %13 : index
        "tile.copy"(%arg2, %alloca_13, %0, %14) {exec_scope = "cta", layout = #tile.layout<"S[(1, (4, 32, 4)) : (1, (1@warpid, 1@laneid, 1))]">} : (memref<37x1000xf32>, memref<4xf32, #gpu.address_space<private>>, index, index) -> ()
      } {llvm.loop_annotation = #loop_annotation}
      gpu.return
    }
  }
}
