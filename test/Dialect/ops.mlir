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
