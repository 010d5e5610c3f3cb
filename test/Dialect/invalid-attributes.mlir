// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// tile.reduce's attributes: an unknown one is an error that names the closest known one
// (a typo would otherwise silently take the default), and each optional one has a type.

// A misspelled accum would silently mean accum = false.
func.func @typo_acum(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{unknown attribute 'acum'; did you mean 'accum'?}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", acum = true} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled axes would silently mean the last dim.
func.func @typo_axis(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{unknown attribute 'axis'; did you mean 'axes'?}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axis = array<i64: 0>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled src_layout would silently mean the row-major default.
func.func @typo_src_layout(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{unknown attribute 'src_layuot'; did you mean 'src_layout'?}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layuot = #tile.layout<"S[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled dst_layout.
func.func @typo_dst_layout(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{unknown attribute 'dstlayout'; did you mean 'dst_layout'?}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dstlayout = #tile.layout<"S[1]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled dispatch.
func.func @typo_dispatch(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{unknown attribute 'dispatc'; did you mean 'dispatch'?}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatc = "local"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An attribute far from every known name lists them all.
func.func @unknown_far(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{unknown attribute 'frobnicate' (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch)}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", frobnicate = 1} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes of the wrong type.
func.func @wrong_type_axes(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{axes: expected array<i64: ...>, got 0 : i64}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = 0} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// accum of the wrong type.
func.func @wrong_type_accum(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{accum: expected a bool (true or false), got "yes"}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", accum = "yes"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A layout given as a plain string.
func.func @wrong_type_src_layout(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: expected a #tile.layout<"..."> attribute, got "S[4]"}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = "S[4]"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dispatch of the wrong type.
func.func @wrong_type_dispatch(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dispatch: expected a string (a variant name), got 1 : i64}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatch = 1} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// fold of the wrong type.
func.func @wrong_type_fold(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{fold: expected a string (linear or tree), got 1 : i64}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", fold = 1} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A fold that is neither linear nor tree.
func.func @unknown_fold(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{fold: expected 'linear' or 'tree', got 'pairwise'}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", fold = "pairwise"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
