// RUN: tile-opt %s --tile-to-ptx | FileCheck %s
//
// A copy that the differential tests drew (tile_mlir.testing.random_kernels, seed 0,
// copy_0_32): f64 from element 20 of 25 into a thread's 24 registers (layout
// S[((3, 8)) : ((1, 3))]), the rest padding. A vector of it that may cross the end of the
// row loads element by element under its bounds: a masked load there, with the padding as
// its pass-through, stopped LLVM's NVPTX backend ("Passthru operand expected to be poison
// or undef", an assertion in the child process that runs it).
// CHECK-LABEL: .entry straddle(
// CHECK:       ld.global.b64
// CHECK:       ret;
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    // copy_0_32: a thread-scope load of f64, one block of 1 thread(s).
    gpu.func @straddle(%M: memref<25xf64>, %R: memref<1x24xf64>) kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c6 = arith.constant 6 : index
      %c7 = arith.constant 7 : index
      %c8 = arith.constant 8 : index
      %c9 = arith.constant 9 : index
      %c10 = arith.constant 10 : index
      %c11 = arith.constant 11 : index
      %c12 = arith.constant 12 : index
      %c13 = arith.constant 13 : index
      %c14 = arith.constant 14 : index
      %c15 = arith.constant 15 : index
      %c16 = arith.constant 16 : index
      %c17 = arith.constant 17 : index
      %c18 = arith.constant 18 : index
      %c19 = arith.constant 19 : index
      %c20 = arith.constant 20 : index
      %c21 = arith.constant 21 : index
      %c22 = arith.constant 22 : index
      %c23 = arith.constant 23 : index
      %o0 = arith.constant 20 : index
      %t = memref.alloca() : memref<24xf64, #gpu.address_space<private>>
      %r0 = memref.load %R[%tid, %c0] : memref<1x24xf64>
      memref.store %r0, %t[%c0] : memref<24xf64, #gpu.address_space<private>>
      %r1 = memref.load %R[%tid, %c1] : memref<1x24xf64>
      memref.store %r1, %t[%c1] : memref<24xf64, #gpu.address_space<private>>
      %r2 = memref.load %R[%tid, %c2] : memref<1x24xf64>
      memref.store %r2, %t[%c2] : memref<24xf64, #gpu.address_space<private>>
      %r3 = memref.load %R[%tid, %c3] : memref<1x24xf64>
      memref.store %r3, %t[%c3] : memref<24xf64, #gpu.address_space<private>>
      %r4 = memref.load %R[%tid, %c4] : memref<1x24xf64>
      memref.store %r4, %t[%c4] : memref<24xf64, #gpu.address_space<private>>
      %r5 = memref.load %R[%tid, %c5] : memref<1x24xf64>
      memref.store %r5, %t[%c5] : memref<24xf64, #gpu.address_space<private>>
      %r6 = memref.load %R[%tid, %c6] : memref<1x24xf64>
      memref.store %r6, %t[%c6] : memref<24xf64, #gpu.address_space<private>>
      %r7 = memref.load %R[%tid, %c7] : memref<1x24xf64>
      memref.store %r7, %t[%c7] : memref<24xf64, #gpu.address_space<private>>
      %r8 = memref.load %R[%tid, %c8] : memref<1x24xf64>
      memref.store %r8, %t[%c8] : memref<24xf64, #gpu.address_space<private>>
      %r9 = memref.load %R[%tid, %c9] : memref<1x24xf64>
      memref.store %r9, %t[%c9] : memref<24xf64, #gpu.address_space<private>>
      %r10 = memref.load %R[%tid, %c10] : memref<1x24xf64>
      memref.store %r10, %t[%c10] : memref<24xf64, #gpu.address_space<private>>
      %r11 = memref.load %R[%tid, %c11] : memref<1x24xf64>
      memref.store %r11, %t[%c11] : memref<24xf64, #gpu.address_space<private>>
      %r12 = memref.load %R[%tid, %c12] : memref<1x24xf64>
      memref.store %r12, %t[%c12] : memref<24xf64, #gpu.address_space<private>>
      %r13 = memref.load %R[%tid, %c13] : memref<1x24xf64>
      memref.store %r13, %t[%c13] : memref<24xf64, #gpu.address_space<private>>
      %r14 = memref.load %R[%tid, %c14] : memref<1x24xf64>
      memref.store %r14, %t[%c14] : memref<24xf64, #gpu.address_space<private>>
      %r15 = memref.load %R[%tid, %c15] : memref<1x24xf64>
      memref.store %r15, %t[%c15] : memref<24xf64, #gpu.address_space<private>>
      %r16 = memref.load %R[%tid, %c16] : memref<1x24xf64>
      memref.store %r16, %t[%c16] : memref<24xf64, #gpu.address_space<private>>
      %r17 = memref.load %R[%tid, %c17] : memref<1x24xf64>
      memref.store %r17, %t[%c17] : memref<24xf64, #gpu.address_space<private>>
      %r18 = memref.load %R[%tid, %c18] : memref<1x24xf64>
      memref.store %r18, %t[%c18] : memref<24xf64, #gpu.address_space<private>>
      %r19 = memref.load %R[%tid, %c19] : memref<1x24xf64>
      memref.store %r19, %t[%c19] : memref<24xf64, #gpu.address_space<private>>
      %r20 = memref.load %R[%tid, %c20] : memref<1x24xf64>
      memref.store %r20, %t[%c20] : memref<24xf64, #gpu.address_space<private>>
      %r21 = memref.load %R[%tid, %c21] : memref<1x24xf64>
      memref.store %r21, %t[%c21] : memref<24xf64, #gpu.address_space<private>>
      %r22 = memref.load %R[%tid, %c22] : memref<1x24xf64>
      memref.store %r22, %t[%c22] : memref<24xf64, #gpu.address_space<private>>
      %r23 = memref.load %R[%tid, %c23] : memref<1x24xf64>
      memref.store %r23, %t[%c23] : memref<24xf64, #gpu.address_space<private>>
      "tile.copy"(%t, %M, %o0) {exec_scope = "thread", layout = #tile.layout<"S[((3, 8)) : ((1, 3))]">, padding = 0xa3627eb0016635c0 : f64} : (memref<24xf64, #gpu.address_space<private>>, memref<25xf64>, index) -> ()
      %w0 = memref.load %t[%c0] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w0, %R[%tid, %c0] : memref<1x24xf64>
      %w1 = memref.load %t[%c1] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w1, %R[%tid, %c1] : memref<1x24xf64>
      %w2 = memref.load %t[%c2] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w2, %R[%tid, %c2] : memref<1x24xf64>
      %w3 = memref.load %t[%c3] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w3, %R[%tid, %c3] : memref<1x24xf64>
      %w4 = memref.load %t[%c4] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w4, %R[%tid, %c4] : memref<1x24xf64>
      %w5 = memref.load %t[%c5] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w5, %R[%tid, %c5] : memref<1x24xf64>
      %w6 = memref.load %t[%c6] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w6, %R[%tid, %c6] : memref<1x24xf64>
      %w7 = memref.load %t[%c7] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w7, %R[%tid, %c7] : memref<1x24xf64>
      %w8 = memref.load %t[%c8] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w8, %R[%tid, %c8] : memref<1x24xf64>
      %w9 = memref.load %t[%c9] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w9, %R[%tid, %c9] : memref<1x24xf64>
      %w10 = memref.load %t[%c10] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w10, %R[%tid, %c10] : memref<1x24xf64>
      %w11 = memref.load %t[%c11] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w11, %R[%tid, %c11] : memref<1x24xf64>
      %w12 = memref.load %t[%c12] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w12, %R[%tid, %c12] : memref<1x24xf64>
      %w13 = memref.load %t[%c13] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w13, %R[%tid, %c13] : memref<1x24xf64>
      %w14 = memref.load %t[%c14] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w14, %R[%tid, %c14] : memref<1x24xf64>
      %w15 = memref.load %t[%c15] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w15, %R[%tid, %c15] : memref<1x24xf64>
      %w16 = memref.load %t[%c16] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w16, %R[%tid, %c16] : memref<1x24xf64>
      %w17 = memref.load %t[%c17] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w17, %R[%tid, %c17] : memref<1x24xf64>
      %w18 = memref.load %t[%c18] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w18, %R[%tid, %c18] : memref<1x24xf64>
      %w19 = memref.load %t[%c19] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w19, %R[%tid, %c19] : memref<1x24xf64>
      %w20 = memref.load %t[%c20] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w20, %R[%tid, %c20] : memref<1x24xf64>
      %w21 = memref.load %t[%c21] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w21, %R[%tid, %c21] : memref<1x24xf64>
      %w22 = memref.load %t[%c22] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w22, %R[%tid, %c22] : memref<1x24xf64>
      %w23 = memref.load %t[%c23] : memref<24xf64, #gpu.address_space<private>>
      memref.store %w23, %R[%tid, %c23] : memref<1x24xf64>
      gpu.return
    }
  }
}
