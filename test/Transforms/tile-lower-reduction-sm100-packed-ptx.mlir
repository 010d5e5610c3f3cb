// RUN: tile-opt %s --tile-to-ptx --chip=sm_100a | FileCheck %s
// RUN: tile-opt %s --tile-to-cubin --chip=sm_100a -o %t.cubin
// RUN: sed -e 's/chip = "sm_100a"/chip = "sm_100a", features = "+ptx88"/' %s | tile-opt - --tile-to-ptx --chip=sm_100a | FileCheck %s --check-prefix=PTX88
// RUN: sed -e 's/chip = "sm_100a"/chip = "sm_100a", features = "+ptx88"/' %s | tile-opt - --tile-to-cubin --chip=sm_100a -o %t.ptx88.cubin
//
// sm100_packed's PTX for sm_100a, and ptxas -arch=sm_100a on it. At the
// default PTX ISA of sm_100a (8.6), a sum of 16 registers is 7 packed
// add.rn.f32x2 and one scalar add.rn.f32 (even + odd), and a max stays a chain
// of 15 2-input max.f32. With features = "+ptx88" (second pair of RUN lines),
// LLVM 22 forms 3-input max.f32: 1 + 7 instead of 15.

// CHECK:       .version 8.6
// CHECK:       .target sm_100a

// CHECK-LABEL: .entry row_sum(
// CHECK-COUNT-7: add.rn.f32x2 {{%rd[0-9]+}}, {{%rd[0-9]+}}, {{%rd[0-9]+}};
// CHECK-NEXT:  mov.b64 {[[EVEN:%r[0-9]+]], [[ODD:%r[0-9]+]]}, {{%rd[0-9]+}};
// CHECK-NEXT:  add.rn.f32 {{%r[0-9]+}}, [[EVEN]], [[ODD]];
// CHECK-NOT:   add.rn.f32
// CHECK-NOT:   {{ld|st}}.local
// CHECK:       ret;

// CHECK-LABEL: .entry row_max(
// CHECK-COUNT-15: max.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
// CHECK-NOT:   max.f32
// CHECK-NOT:   {{ld|st}}.local
// CHECK:       ret;

// PTX88:       .version 8.8
// PTX88-LABEL: .entry row_sum(
// PTX88-COUNT-7: add.rn.f32x2
// PTX88-LABEL: .entry row_max(
// PTX88:       max.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
// PTX88-COUNT-7: max.f32 {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}}, {{%r[0-9]+}};
// PTX88-NOT:   max.f32
// PTX88:       ret;

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_100a">] {
    gpu.func @row_sum(%A: memref<16xf32>, %B: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %src = memref.alloca() : memref<16xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      scf.for %i = %c0 to %c16 step %c1 {
        %a = memref.load %A[%i] : memref<16xf32>
        memref.store %a, %src[%i] : memref<16xf32, #gpu.address_space<private>>
      } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}
      "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>}
        : (memref<1xf32, #gpu.address_space<private>>, memref<16xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%c0] : memref<1xf32>
      gpu.return
    }
    gpu.func @row_max(%A: memref<16xf32>, %B: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %src = memref.alloca() : memref<16xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      scf.for %i = %c0 to %c16 step %c1 {
        %a = memref.load %A[%i] : memref<16xf32>
        memref.store %a, %src[%i] : memref<16xf32, #gpu.address_space<private>>
      } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread", axes = array<i64: 0>}
        : (memref<1xf32, #gpu.address_space<private>>, memref<16xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%c0] : memref<1xf32>
      gpu.return
    }
  }
}
