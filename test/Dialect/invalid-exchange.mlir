// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// A reduction across threads pairs thread t with t xor 2^b for each reduced thread bit b.
// Kept thread iters may have any extent and stride, but where their sum (or a sum with a
// src replica iter) sets a reduced bit, the pairs mix a coordinate's partials with
// another thread's: tile-verify rejects the op, naming the coordinate, its threads, the
// bit and the partner (docs/spec.md, "Validity", rule 7).

// Warp scope: kept rows on lanes {0, 3, 6} + {0, 4}; dst (2, 1) lands on lanes 10 and 18,
// and lane 10 has the reduced lane bit 3 set.
func.func @kept_sum_carries(%d: memref<1xi32, #gpu.address_space<private>>, %s: memref<1xi32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: dst coordinate (2, 1) is held by threads {10, 18}, but reduced bit 3 pairs thread 10 with thread 2, which holds no element: its kept thread iters add up to thread 10, which has reduced bit(s) {3} set}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 2>, src_layout = #tile.layout<"S[((3), (2), 2) : ((3@laneid), (4@laneid), 8@laneid)]">, dst_layout = #tile.layout<"S[((3), (2)) : ((3@laneid), (4@laneid))] + R[2 : 8@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The same carry from a kept iter plus a src replica iter: copy 1 of dst (2) is on lanes
// 6 + 4 = 10 and 18.
func.func @kept_plus_replica_carries(%d: memref<1xi32, #gpu.address_space<private>>, %s: memref<1xi32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: dst coordinate (2) (replica copy 1) is held by threads {10, 18}, but reduced bit 3 pairs thread 10 with thread 2, which holds no element: its kept and replica thread iters add up to thread 10, which has reduced bit(s) {3} set}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>, src_layout = #tile.layout<"S[((3), 2) : ((3@laneid), 8@laneid)] + R[2 : 4@laneid]">, dst_layout = #tile.layout<"S[(3) : (3@laneid)] + R[(2, 2) : (4@laneid, 8@laneid)]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The cta-scope twin over warps: warp 10 has the reduced warp bit (thread bit 8) set.
func.func @kept_warps_carry(%d: memref<1xi32, #gpu.address_space<private>>, %s: memref<1xi32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: dst coordinate (2, 1, 0) is held by threads {320, 576}, but reduced bit 8 pairs thread 320 with thread 64, which holds no element: its kept thread iters add up to thread 320, which has reduced bit(s) {8} set}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "cta", axes = array<i64: 2>, src_layout = #tile.layout<"S[(3, 2, 2, 32) : (3@warpid, 4@warpid, 8@warpid, 1@laneid)]">, dst_layout = #tile.layout<"S[(3, 2, 32) : (3@warpid, 4@warpid, 1@laneid)] + R[2 : 8@warpid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
  return
}

