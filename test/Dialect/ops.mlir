// RUN: tile-opt %s | FileCheck %s
// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: mlir-opt --irdl-file=%tile_dialect %s | FileCheck %s
//
// tile.reduce round-trips through tile-opt, and upstream mlir-opt accepts the
// same IR from the IRDL definition alone.

!r1 = memref<1xf32, #gpu.address_space<private>>
!r4 = memref<4xf32, #gpu.address_space<private>>

// CHECK-LABEL: func.func @demo
// CHECK: "tile.reduce"(%{{.*}}, %{{.*}}) {accum = false, axes = array<i64: 0>, exec_scope = "thread", kind = "sum"}
func.func @demo(%dst: !r1, %src: !r4) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>, accum = false} : (!r1, !r4) -> ()
  return
}

// A reduction over the 4 CTAs of a cluster and their lanes (the cluster scope).
// CHECK-LABEL: func.func @cluster
// CHECK: "tile.reduce"(%{{.*}}, %{{.*}}) {axes = array<i64: 0>, dst_layout = #tile.layout<"S[1 : 1] + R[(4, 32) : (1@cta_in_cluster, 1@laneid)]">, exec_scope = "cluster", kind = "sum", src_layout = #tile.layout<"S[((4, 32)) : ((1@cta_in_cluster, 1@laneid))]">}
func.func @cluster(%dst: !r1, %src: !r1) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "cluster", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[((4, 32)) : ((1@cta_in_cluster, 1@laneid))]">,
      dst_layout = #tile.layout<"S[1 : 1] + R[(4, 32) : (1@cta_in_cluster, 1@laneid)]">} : (!r1, !r1) -> ()
  return
}

// CHECK-LABEL: func.func @defaults
// CHECK: "tile.reduce"(%{{.*}}, %{{.*}}) {exec_scope = "thread", kind = "max"}
func.func @defaults(%dst: !r1, %src: !r4) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread"} : (!r1, !r4) -> ()
  return
}

// CHECK-LABEL: func.func @warp_layouts
// CHECK: "tile.reduce"
// CHECK-SAME: dispatch = "local"
// CHECK-SAME: dst_layout = #tile.layout<"S[4 : 1] + R[32 : 1@laneid]">
// CHECK-SAME: kind = "maximum"
// CHECK-SAME: src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">
func.func @warp_layouts(%dst: !r4, %src: !r4) {
  "tile.reduce"(%dst, %src) {kind = "maximum", exec_scope = "warp", axes = array<i64: 0>, accum = true, dispatch = "local",
      src_layout = #tile.layout<"S[(32, 4) : (1@laneid, 1)]">,
      dst_layout = #tile.layout<"S[4 : 1] + R[32 : 1@laneid]">} : (!r4, !r4) -> ()
  return
}

// CHECK-LABEL: func.func @warpgroup_f16
// CHECK: "tile.reduce"{{.*}}exec_scope = "warpgroup"{{.*}}kind = "min"
func.func @warpgroup_f16(%dst: memref<1xf16, #gpu.address_space<private>>, %src: memref<16xf16, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "min", exec_scope = "warpgroup", axes = array<i64: 1>,
      src_layout = #tile.layout<"S[(128, 16) : (1@tid_in_wg, 1)]">,
      dst_layout = #tile.layout<"S[128 : 1@tid_in_wg]">}
    : (memref<1xf16, #gpu.address_space<private>>, memref<16xf16, #gpu.address_space<private>>) -> ()
  return
}

// Layouts that the rules accept (each used to be rejected): a register replica on free
// slots, a mix of dropped and kept reduced dims, kept dims on a non-power-of-two number
// of lanes, and kept rows on non-adjacent lanes reduced over their lane group.
// CHECK-LABEL: func.func @register_replicas
// CHECK: src_layout = #tile.layout<"S[8 : 1] + R[2 : 8]">
func.func @register_replicas(%dst: memref<8xf32, #gpu.address_space<private>>, %src: memref<16xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread", axes = array<i64: 0>,
      src_layout = #tile.layout<"S[8 : 1] + R[2 : 8]">, dst_layout = #tile.layout<"S[1 : 1] + R[8 : 1]">}
    : (memref<8xf32, #gpu.address_space<private>>, memref<16xf32, #gpu.address_space<private>>) -> ()
  return
}

// CHECK-LABEL: func.func @keep_one_drop_one
// CHECK: axes = array<i64: 0, 2>
func.func @keep_one_drop_one(%dst: memref<3xf32, #gpu.address_space<private>>, %src: memref<24xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "thread", axes = array<i64: 0, 2>,
      src_layout = #tile.layout<"S[(2, 3, 4)]">, dst_layout = #tile.layout<"S[(1, 3)]">}
    : (memref<3xf32, #gpu.address_space<private>>, memref<24xf32, #gpu.address_space<private>>) -> ()
  return
}

// CHECK-LABEL: func.func @lanes24
// CHECK: src_layout = #tile.layout<"S[(24, 4) : (1@laneid, 1)]">
func.func @lanes24(%dst: !r1, %src: !r4) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>,
      src_layout = #tile.layout<"S[(24, 4) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[24 : 1@laneid]">} : (!r1, !r4) -> ()
  return
}

// CHECK-LABEL: func.func @lanes3x8
// CHECK: src_layout = #tile.layout<"S[(3, 8) : (8@laneid, 1@laneid)]">
func.func @lanes3x8(%dst: !r1, %src: !r1) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 1>,
      src_layout = #tile.layout<"S[(3, 8) : (8@laneid, 1@laneid)]">, dst_layout = #tile.layout<"S[3 : 8@laneid] + R[8 : 1@laneid]">} : (!r1, !r1) -> ()
  return
}

// tile.copy: a load (the register tile is dst), with padding.
// CHECK-LABEL: func.func @copy_load
// CHECK: "tile.copy"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, padding = 0xFF800000 : f32}
// CHECK-SAME: : (memref<8xf32, #gpu.address_space<private>>, memref<4096x1000xf32>, index, index) -> ()
func.func @copy_load(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<4096x1000xf32>, %i: index, %j: index) {
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp",
      layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">, padding = 0xFF800000 : f32}
    : (memref<8xf32, #gpu.address_space<private>>, memref<4096x1000xf32>, index, index) -> ()
  return
}

// tile.copy: a store to workgroup memory of dynamic shape, every optional attribute
// but padding (a load's only).
// CHECK-LABEL: func.func @copy_store
// CHECK: "tile.copy"(%{{.*}}, %{{.*}}, %{{.*}}) {alignment = 16 : i64, dispatch = "copy_scalar", exec_scope = "cta", layout = #tile.layout<"S[((4, 32)) : ((1@warpid, 1@laneid))]">}
func.func @copy_store(%s: memref<?xbf16, #gpu.address_space<workgroup>>, %r: memref<4xbf16, #gpu.address_space<private>>, %i: index) {
  "tile.copy"(%s, %r, %i) {exec_scope = "cta", alignment = 16, dispatch = "copy_scalar",
      layout = #tile.layout<"S[((4, 32)) : ((1@warpid, 1@laneid))]">}
    : (memref<?xbf16, #gpu.address_space<workgroup>>, memref<4xbf16, #gpu.address_space<private>>, index) -> ()
  return
}

// tile.copy with the default layout: the register memref's shape, in one thread.
// CHECK-LABEL: func.func @copy_default_layout
// CHECK: "tile.copy"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {exec_scope = "thread"}
func.func @copy_default_layout(%r: memref<2x4xi32, #gpu.address_space<private>>, %x: memref<8x8xi32>, %i: index, %j: index) {
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "thread"}
    : (memref<2x4xi32, #gpu.address_space<private>>, memref<8x8xi32>, index, index) -> ()
  return
}

// A cta-scope copy and reduce whose layouts name no thread axis: each thread its own
// tile, in a block of any size (here 128 threads, 4 warps).
// CHECK-LABEL: gpu.func @cta_own_tiles
// CHECK: "tile.copy"(%{{.*}}, %{{.*}}, %{{.*}}) {exec_scope = "cta"}
// CHECK: "tile.reduce"(%{{.*}}, %{{.*}}) {axes = array<i64: 0>, exec_scope = "cta", kind = "sum"}
gpu.module @own {
  gpu.func @cta_own_tiles(%x: memref<512xf32>, %i: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %r = memref.alloca() : !r4
    %d = memref.alloca() : !r1
    "tile.copy"(%r, %x, %i) {exec_scope = "cta"} : (!r4, memref<512xf32>, index) -> ()
    "tile.reduce"(%d, %r) {kind = "sum", exec_scope = "cta", axes = array<i64: 0>} : (!r1, !r4) -> ()
    gpu.return
  }
}
