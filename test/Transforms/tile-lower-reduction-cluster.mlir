// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-lower-reduction="fold=tree" | FileCheck %s --check-prefix=TREE
// RUN: tile-opt %s --split-input-file --pass-pipeline='builtin.module(tile-lower-reduction,convert-scf-to-cf,gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}),reconcile-unrealized-casts)' | FileCheck %s --check-prefix=NVVM
//
// The cluster variant, the pull protocol (forced with dispatch: where the op reduces CTA
// bits in a kernel, cluster_push is the default; tile-lower-reduction-cluster-push.mlir):
// inside each CTA the in-thread fold, the lane butterfly and
// cross_warp's exchange of the warps' partials (gpu.barrier); then each CTA's partial
// goes to its own cluster scratch, a cluster barrier, every thread reads the partials of
// the CTAs it reduces over through distributed shared memory (nvvm.mapa, llvm.load from
// !llvm.ptr<7>), in ascending CTA order, and a second cluster barrier before anything
// else, then accum once and the store.

// A cluster of 4 CTAs of 2 warps, one flat tile reduced over all of it. Two scratches:
// the warps' partials of each CTA (cross_warp's), and the one CTA partial (each CTA's
// own copy). Its writer is thread 0 of its CTA (no lane, warp or replica bit set). The
// ranks of the 4 CTAs are constants: the reduction covers the whole cluster.
// CHECK-DAG: memref.global "private" @{{tile_scratch_[01]}} : memref<2xf32, #gpu.address_space<workgroup>> {{.*}}tile.scratch = "cluster reduce, the warps of each CTA: 1 phase(s) x 1 instance(s) x 1 x 2 warp partial(s) x 1 slot(s) of f32: 8 bytes"
// CHECK-DAG: memref.global "private" @[[$CL:tile_scratch_[01]]] : memref<1xf32, #gpu.address_space<workgroup>> {{.*}}tile.scratch = "cluster reduce, the CTA partials: 1 x 1 slot(s) of f32: 4 bytes"
// CHECK-LABEL: gpu.func @whole
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:      gpu.barrier
// CHECK:      %[[P0:.*]] = memref.load
// CHECK:      %[[P1:.*]] = memref.load
// CHECK:      %[[CTA:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK:      %[[SCRATCH:.*]] = memref.get_global @[[$CL]]
// CHECK:      %[[TID:.*]] = gpu.thread_id  x
// CHECK:      %[[LOW:.*]] = arith.andi %[[TID]], %c63 : index
// CHECK:      %[[WRITER:.*]] = arith.cmpi eq, %[[LOW]], %c0 : index
// CHECK:      scf.if %[[WRITER]] {
// CHECK:        memref.store %[[CTA]], %[[SCRATCH]][%{{.*}}]
// CHECK:      }
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NOT:  nvvm.read.ptx.sreg.cluster.ctarank
// CHECK:      %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[SCRATCH]]
// CHECK:      %[[I64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:      %[[PTR:.*]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr<3>
// CHECK:      %[[R0:.*]] = nvvm.mapa %[[PTR]], %c0_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: %[[X0:.*]] = llvm.load %[[R0]] : !llvm.ptr<7> -> f32
// CHECK-NEXT: %[[R1:.*]] = nvvm.mapa %[[PTR]], %c1_i32
// CHECK-NEXT: %[[X1:.*]] = llvm.load %[[R1]]
// CHECK-NEXT: %[[R2:.*]] = nvvm.mapa %[[PTR]], %c2_i32
// CHECK-NEXT: %[[X2:.*]] = llvm.load %[[R2]]
// CHECK-NEXT: %[[R3:.*]] = nvvm.mapa %[[PTR]], %c3_i32
// CHECK-NEXT: %[[X3:.*]] = llvm.load %[[R3]]
// CHECK-NEXT: %[[S01:.*]] = arith.addf %[[X0]], %[[X1]] : f32
// CHECK-NEXT: %[[S012:.*]] = arith.addf %[[S01]], %[[X2]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[S012]], %[[X3]] : f32
// CHECK-NEXT: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: memref.store %[[S]], %arg0[%c0]
// CHECK-NOT:  tile.reduce
// The tree option folds the CTA partials pairwise: (x0 + x1) + (x2 + x3).
// TREE-LABEL: gpu.func @whole
// TREE:      nvvm.cluster.wait
// TREE:      %[[X0:.*]] = llvm.load
// TREE:      %[[X1:.*]] = llvm.load
// TREE:      %[[X2:.*]] = llvm.load
// TREE:      %[[X3:.*]] = llvm.load
// TREE-NEXT: %[[A:.*]] = arith.addf %[[X0]], %[[X1]] : f32
// TREE-NEXT: %[[B:.*]] = arith.addf %[[X2]], %[[X3]] : f32
// TREE-NEXT: arith.addf %[[A]], %[[B]] : f32
// The NVVM level: the kernel's own shared variable, mapped and loaded across the cluster.
// NVVM-LABEL: llvm.func @whole
// NVVM:      nvvm.cluster.arrive
// NVVM-NEXT: nvvm.cluster.wait
// NVVM:      nvvm.mapa %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// NVVM-NEXT: llvm.load %{{.*}} : !llvm.ptr<7> -> f32
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @whole(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "sum", dispatch = "cluster", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2, 32)) : ((1@cta_in_cluster, 1@warpid, 1@laneid))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// Two rows on CTA bit 1, each reduced over CTA bit 0 (and 2 warps, 32 lanes, 2 slots);
// accum. A thread reads the CTAs of its own row: its rank with bit 0 cleared, then set.
// CHECK-LABEL: gpu.func @rows
// CHECK:      gpu.barrier
// CHECK:      nvvm.cluster.wait
// CHECK:      %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK:      %[[FIRST:.*]] = arith.andi %[[RANK]], %c-2_i32 : i32
// CHECK:      %[[SECOND:.*]] = arith.ori %[[FIRST]], %c1_i32 : i32
// CHECK:      nvvm.mapa %{{.*}}, %[[FIRST]]
// CHECK:      %[[X0:.*]] = llvm.load
// CHECK:      nvvm.mapa %{{.*}}, %[[SECOND]]
// CHECK:      %[[X1:.*]] = llvm.load
// CHECK:      %[[M:.*]] = arith.maxnumf %[[X0]], %[[X1]] : f32
// CHECK:      nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: %[[OLD:.*]] = memref.load %arg0[%c0]
// CHECK-NEXT: %[[R:.*]] = arith.maxnumf %[[OLD]], %[[M]] : f32
// CHECK-NEXT: memref.store %[[R]], %arg0[%c0]
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @rows(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<2xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "max", dispatch = "cluster", exec_scope = "cluster", axes = array<i64: 1>, accum = true,
          src_layout = #tile.layout<"S[(2, (2, 2, 32, 2)) : (2@cta_in_cluster, (1@cta_in_cluster, 1@warpid, 1@laneid, 1))]">,
          dst_layout = #tile.layout<"S[2 : 2@cta_in_cluster] + R[(32, 2, 2) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// One warp per CTA, 8 CTAs, in a loop: no exchange between warps (no gpu.barrier, one
// scratch), and no phase counter: the second cluster barrier of a run comes before the
// next run's writes. Without known_block_size the thread id is x + (y + z Dy) Dx.
// CHECK:     memref.global "private" @tile_scratch_0 : memref<1xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.global
// CHECK-LABEL: gpu.func @loop
// CHECK-NOT: memref.alloca() : memref<1xi32
// CHECK:     scf.for
// CHECK-NOT: gpu.barrier
// CHECK:     gpu.thread_id  z
// CHECK:     nvvm.cluster.arrive
// CHECK-COUNT-8: nvvm.mapa
// CHECK:     nvvm.cluster.arrive
// CHECK:     nvvm.cluster.wait
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @loop(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        "tile.reduce"(%dst, %src) {kind = "sum", dispatch = "cluster", exec_scope = "cluster", axes = array<i64: 0>, accum = true,
            src_layout = #tile.layout<"S[((8, 32)) : ((1@cta_in_cluster, 1@laneid))]">,
            dst_layout = #tile.layout<"S[1 : 1] + R[(32, 8) : (1@laneid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      }
      gpu.return
    }
  }
}

// -----

// A cluster of one CTA (no cta_in_cluster): the cta path alone, no cluster barrier.
// CHECK-LABEL: gpu.func @one_cta
// CHECK:     gpu.barrier
// CHECK-NOT: nvvm.cluster
// CHECK:     gpu.return
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @one_cta(%dst: memref<1xi32, #gpu.address_space<private>>, %src: memref<1xi32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%dst, %src) {kind = "min", dispatch = "cluster", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((2, 32)) : ((1@warpid, 1@laneid))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2) : (1@laneid, 1@warpid)]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}
