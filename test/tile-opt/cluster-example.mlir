// The example of docs/lowering-cluster.md, lowered and compiled to PTX; the lines the
// page shows, so that the page cannot drift from what the tools print.
//
// RUN: tile-opt %S/../../examples/cluster_row_sum.mlir --tile-lower-reduction | FileCheck %s --check-prefix=IR
// RUN: tile-opt %S/../../examples/cluster_row_sum.mlir --tile-to-ptx | FileCheck %s --check-prefix=PTX

// The three scratches; at the entry, the mbarrier's init (thread 0, a predicate), its
// fence and the one cluster barrier; the CTA's exchange of its 2 warps' partials; lanes
// 0-3 of warp 0 pushing the CTA's partial into slot [rank] of CTA 0-3 and arriving at
// their mbarriers; the wait; the 4 partials in rank order.
// IR:       memref.global "private" @tile_scratch_2 : memref<1xi64, #gpu.address_space<workgroup>> {alignment = 16 : i64, tile.scratch = "cluster push, 1 mbarrier(s), one per phase: 8 bytes"}
// IR-NEXT:  memref.global "private" @tile_scratch_1 : memref<4xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64, tile.scratch = "cluster push, the partials received: 1 phase(s) x 4 CTA(s) x 1 x 1 slot(s) of f32: 16 bytes"}
// IR-NEXT:  memref.global "private" @tile_scratch_0 : memref<2xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64, tile.scratch = "cluster reduce, the warps of each CTA: 1 phase(s) x 1 instance(s) x 1 x 2 warp partial(s) x 1 slot(s) of f32: 8 bytes"}
// IR-LABEL: gpu.func @cluster_row_sum
// IR-NEXT:  %[[BARS:.*]] = memref.get_global @tile_scratch_2 : memref<1xi64, #gpu.address_space<workgroup>>
// IR-NEXT:  %thread_id_x = gpu.thread_id  x
// IR-NEXT:  %c0 = arith.constant 0 : index
// IR-NEXT:  %[[FIRST:.*]] = arith.cmpi eq, %thread_id_x, %c0 : index
// IR-NEXT:  %[[BADDR:.*]] = memref.extract_aligned_pointer_as_index %[[BARS]] : memref<1xi64, #gpu.address_space<workgroup>> -> index
// IR-NEXT:  %[[B64:.*]] = arith.index_cast %[[BADDR]] : index to i64
// IR-NEXT:  %[[BPTR:.*]] = llvm.inttoptr %[[B64]] : i64 to !llvm.ptr<3>
// IR-NEXT:  %c4_i32 = arith.constant 4 : i32
// IR-NEXT:  nvvm.mbarrier.init %[[BPTR]], %c4_i32, predicate = %[[FIRST]] : !llvm.ptr<3>, i32, i1
// IR-NEXT:  nvvm.fence.mbarrier.init
// IR-NEXT:  nvvm.cluster.arrive.relaxed
// IR-NEXT:  nvvm.cluster.wait {tile.mbarrier_init}
// IR:       gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// IR-NEXT:  %[[LAST:.*]] = arith.addf
// IR-NEXT:  %[[WARPS:.*]] = memref.get_global @tile_scratch_0 : memref<2xf32, #gpu.address_space<workgroup>>
// IR:       scf.if
// IR-NEXT:    memref.store %[[LAST]], %[[WARPS]][%{{.*}}] : memref<2xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  }
// IR-NEXT:  gpu.barrier
// IR-NEXT:  %[[W0:.*]] = memref.load %[[WARPS]][%c0_3] : memref<2xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[W1:.*]] = memref.load %[[WARPS]][%c1] : memref<2xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[CTA:.*]] = arith.addf %[[W0]], %[[W1]] : f32
// IR-NEXT:  %[[RECV:.*]] = memref.get_global @tile_scratch_1 : memref<4xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[BARS2:.*]] = memref.get_global @tile_scratch_2 : memref<1xi64, #gpu.address_space<workgroup>>
// IR-NEXT:  %c0_i32 = arith.constant 0 : i32
// IR-NEXT:  %[[TID:.*]] = gpu.thread_id  x
// IR-NEXT:  %[[RANK32:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// IR-NEXT:  %[[RANK:.*]] = arith.index_cast %[[RANK32]] : i32 to index
// IR-NEXT:  %c3 = arith.constant 3 : index
// IR-NEXT:  %[[MINE:.*]] = arith.andi %[[RANK]], %c3 : index
// IR-NEXT:  %[[RADDR:.*]] = memref.extract_aligned_pointer_as_index %[[RECV]] : memref<4xf32, #gpu.address_space<workgroup>> -> index
// IR-NEXT:  %[[BADDR2:.*]] = memref.extract_aligned_pointer_as_index %[[BARS2]] : memref<1xi64, #gpu.address_space<workgroup>> -> index
// IR-NEXT:  %[[BI64:.*]] = arith.index_cast %[[BADDR2]] : index to i64
// IR-NEXT:  %[[BAR:.*]] = llvm.inttoptr %[[BI64]] : i64 to !llvm.ptr<3>
// IR-NEXT:  %[[OFF:.*]] = arith.muli %[[MINE]], %c4_4 : index
// IR-NEXT:  %[[SADDR:.*]] = arith.addi %[[RADDR]], %[[OFF]] : index
// IR-NEXT:  %[[SI64:.*]] = arith.index_cast %[[SADDR]] : index to i64
// IR-NEXT:  %[[SLOT:.*]] = llvm.inttoptr %[[SI64]] : i64 to !llvm.ptr<3>
// IR-NEXT:  %c60 = arith.constant 60 : index
// IR-NEXT:  %[[LOW:.*]] = arith.andi %[[TID]], %c60 : index
// IR-NEXT:  %[[PUSHER:.*]] = arith.cmpi eq, %[[LOW]], %c0_3 : index
// IR-NEXT:  scf.if %[[PUSHER]] {
// IR-NEXT:    %c3_18 = arith.constant 3 : index
// IR-NEXT:    %[[J:.*]] = arith.andi %[[TID]], %c3_18 : index
// IR-NEXT:    %[[TARGET:.*]] = arith.index_cast %[[J]] : index to i32
// IR-NEXT:    %[[THERE:.*]] = nvvm.mapa %[[SLOT]], %[[TARGET]] : !llvm.ptr<3> -> !llvm.ptr<7>
// IR-NEXT:    llvm.store %[[CTA]], %[[THERE]] : f32, !llvm.ptr<7>
// IR-NEXT:    %[[THEIRS:.*]] = nvvm.mapa %[[BAR]], %[[TARGET]] : !llvm.ptr<3> -> !llvm.ptr<7>
// IR-NEXT:    nvvm.mbarrier.arrive %[[THEIRS]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// IR-NEXT:  }
// IR-NEXT:  scf.while : () -> () {
// IR-NEXT:    %[[DONE:.*]] = nvvm.mbarrier.try_wait %[[BAR]], %c0_i32 {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32 -> i1
// IR-NEXT:    %true = arith.constant true
// IR-NEXT:    %[[MORE:.*]] = arith.xori %[[DONE]], %true : i1
// IR-NEXT:    scf.condition(%[[MORE]])
// IR-NEXT:  } do {
// IR-NEXT:    scf.yield
// IR-NEXT:  }
// IR-NEXT:  %[[X0:.*]] = memref.load %[[RECV]][%c0_3] : memref<4xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[X1:.*]] = memref.load %[[RECV]][%c1] : memref<4xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %c2 = arith.constant 2 : index
// IR-NEXT:  %[[X2:.*]] = memref.load %[[RECV]][%c2] : memref<4xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[X3:.*]] = memref.load %[[RECV]][%c3] : memref<4xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[S01:.*]] = arith.addf %[[X0]], %[[X1]] : f32
// IR-NEXT:  %[[S012:.*]] = arith.addf %[[S01]], %[[X2]] : f32
// IR-NEXT:  %[[S:.*]] = arith.addf %[[S012]], %[[X3]] : f32
// IR-NEXT:  memref.store %[[S]], %{{.*}}[%c0_3] : memref<1xf32, #gpu.address_space<private>>
// IR-NOT:   nvvm.cluster

// PTX-LABEL: .visible .entry cluster_row_sum(
// PTX:       .maxntid 64, 1, 1
// PTX-NEXT:  .explicitcluster
// PTX-NEXT:  .reqnctapercluster 4, 1, 1
// PTX:       .shared .align 16 .b8 tile_scratch_2[8];
// PTX:       .shared .align 16 .b8 tile_scratch_1[16];
// PTX:       .shared .align 16 .b8 tile_scratch_0[8];
// PTX:       mbarrier.init.shared.b64 [tile_scratch_2], %r{{[0-9]+}};
// PTX-NEXT:  fence.mbarrier_init.release.cluster;
// PTX-NEXT:  barrier.cluster.arrive.relaxed;
// PTX-NEXT:  barrier.cluster.wait;
// PTX:       ld.global.v4.b32 {[[A0:%r[0-9]+]], [[A1:%r[0-9]+]], {{.*}}}, [%rd{{[0-9]+}}];
// PTX-NEXT:  add.rn.f32 %r{{[0-9]+}}, [[A0]], [[A1]];
// PTX:       shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX:       st.shared.b32 [%rd{{[0-9]+}}],
// PTX:       bar.sync 0;
// PTX-NEXT:  setp.gt.u32 %p{{[0-9]+}}, [[T:%r[0-9]+]], 3;
// PTX-NEXT:  @%p{{[0-9]+}} bra [[WAIT:\$L__BB0_[0-9]+]];
// PTX-NEXT:  mov.u32 %r{{[0-9]+}}, %cluster_ctarank;
// PTX:       ld.shared.v2.b32 {[[W0:%r[0-9]+]], [[W1:%r[0-9]+]]}, [tile_scratch_0];
// PTX-NEXT:  add.rn.f32 [[CTA:%r[0-9]+]], [[W0]], [[W1]];
// PTX-NEXT:  mapa.shared::cluster.u64 [[THERE:%rd[0-9]+]], %rd{{[0-9]+}}, [[T]];
// PTX-NEXT:  st.shared::cluster.b32 [[[THERE]]], [[CTA]];
// PTX-NEXT:  mov.b64 [[BARS:%rd[0-9]+]], tile_scratch_2;
// PTX-NEXT:  mapa.shared::cluster.u64 [[THEIRS:%rd[0-9]+]], [[BARS]], [[T]];
// PTX-NEXT:  mov.b32 [[ONE:%r[0-9]+]], 1;
// PTX-NEXT:  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [[[THEIRS]]], [[ONE]];
// PTX-NEXT:  [[WAIT]]:
// PTX-NEXT:  mov.b32 [[PARITY:%r[0-9]+]], 0;
// PTX-NEXT:  mbarrier.try_wait.parity.acquire.cluster.shared.b64 [[DONE:%p[0-9]+]], [tile_scratch_2], [[PARITY]];
// PTX-NEXT:  not.pred [[MORE:%p[0-9]+]], [[DONE]];
// PTX-NEXT:  @[[MORE]] bra [[WAIT]];
// PTX-NEXT:  ld.shared.v4.b32 {[[X0:%r[0-9]+]], [[X1:%r[0-9]+]], [[X2:%r[0-9]+]], [[X3:%r[0-9]+]]}, [tile_scratch_1];
// PTX-NEXT:  add.rn.f32 [[S01:%r[0-9]+]], [[X0]], [[X1]];
// PTX-NEXT:  add.rn.f32 [[S012:%r[0-9]+]], [[S01]], [[X2]];
// PTX-NEXT:  add.rn.f32 [[S:%r[0-9]+]], [[S012]], [[X3]];
// PTX-NOT:   barrier.cluster
// PTX:       st.global.b32 [%rd{{[0-9]+}}], [[S]];
