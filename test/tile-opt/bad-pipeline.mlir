// RUN: not tile-opt %s --foo 2>&1 | FileCheck %s --check-prefix=FLAG --implicit-check-not=Traceback
// RUN: not tile-opt %s --tile-frobnicate 2>&1 | FileCheck %s --check-prefix=TILE-FLAG --implicit-check-not=Traceback
// RUN: not tile-opt %s --tile-lower-reductoin 2>&1 | FileCheck %s --check-prefix=CLOSE --implicit-check-not=Traceback
// RUN: not tile-opt %s -mlir-print-debuginf 2>&1 | FileCheck %s --check-prefix=CLOSE-FLAG --implicit-check-not=Traceback
// RUN: not tile-opt %s --mlir-print-ir-before=foo -cse 2>&1 | FileCheck %s --check-prefix=PRINT-BEFORE --implicit-check-not=Traceback
// RUN: not tile-opt %s --no-implicit-module 2>&1 | FileCheck %s --check-prefix=CANNOT --implicit-check-not=Traceback
// RUN: not tile-opt %s --verify-each=maybe 2>&1 | FileCheck %s --check-prefix=BOOL --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='builtin.module(cse,foo)' 2>&1 | FileCheck %s --check-prefix=IN-PIPELINE --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=UNCLOSED --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='cse,canonicalize' 2>&1 | FileCheck %s --check-prefix=NO-ANCHOR --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='builtin.module(tile-lower-reduction{chip=sm_80)' 2>&1 | FileCheck %s --check-prefix=OPTIONS --implicit-check-not=Traceback
// RUN: not tile-opt %s --tile-lower-reduction=bogus=1 2>&1 | FileCheck %s --check-prefix=TILE-OPTION --implicit-check-not=Traceback
// RUN: not tile-opt %s --canonicalize=bogus=1 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION --implicit-check-not=Traceback
// RUN: not tile-opt %s --cse --pass-pipeline='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=BOTH --implicit-check-not=Traceback
//
// Unknown flags, unknown passes, bad pipeline text and bad pass options: a one-line
// message and exit status 1, before any input is read. A flag that is neither an
// option nor a pass is an unknown command-line option, with the closest name when one
// is close; in a pipeline, an unknown name is an unknown pass.

// FLAG: tile-opt: unknown command-line option '--foo'{{$}}
// TILE-FLAG: tile-opt: unknown command-line option '--tile-frobnicate'{{$}}
// CLOSE: tile-opt: unknown command-line option '--tile-lower-reductoin'; did you mean '--tile-lower-reduction'?
// CLOSE-FLAG: tile-opt: unknown command-line option '--mlir-print-debuginf'; did you mean '--mlir-print-debuginfo'?
// PRINT-BEFORE: tile-opt: --mlir-print-ir-before: unknown pass 'foo'
// CANNOT: tile-opt: --no-implicit-module is not supported: ir.Module.parse always wraps the input in a module
// BOOL: tile-opt: argument --verify-each: expected true or false, got 'maybe'
// IN-PIPELINE: tile-opt: unknown pass 'foo'

// UNCLOSED:      tile-opt: invalid pass pipeline: expected ',' or ')' to close 'builtin.module('
// UNCLOSED-NEXT:   builtin.module(cse
// UNCLOSED-NEXT: {{^}}                    ^

// NO-ANCHOR: tile-opt: invalid pass pipeline: the pipeline must be wrapped in its anchor op, e.g. 'builtin.module(...)'
// OPTIONS: tile-opt: invalid pass pipeline: missing '}' to close the pass options

// TILE-OPTION: tile-opt: {{.*}}tile-lower-reduction{{.*}}bogus
// UPSTREAM-OPTION: tile-opt: invalid pass pipeline: {{.*}}no such option bogus

// BOTH: tile-opt: --pass-pipeline cannot be used with individual pass flags (--cse)

func.func @f(%d: memref<1xf32, #gpu.address_space<private>>, %s: memref<4xf32, #gpu.address_space<private>>) {
  "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<private>>) -> ()
  return
}
