// RUN: tile-opt --list-passes | FileCheck %s
// RUN: tile-opt -h | FileCheck %s --check-prefixes=HELP,CHECK
// RUN: tile-opt --version | FileCheck %s --check-prefix=VERSION
//
// The pass list comes from the pass registry: every pass with its summary and its
// options. -h lists the driver's options and then the same passes.

// HELP:      usage: tile-opt
// HELP:      --pass-pipeline
// HELP:      --split-input-file
// HELP:      --verify-diagnostics
// HELP:      --mlir-print-ir-after-all
// HELP:      --mlir-timing
// HELP:      --list-passes

// CHECK:      tile-mlir passes (--<pass>[=<options>], or by name in --pass-pipeline):
// CHECK-NEXT:   --tile-forward-loop-annotations {{[A-Z].+}}
// CHECK-NEXT:   --tile-lower-reduction {{[A-Z].+}}
// CHECK-NEXT:       chip=<value> {{.+}}
// CHECK-NEXT:       fold=<value> {{.+}}
// CHECK-NEXT:   --tile-verify {{[A-Z].+}}
// CHECK-NEXT: Any other --<pass>[=<options>] names an upstream MLIR pass.

// VERSION: tile-opt (tile-mlir) {{[0-9]+\.[0-9]+}}
