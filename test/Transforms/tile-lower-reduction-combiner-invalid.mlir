// RUN: not tile-opt %s --split-input-file --tile-lower-reduction 2>&1 | FileCheck %s
//
// The hardware shortcuts exist for the named kinds only: redux.sync and the sm_100
// packed path reject a combiner function and argmax/argmin, and the dispatch report
// says why.

// CHECK: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda, sm_90a):
// CHECK-NEXT: local_redux (prio=15): rejected: redux_applies — combiner @or: redux.sync has no form for a combiner function (named kinds only)
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_90a">] {
    func.func private @or(%l: i32, %r: i32) -> i32 {
      %o = arith.ori %l, %r : i32
      return %o : i32
    }
    gpu.func @redux(%d: memref<1xi32, #gpu.address_space<private>>, %s: memref<1xi32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%d, %s) {combiner = @or, exec_scope = "warp", axes = array<i64: 0>, dispatch = "local_redux",
          src_layout = #tile.layout<"S[32 : 1@laneid]">,
          dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">} : (memref<1xi32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}

// -----

// CHECK: error: 'tile.reduce' op no variant of tile.reduce applies (target cuda, sm_100a):
// CHECK-NEXT: sm100_packed (prio=20): rejected: sm100_applies — kind argmax: the sm_100 fast path has no form for an index-carrying kind (named kinds only)
module attributes {gpu.container_module} {
  gpu.module @k [#nvvm.target<chip = "sm_100a">] {
    gpu.func @packed(%dv: memref<1xf32, #gpu.address_space<private>>, %di: memref<1xi32, #gpu.address_space<private>>, %s: memref<16xf32, #gpu.address_space<private>>) kernel {
      "tile.reduce"(%dv, %di, %s) {kind = "argmax", exec_scope = "thread", dispatch = "sm100_packed"} : (memref<1xf32, #gpu.address_space<private>>, memref<1xi32, #gpu.address_space<private>>, memref<16xf32, #gpu.address_space<private>>) -> ()
      gpu.return
    }
  }
}
