// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-lower-reduction="chip=sm_80" | FileCheck %s --check-prefix=OPTION
//
// Dispatch between local_redux (priority 15) and local (priority 10). A
// full-warp i32 reduction on sm_80+ becomes one nvvm.redux.sync per dst slot;
// anything else, or dispatch = "local", stays on local's shuffle butterfly.


// sm_90a, i32, all 32 lanes: one redux.sync with the full mask, no shuffle.
// CHECK-LABEL: gpu.func @redux_sum
// CHECK-SAME: (%[[DST:.*]]: memref<1xi32, {{.*}}>, %[[SRC:.*]]: memref<1xi32, {{.*}}>)
// CHECK:       %[[V:.*]] = memref.load %[[SRC]]
// CHECK-NEXT:  %[[MASK:.*]] = arith.constant -1 : i32
// CHECK-NEXT:  %[[R:.*]] = nvvm.redux.sync  add %[[V]], %[[MASK]] : i32 -> i32
// CHECK-NEXT:  memref.store %[[R]], %[[DST]]
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   tile.
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @redux_sum(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
        src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// Several dst slots, registers folded first, accum: local's interleaved fold
// loop, one redux.sync per slot, then accum once per slot (signed max).
// CHECK-LABEL: gpu.func @redux_multi_slot_accum
// CHECK-SAME: (%[[DST:.*]]: memref<2xi32, {{.*}}>, %[[SRC:.*]]: memref<8xi32, {{.*}}>)
// CHECK:       %[[F:.*]]:2 = scf.for {{.*}} -> (i32, i32)
// CHECK:         arith.maxsi
// CHECK:         arith.maxsi
// CHECK:       %[[MASK:.*]] = arith.constant -1 : i32
// CHECK-NEXT:  %[[R0:.*]] = nvvm.redux.sync  max %[[F]]#0, %[[MASK]] : i32 -> i32
// CHECK-NEXT:  %[[R1:.*]] = nvvm.redux.sync  max %[[F]]#1, %[[MASK]] : i32 -> i32
// CHECK-NEXT:  %[[OLD0:.*]] = memref.load %[[DST]]
// CHECK-NEXT:  %[[NEW0:.*]] = arith.maxsi %[[OLD0]], %[[R0]] : i32
// CHECK-NEXT:  memref.store %[[NEW0]], %[[DST]]
// CHECK:       %[[OLD1:.*]] = memref.load %[[DST]]
// CHECK-NEXT:  %[[NEW1:.*]] = arith.maxsi %[[OLD1]], %[[R1]] : i32
// CHECK-NEXT:  memref.store %[[NEW1]], %[[DST]]
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   tile.
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @redux_multi_slot_accum(%dst: memref<2xi32, #gpu.address_space<private>>, %src: memref<8xi32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warp", axes = array<i64: 1>, accum = true,
        src_layout = #tile.layout<"S[(2, (32, 4)) : (4, (1@laneid, 1))]">,
        dst_layout = #tile.layout<"S[2 : 1] + R[32 : 1@laneid]">} : (memref<2xi32, #gpu.address_space<private>>, memref<8xi32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// The NaN kinds of an integer are the plain ones: minimum -> redux min.
// CHECK-LABEL: gpu.func @redux_minimum
// CHECK:       nvvm.redux.sync  min
// CHECK-NOT:   gpu.shuffle
gpu.module @kernels [#nvvm.target<chip = "sm_80">] {
  gpu.func @redux_minimum(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "minimum", exec_scope = "warp",
        src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// sm_70 has no redux.sync: local's 5-step butterfly.
// CHECK-LABEL: gpu.func @sm70_falls_back
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT:   nvvm.redux.sync
gpu.module @kernels [#nvvm.target<chip = "sm_70">] {
  gpu.func @sm70_falls_back(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp",
        src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// f32 has no redux add: local's butterfly.
// CHECK-LABEL: gpu.func @f32_falls_back
// CHECK-COUNT-5: gpu.shuffle  xor %{{.*}} : f32
// CHECK-NOT:   nvvm.redux.sync
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @f32_falls_back(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp",
        src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// A 4-lane group (lane bits 0-1) is not the whole warp: local's 2 shuffles.
// CHECK-LABEL: gpu.func @quad_falls_back
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}} : i32
// CHECK-NOT:   gpu.shuffle
// CHECK-NOT:   nvvm.redux.sync
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @quad_falls_back(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>,
        src_layout = #tile.layout<"S[(8, 4) : (4@laneid, 1@laneid)]">,
        dst_layout = #tile.layout<"S[8 : 4@laneid] + R[4 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// dispatch = "local" forces the butterfly where redux would apply.
// CHECK-LABEL: gpu.func @forced_local
// CHECK-COUNT-5: gpu.shuffle  xor %{{.*}} : i32
// CHECK-NOT:   nvvm.redux.sync
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @forced_local(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", dispatch = "local",
        src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// No gpu.module: the chip comes from the pass option. Without it, local
// (the chip is unknown); with chip=sm_80, redux.
// CHECK-LABEL: func.func @chip_from_option
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT:   nvvm.redux.sync
// OPTION-LABEL: func.func @chip_from_option
// OPTION:       nvvm.redux.sync  add
// OPTION-NOT:   gpu.shuffle
func.func @chip_from_option(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp",
      src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
  return
}
