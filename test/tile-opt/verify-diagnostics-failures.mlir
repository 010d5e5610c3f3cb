// RUN: not tile-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s --implicit-check-not=Traceback
//
// Each way an expectation can fail. Each one is reported at its place in this
// file, and the chunks are checked independently.

// The wrong text: the real error is unexpected, and the expectation is not produced.
// CHECK:      verify-diagnostics-failures.mlir:[[@LINE+7]]:3: error: unexpected error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "avg"
// CHECK-NEXT: "tile.reduce"(%d, %s) {kind = "avg"
// CHECK-NEXT: ^
// CHECK:      verify-diagnostics-failures.mlir:[[@LINE+3]]:6: error: expected error "kind must be sum" was not produced
// CHECK-NEXT: // expected-error@+1
func.func @wrong_text(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error@+1 {{kind must be sum}}
  "tile.reduce"(%d, %s) {kind = "avg", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// No expectation at all.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+2]]:3: error: unexpected error: 'tile.reduce' op exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got "grid"
func.func @unexpected(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "grid"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An expectation on a valid op.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+2]]:6: error: expected error "must be one of" was not produced
func.func @not_produced(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error@+1 {{must be one of}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The right text with the wrong severity.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+3]]:6: error: 'error' diagnostic emitted when expecting a 'warning'
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+2]]:6: error: expected warning "takes 2 operands (dst, src)" was not produced
func.func @wrong_severity(%d: memref<1xf32, #gpu.address_space<private>>) {
  // expected-warning@+1 {{takes 2 operands (dst, src)}}
  "tile.reduce"(%d) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A regex that does not compile.
// CHECK: verify-diagnostics-failures.mlir:[[@LINE+2]]:6: error: invalid regex: {{.+}}
func.func @bad_regex() {
  // expected-error-re {{op {{[}}}}
  return
}
