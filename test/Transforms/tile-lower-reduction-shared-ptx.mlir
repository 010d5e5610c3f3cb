// RUN: tile-opt %s --tile-to-ptx | FileCheck %s
// RUN: tile-opt %s --tile-to-cubin -o %t.cubin
//
// The shared variant in PTX (sm_90a), run by part of a 256-thread block each time.
//
// A warp-scope op in warp 3: 4 rows of 64, G = 8. Each lane folds its 8 terms (the
// loop unrolled: stride 8 elements = 32 bytes), then 3 shuffles whose member mask is a
// register, 0xff << (lane & 24), never the full mask; lane 0 of each group stores; then
// bar.warp.sync -1 for the warp alone.
// CHECK-LABEL: .entry warp_in_a_block(
// CHECK:       ld.shared.b32 %[[X0:r[0-9]+]], [%[[AT:rd[0-9]+]]];
// CHECK-NEXT:  ld.shared.b32 %[[X1:r[0-9]+]], [%[[AT]]+32];
// CHECK-NEXT:  add.rn.f32 %{{r[0-9]+}}, %[[X0]], %[[X1]];
// CHECK:       ld.shared.b32 %{{r[0-9]+}}, [%[[AT]]+224];
// CHECK:       and.b32 %[[FIRST:r[0-9]+]], %{{r[0-9]+}}, 24;
// CHECK-NEXT:  mov.b32 %[[LANES:r[0-9]+]], 255;
// CHECK-NEXT:  shl.b32 %[[MASK:r[0-9]+]], %[[LANES]], %[[FIRST]];
// CHECK-NEXT:  shfl.sync.bfly.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 4, 31, %[[MASK]];
// CHECK:       shfl.sync.bfly.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 2, 31, %[[MASK]];
// CHECK:       shfl.sync.bfly.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 1, 31, %[[MASK]];
// CHECK:       st.shared.b32
// CHECK:       bar.warp.sync -1;
// CHECK-NOT:   bar.sync
// CHECK:       ret;
//
// A warpgroup-scope op in warpgroup 1: G = 32 (the full mask), 2 terms per lane, 5
// shuffles; then the warpgroup's named barrier, 8 + 1, over its 128 threads.
// CHECK-LABEL: .entry warpgroup_in_a_block(
// CHECK:       bar.sync 0;
// CHECK:       max.f32
// CHECK-NEXT:  shfl.sync.bfly.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 16, 31, -1;
// CHECK-COUNT-4: shfl.sync.bfly.b32
// CHECK:       bar.sync 9, 128;
// CHECK:       ret;
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    memref.global "private" @src : memref<4x64xf32, #gpu.address_space<workgroup>>
    memref.global "private" @dst : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.func @warp_in_a_block(%A: memref<4x64xf32>, %B: memref<4xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %src = memref.get_global @src : memref<4x64xf32, #gpu.address_space<workgroup>>
      %dst = memref.get_global @dst : memref<4xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %row = arith.divui %t, %c64 : index
      %col = arith.remui %t, %c64 : index
      %a = memref.load %A[%row, %col] : memref<4x64xf32>
      memref.store %a, %src[%row, %col] : memref<4x64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c32 = arith.constant 32 : index
      %warp = arith.divui %t, %c32 : index
      %c3 = arith.constant 3 : index
      %mine = arith.cmpi eq, %warp, %c3 : index
      scf.if %mine {
        "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>} : (memref<4xf32, #gpu.address_space<workgroup>>, memref<4x64xf32, #gpu.address_space<workgroup>>) -> ()
        %lane = arith.remui %t, %c32 : index
        %first = arith.cmpi ult, %lane, %c4 : index
        scf.if %first {
          %d = memref.load %dst[%lane] : memref<4xf32, #gpu.address_space<workgroup>>
          memref.store %d, %B[%lane] : memref<4xf32>
        }
      }
      gpu.return
    }
    gpu.func @warpgroup_in_a_block(%A: memref<4x64xf32>, %B: memref<4xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %src = memref.get_global @src : memref<4x64xf32, #gpu.address_space<workgroup>>
      %dst = memref.get_global @dst : memref<4xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %row = arith.divui %t, %c64 : index
      %col = arith.remui %t, %c64 : index
      %a = memref.load %A[%row, %col] : memref<4x64xf32>
      memref.store %a, %src[%row, %col] : memref<4x64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c128 = arith.constant 128 : index
      %c1 = arith.constant 1 : index
      %wg = arith.divui %t, %c128 : index
      %mine = arith.cmpi eq, %wg, %c1 : index
      scf.if %mine {
        "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warpgroup", axes = array<i64: 1>} : (memref<4xf32, #gpu.address_space<workgroup>>, memref<4x64xf32, #gpu.address_space<workgroup>>) -> ()
        %c255 = arith.constant 255 : index
        %last = arith.subi %c255, %t : index
        %first = arith.cmpi ult, %last, %c4 : index
        scf.if %first {
          %d = memref.load %dst[%last] : memref<4xf32, #gpu.address_space<workgroup>>
          memref.store %d, %B[%last] : memref<4xf32>
        }
      }
      gpu.return
    }
  }
}
