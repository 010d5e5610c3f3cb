// RUN: tile-opt %s --split-input-file --tile-lower-reduction | FileCheck %s
//
// Combiner reductions (docs/spec.md, "Combiner reductions"): argmax/argmin and combiner
// functions in every register variant and in shared. The combiner's body is cloned at
// each combine; in a butterfly step over lane bit b the lane whose bit b is clear goes
// left (a select on the lane bit; argmax/argmin, commutative, skips it); k operands go
// through one scratch behind one barrier, as 32-bit words when their types differ.

// Thread scope: argmax over registers; the index is the register's position, and a NaN
// value is made canonical. An f32 (or f64) thread's own fold meets its registers in index
// order, so a later one wins only if its value is greater, or a NaN after a number (the
// accumulator left: ult, and the accumulator not a NaN); no index compare.
// CHECK-LABEL: gpu.func @thread_argmax
// CHECK-NOT:   gpu.shuffle
// CHECK:       scf.for %[[R:.*]] = %c1 to %c4 step %c1 iter_args(%[[V:.*]] = %{{.*}}, %[[I:.*]] = %c0_i32) -> (f32, i32)
// CHECK:         %[[X:.*]] = memref.load
// CHECK:         %[[XI:.*]] = arith.index_cast %[[R]] : index to i32
// CHECK-NOT:     arith.cmpi
// CHECK:         %[[BEATEN:.*]] = arith.cmpf ult, %[[V]], %[[X]] : f32
// CHECK:         %[[NUM:.*]] = arith.cmpf ord, %[[V]], %[[V]] : f32
// CHECK:         %[[TAKE:.*]] = arith.andi %[[BEATEN]], %[[NUM]] : i1
// CHECK:         arith.select %[[TAKE]], %[[X]], %[[V]] : f32
// CHECK:         arith.select %[[TAKE]], %[[XI]], %[[I]] : i32
// CHECK:       arith.cmpf uno
// CHECK:       memref.store
// CHECK:       memref.store
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @thread_argmax(%dv: memref<1xf32, #gpu.address_space<private>>, %di: memref<1xi32, #gpu.address_space<private>>, %src: memref<4xf32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%dv, %di, %src) {kind = "argmax", exec_scope = "thread", axes = array<i64: 0>} : (memref<1xf32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// Thread scope, argmax of 5 bf16 registers (an odd count: no pairs). A 16-bit float or an
// integer folds a thread's own registers in two phases: the value (maximumf, which lets a
// NaN win), then the index, the registers scanned from the last to the
// first, each equal one selected, which leaves the first. Where the value is a number
// other than a zero, equal is oeq and the value stays; else (a NaN, or a zero whose sign
// may not be the first zero's) equal is oeq or uno, and the scan selects the value too.
// CHECK-LABEL: gpu.func @thread_argmax_bf16
// CHECK-NOT:   gpu.shuffle
// CHECK:       %[[BEST:.*]] = scf.for %{{.*}} = %c1 to %c5 step %c1 iter_args(%[[V:.*]] = %{{.*}}) -> (bf16)
// CHECK:         %[[X:.*]] = memref.load
// CHECK:         arith.maximumf %[[V]], %[[X]] : bf16
// CHECK:       %[[SURE:.*]] = arith.cmpf one, %[[BEST]], %{{.*}} : bf16
// CHECK:       scf.if %[[SURE]] -> (bf16, i32)
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %c4 step %{{.*}} iter_args(%[[I:.*]] = %c4_i32) -> (i32)
// CHECK:           %[[R:.*]] = arith.subi %c3, %[[J]] : index
// CHECK:           %[[Y:.*]] = memref.load %{{.*}}[%[[R]]]
// CHECK:           %[[EQ:.*]] = arith.cmpf oeq, %[[Y]], %[[BEST]] : bf16
// CHECK:           %[[YI:.*]] = arith.index_cast %[[R]] : index to i32
// CHECK:           arith.select %[[EQ]], %[[YI]], %[[I]] : i32
// CHECK:         scf.yield %[[BEST]], %{{.*}} : bf16, i32
// CHECK:       } else {
// CHECK:         scf.for {{.*}} -> (bf16, i32)
// CHECK:           %[[EQ2:.*]] = arith.cmpf oeq
// CHECK:           %[[NAN:.*]] = arith.cmpf uno
// CHECK:           %[[HOLDS:.*]] = arith.ori %[[EQ2]], %[[NAN]] : i1
// CHECK:           arith.select %[[HOLDS]], %{{.*}}, %{{.*}} : bf16
// CHECK:           arith.select %[[HOLDS]], %{{.*}}, %{{.*}} : i32
// CHECK:       arith.cmpf uno
// CHECK:       memref.store
// CHECK:       memref.store
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @thread_argmax_bf16(%dv: memref<1xbf16, #gpu.address_space<private>>, %di: memref<1xi32, #gpu.address_space<private>>, %src: memref<5xbf16, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%dv, %di, %src) {kind = "argmax", exec_scope = "thread", axes = array<i64: 0>} : (memref<1xbf16, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<5xbf16, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// Warp scope: argmin over 4 registers x 32 lanes (registers outer): the index is
// 32 * register + lane, the lane's part added once after the thread's own fold, whose
// f16 registers pair up (vector<2xf16>: one minimumf, one compare per pair); the
// butterfly shuffles the value and the index in each of its 5 steps, with no select on
// the lane bit.
// CHECK-LABEL: gpu.func @warp_argmin
// CHECK:       %[[LANE:.*]] = arith.andi %{{.*}}, %c31 : index
// CHECK:       %[[DIGIT:.*]] = arith.andi %[[LANE]], %c31 : index
// CHECK:       scf.for {{.*}} -> (vector<2xf16>)
// CHECK:         arith.minimumf %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK:       } {llvm.loop_annotation
// CHECK:       scf.if
// CHECK:         scf.for
// CHECK:           arith.cmpf oeq, %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK:           arith.muli %{{.*}}, %c32 : index
// CHECK:         } {llvm.loop_annotation
// CHECK:       %[[BASE:.*]] = arith.index_cast %[[DIGIT]] : index to i32
// CHECK:       arith.addi %{{.*}}, %[[BASE]] : i32
// CHECK-NOT:   gpu.lane_id
// CHECK-COUNT-10: gpu.shuffle  xor
// CHECK-NOT:   gpu.shuffle
// CHECK:       gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @warp_argmin(%dv: memref<1xf16, #gpu.address_space<private>>, %di: memref<1xi32, #gpu.address_space<private>>, %src: memref<4xf16, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%dv, %di, %src) {kind = "argmin", exec_scope = "warp", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 32)) : ((1, 1@laneid))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf16, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<4xf16, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// Warp scope, a non-commutative combiner of two operands: each butterfly step shuffles
// both, then puts the value of the lane whose bit is clear on the left (a select on the
// lane bit, one per operand and side), and clones the combiner's body. The combiner is
// erased once no op refers to it.
// CHECK-NOT:   func.func private @first
// CHECK-LABEL: gpu.func @warp_first
// CHECK:       %[[V16:.*]], %{{.*}} = gpu.shuffle  xor %[[V:.*]], %c16_i32, %c32_i32 : f32
// CHECK:       %[[I16:.*]], %{{.*}} = gpu.shuffle  xor %[[I:.*]], %c16_i32, %c32_i32 : i32
// CHECK:       %[[LANEID:.*]] = gpu.lane_id
// CHECK:       %[[BIT:.*]] = arith.andi %[[LANEID]], %c16 : index
// CHECK:       %[[LOW:.*]] = arith.cmpi eq, %[[BIT]], %c0 : index
// CHECK:       %[[LV:.*]] = arith.select %[[LOW]], %[[V]], %[[V16]] : f32
// CHECK:       %[[LI:.*]] = arith.select %[[LOW]], %[[I]], %[[I16]] : i32
// CHECK:       arith.select %[[LOW]], %[[V16]], %[[V]] : f32
// CHECK:       arith.select %[[LOW]], %[[I16]], %[[I]] : i32
// CHECK:       gpu.shuffle  xor %[[LV]], %c8_i32, %c32_i32 : f32
// CHECK:       gpu.shuffle  xor %[[LI]], %c8_i32, %c32_i32 : i32
// CHECK-NOT:   gpu.lane_id
// CHECK:       arith.andi %[[LANEID]], %c8 : index
// CHECK-COUNT-6: gpu.shuffle  xor
// CHECK-NOT:   gpu.shuffle
// CHECK:       gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    func.func private @first(%l0: f32, %l1: i32, %r0: f32, %r1: i32) -> (f32, i32) {
      return %l0, %l1 : f32, i32
    }
    gpu.func @warp_first(%dv: memref<1xf32, #gpu.address_space<private>>, %di: memref<1xi32, #gpu.address_space<private>>, %sv: memref<1xf32, #gpu.address_space<private>>, %si: memref<1xi32, #gpu.address_space<private>>) kernel {
      "tile.reduce2"(%dv, %di, %sv, %si) {combiner = @first, exec_scope = "warp", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[32 : 1@laneid]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// A cta of 8 warps, Welford's (count i32, mean f32, M2 f32): the three operands of each
// warp's partial go through one scratch of 32-bit words (8 warps x 3 words), written by
// lane 0 of each warp, behind one gpu.barrier; then every thread folds the 8 partials
// in ascending warp order.
// CHECK:       memref.global "private" @tile_scratch_0 : memref<24xi32, #gpu.address_space<workgroup>>
// CHECK-SAME:  tile.scratch = "cross_warp cta reduce: 1 phase(s) x 1 instance(s) x 1 x 8 warp partial(s) x 1 slot(s) of 3 i32 words (i32, f32, f32): 96 bytes"
// CHECK-LABEL: gpu.func @cta_welford
// CHECK-COUNT-15: gpu.shuffle  xor
// CHECK:       %[[SCRATCH:.*]] = memref.get_global @tile_scratch_0
// CHECK:       %[[MEAN:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:       %[[M2:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:       scf.if
// CHECK-NEXT:    memref.store %{{.*}}, %[[SCRATCH]]
// CHECK:         memref.store %[[MEAN]], %[[SCRATCH]]
// CHECK:         memref.store %[[M2]], %[[SCRATCH]]
// CHECK:       gpu.barrier
// CHECK-NOT:   gpu.barrier
// CHECK-COUNT-24: memref.load %[[SCRATCH]]
// CHECK-NOT:   gpu.barrier
// CHECK:       gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    func.func private @welford(%l0: i32, %l1: f32, %l2: f32, %r0: i32, %r1: f32, %r2: f32) -> (i32, f32, f32) {
      %na = arith.sitofp %l0 : i32 to f32
      %nb = arith.sitofp %r0 : i32 to f32
      %c = arith.addi %l0, %r0 : i32
      %n = arith.sitofp %c : i32 to f32
      %delta = arith.subf %r1, %l1 : f32
      %t = arith.mulf %delta, %nb : f32
      %u = arith.divf %t, %n : f32
      %mean = arith.addf %l1, %u : f32
      %d2 = arith.mulf %delta, %delta : f32
      %p = arith.mulf %na, %nb : f32
      %q = arith.mulf %d2, %p : f32
      %w = arith.divf %q, %n : f32
      %s = arith.addf %l2, %r2 : f32
      %m2 = arith.addf %s, %w : f32
      return %c, %mean, %m2 : i32, f32, f32
    }
    gpu.func @cta_welford(%dc: memref<1xi32, #gpu.address_space<private>>, %dm: memref<1xf32, #gpu.address_space<private>>, %dq: memref<1xf32, #gpu.address_space<private>>,
                          %sc: memref<2xi32, #gpu.address_space<private>>, %sm: memref<2xf32, #gpu.address_space<private>>, %sq: memref<2xf32, #gpu.address_space<private>>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      "tile.reduce3"(%dc, %dm, %dq, %sc, %sm, %sq) {combiner = @welford, exec_scope = "cta", axes = array<i64: 0, 1, 2>,
          src_layout = #tile.layout<"S[(8, 32, 2) : (1@warpid, 1@laneid, 1)]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 8) : (1@laneid, 1@warpid)]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<2xi32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// A warpgroup's online softmax (max, sum of exp), two f32 operands: one scratch of f32
// (2 per warp partial), one named barrier over the warpgroup's 128 threads, math.exp in
// the cloned body.
// CHECK:       memref.global "private" @tile_scratch_0 : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-SAME:  tile.scratch = "cross_warp warpgroup reduce: 1 phase(s) x 8 instance(s) x 1 x 4 warp partial(s) x 1 slot(s) of 2 x f32: 256 bytes"
// CHECK-LABEL: gpu.func @warpgroup_softmax
// CHECK:       math.exp
// CHECK:       nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-NOT:   nvvm.barrier
// CHECK-NOT:   gpu.barrier
// CHECK:       gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    func.func private @online_softmax(%l0: f32, %l1: f32, %r0: f32, %r1: f32) -> (f32, f32) {
      %m = arith.maxnumf %l0, %r0 : f32
      %dl = arith.subf %l0, %m : f32
      %dr = arith.subf %r0, %m : f32
      %el = math.exp %dl : f32
      %er = math.exp %dr : f32
      %sl = arith.mulf %l1, %el : f32
      %sr = arith.mulf %r1, %er : f32
      %s = arith.addf %sl, %sr : f32
      return %m, %s : f32, f32
    }
    gpu.func @warpgroup_softmax(%dm: memref<1xf32, #gpu.address_space<private>>, %ds: memref<1xf32, #gpu.address_space<private>>, %sm: memref<2xf32, #gpu.address_space<private>>, %ss: memref<2xf32, #gpu.address_space<private>>) kernel {
      "tile.reduce2"(%dm, %ds, %sm, %ss) {combiner = @online_softmax, exec_scope = "warpgroup", axes = array<i64: 0, 1, 2>,
          src_layout = #tile.layout<"S[(4, 32, 2) : (1@wid_in_wg, 1@laneid, 1)]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 4) : (1@laneid, 1@wid_in_wg)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// A cluster of 4 CTAs of 2 warps, argmax: the CTA's warps exchange (value, index) words
// behind the block's barrier, then each CTA pushes both words into the shared memory of
// each CTA and arrives once at its mbarrier (cluster_push: one exchange for all
// operands); every thread waits on its own mbarrier and reads the 4 CTAs' words.
// CHECK:       memref.global "private" @tile_scratch_2 : memref<1xi64, #gpu.address_space<workgroup>>
// CHECK-SAME:  "cluster push, 1 mbarrier(s), one per phase: 8 bytes"
// CHECK:       memref.global "private" @tile_scratch_1 : memref<8xi32, #gpu.address_space<workgroup>>
// CHECK-SAME:  "cluster push, the partials received: 1 phase(s) x 4 CTA(s) x 1 x 1 slot(s) of 2 i32 words (f32, i32): 32 bytes"
// CHECK:       memref.global "private" @tile_scratch_0 : memref<4xi32, #gpu.address_space<workgroup>>
// CHECK-SAME:  "cluster reduce, the warps of each CTA: 1 phase(s) x 1 instance(s) x 1 x 2 warp partial(s) x 1 slot(s) of 2 i32 words (f32, i32): 16 bytes"
// CHECK-LABEL: gpu.func @cluster_argmax
// CHECK:       nvvm.mbarrier.init
// CHECK:       nvvm.cluster.wait {tile.mbarrier_init}
// CHECK:       gpu.barrier
// CHECK-NOT:   gpu.barrier
// CHECK:       scf.if
// CHECK:         llvm.store %{{.*}} : i32, !llvm.ptr<7>
// CHECK:         llvm.store %{{.*}} : i32, !llvm.ptr<7>
// CHECK-NEXT:    nvvm.mapa
// CHECK-NEXT:    nvvm.mbarrier.arrive %{{.*}} {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK:       scf.while
// CHECK-COUNT-8: memref.load %{{.*}} : memref<8xi32, #gpu.address_space<workgroup>>
// CHECK-NOT:   nvvm.cluster
// CHECK:       gpu.return
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    gpu.func @cluster_argmax(%dv: memref<1xf32, #gpu.address_space<private>>, %di: memref<1xi32, #gpu.address_space<private>>, %src: memref<2xf32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%dv, %di, %src) {kind = "argmax", exec_scope = "cluster", axes = array<i64: 0>,
          src_layout = #tile.layout<"S[((4, 2, 32, 2)) : ((1@cta_in_cluster, 1@warpid, 1@laneid, 1))]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[(32, 2, 4) : (1@laneid, 1@warpid, 1@cta_in_cluster)]">} : (memref<1xf32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// The shared variant at warp scope with a 2x2 matrix product (4 operands, not
// commutative): each lane of a group folds a contiguous run of elements (from
// j * q + min(j, R mod G)), the butterfly under the group's mask puts the lower lane
// left, lane 0 writes the four dsts, then the warp's barrier.
// CHECK-LABEL: gpu.func @shared_matrix
// CHECK:       arith.minui
// CHECK:       nvvm.shfl.sync  bfly
// CHECK:       gpu.lane_id
// CHECK:       arith.select
// CHECK-COUNT-4: memref.store
// CHECK:       nvvm.bar.warp.sync
// CHECK-NOT:   nvvm.bar.warp.sync
// CHECK:       gpu.return
module attributes {gpu.container_module} {
  gpu.module @k {
    func.func private @matrix(%l0: f32, %l1: f32, %l2: f32, %l3: f32, %r0: f32, %r1: f32, %r2: f32, %r3: f32) -> (f32, f32, f32, f32) {
      %ae = arith.mulf %l0, %r0 : f32
      %bg = arith.mulf %l1, %r2 : f32
      %p = arith.addf %ae, %bg : f32
      %af = arith.mulf %l0, %r1 : f32
      %bh = arith.mulf %l1, %r3 : f32
      %q = arith.addf %af, %bh : f32
      %ce = arith.mulf %l2, %r0 : f32
      %dg = arith.mulf %l3, %r2 : f32
      %s = arith.addf %ce, %dg : f32
      %cf = arith.mulf %l2, %r1 : f32
      %dh = arith.mulf %l3, %r3 : f32
      %t = arith.addf %cf, %dh : f32
      return %p, %q, %s, %t : f32, f32, f32, f32
    }
    memref.global "private" @a : memref<4x36xf32, #gpu.address_space<workgroup>>
    memref.global "private" @b : memref<4x36xf32, #gpu.address_space<workgroup>>
    memref.global "private" @c : memref<4x36xf32, #gpu.address_space<workgroup>>
    memref.global "private" @d : memref<4x36xf32, #gpu.address_space<workgroup>>
    memref.global "private" @ra : memref<4xf32, #gpu.address_space<workgroup>>
    memref.global "private" @rb : memref<4xf32, #gpu.address_space<workgroup>>
    memref.global "private" @rc : memref<4xf32, #gpu.address_space<workgroup>>
    memref.global "private" @rd : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.func @shared_matrix() kernel {
      %a = memref.get_global @a : memref<4x36xf32, #gpu.address_space<workgroup>>
      %b = memref.get_global @b : memref<4x36xf32, #gpu.address_space<workgroup>>
      %c = memref.get_global @c : memref<4x36xf32, #gpu.address_space<workgroup>>
      %d = memref.get_global @d : memref<4x36xf32, #gpu.address_space<workgroup>>
      %ra = memref.get_global @ra : memref<4xf32, #gpu.address_space<workgroup>>
      %rb = memref.get_global @rb : memref<4xf32, #gpu.address_space<workgroup>>
      %rc = memref.get_global @rc : memref<4xf32, #gpu.address_space<workgroup>>
      %rd = memref.get_global @rd : memref<4xf32, #gpu.address_space<workgroup>>
      "tile.reduce4"(%ra, %rb, %rc, %rd, %a, %b, %c, %d) {combiner = @matrix, exec_scope = "warp", axes = array<i64: 1>} : (memref<4xf32, #gpu.address_space<workgroup>>, memref<4xf32, #gpu.address_space<workgroup>>, memref<4xf32, #gpu.address_space<workgroup>>, memref<4xf32, #gpu.address_space<workgroup>>, memref<4x36xf32, #gpu.address_space<workgroup>>, memref<4x36xf32, #gpu.address_space<workgroup>>, memref<4x36xf32, #gpu.address_space<workgroup>>, memref<4x36xf32, #gpu.address_space<workgroup>>) -> ()
      gpu.return
    }
  }
}

// -----

// A combiner that something else still calls stays after the lowering.
// CHECK:       func.func private @keep
// CHECK-LABEL: func.func @caller
// CHECK:       call @keep
module attributes {gpu.container_module} {
  gpu.module @k {
    func.func private @keep(%l: i32, %r: i32) -> i32 {
      %s = arith.addi %l, %r : i32
      return %s : i32
    }
    func.func @caller(%a: i32) -> i32 {
      %r = func.call @keep(%a, %a) : (i32, i32) -> i32
      return %r : i32
    }
    gpu.func @thread_sum(%d: memref<1xi32, #gpu.address_space<private>>, %s: memref<4xi32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%d, %s) {combiner = @keep, exec_scope = "thread"} : (memref<1xi32, #gpu.address_space<private>>, memref<4xi32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}
