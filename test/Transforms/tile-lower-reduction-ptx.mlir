// RUN: tile-opt %s --tile-to-ptx | FileCheck %s
// RUN: tile-opt %s --tile-to-cubin -o %t.cubin
//
// The register variants' PTX on sm_90a, through the whole pipeline
// (tile-lower-reduction ... gpu-module-to-binary), and ptxas.

// local_redux: a full-warp i32 sum is one redux.sync with the full mask, and
// no shuffle at all.
// CHECK-LABEL: .entry warp_sum_i32(
// CHECK:       mov.b32 [[MASK:%r[0-9]+]], -1;
// CHECK-NEXT:  redux.sync.add.s32 {{%r[0-9]+}}, {{%r[0-9]+}}, [[MASK]];
// CHECK-NOT:   shfl.sync
// CHECK:       ret;

// local with packed pairs: 4 f16 slots over 32 lanes, 10 32-bit shuffles
// (2 per offset 16, 8, 4, 2, 1); LLVM also pairs the f16 adds into add.rn.f16x2.
// CHECK-LABEL: .entry warp_sum_f16x4(
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK-NOT:   shfl.sync
// CHECK-NOT:   {{ld|st}}.local
// CHECK:       ret;

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @warp_sum_i32(%A: memref<32xi32>, %B: memref<32xi32>) kernel {
      %c0 = arith.constant 0 : index
      %lane = gpu.lane_id
      %src = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xi32, #gpu.address_space<private>>
      %a = memref.load %A[%lane] : memref<32xi32>
      memref.store %a, %src[%c0] : memref<1xi32, #gpu.address_space<private>>
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">}
        : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xi32, #gpu.address_space<private>>
      memref.store %b, %B[%lane] : memref<32xi32>
      gpu.return
    }
    gpu.func @warp_sum_f16x4(%A: memref<32x4xf16>, %B: memref<32x4xf16>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %lane = gpu.lane_id
      %src = memref.alloca() : memref<4xf16, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<4xf16, #gpu.address_space<private>>
      %a0 = memref.load %A[%lane, %c0] : memref<32x4xf16>
      memref.store %a0, %src[%c0] : memref<4xf16, #gpu.address_space<private>>
      %a1 = memref.load %A[%lane, %c1] : memref<32x4xf16>
      memref.store %a1, %src[%c1] : memref<4xf16, #gpu.address_space<private>>
      %a2 = memref.load %A[%lane, %c2] : memref<32x4xf16>
      memref.store %a2, %src[%c2] : memref<4xf16, #gpu.address_space<private>>
      %a3 = memref.load %A[%lane, %c3] : memref<32x4xf16>
      memref.store %a3, %src[%c3] : memref<4xf16, #gpu.address_space<private>>
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[4 : 1] + R[32 : 1@laneid]">}
        : (memref<4xf16, #gpu.address_space<private>>, memref<4xf16, #gpu.address_space<private>>) -> ()
      %b0 = memref.load %dst[%c0] : memref<4xf16, #gpu.address_space<private>>
      memref.store %b0, %B[%lane, %c0] : memref<32x4xf16>
      %b1 = memref.load %dst[%c1] : memref<4xf16, #gpu.address_space<private>>
      memref.store %b1, %B[%lane, %c1] : memref<32x4xf16>
      %b2 = memref.load %dst[%c2] : memref<4xf16, #gpu.address_space<private>>
      memref.store %b2, %B[%lane, %c2] : memref<32x4xf16>
      %b3 = memref.load %dst[%c3] : memref<4xf16, #gpu.address_space<private>>
      memref.store %b3, %B[%lane, %c3] : memref<32x4xf16>
      gpu.return
    }
  }
}
