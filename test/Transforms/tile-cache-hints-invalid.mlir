// RUN: tile-opt %s --tile-cache-hints --verify-diagnostics
// RUN: not tile-opt %s --tile-cache-hints 2>&1 | FileCheck %s
//
// tile-cache-hints reads the marks that tile-lower-copy puts on a copy's accesses; a mark
// written by hand that names no cache hint is an error at its op, not a traceback.

// CHECK: error: 'vector.load' op tile.cache = "evict_first": expected one of "streaming"
// CHECK-NOT: Traceback
func.func @bad_mark(%x: memref<64xf32>, %i: index) -> vector<4xf32> {
  // expected-error @+1 {{'vector.load' op tile.cache = "evict_first": expected one of "streaming"}}
  %v = vector.load %x[%i] {tile.cache = "evict_first"} : memref<64xf32>, vector<4xf32>
  return %v : vector<4xf32>
}
