// RUN: tile-opt %s --mlir-print-ir-after-all --cse --tile-verify --canonicalize -o %t 2>&1 | FileCheck %s
// RUN: tile-opt %s --mlir-print-ir-after-all --pass-pipeline='builtin.module(tile-verify,func.func(cse))' -o %t 2>&1 | FileCheck %s --check-prefix=PIPELINE
//
// --mlir-print-ir-after-all dumps the IR to stderr after every pass, upstream and
// Python alike, in the order the passes ran. The dump headers are mlir-opt's.

// CHECK:      // -----// IR Dump After CSE (cse) //----- //
// CHECK-NEXT: module {
// CHECK:      // -----// IR Dump After TileVerify (tile-verify) //----- //
// CHECK-NEXT: module {
// CHECK:        "tile.reduce"
// CHECK:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //

// PIPELINE:      // -----// IR Dump After TileVerify (tile-verify) //----- //
// PIPELINE:      // -----// IR Dump After CSE (cse) //----- //
// PIPELINE-NEXT: func.func @f

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
