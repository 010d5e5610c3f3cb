// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// Every expectation is met and nothing unexpected is emitted, so tile-opt exits
// with 0. The cases cover each designator, notes, a regex, and an error from the
// parser next to errors from the verifier.

// On the same line.
func.func @same_line(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "avg", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> () // expected-error {{kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "avg"}}
  return
}

// -----

// @+1: the line below.
func.func @plus_one(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error@+1 {{exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got "grid"}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "grid"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// @-1: the line above.
func.func @minus_one(%d: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>) -> ()
  // expected-error@-1 {{takes 2 operands (dst, src), got 1}}
  return
}

// -----

// @above: the last line above without an expectation (the note is at %x).
// @below: the next line below without one.
func.func @above_and_below(%x: i32) {
  // expected-note@above {{prior use here}}
  // expected-error@below {{use of value '%x' expects different type than prior uses}}
  %0 = arith.addi %x, %x : i64
  return
}

// -----

// A note at its own location, then a regex with literal text around it.
func.func @note_and_regex(%x: i32) { // expected-note {{prior use here}}
  // expected-error-re@+1 {{use of value '%x' expects different type than prior uses: '{{i[0-9]+}}' vs 'i32'}}
  %0 = arith.addi %x, %x : i64
  return
}

// -----

// A syntax error, from the parser.
func.func @syntax(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error@+1 {{expected '}' in attribute dictionary}}
  "tile.reduce"(%d, %s) {kind = "sum" exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// No expectation and no diagnostic.
func.func @valid(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "min", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
