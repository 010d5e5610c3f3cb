# RUN: %python %s | FileCheck %s
#
# Python scripting without tile-opt: build a kernel with a warp tile.reduce,
# run a PassManager that mixes tile passes with upstream ones, and read the
# result back.

from mlir import ir
from mlir.dialects import arith, func, gpu, memref
from mlir.passmanager import PassManager

from tile_mlir import ops
from tile_mlir.ir import find_ops, make_context
from tile_mlir.passes import add_pass

PRIVATE = "#gpu.address_space<private>"

with make_context() as ctx, ir.Location.unknown():
    module = ir.Module.create()
    f32 = ir.F32Type.get()
    reg = ir.MemRefType.get([1], f32, memory_space=ir.Attribute.parse(PRIVATE))
    glob = ir.MemRefType.get([32], f32)
    with ir.InsertionPoint(module.body):

        @func.FuncOp.from_py_func(glob, glob)
        def warp_sum(a, b):
            lane = gpu.lane_id()
            c0 = arith.constant(ir.IndexType.get(), 0)
            src = memref.alloca(reg, [], [])
            dst = memref.alloca(reg, [], [])
            memref.store(memref.load(a, [lane]), src, [c0])
            ops.reduce(dst, src, kind="sum", exec_scope="warp", axes=[0],
                       src_layout="S[32 : 1@laneid]",
                       dst_layout="S[1 : 1] + R[32 : 1@laneid]")
            memref.store(memref.load(dst, [c0]), b, [lane])

    # CHECK-LABEL: built:
    # CHECK: "tile.reduce"{{.*}}exec_scope = "warp"
    print("built:")
    print(module)

    pm = PassManager()
    add_pass(pm, "tile-verify")
    add_pass(pm, "tile-lower-reduction")
    pm.add("canonicalize,cse")
    pm.run(module.operation)

    # CHECK-LABEL: lowered:
    # CHECK: func.func @warp_sum
    # CHECK-COUNT-5: gpu.shuffle  xor
    # CHECK-NOT: gpu.shuffle
    # CHECK-NOT: tile.
    print("lowered:")
    print(module)

    # CHECK: shuffles: 5
    print("shuffles:", len(find_ops(module.operation, "gpu.shuffle")))
