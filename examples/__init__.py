"""The examples, importable as ``tile_mlir.examples`` (python/tile_mlir/examples links here).

Every file is a kernel that tile-opt and ``tile_mlir.compile`` take as it is: the
demonstration (``demo.mlir``), a warp reduction, ``tile.copy`` rows, the cross-warp and
cluster reductions, and the fused row kernels (``softmax.mlir``, ``rmsnorm.mlir``,
``layernorm.mlir``, ``logsumexp.mlir``). Those four are written in Python with the builder
(``tile_mlir.kernels``, python/tile_mlir/kernels/forward.py); each file here is what it
builds for a 37 x 1000 f32 matrix (``python -m tile_mlir.kernels softmax --emit``), and
test/python/test_fused.py checks that it still is.
"""
