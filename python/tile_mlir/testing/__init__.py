"""Test support shared by the CPU and GPU suites: the conformance matrix and its cache.

* ``tile_mlir.testing.cases``: ``ReduceCase``, one kernel with its inputs and numpy
  reference; ``tile_mlir.testing.matrix``: ``CASES``, the conformance matrix. Pure
  Python and numpy (no MLIR), so both run on the GPU machine.
* ``tile_mlir.testing.copies``: ``CopyCase`` and ``CASES``, tile.copy kernels with
  numpy references (pure Python and numpy too).
* ``tile_mlir.testing.fused``: rows of special values for the fused kernels of examples/
  and what each kernel gives for them (numpy only).
* ``tile_mlir.testing.prepare``: ``python -m tile_mlir.testing.prepare [--cache DIR]``
  compiles every case into the compile cache, on a machine with MLIR and ptxas.

Nothing is imported here, so importing ``cases`` or ``matrix`` never pulls in the compiler.
"""
