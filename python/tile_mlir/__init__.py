"""tile-mlir: a register-level reduction compiler for NVIDIA GPUs, on MLIR.

The package splits in two halves so that a GPU machine without MLIR can still
launch cached kernels:

* the compiler half (``tile_mlir.ir``, ``tile_mlir.passes``, ``tile_mlir.pipeline``,
  ``tile_mlir.tools.tile_opt``) imports the MLIR 22 Python bindings;
* the launch half (``tile_mlir.runtime``, ``tile_mlir.cache``,
  ``tile_mlir.signature``) needs only numpy and cuda-python.

Nothing here imports MLIR eagerly; ``compile`` and ``launch`` import what they
need when they are called.
"""

__version__ = "0.1.0"


def compile(module_or_text, **kwargs):  # noqa: A001 - the public name the spec uses
    """Compile a module (text or ``ir.Module``) to kernels; see ``tile_mlir.runtime.compile``."""
    from .runtime import compile as _compile

    return _compile(module_or_text, **kwargs)


def load_kernel(path, **kwargs):
    """Load a kernel from a saved artifact; see ``tile_mlir.runtime.load_kernel``."""
    from .runtime import load_kernel as _load

    return _load(path, **kwargs)
