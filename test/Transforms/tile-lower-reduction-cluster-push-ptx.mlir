// RUN: tile-opt %s --tile-to-ptx | FileCheck %s
// RUN: tile-opt %s --tile-to-cubin -o %t.cubin
//
// The cluster_push variant in PTX (sm_90a): a cluster of 4 CTAs of 2 warps reducing one
// flat tile (the first kernel of tile-lower-reduction-cluster-push.mlir).
// In order: the init, its fence and the relaxed cluster barrier; the
// push (st.shared::cluster) and the remote arrive; the wait; the 4 partials in one load.
// CHECK-LABEL: .entry whole(
// CHECK:       mbarrier.init.shared.b64
// CHECK-NEXT:  fence.mbarrier_init.release.cluster;
// CHECK-NEXT:  barrier.cluster.arrive.relaxed;
// CHECK-NEXT:  barrier.cluster.wait;
// CHECK:       bar.sync 0;
// CHECK:       st.shared::cluster.b32
// CHECK:       mbarrier.arrive.release.cluster.shared::cluster.b64 _,
// CHECK:       mbarrier.try_wait.parity.acquire.cluster.shared.b64
// CHECK:       ld.shared.v4.b32
// CHECK-NOT:   barrier.cluster
// CHECK:       ret;
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @whole(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2, 32)) : ((1@cta_in_cluster, 1@warpid, 1@laneid))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

