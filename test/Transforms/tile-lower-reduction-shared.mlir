// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-lower-reduction="fold=tree" | FileCheck %s --check-prefix=TREE
//
// The shared variant: tiles in workgroup memory. Groups of G lanes each reduce one dst
// element: lane j folds the elements r = j, j + G, ... in increasing r, a butterfly
// under the group's own member mask, lane 0 writes dst (accum once), then the barrier
// of the scope.

// A warp, 24 dst elements of 8 terms: G = 2 (16 groups, 2 rounds, the second one for
// elements 16..23 only). Lane j = t % 2 of group t / 2 folds terms j, j + 2, j + 4, j + 6
// (a loop from its second term); one shuffle (offset 1) under the mask 0b11 << (t & 30);
// lane 0 adds the old value once and stores; then __syncwarp, not a block barrier.
// CHECK-LABEL: gpu.func @warp_groups_of_2
// CHECK:     %[[LINEAR:.*]] = arith.addi %thread_id_x, %{{.*}} : index
// CHECK:     %[[T:.*]] = arith.andi %[[LINEAR]], %c31 : index
// CHECK:     %[[K:.*]] = arith.divui %[[T]], %c2 : index
// CHECK:     %[[J:.*]] = arith.remui %[[T]], %c2 : index
// CHECK:     %[[FIRST:.*]] = arith.andi %[[T]], %c30 : index
// CHECK:     %[[FIRST32:.*]] = arith.index_cast %[[FIRST]] : index to i32
// CHECK:     %[[MASK:.*]] = arith.shli %c3_i32, %[[FIRST32]] : i32
// CHECK:     scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK:       %[[ROUND:.*]] = arith.muli %[[I]], %c16 : index
// CHECK:       %[[E:.*]] = arith.addi %[[K]], %[[ROUND]] : index
// CHECK:       %[[IN:.*]] = arith.cmpi ult, %[[E]], %c24 : index
// CHECK:       scf.if %[[IN]] {
// CHECK:         %[[X0:.*]] = memref.load %arg1
// CHECK:         %[[ACC:.*]] = scf.for %[[R:.*]] = %c1{{.*}} to %c4 step %c1{{.*}} iter_args(%[[A:.*]] = %[[X0]]) -> (f32) {
// CHECK:           arith.muli %[[R]], %c2{{.*}} : index
// CHECK:           %[[X:.*]] = memref.load %arg1
// CHECK:           %[[SUM:.*]] = arith.addf %[[A]], %[[X]] : f32
// CHECK:           scf.yield %[[SUM]] : f32
// CHECK:         }
// CHECK-NOT:     nvvm.shfl.sync
// CHECK:         %[[OTHER:.*]] = nvvm.shfl.sync  bfly %[[MASK]], %[[ACC]], %c1_i32, %c31_i32 : f32 -> f32
// CHECK-NOT:     nvvm.shfl.sync
// CHECK:         %[[V:.*]] = arith.addf %[[ACC]], %[[OTHER]] : f32
// CHECK:         %[[WRITER:.*]] = arith.cmpi eq, %[[J]], %c0{{.*}} : index
// CHECK:         scf.if %[[WRITER]] {
// CHECK:           %[[OLD:.*]] = memref.load %arg0
// CHECK:           %[[NEW:.*]] = arith.addf %[[OLD]], %[[V]] : f32
// CHECK:           memref.store %[[NEW]], %arg0
// CHECK-NEXT:    }
// CHECK:       }
// CHECK:     }
// CHECK:     nvvm.bar.warp.sync %c-1_i32 : i32
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tile.reduce
// CHECK:     gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @warp_groups_of_2(%dst: memref<4x6xf32, #gpu.address_space<workgroup>>, %src: memref<4x8x6xf32, #gpu.address_space<workgroup>>) kernel {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, accum = true} : (memref<4x6xf32, #gpu.address_space<workgroup>>, memref<4x8x6xf32, #gpu.address_space<workgroup>>) -> ()
      gpu.return
    }
  }
}

// -----

// A warpgroup, 32 elements of 7 f16 terms: G = 4 (32 groups, one round). 7 = 1 * 4 + 3:
// lanes 0-2 fold two terms (j, j + 4), lane 3 one. A butterfly over offsets 2 then 1
// (highest first) under the mask 0xf << (t & 28), the f16 widened bit-exactly to i32;
// lane 0 stores; the warpgroup's own named barrier (8 + its index, 128 threads).
// CHECK-LABEL: gpu.func @warpgroup_uneven
// CHECK:     %[[T:.*]] = arith.andi %{{.*}}, %c127 : index
// CHECK:     %[[WG:.*]] = arith.shrui %{{.*}}, %c7 : index
// CHECK:     %[[K:.*]] = arith.divui %[[T]], %c4 : index
// CHECK:     %[[J:.*]] = arith.remui %[[T]], %c4 : index
// CHECK:     %[[FIRST:.*]] = arith.andi %[[T]], %c28 : index
// CHECK:     %[[MASK:.*]] = arith.shli %c15_i32, %{{.*}} : i32
// CHECK-NOT: scf.for
// CHECK:     %[[X0:.*]] = memref.load %arg1
// CHECK:     %[[MORE:.*]] = arith.cmpi ult, %[[J]], %c3 : index
// CHECK:     %[[ACC:.*]] = scf.if %[[MORE]] -> (f16) {
// CHECK:       %[[X1:.*]] = memref.load %arg1
// CHECK:       %[[M:.*]] = arith.maxnumf %[[X0]], %[[X1]] : f16
// CHECK:       scf.yield %[[M]] : f16
// CHECK:     } else {
// CHECK:       scf.yield %[[X0]] : f16
// CHECK:     }
// CHECK:     %[[W2:.*]] = arith.extui %{{.*}} : i16 to i32
// CHECK:     nvvm.shfl.sync  bfly %[[MASK]], %[[W2]], %c2_i32, %c31_i32 : i32 -> i32
// CHECK:     %[[V2:.*]] = arith.maxnumf %[[ACC]], %{{.*}} : f16
// CHECK:     nvvm.shfl.sync  bfly %[[MASK]], %{{.*}}, %c1_i32, %c31_i32 : i32 -> i32
// CHECK:     %[[V1:.*]] = arith.maxnumf %[[V2]], %{{.*}} : f16
// CHECK:     %[[WRITER:.*]] = arith.cmpi eq, %[[J]], %c0 : index
// CHECK:     scf.if %[[WRITER]] {
// CHECK-NEXT:  memref.store %[[V1]], %arg0[%[[K]]] : memref<32xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// CHECK:     %[[WG32:.*]] = arith.index_cast %[[WG]] : index to i32
// CHECK:     %[[ID:.*]] = arith.addi %[[WG32]], %c8_i32 : i32
// CHECK:     nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// CHECK-NOT: gpu.barrier
// The tree option folds each lane's terms pairwise; here two or one, so the same.
// TREE-LABEL: gpu.func @warpgroup_uneven
// TREE:      scf.if %{{.*}} -> (f16) {
// TREE:        arith.maxnumf
// TREE:        scf.yield
// TREE:      } else {
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @warpgroup_uneven(%dst: memref<32xf16, #gpu.address_space<workgroup>>, %src: memref<32x7xf16, #gpu.address_space<workgroup>>) kernel {
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warpgroup", axes = array<i64: 1>} : (memref<32xf16, #gpu.address_space<workgroup>>, memref<32x7xf16, #gpu.address_space<workgroup>>) -> ()
      gpu.return
    }
  }
}

// -----

// A cta of 64 threads (known_block_size: the thread id is x alone), one element of
// 2 x 64 f64 terms: G = 32, so the mask is the full warp's and the second warp's group
// has no element (k < 1). Five steps, 16 down to 1, each moving the f64 in two 32-bit
// halves; the f64 result made canonical if NaN; gpu.barrier for the block.
// CHECK-LABEL: gpu.func @cta_whole_warps
// CHECK:     %[[TID:.*]] = gpu.thread_id  x
// CHECK-NOT: gpu.thread_id  y
// CHECK:     %[[K:.*]] = arith.divui %[[TID]], %c32 : index
// CHECK:     %[[J:.*]] = arith.remui %[[TID]], %c32 : index
// CHECK:     %[[IN:.*]] = arith.cmpi ult, %[[K]], %c1 : index
// CHECK:     scf.if %[[IN]] {
// CHECK:       scf.for {{.*}} -> (f64) {
// CHECK:         arith.minimumf
// CHECK-COUNT-2: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c16_i32, %c31_i32 : i32 -> i32
// CHECK-COUNT-2: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c8_i32, %c31_i32 : i32 -> i32
// CHECK-COUNT-2: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c4_i32, %c31_i32 : i32 -> i32
// CHECK-COUNT-2: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c2_i32, %c31_i32 : i32 -> i32
// CHECK-COUNT-2: nvvm.shfl.sync  bfly %c-1_i32, %{{.*}}, %c1_i32, %c31_i32 : i32 -> i32
// CHECK:       %[[V:.*]] = arith.minimumf
// CHECK:       scf.if
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f64
// CHECK:         %[[CANON:.*]] = arith.select %[[NAN]], %{{.*}}, %[[V]] : f64
// CHECK:         memref.store %[[CANON]], %arg0
// CHECK:     gpu.barrier
// CHECK-NOT: nvvm.barrier
// CHECK-NOT: nvvm.bar.warp.sync
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @cta_whole_warps(%dst: memref<1xf64, #gpu.address_space<workgroup>>, %src: memref<2x64xf64, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "minimum", exec_scope = "cta", axes = array<i64: 0, 1>} : (memref<1xf64, #gpu.address_space<workgroup>>, memref<2x64xf64, #gpu.address_space<workgroup>>) -> ()
      gpu.return
    }
  }
}

// -----

// A cta of 256 threads, 32 rows of 32: G = 8 (32 groups, one row each). Lane j folds
// terms j, j + 8, j + 16, j + 24 (linear: a loop over the last three); with fold=tree
// ((x0, x1), (x2, x3)) unrolled. Then three shuffles, 4, 2, 1, under 0xff << (t & 24).
// CHECK-LABEL: gpu.func @cta_rows
// CHECK:     %[[MASK:.*]] = arith.shli %c255_i32, %{{.*}} : i32
// CHECK:     scf.for {{.*}} = %c1 to %c4 step %c1 iter_args
// CHECK:     nvvm.shfl.sync  bfly %[[MASK]], %{{.*}}, %c4_i32, %c31_i32 : f32 -> f32
// CHECK:     nvvm.shfl.sync  bfly %[[MASK]], %{{.*}}, %c2_i32, %c31_i32 : f32 -> f32
// CHECK:     nvvm.shfl.sync  bfly %[[MASK]], %{{.*}}, %c1_i32, %c31_i32 : f32 -> f32
// CHECK:     gpu.barrier
// TREE-LABEL: gpu.func @cta_rows
// TREE-NOT:  scf.for
// TREE:      %[[X0:.*]] = memref.load %arg1
// TREE:      %[[X1:.*]] = memref.load %arg1
// TREE:      %[[X2:.*]] = memref.load %arg1
// TREE:      %[[X3:.*]] = memref.load %arg1
// TREE:      %[[A:.*]] = arith.addf %[[X0]], %[[X1]] : f32
// TREE:      %[[B:.*]] = arith.addf %[[X2]], %[[X3]] : f32
// TREE:      %[[V:.*]] = arith.addf %[[A]], %[[B]] : f32
// TREE:      nvvm.shfl.sync  bfly %{{.*}}, %[[V]], %c4_i32
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @cta_rows(%dst: memref<32xf32, #gpu.address_space<workgroup>>, %src: memref<32x32xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cta", axes = array<i64: 1>} : (memref<32xf32, #gpu.address_space<workgroup>>, memref<32x32xf32, #gpu.address_space<workgroup>>) -> ()
      gpu.return
    }
  }
}

// -----

// One thread: the seed's serial nest. A loop over the 4 dst elements, the fold of each
// row from its first term (no identity), accum once, the store; no shuffle, no barrier.
// CHECK-LABEL: gpu.func @thread_serial
// CHECK-NOT: gpu.thread_id
// CHECK:     scf.for %[[E:.*]] = %c0 to %c4 step %c1 {
// CHECK:       %[[X0:.*]] = memref.load %arg1
// CHECK:       %[[ACC:.*]] = scf.for %{{.*}} = %c1{{.*}} to %c8 step %c1{{.*}} iter_args(%[[A:.*]] = %[[X0]]) -> (f32) {
// CHECK:         arith.maxnumf %[[A]], %{{.*}} : f32
// CHECK:       }
// CHECK:       %[[OLD:.*]] = memref.load %arg0[%[[E]]]
// CHECK:       %[[NEW:.*]] = arith.maxnumf %[[OLD]], %[[ACC]] : f32
// CHECK:       memref.store %[[NEW]], %arg0[%[[E]]]
// CHECK:     }
// CHECK-NOT: nvvm.
// CHECK-NOT: gpu.barrier
// CHECK:     gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @thread_serial(%dst: memref<4xf32, #gpu.address_space<workgroup>>, %src: memref<4x8xf32, #gpu.address_space<workgroup>>) kernel {
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread", accum = true} : (memref<4xf32, #gpu.address_space<workgroup>>, memref<4x8xf32, #gpu.address_space<workgroup>>) -> ()
      gpu.return
    }
  }
}

// -----

// Sub-scope: a warp-scope op run by warp 5 of an 8-warp block synchronises its own warp
// (never the block, which the other warps do not reach).
// CHECK-LABEL: gpu.func @one_warp_of_eight
// CHECK:     scf.if
// CHECK:       nvvm.bar.warp.sync %c-1_i32 : i32
// CHECK-NOT:   gpu.barrier
// CHECK:     }
// CHECK:     gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @one_warp_of_eight(%dst: memref<32xf32, #gpu.address_space<workgroup>>, %src: memref<32x32xf32, #gpu.address_space<workgroup>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %tid = gpu.thread_id x
      %c32 = arith.constant 32 : index
      %c5 = arith.constant 5 : index
      %warp = arith.divui %tid, %c32 : index
      %mine = arith.cmpi eq, %warp, %c5 : index
      scf.if %mine {
        "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>} : (memref<32xf32, #gpu.address_space<workgroup>>, memref<32x32xf32, #gpu.address_space<workgroup>>) -> ()
      }
      gpu.return
    }
  }
}
