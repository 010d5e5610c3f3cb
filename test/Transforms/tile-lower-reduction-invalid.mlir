// RUN: tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-lower-reduction --verify-diagnostics
// RUN: not tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-lower-reduction 2>&1 | FileCheck %s
//
// Dispatch failures: one error at the op's location listing every variant
// tried, with all of its reasons. tile-verify is off here (it would reject
// the dtype mismatch first), so the dispatch predicates see the bad ops.

// A global (non-private) src: the local variant's storage_scope rejects it.
// CHECK: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda):
// CHECK-NEXT: local (prio=10): rejected: storage_scope — src is global (no memory space); expected local on both sides
func.func @global_src(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32>) {
  // expected-error @+1 {{local (prio=10): rejected: storage_scope — src is global (no memory space); expected local on both sides}}
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32>) -> ()
  return
}

// -----

// A dtype mismatch, inside a gpu.module whose target names the chip.
// CHECK: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda, sm_80):
// CHECK: local (prio=10): rejected: local_valid — dtype mismatch: src=f32 dst=f16
gpu.module @kernels [#nvvm.target<chip = "sm_80">] {
  gpu.func @dtype_mismatch(%dst: memref<1xf16, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
    // expected-error @+1 {{local (prio=10): rejected: local_valid — dtype mismatch: src=f32 dst=f16}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf16, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// Both predicates fail: every reason is listed, none short-circuited.
// CHECK: local (prio=10): rejected: storage_scope — dst is shared (#gpu.address_space<workgroup>); expected local on both sides; local_valid — dtype mismatch: src=f32 dst=f16
func.func @two_reasons(%dst: memref<1xf16, #gpu.address_space<workgroup>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{storage_scope — dst is shared (#gpu.address_space<workgroup>); expected local on both sides; local_valid — dtype mismatch}}
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf16, #gpu.address_space<workgroup>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A forced unknown variant lists the registered ones.
// CHECK: error: 'tile.reduce' op dispatch = "shared" names no variant of tile.reduce for target cuda; registered: local (prio=10)
func.func @forced_unknown(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dispatch = "shared" names no variant of tile.reduce for target cuda; registered: local (prio=10)}}
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", dispatch = "shared"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A forced known variant that does not apply reports only that variant.
// CHECK: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda):
// CHECK: local (prio=10): rejected: storage_scope — src is global
func.func @forced_local(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32>) {
  // expected-error @+1 {{local (prio=10): rejected: storage_scope — src is global}}
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", dispatch = "local"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32>) -> ()
  return
}

// -----

// Cross-warp at warpgroup scope: the reduced dim spans the 128 threads, which
// needs the shared-memory variant that does not exist yet.
// CHECK: local (prio=10): rejected: local_valid — reduced dim(s) [0] span threads at warpgroup scope; the local variant reduces within a thread only, and the cross-warp (shared-memory) variant is not implemented
func.func @cross_warp(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{the cross-warp (shared-memory) variant is not implemented}}
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[128 : 1@tid_in_wg]">,
      dst_layout = #tile.layout<"S[1 : 1] + R[128 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}
