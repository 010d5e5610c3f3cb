// softmax over the rows of a 37 x 1000 f32 matrix, as tile_mlir.kernels builds it with the plan
// warps: 1 row(s) per CTA of 128 threads, 4 warp(s) per row, 1 CTA(s) per row, 8 elements per thread (1024 columns).
// Arguments: %arg0 = X, %arg1 = Y.
// Written by python/tile_mlir/kernels/forward.py; regenerate with
//   python -m tile_mlir.kernels softmax --shape 37x1000 --dtype f32 --emit > examples/softmax.mlir
#loop_unroll = #llvm.loop_unroll<full = true>
#loop_annotation = #llvm.loop_annotation<unroll = #loop_unroll>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @softmax(%arg0: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg1: memref<37x1000xf32> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %block_id_x = gpu.block_id  x
      %c1 = arith.constant 1 : index
      %0 = arith.muli %block_id_x, %c1 : index
      %c0 = arith.constant 0 : index
      %alloca = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_0 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_1 = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%alloca_1, %arg0, %0, %c0) {exec_scope = "cta", layout = #tile.layout<"S[(1, (2, 4, 32, 4)) : (1, (4, 1@warpid, 1@laneid, 1))]">, padding = 0xFF800000 : f32} : (memref<8xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
      %alloca_2 = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      %c0_3 = arith.constant 0 : index
      %1 = vector.load %alloca_1[%c0_3] : memref<8xf32, #gpu.address_space<private>>, vector<8xf32>
      %2 = vector.reduction <maximumf>, %1 : vector<8xf32> into f32
      %cst = arith.constant 0xFF800000 : f32
      %3 = arith.cmpf oeq, %2, %cst : f32
      %cst_4 = arith.constant 0.000000e+00 : f32
      %4 = arith.select %3, %cst_4, %2 : f32
      %5 = vector.broadcast %4 : f32 to vector<4xf32>
      %cst_5 = arith.constant 0.000000e+00 : f32
      %c0_6 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c4 = arith.constant 4 : index
      %6 = scf.for %arg2 = %c0_6 to %c8 step %c4 iter_args(%arg3 = %cst_5) -> (f32) {
        %17 = vector.load %alloca_1[%arg2] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %18 = arith.subf %17, %5 : vector<4xf32>
        %cst_17 = arith.constant dense<1.44269502> : vector<4xf32>
        %19 = arith.mulf %18, %cst_17 : vector<4xf32>
        %20 = math.exp2 %19 : vector<4xf32>
        vector.store %20, %alloca_2[%arg2] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %21 = vector.reduction <add>, %20, %arg3 : vector<4xf32> into f32
        scf.yield %21 : f32
      } {llvm.loop_annotation = #loop_annotation}
      %c0_7 = arith.constant 0 : index
      memref.store %2, %alloca[%c0_7] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">, exec_scope = "cta", kind = "maximum", src_layout = #tile.layout<"S[(1, (4, 32)) : (1, (1@warpid, 1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_8 = arith.constant 0 : index
      %7 = memref.load %alloca_0[%c0_8] : memref<1xf32, #gpu.address_space<private>>
      %cst_9 = arith.constant 0xFF800000 : f32
      %8 = arith.cmpf oeq, %7, %cst_9 : f32
      %cst_10 = arith.constant 0.000000e+00 : f32
      %9 = arith.select %8, %cst_10, %7 : f32
      %10 = arith.subf %2, %9 : f32
      %cst_11 = arith.constant 1.44269502 : f32
      %11 = arith.mulf %10, %cst_11 : f32
      %12 = math.exp2 %11 : f32
      %13 = arith.mulf %6, %12 : f32
      %c0_12 = arith.constant 0 : index
      memref.store %13, %alloca[%c0_12] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(1, (4, 32)) : (1, (1@warpid, 1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_13 = arith.constant 0 : index
      %14 = memref.load %alloca_0[%c0_13] : memref<1xf32, #gpu.address_space<private>>
      %15 = arith.divf %12, %14 : f32
      %16 = vector.broadcast %15 : f32 to vector<4xf32>
      %c0_14 = arith.constant 0 : index
      %c8_15 = arith.constant 8 : index
      %c4_16 = arith.constant 4 : index
      scf.for %arg2 = %c0_14 to %c8_15 step %c4_16 {
        %17 = vector.load %alloca_2[%arg2] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %18 = arith.mulf %17, %16 : vector<4xf32>
        vector.store %18, %alloca_1[%arg2] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
      } {llvm.loop_annotation = #loop_annotation}
      "tile.copy"(%arg1, %alloca_1, %0, %c0) {exec_scope = "cta", layout = #tile.layout<"S[(1, (2, 4, 32, 4)) : (1, (4, 1@warpid, 1@laneid, 1))]">} : (memref<37x1000xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
  }
}
