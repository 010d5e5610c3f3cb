// LayerNorm of each row of an M x N matrix: Y[r] = (X[r] - mean) / sqrt(var + eps) * weight + bias,
// with the mean and the (biased) variance of X[r]. The variance is the mean of (x - mean)^2,
// a second pass over the row: no cancellation.
// A template: examples/_rowwise.py fills in its fields (a dollar sign and a name in
// braces) for one shape and plan; docs/fused-kernels.md explains them.
!X = memref<${M}x${N}x${T}>
!Wt = memref<${N}x${T}>
!tile = memref<${E}x${T}, #gpu.address_space<private>>
!one = memref<1xf32, #gpu.address_space<private>>
!vT = vector<${V}x${T}>
!v = vector<${V}xf32>
!vi = vector<${V}xindex>
#rows = #tile.layout<"${ROWS}">
#cols = #tile.layout<"${WEIGHTS}">
#part = #tile.layout<"${PARTIALS}">
#res = #tile.layout<"${RESULT}">
#unroll = #llvm.loop_annotation<unroll = <full = true>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "${CHIP}">] {
    gpu.func @layernorm(%X: !X {llvm.align = 16 : i64}, %Wt: !Wt {llvm.align = 16 : i64},
                        %B: !Wt {llvm.align = 16 : i64}, %Y: !X {llvm.align = 16 : i64}, %eps: f32) kernel
        attributes {known_block_size = array<i32: ${THREADS}, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cV = arith.constant ${V} : index
      %cE = arith.constant ${E} : index
      %cK = arith.constant ${K} : index
      %cC = arith.constant ${C} : index
      %cCH = arith.constant ${CH} : index
      %cR = arith.constant ${R} : index
      %cN = arith.constant ${N} : index
      %cTW = arith.constant ${TW} : index
      %cSL = arith.constant ${SLICE} : index
      %n = arith.constant ${N}.0 : f32
      %zero = arith.constant 0.0 : f32
      %zv = arith.constant dense<0.0> : !v
      %block = gpu.block_id x
      %row = arith.muli %block, %cR : index
      %tid = gpu.thread_id x
      %tr = arith.remui %tid, %cTW : index
      %lead = arith.muli %tr, %cV : index       // the thread's first column in a chunk
      %lanes = arith.constant dense<[${LANES}]> : !vi   // 0, 1, ..., V - 1
      %x = memref.alloca() : !tile
      %w = memref.alloca() : !tile
      %b = memref.alloca() : !tile
      %p = memref.alloca() : !one
      %q = memref.alloca() : !one
      // Pass 1: the row's sum (each thread's, then a sum over the row's threads).
      %s = scf.for %k = %c0 to %cK step %c1 iter_args(%s0 = %zero) -> (f32) {
        %col = arith.muli %k, %cCH : index
        "tile.copy"(%x, %X, %row, %col) {exec_scope = "cta", layout = #rows} : (!tile, !X, index, index) -> ()
        %s1 = scf.for %i = %c0 to %cE step %cV iter_args(%acc = %s0) -> (f32) {
          %xT = vector.load %x[%i] : !tile, !vT
          %xv = ${EXTF} %xT : !vT to !v
          %r = vector.reduction <add>, %xv, %acc : !v into f32
          scf.yield %r : f32
        } {llvm.loop_annotation = #unroll}
        scf.yield %s1 : f32
      }
      memref.store %s, %p[%c0] : !one
      "tile.reduce"(%q, %p) {kind = "sum", exec_scope = "cta", axes = array<i64: 1>,
          src_layout = #part, dst_layout = #res} : (!one, !one) -> ()
      %S = memref.load %q[%c0] : !one
      %mean = arith.divf %S, %n : f32
      %mv = vector.broadcast %mean : f32 to !v
      // Pass 2, last chunk first (it is still in registers): the sum of (x - mean)^2 over
      // the columns inside the row (the padding is 0, not the mean).
      %d2 = scf.for %k = %c0 to %cK step %c1 iter_args(%s0 = %zero) -> (f32) {
        %kr = arith.subi %cK, %k : index
        %j = arith.subi %kr, %c1 : index
        %col = arith.muli %j, %cCH : index
        %again = arith.cmpi ne, %k, %c0 : index
        scf.if %again {
          "tile.copy"(%x, %X, %row, %col) {exec_scope = "cta", layout = #rows} : (!tile, !X, index, index) -> ()
        }
        %first = arith.addi %col, %lead : index
        %s1 = scf.for %c = %c0 to %cC step %c1 iter_args(%acc = %s0) -> (f32) {
          %i = arith.muli %c, %cV : index
          %xT = vector.load %x[%i] : !tile, !vT
          %xv = ${EXTF} %xT : !vT to !v
          %d = arith.subf %xv, %mv : !v
          %dd = arith.mulf %d, %d : !v
          %at = arith.muli %c, %cSL : index
          %from = arith.addi %first, %at : index        // vector c starts at this column
          %room = arith.subi %cN, %from : index
          %rv = vector.broadcast %room : index to !vi
          %inside = arith.cmpi slt, %lanes, %rv : !vi
          %ddm = arith.select %inside, %dd, %zv : vector<${V}xi1>, !v
          %r = vector.reduction <add>, %ddm, %acc : !v into f32
          scf.yield %r : f32
        } {llvm.loop_annotation = #unroll}
        scf.yield %s1 : f32
      }
      memref.store %d2, %p[%c0] : !one
      "tile.reduce"(%q, %p) {kind = "sum", exec_scope = "cta", axes = array<i64: 1>,
          src_layout = #part, dst_layout = #res} : (!one, !one) -> ()
      %D2 = memref.load %q[%c0] : !one
      %var = arith.divf %D2, %n : f32
      %ve = arith.addf %var, %eps : f32
      %rstd = math.rsqrt %ve : f32
      %rv = vector.broadcast %rstd : f32 to !v
      // Pass 3, first chunk first (still in registers): Y = (x - mean) * rstd * weight + bias.
      scf.for %k = %c0 to %cK step %c1 {
        %col = arith.muli %k, %cCH : index
        %again = arith.cmpi ne, %k, %c0 : index
        scf.if %again {
          "tile.copy"(%x, %X, %row, %col) {exec_scope = "cta", layout = #rows} : (!tile, !X, index, index) -> ()
        }
        "tile.copy"(%w, %Wt, %col) {exec_scope = "cta", layout = #cols} : (!tile, !Wt, index) -> ()
        "tile.copy"(%b, %B, %col) {exec_scope = "cta", layout = #cols} : (!tile, !Wt, index) -> ()
        scf.for %i = %c0 to %cE step %cV {
          %xT = vector.load %x[%i] : !tile, !vT
          %wT = vector.load %w[%i] : !tile, !vT
          %bT = vector.load %b[%i] : !tile, !vT
          %xv = ${EXTF} %xT : !vT to !v
          %wv = ${EXTF} %wT : !vT to !v
          %bv = ${EXTF} %bT : !vT to !v
          %d = arith.subf %xv, %mv : !v
          %xn = arith.mulf %d, %rv : !v
          %y = math.fma %xn, %wv, %bv : !v
          %yT = ${TRUNCF} %y : !v to !vT
          vector.store %yT, %x[%i] : !tile, !vT
        } {llvm.loop_annotation = #unroll}
        "tile.copy"(%Y, %x, %row, %col) {exec_scope = "cta", layout = #rows} : (!X, !tile, index, index) -> ()
      }
      gpu.return
    }
  }
}
