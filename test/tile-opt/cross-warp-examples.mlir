// The examples of docs/lowering-cross-warp.md, lowered and compiled to PTX: the lines the
// page shows, so that the page cannot drift from what the tools print.
//
// RUN: tile-opt %S/../../examples/cross_warp_warpgroup.mlir --tile-lower-reduction | FileCheck %s --check-prefix=WG
// RUN: tile-opt %S/../../examples/cross_warp_warpgroup.mlir --tile-to-ptx | FileCheck %s --check-prefix=WG-PTX
// RUN: tile-opt %S/../../examples/cross_warp_cta_rows.mlir --tile-lower-reduction | FileCheck %s --check-prefix=ROWS
// RUN: tile-opt %S/../../examples/cross_warp_cta_rows.mlir --tile-to-ptx | FileCheck %s --check-prefix=ROWS-PTX
// RUN: tile-opt %S/../../examples/cross_warp_loop.mlir --tile-lower-reduction | FileCheck %s --check-prefix=LOOP
// RUN: tile-opt %S/../../examples/cross_warp_loop.mlir --tile-to-ptx | FileCheck %s --check-prefix=LOOP-PTX

// A warpgroup sum in a block of two warpgroups: a scratch row of 4 partials per
// warpgroup, the writers (lane 0), named barrier 8 + w over 128 threads, the partials in
// ascending order.
// WG:       memref.global "private" @tile_scratch_0 : memref<8xf32, #gpu.address_space<workgroup>>
// WG-SAME:  tile.scratch = "cross_warp warpgroup reduce: 1 phase(s) x 2 instance(s) x 1 x 4 warp partial(s) x 1 slot(s) of f32: 32 bytes"
// WG-LABEL: gpu.func @warpgroup_sum
// WG-COUNT-5: gpu.shuffle  xor
// WG:       %[[SCRATCH:.*]] = memref.get_global @tile_scratch_0
// WG:       %[[TID:.*]] = gpu.thread_id  x
// WG:       %[[T:.*]] = arith.andi %[[TID]], %c127 : index
// WG:       %[[W:.*]] = arith.shrui %[[TID]], %c7 : index
// WG:       %[[ROW:.*]] = arith.muli %[[W]], %c4 : index
// WG:       %[[LANE:.*]] = arith.andi %[[T]], %c31 : index
// WG:       %[[WRITER:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : index
// WG:       scf.if %[[WRITER]] {
// WG-NEXT:    memref.store %{{.*}}, %[[SCRATCH]][%{{.*}}]
// WG-NEXT:  }
// WG:       %[[W32:.*]] = arith.index_cast %[[W]] : index to i32
// WG:       %[[ID:.*]] = arith.addi %[[W32]], %c8_i32 : i32
// WG:       nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// WG-NOT:   gpu.barrier
// WG:       %[[P0:.*]] = memref.load %[[SCRATCH]][%[[ROW]]]
// WG:       %[[P1:.*]] = memref.load %[[SCRATCH]]
// WG:       %[[P2:.*]] = memref.load %[[SCRATCH]]
// WG:       %[[P3:.*]] = memref.load %[[SCRATCH]]
// WG:       %[[S01:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// WG:       %[[S012:.*]] = arith.addf %[[S01]], %[[P2]] : f32
// WG:       %[[S:.*]] = arith.addf %[[S012]], %[[P3]] : f32
// WG:       memref.store %[[S]], %{{.*}}[%{{.*}}] : memref<1xf32, #gpu.address_space<private>>
// WG-NOT:   tile.reduce

// WG-PTX:       .shared .align 16 .b8 tile_scratch_0[32];
// WG-PTX:       shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// WG-PTX:       shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// WG-PTX:       shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// WG-PTX:       shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// WG-PTX:       shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// WG-PTX:       st.shared.b32
// WG-PTX:       or.b32 [[ID:%r[0-9]+]], %r{{[0-9]+}}, 8;
// WG-PTX-NEXT:  bar.sync [[ID]], 128;
// WG-PTX-NEXT:  ld.shared.v4.b32 {[[P0:%r[0-9]+]], [[P1:%r[0-9]+]], [[P2:%r[0-9]+]], [[P3:%r[0-9]+]]}
// WG-PTX-NEXT:  add.rn.f32 [[S01:%r[0-9]+]], [[P0]], [[P1]];
// WG-PTX-NEXT:  add.rn.f32 [[S012:%r[0-9]+]], [[S01]], [[P2]];
// WG-PTX-NEXT:  add.rn.f32 {{%r[0-9]+}}, [[S012]], [[P3]];
// WG-PTX-NOT:   bar.sync 0

// A cta of 8 warps, 2 rows: scratch[k][w] with k the row (thread bit 7), the block's
// barrier, the row's 4 partials side by side.
// ROWS:       memref.global "private" @tile_scratch_0 : memref<8xf32, #gpu.address_space<workgroup>>
// ROWS-SAME:  tile.scratch = "cross_warp cta reduce: 1 phase(s) x 1 instance(s) x 2 x 4 warp partial(s) x 1 slot(s) of f32: 32 bytes"
// ROWS-LABEL: gpu.func @cta_row_max
// ROWS:       %[[TID:.*]] = gpu.thread_id  x
// ROWS:       %[[ID:.*]] = gpu.thread_id  x
// ROWS-NOT:   gpu.thread_id  y
// ROWS:       %[[HI:.*]] = arith.shrui %[[ID]], %c7 : index
// ROWS:       %[[K:.*]] = arith.andi %[[HI]], %{{.*}} : index
// ROWS:       %[[KW:.*]] = arith.muli %[[K]], %c4 : index
// ROWS:       scf.if
// ROWS:       gpu.barrier
// ROWS-NOT:   nvvm.barrier
// ROWS:       %[[P0:.*]] = memref.load %{{.*}}[%[[KW]]]
// ROWS-COUNT-3: memref.load
// ROWS:       arith.maxnumf
// ROWS:       arith.maxnumf
// ROWS:       %[[M:.*]] = arith.maxnumf
// ROWS:       memref.store %[[M]]

// ROWS-PTX:       .shared .align 16 .b8 tile_scratch_0[32];
// ROWS-PTX-COUNT-5: shfl.sync.bfly.b32
// ROWS-PTX:       st.shared.b32
// ROWS-PTX:       bar.sync 0;
// ROWS-PTX-NEXT:  ld.shared.v4.b32
// ROWS-PTX-COUNT-3: max.f32

// The op in a loop: two halves and the counter; one barrier per run; accum last.
// LOOP:       memref.global "private" @tile_scratch_0 : memref<8xf32, #gpu.address_space<workgroup>>
// LOOP-SAME:  tile.scratch = "cross_warp cta reduce: 2 phase(s) x 1 instance(s) x 1 x 4 warp partial(s) x 1 slot(s) of f32: 32 bytes"
// LOOP-LABEL: gpu.func @cta_loop_sum
// LOOP-NEXT:  %[[COUNTER:.*]] = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
// LOOP:       memref.store %c0_i32, %[[COUNTER]][
// LOOP:       scf.for
// LOOP:         %[[PHASE:.*]] = memref.load %[[COUNTER]][
// LOOP-NEXT:    %[[NEXT:.*]] = arith.xori %[[PHASE]], %c1_i32 : i32
// LOOP-NEXT:    memref.store %[[NEXT]], %[[COUNTER]][
// LOOP-NEXT:    %[[HALF:.*]] = arith.index_cast %[[PHASE]] : i32 to index
// LOOP:         %[[BASE:.*]] = arith.muli %[[HALF]], %c4 : index
// LOOP:         scf.if
// LOOP:         gpu.barrier
// LOOP-NOT:     gpu.barrier
// LOOP:         memref.load %{{.*}}[%[[BASE]]]
// LOOP-COUNT-2: arith.addf
// LOOP:         %[[S:.*]] = arith.addf
// LOOP-NEXT:    %[[OLD:.*]] = memref.load
// LOOP-NEXT:    %[[NEW:.*]] = arith.addf %[[OLD]], %[[S]] : f32
// LOOP-NEXT:    memref.store %[[NEW]]
// LOOP-NEXT:  }

// LOOP-PTX:      .shared .align 16 .b8 tile_scratch_0[32];
// LOOP-PTX:      st.shared.b32 [[[W:%rd[0-9]+]]],
// LOOP-PTX:      bar.sync 0;
// LOOP-PTX-NEXT: ld.shared.v4.b32 {{.*}}, [tile_scratch_0];
// LOOP-PTX:      st.shared.b32 [[[W]]+16],
// LOOP-PTX:      bar.sync 0;
// LOOP-PTX-NEXT: ld.shared.v4.b32 {{.*}}, [tile_scratch_0+16];
// LOOP-PTX:      st.shared.b32 [[[W]]],
// LOOP-PTX:      bar.sync 0;
// LOOP-PTX-NEXT: ld.shared.v4.b32 {{.*}}, [tile_scratch_0];
// LOOP-PTX-NOT:  bar.sync
