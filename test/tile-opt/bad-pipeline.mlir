// RUN: not tile-opt %s --foo 2>&1 | FileCheck %s --check-prefix=FLAG --implicit-check-not=Traceback
// RUN: not tile-opt %s --tile-frobnicate 2>&1 | FileCheck %s --check-prefix=TILE-FLAG --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='builtin.module(cse,foo)' 2>&1 | FileCheck %s --check-prefix=IN-PIPELINE --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=UNCLOSED --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='cse,canonicalize' 2>&1 | FileCheck %s --check-prefix=NO-ANCHOR --implicit-check-not=Traceback
// RUN: not tile-opt %s --pass-pipeline='builtin.module(tile-lower-reduction{chip=sm_80)' 2>&1 | FileCheck %s --check-prefix=OPTIONS --implicit-check-not=Traceback
// RUN: not tile-opt %s --tile-lower-reduction=bogus=1 2>&1 | FileCheck %s --check-prefix=TILE-OPTION --implicit-check-not=Traceback
// RUN: not tile-opt %s --canonicalize=bogus=1 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION --implicit-check-not=Traceback
// RUN: not tile-opt %s --cse --pass-pipeline='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=BOTH --implicit-check-not=Traceback
//
// Unknown passes, bad pipeline text and bad pass options: a one-line message and
// exit status 1, before any input is read.

// FLAG: tile-opt: unknown pass 'foo'
// TILE-FLAG: tile-opt: unknown pass 'tile-frobnicate'
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
