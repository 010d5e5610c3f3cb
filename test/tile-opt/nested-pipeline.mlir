// RUN: tile-opt %s --pass-pipeline='builtin.module(gpu.module(tile-lower-reduction,cse))' | FileCheck %s
// RUN: tile-opt %s --pass-pipeline='builtin.module(gpu.module(func.func(tile-lower-reduction)))' | FileCheck %s
// RUN: tile-opt %s --pass-pipeline='builtin.module(gpu.module(cse,tile-lower-reduction,canonicalize))' --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: tile-opt %s --convert-gpu-to-nvvm --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=IMPLICIT
//
// A tile pass under an anchor runs only on the ops that the anchor path selects:
// the tile.reduce in the gpu.module is lowered and the one outside stays. The
// upstream passes around it keep their places. As with mlir-opt, a pass flag for
// an upstream pass that is restricted to gpu.module is nested under gpu.module.

// CHECK-LABEL: func.func @outside
// CHECK:         "tile.reduce"
// CHECK-LABEL: gpu.module @kernels
// CHECK-LABEL:   func.func @inside
// CHECK-NOT:       tile.reduce
// CHECK:           return

// ORDER:      IR Dump After CSE (cse)
// ORDER-NEXT: gpu.module @kernels
// ORDER:      IR Dump After TileLowerReduction (tile-lower-reduction)
// ORDER:      IR Dump After Canonicalizer (canonicalize)
// ORDER-NEXT: gpu.module @kernels

// IMPLICIT:      IR Dump After ConvertGpuOpsToNVVMOps (convert-gpu-to-nvvm)
// IMPLICIT-NEXT: gpu.module @kernels

func.func @outside(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

gpu.module @kernels {
  func.func @inside(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
    return
  }
}
