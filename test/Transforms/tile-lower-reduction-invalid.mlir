// RUN: tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-lower-reduction --verify-diagnostics
// RUN: not tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-lower-reduction 2>&1 | FileCheck %s
//
// Dispatch failures: one error at the op's location listing every variant
// tried, with all of its reasons. tile-verify is off here (it would reject
// the dtype mismatch first), so the dispatch predicates see the bad ops.

// A global (non-private) src: every variant's storage_scope rejects it. The
// variants come in priority order, each with all of its reasons.
// CHECK: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda):
// CHECK-NEXT: cluster_push (prio=20): rejected: storage_scope — src is global (no memory space); expected local on both sides; push_applies — exec_scope thread: the variant reduces at cluster scope; no chip (no #nvvm.target on a gpu.module, no chip option): thread-block clusters need sm_90 or newer
// CHECK-NEXT: sm100_packed (prio=20): rejected: storage_scope — src is global (no memory space); expected local on both sides; sm100_applies — 4 elements < 8; no chip (no #nvvm.target on a gpu.module, no chip option)
// CHECK-NEXT: local_redux (prio=15): rejected: storage_scope — src is global (no memory space); expected local on both sides; redux_applies — dtype f32: redux.sync has no float add; exec_scope thread: redux.sync is a warp-scope instruction; no chip (no #nvvm.target on a gpu.module, no chip option)
// CHECK-NEXT: cluster (prio=10): rejected: storage_scope — src is global (no memory space); expected local on both sides; cluster_applies — exec_scope thread: the variant reduces at cluster scope; no chip (no #nvvm.target on a gpu.module, no chip option): thread-block clusters need sm_90 or newer
// CHECK-NEXT: cross_warp (prio=10): rejected: storage_scope — src is global (no memory space); expected local on both sides; cross_warp_applies — exec_scope thread: the variant exchanges warps at warpgroup or cta scope; no reduced warp bits: the reduction stays inside warps (see local)
// CHECK-NEXT: local (prio=10): rejected: storage_scope — src is global (no memory space); expected local on both sides
// CHECK-NEXT: shared (prio=10): rejected: storage_scope — dst is local (#gpu.address_space<private>) and src is global (no memory space); expected shared on both sides
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
// CHECK: error: 'tile.reduce' op dispatch = "locl" names no variant of tile.reduce for target cuda; registered: cluster_push (prio=20), sm100_packed (prio=20), local_redux (prio=15), cluster (prio=10), cross_warp (prio=10), local (prio=10), shared (prio=10)
func.func @forced_unknown(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dispatch = "locl" names no variant of tile.reduce for target cuda; registered: cluster_push (prio=20), sm100_packed (prio=20), local_redux (prio=15), cluster (prio=10), cross_warp (prio=10), local (prio=10), shared (prio=10)}}
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", dispatch = "locl"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
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

// Cross-warp at warpgroup scope, with local forced: the reduced dim spans the 128
// threads, which local (one warp at a time) cannot reduce.
// CHECK: local (prio=10): rejected: local_valid — reduced thread bits {5, 6} are warp bits: the local variant reduces within a warp (cross_warp exchanges the warps' partials)
func.func @cross_warp(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{reduced thread bits {5, 6} are warp bits}}
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>, dispatch = "local",
      src_layout = #tile.layout<"S[128 : 1@tid_in_wg]">,
      dst_layout = #tile.layout<"S[1 : 1] + R[128 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A forced local_redux on an f32 full-warp sum reports that variant only, with
// its reason: the fallback to local is not taken when a variant is forced.
// CHECK: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda, sm_90a):
// CHECK-NEXT: local_redux (prio=15): rejected: redux_applies — dtype f32: redux.sync has no float add
// CHECK-NOT: local (prio=10)
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @forced_redux_f32(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) {
    // expected-error @+1 {{local_redux (prio=15): rejected: redux_applies — dtype f32: redux.sync has no float add}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, dispatch = "local_redux",
        src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// A forced local_redux that fails three ways: every failure is named.
// CHECK: local_redux (prio=15): rejected: redux_applies — dtype i64: redux.sync is 32-bit only; lane bits {0, 1} are not the full warp; sm_70 < sm_80
gpu.module @kernels [#nvvm.target<chip = "sm_70">] {
  gpu.func @forced_redux_three_reasons(%dst: memref<1xi64, #gpu.address_space<private>>, %src: memref<1xi64, #gpu.address_space<private>>) {
    // expected-error @+1 {{redux_applies — dtype i64: redux.sync is 32-bit only; lane bits {0, 1} are not the full warp; sm_70 < sm_80}}
    "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warp", axes = array<i64: 1>, dispatch = "local_redux",
        src_layout = #tile.layout<"S[(8, 4) : (4@laneid, 1@laneid)]">, dst_layout = #tile.layout<"S[8 : 4@laneid] + R[4 : 1@laneid]">} : (memref<1xi64, #gpu.address_space<private>>, memref<1xi64, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// A forced sm100_packed on sm_90 for a short f16 warp reduction: every reason.
// CHECK: sm100_packed (prio=20): rejected: sm100_applies — exec_scope warp: the fast path is thread scope only; f16: fast path is f32 only; 4 elements < 8; sm_90 < sm_100
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @forced_sm100_packed(%dst: memref<1xf16, #gpu.address_space<private>>, %src: memref<4xf16, #gpu.address_space<private>>) {
    // expected-error @+1 {{sm100_applies — exec_scope warp: the fast path is thread scope only; f16: fast path is f32 only; 4 elements < 8; sm_90 < sm_100}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, dispatch = "sm100_packed",
        src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[32 : 1@laneid]">} : (memref<1xf16, #gpu.address_space<private>>, memref<4xf16, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// sm100_packed on a thread-scope f32 reduction over two dims: one reduced dim only.
// CHECK: sm100_packed (prio=20): rejected: sm100_applies — 2 reduced dims [0, 1]: the fast path reduces one dim
gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
  gpu.func @forced_sm100_two_dims(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<4x4xf32, #gpu.address_space<private>>) {
    // expected-error @+1 {{sm100_applies — 2 reduced dims [0, 1]: the fast path reduces one dim}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0, 1>, dispatch = "sm100_packed"} : (memref<1xf32, #gpu.address_space<private>>, memref<4x4xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// The shared variant: a cta-scope op in a function without known_block_size (the
// block's threads decide the groups), and a shared tile with a lane layout (the
// variant reads plain row-major tiles).
// CHECK: shared (prio=10): rejected: shared_applies — cta scope needs the block size (known_block_size on the gpu.func): the number of threads decides the groups
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @shared_cta_unknown_block(%dst: memref<4xf32, #gpu.address_space<workgroup>>, %src: memref<4x8xf32, #gpu.address_space<workgroup>>) kernel {
    // expected-error @+1 {{shared (prio=10): rejected: shared_applies — cta scope needs the block size (known_block_size on the gpu.func)}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cta"} : (memref<4xf32, #gpu.address_space<workgroup>>, memref<4x8xf32, #gpu.address_space<workgroup>>) -> ()
    gpu.return
  }
}

// -----

// CHECK: shared (prio=10): rejected: shared_applies — src_layout S[(32, 4) : (1@laneid, 1)] and dst_layout S[32 : 1@laneid] are not plain row-major tiles: the shared variant reads workgroup memory row-major, with no thread axes, replicas or strides{{$}}
gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
  gpu.func @shared_lane_layout(%dst: memref<1xf32, #gpu.address_space<workgroup>>, %src: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
    // expected-error @+1 {{shared (prio=10): rejected: shared_applies — src_layout S[(32, 4) : (1@laneid, 1)] and dst_layout S[32 : 1@laneid] are not plain row-major tiles}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>,
        src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<workgroup>>, memref<4xf32, #gpu.address_space<workgroup>>) -> ()
    gpu.return
  }
}
