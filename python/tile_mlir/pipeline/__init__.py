"""Pass pipelines, one module per job:

* ``text``: mlir-opt's textual pipeline grammar (``builtin.module(a{x=1},gpu.module(b))``);
* ``manager``: from a pipeline (tile passes as typed objects) to a running
  ``PassManager``, for tile-opt and the library alike;
* ``stages``: the library's pipeline to binary, stage by stage, with repro files;
* ``child``: a step where LLVM may still end the process, run in a child process.

tile-opt's IR printing (``--mlir-print-ir-*``) is ``tile_mlir.tools.ir_printing``.
"""
