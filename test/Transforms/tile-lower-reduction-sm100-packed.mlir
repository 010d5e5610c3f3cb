// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
//
// Dispatch between sm100_packed (priority 20) and local (priority 10). A
// thread-scope f32 reduction over one dim of >= 8 registers on sm_100+ folds
// in pairs; on sm_90, or shorter, or another dtype, it stays on local's loop.


// sm_100a, sum of 9: vector<2xf32> partial sums <x0, x1> + <x2, x3> + ... + <x6, x7>
// in an unrolled loop, then even + x8 (the odd last one), then + odd; accum last.
// CHECK-LABEL: gpu.func @sum_sm100
// CHECK-SAME: (%[[DST:.*]]: memref<1xf32, {{.*}}>, %[[SRC:.*]]: memref<9xf32, {{.*}}>)
// CHECK:       %[[X0:.*]] = memref.load %[[SRC]]
// CHECK:       %[[X1:.*]] = memref.load %[[SRC]]
// CHECK-NEXT:  %[[FIRST:.*]] = vector.from_elements %[[X0]], %[[X1]] : vector<2xf32>
// CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:   %[[C8:.*]] = arith.constant 8 : index
// CHECK:       %[[ACC:.*]] = scf.for %[[R:.*]] = %[[C2]] to %[[C8]] step %[[C2]] iter_args(%[[A:.*]] = %[[FIRST]]) -> (vector<2xf32>) {
// CHECK-NEXT:    %[[XR:.*]] = memref.load %[[SRC]][%[[R]]]
// CHECK:         %[[XR1:.*]] = memref.load %[[SRC]]
// CHECK-NEXT:    %[[PAIR:.*]] = vector.from_elements %[[XR]], %[[XR1]] : vector<2xf32>
// CHECK-NEXT:    %[[NEW:.*]] = arith.addf %[[A]], %[[PAIR]] : vector<2xf32>
// CHECK-NEXT:    scf.yield %[[NEW]] : vector<2xf32>
// CHECK-NEXT:  } {llvm.loop_annotation = {{.*}}}
// CHECK-NEXT:  %[[EVEN:.*]] = vector.extract %[[ACC]][0] : f32 from vector<2xf32>
// CHECK-NEXT:  %[[ODD:.*]] = vector.extract %[[ACC]][1] : f32 from vector<2xf32>
// CHECK-NEXT:  %[[X8:.*]] = memref.load %[[SRC]][%[[C8]]]
// CHECK-NEXT:  %[[EVEN9:.*]] = arith.addf %[[EVEN]], %[[X8]] : f32
// CHECK-NEXT:  %[[SUM:.*]] = arith.addf %[[EVEN9]], %[[ODD]] : f32
// CHECK-NEXT:  %[[OLD:.*]] = memref.load %[[DST]]
// CHECK-NEXT:  %[[R:.*]] = arith.addf %[[OLD]], %[[SUM]] : f32
// CHECK-NEXT:  memref.store %[[R]], %[[DST]]
// CHECK-NOT:   tile.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  gpu.func @sum_sm100(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<9xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>, accum = true} : (memref<1xf32, #gpu.address_space<private>>, memref<9xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// The same op on sm_90: local's scalar reduction loop, no vector.
// CHECK-LABEL: gpu.func @sum_sm90
// CHECK:       %[[FIRST:.*]] = memref.load
// CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:   %[[C9:.*]] = arith.constant 9 : index
// CHECK:       scf.for %{{.*}} = %[[C1]] to %[[C9]] step %[[C1]] iter_args(%{{.*}} = %[[FIRST]]) -> (f32) {
// CHECK:         arith.addf %{{.*}} : f32
// CHECK-NOT:   vector.
// CHECK-NOT:   tile.
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @sum_sm90(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<9xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>, accum = true} : (memref<1xf32, #gpu.address_space<private>>, memref<9xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// A row per spatial slot: the spatial loop is local's, its body the packed fold.
// CHECK-LABEL: gpu.func @rows_sm100
// CHECK:       scf.for %[[S:.*]] = {{.*}} {
// CHECK:         vector.from_elements
// CHECK:         scf.for {{.*}} -> (vector<2xf32>)
// CHECK:           arith.addf %{{.*}} : vector<2xf32>
// CHECK:         vector.extract
// CHECK:         memref.store %{{.*}}[%[[S]]]
// CHECK-NOT:   tile.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  gpu.func @rows_sm100(%dst: memref<4xf32, #gpu.address_space<private>>, %src: memref<4x16xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 1>} : (memref<4xf32, #gpu.address_space<private>>, memref<4x16xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// max on sm_100a (forced here, so that a rejection would show): sm100_packed
// emits local's linear chain, max(max(acc, x_r), x_r+1) once unrolled, which
// LLVM turns into 3-input max.f32 at PTX 8.8.
// CHECK-LABEL: gpu.func @max_sm100
// CHECK:       scf.for {{.*}} -> (f32) {
// CHECK:         arith.maxnumf %{{.*}} : f32
// CHECK-NOT:   vector.
// CHECK-NOT:   tile.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  gpu.func @max_sm100(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<8xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread", dispatch = "sm100_packed"} : (memref<1xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// Too short (4 < 8 elements) on sm_100a: local.
// CHECK-LABEL: gpu.func @short_sm100
// CHECK:       scf.for {{.*}} -> (f32)
// CHECK-NOT:   vector.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  gpu.func @short_sm100(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// f16 on sm_100a: local.
// CHECK-LABEL: gpu.func @f16_sm100
// CHECK:       scf.for {{.*}} -> (f16)
// CHECK-NOT:   vector.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  gpu.func @f16_sm100(%dst: memref<1xf16, #gpu.address_space<private>>, %src: memref<16xf16, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf16, #gpu.address_space<private>>, memref<16xf16, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// dispatch = "local" forces local's loop on sm_100a.
// CHECK-LABEL: gpu.func @forced_local_sm100
// CHECK:       scf.for {{.*}} -> (f32)
// CHECK-NOT:   vector.
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  gpu.func @forced_local_sm100(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<16xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", dispatch = "local"} : (memref<1xf32, #gpu.address_space<private>>, memref<16xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}
