// layernorm over the rows of a 37 x 1000 f32 matrix, as tile_mlir.kernels builds it with the plan
// warp: 4 row(s) per CTA of 128 threads, 1 warp(s) per row, 32 elements per thread per chunk, 1 chunk(s) of 1024 columns.
// Arguments: %arg0 = X, %arg1 = W, %arg2 = B, %arg3 = Y, %arg4 = MEAN, %arg5 = RSTD, %arg6 = eps.
// Written by python/tile_mlir/kernels/forward.py; regenerate with
//   python -m tile_mlir.kernels layernorm --shape 37x1000 --dtype f32 --emit > examples/layernorm.mlir
#loop_unroll = #llvm.loop_unroll<full = true>
#loop_annotation = #llvm.loop_annotation<unroll = #loop_unroll>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @layernorm(%arg0: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg1: memref<1000xf32> {llvm.align = 16 : i64}, %arg2: memref<1000xf32> {llvm.align = 16 : i64}, %arg3: memref<37x1000xf32> {llvm.align = 16 : i64}, %arg4: memref<37xf32> {llvm.align = 16 : i64}, %arg5: memref<37xf32> {llvm.align = 16 : i64}, %arg6: f32) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
      %block_id_x = gpu.block_id  x
      %c4 = arith.constant 4 : index
      %0 = arith.muli %block_id_x, %c4 : index
      %alloca = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_0 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %alloca_1 = memref.alloca() : memref<32xf32, #gpu.address_space<private>>
      %alloca_2 = memref.alloca() : memref<32xf32, #gpu.address_space<private>>
      %alloca_3 = memref.alloca() : memref<32xf32, #gpu.address_space<private>>
      %cst = arith.constant 1.000000e+03 : f32
      %cst_4 = arith.constant 0.000000e+00 : f32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c1_5 = arith.constant 1 : index
      %1 = scf.for %arg7 = %c0 to %c1 step %c1_5 iter_args(%arg8 = %cst_4) -> (f32) {
        %c1024 = arith.constant 1024 : index
        %14 = arith.muli %arg7, %c1024 : index
        "tile.copy"(%alloca_1, %arg0, %0, %14) {exec_scope = "cta", layout = #tile.layout<"S[(4, (8, 32, 4)) : (1@warpid, (4, 1@laneid, 1))]">} : (memref<32xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
        %c0_22 = arith.constant 0 : index
        %c32_23 = arith.constant 32 : index
        %c4_24 = arith.constant 4 : index
        %15 = scf.for %arg9 = %c0_22 to %c32_23 step %c4_24 iter_args(%arg10 = %arg8) -> (f32) {
          %16 = vector.load %alloca_1[%arg9] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %17 = vector.reduction <add>, %16, %arg10 : vector<4xf32> into f32
          scf.yield %17 : f32
        } {llvm.loop_annotation = #loop_annotation}
        scf.yield %15 : f32
      }
      %c0_6 = arith.constant 0 : index
      memref.store %1, %alloca[%c0_6] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(4, (32)) : (1@warpid, (1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_7 = arith.constant 0 : index
      %2 = memref.load %alloca_0[%c0_7] : memref<1xf32, #gpu.address_space<private>>
      %3 = arith.divf %2, %cst : f32
      %4 = vector.broadcast %3 : f32 to vector<4xf32>
      %thread_id_x = gpu.thread_id  x
      %c32 = arith.constant 32 : index
      %5 = arith.remui %thread_id_x, %c32 : index
      %c4_8 = arith.constant 4 : index
      %6 = arith.muli %5, %c4_8 : index
      %cst_9 = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
      %7 = vector.broadcast %cst_4 : f32 to vector<4xf32>
      %c0_10 = arith.constant 0 : index
      %c1_11 = arith.constant 1 : index
      %c1_12 = arith.constant 1 : index
      %8 = scf.for %arg7 = %c0_10 to %c1_11 step %c1_12 iter_args(%arg8 = %cst_4) -> (f32) {
        %c1_22 = arith.constant 1 : index
        %14 = arith.subi %c1_22, %arg7 : index
        %c1_23 = arith.constant 1 : index
        %15 = arith.subi %14, %c1_23 : index
        %c1024 = arith.constant 1024 : index
        %16 = arith.muli %15, %c1024 : index
        %c0_24 = arith.constant 0 : index
        %17 = arith.cmpi ne, %arg7, %c0_24 : index
        scf.if %17 {
          "tile.copy"(%alloca_1, %arg0, %0, %16) {exec_scope = "cta", layout = #tile.layout<"S[(4, (8, 32, 4)) : (1@warpid, (4, 1@laneid, 1))]">} : (memref<32xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
        }
        %18 = arith.addi %16, %6 : index
        %c0_25 = arith.constant 0 : index
        %c8 = arith.constant 8 : index
        %c1_26 = arith.constant 1 : index
        %19 = scf.for %arg9 = %c0_25 to %c8 step %c1_26 iter_args(%arg10 = %arg8) -> (f32) {
          %c4_27 = arith.constant 4 : index
          %20 = arith.muli %arg9, %c4_27 : index
          %21 = vector.load %alloca_1[%20] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %22 = arith.subf %21, %4 : vector<4xf32>
          %c1000 = arith.constant 1000 : index
          %c128 = arith.constant 128 : index
          %23 = arith.muli %arg9, %c128 : index
          %24 = arith.addi %18, %23 : index
          %25 = arith.subi %c1000, %24 : index
          %26 = vector.broadcast %25 : index to vector<4xindex>
          %27 = arith.cmpi slt, %cst_9, %26 : vector<4xindex>
          %28 = arith.mulf %22, %22 : vector<4xf32>
          %29 = arith.select %27, %28, %7 : vector<4xi1>, vector<4xf32>
          %30 = vector.reduction <add>, %29, %arg10 : vector<4xf32> into f32
          scf.yield %30 : f32
        } {llvm.loop_annotation = #loop_annotation}
        scf.yield %19 : f32
      }
      %c0_13 = arith.constant 0 : index
      memref.store %8, %alloca[%c0_13] : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%alloca_0, %alloca) {axes = array<i64: 1>, dst_layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">, exec_scope = "cta", kind = "sum", src_layout = #tile.layout<"S[(4, (32)) : (1@warpid, (1@laneid))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      %c0_14 = arith.constant 0 : index
      %9 = memref.load %alloca_0[%c0_14] : memref<1xf32, #gpu.address_space<private>>
      %10 = arith.divf %9, %cst : f32
      %11 = arith.addf %10, %arg6 : f32
      %12 = math.rsqrt %11 : f32
      %13 = vector.broadcast %12 : f32 to vector<4xf32>
      %c0_15 = arith.constant 0 : index
      %c1_16 = arith.constant 1 : index
      %c1_17 = arith.constant 1 : index
      scf.for %arg7 = %c0_15 to %c1_16 step %c1_17 {
        %c1024 = arith.constant 1024 : index
        %14 = arith.muli %arg7, %c1024 : index
        %c0_22 = arith.constant 0 : index
        %15 = arith.cmpi ne, %arg7, %c0_22 : index
        scf.if %15 {
          "tile.copy"(%alloca_1, %arg0, %0, %14) {exec_scope = "cta", layout = #tile.layout<"S[(4, (8, 32, 4)) : (1@warpid, (4, 1@laneid, 1))]">} : (memref<32xf32, #gpu.address_space<private>>, memref<37x1000xf32>, index, index) -> ()
        }
        "tile.copy"(%alloca_2, %arg1, %14) {exec_scope = "cta", layout = #tile.layout<"S[((8, 32, 4)) : ((4, 1@laneid, 1))] + R[4 : 1@warpid]">} : (memref<32xf32, #gpu.address_space<private>>, memref<1000xf32>, index) -> ()
        "tile.copy"(%alloca_3, %arg2, %14) {exec_scope = "cta", layout = #tile.layout<"S[((8, 32, 4)) : ((4, 1@laneid, 1))] + R[4 : 1@warpid]">} : (memref<32xf32, #gpu.address_space<private>>, memref<1000xf32>, index) -> ()
        %c0_23 = arith.constant 0 : index
        %c32_24 = arith.constant 32 : index
        %c4_25 = arith.constant 4 : index
        scf.for %arg8 = %c0_23 to %c32_24 step %c4_25 {
          %16 = vector.load %alloca_1[%arg8] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %17 = vector.load %alloca_2[%arg8] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %18 = vector.load %alloca_3[%arg8] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
          %19 = arith.subf %16, %4 : vector<4xf32>
          %20 = arith.mulf %19, %13 : vector<4xf32>
          %21 = math.fma %20, %17, %18 : vector<4xf32>
          vector.store %21, %alloca_1[%arg8] : memref<32xf32, #gpu.address_space<private>>, vector<4xf32>
        } {llvm.loop_annotation = #loop_annotation}
        "tile.copy"(%arg3, %alloca_1, %0, %14) {exec_scope = "cta", layout = #tile.layout<"S[(4, (8, 32, 4)) : (1@warpid, (4, 1@laneid, 1))]">} : (memref<37x1000xf32>, memref<32xf32, #gpu.address_space<private>>, index, index) -> ()
      }
      %alloca_18 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %c0_19 = arith.constant 0 : index
      memref.store %3, %alloca_18[%c0_19] : memref<1xf32, #gpu.address_space<private>>
      "tile.copy"(%arg4, %alloca_18, %0) {exec_scope = "cta", layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">} : (memref<37xf32>, memref<1xf32, #gpu.address_space<private>>, index) -> ()
      %alloca_20 = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %c0_21 = arith.constant 0 : index
      memref.store %12, %alloca_20[%c0_21] : memref<1xf32, #gpu.address_space<private>>
      "tile.copy"(%arg5, %alloca_20, %0) {exec_scope = "cta", layout = #tile.layout<"S[4 : 1@warpid] + R[(32) : (1@laneid)]">} : (memref<37xf32>, memref<1xf32, #gpu.address_space<private>>, index) -> ()
      gpu.return
    }
  }
}
