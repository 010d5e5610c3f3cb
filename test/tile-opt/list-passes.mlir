// RUN: tile-opt --list-passes | FileCheck %s
// RUN: tile-opt -h | FileCheck %s --check-prefixes=HELP,CHECK
// RUN: tile-opt --help | FileCheck %s --check-prefix=CANNOT
// RUN: tile-opt --version | FileCheck %s --check-prefix=VERSION
//
// The pass list comes from the pass registry: every pass with its summary and its
// options, each from the pass's option fields (metavar, help, default). -h lists the driver's options, every mlir-opt flag tile-opt honours, then
// the same passes, then the mlir-opt flags that it cannot honour.

// HELP:      usage: tile-opt
// HELP-DAG:  --pass-pipeline
// HELP-DAG:  --split-input-file
// HELP-DAG:  --verify-diagnostics [=only-expected]
// HELP-DAG:  --verify-each
// HELP-DAG:  --allow-unregistered-dialect
// HELP-DAG:  --dump-pass-pipeline
// HELP-DAG:  --show-dialects
// HELP-DAG:  --emit-bytecode
// HELP-DAG:  --mlir-print-ir-before-all
// HELP-DAG:  --mlir-print-ir-after-all
// HELP-DAG:  --mlir-print-ir-after-change
// HELP-DAG:  --mlir-print-ir-after-failure
// HELP-DAG:  --mlir-print-ir-before PASS[,PASS]
// HELP-DAG:  --mlir-print-ir-after PASS[,PASS]
// HELP-DAG:  --mlir-print-ir-module-scope
// HELP-DAG:  --mlir-print-debuginfo
// HELP-DAG:  --mlir-print-op-generic
// HELP-DAG:  --mlir-print-local-scope
// HELP-DAG:  --mlir-disable-threading
// HELP-DAG:  --mlir-pass-statistics
// HELP-DAG:  --mlir-timing
// HELP-DAG:  --list-passes
// HELP-DAG:  --chip sm_XX
// HELP-DAG:  --fold linear|tree

// CHECK:      tile-mlir passes (--<pass>[=<options>], or by name in --pass-pipeline):
// CHECK-NEXT:   --tile-align-shared-globals {{[A-Z].+}}
// CHECK-NEXT:   --tile-cache-hints {{[A-Z].+}}
// CHECK-NEXT:   --tile-check-target {{[A-Z].+}}
// CHECK-NEXT:   --tile-externalize-dynamic-shared {{[A-Z].+}}
// CHECK-NEXT:   --tile-forward-loop-annotations {{[A-Z].+}}
// CHECK-NEXT:   --tile-lower-copy {{[A-Z].+}}
// CHECK-NEXT:       chip=<sm_XX> {{.+}} (default: none)
// CHECK-NEXT:   --tile-lower-reduction {{[A-Z].+}}
// CHECK-NEXT:       chip=<sm_XX> {{.+}} (default: none)
// CHECK-NEXT:       fold=<linear|tree> the in-thread fold order (default: linear)
// CHECK-NEXT:   --tile-verify {{[A-Z].+}}
// CHECK-NEXT: Any other --<pass>[=<options>] names an upstream MLIR pass.

// CANNOT:      mlir-opt flags tile-opt does not support (using one is an error):
// CANNOT-NEXT:   --mlir-pass-pipeline-crash-reproducer {{.+}}

// VERSION: tile-opt (tile-mlir) {{[0-9]+\.[0-9]+}}
