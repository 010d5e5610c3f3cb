// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not="does not satisfy" --implicit-check-not="see current operation"
// RUN: tile-opt %s --split-input-file --verify-diagnostics
// RUN: echo 'irdl.dialect @extra { irdl.operation @op { %%a = irdl.is "a" %%b = irdl.is "b" %%ab = irdl.any_of(%%a, %%b) irdl.attributes {"mode" = %%ab} } }' > %t.irdl.mlir
// RUN: echo '"extra.op"() {mode = "c"} : () -> ()' | not tile-opt --irdl-file=%t.irdl.mlir 2>&1 | FileCheck %s --check-prefix=EXTRA
//
// IRDL's own messages name neither the attribute nor what it may be. tile-opt says
// which attribute is wrong and lists what the dialect allows (read from its IRDL),
// at the place IRDL reported. --verify-diagnostics matches these words. A dialect
// loaded with --irdl-file gets the same treatment.

// EXTRA: <stdin>:1:1: error: 'extra.op' op mode must be one of "a", "b"; got "c"

// CHECK:      irdl-messages.mlir:[[@LINE+4]]:3: error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "prod"
// CHECK-NEXT: "tile.reduce"(%d, %s) {kind = "prod"
// CHECK-NEXT: {{^  \^$}}
func.func @kind(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "prod", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "prod"}}
  return
}

// -----

// CHECK: irdl-messages.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got "block"
func.func @scope(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "block"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got "block"}}
  return
}

// -----

// A value that another attribute could take is still named for the right one.
// CHECK: irdl-messages.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "warp"
func.func @kind_is_a_scope(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "warp", exec_scope = "warp"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{kind must be one of}}
  return
}

// -----

// The wrong type.
// CHECK: irdl-messages.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got true
func.func @scope_bool(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = true} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got true}}
  return
}

// -----

// CHECK: irdl-messages.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op missing attribute 'kind' (one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin") or 'combiner' (= @a func.func that combines){{$}}
func.func @no_kind(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{missing attribute 'kind' (one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin") or 'combiner' (= @a func.func that combines)}}
  return
}

// -----

// A misspelled required attribute: IRDL reports only the missing one, so the message
// names the attribute written instead.
// CHECK: irdl-messages.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op missing attribute 'kind' (one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin") or 'combiner' (= @a func.func that combines); 'ind' looks like a misspelling of 'kind'
func.func @ind(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {ind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{missing attribute 'kind' (one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin") or 'combiner' (= @a func.func that combines); 'ind' looks like a misspelling of 'kind'}}
  return
}

// -----

// An attribute far from the missing one is not taken for it.
// CHECK: irdl-messages.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op missing attribute 'exec_scope' (one of "thread", "warp", "warpgroup", "cta", "cluster"){{$}}
func.func @no_scope(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", acum = true} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{missing attribute 'exec_scope'}}
  return
}

// -----

// A misspelled attribute of the dialect: MLIR points after '#tile.'.
// CHECK:      irdl-messages.mlir:[[@LINE+4]]:82: error: unknown attribute '#tile.layot' (did you mean '#tile.layout'?); the tile dialect's attributes are: #tile.layout
// CHECK-NEXT: src_layout = #tile.layot<
// CHECK-NEXT: {{^ +\^$}}
func.func @layot(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layot<"S[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{unknown attribute '#tile.layot' (did you mean '#tile.layout'?)}}
  return
}

// -----

// CHECK: irdl-messages.mlir:[[@LINE+1]]:75: error: unknown type '!tile.layout'; the tile dialect defines no types
func.func @type(%d: memref<1xf32, #gpu.address_space<private>>, %s: !tile.layout<"S[4]">) {
  // expected-error@-1 {{unknown type '!tile.layout'; the tile dialect defines no types}}
  return
}

// -----

// A misspelled op of the dialect, and a misspelled dialect.
// CHECK: irdl-messages.mlir:[[@LINE+2]]:3: error: unknown operation 'tile.reduc' (did you mean 'tile.reduce'?); the tile dialect's operations are: tile.reduce
func.func @op(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduc"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{unknown operation 'tile.reduc' (did you mean 'tile.reduce'?)}}
  return
}

// -----

// CHECK: irdl-messages.mlir:[[@LINE+2]]:16: error: unknown dialect 'tiel' in operation 'tiel.reduce' (did you mean 'tile.reduce'?)
func.func @dialect(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tiel.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{unknown dialect 'tiel'}}
  return
}
