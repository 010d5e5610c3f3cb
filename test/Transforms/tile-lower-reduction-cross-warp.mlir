// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-lower-reduction="fold=tree" | FileCheck %s --check-prefix=TREE
//
// The cross_warp variant: the in-thread fold, the lane butterfly, the warps' partials
// through the op's own workgroup scratch behind the scope's barrier, then every thread
// folds the partials in ascending warp order, applies accum once and stores.

// A warpgroup sum over its 128 threads: a butterfly over lane bits 4..0, a writer per
// warp (lane 0), a named barrier over the warpgroup's own 128 threads (id 8 + its index
// in the block, never barrier 0), then the 4 warp partials in ascending order. The
// scratch holds 4 partials for each of up to 8 warpgroups, and says so.
// CHECK: memref.global "private" @tile_scratch_0 : memref<32xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: tile.scratch = "cross_warp warpgroup reduce: 1 phase(s) x 8 instance(s) x 1 x 4 warp partial(s) x 1 slot(s) of f32: 128 bytes"
// CHECK-LABEL: gpu.func @warpgroup_sum
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:     %[[SCRATCH:.*]] = memref.get_global @tile_scratch_0
// CHECK:     %[[T:.*]] = arith.andi %[[LINEAR:.*]], %c127 : index
// CHECK:     %[[WG:.*]] = arith.shrui %[[LINEAR]], %c7 : index
// CHECK:     %[[BASE:.*]] = arith.muli %[[WG]], %c4 : index
// CHECK:     %[[LANE:.*]] = arith.andi %[[T]], %c31 : index
// CHECK:     %[[WRITER:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK:     scf.if %[[WRITER]] {
// CHECK-NEXT:  memref.store %{{.*}}, %[[SCRATCH]][%{{.*}}]
// CHECK-NEXT: }
// CHECK:     %[[ID:.*]] = arith.addi %{{.*}}, %c8_i32 : i32
// CHECK:     nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// CHECK-NOT: gpu.barrier
// CHECK:     %[[P0:.*]] = memref.load %[[SCRATCH]][%[[BASE]]]
// CHECK:     %[[P1:.*]] = memref.load %[[SCRATCH]]
// CHECK:     %[[P2:.*]] = memref.load %[[SCRATCH]]
// CHECK:     %[[P3:.*]] = memref.load %[[SCRATCH]]
// CHECK:     %[[S01:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK:     %[[S012:.*]] = arith.addf %[[S01]], %[[P2]] : f32
// CHECK:     %[[S:.*]] = arith.addf %[[S012]], %[[P3]] : f32
// CHECK:     memref.store %[[S]], %arg0[%c0]
// CHECK-NOT: tile.reduce
// The tree option folds the partials pairwise, (p0 + p1) + (p2 + p3), by the lanes
// together: lane l reads partial l mod 4, then a butterfly over lane bits 0 then 1 (the
// lower lane's partial on the left: a sum needs no select).
// TREE-LABEL: gpu.func @warpgroup_sum
// TREE:      nvvm.barrier
// TREE:      %[[LANE:.*]] = gpu.lane_id
// TREE:      %[[W:.*]] = arith.andi %[[LANE]], %c3 : index
// TREE:      %[[P:.*]] = memref.load
// TREE-NOT:  memref.load
// TREE:      %[[Q:.*]], %{{.*}} = gpu.shuffle  xor %[[P]], %c1_i32, %c32_i32 : f32
// TREE:      %[[A:.*]] = arith.addf %[[P]], %[[Q]] : f32
// TREE:      %[[R:.*]], %{{.*}} = gpu.shuffle  xor %[[A]], %c2_i32, %c32_i32 : f32
// TREE:      arith.addf %[[A]], %[[R]] : f32
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @warpgroup_sum(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[128 : 1@tid_in_wg]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[128 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// A cta of 8 warps (known_block_size: the thread id is thread_id x), two rows of four
// warps each; accum. The partials of a row are warps 0-3 (row 0) or 4-7 (row 1): the
// scratch is [2 rows][4 warps], one gpu.barrier, and accum comes after the 4 partials.
// CHECK: memref.global "private" @tile_scratch_0 : memref<8xf32, #gpu.address_space<workgroup>>
// CHECK-LABEL: gpu.func @cta_rows_accum
// CHECK:     %[[TID:.*]] = gpu.thread_id  x
// CHECK-NOT: gpu.thread_id  y
// CHECK:     %[[R:.*]] = arith.andi %{{.*}}, %c1 : index
// CHECK:     %[[ROW:.*]] = arith.muli %[[R]], %c4 : index
// CHECK:     scf.if
// CHECK:     gpu.barrier
// CHECK-NOT: nvvm.barrier
// CHECK:     %[[P0:.*]] = memref.load %{{.*}}[%[[ROW]]]
// CHECK-COUNT-3: memref.load
// CHECK:     arith.maxnumf
// CHECK:     arith.maxnumf
// CHECK:     %[[M:.*]] = arith.maxnumf
// CHECK:     %[[OLD:.*]] = memref.load %arg0[%c0]
// CHECK:     %[[R:.*]] = arith.maxnumf %[[OLD]], %[[M]] : f32
// CHECK:     memref.store %[[R]], %arg0[%c0]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @cta_rows_accum(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<2xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "cta", axes = array<i64: 1>, accum = true,
          src_layout = #tile.layout<"S[(2, (4, 32, 2)) : (4@warpid, (1@warpid, 1@laneid, 1))]">,
          dst_layout = #tile.layout<"S[2 : 4@warpid] + R[(32, 4) : (1@laneid, 1@warpid)]">}
        : (memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// Inside a loop the op may run again while slow threads still read its scratch: the
// scratch has two halves, and a counter at the function's entry alternates them, so one
// barrier per run is enough. Not knowing the block, the thread id is x + (y + z Dy) Dx.
// A device function (not a kernel) may be called more than once: the same holds there.
// CHECK: memref.global "private" @tile_scratch_0 : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-SAME: 2 phase(s)
// CHECK-LABEL: func.func @in_a_loop
// CHECK:       %[[COUNTER:.*]] = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
// CHECK:       memref.store %c0_i32, %[[COUNTER]]
// CHECK:       scf.for
// CHECK:         gpu.thread_id  z
// CHECK:         %[[PHASE:.*]] = memref.load %[[COUNTER]]
// CHECK:         %[[NEXT:.*]] = arith.xori %[[PHASE]], %c1_i32 : i32
// CHECK:         memref.store %[[NEXT]], %[[COUNTER]]
// CHECK:         gpu.barrier
// CHECK-NOT:     gpu.barrier
// CHECK:       return
func.func @in_a_loop(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cta", axes = array<i64: 0, 1>,
        src_layout = #tile.layout<"S[(2, 32) : (1@warpid, 1@laneid)]">,
        dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2) : (1@laneid, 1@warpid)]">}
      : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  }
  return
}

// -----

// Two ops, two scratch buffers: no op waits for another's readers.
// CHECK-DAG: memref.global "private" @tile_scratch_0
// CHECK-DAG: memref.global "private" @tile_scratch_1
// CHECK-LABEL: gpu.func @two_ops
// CHECK: memref.get_global @tile_scratch_{{[01]}}
// CHECK: memref.get_global @tile_scratch_{{[01]}}
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @two_ops(%d0: memref<1xf32, #gpu.address_space<private>>, %d1: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%d0, %src) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[128 : 1@tid_in_wg]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[128 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      "tile.reduce"(%d1, %src) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[128 : 1@tid_in_wg]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[128 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}
