// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback
// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --check-prefix=CARET --strict-whitespace
//
// A layout that does not parse is reported at the column of the layout text the error
// names, inside the attribute: file:line:col and the caret point at the bad character
// (an attribute has no location of its own in MLIR; tile-opt finds the layout in the
// op's text). The line moves with the attribute when the op spans several lines; a
// layout given through an alias stays at the op.

// The unknown axis 'lane': column 9 of the layout, column 122 of the line.
// CHECK: layout-caret.mlir:[[@LINE+5]]:122: error: 'tile.reduce' op src_layout: cannot parse "S[4 : 1@lane]": at column 9: unknown axis 'lane'
// CARET:      {{^}}  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #tile.layout<"S[4 : 1@lane]">} : {{.*}}
// CARET-NEXT: {{^}}                                                                                                                         ^{{$}}
!r1 = memref<1xf32, #gpu.address_space<private>>
func.func @unknown_axis(%dst: !r1, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #tile.layout<"S[4 : 1@lane]">} : (!r1, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An op over several lines, its src_layout after a dst_layout, spaces around '=': the
// error is on the attribute's line, at the ';'.
// CHECK: layout-caret.mlir:[[@LINE+7]]:42: error: 'tile.reduce' op src_layout: cannot parse "S[4 ; 1]": at column 5: unexpected character ';'
// CARET:      {{^}}      src_layout   =   #tile.layout<"S[4 ; 1]">}
// CARET-NEXT: {{^}}                                         ^{{$}}
!r1 = memref<1xf32, #gpu.address_space<private>>
func.func @several_lines(%dst: !r1, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>,
      dst_layout = #tile.layout<"S[1]">,
      src_layout   =   #tile.layout<"S[4 ; 1]">}
    : (!r1, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A tile.copy's layout: the ']' where a ':' belongs, column 11 of the layout.
// CHECK: layout-caret.mlir:[[@LINE+3]]:82: error: 'tile.copy' op layout: cannot parse "S[4] + R[2]": at column 11: expected ':' (R[...] needs strides)
// CARET: {{^}}                                                                                 ^{{$}}
func.func @copy(%r: memref<4xf32, #gpu.address_space<private>>, %x: memref<64xf32>, %i: index) {
  "tile.copy"(%r, %x, %i) {exec_scope = "warp", layout = #tile.layout<"S[4] + R[2]">} : (memref<4xf32, #gpu.address_space<private>>, memref<64xf32>, index) -> ()
  return
}

// -----

// Through an alias, the layout's text is not in the op: the error stays at the op.
// CHECK: layout-caret.mlir:[[@LINE+4]]:3: error: 'tile.reduce' op src_layout: cannot parse "S[4 : 1@lane]": at column 9: unknown axis 'lane'
#bad = #tile.layout<"S[4 : 1@lane]">
!r1 = memref<1xf32, #gpu.address_space<private>>
func.func @alias(%dst: !r1, %src: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #bad} : (!r1, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
