// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback
// RUN: not tile-opt %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING --implicit-check-not=Traceback
// RUN: echo '"tile.reduce"() : () -> ()' | not tile-opt 2>&1 | FileCheck %s --check-prefix=STDIN --implicit-check-not=Traceback
//
// Bad input ends with mlir-opt-style diagnostics (file:line:col, the source line,
// a caret) and exit status 1, never with a Python traceback. The last chunk is a
// file that stops in the middle of a function.

// MISSING: tile-opt: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory

// STDIN:      <stdin>:1:1: error: 'tile.reduce' op takes 2 operands (dst, src), got 0
// STDIN-NEXT: "tile.reduce"() : () -> ()
// STDIN-NEXT: ^

// CHECK:      bad-input.mlir:[[@LINE+4]]:38: error: expected '}' in attribute dictionary
// CHECK-NEXT: "tile.reduce"(%d, %s) {kind = "sum" exec_scope = "thread"}
// CHECK-NEXT: {{^}}                                     ^
func.func @syntax_error(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum" exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// CHECK: bad-input.mlir:[[@LINE+2]]:3: error: unknown operation 'tile.frobnicate'; the tile dialect's operations are: tile.reduce
func.func @unknown_op(%d: memref<1xf32, #gpu.address_space<private>>) {
  "tile.frobnicate"(%d) : (memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// CHECK: bad-input.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op takes 2 operands (dst, src), got 1
func.func @one_operand(%d: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// CHECK:      bad-input.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got 3 : i64
// CHECK-NEXT: "tile.reduce"(%d, %s) {kind = 3
func.func @bad_attribute(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = 3, exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// CHECK: bad-input.mlir:[[@LINE+2]]:{{[0-9]+}}: error: expected operation name in quotes
func.func @truncated(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
