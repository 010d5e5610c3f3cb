// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// Layouts that reach past their scope, or whose copies overlap, are rejected: each would
// otherwise give a silently wrong answer. Checking never enumerates a layout's extent.

// 64 lanes: the butterfly's xor 32 would leave the warp, and every lane would add its own value twice.
func.func @lanes_past_the_warp(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{dst_layout: laneid reaches lane 63, but a warp has lanes 0..31}}
  // expected-error @+1 {{src_layout: laneid reaches lane 63, but a warp has lanes 0..31}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[64 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[64 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A nested lane iter past the warp.
func.func @lanes_past_the_warp_nested(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{dst_layout: laneid reaches lane 63, but a warp has lanes 0..31}}
  // expected-error @+1 {{src_layout: laneid reaches lane 63, but a warp has lanes 0..31}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, src_layout = #tile.layout<"S[(2, 32) : (32@laneid, 1@laneid)]">, dst_layout = #tile.layout<"S[2 : 32@laneid] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A replica on a lane the shard uses: lane 8 would hold row 8 and a copy of row 0.
func.func @replica_on_shard_lanes(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{src_layout: coordinates (0, 0) (replica copy 1) and (8, 0) both map to lane 8 slot 0}}
  // expected-error @+1 {{dst_layout: coordinates (0,) (replica copy 1) and (8,) both map to lane 8 slot 0}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, src_layout = #tile.layout<"S[(16, 4) : (1@laneid, 1)] + R[2 : 8@laneid]">, dst_layout = #tile.layout<"S[16 : 1@laneid] + R[2 : 8@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A dst replica that moves one lane bit twice is a dst_layout problem.
func.func @dst_replica_bit_twice(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst_layout: coordinates (0,) (replica copy 1) and (0,) (replica copy 2) both map to lane 1 slot 0}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[2 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[(2, 2) : (1@laneid, 1@laneid)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// wid_in_wg extent 8: a warpgroup has 4 warps.
func.func @wg_warps_past_the_warpgroup(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{dst_layout: wid_in_wg reaches warp 7 of its warpgroup, but a warpgroup has warps 0..3}}
  // expected-error @+1 {{src_layout: wid_in_wg reaches warp 7 of its warpgroup, but a warpgroup has warps 0..3}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 1>, src_layout = #tile.layout<"S[(8, 4) : (1@wid_in_wg, 1)]">, dst_layout = #tile.layout<"S[8 : 1@wid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// tid_in_wg extent 256: a warpgroup has 128 threads.
func.func @wg_threads_past_the_warpgroup(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{dst_layout: tid_in_wg reaches thread 255 of its warpgroup, but a warpgroup has threads 0..127}}
  // expected-error @+1 {{src_layout: tid_in_wg reaches thread 255 of its warpgroup, but a warpgroup has threads 0..127}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 1>, src_layout = #tile.layout<"S[(256, 4) : (1@tid_in_wg, 1)]">, dst_layout = #tile.layout<"S[256 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// laneid extent 64 at warpgroup scope.
func.func @wg_lanes_past_the_warp(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{dst_layout: laneid reaches lane 63, but a warp has lanes 0..31}}
  // expected-error @+1 {{src_layout: laneid reaches lane 63, but a warp has lanes 0..31}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 1>, src_layout = #tile.layout<"S[(64, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[64 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// laneid and tid_in_wg together reach thread 131 (31 + 100), past the warpgroup.
func.func @wg_combined_past_the_warpgroup(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{dst_layout reaches thread 131, but warpgroup scope has threads 0..127}}
  // expected-error @+1 {{src_layout reaches thread 131, but warpgroup scope has threads 0..127}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 2>, src_layout = #tile.layout<"S[(2, 2, 1) : (31@laneid, 100@tid_in_wg, 1)]">, dst_layout = #tile.layout<"S[(2, 2) : (31@laneid, 100@tid_in_wg)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A tid_in_wg replica on lanes the shard uses.
func.func @wg_replica_on_shard_lanes(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{dst_layout: coordinates (0,) (replica copy 1) and (8,) both map to lane 8 slot 0}}
  // expected-error @+1 {{src_layout: coordinates (0, 0) (replica copy 1) and (8, 0) both map to lane 8 slot 0}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 1>, src_layout = #tile.layout<"S[(16, 4) : (1@laneid, 1)] + R[2 : 8@tid_in_wg]">, dst_layout = #tile.layout<"S[16 : 1@laneid] + R[2 : 8@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A tile of 4096 x 4096 registers: rejected at once, with the cap.
func.func @registers_past_the_cap(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: m reaches register slot 16777215, but a thread's tile may span at most 1024 slots}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[(4096, 4096)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A billion registers.
func.func @extent_1e9(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: m reaches register slot 999999999, but a thread's tile may span at most 1024 slots}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[1000000000]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An extent beyond int64.
func.func @extent_1e30(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: cannot parse "S[1000000000000000000000000000000]": at column 3: 1000000000000000000000000000000 does not fit in 64 bits}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[1000000000000000000000000000000]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A float where an integer belongs.
func.func @extent_1e23_float(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: cannot parse "S[1e23]": at column 4: expected ']', got 'e23'}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[1e23]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A huge extent on a zero register stride: two coordinates on one slot, found without enumerating.
func.func @zero_stride_huge_extent(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: coordinates (0,) and (1,) both map to lane 0 slot 0}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[1000000000000000000 : 0]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Kept rows on lanes {0, 3}, reduced over lane bit 0: lane 3 would shuffle with lane 2, which holds nothing.
func.func @kept_dim_carries_into_reduced_bit(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: dst coordinate (1) is held by threads {3, 4}, but reduced bit 0 pairs thread 3 with thread 2, which holds no element: its kept thread iters add up to thread 3, which has reduced bit(s) {0} set}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, src_layout = #tile.layout<"S[(2, 2) : (3@laneid, 1@laneid)]">, dst_layout = #tile.layout<"S[2 : 3@laneid] + R[2 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Two broken rules in one layout, both reported: warpid is not a warpgroup's axis, and
// two coordinates share warp 1. (The shared place used to hide the axis.)
func.func @axis_and_shared_place(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<2xf32, #gpu.address_space<private>>) {
  // expected-error @+3 {{src_layout: coordinates (0, 1) and (1, 0) both map to lane 0 warp 1 slot 0}}
  // expected-error @+2 {{src_layout: axis warpid is not allowed at warpgroup scope (allowed: m, laneid, wid_in_wg, tid_in_wg)}}
  // expected-error @+1 {{dst_layout: axis warpid is not allowed at warpgroup scope}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 1>, src_layout = #tile.layout<"S[(2, 2) : (1@warpid, 1@warpid)]">, dst_layout = #tile.layout<"S[2 : 1@warpid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
  return
}
