"""The examples, importable as ``tile_mlir.examples`` (python/tile_mlir/examples links here).

The MLIR files are kernels that tile-opt and ``tile_mlir.compile`` take as they are
(``demo.mlir``, ``row_sum_copy.mlir``, ``cross_warp_*.mlir``), or templates of the fused
row kernels (``softmax.mlir``, ``rmsnorm.mlir``, ``layernorm.mlir``, ``logsumexp.mlir``),
which their Python modules fill in per shape (``_rowwise.py``; docs/fused-kernels.md).
``python -m tile_mlir.examples.softmax`` runs one and checks it against numpy.
"""
