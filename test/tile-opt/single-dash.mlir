// RUN: tile-opt %s -canonicalize -cse | FileCheck %s
// RUN: tile-opt %s -pass-pipeline='builtin.module(canonicalize,cse)' | FileCheck %s
// RUN: tile-opt %s -p 'builtin.module(canonicalize)' | FileCheck %s
// RUN: tile-opt %s -split-input-file -canonicalize -o=%t
// RUN: FileCheck %s < %t
// RUN: tile-opt %s -canonicalize -mlir-disable-threading -verify-each=false -o %t.2
// RUN: FileCheck %s < %t.2
// RUN: tile-opt %s -mlir-print-ir-after-all -canonicalize -o %t.3 2>&1 | FileCheck %s --check-prefix=DUMP
//
// As in mlir-opt, every flag also has its single-dash form, -o takes its file after
// '=' or a space, -p is --pass-pipeline, and a boolean flag takes =true/=false.

// CHECK-LABEL: func.func @fold
// CHECK-NEXT:    return %arg0 : i32

// DUMP: // -----// IR Dump After Canonicalizer (canonicalize) //----- //

func.func @fold(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %b = arith.addi %a, %c0 : i32
  return %b : i32
}
