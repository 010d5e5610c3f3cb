// RUN: tile-opt %s --tile-to-ptx | FileCheck %s
// RUN: tile-opt %s --tile-to-cubin -o %t.cubin
//
// A combiner of two operands across the 8 warps of a cta, in PTX (sm_90a): the online
// softmax pair (max, sum of exp). Each butterfly step shuffles both operands; then the
// writer of each warp stores both into the one scratch, one barrier (bar.sync 0) for
// both, and every thread reads the 8 partials (16 words) as four 16-byte loads. No
// local memory.
// CHECK-LABEL: .entry cta_softmax(
// CHECK-NOT:   .local
// CHECK:       shfl.sync.bfly.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 16, 31, -1;
// CHECK-NEXT:  shfl.sync.bfly.b32 %{{r[0-9]+}}, %{{r[0-9]+}}, 16, 31, -1;
// CHECK:       st.shared.b32 [%[[AT:rd[0-9]+]]], %{{r[0-9]+}};
// CHECK-NEXT:  st.shared.b32 [%[[AT]]+4], %{{r[0-9]+}};
// CHECK:       bar.sync 0;
// CHECK-NOT:   bar.sync
// CHECK-COUNT-4: ld.shared.v4.b32
// CHECK-NOT:   bar.sync
// CHECK-NOT:   .local
// CHECK:       ret;
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    func.func private @online_softmax(%l0: f32, %l1: f32, %r0: f32, %r1: f32) -> (f32, f32) {
      %m = arith.maxnumf %l0, %r0 : f32
      %dl = arith.subf %l0, %m : f32
      %dr = arith.subf %r0, %m : f32
      %el = math.exp %dl : f32
      %er = math.exp %dr : f32
      %sl = arith.mulf %l1, %el : f32
      %sr = arith.mulf %r1, %er : f32
      %s = arith.addf %sl, %sr : f32
      return %m, %s : f32, f32
    }
    gpu.func @cta_softmax(%A: memref<256x2xf32>, %B: memref<256x2xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %sm = memref.alloca() : memref<2xf32, #gpu.address_space<private>>
      %ss = memref.alloca() : memref<2xf32, #gpu.address_space<private>>
      %dm = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %ds = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      %one = arith.constant 1.0 : f32
      %x0 = memref.load %A[%t, %c0] : memref<256x2xf32>
      %x1 = memref.load %A[%t, %c1] : memref<256x2xf32>
      memref.store %x0, %sm[%c0] : memref<2xf32, #gpu.address_space<private>>
      memref.store %x1, %sm[%c1] : memref<2xf32, #gpu.address_space<private>>
      memref.store %one, %ss[%c0] : memref<2xf32, #gpu.address_space<private>>
      memref.store %one, %ss[%c1] : memref<2xf32, #gpu.address_space<private>>
      "tile.reduce2"(%dm, %ds, %sm, %ss) {combiner = @online_softmax, exec_scope = "cta", axes = array<i64: 0, 1, 2>,
          src_layout = #tile.layout<"S[(8, 32, 2) : (1@warpid, 1@laneid, 1)]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 8) : (1@laneid, 1@warpid)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      %m = memref.load %dm[%c0] : memref<1xf32, #gpu.address_space<private>>
      %s = memref.load %ds[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %m, %B[%t, %c0] : memref<256x2xf32>
      memref.store %s, %B[%t, %c1] : memref<256x2xf32>
      gpu.return
    }
  }
}
