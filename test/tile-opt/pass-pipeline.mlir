// RUN: tile-opt %s --pass-pipeline='builtin.module(tile-lower-reduction{chip=sm_80 fold=linear}, canonicalize, cse)' | FileCheck %s
// RUN: tile-opt %s --pass-pipeline='builtin.module(cse,tile-lower-reduction{chip=sm_80},canonicalize,tile-verify)' --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: tile-opt %s --canonicalize --tile-lower-reduction='chip=sm_80 fold=tree' --cse --mlir-print-ir-after-all -o %t 2>&1 | FileCheck %s --check-prefix=FLAGS
//
// Python passes (with options) and upstream passes mix in one pipeline, given as
// --pass-pipeline text or as one flag per pass, and run in the order given.

// CHECK-LABEL: func.func @f
// CHECK-NOT:     tile.
// CHECK:         return

// ORDER:     IR Dump After CSE (cse)
// ORDER:     IR Dump After TileLowerReduction (tile-lower-reduction)
// ORDER-NOT: tile.reduce
// ORDER:     IR Dump After Canonicalizer (canonicalize)
// ORDER:     IR Dump After TileVerify (tile-verify)

// FLAGS:     IR Dump After Canonicalizer (canonicalize)
// FLAGS:     "tile.reduce"
// FLAGS:     IR Dump After TileLowerReduction (tile-lower-reduction)
// FLAGS-NOT: tile.reduce
// FLAGS:     IR Dump After CSE (cse)

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
