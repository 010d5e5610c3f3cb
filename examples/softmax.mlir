// softmax over the rows of a 37 x 1000 f32 matrix, as tile_mlir.kernels builds it with the plan
// warp: 4 row(s) per CTA of 128 threads, 1 warp(s) per row, 32 elements per thread per chunk, 1 chunk(s) of 1024 columns.
// Arguments: %arg0 = X, %arg1 = Y.
// Written by python/tile_mlir/kernels/forward.py; regenerate with
//   python -m tile_mlir.kernels softmax --shape 37x1000 --dtype f32 --emit > examples/softmax.mlir
#loop_unroll = #llvm.loop_unroll<full = true>
#loop_annotation = #llvm.loop_annotation<unroll = #loop_unroll>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @softmax(%arg0: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg1: memref<37x1000xf32> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %block_id_x = gpu.block_id  x
      %c4 = arith.constant 4 : index
      %0 = arith.muli %block_id_x, %c4 : index
      %alloca = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_0 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_1 = memref.alloca() : memref<32xf32, #gpu.address_space<private>>
      %cst = arith.constant 0.000000e+00 : f32
      %cst_2 = arith.constant 0.000000e+00 : f32
      %cst_3 = arith.constant 0xFF800000 : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c1_4 = arith.constant 1 : index
      %1:2 = scf.for %arg2 = %c0 to %c1 step %c1_4 iter_args(%arg3 = %cst_3, %arg4 = %cst_2) -> (f32, f32) {
        %c1024 = arith.constant 1024 : index
        %12 = arith.muli %arg2, %c1024 : index
        "tile.copy"(%alloca_1, %arg0, %0, %12) {exec_scope = "cta", layout = #tile.layout<"S[(4, (8, 32, 4)) : (1@warpid, (4, 1@laneid, 1))]">, padding = 0xFF800000 : f32} : (memref<32xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
        %c0_14 = arith.constant 0 : index
        %13 = vector.load %alloca_1[%c0_14] : memref<32xf32, #gpu.address_space<private>>, vector<32xf32>
        %14 = vector.reduction <maximumf>, %13 : vector<32xf32> into f32
        %15 = arith.maximumf %arg3, %14 : f32
        %cst_15 = arith.constant 0xFF800000 : f32
        %16 = arith.cmpf oeq, %15, %cst_15 : f32
        %17 = arith.select %16, %cst_2, %15 : f32
        %18 = vector.broadcast %17 : f32 to vector<4xf32>
        %19 = arith.subf %arg3, %17 : f32
        %20 = math.exp %19 : f32
        %21 = arith.mulf %arg4, %20 : f32
        %c0_16 = arith.constant 0 : index
        %c32 = arith.constant 32 : index
        %c4_17 = arith.constant 4 : index
        %22 = scf.for %arg5 = %c0_16 to %c32 step %c4_17 iter_args(%arg6 = %21) -> (f32) {
          %23 = vector.load %alloca_1[%arg5] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %24 = arith.subf %23, %18 : vector<4xf32>
          %25 = math.exp %24 : vector<4xf32>
          %26 = vector.reduction <add>, %25, %arg6 : vector<4xf32> into f32
          scf.yield %26 : f32
        } {llvm.loop_annotation = #loop_annotation}
        scf.yield %15, %22 : f32, f32
      }
      %c0_5 = arith.constant 0 : index
      memref.store %1#0, %alloca[%c0_5] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">, exec_scope = "cta", kind = "maximum", src_layout = #tile.layout<"S[(4, (32)) : (1@warpid, (1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_6 = arith.constant 0 : index
      %2 = memref.load %alloca_0[%c0_6] : memref<1xf32, #gpu.address_space<private>>
      %cst_7 = arith.constant 0xFF800000 : f32
      %3 = arith.cmpf oeq, %2, %cst_7 : f32
      %4 = arith.select %3, %cst, %2 : f32
      %5 = arith.subf %1#0, %4 : f32
      %6 = math.exp %5 : f32
      %7 = arith.mulf %1#1, %6 : f32
      %c0_8 = arith.constant 0 : index
      memref.store %7, %alloca[%c0_8] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(4, (32)) : (1@warpid, (1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_9 = arith.constant 0 : index
      %8 = memref.load %alloca_0[%c0_9] : memref<1xf32, #gpu.address_space<private>>
      %9 = vector.broadcast %4 : f32 to vector<4xf32>
      %cst_10 = arith.constant 1.000000e+00 : f32
      %10 = arith.divf %cst_10, %8 : f32
      %11 = vector.broadcast %10 : f32 to vector<4xf32>
      %c0_11 = arith.constant 0 : index
      %c1_12 = arith.constant 1 : index
      %c1_13 = arith.constant 1 : index
      scf.for %arg2 = %c0_11 to %c1_12 step %c1_13 {
        %c1_14 = arith.constant 1 : index
        %12 = arith.subi %c1_14, %arg2 : index
        %c1_15 = arith.constant 1 : index
        %13 = arith.subi %12, %c1_15 : index
        %c1024 = arith.constant 1024 : index
        %14 = arith.muli %13, %c1024 : index
        %c0_16 = arith.constant 0 : index
        %15 = arith.cmpi ne, %arg2, %c0_16 : index
        scf.if %15 {
          "tile.copy"(%alloca_1, %arg0, %0, %14) {exec_scope = "cta", layout = #tile.layout<"S[(4, (8, 32, 4)) : (1@warpid, (4, 1@laneid, 1))]">, padding = 0xFF800000 : f32} : (memref<32xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
        }
        %c0_17 = arith.constant 0 : index
        %c32 = arith.constant 32 : index
        %c4_18 = arith.constant 4 : index
        scf.for %arg3 = %c0_17 to %c32 step %c4_18 {
          %16 = vector.load %alloca_1[%arg3] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %17 = arith.subf %16, %9 : vector<4xf32>
          %18 = math.exp %17 : vector<4xf32>
          %19 = arith.mulf %18, %11 : vector<4xf32>
          vector.store %19, %alloca_1[%arg3] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
        } {llvm.loop_annotation = #loop_annotation}
        "tile.copy"(%arg1, %alloca_1, %0, %14) {exec_scope = "cta", layout = #tile.layout<"S[(4, (8, 32, 4)) : (1@warpid, (4, 1@laneid, 1))]">} : (memref<37x1000xf32>, memref<32xf32, #gpu.address_space<private>>, index, index) -> ()
      }
      gpu.return
    }
  }
}
