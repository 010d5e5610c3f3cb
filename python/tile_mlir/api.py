"""The front door: ``compile`` a module to kernels, or ``load_kernel`` from an artifact.

``compile(module_or_text, options=None, *, backend="auto", cache=True)`` is the one
place that decides how a module runs:

* the backend: ``"cuda"`` (``runtime.CudaKernel``, launched through cuda-python),
  ``"interpreter"`` (``interpreter.InterpretedKernel``, on the CPU), or ``"auto"``:
  cuda when a GPU is available here, else the interpreter;
* the options: a ``tile_mlir.Options`` or a dict of option strings (``{"chip": "sm_80",
  "fold": "tree"}``), read here, once; a chip left unset is the one the module's
  gpu.module names in its ``#nvvm.target``, else ``vocab.DEFAULT_CHIP``;
* for cuda, the on-disk compile cache (``tile_mlir.cache``): a hit needs no MLIR, and
  only a miss imports the compiler (``_build``, the one call into the compile half).

Both backends return ``runtime.Kernels`` (kernels by name, as items or attributes), and
every kernel launches the same way: ``kernel.launch(grid, block, *args)``.

Importing this module imports neither MLIR nor CUDA.
"""

from __future__ import annotations

from pathlib import Path

from . import cache as _cache
from .cache import Artifact
from .errors import ArtifactError, BindingsTooOld, OptionError
from .options import Options
from .runtime import Kernels, cuda_kernels, gpu_available

__all__ = ["BACKENDS", "choose_backend", "compile", "load_kernel"]

BACKENDS = ("auto", "cuda", "interpreter")


def choose_backend(backend: str = "auto") -> str:
    """``"cuda"`` or ``"interpreter"``: ``backend`` itself, or for ``"auto"`` cuda when a
    GPU is available here. Any other name is an OptionError."""
    if backend not in BACKENDS:
        raise OptionError(f"backend must be {', '.join(map(repr, BACKENDS))}; got {backend!r}")
    if backend == "auto":
        return "cuda" if gpu_available() else "interpreter"
    return backend


def compile(module_or_text, options=None, *, backend: str = "auto", cache: bool = True,
            source_name: str = "<source>") -> Kernels:
    """Compile a module (an ``ir.Module`` or its text) and return its kernels.

    ``options``: a ``tile_mlir.Options``, a dict of option names to strings, or None (the
    defaults). ``backend``: ``"cuda"``, ``"interpreter"`` or ``"auto"`` (cuda when a GPU
    is available). With ``cache`` the cuda backend consults the on-disk compile cache
    first; a hit needs no MLIR. Building cuda kernels makes no CUDA call: the module
    loads on the first launch. ``source_name`` names the text (a file name) in
    diagnostics and in the interpreter's errors.
    """
    options = Options.from_mapping(options)
    backend = choose_backend(backend)
    text = _text(module_or_text)

    if backend == "interpreter":
        lowered, signatures = _build(text, options, interpret=True, source_name=source_name)
        from .interpreter import interpreted_kernels  # MLIR is there: _build needed it

        return Kernels(interpreted_kernels(lowered, signatures))

    artifact = _cache.lookup(text, options) if cache else None
    if artifact is None:
        artifact = _build(text, options, interpret=False, source_name=source_name)
        if cache:
            artifact = _cache.store(text, options, artifact)
    return cuda_kernels(artifact)


def _text(module_or_text) -> str:
    """The IR text to compile: a string as it is; a module (anything with an MLIR
    ``operation``) printed with its locations, so that a diagnostic names the line that
    built the op (``tile_mlir.build`` locates each op at its line of Python)."""
    if isinstance(module_or_text, str):
        return module_or_text
    operation = getattr(module_or_text, "operation", None)
    if hasattr(operation, "get_asm"):
        return operation.get_asm(enable_debug_info=True)
    return str(module_or_text)


def _build(text: str, options: Options, *, interpret: bool, source_name: str):
    """The one call into the compile half (MLIR), made only on a cache miss: for the
    interpreter the module after ``tile-lower-reduction`` and its kernel signatures,
    else a cache ``Artifact`` (PTX, a cubin where ptxas is, signatures)."""
    try:
        from .compiler import build_artifact, lower_tile_ops
    except ImportError as e:
        need = "running it in the interpreter needs" if interpret else (
            f"no compiled kernel for this module ({options.spelled() or 'default options'}) in the"
            f" compile cache at {_cache.cache_dir()}, and compiling it needs"
        )
        raise BindingsTooOld(f"{need} the MLIR Python bindings ({e})") from e
    if interpret:
        return lower_tile_ops(text, options, source_name=source_name)
    return build_artifact(text, options, source_name=source_name)


def load_kernel(path, name: str | None = None):
    """Kernels from a saved artifact: a directory (``Artifact.save``), or a ``.cubin`` or
    ``.ptx`` file with ``signatures.json`` beside it. One ``CudaKernel`` if ``name`` is
    given, else all of them as ``Kernels``. A bare cubin is loaded as is, whatever its chip."""
    path = Path(path)
    if not path.exists():
        raise ArtifactError(f"{path}: no such artifact directory or file")
    if path.is_dir():
        artifact = Artifact.load(path)
    elif path.suffix in (".cubin", ".ptx"):
        artifact = _bare_artifact(path)
    else:
        raise ArtifactError(f"{path}: expected an artifact directory, a .cubin or a .ptx file")
    kernels = cuda_kernels(artifact)
    return kernels if name is None else kernels[name]


def _bare_artifact(path: Path) -> Artifact:
    """A ``.cubin`` or ``.ptx`` file and the ``signatures.json`` beside it, as an artifact
    of unknown chip."""
    signatures_path = path.with_name("signatures.json")
    try:
        signatures = Artifact.signatures_from_json(signatures_path.read_text())
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ArtifactError(f"{path} needs its launch signatures in {signatures_path} ({e})") from e
    try:
        if path.suffix == ".cubin":
            return Artifact(ptx="", cubin=path.read_bytes(), signatures=signatures, chip="")
        return Artifact(ptx=path.read_text(), cubin=None, signatures=signatures, chip="")
    except OSError as e:
        raise ArtifactError(f"{path}: cannot read it ({e.strerror or e})") from e
