// RUN: tile-opt %s --mlir-print-ir-before-all --cse --tile-lower-reduction --canonicalize -o %t 2>&1 | FileCheck %s --check-prefix=BEFORE-ALL
// RUN: tile-opt %s -mlir-print-ir-before=tile-lower-reduction --cse --tile-lower-reduction --canonicalize -o %t 2>&1 | FileCheck %s --check-prefix=BEFORE-ONE --implicit-check-not="IR Dump"
// RUN: tile-opt %s --mlir-print-ir-after=cse,canonicalize --pass-pipeline='builtin.module(cse,tile-lower-reduction,canonicalize)' -o %t 2>&1 | FileCheck %s --check-prefix=AFTER-TWO --implicit-check-not="IR Dump"
// RUN: tile-opt %s --mlir-print-ir-after-all --mlir-print-ir-after-change --cse --tile-lower-reduction --canonicalize -o %t 2>&1 | FileCheck %s --check-prefix=CHANGE --implicit-check-not="IR Dump"
// RUN: tile-opt %s --mlir-print-ir-after-all --mlir-print-ir-module-scope --pass-pipeline='builtin.module(func.func(cse))' -o %t 2>&1 | FileCheck %s --check-prefix=MODULE-SCOPE
//
// mlir-opt's IR printing flags, with mlir-opt's dump headers: before or after every
// pass, or only the named ones (Python and upstream alike); after a pass only when it
// changed the IR; the top-level op instead of the op the pass ran on.

// BEFORE-ALL:      // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-ALL-NEXT: module {
// BEFORE-ALL:      // -----// IR Dump Before TileLowerReduction (tile-lower-reduction) //----- //
// BEFORE-ALL:        "tile.reduce"
// BEFORE-ALL:      // -----// IR Dump Before Canonicalizer (canonicalize) //----- //
// BEFORE-ALL-NOT:    "tile.reduce"
// BEFORE-ALL-NOT:  IR Dump After

// BEFORE-ONE:      // -----// IR Dump Before TileLowerReduction (tile-lower-reduction) //----- //
// BEFORE-ONE-NEXT: module {
// BEFORE-ONE:        "tile.reduce"

// AFTER-TWO:      // -----// IR Dump After CSE (cse) //----- //
// AFTER-TWO:        "tile.reduce"
// AFTER-TWO:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-TWO-NOT:    "tile.reduce"

// CSE finds nothing to change here; the lowering and canonicalize change the IR.
// CHANGE:      // -----// IR Dump After TileLowerReduction (tile-lower-reduction) //----- //
// CHANGE:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //

// MODULE-SCOPE:      // -----// IR Dump After CSE (cse) ('func.func' operation: @f) //----- //
// MODULE-SCOPE-NEXT: module {
// MODULE-SCOPE-NEXT:   func.func @f

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
