// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not="internal error"
//
// Malformed layouts: each grammar error points at its column in the layout text;
// numbers up to 10^30, negative ones and ones past the hardware are rejected by
// sums over the iters (never by walking the extent: S[1000000000] is as fast as S[4]);
// and a layout may only name the thread axes of its exec scope. Each exits 1 with a
// located error and no traceback.

// An empty layout.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:90: error: 'tile.reduce' op src_layout: cannot parse "": at column 1: expected 'S[', got end of text{{$}}
func.func @empty(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A lower-case s.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:90: error: 'tile.reduce' op src_layout: cannot parse "s[4]": at column 1: expected 'S[', got 's'{{$}}
func.func @lower_case(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"s[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// No '[' after S.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:92: error: 'tile.reduce' op src_layout: cannot parse "S 4]": at column 3: expected '[', got '4'{{$}}
func.func @no_bracket(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S 4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// No closing ']'.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:93: error: 'tile.reduce' op src_layout: cannot parse "S[4": at column 4: expected ']', got end of text{{$}}
func.func @no_closing_bracket(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Unbalanced parentheses.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:97: error: 'tile.reduce' op src_layout: cannot parse "S[(4, 8]": at column 8: expected ',' or ')', got ']'{{$}}
func.func @unbalanced_parens(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[(4, 8]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A ':' with no strides.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:96: error: 'tile.reduce' op src_layout: cannot parse "S[4 : ]": at column 7: expected an integer, got ']'{{$}}
func.func @no_strides(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 : ]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An '@' with no axis.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:98: error: 'tile.reduce' op src_layout: cannot parse "S[4 : 1@]": at column 9: expected an axis, got ']'{{$}}
func.func @no_axis(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 : 1@]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An axis that does not exist.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:96: error: 'tile.reduce' op src_layout: cannot parse "S[4 : 1@lane]": at column 9: unknown axis 'lane' (expected one of m, laneid, warpid, wid_in_wg, tid_in_wg, cta_in_cluster){{$}}
func.func @unknown_axis(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : 1@lane]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A replica without strides.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:100: error: 'tile.reduce' op src_layout: cannot parse "S[4] + R[2]": at column 11: expected ':' (R[...] needs strides), got ']'{{$}}
func.func @replica_no_strides(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4] + R[2]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A '+' with nothing after it.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:96: error: 'tile.reduce' op src_layout: cannot parse "S[4] +": at column 7: expected 'R[', got end of text{{$}}
func.func @dangling_plus(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4] +">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Two shards.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:95: error: 'tile.reduce' op src_layout: cannot parse "S[4] S[4]": at column 6: expected '+' or end of text, got 'S'{{$}}
func.func @two_shards(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4] S[4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The replica first.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:90: error: 'tile.reduce' op src_layout: cannot parse "R[4 : 1]": at column 1: expected 'S[', got 'R'{{$}}
func.func @replica_first(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"R[4 : 1]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Strides nested unlike the modes.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:101: error: 'tile.reduce' op src_layout: cannot parse "S[(2, 2) : (1)]": at column 12: the strides' nesting (iters per dim: 1) does not match the modes' (1, 1){{$}}
func.func @nesting_mismatch(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[(2, 2) : (1)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Too few replica strides.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:106: error: 'tile.reduce' op src_layout: cannot parse "S[4] + R[(2, 2) : 1@laneid]": at column 19: 1 replica strides for 2 modes{{$}}
func.func @replica_strides(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4] + R[(2, 2) : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Nesting three levels deep.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:94: error: 'tile.reduce' op src_layout: cannot parse "S[(((4)))]": at column 5: nested too deep: a mode is an integer or a parenthesised list of integers, as in S[(4, (2, 8))]{{$}}
func.func @too_deep(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[(((4)))]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A character outside the grammar.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:94: error: 'tile.reduce' op src_layout: cannot parse "S[4 ; 1]": at column 5: unexpected character ';'{{$}}
func.func @semicolon(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 ; 1]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A float extent.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:93: error: 'tile.reduce' op src_layout: cannot parse "S[4.0]": at column 4: unexpected character '.'{{$}}
func.func @float_extent(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4.0]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An extent of 10^30.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:92: error: 'tile.reduce' op src_layout: cannot parse "S[1000000000000000000000000000000]": at column 3: 1000000000000000000000000000000 does not fit in 64 bits{{$}}
func.func @extent_1e30(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[1000000000000000000000000000000]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An extent of -10^30.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:92: error: 'tile.reduce' op src_layout: cannot parse "S[-1000000000000000000000000000000]": at column 3: -1000000000000000000000000000000 does not fit in 64 bits{{$}}
func.func @extent_minus_1e30(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[-1000000000000000000000000000000]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An extent of 2^63, one past int64.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:92: error: 'tile.reduce' op src_layout: cannot parse "S[9223372036854775808]": at column 3: 9223372036854775808 does not fit in 64 bits{{$}}
func.func @extent_2_63(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[9223372036854775808]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An extent of 2^63 - 1: it fits, but no thread holds that many registers.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: m reaches register slot 9223372036854775806, but a thread's tile may span at most 1024 slots{{$}}
func.func @extent_int64_max(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[9223372036854775807]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An extent of 10^9 (checking it takes no longer than S[4]).
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: m reaches register slot 999999999, but a thread's tile may span at most 1024 slots{{$}}
func.func @extent_1e9(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[1000000000]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// 4096 x 4096 registers.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: m reaches register slot 16777215, but a thread's tile may span at most 1024 slots{{$}}
func.func @extent_4096_squared(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[(4096, 4096)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A stride of 10^30 on a lane.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:94: error: 'tile.reduce' op src_layout: cannot parse "S[4 : 1000000000000000000000000000000@laneid]": at column 7: 1000000000000000000000000000000 does not fit in 64 bits{{$}}
func.func @stride_1e30(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : 1000000000000000000000000000000@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A stride of 10^18 on a lane.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: laneid reaches lane 3000000000000000000, but a warp has lanes 0..31{{$}}
func.func @stride_1e18(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : 1000000000000000000@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A stride of 10^18 on the registers, with an extent of 10^18.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: m reaches register slot 999999999999999999000000000000000000, but a thread's tile may span at most 1024 slots{{$}}
func.func @both_1e18(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[1000000000000000000 : 1000000000000000000]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A negative extent.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: dim 0 iter 0: extent -4 must be >= 1{{$}}
func.func @negative_extent(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[-4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A zero extent.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: dim 0 iter 0: extent 0 must be >= 1{{$}}
func.func @zero_extent(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[0]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A negative register stride.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: dim 0 iter 0: register stride -1 must be >= 0{{$}}
func.func @negative_stride(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 : -1]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A zero lane stride.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: dim 0 iter 0: stride 0 on laneid must be >= 1{{$}}
func.func @zero_lane_stride(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : 0@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A negative lane stride.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: dim 0 iter 0: stride -1 on laneid must be >= 1{{$}}
func.func @negative_lane_stride(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : -1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A huge replica.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: m reaches register slot 3999999999999, but a thread's tile may span at most 1024 slots{{$}}
func.func @huge_replica(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 : 1] + R[1000000000000 : 4]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// 64 lanes.
// CHECK: bad-input-layouts.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op src_layout: laneid reaches lane 63, but a warp has lanes 0..31{{$}}
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst_layout: laneid reaches lane 63, but a warp has lanes 0..31{{$}}
func.func @lanes_64(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[64 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[64 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A warp-scope op whose layout names warpid.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: axis warpid is not allowed at warp scope (allowed: m, laneid) (a warp-scope layout names lanes: use laneid){{$}}
func.func @warpid_at_warp(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : 1@warpid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A thread-scope op whose layout names laneid.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: axis laneid is not allowed at thread scope (allowed: m){{$}}
func.func @laneid_at_thread(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A warp-scope op whose layout names wid_in_wg.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: axis wid_in_wg is not allowed at warp scope (allowed: m, laneid){{$}}
func.func @wid_in_wg_at_warp(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", src_layout = #tile.layout<"S[4 : 1@wid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A thread-scope op whose layout names tid_in_wg.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: axis tid_in_wg is not allowed at thread scope (allowed: m){{$}}
func.func @tid_in_wg_at_thread(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[4 : 1@tid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A warpgroup-scope op whose layout names warpid.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src_layout: axis warpid is not allowed at warpgroup scope (allowed: m, laneid, wid_in_wg, tid_in_wg){{$}}
func.func @warpid_at_warpgroup(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", src_layout = #tile.layout<"S[4 : 1@warpid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A warpgroup-scope layout past its 4 warps.
// CHECK: bad-input-layouts.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op src_layout: wid_in_wg reaches warp 7 of its warpgroup, but a warpgroup has warps 0..3{{$}}
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst_layout: wid_in_wg reaches warp 7 of its warpgroup, but a warpgroup has warps 0..3{{$}}
func.func @wid_in_wg_past(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warpgroup", axes = array<i64: 1>, src_layout = #tile.layout<"S[(8, 4) : (1@wid_in_wg, 1)]">, dst_layout = #tile.layout<"S[8 : 1@wid_in_wg]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A layout that spans more registers than the memref holds.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: the memref holds 4 element(s) but src_layout spans 8 register slot(s){{$}}
func.func @memref_too_small(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", src_layout = #tile.layout<"S[8]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A replica on a lane the shard uses.
// CHECK: bad-input-layouts.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op src_layout: coordinates (0, 0) (replica copy 1) and (8, 0) both map to lane 8 slot 0{{$}}
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst_layout: coordinates (0,) (replica copy 1) and (8,) both map to lane 8 slot 0{{$}}
func.func @replica_overlaps(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, src_layout = #tile.layout<"S[(16, 4) : (1@laneid, 1)] + R[2 : 8@laneid]">, dst_layout = #tile.layout<"S[16 : 1@laneid] + R[2 : 8@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A dst that does not match the src reduced over its axes.
// CHECK: bad-input-layouts.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst shape (8) does not match src shape (4, 8) reduced over axes [1]: expected (4) or (4, 1){{$}}
func.func @dst_shape(%d: memref<8xf32, #gpu.address_space<private>>, %s: memref<32xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread", axes = array<i64: 1>, src_layout = #tile.layout<"S[(4, 8)]">, dst_layout = #tile.layout<"S[8]">} : (memref<8xf32, #gpu.address_space<private>>, memref<32xf32, #gpu.address_space<private>>) -> ()
  return
}
