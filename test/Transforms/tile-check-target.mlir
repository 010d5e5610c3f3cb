// RUN: tile-opt %s --split-input-file --verify-diagnostics --tile-check-target | FileCheck %s
// RUN: sed -e 's/#nvvm.target<chip = "sm_90a">/#nvvm.target/' %S/../../examples/warp_sum.mlir | not tile-opt - --tile-to-ptx 2>&1 | FileCheck %s --check-prefix=NOCHIP
// RUN: sed -e 's/chip = "sm_90a"/chip = "sm_50"/' %S/../../examples/warp_sum.mlir | not tile-opt - --tile-to-ptx 2>&1 | FileCheck %s --check-prefix=NOCHIP
// RUN: sed -e 's/chip = "sm_90a"/chip = "sm_50", features = "+ptx60"/' %S/../../examples/warp_sum.mlir | tile-opt - --tile-to-ptx | FileCheck %s --check-prefix=PTX60
//
// LLVM aborts the process on an instruction its target cannot select. The pass finds
// those first: a gpu.module whose target LLVM cannot build for is an error at the
// gpu.module, and an NVVM op that needs a newer chip or PTX ISA than the target gives
// is an error at the op. An #nvvm.target that names no chip is MLIR's default, sm_50,
// for which LLVM writes PTX ISA 4.0, and shfl.sync needs 6.0.

// NOCHIP: <stdin>:10:7: error: 'nvvm.shfl.sync' op needs sm_30 and PTX ISA 6.0, but the gpu.module's target is sm_50 at PTX ISA 4.0 (LLVM's default for sm_50): name features = "+ptx60" on the #nvvm.target, or a newer chip
// NOCHIP-NEXT: "tile.reduce"
// NOCHIP-NOT: error:
// NOCHIP: note: tile-check-target failed

// PTX60: .version 6.0
// PTX60: .target sm_50
// PTX60: shfl.sync.bfly.b32

// Fine: sm_90a has all of them.
// CHECK-LABEL: gpu.module @fine
gpu.module @fine [#nvvm.target<chip = "sm_90a">] {
  llvm.func @f(%v: f32) -> f32 {
    %mask = llvm.mlir.constant(-1 : i32) : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %c31 = llvm.mlir.constant(31 : i32) : i32
    %r = nvvm.shfl.sync bfly %mask, %v, %one, %c31 : f32 -> f32
    llvm.return %r : f32
  }
}

// -----

// The default chip, at LLVM's default PTX ISA for it.
gpu.module @default_chip [#nvvm.target] {
  llvm.func @f(%v: f32) -> f32 {
    %mask = llvm.mlir.constant(-1 : i32) : i32
    %one = llvm.mlir.constant(1 : i32) : i32
    %c31 = llvm.mlir.constant(31 : i32) : i32
    // expected-error @+1 {{'nvvm.shfl.sync' op needs sm_30 and PTX ISA 6.0, but the gpu.module's target is sm_50 at PTX ISA 4.0 (LLVM's default for sm_50)}}
    %r = nvvm.shfl.sync bfly %mask, %v, %one, %c31 : f32 -> f32
    llvm.return %r : f32
  }
}

// -----

// vote.sync needs PTX ISA 6.0 too; sm_60 gets 5.0 (MLIR's verifier checks the sm).
gpu.module @pascal [#nvvm.target<chip = "sm_60">] {
  llvm.func @f(%p: i1) -> i1 {
    %mask = llvm.mlir.constant(-1 : i32) : i32
    // expected-error @+1 {{'nvvm.vote.sync' op needs sm_30 and PTX ISA 6.0, but the gpu.module's target is sm_60 at PTX ISA 5.0 (LLVM's default for sm_60): name features = "+ptx60" on the #nvvm.target, or a newer chip}}
    %r = nvvm.vote.sync any %mask, %p -> i1
    llvm.return %r : i1
  }
}

// -----

// A chip LLVM does not know.
// expected-error @+1 {{'gpu.module' op LLVM's NVPTX backend knows no chip sm_99}}
gpu.module @unknown_chip [#nvvm.target<chip = "sm_99">] {
}

// -----

// Features whose PTX ISA is older than the chip.
// expected-error @+1 {{'gpu.module' op PTX ISA 7.0 (the #nvvm.target's features) has no sm_90a: it needs PTX ISA 8.0 or newer}}
gpu.module @old_ptx [#nvvm.target<chip = "sm_90a", features = "+ptx70">] {
}

// -----

// Other targets are not the pass's business.
// CHECK-LABEL: gpu.module @amd
gpu.module @amd [#rocdl.target<chip = "gfx90a">] {
}
