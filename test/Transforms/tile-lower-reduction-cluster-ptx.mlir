// RUN: tile-opt %s --tile-to-ptx | FileCheck %s
// RUN: tile-opt %s --tile-to-cubin -o %t.cubin
//
// The cluster variant (the pull protocol, forced with dispatch: cluster_push is the
// default, tile-lower-reduction-cluster-push.mlir) in PTX (sm_90a): a cluster of 4 CTAs of 2 warps, fixed by the
// kernel (known_cluster_size: .reqnctapercluster), two rows on CTA bit 1, each reduced
// over CTA bit 0. Inside each CTA the butterfly and the warps' partials (bar.sync 0);
// then the CTA's partial to its own shared memory, the cluster barrier, the two partials
// of the row's CTAs through distributed shared memory (mapa + ld.shared::cluster, ranks
// rank & 2 and rank | 1), in order, and the cluster barrier again before the store.
// CHECK-LABEL: .entry cluster_rows(
// CHECK:       .explicitcluster
// CHECK-NEXT:  .reqnctapercluster 4, 1, 1
// CHECK:       .shared .align 16 .b8 [[CL:tile_scratch_[01]]][4];
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK:       bar.sync 0;
// CHECK:       st.shared.b32 [[[CL]]], %[[PARTIAL:r[0-9]+]];
// CHECK:       barrier.cluster.arrive;
// CHECK-NEXT:  barrier.cluster.wait;
// CHECK-NEXT:  mov.u32 %[[RANK:r[0-9]+]], %cluster_ctarank;
// CHECK-NEXT:  and.b32 %[[FIRST:r[0-9]+]], %[[RANK]], 2;
// CHECK-NEXT:  or.b32 %[[SECOND:r[0-9]+]], %[[RANK]], 1;
// CHECK-NEXT:  mov.b64 %[[LOCAL:rd[0-9]+]], [[CL]];
// CHECK-NEXT:  mapa.shared::cluster.u64 %[[P0:rd[0-9]+]], %[[LOCAL]], %[[FIRST]];
// CHECK-NEXT:  ld.shared::cluster.b32 %[[X0:r[0-9]+]], [%[[P0]]];
// CHECK-NEXT:  mapa.shared::cluster.u64 %[[P1:rd[0-9]+]], %[[LOCAL]], %[[SECOND]];
// CHECK-NEXT:  ld.shared::cluster.b32 %[[X1:r[0-9]+]], [%[[P1]]];
// CHECK-NEXT:  max.f32 %[[M:r[0-9]+]], %[[X0]], %[[X1]];
// CHECK-NEXT:  barrier.cluster.arrive;
// CHECK-NEXT:  barrier.cluster.wait;
// CHECK:       st.global.b32 [%{{rd[0-9]+}}], %[[M]];
// CHECK-NEXT:  ret;
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @cluster_rows(%A: memref<4x512xf32>, %B: memref<4x512xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>, known_cluster_size = array<i32: 4, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c64 = arith.constant 64 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %b = arith.muli %bid, %c64 : index
      %i = arith.addi %b, %tid : index
      %i2 = arith.muli %i, %c2 : index
      %i2b = arith.addi %i2, %c1 : index
      %src = memref.alloca() : memref<2xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %row = arith.divui %bid, %c2 : index
      %a0 = memref.load %A[%row, %i2] : memref<4x512xf32>
      memref.store %a0, %src[%c0] : memref<2xf32, #gpu.address_space<private>>
      %a1 = memref.load %A[%row, %i2b] : memref<4x512xf32>
      memref.store %a1, %src[%c1] : memref<2xf32, #gpu.address_space<private>>
      "tile.reduce"(%dst, %src) {kind = "max", dispatch = "cluster", exec_scope = "cluster", axes = array<i64: 1>,
          src_layout = #tile.layout<"S[(2, (2, 2, 32, 2)) : (2@cta_in_cluster, (1@cta_in_cluster, 1@warpid, 1@laneid, 1))]">,
          dst_layout = #tile.layout<"S[2 : 2@cta_in_cluster] + R[(32, 2, 2) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      %d = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %d, %B[%row, %i] : memref<4x512xf32>
      gpu.return
    }
  }
}
