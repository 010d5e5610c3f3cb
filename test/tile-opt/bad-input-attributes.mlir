// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not="internal error"
//
// Every attribute of tile.reduce misspelled, and every one of the wrong type. A
// misspelled optional attribute would silently take its default, so it is an error that
// names the closest known one; a misspelled required one is named as a likely
// misspelling of the missing one. A value of the wrong type names the attribute, what it
// must be and what it got. Each exits 1 with a located error and no traceback.

// A misspelled kind (required).
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op missing attribute 'kind' (one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin") or 'combiner' (= @a func.func that combines); 'ind' looks like a misspelling of 'kind'{{$}}
func.func @ind(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {ind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled kind, capitalised.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op missing attribute 'kind' (one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin") or 'combiner' (= @a func.func that combines); 'Kind' looks like a misspelling of 'kind'{{$}}
func.func @Kind(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {Kind = "max", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled exec_scope (required).
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op missing attribute 'exec_scope' (one of "thread", "warp", "warpgroup", "cta", "cluster"); 'exec_scop' looks like a misspelling of it{{$}}
func.func @exec_scop(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scop = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// exec_scope without its prefix.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op missing attribute 'exec_scope' (one of "thread", "warp", "warpgroup", "cta", "cluster"); 'scope' looks like a misspelling of it{{$}}
func.func @scope(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled axes.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op unknown attribute 'axess'; did you mean 'axes'? (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch){{$}}
func.func @axess(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axess = array<i64: 0>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled accum.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op unknown attribute 'accumulate'; did you mean 'accum'? (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch){{$}}
func.func @accumulate(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", accumulate = true} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled src_layout.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op unknown attribute 'srclayout'; did you mean 'src_layout'? (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch){{$}}
func.func @srclayout(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", srclayout = #tile.layout<"S[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled dst_layout, quoted.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op unknown attribute 'dst-layout'; did you mean 'dst_layout'? (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch){{$}}
func.func @dst_dash_layout(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", "dst-layout" = #tile.layout<"S[1]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled dispatch.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op unknown attribute 'dispatcher'; did you mean 'dispatch'? (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch){{$}}
func.func @dispatcher(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatcher = "local"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Two misspellings: each is named.
// CHECK: bad-input-attributes.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op unknown attribute 'acum'; did you mean 'accum'? (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch){{$}}
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op unknown attribute 'axis'; did you mean 'axes'? (tile.reduce takes: kind, combiner, exec_scope, axes, accum, fold, src_layout, dst_layout, dispatch){{$}}
func.func @two_typos(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", acum = true, axis = array<i64: 0>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled dialect attribute: #tile.layout.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:82: error: unknown attribute '#tile.layuot' (did you mean '#tile.layout'?); the tile dialect's attributes are: #tile.layout{{$}}
func.func @layuot(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layuot<"S[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A misspelled dialect in #tile.layout.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:83: error: unknown dialect 'tiles' in attribute '#tiles.layout' (did you mean '#tile.layout'?){{$}}
func.func @tiles_layout(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tiles.layout<"S[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// #tile.layout without its parameter.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:82: error: #tile.layout takes 1 parameter (spec, a string: #tile.layout<"...">), got 0{{$}}
func.func @layout_no_parameter(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// #tile.layout with two parameters.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:82: error: #tile.layout takes 1 parameter (spec, a string: #tile.layout<"...">), got 2{{$}}
func.func @layout_two_parameters(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4]", "S[2]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// #tile.layout of an integer.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:82: error: #tile.layout's parameter spec must be a string (#tile.layout<"...">), got an integer{{$}}
func.func @layout_integer(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<4>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// #tile.layout of an array.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:82: error: #tile.layout's parameter spec must be a string (#tile.layout<"...">), got an array{{$}}
func.func @layout_array(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dst_layout = #tile.layout<[1]>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind = 1.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got 1 : i64{{$}}
func.func @kind_integer(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = 1, exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind in capitals.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "SUM"{{$}}
func.func @kind_capitals(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "SUM", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// kind = prod, which no kind is.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "prod"{{$}}
func.func @kind_prod(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "prod", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// exec_scope = [].
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got []{{$}}
func.func @scope_array(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = []} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// exec_scope = 32 : i32.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got 32 : i32{{$}}
func.func @scope_integer(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = 32 : i32} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes = "0".
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op axes: expected array<i64: ...>, got "0"{{$}}
func.func @axes_string(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = "0"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes = array<i32: 0>.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op axes: expected array<i64: ...>, got array<i32: 0>{{$}}
func.func @axes_i32(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i32: 0>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes = [0].
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op axes: expected array<i64: ...>, got [0]{{$}}
func.func @axes_list(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = [0]} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes = 0.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op axes: expected array<i64: ...>, got 0 : i64{{$}}
func.func @axes_integer(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = 0} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// accum = 1.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op accum: expected a bool (true or false), got 1 : i64{{$}}
func.func @accum_integer(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", accum = 1} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// accum = "true".
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op accum: expected a bool (true or false), got "true"{{$}}
func.func @accum_string(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", accum = "true"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// src_layout = "S[4]", a plain string.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: expected a #tile.layout<"..."> attribute, got "S[4]"{{$}}
func.func @src_layout_string(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = "S[4]"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dst_layout = 4.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst_layout: expected a #tile.layout<"..."> attribute, got 4 : i64{{$}}
func.func @dst_layout_integer(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dst_layout = 4} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dispatch = 3.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dispatch: expected a string (a variant name), got 3 : i64{{$}}
func.func @dispatch_integer(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatch = 3} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dispatch = ["local"].
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dispatch: expected a string (a variant name), got ["local"]{{$}}
func.func @dispatch_array(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatch = ["local"]} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A dispatch variant that does not exist.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dispatch: no lowering variant is named "fast"; the variants are: cluster, cluster_push, cross_warp, local, local_redux, shared, sm100_packed{{$}}
func.func @dispatch_unknown(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatch = "fast"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A dispatch variant, misspelled.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dispatch: no lowering variant is named "locl" (did you mean 'local'?); the variants are: cluster, cluster_push, cross_warp, local, local_redux, shared, sm100_packed{{$}}
func.func @dispatch_misspelled(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatch = "locl"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The same attribute twice.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:40: error: attribute 'kind' is given twice: give each attribute once{{$}}
func.func @kind_twice(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", kind = "max", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The same layout twice.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:98: error: attribute 'src_layout' is given twice: give each attribute once{{$}}
func.func @layout_twice(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4]">, src_layout = #tile.layout<"S[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes out of range.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op axes: 1 is out of range for a rank-1 source{{$}}
func.func @axes_out_of_range(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 1>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes out of range, negative.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op axes: -2 is out of range for a rank-1 source{{$}}
func.func @axes_negative(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: -2>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An attribute with no value (a unit attribute) where a bool is wanted.
// CHECK: bad-input-attributes.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op accum: expected a bool (true or false), got unit{{$}}
func.func @accum_unit(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", accum} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
