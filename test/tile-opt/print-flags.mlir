// RUN: tile-opt %s --mlir-print-debuginfo | FileCheck %s --check-prefix=DEBUGINFO
// RUN: tile-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: tile-opt %s --tile-lower-reduction | FileCheck %s --check-prefix=ALIASES
// RUN: tile-opt %s --tile-lower-reduction --mlir-print-local-scope | FileCheck %s --check-prefix=LOCAL
// RUN: tile-opt %s --mlir-print-op-generic --mlir-print-ir-after-all --cse -o %t 2>&1 | FileCheck %s --check-prefix=DUMP-GENERIC
//
// The printing flags of mlir-opt: locations (named after the input file, as
// mlir-opt names them), every op in generic form (in the output and in IR dumps),
// and attributes printed in place rather than through aliases.

// DEBUGINFO:      module {
// DEBUGINFO-NEXT:   func.func @f({{.*}} loc("{{.*}}print-flags.mlir":[[@LINE+16]]:14)
// DEBUGINFO-NEXT:     "tile.reduce"{{.*}} loc(#[[LOC:loc[0-9]*]])
// DEBUGINFO:      #[[LOC]] = loc("{{.*}}print-flags.mlir":[[@LINE+15]]:3)

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "func.func"() <{function_type = {{.*}}, sym_name = "f"}> ({

// ALIASES:       #loop_annotation = #llvm.loop_annotation
// ALIASES:       llvm.loop_annotation = #loop_annotation

// LOCAL-NOT:     #loop_annotation =
// LOCAL:         llvm.loop_annotation = #llvm.loop_annotation<unroll = <full = true>>

// DUMP-GENERIC:      // -----// IR Dump After CSE (cse) //----- //
// DUMP-GENERIC-NEXT: "builtin.module"() ({

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
