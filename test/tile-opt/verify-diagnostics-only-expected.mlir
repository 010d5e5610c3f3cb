// RUN: tile-opt %s --verify-diagnostics=only-expected
// RUN: not tile-opt %s --verify-diagnostics 2>&1 | FileCheck %s --implicit-check-not=Traceback
// RUN: not tile-opt %s -verify-diagnostics=all 2>&1 | FileCheck %s --implicit-check-not=Traceback
// RUN: echo '"tile.reduce"() : () -> () // expected-error {{no such message}}' | not tile-opt - --verify-diagnostics=only-expected 2>&1 | FileCheck %s --check-prefix=MISSING
//
// --verify-diagnostics=only-expected checks only that every expected diagnostic is
// produced; the others are let through. =all (the default) also fails on them.

// CHECK:     verify-diagnostics-only-expected.mlir:[[@LINE+8]]:3: error: unexpected error: 'tile.reduce' op axes: 2 is out of range for a rank-1 source
// CHECK-NOT: axes: 3

// MISSING: <stdin>:1:31: error: expected error "no such message" was not produced

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error@+1 {{axes: 3 is out of range}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 3>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 2>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
