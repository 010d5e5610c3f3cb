// RUN: tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-lower-copy --verify-diagnostics
// RUN: not tile-opt %s --split-input-file --mlir-very-unsafe-disable-verifier-on-parsing --tile-lower-copy 2>&1 | FileCheck %s
//
// tile.copy's dispatch failures: one error at the op's location listing every variant
// tried, with all of its reasons. tile-verify is off here, so the dispatch predicates
// also see an invalid op.

// Thread iters that do not nest (lane 2i + 3j holds (i, j): valid, but no thread can
// read its digits off its lane by division): no variant applies.
// CHECK: error: 'tile.copy' op no variant of tile.copy applies (target cuda):
// CHECK-NEXT: copy_vector (prio=10): rejected: threads_nest — the layout's thread iters do not nest: one of extent 3 moves the thread index by 2, the next by 3 < 2 x 3, so a thread's digits cannot be read off its index; vectors_apply — the innermost iter of the last dim is on laneid: no thread holds two consecutive elements of a memory row
// CHECK-NEXT: copy_scalar (prio=0): rejected: threads_nest — the layout's thread iters do not nest
func.func @no_nest(%r: memref<1xf32, #gpu.address_space<private>>, %x: memref<16x16xf32>, %i: index, %j: index) {
  // expected-error @+1 {{copy_scalar (prio=0): rejected: threads_nest — the layout's thread iters do not nest}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(3, 2) : (2@laneid, 3@laneid)]">}
    : (memref<1xf32, #gpu.address_space<private>>, memref<16x16xf32>, index, index) -> ()
  return
}

// -----

// copy_vector forced on a layout whose lanes hold columns: its reason, and nothing else.
// CHECK: error: 'tile.copy' op no variant of tile.copy applies (target cuda):
// CHECK-NEXT: copy_vector (prio=10): rejected: vectors_apply — the innermost iter of the last dim is on laneid: no thread holds two consecutive elements of a memory row
// CHECK-NOT: copy_scalar
func.func @forced_vector_column(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<16x64xf32>, %i: index, %j: index) {
  // expected-error @+1 {{copy_vector (prio=10): rejected: vectors_apply — the innermost iter of the last dim is on laneid}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", dispatch = "copy_vector", layout = #tile.layout<"S[(8, 32) : (1, 1@laneid)]">}
    : (memref<8xf32, #gpu.address_space<private>>, memref<16x64xf32>, index, index) -> ()
  return
}

// -----

// copy_vector forced on a column origin the IR says nothing about.
// CHECK: copy_vector (prio=10): rejected: vectors_apply — 2 x f32 needs 8-byte alignment, but the accesses are proven aligned to 4 bytes only (the base is aligned to 16 and the origin indices are multiples of [1, 1]; an alignment attribute asserts more)
func.func @forced_vector_unaligned(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<16x64xf32>, %i: index, %j: index) {
  // expected-error @+1 {{2 x f32 needs 8-byte alignment, but the accesses are proven aligned to 4 bytes only}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", dispatch = "copy_vector", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
    : (memref<8xf32, #gpu.address_space<private>>, memref<16x64xf32>, index, index) -> ()
  return
}

// -----

// A forced unknown variant lists the registered ones.
// CHECK: error: 'tile.copy' op dispatch = "copy_fast" names no variant of tile.copy for target cuda; registered: copy_vector (prio=10), copy_scalar (prio=0)
func.func @forced_unknown(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<16x64xf32>, %i: index, %j: index) {
  // expected-error @+1 {{dispatch = "copy_fast" names no variant of tile.copy for target cuda; registered: copy_vector (prio=10), copy_scalar (prio=0)}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", dispatch = "copy_fast", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
    : (memref<8xf32, #gpu.address_space<private>>, memref<16x64xf32>, index, index) -> ()
  return
}

// -----

// An invalid op (tile-verify's rule as the reason of copy_valid).
// CHECK: copy_scalar (prio=0): rejected: copy_valid — dtype mismatch: src=f16 dst=f32; threads_nest — the op is invalid
func.func @invalid(%r: memref<8xf32, #gpu.address_space<private>>, %x: memref<16x64xf16>, %i: index, %j: index) {
  // expected-error @+1 {{copy_valid — dtype mismatch: src=f16 dst=f32}}
  "tile.copy"(%r, %x, %i, %j) {exec_scope = "warp", layout = #tile.layout<"S[(1, (32, 8)) : (1, (1@laneid, 1))]">}
    : (memref<8xf32, #gpu.address_space<private>>, memref<16x64xf16>, index, index) -> ()
  return
}
