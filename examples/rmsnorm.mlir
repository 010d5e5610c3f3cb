// RMSNorm of each row of an M x N matrix: Y[r] = X[r] / sqrt(mean(X[r]^2) + eps) * weight.
// A template: examples/_rowwise.py fills in its fields (a dollar sign and a name in
// braces) for one shape and plan; docs/fused-kernels.md explains them.
!X = memref<${M}x${N}x${T}>
!Wt = memref<${N}x${T}>
!tile = memref<${E}x${T}, #gpu.address_space<private>>
!one = memref<1xf32, #gpu.address_space<private>>
!vT = vector<${V}x${T}>
!v = vector<${V}xf32>
#rows = #tile.layout<"${ROWS}">
#cols = #tile.layout<"${WEIGHTS}">
#part = #tile.layout<"${PARTIALS}">
#res = #tile.layout<"${RESULT}">
#unroll = #llvm.loop_annotation<unroll = <full = true>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "${CHIP}">] {
    gpu.func @rmsnorm(%X: !X {llvm.align = 16 : i64}, %Wt: !Wt {llvm.align = 16 : i64},
                      %Y: !X {llvm.align = 16 : i64}, %eps: f32) kernel
        attributes {known_block_size = array<i32: ${THREADS}, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cV = arith.constant ${V} : index
      %cE = arith.constant ${E} : index
      %cK = arith.constant ${K} : index
      %cCH = arith.constant ${CH} : index
      %cR = arith.constant ${R} : index
      %n = arith.constant ${N}.0 : f32
      %zero = arith.constant 0.0 : f32
      %block = gpu.block_id x
      %row = arith.muli %block, %cR : index
      %x = memref.alloca() : !tile
      %w = memref.alloca() : !tile
      %p = memref.alloca() : !one
      %q = memref.alloca() : !one
      // Pass 1: each thread's sum of squares, then the row's (a sum over its threads).
      %ss = scf.for %k = %c0 to %cK step %c1 iter_args(%s0 = %zero) -> (f32) {
        %col = arith.muli %k, %cCH : index
        "tile.copy"(%x, %X, %row, %col) {exec_scope = "cta", layout = #rows} : (!tile, !X, index, index) -> ()
        %s1 = scf.for %i = %c0 to %cE step %cV iter_args(%acc = %s0) -> (f32) {
          %xT = vector.load %x[%i] : !tile, !vT
          %xv = ${EXTF} %xT : !vT to !v
          %sq = arith.mulf %xv, %xv : !v
          %r = vector.reduction <add>, %sq, %acc : !v into f32
          scf.yield %r : f32
        } {llvm.loop_annotation = #unroll}
        scf.yield %s1 : f32
      }
      memref.store %ss, %p[%c0] : !one
      "tile.reduce"(%q, %p) {kind = "sum", exec_scope = "cta", axes = array<i64: 1>,
          src_layout = #part, dst_layout = #res} : (!one, !one) -> ()
      %SS = memref.load %q[%c0] : !one
      %ms = arith.divf %SS, %n : f32
      %mse = arith.addf %ms, %eps : f32
      %rstd = math.rsqrt %mse : f32
      %rv = vector.broadcast %rstd : f32 to !v
      // Pass 2, last chunk first (it is still in registers): Y = x * rstd * weight.
      scf.for %k = %c0 to %cK step %c1 {
        %kr = arith.subi %cK, %k : index
        %j = arith.subi %kr, %c1 : index
        %col = arith.muli %j, %cCH : index
        %again = arith.cmpi ne, %k, %c0 : index
        scf.if %again {
          "tile.copy"(%x, %X, %row, %col) {exec_scope = "cta", layout = #rows} : (!tile, !X, index, index) -> ()
        }
        "tile.copy"(%w, %Wt, %col) {exec_scope = "cta", layout = #cols} : (!tile, !Wt, index) -> ()
        scf.for %i = %c0 to %cE step %cV {
          %xT = vector.load %x[%i] : !tile, !vT
          %wT = vector.load %w[%i] : !tile, !vT
          %xv = ${EXTF} %xT : !vT to !v
          %wv = ${EXTF} %wT : !vT to !v
          %xn = arith.mulf %xv, %rv : !v
          %y = arith.mulf %xn, %wv : !v
          %yT = ${TRUNCF} %y : !v to !vT
          vector.store %yT, %x[%i] : !tile, !vT
        } {llvm.loop_annotation = #unroll}
        "tile.copy"(%Y, %x, %row, %col) {exec_scope = "cta", layout = #rows} : (!X, !tile, index, index) -> ()
      }
      gpu.return
    }
  }
}
