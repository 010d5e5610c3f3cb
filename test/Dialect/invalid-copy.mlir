// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// tile.copy: one broken rule per case (docs/spec.md, "The op: tile.copy"); each error
// sits at the op's location and names the rule. tile-verify checks them right after
// parsing (tile_mlir.analysis_copy).

// IRDL: exec_scope is one of thread, warp, warpgroup, cta.
func.func @scope_value(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{'tile.copy' op exec_scope must be one of "thread", "warp", "warpgroup", "cta"; got "cluster"}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "cluster", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// IRDL: exec_scope is required.
func.func @scope_missing(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{'tile.copy' op missing attribute 'exec_scope' (one of "thread", "warp", "warpgroup", "cta")}}
  "tile.copy"(%r, %x, %i, %j) {layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// IRDL: the origin indices are index values.
func.func @index_type(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: i32) {
  // expected-error @+1 {{expected 'index' but got 'i32'}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, i32) -> ()
  return
}

// -----

// A misspelt layout would silently mean the register memref's shape in one thread.
func.func @typo_layout(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{unknown attribute 'layuot'; did you mean 'layout'? (tile.copy takes: exec_scope, layout, padding, alignment, cache, dispatch)}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layuot = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// A misspelt padding would silently mean zero.
func.func @typo_padding(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{unknown attribute 'pading'; did you mean 'padding'?}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, pading = 0xFF800000 : f32} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// Both sides in memory: nothing says which side holds the tile's registers.
func.func @no_registers(%x: memref<64x100xf32>, %y: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{one operand must be a register tile (#gpu.address_space<private>) and the other global or workgroup memory; dst is global (no memory space) and src is global (no memory space)}}
  "tile.copy"(%x, %y, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<64x100xf32>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// Both sides registers.
func.func @two_register_tiles(%r: memref<8xf32, #gpu.address_space<private>>, %s: memref<8xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst is local (#gpu.address_space<private>) and src is local (#gpu.address_space<private>)}}
  "tile.copy"(%r, %s) {exec_scope = "thread"} : (memref<8xf32, #gpu.address_space<private>>, memref<8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A memory space that is not a #gpu.address_space.
func.func @memory_space(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32, 3>, %i: index, %j: index) {
  // expected-error @+1 {{src: memory space 3 : i64 is not a #gpu.address_space}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32, 3>, index, index) -> ()
  return
}

// -----

// The register tile has a static shape.
func.func @dynamic_registers(%r: memref<?xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{dst: expected a memref with a static shape}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<?xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// The memory side has the identity layout (its shape may be dynamic).
func.func @strided_memory(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32, strided<[200, 1]>>, %i: index, %j: index) {
  // expected-error @+1 {{src: expected a memref with the identity layout}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32, strided<[200, 1]>>, index, index) -> ()
  return
}

// -----

// An element type tile-mlir does not support.
func.func @element_type(%r: memref<8xi8, #gpu.address_space<private>>, %x: memref<64x100xi8>, %i: index, %j: index) {
  // expected-error @+2 {{dst: element type i8 is not supported (expected one of f32, f16, bf16, f64, i32, i64)}}
  // expected-error @+1 {{src: element type i8 is not supported}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xi8, #gpu.address_space<private>>, memref<64x100xi8>, index, index) -> ()
  return
}

// -----

// Registers and memory hold one element type: a copy converts nothing.
func.func @dtype_mismatch(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xbf16>, %i: index, %j: index) {
  // expected-error @+1 {{dtype mismatch: src=bf16 dst=f32}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xbf16>, index, index) -> ()
  return
}

// -----

// One origin index per memory dim.
func.func @index_count(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index) {
  // expected-error @+1 {{expected 2 index operand(s), one per dim of the memory operand (rank 2), got 1}}
  "tile.copy"(%r, %x, %i) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index) -> ()
  return
}

// -----

// The layout attribute is a #tile.layout.
func.func @layout_type(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{layout: expected a #tile.layout<"..."> attribute}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = "S[(1, (32, 8)) : (1, (1@laneid, 1))]"} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// A layout that does not parse.
func.func @layout_parse(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{layout: cannot parse}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// An invalid layout: two elements in one place.
func.func @layout_invalid(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{layout: coordinates}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(2, (16, 4)) : (1@laneid, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// The tile has one dim per memory dim.
func.func @layout_rank(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<6400xf32>, %i: index) {
  // expected-error @+1 {{layout has rank 2 (shape (32, 8)), but the memory operand has rank 1: each tile dim is a memory dim}}
  "tile.copy"(%r, %x, %i) {exec_scope = "warp", layout = #tile.layout<"S[(32, 8) : (1@laneid, 1)]">} : (memref<8xf32, #gpu.address_space<private>>, memref<6400xf32>, index) -> ()
  return
}

// -----

// A warp-scope layout names lanes, not warps.
func.func @scope_axis(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{layout: axis warpid is not allowed at warp scope (allowed: m, laneid) (a warp-scope layout names lanes: use laneid)}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@warpid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// A thread-scope layout names no thread axis.
func.func @thread_scope_lanes(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{layout: axis laneid is not allowed at thread scope (allowed: m)}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "thread", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// The register memref holds the layout's span.
func.func @span(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{dst: the memref holds 8 element(s) but layout spans 16 register slot(s)}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 16)) : (1, (1@laneid, 1))]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// padding has the element type.
func.func @padding_type(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{padding: expected a value of the element type f32, got 0 : i32}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, padding = 0 : i32} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// A store writes nothing out of bounds: padding would mean nothing.
func.func @padding_on_store(%x: memref<64x100xf32>, %r: memref<8xf32, #gpu.address_space<private>>, %i: index, %j: index) {
  // expected-error @+1 {{padding: a store writes nothing out of bounds; padding is for loads only}}
  "tile.copy"(%x, %r, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, padding = 0.0 : f32} : (memref<64x100xf32>, memref<8xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

// alignment is a power of two number of bytes.
func.func @alignment_value(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{alignment: expected a power of two number of bytes, got 12}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, alignment = 12} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// cache is one of the cache hints ("streaming").
func.func @cache_value(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{cache: expected one of "streaming", got "evict_first"}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, cache = "evict_first"} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// cache is a string.
func.func @cache_type(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{cache: expected a string, one of "streaming", got 1 : i64}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, cache = 1} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// A cache hint is for global memory, not workgroup memory.
func.func @cache_shared(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32, #gpu.address_space<workgroup>>, %i: index, %j: index) {
  // expected-error @+1 {{cache: a cache hint is for global memory; this copy's memory is shared (#gpu.address_space<workgroup>)}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, cache = "streaming"} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}

// -----

// alignment is an integer.
func.func @alignment_type(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{alignment: expected an integer number of bytes (alignment = 16), got "16"}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, alignment = "16"} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// dispatch names a variant.
func.func @dispatch_type(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+1 {{dispatch: expected a string (a variant name), got 1 : i64}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, dispatch = 1} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// At cta scope the layout spans the block's warps, where the function fixes them.
gpu.module @cta {
  gpu.func @cta_block(%r: memref<4xf32, #gpu.address_space<private>>, %x: memref<4x128xf32>, %i: index, %j: index) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error @+1 {{layout spans 4 warp(s) (128 threads), but the block has 64 threads (known_block_size = [64, 1, 1]): at cta scope they must match}}
    "tile.copy"(%r, %x, %i, %j) {exec_scope = "cta", layout = #tile.layout<"S[(4, (32, 4)) : (1@warpid, (1@laneid, 1))]">}
      : (memref<4xf32, #gpu.address_space<private>>, memref<4x128xf32>, index, index) -> ()
    gpu.return
  }
}

// -----

// Two broken rules in one layout, both reported: warpid at warpgroup scope, and lane 1
// holding two coordinates.
func.func @axis_and_shared_place(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<64x100xf32>, %i: index, %j: index) {
  // expected-error @+2 {{layout: coordinates (0, 1) and (1, 0) both map to lane 1 slot 0}}
  // expected-error @+1 {{layout: axis warpid is not allowed at warpgroup scope}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warpgroup", layout = #tile.layout<"S[(2, 2) : (1@laneid, 1@laneid)] + R[1 : 1@warpid]">} : (memref<8xf32, #gpu.address_space<private>>, memref<64x100xf32>, index, index) -> ()
  return
}

// -----

// A warpgroup is 128 threads: a block of 64 holds none.
gpu.module @warpgroup {
  gpu.func @warpgroup_block(%r: memref<4xf32, #gpu.address_space<private>>, %x: memref<4x128xf32>, %i: index, %j: index) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error @+1 {{a warpgroup-scope op runs on whole warpgroups (128 threads each), but the block has 64 threads (known_block_size = [64, 1, 1])}}
    "tile.copy"(%r, %x, %i, %j) {exec_scope = "warpgroup", layout = #tile.layout<"S[(4, (32, 4)) : (1@wid_in_wg, (1@laneid, 1))]">}
      : (memref<4xf32, #gpu.address_space<private>>, memref<4x128xf32>, index, index) -> ()
    gpu.return
  }
}
