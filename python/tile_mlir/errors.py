"""Every error tile-mlir raises on purpose, under one base: ``TileError``.

Catch ``tile_mlir.TileError`` to catch them all. Each class also derives from the
builtin exception that best describes it (``ValueError``, ``TypeError``, ...), so
code written against the builtin keeps working. Nothing here imports MLIR or CUDA:
both halves of the package (compile and launch) raise these.
"""

from __future__ import annotations

__all__ = [
    "TileError",
    "OptionError",
    "LayoutError",
    "DispatchError",
    "Decline",
    "CompileError",
    "UsageError",
    "UnknownPass",
    "BuildError",
    "LaunchError",
    "KernelNotFound",
    "CudaError",
    "CudaBindingsMissing",
    "InterpreterError",
    "ArtifactError",
    "CacheError",
    "BindingsTooOld",
]


class TileError(Exception):
    """The base of every error tile-mlir raises on purpose."""


class OptionError(TileError, ValueError):
    """A compile option that does not exist or has a value it cannot take."""


class LayoutError(TileError, ValueError):
    """A text or structure that is not a layout, or a question the layout cannot answer.

    The message is the human-readable reason; parse errors start with ``at column N:``
    (1-based), and carry N as ``column`` (None for other errors).
    """

    def __init__(self, message: str, column: int | None = None):
        super().__init__(message)
        self.column = column


class DispatchError(TileError):
    """No lowering variant applies; the message is the whole per-variant report."""


class Decline(TileError):
    """Raised by a lowering variant that cannot lower this op after all (dispatch tries
    the next variant)."""


class CompileError(TileError, RuntimeError):
    """A module failed to compile: a parse or verification error, or a failing stage.

    ``stage`` names the stage (``parse``, ``tile-verify``, ``tile-lower-reduction``,
    ``ptxas``...); ``repro`` is a one-line command that reproduces the failure, or "".
    """

    def __init__(self, stage: str, message: str, repro: str = ""):
        text = f"{stage} failed:\n{message}" + (f"\nreproduce with: {repro}" if repro else "")
        super().__init__(text)
        self.stage, self.message, self.repro = stage, message, repro


class UsageError(TileError):
    """A bad command line, pipeline or input file for a tool (``tile-opt``)."""


class UnknownPass(TileError, KeyError):
    """A pass name that the registry (``tile_mlir.passes.REGISTRY``) does not have; the
    message lists the ones it does."""

    __str__ = Exception.__str__  # the message, not KeyError's quoted repr of it


class BuildError(TileError, ValueError):
    """A kernel the Python builder (``tile_mlir.build``) cannot build as asked: repeated
    argument names, a type that does not parse, a dimension other than x, y or z."""


class LaunchError(TileError, TypeError):
    """A launch whose arguments do not fit the kernel's signature."""


class KernelNotFound(TileError, KeyError, AttributeError):
    """A kernel name that the module or artifact does not define; the message lists the
    names it does. It is a KeyError for ``kernels["name"]`` and an AttributeError for
    ``kernels.name`` (so ``hasattr`` and ``getattr(kernels, name, default)`` work)."""

    __str__ = Exception.__str__  # the message, not KeyError's quoted repr of it


class CudaError(TileError, RuntimeError):
    """A failed CUDA driver call; the message names the call and the error.

    ``code`` is the CUresult as an int, or None when the driver itself is missing.
    """

    def __init__(self, call: str, code: int | None, detail: str):
        super().__init__(f"{call} failed: {detail}")
        self.call = call
        self.code = code


class CudaBindingsMissing(TileError, ImportError):
    """cuda-python (``cuda.bindings``) is not installed, so kernels cannot launch on a GPU
    here; the interpreter backend still runs them."""


class InterpreterError(TileError, RuntimeError):
    """The CPU interpreter cannot run a kernel: an unsupported op, an out-of-bounds
    access, a divergent loop bound or warp op... The message names the op and its
    location."""


class ArtifactError(TileError, ValueError):
    """An artifact that cannot be used: a saved directory or file that is missing,
    incomplete or corrupt, one with nothing this GPU can load, or a malformed cache key."""


class CacheError(TileError, OSError):
    """The compile cache could not store an entry: other processes kept replacing it
    with entries that fail their checksums."""


class BindingsTooOld(TileError, ImportError):
    """The MLIR Python bindings are missing or older than LLVM 22."""
