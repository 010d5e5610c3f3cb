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

from .errors import *  # noqa: F401,F403  (TileError and its subclasses)
from .errors import __all__ as _errors
from .options import Options

__all__ = ["compile", "load_kernel", "Options", "__version__", *_errors]


def compile(module_or_text, **kwargs):  # noqa: A001 - the public name the spec uses
    """Compile a module (text or ``ir.Module``) to kernels; see ``tile_mlir.runtime.compile``."""
    from .runtime import compile as _compile

    return _compile(module_or_text, **kwargs)


def load_kernel(path, **kwargs):
    """Load a kernel from a saved artifact; see ``tile_mlir.runtime.load_kernel``."""
    from .runtime import load_kernel as _load

    return _load(path, **kwargs)
