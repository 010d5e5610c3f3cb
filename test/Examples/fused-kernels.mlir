// The fused kernels (tile_mlir.kernels, built from Python: python/tile_mlir/kernels/forward.py),
// through the whole pipeline to PTX: 16-byte loads and stores only, no local memory, the
// barriers of each kind of plan (docs/fused-kernels.md, "The generated code"). Then the
// MLIR of each as examples/ keeps it (python -m tile_mlir.kernels NAME --emit), as written.
//
// One warp per row, 4 rows per block (forced, warps=1: the measured plan of N = 1000 is
// below; f32, N = 1000: 8 vectors of 4 per lane):
// RUN: %python -c "from tile_mlir.kernels import kernel_text; print(kernel_text('softmax', 64, 1000, 'f32', warps=1))" > %t.softmax.mlir
// RUN: tile-opt %t.softmax.mlir --tile-to-ptx | FileCheck %s --check-prefix=WARP --implicit-check-not=.local --implicit-check-not=bar.sync --implicit-check-not=ld.global.b
// WARP-LABEL: .entry softmax(
// WARP-COUNT-8: ld.global.v4.b32
// WARP-COUNT-5: shfl.sync.bfly.b32
// WARP-COUNT-5: shfl.sync.bfly.b32
// WARP-COUNT-8: st.global.v4.b32
// WARP:         ret;
//
// Several warps per row (bf16, N = 4096: 4 warps, one 16-byte vector of 8 per thread and
// per vector of x, weight and bias), one barrier per reduction:
// RUN: %python -c "from tile_mlir.kernels import kernel_text; print(kernel_text('layernorm', 64, 4096, 'bf16'))" > %t.layernorm.mlir
// RUN: tile-opt %t.layernorm.mlir --tile-to-ptx | FileCheck %s --check-prefix=WARPS --implicit-check-not=.local --implicit-check-not=ld.global.b
// WARPS-LABEL: .entry layernorm(
// WARPS-COUNT-4: ld.global.v4.b32
// WARPS:         bar.sync 0;
// WARPS:         bar.sync 0;
// WARPS-COUNT-4: st.global.v4.b32
// WARPS:         ret;
//
// Softmax's (max, sum of exp) pair across the 32 warps of one CTA (f32, N = 16384, on its
// plan: 4 vectors of 4 per thread), before and after: in two exchanges (pair=False, the
// default inside a CTA: the max, then the sum, each through the scratch behind its own
// barrier, each thread reading the 32 partials as 8 16-byte loads) and in one (pair=True:
// each warp's max and sum by two butterflies, then the warps' pairs through the scratch
// behind one barrier, each lane reading its warp's pair as one 8-byte load, and the lanes
// folding the 32 pairs in 5 steps of two shuffles each):
// RUN: %python -c "from tile_mlir.kernels import kernel_text; print(kernel_text('softmax', 4096, 16384, 'f32', pair=False))" > %t.two.mlir
// RUN: tile-opt %t.two.mlir --tile-to-ptx > %t.two.ptx
// RUN: FileCheck %s --check-prefix=TWO --implicit-check-not=.local < %t.two.ptx
// RUN: grep -c "bar.sync" %t.two.ptx | FileCheck %s --check-prefix=TWO-BARRIERS
// TWO-LABEL: .entry softmax(
// TWO-COUNT-4:  ld.global.v4.b32
// TWO-COUNT-5:  shfl.sync.bfly.b32
// TWO:          bar.sync 0;
// TWO-COUNT-8:  ld.shared.v4.b32
// TWO-COUNT-5:  shfl.sync.bfly.b32
// TWO:          bar.sync 0;
// TWO-COUNT-8:  ld.shared.v4.b32
// TWO-COUNT-4:  st.global.v4.b32
// TWO:          ret;
// TWO-BARRIERS: {{^}}2{{$}}
// RUN: %python -c "from tile_mlir.kernels import kernel_text; print(kernel_text('softmax', 4096, 16384, 'f32', pair=True))" > %t.pair.mlir
// RUN: tile-opt %t.pair.mlir --tile-to-ptx > %t.pair.ptx
// RUN: FileCheck %s --check-prefix=PAIR --implicit-check-not=.local --implicit-check-not=ld.shared.v4 < %t.pair.ptx
// RUN: grep -c "bar.sync" %t.pair.ptx | FileCheck %s --check-prefix=PAIR-BARRIERS
// PAIR-LABEL: .entry softmax(
// PAIR-COUNT-4:  ld.global.v4.b32
// PAIR-COUNT-10: shfl.sync.bfly.b32
// PAIR:          st.shared.b32
// PAIR-NEXT:     st.shared.b32
// PAIR:          bar.sync 0;
// PAIR:          ld.shared.v2.b32
// PAIR-COUNT-10: shfl.sync.bfly.b32
// PAIR-COUNT-4:  st.global.v4.b32
// PAIR:          ret;
// PAIR-BARRIERS: {{^}}1{{$}}
//
// A cluster of 4 CTAs per row (forced: f32, N = 40000: 32 warps per CTA, 3 vectors of 4 per
// thread): the mbarrier set up once at the entry; x read once, then the reduction's one
// barrier in the CTA and one push of the CTA's partial into the 4 CTAs' shared memory
// (st.shared::cluster and an arrive at each one's mbarrier), the wait on its own, the 4
// partials in one load; no cluster barrier after the entry; then each vector of the
// weight loaded just before the vector of the row it scales is stored:
// RUN: %python -c "from tile_mlir.kernels import kernel_text; print(kernel_text('rmsnorm', 8, 40000, 'f32', ctas=4))" > %t.rmsnorm.mlir
// RUN: tile-opt %t.rmsnorm.mlir --tile-to-ptx | FileCheck %s --check-prefix=CLUSTER --implicit-check-not=.local --implicit-check-not=ld.global.b
// CLUSTER-LABEL: .entry rmsnorm(
// CLUSTER:         .reqnctapercluster 4, 1, 1
// CLUSTER:         mbarrier.init.shared.b64
// CLUSTER:         barrier.cluster.arrive.relaxed;
// CLUSTER-NEXT:    barrier.cluster.wait;
// CLUSTER-COUNT-3: ld.global.v4.b32
// CLUSTER:         bar.sync 0;
// CLUSTER:         st.shared::cluster.b32
// CLUSTER:         mbarrier.arrive.release.cluster.shared::cluster.b64
// CLUSTER:         mbarrier.try_wait.parity.acquire.cluster.shared.b64
// CLUSTER:         ld.shared.v4.b32
// CLUSTER-NOT:     bar.sync
// CLUSTER-NOT:     barrier.cluster
// CLUSTER:         ld.global.v4.b32
// CLUSTER:         st.global.v4.b32
// CLUSTER:         ld.global.v4.b32
// CLUSTER:         st.global.v4.b32
// CLUSTER:         ld.global.v4.b32
// CLUSTER:         st.global.v4.b32
// CLUSTER-NOT:     ld.global
// CLUSTER:         ret;
//
// The examples, as written (37 x 1000 f32 on the measured plan: 4 warps per row, 2 vectors
// of 4 per thread; each reduction a butterfly in the warp, then one barrier):
// RUN: tile-opt %S/../../examples/softmax.mlir --tile-to-ptx | FileCheck %s --check-prefix=MEASURED --implicit-check-not=.local --implicit-check-not=ld.global.b
// MEASURED-LABEL: .entry softmax(
// MEASURED-COUNT-2: ld.global.v4.b32
// MEASURED-COUNT-5: shfl.sync.bfly.b32
// MEASURED:         bar.sync 0;
// MEASURED-COUNT-5: shfl.sync.bfly.b32
// MEASURED:         bar.sync 0;
// MEASURED-COUNT-2: st.global.v4.b32
// MEASURED-NOT:     bar.sync
// MEASURED:         ret;
// RUN: tile-opt %S/../../examples/logsumexp.mlir --tile-to-ptx | FileCheck %s --check-prefix=EXAMPLE --implicit-check-not=.local
// RUN: tile-opt %S/../../examples/rmsnorm.mlir --tile-to-ptx | FileCheck %s --check-prefix=EXAMPLE --implicit-check-not=.local
// RUN: tile-opt %S/../../examples/layernorm.mlir --tile-to-ptx | FileCheck %s --check-prefix=EXAMPLE --implicit-check-not=.local
// EXAMPLE: .entry {{softmax|logsumexp|rmsnorm|layernorm}}(
// EXAMPLE: ld.global.v4.b32
// EXAMPLE: ret;
