// Softmax of each row of an M x N matrix: Y[r] = exp(X[r] - max X[r]) / sum(exp(X[r] - max X[r])).
// A template: examples/_rowwise.py fills in its fields (a dollar sign and a name in
// braces) for one shape and plan; docs/fused-kernels.md explains them.
!X = memref<${M}x${N}x${T}>
!tile = memref<${E}x${T}, #gpu.address_space<private>>
!one = memref<1xf32, #gpu.address_space<private>>
!all = vector<${E}x${T}>
!vT = vector<${V}x${T}>
!v = vector<${V}xf32>
#rows = #tile.layout<"${ROWS}">
#part = #tile.layout<"${PARTIALS}">
#res = #tile.layout<"${RESULT}">
#unroll = #llvm.loop_annotation<unroll = <full = true>>
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "${CHIP}">] {
    gpu.func @softmax(%X: !X {llvm.align = 16 : i64}, %Y: !X {llvm.align = 16 : i64}) kernel
        attributes {known_block_size = array<i32: ${THREADS}, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cV = arith.constant ${V} : index
      %cE = arith.constant ${E} : index
      %cK = arith.constant ${K} : index
      %cCH = arith.constant ${CH} : index
      %cR = arith.constant ${R} : index
      %ninf = arith.constant 0xFF800000 : f32
      %zero = arith.constant 0.0 : f32
      %one = arith.constant 1.0 : f32
      %block = gpu.block_id x
      %row = arith.muli %block, %cR : index
      %x = memref.alloca() : !tile
      %p = memref.alloca() : !one
      %q = memref.alloca() : !one
      // Pass 1, chunk by chunk: each thread's running max m, and sum s of exp(x - m).
      %m, %s = scf.for %k = %c0 to %cK step %c1 iter_args(%m0 = %ninf, %s0 = %zero) -> (f32, f32) {
        %col = arith.muli %k, %cCH : index
        "tile.copy"(%x, %X, %row, %col) {exec_scope = "cta", layout = #rows, padding = ${NEG_INF} : ${T}}
          : (!tile, !X, index, index) -> ()
        %xa = vector.load %x[%c0] : !tile, !all
        %mkT = vector.reduction <maximumf>, %xa : !all into ${T}
        %mk = ${EXTF} %mkT : ${T} to f32
        %m1 = arith.maximumf %m0, %mk : f32
        %empty = arith.cmpf oeq, %m1, %ninf : f32
        %a = arith.select %empty, %zero, %m1 : f32          // all -inf so far: shift by 0
        %av = vector.broadcast %a : f32 to !v
        %da = arith.subf %m0, %a : f32
        %scale = math.exp %da : f32
        %s0r = arith.mulf %s0, %scale : f32
        %s1 = scf.for %i = %c0 to %cE step %cV iter_args(%acc = %s0r) -> (f32) {
          %xT = vector.load %x[%i] : !tile, !vT
          %xv = ${EXTF} %xT : !vT to !v
          %d = arith.subf %xv, %av : !v
          %e = math.exp %d : !v
          %r = vector.reduction <add>, %e, %acc : !v into f32
          scf.yield %r : f32
        } {llvm.loop_annotation = #unroll}
        scf.yield %m1, %s1 : f32, f32
      }
      // The row's max M and sum S over its threads: S = sum of s * exp(m - M).
      memref.store %m, %p[%c0] : !one
      "tile.reduce"(%q, %p) {kind = "maximum", exec_scope = "cta", axes = array<i64: 1>,
          src_layout = #part, dst_layout = #res} : (!one, !one) -> ()
      %M = memref.load %q[%c0] : !one
      %none = arith.cmpf oeq, %M, %ninf : f32
      %A = arith.select %none, %zero, %M : f32
      %dm = arith.subf %m, %A : f32
      %em = math.exp %dm : f32
      %t = arith.mulf %s, %em : f32
      memref.store %t, %p[%c0] : !one
      "tile.reduce"(%q, %p) {kind = "sum", exec_scope = "cta", axes = array<i64: 1>,
          src_layout = #part, dst_layout = #res} : (!one, !one) -> ()
      %S = memref.load %q[%c0] : !one
      %inv = arith.divf %one, %S : f32
      %Av = vector.broadcast %A : f32 to !v
      %invv = vector.broadcast %inv : f32 to !v
      // Pass 2, last chunk first (it is still in registers): Y = exp(x - M) / S.
      scf.for %k = %c0 to %cK step %c1 {
        %kr = arith.subi %cK, %k : index
        %j = arith.subi %kr, %c1 : index
        %col = arith.muli %j, %cCH : index
        %again = arith.cmpi ne, %k, %c0 : index
        scf.if %again {
          "tile.copy"(%x, %X, %row, %col) {exec_scope = "cta", layout = #rows, padding = ${NEG_INF} : ${T}}
            : (!tile, !X, index, index) -> ()
        }
        scf.for %i = %c0 to %cE step %cV {
          %xT = vector.load %x[%i] : !tile, !vT
          %xv = ${EXTF} %xT : !vT to !v
          %d = arith.subf %xv, %Av : !v
          %e = math.exp %d : !v
          %y = arith.mulf %e, %invv : !v
          %yT = ${TRUNCF} %y : !v to !vT
          vector.store %yT, %x[%i] : !tile, !vT
        } {llvm.loop_annotation = #unroll}
        "tile.copy"(%Y, %x, %row, %col) {exec_scope = "cta", layout = #rows} : (!X, !tile, index, index) -> ()
      }
      gpu.return
    }
  }
}
