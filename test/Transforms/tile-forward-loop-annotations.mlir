// RUN: tile-opt %s --split-input-file --tile-forward-loop-annotations | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-lower-reduction --convert-scf-to-cf --convert-gpu-to-nvvm --tile-forward-loop-annotations | FileCheck %s --check-prefix=PIPE
//
// convert-gpu-to-nvvm leaves a loop's "unroll full" annotation as a discardable
// attribute on the llvm.br back edge, which LLVM IR translation ignores; this
// pass moves it into the branch's loop_annotation property.

#unroll = #llvm.loop_annotation<unroll = <full = true>>

// CHECK-LABEL: llvm.func @loop
// CHECK: llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #{{.*}}}
// CHECK-NOT: llvm.loop_annotation =
llvm.func @loop() {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c4 = llvm.mlir.constant(4 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %lt = llvm.icmp "slt" %i, %c4 : i64
  llvm.cond_br %lt, ^bb2, ^bb3
^bb2:
  %n = llvm.add %i, %c1 : i64
  "llvm.br"(%n)[^bb1] {llvm.loop_annotation = #unroll} : (i64) -> ()
^bb3:
  llvm.return
}

// -----

// End to end: the lowering's reduction loop reaches LLVM with its annotation.
// PIPE-LABEL: llvm.func @fold
// PIPE: llvm.br ^{{.*}} {loop_annotation = #{{.*}}}
// PIPE-NOT: llvm.loop_annotation =
gpu.module @kernels {
  gpu.func @fold(%dst: memref<1xf32, #gpu.address_space<private>>, %src: memref<64xf32, #gpu.address_space<private>>) {
    "tile.reduce"(%dst, %src) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<64xf32, #gpu.address_space<private>>) -> ()
    gpu.return
  }
}
