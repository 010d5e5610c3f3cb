// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// The cluster scope (docs/spec.md, "cluster"): its layouts name CTAs with
// cta_in_cluster, span a power of two of them (at most 16), replicate the dst over the
// reduced CTA bits, and agree with the cluster and the block the function fixes.

// cta_in_cluster names a CTA of a cluster: only a cluster-scope layout may use it.
func.func @cta_axis_at_cta_scope(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{src_layout: axis cta_in_cluster is not allowed at cta scope (allowed: m, laneid, warpid)}}
  // expected-error @+1 {{dst_layout: axis cta_in_cluster is not allowed at cta scope (allowed: m, laneid, warpid)}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "cta", axes = array<i64: 0>, src_layout = #tile.layout<"S[2 : 1@cta_in_cluster]">, dst_layout = #tile.layout<"S[1 : 1] + R[2 : 1@cta_in_cluster]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A cluster has at most 16 CTAs.
func.func @cluster_of_32(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{src_layout: cta_in_cluster reaches CTA 31 of its cluster, but a cluster has at most 16 CTAs}}
  // expected-error @+1 {{dst_layout: cta_in_cluster reaches CTA 31 of its cluster, but a cluster has at most 16 CTAs}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>, src_layout = #tile.layout<"S[32 : 1@cta_in_cluster]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@cta_in_cluster]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A kept dim over 3 CTAs: the CTAs are bits of the thread index, so a power of two.
func.func @cluster_of_3(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+2 {{src_layout spans 3 CTAs of its cluster, but a cluster-scope layout spans a power of two (1, 2, 4, 8 or 16): its CTAs are bits of the thread index}}
  // expected-error @+1 {{dst_layout spans 3 CTAs of its cluster, but a cluster-scope layout spans a power of two}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "cluster", axes = array<i64: 1>, src_layout = #tile.layout<"S[(3, 32) : (1@cta_in_cluster, 1@laneid)]">, dst_layout = #tile.layout<"S[3 : 1@cta_in_cluster] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// The dst must hold the result on every CTA that took part: it replicates over the reduced CTA bits.
func.func @dst_not_on_every_cta(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{dst_layout must replicate over thread bits {0, 1, 2, 3, 4, 10, 11} (the src replica bits {} and the reduced bits {0, 1, 2, 3, 4, 10, 11}), but it replicates over {0, 1, 2, 3, 4}}}
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>, src_layout = #tile.layout<"S[((4, 32)) : ((1@cta_in_cluster, 1@laneid))]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Where the kernel fixes its cluster (known_cluster_size), the layouts' CTAs must be its.
gpu.module @kernels {
  gpu.func @cluster_mismatch(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) kernel
      attributes {known_block_size = array<i32: 32, 1, 1>, known_cluster_size = array<i32: 2, 1, 1>} {
    // expected-error @+2 {{src_layout spans 4 CTA(s), but the cluster has 2 (known_cluster_size = [2, 1, 1]): at cluster scope they must match}}
    // expected-error @+1 {{dst_layout spans 4 CTA(s), but the cluster has 2 (known_cluster_size = [2, 1, 1]): at cluster scope they must match}}
    "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>, src_layout = #tile.layout<"S[((4, 32)) : ((1@cta_in_cluster, 1@laneid))]">, dst_layout = #tile.layout<"S[1 : 1] + R[(4, 32) : (1@cta_in_cluster, 1@laneid)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// ... and its warps the block's (known_block_size), as at cta scope.
gpu.module @kernels {
  gpu.func @block_mismatch(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    // expected-error @+2 {{src_layout spans 1 warp(s) (32 threads), but the block has 64 threads (known_block_size = [64, 1, 1]): at cluster scope they must match}}
    // expected-error @+1 {{dst_layout spans 1 warp(s) (32 threads), but the block has 64 threads}}
    "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>, src_layout = #tile.layout<"S[((2, 32)) : ((1@cta_in_cluster, 1@laneid))]">, dst_layout = #tile.layout<"S[1 : 1] + R[(2, 32) : (1@cta_in_cluster, 1@laneid)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}

// -----

// Two copies of one element on one place: CTA 1's lane 0 would hold row 1 and a copy of row 0.
func.func @replica_on_a_shard_cta(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<1xf32, #gpu.address_space<private>>) {
  // expected-error @+1 {{src_layout: coordinates (0,) (replica copy 1) and (1,) both map to lane 0 cta 1 slot 0}}
  "tile.reduce"(%d, %s) {kind = "max", exec_scope = "cluster", axes = array<i64: 0>, src_layout = #tile.layout<"S[2 : 1@cta_in_cluster] + R[2 : 1@cta_in_cluster]">, dst_layout = #tile.layout<"S[1 : 1] + R[2 : 1@cta_in_cluster]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}
