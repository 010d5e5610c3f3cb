// RUN: echo 'irdl.dialect @extra { irdl.operation @op { } }' > %t.irdl.mlir
// RUN: tile-opt %s --irdl-file=%t.irdl.mlir | FileCheck %s
// RUN: not tile-opt %s 2>&1 | FileCheck %s --check-prefix=WITHOUT
// RUN: echo 'irdl.dialect @broken {' > %t.broken.mlir
// RUN: not tile-opt %s --irdl-file=%t.broken.mlir 2>&1 | FileCheck %s --check-prefix=BROKEN --implicit-check-not=Traceback
//
// --irdl-file loads more IRDL dialects next to tile before parsing. A bad IRDL file
// is reported at its own lines.

// CHECK-LABEL: func.func @uses_both
// CHECK:         "extra.op"() : () -> ()
// CHECK:         "tile.reduce"

// WITHOUT: irdl-file.mlir:[[@LINE+6]]:13: error: operation being parsed with an unregistered dialect

// BROKEN:      {{.*}}.broken.mlir:1:23: error: expected operation name in quotes
// BROKEN:      tile-opt: cannot load the IRDL dialects of '{{.*}}.broken.mlir'

func.func @uses_both(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "extra.op"() : () -> ()
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
