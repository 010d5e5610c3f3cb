// RUN: tile-opt %S/../../examples/row_sum_copy.mlir --tile-to-ptx > %t.ptx
// RUN: FileCheck %S/../../examples/row_sum_copy.mlir --input-file=%t.ptx --implicit-check-not=ld.global.b32 --implicit-check-not=.local
// RUN: FileCheck %S/../../examples/row_sum_copy.mlir --input-file=%t.ptx --check-prefix=SUM
// RUN: tile-opt %S/../../examples/row_sum_copy.mlir --tile-to-cubin -o %t.cubin
//
// examples/row_sum_copy.mlir through the whole pipeline (and ptxas); its CHECK lines
// live in the example, beside the kernel they describe.
