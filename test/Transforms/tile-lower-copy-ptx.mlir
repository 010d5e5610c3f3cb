// RUN: tile-opt %s --tile-to-ptx | FileCheck %s
// RUN: tile-opt %s --tile-to-cubin -o %t.cubin
//
// tile.copy's PTX on sm_90a, through the whole pipeline and ptxas: 16-byte vector
// accesses where the layout and the alignment allow, each predicated on its vector
// being inside; scalar ones elsewhere.

// f32, 8 per lane: two ld.global.v4 and two st.global.v4 per lane; nothing scalar,
// nothing in local memory.
// CHECK-LABEL: .entry row_f32(
// CHECK-NOT:     {{ld|st}}.global.b32
// CHECK-COUNT-2: ld.global.v4.b32
// CHECK-NOT:     {{ld|st}}.global.b32
// CHECK-COUNT-2: st.global.v4.b32
// CHECK-NOT:     {{ld|st}}.{{global.b32|local}}
// CHECK:         ret;

// bf16, 8 per lane: 16 bytes, one ld.global.v4.b32 (pairs of bf16 per 32-bit register).
// CHECK-LABEL: .entry row_bf16(
// CHECK:         ld.global.v4.b32
// CHECK-NOT:     ld.global
// CHECK:         st.global.v4.b32
// CHECK-NOT:     {{ld|st}}.global
// CHECK:         ret;

// An mma-accumulator-like tile: pairs of registers are consecutive in memory, so
// 8-byte vectors (4 per lane each way).
// CHECK-LABEL: .entry mma_f32(
// CHECK-COUNT-4: ld.global.v2.b32
// CHECK-COUNT-4: st.global.v2.b32
// CHECK:         ret;

// Rows of 1001 f32 are only 4-byte aligned: scalar accesses.
// CHECK-LABEL: .entry row_unaligned(
// CHECK-NOT:     .v4
// CHECK-COUNT-8: ld.global.b32
// CHECK-NOT:     .v4
// CHECK:         ret;

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @row_f32(%X: memref<4096x1000xf32>, %Y: memref<4096x1000xf32>, %k: index) kernel {
      %c256 = arith.constant 256 : index
      %row = gpu.block_id x
      %col = arith.muli %k, %c256 : index
      %t = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %col) {exec_scope = "warp", padding = 0xFF800000 : f32,
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<4096x1000xf32>, index, index) -> ()
      "tile.copy"(%Y, %t, %row, %col) {exec_scope = "warp",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<4096x1000xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
    gpu.func @row_bf16(%X: memref<64x1000xbf16>, %Y: memref<64x1000xbf16>, %k: index) kernel {
      %c256 = arith.constant 256 : index
      %row = gpu.block_id x
      %col = arith.muli %k, %c256 : index
      %t = memref.alloca() : memref<8xbf16, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %col) {exec_scope = "warp",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xbf16, #gpu.address_space<private>>, memref<64x1000xbf16>, index, index) -> ()
      "tile.copy"(%Y, %t, %row, %col) {exec_scope = "warp",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<64x1000xbf16>, memref<8xbf16, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
    gpu.func @mma_f32(%X: memref<100x100xf32>, %Y: memref<100x100xf32>) kernel {
      %c32 = arith.constant 32 : index
      %c8 = arith.constant 8 : index
      %b = gpu.block_id x
      %row = arith.muli %b, %c32 : index
      %col = arith.muli %b, %c8 : index
      %t = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %col) {exec_scope = "warp",
          layout = #tile.layout<"S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<100x100xf32>, index, index) -> ()
      "tile.copy"(%Y, %t, %row, %col) {exec_scope = "warp",
          layout = #tile.layout<"S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]">}
        : (memref<100x100xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
    gpu.func @row_unaligned(%X: memref<64x1001xf32>, %Y: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %row = gpu.block_id x
      %t = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %c0) {exec_scope = "warp",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<64x1001xf32>, index, index) -> ()
      %a = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      "tile.reduce"(%a, %t) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>}
        : (memref<1xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
      %lane = gpu.lane_id
      %v = memref.load %a[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %v, %Y[%lane] : memref<64xf32>
      gpu.return
    }
  }
}
