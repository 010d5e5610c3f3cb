// RUN: not tile-opt %s --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --implicit-check-not=Traceback
// RUN: not tile-opt %s --split-input-file --pass-pipeline='func.func(canonicalize)' 2>&1 | FileCheck %s --check-prefix=SPLIT
//
// When the pipeline fails, the diagnostics come first, then a one-line command
// that reproduces the failure. It has the whole pipeline and the input flags.

// CHECK: error: can't run 'func.func' pass manager on 'builtin.module' op
// CHECK: note: reproduce with: tile-opt {{.*}}pipeline-failure.mlir --pass-pipeline='func.func(cse)'

// SPLIT: note: reproduce with: tile-opt {{.*}}pipeline-failure.mlir --split-input-file --pass-pipeline='func.func(canonicalize)'

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
