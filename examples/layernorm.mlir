// layernorm over the rows of a 37 x 1000 f32 matrix, as tile_mlir.kernels builds it with the plan
// warps: 1 row(s) per CTA of 128 threads, 4 warp(s) per row, 1 CTA(s) per row, 8 elements per thread (1024 columns).
// Arguments: %arg0 = X, %arg1 = W, %arg2 = B, %arg3 = Y, %arg4 = MEAN, %arg5 = RSTD, %arg6 = eps.
// Written by python/tile_mlir/kernels/forward.py; regenerate with
//   python -m tile_mlir.kernels layernorm --shape 37x1000 --dtype f32 --emit > examples/layernorm.mlir
#loop_unroll = #llvm.loop_unroll<full = true>
#loop_annotation = #llvm.loop_annotation<unroll = #loop_unroll>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @layernorm(%arg0: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg1: memref<1000xf32> {llvm.align = 16 : i64}, %arg2: memref<1000xf32> {llvm.align = 16 : i64}, %arg3: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg4: memref<37xf32> {llvm.align = 16 : i64}, %arg5: memref<37xf32> {llvm.align = 16 : i64}, %arg6: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %block_id_x = gpu.block_id  x
      %c1 = arith.constant 1 : index
      %0 = arith.muli %block_id_x, %c1 : index
      %c0 = arith.constant 0 : index
      %alloca = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_0 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_1 = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      %cst = arith.constant 1.000000e+03 : f32
      %cst_2 = arith.constant 0.000000e+00 : f32
      "tile.copy"(%alloca_1, %arg0, %0, %c0) {exec_scope = "cta", layout = #tile.layout<"S[(1, (2, 4, 32, 4)) : (1, (4, 1@warpid, 1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
      %c0_3 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %c4 = arith.constant 4 : index
      %1 = scf.for %arg7 = %c0_3 to %c8 step %c4 iter_args(%arg8 = %cst_2) -> (f32) {
        %12 = vector.load %alloca_1[%arg7] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %13 = vector.reduction <add>, %12, %arg8 : vector<4xf32> into f32
        scf.yield %13 : f32
      } {llvm.loop_annotation = #loop_annotation}
      %c0_4 = arith.constant 0 : index
      memref.store %1, %alloca[%c0_4] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(1, (4, 32)) : (1, (1@warpid, 1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_5 = arith.constant 0 : index
      %2 = memref.load %alloca_0[%c0_5] : memref<1xf32, #gpu.address_space<private>>
      %3 = arith.divf %2, %cst : f32
      %alloca_6 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %c0_7 = arith.constant 0 : index
      memref.store %3, %alloca_6[%c0_7] : memref<1xf32, #gpu.address_space<private>>
      "tile.copy"(%arg4, %alloca_6, %0) {exec_scope = "cta", layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">} : (memref<37xf32>, memref<1xf32, #gpu.address_space<private>>, index) -> ()
      %4 = vector.broadcast %3 : f32 to vector<4xf32>
      %5 = vector.broadcast %cst_2 : f32 to vector<4xf32>
      %c0_8 = arith.constant 0 : index
      %c8_9 = arith.constant 8 : index
      %c4_10 = arith.constant 4 : index
      %6 = scf.for %arg7 = %c0_8 to %c8_9 step %c4_10 iter_args(%arg8 = %cst_2) -> (f32) {
        %12 = vector.load %alloca_1[%arg7] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %13 = arith.subf %12, %4 : vector<4xf32>
        %thread_id_x = gpu.thread_id  x
        %c128 = arith.constant 128 : index
        %14 = arith.remui %thread_id_x, %c128 : index
        %c4_18 = arith.constant 4 : index
        %15 = arith.muli %14, %c4_18 : index
        %16 = arith.addi %c0, %15 : index
        %c128_19 = arith.constant 128 : index
        %17 = arith.muli %arg7, %c128_19 : index
        %18 = arith.addi %16, %17 : index
        %cst_20 = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
        %c1000 = arith.constant 1000 : index
        %19 = arith.subi %c1000, %18 : index
        %20 = vector.broadcast %19 : index to vector<4xindex>
        %21 = arith.cmpi slt, %cst_20, %20 : vector<4xindex>
        %22 = arith.mulf %13, %13 : vector<4xf32>
        %23 = arith.select %21, %22, %5 : vector<4xi1>, vector<4xf32>
        %24 = vector.reduction <add>, %23, %arg8 : vector<4xf32> into f32
        scf.yield %24 : f32
      } {llvm.loop_annotation = #loop_annotation}
      %c0_11 = arith.constant 0 : index
      memref.store %6, %alloca[%c0_11] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(1, (4, 32)) : (1, (1@warpid, 1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_12 = arith.constant 0 : index
      %7 = memref.load %alloca_0[%c0_12] : memref<1xf32, #gpu.address_space<private>>
      %8 = arith.divf %7, %cst : f32
      %9 = arith.addf %8, %arg6 : f32
      %10 = math.rsqrt %9 : f32
      %alloca_13 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %c0_14 = arith.constant 0 : index
      memref.store %10, %alloca_13[%c0_14] : memref<1xf32, #gpu.address_space<private>>
      "tile.copy"(%arg5, %alloca_13, %0) {exec_scope = "cta", layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@warpid)]">} : (memref<37xf32>, memref<1xf32, #gpu.address_space<private>>, index) -> ()
      %11 = vector.broadcast %10 : f32 to vector<4xf32>
      %c0_15 = arith.constant 0 : index
      %c8_16 = arith.constant 8 : index
      %c4_17 = arith.constant 4 : index
      scf.for %arg7 = %c0_15 to %c8_16 step %c4_17 {
        %12 = vector.load %alloca_1[%arg7] : memref<8xf32, #gpu.address_space<private>>, vector<4xf32>
        %alloca_18 = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
        %c128 = arith.constant 128 : index
        %13 = arith.muli %arg7, %c128 : index
        %14 = arith.addi %c0, %13 : index
        "tile.copy"(%alloca_18, %arg1, %14) {exec_scope = "cta", layout = #tile.layout<"S[((4, 32, 4)) : ((1@warpid, 1@laneid, 1))]">} : (memref<4xf32, #gpu.address_space<private>>, memref<1000xf32>, index) -> ()
        %c0_19 = arith.constant 0 : index
        %15 = vector.load %alloca_18[%c0_19] : memref<4xf32, #gpu.address_space<private>>, vector<4xf32>
        %alloca_20 = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
        %c128_21 = arith.constant 128 : index
        %16 = arith.muli %arg7, %c128_21 : index
        %17 = arith.addi %c0, %16 : index
        "tile.copy"(%alloca_20, %arg2, %17) {exec_scope = "cta", layout = #tile.layout<"S[((4, 32, 4)) : ((1@warpid, 1@laneid, 1))]">} : (memref<4xf32, #gpu.address_space<private>>, memref<1000xf32>, index) -> ()
        %c0_22 = arith.constant 0 : index
        %18 = vector.load %alloca_20[%c0_22] : memref<4xf32, #gpu.address_space<private>>, vector<4xf32>
        %19 = arith.subf %12, %4 : vector<4xf32>
        %20 = arith.mulf %19, %11 : vector<4xf32>
        %21 = math.fma %20, %15, %18 : vector<4xf32>
        %alloca_23 = memref.alloca() : memref<4xf32, #gpu.address_space<private>>
        %c0_24 = arith.constant 0 : index
        vector.store %21, %alloca_23[%c0_24] : memref<4xf32, #gpu.address_space<private>>, vector<4xf32>
        %c128_25 = arith.constant 128 : index
        %22 = arith.muli %arg7, %c128_25 : index
        %23 = arith.addi %c0, %22 : index
        "tile.copy"(%arg3, %alloca_23, %0, %23) {exec_scope = "cta", layout = #tile.layout<"S[(1, (4, 32, 4)) : (1, (1@warpid, 1@laneid, 1))]">} : (memref<37x1000xf32>, memref<4xf32, #gpu.address_space<private>>, index, index) -> ()
      } {llvm.loop_annotation = #loop_annotation}
      gpu.return
    }
  }
}
