// RUN: tile-opt %S/../../examples/demo.mlir --tile-to-ptx | FileCheck %s --check-prefix=DEMO
// RUN: tile-opt %S/../../examples/warp_sum.mlir --tile-to-ptx | FileCheck %s --check-prefix=WARP
// RUN: tile-opt %s --tile-to-ptx | FileCheck %s --check-prefix=ROWS
// RUN: tile-opt %S/../../examples/demo.mlir --tile-to-cubin -o %t.cubin
// RUN: not tile-opt %S/../../examples/demo.mlir --tile-to-cubin 2>&1 | FileCheck %s --check-prefix=NOOUT
//
// The pipeline to binary: tile-lower-reduction, convert-scf-to-cf,
// convert-gpu-to-nvvm, tile-forward-loop-annotations, tile-externalize-dynamic-shared,
// reconcile-unrealized-casts, gpu-module-to-binary. The private buffers must end up in registers.

// The demonstration kernel (examples/demo.mlir): 4 loads, 3 adds in the documented order, no local memory.
// DEMO:      .target sm_90a
// DEMO-NOT:  .local
// DEMO-COUNT-4: ld.global.b32
// DEMO-COUNT-3: add.rn.f32
// DEMO-NOT:  add.rn.f32
// DEMO-NOT:  {{ld|st}}.local

// The 32-lane warp sum: 5 butterflies, offsets 16 .. 1, width 32 (clamp 31), full mask.
// WARP-NOT:  .local
// WARP:      shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// WARP:      shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// WARP:      shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// WARP:      shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// WARP:      shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// WARP-NOT:  shfl.sync
// WARP-NOT:  {{ld|st}}.local

// A 64-register row per lane, folded in a loop: the loop is unrolled completely,
// so the registers stay registers.
// ROWS-NOT:  {{ld|st}}.local
// ROWS-COUNT-63: max.f32
// ROWS-NOT:  {{ld|st}}.local

// NOOUT: --tile-to-cubin writes a binary: give it -o FILE

module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {
    gpu.func @rows(%A: memref<32x64xf32>, %B: memref<32xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c64 = arith.constant 64 : index
      %lane = gpu.lane_id
      %src = memref.alloca() : memref<64xf32, #gpu.address_space<private>>
      %dst = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
      scf.for %i = %c0 to %c64 step %c1 {
        %a = memref.load %A[%lane, %i] : memref<32x64xf32>
        memref.store %a, %src[%i] : memref<64xf32, #gpu.address_space<private>>
      } {llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}
      "tile.reduce"(%dst, %src) {kind = "max", exec_scope = "warp", axes = array<i64: 1>,
          src_layout = #tile.layout<"S[(32, 64) : (1@laneid, 1)]">, dst_layout = #tile.layout<"S[32 : 1@laneid]">}
        : (memref<1xf32, #gpu.address_space<private>>, memref<64xf32, #gpu.address_space<private>>) -> ()
      %b = memref.load %dst[%c0] : memref<1xf32, #gpu.address_space<private>>
      memref.store %b, %B[%lane] : memref<32xf32>
      gpu.return
    }
  }
}
