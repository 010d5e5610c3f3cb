"""The on-disk compile cache: compile where MLIR is, launch where the GPU is.

Layout, under ``cache_dir()``::

    <key>/kernel.ptx          the PTX (always written, possibly empty)
    <key>/kernel.cubin        the cubin, when ptxas was there to make one
    <key>/signatures.json     a list of KernelSignature objects
    <key>/meta.json           format, chip, sha256 of each file above, and ``Artifact.meta``
                              (which ``store`` fills with the compiler's toolchain versions)
    by-source/<source key>    a text file naming the <key> last stored for that source
    by-name/<name key>        the IR text a named kernel was last built from (``remember``)
    .tmp-*, .trash-*          entries being written or removed (a crash may leave them;
                              lookups never read them)

Two keys, and why. The full ``key`` is a sha256 over the IR text, the compile options
(``tile_mlir.options.Options``: the chip, the fold) and the *compiler's* toolchain versions (tile_mlir, the MLIR bindings, ptxas), so
upgrading any of them rebuilds. But a GPU machine has no MLIR, so it cannot know which
versions the compiling machine had and cannot recompute that key. It uses the
``source_key`` instead, a sha256 over IR text and options only, through the
``by-source/`` index that ``store`` writes next to every entry. So:

* ``lookup`` with the compiler installed (the MLIR bindings' distribution is found) uses the
  full key: a toolchain change is a miss;
* ``lookup`` without it follows the index: it gets the entry most recently stored for that
  source, whatever compiler built it.

A kernel built from Python (``tile_mlir.kernels``) has no text until the builder, which
needs MLIR, writes it. So where one is built for the cache its text is also kept under a
name (``remember(name, text)``: the kernel, its shape, dtype, plan and chip), and a
machine without MLIR finds it by that name (``recall``) and then the entry by its text.
The name's file is replaced each time; a name no longer built keeps its last text.

Writes are atomic: an entry is written into a fresh ``.tmp-*`` directory in the cache
directory and renamed into place. A concurrent writer that loses the race (the rename
fails because the entry exists) discards its copy and returns the winner's. Reads verify
every file against the checksums in ``meta.json``; a corrupt entry (missing file, checksum
mismatch, bad JSON) is removed and reported as a miss, so the caller rebuilds it.

Every edit to tile_mlir changes the full key, so a cache that is prepared again and again
would keep every older build; ``prune_stale()`` removes the entries of other toolchains
(``tile_mlir.testing.prepare`` calls it after storing every kernel).

Nothing here imports MLIR or CUDA.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import __version__
from .errors import ArtifactError, CacheError
from .options import Options
from .signature import KernelSignature

log = logging.getLogger(__name__)

FORMAT = 2  # 2: meta.json says "chip" (1 said "arch")
_MLIR_DISTRIBUTION = "xtc-mlir-python-bindings"
_KEY = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Artifact:
    """What compiling a module produces, and all a launch needs.

    ``chip`` is the chip the cubin was built for (``"sm_90a"``); an empty chip means
    unknown, for a bare cubin loaded from a file. ``meta`` is free-form JSON data.
    """

    ptx: str
    cubin: bytes | None
    signatures: tuple[KernelSignature, ...]
    chip: str
    meta: dict = field(default_factory=dict)

    @staticmethod
    def signatures_to_json(signatures) -> str:
        """``signatures.json``: a JSON list of KernelSignature objects."""
        return json.dumps([json.loads(s.to_json()) for s in signatures], indent=1)

    @staticmethod
    def signatures_from_json(text: str) -> tuple[KernelSignature, ...]:
        return tuple(KernelSignature.from_json(json.dumps(s)) for s in json.loads(text))

    def save(self, path) -> None:
        """Write the artifact into directory ``path`` (created if needed); meta.json last."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        files = {
            "kernel.ptx": self.ptx.encode(),
            "signatures.json": self.signatures_to_json(self.signatures).encode(),
        }
        if self.cubin is not None:
            files["kernel.cubin"] = self.cubin
        else:
            (path / "kernel.cubin").unlink(missing_ok=True)
        for name, data in files.items():
            (path / name).write_bytes(data)
        meta = {
            "format": FORMAT,
            "chip": self.chip,
            "files": {name: hashlib.sha256(data).hexdigest() for name, data in files.items()},
            "meta": self.meta,
        }
        (path / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))

    @classmethod
    def load(cls, path) -> "Artifact":
        """Read and verify an artifact directory; raise ArtifactError if anything is off."""
        path = Path(path)
        try:
            meta = json.loads((path / "meta.json").read_text())
            if meta.get("format") != FORMAT:
                raise ArtifactError(f"{path}: unknown artifact format {meta.get('format')!r}")
            files = {}
            for name, digest in meta["files"].items():
                data = (path / name).read_bytes()
                if hashlib.sha256(data).hexdigest() != digest:
                    raise ArtifactError(f"{path / name}: checksum mismatch")
                files[name] = data
            signatures = cls.signatures_from_json(files["signatures.json"].decode())
            return cls(
                ptx=files["kernel.ptx"].decode(),
                cubin=files.get("kernel.cubin"),
                signatures=signatures,
                chip=meta["chip"],
                meta=meta["meta"],
            )
        except ArtifactError:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise ArtifactError(f"{path}: unreadable artifact ({type(e).__name__}: {e})") from e


def cache_dir() -> Path:
    """``$TILE_MLIR_CACHE_DIR``, else ``~/.cache/tile-mlir``."""
    env = os.environ.get("TILE_MLIR_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "tile-mlir"


def toolchain_versions() -> dict:
    """The versions of what compiles here: tile_mlir (its version and a digest of the
    compiler's own source, so an edited lowering never reuses stale kernels), the MLIR
    bindings and ptxas (None: absent)."""
    return dict(_toolchain_versions())


@functools.lru_cache(maxsize=None)
def _toolchain_versions() -> tuple:
    try:
        mlir = importlib.metadata.version(_MLIR_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        mlir = None
    return (
        ("tile_mlir", __version__),
        ("tile_mlir_source", _compiler_source_digest()),
        ("mlir", mlir),
        ("ptxas", _ptxas_release()),
    )


def _compiler_source_digest() -> str:
    """sha256 over the package's Python files and the dialect: what decides the output."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted([*root.rglob("*.py"), root / "dialect" / "tile.irdl.mlir"]):
        if path.is_file():
            h.update(str(path.relative_to(root)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def _ptxas_release() -> str | None:
    """The release line of ``ptxas --version`` ("Cuda compilation tools, release 13.0, ...")."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return None
    try:
        out = subprocess.run(
            [ptxas, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return next((line.strip() for line in out.splitlines() if "release" in line), None)


def _digest(payload: dict) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def key(ir_text: str, options: Options, versions: dict | None = None) -> str:
    """The full cache key: IR, options and toolchain versions (default: this machine's)."""
    if versions is None:
        versions = toolchain_versions()
    return _digest({"ir": ir_text, "options": options.as_dict(), "toolchain": versions})


def source_key(ir_text: str, options: Options) -> str:
    """The key of the ``by-source/`` index: IR and options, no versions."""
    return _digest({"source": ir_text, "options": options.as_dict()})


def get(key: str) -> Artifact | None:
    """The entry for ``key``, or None; a corrupt entry is removed and counts as a miss."""
    if not _KEY.fullmatch(key):
        raise ArtifactError(f"not a cache key: {key!r}")
    path = cache_dir() / key
    if not path.exists():
        return None
    try:
        return Artifact.load(path)
    except ArtifactError as e:
        log.warning("removing corrupt compile-cache entry: %s", e)
        _discard(path)
        return None


def put(key: str, artifact: Artifact) -> Artifact:
    """Store ``artifact`` under ``key`` atomically; return what the cache now holds.

    If another writer stored the key first, its entry wins and is returned.
    """
    if not _KEY.fullmatch(key):
        raise ArtifactError(f"not a cache key: {key!r}")
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    for _ in range(3):
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))
        try:
            artifact.save(tmp)
            os.rename(tmp, final)
            return artifact
        except OSError:
            if not final.exists():
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)  # a no-op once renamed
        # Lost the race. Use the winner's entry, unless it is corrupt: then get()
        # removed it and the next round tries again.
        winner = get(key)
        if winner is not None:
            return winner
    raise CacheError(f"could not store compile-cache entry {final}")


def lookup(ir_text: str, options: Options) -> Artifact | None:
    """The cached artifact for this source, by full key if the compiler is here, else by index."""
    versions = toolchain_versions()
    if versions["mlir"] is not None:
        return get(key(ir_text, options, versions))
    try:
        indexed = (cache_dir() / "by-source" / source_key(ir_text, options)).read_text()
    except OSError:
        return None
    return get(indexed) if _KEY.fullmatch(indexed) else None


def store(ir_text: str, options: Options, artifact: Artifact) -> Artifact:
    """Record this machine's toolchain in the artifact, ``put`` it, and index it by source."""
    versions = toolchain_versions()
    artifact = replace(artifact, meta={**artifact.meta, "toolchain": versions})
    full = key(ir_text, options, versions)
    stored = put(full, artifact)
    index = cache_dir() / "by-source"
    index.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=index)
    with os.fdopen(fd, "w") as f:
        f.write(full)
    os.replace(tmp, index / source_key(ir_text, options))
    return stored


def remember(name: str, ir_text: str) -> None:
    """Keep ``ir_text`` as what the kernel called ``name`` is built from (``by-name/``)."""
    index = cache_dir() / "by-name"
    path = index / hashlib.sha256(name.encode()).hexdigest()
    try:
        if path.read_text() == ir_text:
            return
    except OSError:
        pass
    index.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=index)
    with os.fdopen(fd, "w") as f:
        f.write(ir_text)
    os.replace(tmp, path)


def recall(name: str) -> str | None:
    """The IR text last remembered for ``name``, or None."""
    try:
        return (cache_dir() / "by-name" / hashlib.sha256(name.encode()).hexdigest()).read_text()
    except OSError:
        return None


def _discard(path: Path) -> None:
    """Remove an entry: first rename it out of the way (atomic), then delete it."""
    trash = path.with_name(f".trash-{os.getpid()}-{path.name}-{os.urandom(4).hex()}")
    try:
        os.rename(path, trash)
    except OSError:
        return  # already gone (another reader removed it)
    if trash.is_dir():
        shutil.rmtree(trash, ignore_errors=True)
    else:
        trash.unlink(missing_ok=True)


def prune_stale() -> int:
    """Remove from the cache directory what no compile here will read again: the entries
    another toolchain built (their ``meta.json`` names other versions than
    ``toolchain_versions()``; any edit to tile_mlir's source makes every older entry
    one), and the ``by-source/`` index files left naming no entry. A machine without
    MLIR reads what the index names, and ``store`` points it at the newest entry of each
    source, so after storing every kernel again (``tile_mlir.testing.prepare``) the copy
    it gets is whole and holds nothing stale. Returns how many entries went; does nothing
    where the MLIR bindings are missing (the versions are unknown there).
    """
    root, current = cache_dir(), toolchain_versions()
    if current["mlir"] is None or not root.is_dir():
        return 0
    removed = 0
    for path in root.iterdir():
        if not (_KEY.fullmatch(path.name) and path.is_dir()):
            continue
        try:
            toolchain = json.loads((path / "meta.json").read_text())["meta"].get("toolchain")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            toolchain = None  # unreadable: a lookup would remove it too
        if toolchain != current:
            _discard(path)
            removed += 1
    index = root / "by-source"
    for path in index.iterdir() if index.is_dir() else ():
        if path.name.startswith("."):
            continue
        try:
            named = path.read_text()
        except OSError:
            continue
        if not (_KEY.fullmatch(named) and (root / named).is_dir()):
            path.unlink(missing_ok=True)
    return removed
