// RUN: tile-opt %s --convert-gpu-to-nvvm --tile-externalize-dynamic-shared | FileCheck %s
// RUN: tile-opt %s --tile-to-ptx | FileCheck %s --check-prefix=PTX
//
// convert-gpu-to-nvvm gives gpu.dynamic_shared_memory's global internal linkage, which
// NVPTX demotes into a 1-byte static .shared variable; this pass makes it external, so
// that the PTX declares CUDA's dynamic shared memory, `.extern .shared ... []`. Other
// shared globals (static shared memory) keep their linkage.

// CHECK-DAG: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: llvm.mlir.global private @scratch() {addr_space = 3 : i32
// CHECK-NOT: internal @__dynamic_shmem__

// PTX:      .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// PTX-NOT:  __dynamic_shmem__0 has been demoted
// PTX:      .entry dyn(
// PTX:      .shared {{.*}}scratch
// PTX:      st.shared.b32 {{.*}}__dynamic_shmem__0+1024
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    memref.global "private" @scratch : memref<4xf32, #gpu.address_space<workgroup>> {alignment = 16}
    gpu.func @dyn(%A: memref<256xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1024 = arith.constant 1024 : index
      %t = gpu.thread_id x
      %bytes = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %s = memref.view %bytes[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
      %n = memref.view %bytes[%c1024][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<1xi32, #gpu.address_space<workgroup>>
      %a = memref.load %A[%t] : memref<256xf32>
      memref.store %a, %s[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      %i = arith.index_cast %t : index to i32
      memref.store %i, %n[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
      %w = memref.get_global @scratch : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %a, %w[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %b = memref.load %w[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %b, %A[%t] : memref<256xf32>
      gpu.return
    }
  }
}
