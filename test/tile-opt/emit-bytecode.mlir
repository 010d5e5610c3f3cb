// RUN: tile-opt %s --emit-bytecode -o %t.mlirbc
// RUN: tile-opt %t.mlirbc --mlir-print-debuginfo | FileCheck %s
// RUN: tile-opt %s -emit-bytecode --tile-lower-reduction | tile-opt - | FileCheck %s --check-prefix=LOWERED
// RUN: not tile-opt %s --emit-bytecode --split-input-file 2>&1 | FileCheck %s --check-prefix=SPLIT
//
// --emit-bytecode writes MLIR bytecode (Operation.write_bytecode). tile-opt reads
// bytecode back, as mlir-opt does, with the locations of the original text.

// CHECK-LABEL: func.func @f
// CHECK:         "tile.reduce"{{.*}} loc(#[[LOC:loc[0-9]*]])
// CHECK:       #[[LOC]] = loc("{{.*}}emit-bytecode.mlir":[[@LINE+9]]:3)

// LOWERED-LABEL: func.func @f
// LOWERED-NOT:     tile.
// LOWERED:         return

// SPLIT: tile-opt: --emit-bytecode writes one module: it cannot be used with --split-input-file

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
