// RUN: tile-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: not tile-opt %s 2>&1 | FileCheck %s --check-prefix=DEFAULT --implicit-check-not=Traceback
//
// Ops of an unknown dialect parse and print with --allow-unregistered-dialect, next
// to tile ops, which are still verified; without it they are an error.

// CHECK-LABEL: func.func @f
// CHECK:         "acme.frob"(%{{.*}}) : (memref<4xf32, #gpu.address_space<private>>) -> ()
// CHECK:         "tile.reduce"

// DEFAULT: allow-unregistered-dialect.mlir:[[@LINE+3]]:{{[0-9]+}}: error: operation being parsed with an unregistered dialect

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "acme.frob"(%s) : (memref<4xf32, #gpu.address_space<private>>) -> ()
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
