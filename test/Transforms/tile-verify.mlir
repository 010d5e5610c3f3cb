// RUN: tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-verify --verify-diagnostics
// RUN: not tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-verify 2>/dev/null | FileCheck %s
// RUN: not tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-verify 2>&1 | FileCheck %s --check-prefix=ERR
//
// tile-verify as a pass (tile-opt also runs it right after parsing; the flag above
// turns that off so the pass itself is what reports). test/Dialect/invalid.mlir has
// one case per rule; this file checks the pass's own behaviour: valid ops pass through
// unchanged, every broken rule of every op is reported, and the pass fails.

// CHECK-LABEL: func.func @valid
// CHECK: "tile.reduce"
func.func @valid(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Two bad ops in one function: both are reported, each at its own location.
// ERR: tile-verify.mlir:[[@LINE+5]]:3: error: 'tile.reduce' op axes: 3 is out of range for a rank-1 source
// ERR: tile-verify.mlir:[[@LINE+6]]:3: error: 'tile.reduce' op dtype mismatch: src=f32 dst=f16
// ERR: note: reproduce with: tile-opt
func.func @two_bad(%d: memref<1xf32, #gpu.address_space<private>>, %h: memref<1xf16, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{axes: 3 is out of range for a rank-1 source}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 3>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error @+1 {{dtype mismatch: src=f32 dst=f16}}
  "tile.reduce"(%h, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf16, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
