// logsumexp over the rows of a 37 x 1000 f32 matrix, as tile_mlir.kernels builds it with the plan
// warp: 4 row(s) per CTA of 128 threads, 1 warp(s) per row, 32 elements per thread per chunk, 1 chunk(s) of 1024 columns.
// Arguments: %arg0 = X, %arg1 = Y.
// Written by python/tile_mlir/kernels/forward.py; regenerate with
//   python -m tile_mlir.kernels logsumexp --shape 37x1000 --dtype f32 --emit > examples/logsumexp.mlir
#loop_unroll = #llvm.loop_unroll<full = true>
#loop_annotation = #llvm.loop_annotation<unroll = #loop_unroll>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @logsumexp(%arg0: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg1: memref<37xf32> {llvm.align = 16 : i64}) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
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
        %c0_12 = arith.constant 0 : index
        %13 = vector.load %alloca_1[%c0_12] : memref<32xf32, #gpu.address_space<private>>, vector<32xf32>
        %14 = vector.reduction <maximumf>, %13 : vector<32xf32> into f32
        %15 = arith.maximumf %arg3, %14 : f32
        %16 = math.absf %15 : f32
        %cst_13 = arith.constant 0x7F800000 : f32
        %17 = arith.cmpf oeq, %16, %cst_13 : f32
        %18 = arith.select %17, %cst_2, %15 : f32
        %19 = vector.broadcast %18 : f32 to vector<4xf32>
        %20 = arith.subf %arg3, %18 : f32
        %21 = math.exp %20 : f32
        %22 = arith.mulf %arg4, %21 : f32
        %c0_14 = arith.constant 0 : index
        %c32 = arith.constant 32 : index
        %c4_15 = arith.constant 4 : index
        %23 = scf.for %arg5 = %c0_14 to %c32 step %c4_15 iter_args(%arg6 = %22) -> (f32) {
          %24 = vector.load %alloca_1[%arg5] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %25 = arith.subf %24, %19 : vector<4xf32>
          %26 = math.exp %25 : vector<4xf32>
          %27 = vector.reduction <add>, %26, %arg6 : vector<4xf32> into f32
          scf.yield %27 : f32
        } {llvm.loop_annotation = #loop_annotation}
        scf.yield %15, %23 : f32, f32
      }
      %c0_5 = arith.constant 0 : index
      memref.store %1#0, %alloca[%c0_5] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">, exec_scope = "cta", kind = "maximum", src_layout = #tile.layout<"S[(4, (32)) : (1@warpid, (1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_6 = arith.constant 0 : index
      %2 = memref.load %alloca_0[%c0_6] : memref<1xf32, #gpu.address_space<private>>
      %3 = math.absf %2 : f32
      %cst_7 = arith.constant 0x7F800000 : f32
      %4 = arith.cmpf oeq, %3, %cst_7 : f32
      %5 = arith.select %4, %cst, %2 : f32
      %6 = arith.subf %1#0, %5 : f32
      %7 = math.exp %6 : f32
      %8 = arith.mulf %1#1, %7 : f32
      %c0_8 = arith.constant 0 : index
      memref.store %8, %alloca[%c0_8] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(4, (32)) : (1@warpid, (1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_9 = arith.constant 0 : index
      %9 = memref.load %alloca_0[%c0_9] : memref<1xf32, #gpu.address_space<private>>
      %10 = math.log %9 : f32
      %11 = arith.addf %5, %10 : f32
      %alloca_10 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %c0_11 = arith.constant 0 : index
      memref.store %11, %alloca_10[%c0_11] : memref<1xf32, #gpu.address_space<private>>
      "tile.copy"(%arg1, %alloca_10, %0) {exec_scope = "cta", layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">} : (memref<37xf32>, memref<1xf32, #gpu.address_space<private>>, index) -> ()
      gpu.return
    }
  }
}
