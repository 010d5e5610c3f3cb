// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// One broken rule per case; each error sits at the op's location and names
// the rule (docs/spec.md, checked by tile-verify right after parsing).

// IRDL: kind must be one of sum/max/min/maximum/minimum.
func.func @kind_value(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{'tile.reduce' op kind must be one of "sum", "max", "min", "maximum", "minimum"; got "avg"}}
  "tile.reduce"(%d, %s) {kind = "avg", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// IRDL: grid is not an exec scope of tile.reduce.
func.func @scope_value(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{'tile.reduce' op exec_scope must be one of "thread", "warp", "warpgroup", "cta", "cluster"; got "grid"}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "grid"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// IRDL: kind is required.
func.func @kind_missing(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{kind}}
  "tile.reduce"(%d, %s) {exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// src and dst element types differ.
func.func @dtype_mismatch(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf16, #gpu.address_space<private>>) {
  // expected-error @+1 {{dtype mismatch: src=f16 dst=f32}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf16, #gpu.address_space<private>>) -> ()
  return
}

// -----

// i8 is not a supported element type.
func.func @dtype_unsupported(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xi8, #gpu.address_space<private>>) {
  // expected-error @+1 {{src: element type i8 is not supported}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xi8, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Dynamic shapes are rejected.
func.func @dynamic_shape(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<?xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src: expected a memref with a static shape}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<?xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A non-identity memref layout is rejected.
func.func @strided_memref(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, strided<[2]>, #gpu.address_space<private>>) {
  // expected-error @+1 {{src: expected a memref with the identity layout}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, strided<[2]>, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes must name src dims.
func.func @axes_out_of_range(%d: memref<4xf32, #gpu.address_space<private>>, %s: memref<4x8xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{axes: 2 is out of range for a rank-2 source}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 2>} : (memref<4xf32, #gpu.address_space<private>>, memref<4x8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Negative axes count from the end, within the rank.
func.func @axes_negative_out_of_range(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{axes: -2 is out of range for a rank-1 source}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: -2>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// axes is a dense i64 array.
func.func @axes_type(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{axes: expected array<i64: ...>}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = [0]} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// accum is a bool.
func.func @accum_type(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{accum: expected a bool}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", accum = 1 : i32} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dispatch names a variant.
func.func @dispatch_type(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dispatch: expected a string}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", dispatch = 3 : i64} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Layouts are #tile.layout attributes.
func.func @layout_attr_type(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: expected a #tile.layout<"..."> attribute}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = "S[4]"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Unknown layout axis.
func.func @layout_syntax(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: cannot parse "S[4 : 1@foo]"}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 : 1@foo]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A truncated layout string.
func.func @layout_truncated(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: cannot parse}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[(4, 2">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A zero extent is invalid.
func.func @layout_zero_extent(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: }}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[0 : 1]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Two coordinates share a register slot.
func.func @layout_overlap(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: }}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 0, 1>, src_layout = #tile.layout<"S[(2, 2) : (1, 1)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Thread scope layouts use registers only.
func.func @thread_scope_lane_axis(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: axis laneid is not allowed at thread scope}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A warp-scope layout names lanes, not warps.
func.func @warp_scope_warpid(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: axis warpid is not allowed at warp scope}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : 1@warpid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Warpgroup layouts use wid_in_wg, not warpid.
func.func @warpgroup_scope_warpid(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: axis warpid is not allowed at warpgroup scope}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", src_layout = #tile.layout<"S[(4, 4) : (1@warpid, 1)]">, axes = array<i64: 1>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The dst shape is the src shape without the reduced dims.
func.func @dst_shape(%d: memref<4xf32, #gpu.address_space<private>>, %s: memref<4x8xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst shape (4) does not match src shape (4, 8) reduced over axes [0]: expected (8) or (1, 8)}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>} : (memref<4xf32, #gpu.address_space<private>>, memref<4x8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The memref must hold the layout's span.
func.func @src_span_too_large(%d: memref<8xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src: the memref holds 4 element(s) but src_layout spans 8 register slot(s)}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #tile.layout<"S[(32, 8) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[8 : 1] + R[32 : 1@laneid]">} : (memref<8xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The dst memref must hold the dst layout's span too.
func.func @dst_span_too_large(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<8xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst: the memref holds 1 element(s) but dst_layout spans 8 register slot(s)}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #tile.layout<"S[(32, 8) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[8 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// After a lane reduction every lane of the group holds the result.
func.func @dst_not_replicated(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst_layout must replicate over thread bits {0, 1, 2, 3, 4}}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// dst/src layout mismatch: the kept dim moved from lanes to registers.
func.func @dst_wrong_threads(%d: memref<32xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst_layout dim 0 does not put the elements of src dim 1 on the same threads}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #tile.layout<"S[(4, 32) : (1, 1@laneid)]">, dst_layout = #tile.layout<"S[32 : 1]">} : (memref<32xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A replica on lanes the shard already uses: lane 1 would hold element 1 and a copy of
// element 0, and reducing over it would count element 0 twice.
func.func @reduced_bits_overlap_replica(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: coordinates (0,) (replica copy 1) and (1,) both map to lane 1 slot 0}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[16 : 1@laneid] + R[2 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[16 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Lane groups are powers of two.
func.func @lane_extent_not_pow2(%d: memref<4xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{is not a power of two}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #tile.layout<"S[(3, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[4 : 1] + R[3 : 1@laneid]">} : (memref<4xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A register replica must use slots the shard leaves free.
func.func @replica_over_used_registers(%d: memref<4xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst_layout: coordinates (0,) (replica copy 1) and (1,) both map to lane 0 slot 1}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>, dst_layout = #tile.layout<"S[2 : 1] + R[2 : 1]">} : (memref<4xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A warpgroup is 128 threads (warps 4w .. 4w+3): a block of 64 holds none.
func.func @warpgroup_in_64_threads(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>)
    attributes {gpu.known_block_size = array<i32: 64, 1, 1>} {
  // expected-error @+1 {{a warpgroup-scope op runs on whole warpgroups (128 threads each), but the block has 64 threads (known_block_size = [64, 1, 1])}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 0>} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
