// RUN: tile-opt %s -o %t | count 0
// RUN: FileCheck %s < %t
// RUN: rm -f %t.failed
// RUN: echo 'func.func @broken(' | not tile-opt - -o %t.failed
// RUN: not ls %t.failed
//
// -o writes the module to a file and nothing to stdout. As with mlir-opt, a
// failed run leaves no output file behind.

// CHECK-LABEL: func.func @f
// CHECK:         "tile.reduce"
func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
