"""tile-mlir: a register-level reduction compiler for NVIDIA GPUs, on MLIR.

``tile_mlir.compile(module)`` returns a module's kernels, ready to ``launch(grid, block,
*args)``; ``tile_mlir.load_kernel(path)`` loads them from a saved artifact;
``tile_mlir.build.kernel(...)`` builds a launchable module from Python, and
``tile_mlir.kernels`` is the fused row kernels built that way, as a library
(``K.softmax(x)``, ``K.rms_norm(x, w)``...). Every error is a ``tile_mlir.TileError``.

The package splits in two halves so that a GPU machine without MLIR can still
launch cached kernels:

* the compile half (``tile_mlir.ir``, ``tile_mlir.passes``, ``tile_mlir.pipeline``,
  ``tile_mlir.build``, ``tile_mlir.tools.tile_opt``) imports the MLIR 22 Python bindings;
* the launch half (``tile_mlir.api``, ``tile_mlir.runtime``, ``tile_mlir.arrays``,
  ``tile_mlir.params``, ``tile_mlir.cache``, ``tile_mlir.signature``, and
  ``tile_mlir.kernels`` but for its builders, ``kernels.forward`` and ``kernels.rows``)
  needs only numpy, and cuda-python to launch on a GPU.

``import tile_mlir`` imports neither: ``compile`` and ``load_kernel`` import the front
door (``tile_mlir.api``) when they are called, and it imports the compiler only on a
compile-cache miss.
"""

__version__ = "0.1.0"

from .errors import *  # noqa: F401,F403  (TileError and its subclasses)
from .errors import __all__ as _errors
from .options import Options

__all__ = ["compile", "load_kernel", "Options", "__version__", *_errors]  # noqa: F405 (compile, load_kernel: __getattr__)


# The front door lives in tile_mlir.api, imported on first use (PEP 562), so that
# ``import tile_mlir`` stays cheap.
_FRONT_DOOR = ("compile", "load_kernel")


def __getattr__(name: str):
    if name in _FRONT_DOOR:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'tile_mlir' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_FRONT_DOOR])
