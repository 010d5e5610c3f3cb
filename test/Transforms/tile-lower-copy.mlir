// RUN: tile-opt %s --split-input-file --tile-lower-copy | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-lower-copy --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
//
// tile.copy's variants: copy_vector (16-byte vectors, whole-vector masks, a full-vector
// fast path where a vector may cross a row's end) and copy_scalar; the thread's
// coordinates from its index; bounds from the memref's shape (memref.dim where dynamic).

// The generated ops carry named locations under the op's own.
// LOC-LABEL: func.func @row_load
// LOC-DAG:   loc("tile.copy.thread"
// LOC-DAG:   loc("tile.copy.bounds"
// LOC-DAG:   loc("tile.copy.loop"
// LOC-DAG:   loc("tile.copy.load"
// LOC-DAG:   loc("tile.copy.registers"

// One row per warp, 8 f32 per lane: lane l's elements start at column 8 l; two
// 16-byte vectors each, in a loop LLVM unrolls. The row's bound is checked once,
// the column's per vector; a vector is in or out as a whole (1000 is a multiple of 4
// and every vector starts at a multiple of 4), so its mask is one bit, broadcast.
// CHECK-LABEL: func.func @row_load
// CHECK-SAME:  (%[[R:.*]]: memref<8xf32, {{.*}}>, %[[X:.*]]: memref<4096x1000xf32>, %[[ROW:.*]]: index, %[[K:.*]]: index)
// CHECK:       %[[COL:.*]] = arith.muli %[[K]]
// CHECK:       %[[LANE:.*]] = gpu.lane_id
// CHECK:       %[[L8:.*]] = arith.muli %[[LANE]], %{{.*}} : index
// CHECK:       %[[START:.*]] = arith.addi %[[COL]], %[[L8]] : index
// CHECK-DAG:   %[[M:.*]] = arith.constant 4096 : index
// CHECK-DAG:   %[[N:.*]] = arith.constant 1000 : index
// CHECK:       %[[ROW_IN:.*]] = arith.cmpi ult, %[[ROW]], %[[M]] : index
// CHECK:       %[[PAD:.*]] = arith.constant dense<0xFF800000> : vector<4xf32>
// CHECK:       scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:         %[[SLOT:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK:         %[[C:.*]] = arith.addi %[[START]], %[[SLOT]] : index
// CHECK:         %[[COL_IN:.*]] = arith.cmpi ult, %[[C]], %[[N]] : index
// CHECK:         %[[IN:.*]] = arith.andi %[[ROW_IN]], %[[COL_IN]] : i1
// CHECK:         %[[MASK:.*]] = vector.broadcast %[[IN]] : i1 to vector<4xi1>
// CHECK:         %[[V:.*]] = vector.maskedload %[[X]][%[[ROW]], %[[C]]], %[[MASK]], %[[PAD]] {alignment = 16 : i64}
// CHECK:         vector.store %[[V]], %[[R]][%[[SLOT]]] : memref<8xf32, {{.*}}>, vector<4xf32>
// CHECK:       } {llvm.loop_annotation = #{{.*}}}
// CHECK-NOT:   tile.
!r8 = memref<8xf32, #gpu.address_space<private>>
func.func @row_load(%r: !r8, %x: memref<4096x1000xf32>, %row: index, %k: index) {
  %c256 = arith.constant 256 : index
  %col = arith.muli %k, %c256 : index
  "tile.copy"(%r, %x, %row, %col) {exec_scope = "warp", padding = 0xFF800000 : f32,
      layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (!r8, memref<4096x1000xf32>, index, index) -> ()
  return
}

// -----

// The same tile stored: registers read as vectors, each stored under its one-bit mask.
// CHECK-LABEL: func.func @row_store
// CHECK-SAME:  (%[[X:.*]]: memref<4096x1000xf32>, %[[R:.*]]: memref<8xf32, {{.*}}>, %[[ROW:[^:]+]]: index
// CHECK:       scf.for %[[I:.*]] =
// CHECK:         %[[SLOT:.*]] = arith.muli %[[I]]
// CHECK:         %[[V:.*]] = vector.load %[[R]][%[[SLOT]]] : memref<8xf32, {{.*}}>, vector<4xf32>
// CHECK:         %[[MASK:.*]] = vector.broadcast %{{.*}} : i1 to vector<4xi1>
// CHECK:         vector.maskedstore %[[X]][%[[ROW]], %{{.*}}], %[[MASK]], %[[V]] {alignment = 16 : i64}
// CHECK-NOT:   tile.
!r8 = memref<8xf32, #gpu.address_space<private>>
func.func @row_store(%x: memref<4096x1000xf32>, %r: !r8, %row: index, %k: index) {
  %c256 = arith.constant 256 : index
  %col = arith.muli %k, %c256 : index
  "tile.copy"(%x, %r, %row, %col) {exec_scope = "warp",
      layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<4096x1000xf32>, !r8, index, index) -> ()
  return
}

// -----

// bf16: 8 elements are 16 bytes, one vector per lane; the column origin is the
// constant 0 and the tile 256 wide, so only the row is checked, once.
// CHECK-LABEL: func.func @row_bf16
// CHECK:       %[[ROW_IN:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK:       %[[MASK:.*]] = vector.broadcast %[[ROW_IN]] : i1 to vector<8xi1>
// CHECK:       vector.maskedload {{.*}}, %[[MASK]], %{{.*}} {alignment = 16 : i64} : memref<64x1000xbf16>, vector<8xi1>, vector<8xbf16> into vector<8xbf16>
// CHECK-NOT:   scf.for
// CHECK-NOT:   tile.
!r8 = memref<8xbf16, #gpu.address_space<private>>
func.func @row_bf16(%r: !r8, %x: memref<64x1000xbf16>, %row: index) {
  %c0 = arith.constant 0 : index
  "tile.copy"(%r, %x, %row, %c0) {exec_scope = "warp",
      layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (!r8, memref<64x1000xbf16>, index, index) -> ()
  return
}

// -----

// 1002 is not a multiple of 4: the last vector of the row may cross its end. The
// whole vector inside: a plain vector load; else element by element, each under its
// own bound (not a masked load: LLVM's NVPTX backend asserts on a masked load whose
// pass-through is not poison, and splits one into scalar loads anyway).
// CHECK-LABEL: func.func @straddle
// CHECK:       %[[N:.*]] = arith.constant 1002 : index
// CHECK:       scf.for
// CHECK:         %[[FIRST:.*]] = arith.cmpi ult, %[[C:.*]], %[[N]] : index
// CHECK:         %[[END:.*]] = arith.addi %[[C]], %{{.*}} : index
// CHECK:         %[[LAST:.*]] = arith.cmpi ult, %[[END]], %[[N]] : index
// CHECK:         %[[FULL:.*]] = arith.andi %[[FIRST]], %[[LAST]] : i1
// CHECK:         %[[V:.*]] = scf.if %[[FULL]] -> (vector<4xf32>) {
// CHECK:           vector.load %{{.*}}[%[[C]]] {alignment = 16 : i64}
// CHECK:         } else {
// CHECK-COUNT-4:   arith.cmpi ult
// CHECK-COUNT-4:   memref.load %{{.*}} : memref<1002xf32>
// CHECK:           vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT:       vector.maskedload
// CHECK:         }
// CHECK:         vector.store %[[V]]
// CHECK-NOT:   tile.
!r8 = memref<8xf32, #gpu.address_space<private>>
func.func @straddle(%r: !r8, %x: memref<1002xf32>, %k: index) {
  %c256 = arith.constant 256 : index
  %o = arith.muli %k, %c256 : index
  "tile.copy"(%r, %x, %o) {exec_scope = "warp",
      layout = #tile.layout<"S[((32, 8)) : ((1@laneid, 1))]">} : (!r8, memref<1002xf32>, index) -> ()
  return
}

// -----

// Rows of 1001 f32 are 4-byte aligned only: one element at a time, padding where
// the element is outside.
// CHECK-LABEL: func.func @scalar
// CHECK:       %[[ROW_IN:.*]] = arith.cmpi ult
// CHECK:       %[[PAD:.*]] = arith.constant 1.000000e+00 : f32
// CHECK:       scf.for %[[I:.*]] =
// CHECK:         %[[C:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK:         %[[V:.*]] = scf.if %[[ROW_IN]] -> (f32) {
// CHECK:           %[[X:.*]] = memref.load %{{.*}}[%{{.*}}, %[[C]]] : memref<64x1001xf32>
// CHECK:           scf.yield %[[X]] : f32
// CHECK:         } else {
// CHECK:           scf.yield %[[PAD]] : f32
// CHECK:         }
// CHECK:         memref.store %[[V]], %{{.*}}[%[[I]]]
// CHECK-NOT:   vector.
// CHECK-NOT:   tile.
!r8 = memref<8xf32, #gpu.address_space<private>>
func.func @scalar(%r: !r8, %x: memref<64x1001xf32>, %row: index) {
  %c0 = arith.constant 0 : index
  "tile.copy"(%r, %x, %row, %c0) {exec_scope = "warp", padding = 1.0 : f32,
      layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (!r8, memref<64x1001xf32>, index, index) -> ()
  return
}

// -----

// A constant origin whose tile fits: no bounds check, plain vector loads.
// CHECK-LABEL: func.func @in_bounds
// CHECK-NOT:   arith.cmpi
// CHECK:       vector.load %{{.*}} {alignment = 16 : i64} : memref<64x256xf32>, vector<4xf32>
// CHECK-NOT:   masked
// CHECK-NOT:   tile.
!r8 = memref<8xf32, #gpu.address_space<private>>
func.func @in_bounds(%r: !r8, %x: memref<64x256xf32>) {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  "tile.copy"(%r, %x, %c5, %c0) {exec_scope = "warp",
      layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (!r8, memref<64x256xf32>, index, index) -> ()
  return
}

// -----

// A dynamic dim's bound is memref.dim; the static row length keeps rows aligned.
// CHECK-LABEL: func.func @dynamic
// CHECK:       %[[M:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x1000xf32>
// CHECK:       arith.cmpi ult, %{{.*}}, %[[M]] : index
// CHECK:       vector.maskedload {{.*}} : memref<?x1000xf32>, vector<4xi1>, vector<4xf32>
// CHECK-NOT:   tile.
!r8 = memref<8xf32, #gpu.address_space<private>>
func.func @dynamic(%r: !r8, %x: memref<?x1000xf32>, %row: index, %k: index) {
  %c256 = arith.constant 256 : index
  %col = arith.muli %k, %c256 : index
  "tile.copy"(%r, %x, %row, %col) {exec_scope = "warp",
      layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (!r8, memref<?x1000xf32>, index, index) -> ()
  return
}

// -----

// Rows on lanes 0, 8, 16: a lane's row is lane / 8, and the lanes with lane / 8 > 2,
// or lane % 8 != 0, hold nothing and skip the copy.
// CHECK-LABEL: func.func @lanes_hold_nothing
// CHECK:       %[[LANE:.*]] = gpu.lane_id
// CHECK:       %[[DIGIT:.*]] = arith.divui %[[LANE]], %{{.*}} : index
// CHECK:       %[[LOW:.*]] = arith.cmpi ult, %[[DIGIT]], %{{.*}} : index
// CHECK:       %[[REST:.*]] = arith.remui %[[LANE]], %{{.*}} : index
// CHECK:       %[[EXACT:.*]] = arith.cmpi eq, %[[REST]], %{{.*}} : index
// CHECK:       %[[HOLDS:.*]] = arith.andi %[[LOW]], %[[EXACT]] : i1
// CHECK:       scf.if %[[HOLDS]] {
// CHECK:         arith.addi %{{.*}}, %[[DIGIT]] : index
// CHECK:         scf.for
// CHECK:           memref.load
// CHECK-NOT:   tile.
!r4 = memref<4xf32, #gpu.address_space<private>>
func.func @lanes_hold_nothing(%r: !r4, %x: memref<5x9xf32>, %row: index) {
  %c0 = arith.constant 0 : index
  "tile.copy"(%r, %x, %row, %c0) {exec_scope = "warp",
      layout = #tile.layout<"S[(3, 4) : (8@laneid, 1)]">} : (!r4, memref<5x9xf32>, index, index) -> ()
  return
}

// -----

// A store of a tile whose rows lanes i, i+8, i+16, i+24 all hold: only replica copy
// 0 (lanes 0..7) stores.
// CHECK-LABEL: func.func @replica_store
// CHECK:       %[[LANE:.*]] = gpu.lane_id
// CHECK:       %[[COPY:.*]] = arith.divui %[[LANE]], %{{.*}} : index
// CHECK:       %[[FIRST:.*]] = arith.cmpi eq, %[[COPY]], %{{.*}} : index
// CHECK:       %[[ROW:.*]] = arith.remui %[[LANE]], %{{.*}} : index
// CHECK:       scf.if %[[FIRST]] {
// CHECK:         scf.for
// CHECK:           scf.if
// CHECK:             memref.store
// CHECK-NOT:   tile.
!r4 = memref<4xf32, #gpu.address_space<private>>
func.func @replica_store(%x: memref<16x16xf32>, %r: !r4, %row: index, %col: index) {
  "tile.copy"(%x, %r, %row, %col) {exec_scope = "warp",
      layout = #tile.layout<"S[(8, 4) : (1@laneid, 1)] + R[4 : 8@laneid]">} : (memref<16x16xf32>, !r4, index, index) -> ()
  return
}

// -----

// A cta of 4 warps, a row per warp: the thread id in the block (known_block_size makes
// it thread_id x) splits into warp (row) and lane (4 columns each).
// CHECK-LABEL: gpu.func @cta
// CHECK:       %[[T:.*]] = gpu.thread_id x
// CHECK:       %[[WARP:.*]] = arith.divui %[[T]], %{{.*}} : index
// CHECK:       %[[LANE:.*]] = arith.remui %[[T]], %{{.*}} : index
// CHECK:       %[[COL:.*]] = arith.muli %[[LANE]], %{{.*}} : index
// CHECK:       %[[ROW:.*]] = arith.addi %{{.*}}, %[[WARP]] : index
// CHECK:       vector.maskedload %{{.*}}[%[[ROW]], %[[COL]]]
// CHECK-NOT:   tile.
!r4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @m {
  gpu.func @cta(%r: !r4, %x: memref<64x128xf32>, %row: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    "tile.copy"(%r, %x, %row, %c0) {exec_scope = "cta",
        layout = #tile.layout<"S[(4, (32, 4)) : (1@warpid, (1@laneid, 1))]">} : (!r4, memref<64x128xf32>, index, index) -> ()
    gpu.return
  }
}
