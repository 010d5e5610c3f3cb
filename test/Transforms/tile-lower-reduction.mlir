// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-lower-reduction="fold=tree" | FileCheck %s --check-prefix=TREE
//
// The `local` variant of tile.reduce: thread-wise scf loops, lane butterflies
// (gpu.shuffle xor, width 32, highest lane bit first; 16-bit slots in pairs),
// accum applied once.


// The demonstration (docs/spec.md): one thread, 4 x f32 -> 1. A single reduction loop
// that starts from src[0] and accumulates src[red] into dst[0].
// CHECK-LABEL: func.func @demo
// CHECK-SAME: (%[[DST:.*]]: memref<1xf32, {{.*}}>, %[[SRC:.*]]: memref<4xf32, {{.*}}>)
// CHECK:       %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:  %[[FIRST:.*]] = memref.load %[[SRC]][%[[C0]]]
// CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
// CHECK:       %[[SUM:.*]] = scf.for %[[RED:.*]] = %[[C1]] to %[[C4]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[FIRST]]) -> (f32) {
// CHECK-NEXT:    %[[X:.*]] = memref.load %[[SRC]][%[[RED]]]
// CHECK-NEXT:    %[[NEW:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT:    scf.yield %[[NEW]] : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  memref.store %[[SUM]], %[[DST]][%[[C0]]]
// CHECK-NOT:   tile.
func.func @demo(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>, accum = false} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Thread scope, accum: the old dst value is combined once, after the fold.
// CHECK-LABEL: func.func @thread_accum
// CHECK-SAME: (%[[DST:.*]]: memref<1xf32, {{.*}}>, %[[SRC:.*]]: memref<4xf32, {{.*}}>)
// CHECK:       %[[M:.*]] = scf.for
// CHECK:         arith.maxnumf
// CHECK:       %[[OLD:.*]] = memref.load %[[DST]]
// CHECK-NEXT:  %[[R:.*]] = arith.maxnumf %[[OLD]], %[[M]] : f32
// CHECK-NEXT:  memref.store %[[R]], %[[DST]]
// CHECK-NOT:   tile.
func.func @thread_accum(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread", accum = true} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A 3-D reduction over axes {0, 2}: (3, 4, 5) -> (4). A spatial loop over the
// 4 kept elements with a reduction loop over the 15 reduced ones inside.
// CHECK-LABEL: func.func @axes_0_2
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
// CHECK:       scf.for %[[SPA:.*]] = %[[C0]] to %[[C4]]
// CHECK:         %[[FIRST:.*]] = memref.load
// CHECK:         %[[C15:.*]] = arith.constant 15 : index
// CHECK:         %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C15]] {{.*}} iter_args(%{{.*}} = %[[FIRST]]) -> (f32)
// CHECK:           arith.addf
// CHECK:         memref.store %[[R]], %{{.*}}[%[[SPA]]]
// CHECK-NOT:   tile.
func.func @axes_0_2(%dst: memref<4xf32, #gpu.address_space<private>>, %src: memref<3x4x5xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0, 2>} : (memref<4xf32, #gpu.address_space<private>>, memref<3x4x5xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Warp, all 32 lanes: 5 shuffles, offsets 16, 8, 4, 2, 1, width 32.
// CHECK-LABEL: func.func @warp_full
// CHECK:       %[[V0:.*]] = memref.load
// CHECK:       %[[W:.*]] = arith.constant 32 : i32
// CHECK-NEXT:  %[[S16:.*]], %{{.*}} = gpu.shuffle  xor %[[V0]], %{{.*}}, %[[W]] : f32
// CHECK-NEXT:  %[[V1:.*]] = arith.addf %[[V0]], %[[S16]]
// CHECK:       %[[S8:.*]], %{{.*}} = gpu.shuffle  xor %[[V1]], %{{.*}}, %[[W]] : f32
// CHECK-NEXT:  %[[V2:.*]] = arith.addf %[[V1]], %[[S8]]
// CHECK:       gpu.shuffle  xor %[[V2]]
// CHECK:       gpu.shuffle  xor
// CHECK:       gpu.shuffle  xor
// CHECK-NOT:   gpu.shuffle
// CHECK:       memref.store
// CHECK-NOT:   tile.
func.func @warp_full(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The offsets, in order, for the 32-lane case.
// CHECK-LABEL: func.func @warp_full_offsets
// CHECK: arith.constant 16 : i32
// CHECK: gpu.shuffle  xor
// CHECK: arith.constant 8 : i32
// CHECK: gpu.shuffle  xor
// CHECK: arith.constant 4 : i32
// CHECK: gpu.shuffle  xor
// CHECK: arith.constant 2 : i32
// CHECK: gpu.shuffle  xor
// CHECK: arith.constant 1 : i32
// CHECK: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
func.func @warp_full_offsets(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "min", exec_scope = "warp", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An mma-style quad reduction over lane bits 0-1: 2 shuffles (2, 1) per slot,
// after folding the thread's own 2 registers of each of its 4 rows.
// CHECK-LABEL: func.func @mma_quad
// CHECK:       scf.for {{.*}} -> (f32, f32, f32, f32)
// CHECK:       %[[O2:.*]] = arith.constant 2 : i32
// CHECK-NEXT:  %[[W:.*]] = arith.constant 32 : i32
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %[[O2]], %[[W]] : f32
// CHECK-COUNT-4: arith.addf
// CHECK-NEXT:  %[[O1:.*]] = arith.constant 1 : i32
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %[[O1]], %[[W]] : f32
// CHECK-COUNT-4: arith.addf
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   tile.
func.func @mma_quad(%dst: memref<4xf32, #gpu.address_space<private>>, %src: memref<8xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>,
      src_layout = #tile.layout<"S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]">,
      dst_layout = #tile.layout<"S[((8, 4)) : ((4@laneid, 1))] + R[4 : 1@laneid]">} : (memref<4xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A strided replica group {i, i+8, i+16, i+24}: lane bits 3-4, offsets 16 then 8.
// CHECK-LABEL: func.func @strided_group
// CHECK:       %[[O16:.*]] = arith.constant 16 : i32
// CHECK:       gpu.shuffle  xor %{{.*}}, %[[O16]]
// CHECK:       %[[O8:.*]] = arith.constant 8 : i32
// CHECK:       gpu.shuffle  xor %{{.*}}, %[[O8]]
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   tile.
func.func @strided_group(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>,
      src_layout = #tile.layout<"S[(8, 4) : (1@laneid, 8@laneid)]">,
      dst_layout = #tile.layout<"S[8 : 1@laneid] + R[4 : 8@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Several dst slots with accum at warp scope: the 4 slots' butterflies are
// interleaved (4 shuffles, then 4 adds, per lane bit), and accum comes once,
// after the last butterfly step.
// CHECK-LABEL: func.func @warp_multi_slot_accum
// CHECK-SAME: (%[[DST:.*]]: memref<4xf32, {{.*}}>, %[[SRC:.*]]: memref<4xf32, {{.*}}>)
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK-COUNT-4: arith.addf
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK-COUNT-4: arith.addf
// CHECK-NOT:   gpu.shuffle
// CHECK:       %[[OLD0:.*]] = memref.load %[[DST]]
// CHECK-NEXT:  %[[NEW0:.*]] = arith.addf %[[OLD0]], %{{.*}}
// CHECK-NEXT:  memref.store %[[NEW0]], %[[DST]]
// CHECK-COUNT-3: memref.store %{{.*}}, %[[DST]]
// CHECK-NOT:   tile.
func.func @warp_multi_slot_accum(%dst: memref<4xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, accum = true,
      src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">,
      dst_layout = #tile.layout<"S[4 : 1] + R[32 : 1@laneid]">} : (memref<4xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A warp reduction over registers only (one row per lane): no shuffle.
// CHECK-LABEL: func.func @warp_row_per_lane
// CHECK:       scf.for
// CHECK:         arith.maxnumf
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   tile.
func.func @warp_row_per_lane(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<64xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warp", axes = array<i64: 1>,
      src_layout = #tile.layout<"S[(32, 64) : (1@laneid, 1)]">,
      dst_layout = #tile.layout<"S[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Warpgroup, thread-local: 16 registers per thread folded in a loop, no shuffle.
// CHECK-LABEL: func.func @warpgroup_thread_local
// CHECK:       %[[C16:.*]] = arith.constant 16 : index
// CHECK:       scf.for %{{.*}} = %{{.*}} to %[[C16]]
// CHECK:         arith.minnumf
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   tile.
func.func @warpgroup_thread_local(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<16xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "min", exec_scope = "warpgroup", axes = array<i64: 1>,
      src_layout = #tile.layout<"S[(128, 16) : (1@tid_in_wg, 1)]">,
      dst_layout = #tile.layout<"S[128 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<16xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind = "sum" folds with arith.addf.
// CHECK-LABEL: func.func @kind_sum
// CHECK: arith.addf
// CHECK-NOT: tile.
func.func @kind_sum(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind = "max" folds with arith.maxnumf.
// CHECK-LABEL: func.func @kind_max
// CHECK: arith.maxnumf
// CHECK-NOT: tile.
func.func @kind_max(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind = "min" folds with arith.minnumf.
// CHECK-LABEL: func.func @kind_min
// CHECK: arith.minnumf
// CHECK-NOT: tile.
func.func @kind_min(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "min", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind = "maximum" folds with arith.maximumf.
// CHECK-LABEL: func.func @kind_maximum
// CHECK: arith.maximumf
// CHECK-NOT: tile.
func.func @kind_maximum(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "maximum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind = "minimum" folds with arith.minimumf.
// CHECK-LABEL: func.func @kind_minimum
// CHECK: arith.minimumf
// CHECK-NOT: tile.
func.func @kind_minimum(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "minimum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dtype f32, kind max, across 32 lanes.
// CHECK-LABEL: func.func @dtype_f32
// CHECK: gpu.shuffle  xor %{{.*}} : f32
// CHECK: arith.maxnumf
// CHECK-NOT: tile.
func.func @dtype_f32(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warp",
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dtype f16, kind sum, across 32 lanes.
// CHECK-LABEL: func.func @dtype_f16
// CHECK: arith.bitcast %{{.*}} : f16 to i16
// CHECK: arith.extui %{{.*}} : i16 to i32
// CHECK: gpu.shuffle  xor %{{.*}} : i32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to f16
// CHECK: arith.addf %{{.*}} : f16
// CHECK-NOT: tile.
func.func @dtype_f16(%dst: memref<1xf16, #gpu.address_space<private>>, %src: memref<1xf16, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp",
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf16, #gpu.address_space<private>>, memref<1xf16, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dtype bf16, kind maximum, across 32 lanes.
// CHECK-LABEL: func.func @dtype_bf16
// CHECK: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: gpu.shuffle  xor %{{.*}} : i32
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK: arith.maximumf %{{.*}} : bf16
// CHECK-NOT: tile.
func.func @dtype_bf16(%dst: memref<1xbf16, #gpu.address_space<private>>, %src: memref<1xbf16, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "maximum", exec_scope = "warp",
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xbf16, #gpu.address_space<private>>, memref<1xbf16, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dtype f64, kind minimum, across 32 lanes.
// CHECK-LABEL: func.func @dtype_f64
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: arith.shrui
// CHECK: gpu.shuffle  xor %{{.*}} : i32
// CHECK: gpu.shuffle  xor %{{.*}} : i32
// CHECK: arith.ori
// CHECK: arith.bitcast %{{.*}} : i64 to f64
// CHECK: arith.minimumf %{{.*}} : f64
// An f64 NaN result is made canonical (0x7fffffffffffffff) once, before the store, so
// that NaN payloads cannot make lanes differ.
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[R:.*]], %[[R]] : f64
// CHECK: arith.select %[[NAN]], %{{.*}}, %[[R]] : f64
// CHECK-NOT: tile.
func.func @dtype_f64(%dst: memref<1xf64, #gpu.address_space<private>>, %src: memref<1xf64, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "minimum", exec_scope = "warp",
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf64, #gpu.address_space<private>>, memref<1xf64, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dtype i32, kind min, across 32 lanes.
// CHECK-LABEL: func.func @dtype_i32
// CHECK: gpu.shuffle  xor %{{.*}} : i32
// CHECK: arith.minsi %{{.*}} : i32
// CHECK-NOT: tile.
func.func @dtype_i32(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "min", exec_scope = "warp",
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dtype i64, kind sum, across 32 lanes.
// CHECK-LABEL: func.func @dtype_i64
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: gpu.shuffle  xor %{{.*}} : i32
// CHECK: gpu.shuffle  xor %{{.*}} : i32
// CHECK: arith.addi %{{.*}} : i64
// CHECK-NOT: tile.
func.func @dtype_i64(%dst: memref<1xi64, #gpu.address_space<private>>, %src: memref<1xi64, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp",
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi64, #gpu.address_space<private>>, memref<1xi64, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Integer max and min are signed.
// CHECK-LABEL: func.func @int_max_signed
// CHECK: arith.maxsi %{{.*}} : i64
// CHECK-NOT: tile.
func.func @int_max_signed(%dst: memref<1xi64, #gpu.address_space<private>>, %src: memref<8xi64, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread"} : (memref<1xi64, #gpu.address_space<private>>, memref<8xi64, #gpu.address_space<private>>) -> ()
  return
}

// -----

// fold=tree: the thread's 5 registers fold pairwise, level by level:
// ((x0 + x1) + (x2 + x3)) + x4.
// TREE-LABEL: func.func @tree_fold
// TREE-COUNT-5: memref.load
// TREE-NEXT:  %[[A:.*]] = arith.addf %[[X0:.*]], %[[X1:.*]] : f32
// TREE-NEXT:  %[[B:.*]] = arith.addf %[[X2:.*]], %[[X3:.*]] : f32
// TREE-NEXT:  %[[C:.*]] = arith.addf %[[A]], %[[B]] : f32
// TREE-NEXT:  %[[D:.*]] = arith.addf %[[C]], %{{.*}} : f32
// TREE-NEXT:  memref.store %[[D]]
// TREE-NOT:   scf.for
// TREE-NOT:   tile.
// CHECK-LABEL: func.func @tree_fold
// CHECK: scf.for
func.func @tree_fold(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<5xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<5xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Packed pairs: 4 f16 slots over 32 lanes move two per 32-bit shuffle, so
// 10 shuffles (2 per lane bit) instead of 20, all of i32. Slot 2k rides in the
// low half, 2k+1 in the high half, bit-exactly (bitcast, extui, shli, ori; back
// with trunci, shrui + trunci, bitcast); each half then combines as before.
// CHECK-LABEL: func.func @packed_pairs_f16
// CHECK:       %[[X0:.*]] = memref.load
// CHECK:       %[[X1:.*]] = memref.load
// CHECK:       %[[X2:.*]] = memref.load
// CHECK:       %[[X3:.*]] = memref.load
// CHECK:       %[[B0:.*]] = arith.bitcast %[[X0]] : f16 to i16
// CHECK-NEXT:  %[[LO:.*]] = arith.extui %[[B0]] : i16 to i32
// CHECK-NEXT:  %[[B1:.*]] = arith.bitcast %[[X1]] : f16 to i16
// CHECK-NEXT:  %[[E1:.*]] = arith.extui %[[B1]] : i16 to i32
// CHECK-NEXT:  %[[HI:.*]] = arith.shli %[[E1]], %[[C16:.*]] : i32
// CHECK-NEXT:  %[[P:.*]] = arith.ori %[[LO]], %[[HI]] : i32
// CHECK:       %[[S:.*]], %{{.*}} = gpu.shuffle  xor %[[P]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:  %[[T0:.*]] = arith.trunci %[[S]] : i32 to i16
// CHECK-NEXT:  %[[SH:.*]] = arith.shrui %[[S]], %[[C16]] : i32
// CHECK-NEXT:  %[[T1:.*]] = arith.trunci %[[SH]] : i32 to i16
// CHECK-NEXT:  %[[Y0:.*]] = arith.bitcast %[[T0]] : i16 to f16
// CHECK-NEXT:  %[[Y1:.*]] = arith.bitcast %[[T1]] : i16 to f16
// CHECK:       gpu.shuffle  xor %{{.*}} : i32
// CHECK:       arith.maxnumf %[[X0]], %[[Y0]] : f16
// CHECK-NEXT:  arith.maxnumf %[[X1]], %[[Y1]] : f16
// CHECK-NEXT:  arith.maxnumf %[[X2]], %{{.*}} : f16
// CHECK-NEXT:  arith.maxnumf %[[X3]], %{{.*}} : f16
// CHECK-COUNT-8: gpu.shuffle  xor %{{.*}} : i32
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   tile.
func.func @packed_pairs_f16(%dst: memref<4xf16, #gpu.address_space<private>>, %src: memref<4xf16, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warp", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">,
      dst_layout = #tile.layout<"S[4 : 1] + R[32 : 1@laneid]">} : (memref<4xf16, #gpu.address_space<private>>, memref<4xf16, #gpu.address_space<private>>) -> ()
  return
}

// -----

// 3 bf16 slots over one lane bit: slots 0 and 1 share a shuffle, the odd last
// slot shuffles alone, widened: 2 shuffles.
// CHECK-LABEL: func.func @packed_pairs_odd_bf16
// CHECK:       arith.shli
// CHECK-NEXT:  arith.ori
// CHECK:       gpu.shuffle  xor %{{.*}} : i32
// CHECK:       %[[W:.*]] = arith.extui %{{.*}} : i16 to i32
// CHECK-NEXT:  %[[S:.*]], %{{.*}} = gpu.shuffle  xor %[[W]], %{{.*}} : i32
// CHECK-NEXT:  arith.trunci %[[S]] : i32 to i16
// CHECK-NOT:   gpu.shuffle
// CHECK-COUNT-3: arith.addf %{{.*}} : bf16
// CHECK-NOT:   tile.
func.func @packed_pairs_odd_bf16(%dst: memref<3xbf16, #gpu.address_space<private>>, %src: memref<3xbf16, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[(2, 3) : (1@laneid, 1)]">,
      dst_layout = #tile.layout<"S[3 : 1] + R[2 : 1@laneid]">} : (memref<3xbf16, #gpu.address_space<private>>, memref<3xbf16, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A src register replica counts once: the fold reads slots 0..3 only (the lowest copy).
// A dst register replica gets the result in each of its slots (0 and 4).
// CHECK-LABEL: func.func @register_replicas
// CHECK-SAME: (%[[DST:.*]]: memref<8xf32, {{.*}}>, %[[SRC:.*]]: memref<8xf32, {{.*}}>)
// CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:   %[[C4:.*]] = arith.constant 4 : index
// CHECK:       %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C4]]
// CHECK:       memref.store %[[SUM]], %[[DST]][%[[C0]]]
// CHECK-NEXT:  memref.store %[[SUM]], %[[DST]][%[[C4]]]
// CHECK-NOT:   memref.store
// CHECK-NOT:   tile.
func.func @register_replicas(%dst: memref<8xf32, #gpu.address_space<private>>, %src: memref<8xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[4 : 1] + R[2 : 4]">, dst_layout = #tile.layout<"S[1 : 1] + R[2 : 4]">}
    : (memref<8xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// One element, no lanes, no accum: no arithmetic touches it, so a NaN is made
// canonical on the way (0x7fffffff), as every combine would have made it.
// CHECK-LABEL: func.func @copy_makes_nan_canonical
// CHECK-DAG:   %[[BITS:.*]] = arith.constant 2147483647 : i32
// CHECK-DAG:   %[[X:.*]] = memref.load
// CHECK:       %[[ISNAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK:       %[[NAN:.*]] = arith.bitcast %[[BITS]] : i32 to f32
// CHECK:       arith.select %[[ISNAN]], %[[NAN]], %[[X]] : f32
func.func @copy_makes_nan_canonical(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread", axes = array<i64: 0>}
    : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// f64 keeps a NaN operand's payload on NVIDIA GPUs: the thread-wise path makes its NaN
// canonical (0x7fffffffffffffff), as the butterfly path does, so the bits never depend
// on the path.
// CHECK-LABEL: func.func @f64_thread_wise_nan
// CHECK:       %[[S:.*]] = scf.for
// CHECK:       %[[BITS:.*]] = arith.constant 9223372036854775807 : i64
// CHECK:       %[[ISNAN:.*]] = arith.cmpf uno, %[[S]], %[[S]] : f64
// CHECK:       %[[NAN:.*]] = arith.bitcast %[[BITS]] : i64 to f64
// CHECK:       arith.select %[[ISNAN]], %[[NAN]], %[[S]] : f64
func.func @f64_thread_wise_nan(%dst: memref<1xf64, #gpu.address_space<private>>, %src: memref<4xf64, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>}
    : (memref<1xf64, #gpu.address_space<private>>, memref<4xf64, #gpu.address_space<private>>) -> ()
  return
}
