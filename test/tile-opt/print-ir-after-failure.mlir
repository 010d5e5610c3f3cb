// RUN: not tile-opt %s --mlir-print-ir-after-failure --mlir-very-unsafe-disable-verifier-on-parsing --cse --tile-lower-reduction --canonicalize -o %t 2>&1 | FileCheck %s --implicit-check-not="IR Dump"
// RUN: not tile-opt %s --mlir-print-ir-after-failure --mlir-print-ir-before=canonicalize --mlir-very-unsafe-disable-verifier-on-parsing --cse --tile-lower-reduction --canonicalize -o %t 2>&1 | FileCheck %s --implicit-check-not="IR Dump"
//
// --mlir-print-ir-after-failure prints the IR after the pass that failed, and after
// no other. The pass that would come next never runs, so nothing prints before it.
// (--mlir-very-unsafe-disable-verifier-on-parsing lets the op reach the lowering.)

// CHECK:      error: 'tile.reduce' op no variant of tile.reduce applies
// CHECK:      // -----// IR Dump After TileLowerReduction Failed (tile-lower-reduction) //----- //
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @bad_axes
// CHECK-NEXT:     "tile.reduce"
// CHECK:      note: reproduce with: tile-opt

func.func @bad_axes(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 3>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
