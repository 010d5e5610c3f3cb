// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
//
// The cluster_push variant (docs/lowering-cluster.md): where a cluster-scope op reduces
// CTA bits in a kernel, each CTA pushes its partial into the shared memory of every CTA
// of its group (nvvm.mapa + llvm.store to !llvm.ptr<7>) and arrives at that CTA's
// mbarrier (release at cluster scope); every thread waits on its own CTA's mbarrier
// (try_wait on the phase's parity, acquire at cluster scope) and folds the partials in
// ascending CTA order, as the cluster variant does. No cluster barrier per run: one at
// the kernel's entry, after the mbarriers' init (in PTX: tile-lower-reduction-cluster-push-ptx.mlir).

// A cluster of 4 CTAs of 2 warps, one flat tile reduced over all of it. At the kernel's
// entry, thread 0 of each CTA initializes the op's mbarrier for 4 arrivals (a predicate,
// not a branch), fences it, and the cluster meets once. After the CTA's warp exchange,
// lanes 0-3 of warp 0 push the CTA's partial into slot [rank] of CTA 0, 1, 2, 3 (lane j
// to CTA j: the reduction covers the whole cluster, so the target is j) and arrive at its
// mbarrier; then every thread waits on its own, and folds the 4 slots in rank order.
// CHECK-DAG: memref.global "private" @[[$BAR:tile_scratch_[0-9]]] : memref<1xi64, #gpu.address_space<workgroup>> {{.*}}tile.scratch = "cluster push, 1 mbarrier(s), one per phase: 8 bytes"
// CHECK-DAG: memref.global "private" @[[$RECV:tile_scratch_[0-9]]] : memref<4xf32, #gpu.address_space<workgroup>> {{.*}}tile.scratch = "cluster push, the partials received: 1 phase(s) x 4 CTA(s) x 1 x 1 slot(s) of f32: 16 bytes"
// CHECK-LABEL: gpu.func @whole
// CHECK-NEXT:  memref.get_global @[[$BAR]]
// CHECK:       %[[FIRST:.*]] = arith.cmpi eq, %thread_id_x, %c0 : index
// CHECK:       nvvm.mbarrier.init %{{.*}}, %c4_i32, predicate = %[[FIRST]] : !llvm.ptr<3>, i32, i1
// CHECK-NEXT:  nvvm.fence.mbarrier.init
// CHECK-NEXT:  nvvm.cluster.arrive.relaxed
// CHECK-NEXT:  nvvm.cluster.wait {tile.mbarrier_init}
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:       gpu.barrier
// CHECK:       %[[PARTIAL:.*]] = arith.addf
// CHECK-NEXT:  %[[R:.*]] = memref.get_global @[[$RECV]]
// CHECK:       %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK:       %c60 = arith.constant 60 : index
// CHECK-NEXT:  %[[LOW:.*]] = arith.andi %{{.*}}, %c60 : index
// CHECK-NEXT:  %[[PUSHER:.*]] = arith.cmpi eq, %[[LOW]], %c0{{.*}} : index
// CHECK-NEXT:  scf.if %[[PUSHER]] {
// CHECK:         %[[J:.*]] = arith.andi %{{.*}}, %c3{{.*}} : index
// CHECK-NEXT:    %[[TARGET:.*]] = arith.index_cast %[[J]] : index to i32
// CHECK-NEXT:    %[[SLOT:.*]] = nvvm.mapa %{{.*}}, %[[TARGET]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT:    llvm.store %[[PARTIAL]], %[[SLOT]] : f32, !llvm.ptr<7>
// CHECK-NEXT:    %[[THEIRS:.*]] = nvvm.mapa %{{.*}}, %[[TARGET]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT:    nvvm.mbarrier.arrive %[[THEIRS]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK-NEXT:  }
// CHECK-NEXT:  scf.while : () -> () {
// CHECK-NEXT:    %[[DONE:.*]] = nvvm.mbarrier.try_wait %{{.*}}, %c0_i32 {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32 -> i1
// CHECK:         %[[MORE:.*]] = arith.xori %[[DONE]], %true : i1
// CHECK-NEXT:    scf.condition(%[[MORE]])
// CHECK:       %[[X0:.*]] = memref.load %[[R]][%c0{{.*}}] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:  %[[X1:.*]] = memref.load %[[R]][%c1] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK:       %[[X2:.*]] = memref.load %[[R]][%c2] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:  %[[X3:.*]] = memref.load %[[R]][%c3] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NEXT:  %[[S01:.*]] = arith.addf %[[X0]], %[[X1]] : f32
// CHECK-NEXT:  %[[S012:.*]] = arith.addf %[[S01]], %[[X2]] : f32
// CHECK-NEXT:  arith.addf %[[S012]], %[[X3]] : f32
// CHECK-NOT:   nvvm.cluster
// CHECK:       gpu.return
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

// -----

// Two rows on CTA bit 1, each reduced over CTA bit 0: a group of 2 CTAs. Lane j of the
// pushers pushes to the CTA of its row whose bit 0 is j: (rank & ~1) | j; each CTA folds
// the 2 slots of its group.
// CHECK-LABEL: gpu.func @rows
// CHECK:       nvvm.mbarrier.init %{{.*}}, %c2_i32, predicate
// CHECK:       %[[RANK:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:       scf.if
// CHECK:         %[[OTHERS:.*]] = arith.andi %[[RANK]], %c-2 : index
// CHECK-NEXT:    %[[TARGET:.*]] = arith.ori %[[OTHERS]], %{{.*}} : index
// CHECK-NEXT:    arith.index_cast %[[TARGET]] : index to i32
// CHECK:         nvvm.mbarrier.arrive
// CHECK:       scf.while
// CHECK-COUNT-2: memref.load %{{.*}} : memref<2xf32, #gpu.address_space<workgroup>>
// CHECK:       arith.max{{.*}}f
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @rows(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<2xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "cluster", axes = array<i64: 1>, accum = true,
          src_layout = #tile.layout<"S[(2, (2, 2, 32, 2)) : (2@cta_in_cluster, (1@cta_in_cluster, 1@warpid, 1@laneid, 1))]">,
          dst_layout = #tile.layout<"S[2 : 2@cta_in_cluster] + R[(32, 2, 2) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// In a loop: two phases of receive buffer and mbarrier, and a counter of the runs (mod 4)
// at the entry: run r uses phase q = r & 1 and waits for parity r >> 1. No warp exchange
// here, so the CTA meets at its own barrier before it pushes again.
// CHECK:       memref.global "private" @{{tile_scratch_[0-9]}} : memref<2xi64, #gpu.address_space<workgroup>> {{.*}}"cluster push, 2 mbarrier(s), one per phase: 16 bytes"
// CHECK:       memref.global "private" @{{tile_scratch_[0-9]}} : memref<16xf32, #gpu.address_space<workgroup>> {{.*}}"cluster push, the partials received: 2 phase(s) x 8 CTA(s) x 1 x 1 slot(s) of f32: 64 bytes"
// CHECK-LABEL: gpu.func @loop
// CHECK:       %[[COUNTER:.*]] = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
// CHECK-COUNT-2: nvvm.mbarrier.init %{{.*}}, %c8_i32, predicate
// CHECK:       nvvm.cluster.wait {tile.mbarrier_init}
// CHECK:       scf.for
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:       gpu.barrier
// CHECK:       %[[RUNS:.*]] = memref.load %[[COUNTER]]
// CHECK:       %[[NEXT:.*]] = arith.addi %[[RUNS]], %c1_i32 : i32
// CHECK:       %[[MOD:.*]] = arith.andi %[[NEXT]], %c3_i32 : i32
// CHECK-NEXT:  memref.store %[[MOD]], %[[COUNTER]]
// CHECK-NEXT:  %[[Q:.*]] = arith.andi %[[RUNS]], %c1_i32 : i32
// CHECK-NEXT:  arith.index_cast %[[Q]] : i32 to index
// CHECK-NEXT:  %[[PARITY:.*]] = arith.shrui %[[RUNS]], %c1_i32 : i32
// CHECK:       nvvm.mbarrier.arrive
// CHECK:       nvvm.mbarrier.try_wait %{{.*}}, %[[PARITY]] {scope = #nvvm.mem_scope<cluster>}
// CHECK-COUNT-8: memref.load %{{.*}} : memref<16xf32, #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @loop(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>, %n: index) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %n step %c1 {
        "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>, accum = true,
            src_layout = #tile.layout<"S[((8, 32)) : ((1@cta_in_cluster, 1@laneid))]">,
            dst_layout = #tile.layout<"S[1 : 1] + R[(32, 8) : (1@laneid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      }
      gpu.return
    }
  }
}

// -----

// One reduced lane bit for 4 CTAs, the other lane bits kept (16 elements): too few lanes
// hold one partial to share the pushes, so one thread per kept element (lane bit 0 clear)
// pushes to the 4 CTAs, constant ranks.
// CHECK-LABEL: gpu.func @few_lanes
// CHECK:       scf.if
// CHECK:         nvvm.mapa %{{.*}}, %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK:         nvvm.mbarrier.arrive
// CHECK:         nvvm.mapa %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK:         nvvm.mbarrier.arrive
// CHECK:         nvvm.mapa %{{.*}}, %c2_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK:         nvvm.mbarrier.arrive
// CHECK:         nvvm.mapa %{{.*}}, %c3_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK:         nvvm.mbarrier.arrive
// CHECK-NOT:     nvvm.mbarrier.arrive
// CHECK:       scf.while
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @few_lanes(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2), 16) : ((1@cta_in_cluster, 1@laneid), 2@laneid)]">,
          dst_layout = #tile.layout<"S[16 : 2@laneid] + R[(2, 4) : (1@laneid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// One reduced lane bit and four replica lane bits for 4 CTAs: the lanes hold the same
// partial, so they share the pushes: lanes 0-3 (the low two of those bits) each push to
// one CTA, the rank from the lane.
// CHECK-LABEL: gpu.func @replica_lanes
// CHECK:       %[[LANES:.*]] = arith.constant 28 : index
// CHECK:       arith.andi %{{.*}}, %[[LANES]] : index
// CHECK:       scf.if
// CHECK-NOT:     nvvm.mbarrier.arrive
// CHECK:         nvvm.mapa %{{.*}}, %{{[0-9]+}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK:         nvvm.mbarrier.arrive
// CHECK-NOT:     nvvm.mbarrier.arrive
// CHECK:       scf.while
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @replica_lanes(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2)) : ((1@cta_in_cluster, 1@laneid))] + R[16 : 2@laneid]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// Two ops in one kernel share the entry's one cluster barrier; in a device function (not a
// kernel: no entry to set mbarriers up at) the op is the pull protocol's, variant cluster.
// CHECK-LABEL: gpu.func @two
// CHECK:       nvvm.mbarrier.init
// CHECK-NEXT:  nvvm.fence.mbarrier.init
// CHECK:       nvvm.mbarrier.init
// CHECK-NEXT:  nvvm.fence.mbarrier.init
// CHECK-NEXT:  nvvm.cluster.arrive.relaxed
// CHECK-NEXT:  nvvm.cluster.wait {tile.mbarrier_init}
// CHECK-NOT:   nvvm.cluster
// CHECK-COUNT-2: nvvm.mbarrier.try_wait
// CHECK-NOT:   nvvm.cluster
// CHECK-LABEL: gpu.func @device
// CHECK-NOT:   mbarrier
// CHECK:       nvvm.cluster.arrive
// CHECK-NEXT:  nvvm.cluster.wait
// CHECK:       nvvm.cluster.arrive
// CHECK-NEXT:  nvvm.cluster.wait
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @two(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2, 32)) : ((1@cta_in_cluster, 1@warpid, 1@laneid))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2, 32)) : ((1@cta_in_cluster, 1@warpid, 1@laneid))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
    gpu.func @device(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<1xf32, #gpu.address_space<private>>) attributes {known_block_size = array<i32: 64, 1, 1>} {
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2, 32)) : ((1@cta_in_cluster, 1@warpid, 1@laneid))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}
