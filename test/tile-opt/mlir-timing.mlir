// RUN: tile-opt %s --mlir-timing --pass-pipeline='builtin.module(tile-verify,canonicalize)' -o %t 2>&1 | FileCheck %s
//
// --mlir-timing reports the time of each pass, Python passes included, on stderr.

// CHECK:      Execution time report
// CHECK:      TileVerify
// CHECK-NEXT: Canonicalizer
// CHECK:      Total

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
