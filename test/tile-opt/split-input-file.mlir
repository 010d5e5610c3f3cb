// RUN: not tile-opt %s --split-input-file 2> %t.stderr | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.stderr
// RUN: tile-opt %s --split-input-file --verify-diagnostics | FileCheck %s
//
// Each chunk is parsed and checked on its own: the bad middle chunk fails
// alone, and the chunks around it still print, with `// -----` between the
// outputs. Diagnostics and expected-* designators use the line numbers of the
// whole file.

// CHECK-LABEL: func.func @first
// CHECK:       // -----
// CHECK-NEXT:  // -----
// CHECK-NEXT:  module {
// CHECK-NEXT:    func.func @third
func.func @first(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// ERR:      split-input-file.mlir:[[@LINE+4]]:3: error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "avg"
// ERR-NEXT: "tile.reduce"(%d, %s) {kind = "avg"
// ERR-NEXT: ^
func.func @second(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "avg", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "avg"}}
  return
}

// -----

func.func @third(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "max", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
