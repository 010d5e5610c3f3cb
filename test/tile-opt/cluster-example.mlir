// The example of docs/lowering-cluster.md, lowered and compiled to PTX; the lines the
// page shows, so that the page cannot drift from what the tools print.
//
// RUN: tile-opt %S/../../examples/cluster_row_sum.mlir --tile-lower-reduction | FileCheck %s --check-prefix=IR
// RUN: tile-opt %S/../../examples/cluster_row_sum.mlir --tile-to-ptx | FileCheck %s --check-prefix=PTX

// The two scratches, the CTA's exchange of its 2 warps' partials, thread 0 of each CTA
// storing the CTA's partial, the cluster barrier, the 4 CTAs' partials in rank order
// through mapa, the cluster barrier again.
// IR:       memref.global "private" @tile_scratch_1 : memref<1xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64, tile.scratch = "cluster reduce, the CTA partials: 1 x 1 slot(s) of f32: 4 bytes"}
// IR-NEXT:  memref.global "private" @tile_scratch_0 : memref<2xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64, tile.scratch = "cluster reduce, the warps of each CTA: 1 phase(s) x 1 instance(s) x 1 x 2 warp partial(s) x 1 slot(s) of f32: 8 bytes"}
// IR-LABEL: gpu.func @cluster_row_sum
// IR:       gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// IR-NEXT:  %[[LAST:.*]] = arith.addf
// IR-NEXT:  %[[WARPS:.*]] = memref.get_global @tile_scratch_0 : memref<2xf32, #gpu.address_space<workgroup>>
// IR:       scf.if
// IR-NEXT:    memref.store %[[LAST]], %[[WARPS]][%{{.*}}] : memref<2xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  }
// IR-NEXT:  gpu.barrier
// IR-NEXT:  %[[W0:.*]] = memref.load %[[WARPS]][%c0_1] : memref<2xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[W1:.*]] = memref.load %[[WARPS]][%c1] : memref<2xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[CTA:.*]] = arith.addf %[[W0]], %[[W1]] : f32
// IR-NEXT:  %[[CL:.*]] = memref.get_global @tile_scratch_1 : memref<1xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  %[[TID:.*]] = gpu.thread_id  x
// IR-NEXT:  %c63 = arith.constant 63 : index
// IR-NEXT:  %[[LOW:.*]] = arith.andi %[[TID]], %c63 : index
// IR-NEXT:  %[[WRITER:.*]] = arith.cmpi eq, %[[LOW]], %c0_1 : index
// IR-NEXT:  scf.if %[[WRITER]] {
// IR-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// IR-NEXT:    memref.store %[[CTA]], %[[CL]][%[[ZERO]]] : memref<1xf32, #gpu.address_space<workgroup>>
// IR-NEXT:  }
// IR-NEXT:  nvvm.cluster.arrive
// IR-NEXT:  nvvm.cluster.wait
// IR-NEXT:  %c0_i32 = arith.constant 0 : i32
// IR-NEXT:  %c3_i32 = arith.constant 3 : i32
// IR-NEXT:  %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[CL]] : memref<1xf32, #gpu.address_space<workgroup>> -> index
// IR-NEXT:  %[[I64:.*]] = arith.index_cast %[[ADDR]] : index to i64
// IR-NEXT:  %[[PTR:.*]] = llvm.inttoptr %[[I64]] : i64 to !llvm.ptr<3>
// IR-NEXT:  %[[R0:.*]] = nvvm.mapa %[[PTR]], %c0_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// IR-NEXT:  %[[X0:.*]] = llvm.load %[[R0]] : !llvm.ptr<7> -> f32
// IR-NEXT:  %[[R1:.*]] = nvvm.mapa %[[PTR]], %c1_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// IR-NEXT:  %[[X1:.*]] = llvm.load %[[R1]] : !llvm.ptr<7> -> f32
// IR-NEXT:  %[[R2:.*]] = nvvm.mapa %[[PTR]], %c2_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// IR-NEXT:  %[[X2:.*]] = llvm.load %[[R2]] : !llvm.ptr<7> -> f32
// IR-NEXT:  %[[R3:.*]] = nvvm.mapa %[[PTR]], %c3_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// IR-NEXT:  %[[X3:.*]] = llvm.load %[[R3]] : !llvm.ptr<7> -> f32
// IR-NEXT:  %[[S01:.*]] = arith.addf %[[X0]], %[[X1]] : f32
// IR-NEXT:  %[[S012:.*]] = arith.addf %[[S01]], %[[X2]] : f32
// IR-NEXT:  %[[S:.*]] = arith.addf %[[S012]], %[[X3]] : f32
// IR-NEXT:  nvvm.cluster.arrive
// IR-NEXT:  nvvm.cluster.wait
// IR-NEXT:  memref.store %[[S]], %{{.*}}[%c0_1] : memref<1xf32, #gpu.address_space<private>>

// PTX-LABEL: .visible .entry cluster_row_sum(
// PTX:       .maxntid 64, 1, 1
// PTX-NEXT:  .explicitcluster
// PTX-NEXT:  .reqnctapercluster 4, 1, 1
// PTX:       .shared .align 16 .b8 tile_scratch_1[4];
// PTX:       .shared .align 16 .b8 tile_scratch_0[8];
// PTX:       ld.global.v4.b32 {[[A0:%r[0-9]+]], [[A1:%r[0-9]+]], {{.*}}}, [%rd{{[0-9]+}}];
// PTX-NEXT:  add.rn.f32 %r{{[0-9]+}}, [[A0]], [[A1]];
// PTX:       shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// PTX:       st.shared.b32 [%rd{{[0-9]+}}],
// PTX:       bar.sync 0;
// PTX-NEXT:  setp.ne.b32
// PTX-NEXT:  @%p{{[0-9]+}} bra
// PTX-NEXT:  ld.shared.v2.b32 {[[W0:%r[0-9]+]], [[W1:%r[0-9]+]]}, [tile_scratch_0];
// PTX-NEXT:  add.rn.f32 [[CTA:%r[0-9]+]], [[W0]], [[W1]];
// PTX-NEXT:  st.shared.b32 [tile_scratch_1], [[CTA]];
// PTX-NEXT:  $L__BB0_4:
// PTX-NEXT:  barrier.cluster.arrive;
// PTX-NEXT:  barrier.cluster.wait;
// PTX-NEXT:  mov.b64 [[LOCAL:%rd[0-9]+]], tile_scratch_1;
// PTX-NEXT:  mapa.shared::cluster.u64 [[P0:%rd[0-9]+]], [[LOCAL]], 0;
// PTX-NEXT:  ld.shared::cluster.b32 [[X0:%r[0-9]+]], [[[P0]]];
// PTX-NEXT:  mapa.shared::cluster.u64 [[P1:%rd[0-9]+]], [[LOCAL]], 1;
// PTX-NEXT:  ld.shared::cluster.b32 [[X1:%r[0-9]+]], [[[P1]]];
// PTX-NEXT:  mapa.shared::cluster.u64 [[P2:%rd[0-9]+]], [[LOCAL]], 2;
// PTX-NEXT:  ld.shared::cluster.b32 [[X2:%r[0-9]+]], [[[P2]]];
// PTX-NEXT:  mapa.shared::cluster.u64 [[P3:%rd[0-9]+]], [[LOCAL]], 3;
// PTX-NEXT:  ld.shared::cluster.b32 [[X3:%r[0-9]+]], [[[P3]]];
// PTX-NEXT:  add.rn.f32 [[S01:%r[0-9]+]], [[X0]], [[X1]];
// PTX-NEXT:  add.rn.f32 [[S012:%r[0-9]+]], [[S01]], [[X2]];
// PTX-NEXT:  add.rn.f32 [[S:%r[0-9]+]], [[S012]], [[X3]];
// PTX-NEXT:  barrier.cluster.arrive;
// PTX-NEXT:  barrier.cluster.wait;
// PTX:       st.global.b32 [%rd{{[0-9]+}}], [[S]];
