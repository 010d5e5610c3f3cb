// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback
// RUN: not tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-lower-reduction 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: tile-opt %s --split-input-file --verify-diagnostics -o %t
//
// Several diagnostics in a row: each one is its own lines (the message, the source
// line, the caret), and the next one starts on the line after the caret, notes
// and multi-line messages included.

// CHECK:      several-diagnostics.mlir:[[@LINE+13]]:3: error: 'tile.reduce' op accum: expected a bool (true or false), got 3 : i64
// CHECK-NEXT: {{^  "tile.reduce"\(%d, %s\) \{kind = "sum", exec_scope = "thread", accum = 3}}
// CHECK-NEXT: {{^  \^$}}
// CHECK-NEXT: several-diagnostics.mlir:[[@LINE+10]]:3: error: 'tile.reduce' op dispatch: expected a string (a variant name), got 1 : i64
// CHECK-NEXT: {{^  "tile.reduce"}}
// CHECK-NEXT: {{^  \^$}}
// CHECK-NEXT: several-diagnostics.mlir:[[@LINE+9]]:3: error: 'tile.reduce' op axes: 3 is out of range for a rank-1 source
// CHECK-NEXT: {{^  "tile.reduce"}}
// CHECK-NEXT: {{^  \^$}}
// CHECK-NEXT: several-diagnostics.mlir:[[@LINE+20]]:19: error: use of value '%x' expects different type than prior uses: 'i64' vs 'i32'
func.func @three(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error@+2 {{accum: expected a bool}}
  // expected-error@+1 {{dispatch: expected a string}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", accum = 3, dispatch = 1} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@+1 {{axes: 3 is out of range}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 3>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An error with a note (the parser's), then the next chunk's error.
// CHECK-NEXT: {{^  %0 = arith.addi %x, %x : i64$}}
// CHECK-NEXT: {{^                  \^$}}
// CHECK-NEXT: several-diagnostics.mlir:[[@LINE+3]]:{{[0-9]+}}: note: prior use here
// CHECK-NEXT: {{^func.func @note}}
// CHECK-NEXT: {{^ +\^$}}
func.func @note(%x: i32) { // expected-note {{prior use here}}
  // expected-error@+1 {{expects different type than prior uses}}
  %0 = arith.addi %x, %x : i64
  return
}

// LOWER:      several-diagnostics.mlir:[[@LINE-20]]:3: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda):
// LOWER-NEXT: {{^  [a-z0-9_]+ \(prio=}}
// LOWER:      {{^  "tile.reduce"}}
// LOWER-NEXT: {{^  \^$}}
// LOWER-NEXT: several-diagnostics.mlir:[[@LINE-22]]:3: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda):
// LOWER:      {{^  \^$}}
// LOWER-NEXT: note: reproduce with: tile-opt

