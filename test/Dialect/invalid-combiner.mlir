// RUN: tile-opt %s --split-input-file --verify-diagnostics
//
// Combiner reductions (docs/spec.md, "Combiner reductions"): every broken rule is one
// error at the op's location, from tile-verify right after parsing, naming what is
// wrong; a combiner function is one block of pure arith and math ops.

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
!i1 = memref<1xi32, #gpu.address_space<private>>
!i4 = memref<4xi32, #gpu.address_space<private>>
gpu.module @k {
  // The combiner of two operand pairs takes 4 arguments (left, left, right, right).
  func.func private @three(%a: f32, %b: i32, %c: f32) -> (f32, i32) {
    return %a, %b : f32, i32
  }
  func.func @wrong_arity(%dv: !f1, %di: !i1, %sv: !f4, %si: !i4) {
    // expected-error @+1 {{'tile.reduce2' op combiner @three has 3 argument(s) and 2 result(s), but an op with 2 dst(s) and 2 src(s) needs 4 arguments (the 2 left values, then the 2 right values) and 2 result(s): (f32, i32, f32, i32) -> (f32, i32)}}
    "tile.reduce2"(%dv, %di, %sv, %si) {combiner = @three, exec_scope = "thread"} : (!f1, !i1, !f4, !i4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
!i1 = memref<1xi32, #gpu.address_space<private>>
!i4 = memref<4xi32, #gpu.address_space<private>>
gpu.module @k {
  // The right value of operand 0 is f32, not i32.
  func.func private @swapped(%a: f32, %b: i32, %c: i32, %d: i32) -> (f32, i32) {
    return %a, %b : f32, i32
  }
  func.func @wrong_types(%dv: !f1, %di: !i1, %sv: !f4, %si: !i4) {
    // expected-error @+1 {{'tile.reduce2' op combiner @swapped argument 2 (the right value of operand 0) is i32, but operand 0's element type is f32: the combiner must be (f32, i32, f32, i32) -> (f32, i32)}}
    "tile.reduce2"(%dv, %di, %sv, %si) {combiner = @swapped, exec_scope = "thread"} : (!f1, !i1, !f4, !i4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  // It returns two values where the op combines one operand.
  func.func private @two(%l: f32, %r: f32) -> (f32, f32) {
    return %l, %r : f32, f32
  }
  func.func @wrong_result_count(%d: !f1, %s: !f4) {
    // expected-error @+1 {{'tile.reduce' op combiner @two has 2 argument(s) and 2 result(s), but an op with 1 dst(s) and 1 src(s) needs 2 arguments (the 1 left values, then the 1 right values) and 1 result(s): (f32, f32) -> (f32)}}
    "tile.reduce"(%d, %s) {combiner = @two, exec_scope = "thread"} : (!f1, !f4) -> ()
    return
  }
}

// -----

gpu.module @k {
  // A return of the wrong count is the func verifier's own error, at the return.
  func.func private @short(%l: f32, %r: f32) -> (f32, f32) {
    // expected-error @+1 {{'func.return' op has 1 operands, but enclosing function (@short) returns 2}}
    return %l : f32
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  // Memory in a combiner.
  func.func private @loads(%l: f32, %r: f32) -> f32 {
    %m = memref.alloca() : memref<1xf32>
    %c0 = arith.constant 0 : index
    %x = memref.load %m[%c0] : memref<1xf32>
    return %x : f32
  }
  func.func @memory(%d: !f1, %s: !f4) {
    // expected-error @+2 {{'tile.reduce' op combiner @loads: memref.alloca (line 74) is not allowed in a combiner: its ops are pure arith and math ops (no memory, barriers, calls or regions)}}
    // expected-error @+1 {{'tile.reduce' op combiner @loads: memref.load (line 76) is not allowed in a combiner}}
    "tile.reduce"(%d, %s) {combiner = @loads, exec_scope = "thread"} : (!f1, !f4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  // A barrier in a combiner.
  func.func private @waits(%l: f32, %r: f32) -> f32 {
    gpu.barrier
    %s = arith.addf %l, %r : f32
    return %s : f32
  }
  func.func @barrier(%d: !f1, %s: !f4) {
    // expected-error @+1 {{'tile.reduce' op combiner @waits: gpu.barrier (line 94) is not allowed in a combiner}}
    "tile.reduce"(%d, %s) {combiner = @waits, exec_scope = "thread"} : (!f1, !f4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  // A call in a combiner.
  func.func private @add(%l: f32, %r: f32) -> f32 {
    %s = arith.addf %l, %r : f32
    return %s : f32
  }
  func.func private @calls(%l: f32, %r: f32) -> f32 {
    %s = func.call @add(%l, %r) : (f32, f32) -> f32
    return %s : f32
  }
  func.func @call(%d: !f1, %s: !f4) {
    // expected-error @+1 {{'tile.reduce' op combiner @calls: func.call (line 116) is not allowed in a combiner}}
    "tile.reduce"(%d, %s) {combiner = @calls, exec_scope = "thread"} : (!f1, !f4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  func.func private @add(%l: f32, %r: f32) -> f32 {
    %s = arith.addf %l, %r : f32
    return %s : f32
  }
  func.func @kind_and_combiner(%d: !f1, %s: !f4) {
    // expected-error @+1 {{'tile.reduce' op an op combines with a kind or with a combiner, never both: it has kind = "sum" and combiner = @add}}
    "tile.reduce"(%d, %s) {kind = "sum", combiner = @add, exec_scope = "thread"} : (!f1, !f4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  func.func private @add(%l: f32, %r: f32) -> f32 {
    %s = arith.addf %l, %r : f32
    return %s : f32
  }
  func.func @misspelt(%d: !f1, %s: !f4) {
    // expected-error @+1 {{'tile.reduce' op combiner: no func.func named @ad in the op's module (did you mean @add?)}}
    "tile.reduce"(%d, %s) {combiner = @ad, exec_scope = "thread"} : (!f1, !f4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  func.func private @declared(%l: f32, %r: f32) -> f32
  func.func @declaration(%d: !f1, %s: !f4) {
    // expected-error @+1 {{'tile.reduce' op combiner @declared is a declaration, with no body: a combiner is one block of pure arith and math ops, ending in func.return}}
    "tile.reduce"(%d, %s) {combiner = @declared, exec_scope = "thread"} : (!f1, !f4) -> ()
    return
  }
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
func.func @not_a_symbol(%d: !f1, %s: !f4) {
  // expected-error @+1 {{'tile.reduce' op combiner must name a func.func in the op's module (combiner = @name), got "add"}}
  "tile.reduce"(%d, %s) {combiner = "add", exec_scope = "thread"} : (!f1, !f4) -> ()
  return
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
!i1 = memref<1xi32, #gpu.address_space<private>>
!i4 = memref<4xi32, #gpu.address_space<private>>
func.func @kind_on_pairs(%dv: !f1, %di: !i1, %sv: !f4, %si: !i4) {
  // expected-error @+1 {{'tile.reduce2' op tile.reduce2 combines 2 operand pairs with a combiner (combiner = @f); kind = sum is for tile.reduce}}
  "tile.reduce2"(%dv, %di, %sv, %si) {kind = "sum", exec_scope = "thread"} : (!f1, !i1, !f4, !i4) -> ()
  return
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
func.func @argmax_one_dst(%d: !f1, %s: !f4) {
  // expected-error @+1 {{'tile.reduce' op kind argmax takes 3 operands (value dst, index dst, src), got 2}}
  "tile.reduce"(%d, %s) {kind = "argmax", exec_scope = "thread"} : (!f1, !f4) -> ()
  return
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
!i1 = memref<1xi32, #gpu.address_space<private>>
!i4 = memref<4xi32, #gpu.address_space<private>>
func.func @argmax_two_srcs(%dv: !f1, %di: !i1, %sv: !f4, %si: !i4) {
  // expected-error @+1 {{'tile.reduce' op takes 2 operands (dst, src), got 4; 3 with kind argmax or argmin (value dst, index dst, src); 2 operand pairs with a combiner are tile.reduce2}}
  "tile.reduce"(%dv, %di, %sv, %si) {kind = "argmax", exec_scope = "thread"} : (!f1, !i1, !f4, !i4) -> ()
  return
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
!h1 = memref<1xi16, #gpu.address_space<private>>
func.func @index_too_narrow(%dv: !f1, %di: !h1, %sv: !f4) {
  // expected-error @+1 {{'tile.reduce' op dst 1 (index): element type i16 is too narrow for the index of argmin: it is i32 (or i64, where the reduced coordinates need more than 31 bits)}}
  "tile.reduce"(%dv, %di, %sv) {kind = "argmin", exec_scope = "thread"} : (!f1, !h1, !f4) -> ()
  return
}

// -----

// 2^32 coordinates per element: their indices need i64.
!w1 = memref<1xf32, #gpu.address_space<workgroup>>
!wi = memref<1xi32, #gpu.address_space<workgroup>>
!wbig = memref<65536x65536xf32, #gpu.address_space<workgroup>>
func.func @index_needs_i64(%dv: !w1, %di: !wi, %sv: !wbig) {
  // expected-error @+1 {{'tile.reduce' op the index dst is i32, but argmax reduces 4294967296 coordinates per element: their indices need i64}}
  "tile.reduce"(%dv, %di, %sv) {kind = "argmax", exec_scope = "cta", axes = array<i64: 0, 1>} : (!w1, !wi, !wbig) -> ()
  return
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
func.func @index_not_an_integer(%dv: !f1, %di: !f1, %sv: !f4) {
  // expected-error @+1 {{'tile.reduce' op dst 1 (index): element type f32: the index of argmax is i32 or i64}}
  "tile.reduce"(%dv, %di, %sv) {kind = "argmax", exec_scope = "thread"} : (!f1, !f1, !f4) -> ()
  return
}

// -----

!f1 = memref<1xf32, #gpu.address_space<private>>
!f2 = memref<2xf32, #gpu.address_space<private>>
!f4 = memref<4xf32, #gpu.address_space<private>>
gpu.module @k {
  func.func private @pairs(%a: f32, %b: f32, %c: f32, %d: f32) -> (f32, f32) {
    return %a, %b : f32, f32
  }
  func.func @shapes_differ(%d0: !f1, %d1: !f2, %s0: !f4, %s1: !f4) {
    // expected-error @+1 {{'tile.reduce2' op dst 1: shape (2) differs from dst 0's (1): the operands of a side share one shape and layout}}
    "tile.reduce2"(%d0, %d1, %s0, %s1) {combiner = @pairs, exec_scope = "thread"} : (!f1, !f2, !f4, !f4) -> ()
    return
  }
}
