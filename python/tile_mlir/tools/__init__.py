"""Command-line tools of tile-mlir.

* ``tile_opt``: ``tile-opt``, the mlir-opt-style driver. The ``tile-opt`` console
  script and the checkout shim ``tools/tile-opt`` both call
  ``tile_mlir.tools.tile_opt:main``.
* ``command_line``: its flags; ``ir_printing``: its ``--mlir-print-ir-*`` dumps.
"""
