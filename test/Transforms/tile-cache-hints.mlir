// RUN: tile-opt %s --tile-lower-copy | FileCheck %s --check-prefix=MARK
// RUN: tile-opt %s --tile-lower-copy --tile-cache-hints | FileCheck %s
// RUN: tile-opt %s --tile-to-ptx | FileCheck %s --check-prefix=PTX
// RUN: tile-opt %s --tile-to-cubin -o %t.cubin
//
// tile.copy's `cache = "streaming"`: tile-lower-copy emits the accesses it emits without
// it, each marked `tile.cache`; tile-cache-hints turns each marked access of global memory
// into its PTX instruction with the `.cs` cache operator (inline PTX, under `scf.if` where
// the access has one condition, as LLVM branches around a masked access); one with a mask
// per element (a vector that may cross the row's end) keeps its plain form.

// MARK-LABEL: gpu.func @row_f32
// MARK:         vector.maskedload {{.*}} {alignment = 16 : i64, tile.cache = "streaming"}
// MARK:         vector.maskedstore {{.*}} {alignment = 16 : i64, tile.cache = "streaming"}
// MARK-LABEL: gpu.func @plain
// MARK-NOT:     tile.cache
// MARK:         gpu.return

// A vector in or out as a whole: the load under its condition, else the padding.
// CHECK-LABEL: gpu.func @row_f32
// CHECK:         %[[PAD:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
// CHECK:         %[[IN:.*]] = arith.andi
// CHECK:         %[[V:.*]] = scf.if %[[IN]] -> (vector<4xf32>) {
// CHECK:           memref.extract_aligned_pointer_as_index
// CHECK:           %[[PTR:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK:           %[[W:.*]] = llvm.inline_asm has_side_effects "ld.global.cs.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l" %[[PTR]] : (!llvm.ptr<1>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK:           %[[F:.*]] = vector.bitcast %{{.*}} : vector<4xi32> to vector<4xf32>
// CHECK:           scf.yield %[[F]] : vector<4xf32>
// CHECK:         } else {
// CHECK:           scf.yield %[[PAD]] : vector<4xf32>
// CHECK:         scf.if %{{.*}} {
// CHECK:           llvm.inline_asm has_side_effects "st.global.cs.v4.b32 [$0], {$1, $2, $3, $4};", "l,r,r,r,r"
// CHECK-NOT:     tile.cache
// CHECK-LABEL: gpu.func @row_bf16
// CHECK:         ld.global.cs.v4.b32
// CHECK:         vector.bitcast %{{.*}} : vector<4xi32> to vector<8xbf16>
// CHECK:         st.global.cs.v4.b32
// Statically inside: no predicate.
// CHECK-LABEL: gpu.func @inside
// CHECK:         llvm.inline_asm has_side_effects "ld.global.cs.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l"
// CHECK:         llvm.inline_asm has_side_effects "st.global.cs.v4.b32 [$0], {$1, $2, $3, $4};", "l,r,r,r,r"
// Scalars: a 4-byte one gets its hint, a 2- or 8-byte one keeps its plain form.
// CHECK-LABEL: gpu.func @scalars
// CHECK:         ld.global.cs.b32 $0, [$1];
// CHECK:         memref.load %{{.*}} : memref<64x1001xf16>
// CHECK:         memref.load %{{.*}} : memref<64x1001xf64>
// CHECK-NOT:     tile.cache
// CHECK-LABEL: gpu.func @plain
// CHECK-NOT:     llvm.inline_asm
// CHECK:         gpu.return

// PTX-LABEL: .entry row_f32(
// PTX:         @%p{{[0-9]+}} bra
// PTX:         ld.global.cs.v4.b32
// PTX:         @%p{{[0-9]+}} bra
// PTX:         ld.global.cs.v4.b32
// PTX:         @%p{{[0-9]+}} bra
// PTX:         st.global.cs.v4.b32
// PTX:         @%p{{[0-9]+}} bra
// PTX:         st.global.cs.v4.b32
// PTX:         ret;
// PTX-LABEL: .entry plain(
// PTX-NOT:     .cs
// PTX:         ret;

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @row_f32(%X: memref<4096x1000xf32>, %Y: memref<4096x1000xf32>, %k: index) kernel {
      %c256 = arith.constant 256 : index
      %row = gpu.block_id x
      %col = arith.muli %k, %c256 : index
      %t = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %col) {exec_scope = "warp", padding = 0xFF800000 : f32, cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<4096x1000xf32>, index, index) -> ()
      "tile.copy"(%Y, %t, %row, %col) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<4096x1000xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
    gpu.func @row_bf16(%X: memref<64x1000xbf16>, %Y: memref<64x1000xbf16>, %k: index) kernel {
      %c256 = arith.constant 256 : index
      %row = gpu.block_id x
      %col = arith.muli %k, %c256 : index
      %t = memref.alloca() : memref<8xbf16, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %col) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xbf16, #gpu.address_space<private>>, memref<64x1000xbf16>, index, index) -> ()
      "tile.copy"(%Y, %t, %row, %col) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<64x1000xbf16>, memref<8xbf16, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
    gpu.func @inside(%X: memref<32x256xf32>, %Y: memref<32x256xf32>) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %t = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %c0, %c0) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<32x256xf32>, index, index) -> ()
      "tile.copy"(%Y, %t, %c0, %c0) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<32x256xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
    gpu.func @scalars(%X: memref<64x1001xf32>, %H: memref<64x1001xf16>, %D: memref<64x1001xf64>, %k: index) kernel {
      %row = gpu.block_id x
      %t = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      %h = memref.alloca() : memref<8xf16, #gpu.address_space<private>>
      %d = memref.alloca() : memref<8xf64, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %k) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<64x1001xf32>, index, index) -> ()
      "tile.copy"(%h, %H, %row, %k) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf16, #gpu.address_space<private>>, memref<64x1001xf16>, index, index) -> ()
      "tile.copy"(%d, %D, %row, %k) {exec_scope = "warp", cache = "streaming",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf64, #gpu.address_space<private>>, memref<64x1001xf64>, index, index) -> ()
      gpu.return
    }
    gpu.func @plain(%X: memref<4096x1000xf32>, %Y: memref<4096x1000xf32>, %k: index) kernel {
      %c256 = arith.constant 256 : index
      %row = gpu.block_id x
      %col = arith.muli %k, %c256 : index
      %t = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
      "tile.copy"(%t, %X, %row, %col) {exec_scope = "warp",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<8xf32, #gpu.address_space<private>>, memref<4096x1000xf32>, index, index) -> ()
      "tile.copy"(%Y, %t, %row, %col) {exec_scope = "warp",
          layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
        : (memref<4096x1000xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
      gpu.return
    }
  }
}
