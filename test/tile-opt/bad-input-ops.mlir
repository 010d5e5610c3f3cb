// RUN: not tile-opt %s --split-input-file 2>&1 | FileCheck %s --implicit-check-not=Traceback --implicit-check-not="internal error"
//
// tile.reduce with the wrong operands, results or regions, and operands that are not
// register memrefs: each is an error at the op that says what the op takes and what
// it got, and tile-opt exits 1 without a traceback.

// No operands.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op takes 2 operands (dst, src), got 0{{$}}
func.func @no_operands(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"() {kind = "sum", exec_scope = "thread"} : () -> ()
  return
}

// -----

// One operand.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op takes 2 operands (dst, src), got 1{{$}}
func.func @one_operand(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Three operands.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op takes 2 operands (dst, src), got 3{{$}}
func.func @three_operands(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A result: tile.reduce writes into dst and returns nothing.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:8: error: 'tile.reduce' op has no results, got 1: write it without '%name =' in front, and with '-> ()' as its result type{{$}}
func.func @a_result(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  %r = "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> f32
  return
}

// -----

// Two results.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:10: error: 'tile.reduce' op has no results, got 2: write it without '%name =' in front, and with '-> ()' as its result type{{$}}
func.func @two_results(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  %r:2 = "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> (f32, f32)
  return
}

// -----

// A region.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op takes no regions, got 1{{$}}
func.func @a_region(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) ({
  ^bb0:
  }) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Tensor operands: both are named.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst must be a memref, got tensor<1xf32>; src must be a memref, got tensor<4xf32>{{$}}
func.func @tensors(%d: tensor<1xf32>, %s: tensor<4xf32>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (tensor<1xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// A scalar src.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src must be a memref, got f32{{$}}
func.func @scalar_src(%d: memref<1xf32, #gpu.address_space<private>>, %s: f32) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, f32) -> ()
  return
}

// -----

// An index dst.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst must be a memref, got index{{$}}
func.func @index_dst(%d: index, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (index, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A vector src.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src must be a memref, got vector<4xf32>{{$}}
func.func @vector_src(%d: memref<1xf32, #gpu.address_space<private>>, %s: vector<4xf32>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, vector<4xf32>) -> ()
  return
}

// -----

// An LLVM pointer src.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src must be a memref, got !llvm.ptr{{$}}
func.func @pointer_src(%d: memref<1xf32, #gpu.address_space<private>>, %s: !llvm.ptr) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, !llvm.ptr) -> ()
  return
}

// -----

// A dynamic src memref.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: expected a memref with a static shape, got memref<?xf32, #gpu.address_space<private>>{{$}}
func.func @dynamic(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<?xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<?xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A memref dynamic in one dim of two.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: expected a memref with a static shape, got memref<4x?xf32, #gpu.address_space<private>>{{$}}
func.func @dynamic_2d(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4x?xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4x?xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A strided src memref.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: expected a memref with the identity layout, got strided<[2]>{{$}}
func.func @strided(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, strided<[2]>, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, strided<[2]>, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An affine-map layout on dst.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dst: expected a memref with the identity layout, got affine_map<(d0) -> (d0 + 1)>{{$}}
func.func @affine_map(%d: memref<1xf32, affine_map<(d0) -> (d0 + 1)>, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, affine_map<(d0) -> (d0 + 1)>, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A memory space that is a number.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: memory space 3 : i64 is not a #gpu.address_space (expected one of #gpu.address_space<private>, #gpu.address_space<workgroup>, #gpu.address_space<global>, or none){{$}}
func.func @space_number(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, 3>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, 3>) -> ()
  return
}

// -----

// A memory space that is a string.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: memory space "registers" is not a #gpu.address_space (expected one of #gpu.address_space<private>, #gpu.address_space<workgroup>, #gpu.address_space<global>, or none){{$}}
func.func @space_string(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, "registers">) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, "registers">) -> ()
  return
}

// -----

// A gpu address space that does not exist (the gpu dialect's own errors).
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:115: error: expected ::mlir::gpu::AddressSpace to be one of: global, workgroup, private{{$}}
// CHECK: bad-input-ops.mlir:[[@LINE+1]]:123: error: failed to parse GPU_AddressSpaceAttr parameter 'value' which is to be a `::mlir::gpu::AddressSpace`{{$}}
func.func @space_gpu_unknown(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<register>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<register>>) -> ()
  return
}

// -----

// A memory space of a dialect that does not exist.
// CHECK: bad-input-ops.mlir:[[@LINE+1]]:106: error: unknown dialect 'gpum' in attribute '#gpum.address_space'{{$}}
func.func @space_unknown_dialect(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpum.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpum.address_space<private>>) -> ()
  return
}

// -----

// 0-d memrefs.
// CHECK: bad-input-ops.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op dst: a 0-d memref (memref<f32, #gpu.address_space<private>>) holds no tile: give it shape 1 (memref<1xf32...>){{$}}
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: a 0-d memref (memref<f32, #gpu.address_space<private>>) holds no tile: give it shape 1 (memref<1xf32...>){{$}}
func.func @zero_d(%d: memref<f32, #gpu.address_space<private>>, %s: memref<f32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<f32, #gpu.address_space<private>>, memref<f32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A dim of extent 0: an empty reduction.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: memref dim 1 has extent 0, but a tile has at least one element in each dim{{$}}
func.func @zero_extent(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4x0xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4x0xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A huge memref without a layout: 10^11 registers in one thread.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: without a src_layout, the memref's 99999999999 elements are one thread's registers, but a thread's tile may span at most 1024 slots; give a src_layout that spreads them over threads{{$}}
func.func @huge(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<99999999999xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<99999999999xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A huge memref without a layout, as a square.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: without a src_layout, the memref's 16777216 elements are one thread's registers, but a thread's tile may span at most 1024 slots; give a src_layout that spreads them over threads{{$}}
func.func @huge_2d(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4096x4096xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4096x4096xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A dimension beyond 64 bits (the parser's error, in words).
// CHECK: bad-input-ops.mlir:[[@LINE+1]]:84: error: dimension 99999999999999999999 does not fit in 64 bits{{$}}
func.func @beyond_int64(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<99999999999999999999xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<99999999999999999999xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// Element types that differ.
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op dtype mismatch: src=f32 dst=f16{{$}}
func.func @mixed_types(%d: memref<1xf16, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf16, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// An element type no variant takes.
// CHECK: bad-input-ops.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op dst: element type i8 is not supported (expected one of f32, f16, bf16, f64, i32, i64){{$}}
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: element type i8 is not supported (expected one of f32, f16, bf16, f64, i32, i64){{$}}
func.func @i8(%d: memref<1xi8, #gpu.address_space<private>>, %s: memref<4xi8, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xi8, #gpu.address_space<private>>, memref<4xi8, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A complex element type.
// CHECK: bad-input-ops.mlir:[[@LINE+3]]:3: error: 'tile.reduce' op dst: element type complex<f32> is not supported (expected one of f32, f16, bf16, f64, i32, i64){{$}}
// CHECK: bad-input-ops.mlir:[[@LINE+2]]:3: error: 'tile.reduce' op src: element type complex<f32> is not supported (expected one of f32, f16, bf16, f64, i32, i64){{$}}
func.func @complex(%d: memref<1xcomplex<f32>, #gpu.address_space<private>>, %s: memref<4xcomplex<f32>, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xcomplex<f32>, #gpu.address_space<private>>, memref<4xcomplex<f32>, #gpu.address_space<private>>) -> ()
  return
}
