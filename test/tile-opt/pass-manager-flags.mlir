// RUN: tile-opt %s --dump-pass-pipeline --pass-pipeline='builtin.module(func.func(cse),tile-lower-reduction{fold=tree})' -o %t 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: tile-opt %s --dump-pass-pipeline -o %t 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: tile-opt %s --mlir-pass-statistics --pass-pipeline='builtin.module(func.func(cse))' -o %t 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: tile-opt %s --mlir-pass-statistics --mlir-pass-statistics-display=list --cse -o %t 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: tile-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS
//
// --dump-pass-pipeline prints the pass manager as it will run (upstream passes with
// all their options, tile passes by name), --mlir-pass-statistics the passes'
// statistics, --show-dialects the dialects, tile among them.

// DUMP:      Pass Manager with 2 passes:
// DUMP-NEXT: builtin.module(func.func(cse),tile-lower-reduction)

// EMPTY:      Pass Manager with 0 passes:
// EMPTY-NEXT: builtin.module()

// STATS:      ... Pass statistics report ...
// STATS:      'func.func' Pipeline
// STATS-NEXT:   CSE
// STATS-NEXT:     (S) {{[1-9][0-9]*}} num-cse'd - Number of operations CSE'd

// LIST:      ... Pass statistics report ...
// LIST:      CSE
// LIST-NEXT:   (S) {{[1-9][0-9]*}} num-cse'd - Number of operations CSE'd

// DIALECTS: Available Dialects: {{.*}},gpu,{{.*}},nvvm,{{.*}},tile,

func.func @f(%a: i32) -> i32 {
  %b = arith.addi %a, %a : i32
  %c = arith.addi %a, %a : i32
  %d = arith.addi %b, %c : i32
  return %d : i32
}
