// RUN: tile-opt %s --split-input-file --tile-lower-reduction --verify-diagnostics
//
// What the cluster variant does not lower, each said at the op.

// Thread-block clusters need sm_90: on sm_80 no variant lowers a cluster-scope op.
gpu.module @k [#nvvm.target<chip = "sm_80">] {
  gpu.func @old_chip(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel {
    // expected-error @+1 {{cluster (prio=10): rejected: cluster_applies — sm_80 < sm_90: thread-block clusters need sm_90 or newer}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
        src_layout = #tile.layout<"S[((2, 32)) : ((1@cta_in_cluster, 1@laneid))]">,
        dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2) : (1@laneid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// The local variant leaves every cluster-scope op to the cluster variant, even one that
// reduces lanes only; forced, it says why.
gpu.module @k [#nvvm.target<chip = "sm_90a">] {
  gpu.func @forced_local(%dst: memref<2xf32, #gpu.address_space<private>>, %src: memref<2xf32, #gpu.address_space<private>>) kernel {
    // expected-error @+1 {{local (prio=10): rejected: local_valid — exec_scope cluster: the cluster variant lowers every cluster-scope op}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 1>, dispatch = "local",
        src_layout = #tile.layout<"S[(2, 32) : (1@cta_in_cluster, 1@laneid)]">,
        dst_layout = #tile.layout<"S[2 : 1@cta_in_cluster] + R[32 : 1@laneid]">} : (memref<2xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// Operands in workgroup memory: the shared variant has no cluster scope.
gpu.module @k [#nvvm.target<chip = "sm_90a">] {
  gpu.func @shared_operands(%dst: memref<1xf32, #gpu.address_space<workgroup>>, %src: memref<64xf32, #gpu.address_space<workgroup>>) kernel {
    // expected-error @+1 {{shared (prio=10): rejected: shared_applies — exec_scope cluster: the variant runs at thread, warp, warpgroup, cta scope}}
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>} : (memref<1xf32, #gpu.address_space<workgroup>>, memref<64xf32, #gpu.address_space<workgroup>>) -> ()
    gpu.return
  }
}
