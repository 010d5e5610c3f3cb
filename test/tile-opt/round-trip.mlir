// RUN: tile-opt %s | FileCheck %s
// RUN: tile-opt %s | tile-opt - | FileCheck %s
// RUN: tile-opt < %s | FileCheck %s
//
// A tile.reduce parses, passes tile-verify and prints back in generic form, from a
// file or from stdin, and the printed form parses again.

// CHECK-LABEL: func.func @demo
// CHECK-SAME:    (%[[DST:.*]]: memref<1xf32, #gpu.address_space<private>>, %[[SRC:.*]]: memref<4xf32, #gpu.address_space<private>>)
// CHECK-NEXT:    "tile.reduce"(%[[DST]], %[[SRC]]) {exec_scope = "thread", kind = "sum"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
// CHECK-NEXT:    return
func.func @demo(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
