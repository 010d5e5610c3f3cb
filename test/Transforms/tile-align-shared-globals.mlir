// RUN: tile-opt %s --convert-gpu-to-nvvm --tile-align-shared-globals | FileCheck %s
// RUN: tile-opt %s --tile-to-ptx | FileCheck %s --check-prefix=PTX
//
// A workgroup memref.global without an alignment becomes a shared llvm.mlir.global
// without one; LLVM's load/store vectorizer merges the unrolled loads below into
// 16-byte ld.shared.v4 while the PTX declared the variable `.align 4`, a misaligned
// access on the GPU. The pass gives every shared global 16-byte alignment (one that
// declares more keeps it).

// CHECK-DAG: llvm.mlir.global private @buf() {addr_space = 3 : i32, alignment = 16 : i64}
// CHECK-DAG: llvm.mlir.global private @wide() {addr_space = 3 : i32, alignment = 64 : i64}

// PTX:      .shared .align 16 .b8 buf[76];
// PTX:      ld.shared.v4.b32 {{.*}}[buf]
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    memref.global "private" @buf : memref<19xf32, #gpu.address_space<workgroup>>
    memref.global "private" @wide : memref<16xf32, #gpu.address_space<workgroup>> {alignment = 64}
    gpu.func @k(%A: memref<19xf32>, %B: memref<19xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c19 = arith.constant 19 : index
      %one = arith.constant 1.0 : f32
      %buf = memref.get_global @buf : memref<19xf32, #gpu.address_space<workgroup>>
      %wide = memref.get_global @wide : memref<16xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %a = memref.load %A[%t] : memref<19xf32>
      memref.store %a, %buf[%t] : memref<19xf32, #gpu.address_space<workgroup>>
      memref.store %one, %wide[%t] : memref<16xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %i = %c0 to %c19 step %c1 {
        %v = memref.load %buf[%i] : memref<19xf32, #gpu.address_space<workgroup>>
        memref.store %v, %B[%i] : memref<19xf32>
      } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}
      gpu.return
    }
  }
}
