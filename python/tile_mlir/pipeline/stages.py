"""The library's pipeline to binary, stage by stage, and its repro files.

``tile_stages(options)`` are the stages that lower the tile ops (what the CPU interpreter
runs comes after them), ``nvvm_stages(options)`` the whole pipeline up to NVVM, checked
against its target, and ``BINARY`` the last stage, ``gpu-module-to-binary``, where LLVM
runs. The tile passes are built as objects from the typed ``Options``: no option
becomes text on the way.

``run_stages`` runs stages one at a time, each in its own pass manager, so that a
failure names its stage: it raises ``CompileError`` with the diagnostics and a one-line
``tile-opt`` repro, whose input is saved under the compile cache (``save_repro``: the
newest ``REPRO_KEEP`` files are kept). ``binary_objects`` runs ``BINARY`` in a child
process (``pipeline.child.Worker``, kept from one compile to the next), on the module's
bytecode, so that a fatal error in LLVM is a ``CompileError`` and not the end of the
caller's process.
"""

from __future__ import annotations

import hashlib
import io
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlir.dialects import gpu
from mlir.passmanager import PassManager

from ..cache import cache_dir
from ..diagnostics import Diag, DiagnosticSink
from ..errors import CompileError
from ..ir import ir
from ..options import Options
from ..passes import (
    TileAlignSharedGlobals,
    TileCacheHints,
    TileCheckTarget,
    TileExternalizeDynamicShared,
    TileForwardLoopAnnotations,
    TileLowerCopy,
    TileLowerReduction,
    TilePass,
)
from ..source import new_context
from .child import ChildDied, Worker
from .text import ROOT_OP


@dataclass(frozen=True)
class Stage:
    """One stage: a tile pass object, or upstream pipeline text (MLIR reads it)."""

    name: str
    element: TilePass | str

    def __str__(self) -> str:
        return str(self.element)

    def add_to(self, pm: PassManager) -> None:
        if isinstance(self.element, TilePass):
            self.element.add_to(pm)
        else:
            pm.add(self.element)


def tile_stages(options: Options) -> tuple[Stage, ...]:
    """The tile lowerings, with ``options``' typed fields."""
    return (
        Stage("tile-lower-copy", TileLowerCopy(chip=options.chip)),
        Stage("tile-lower-reduction", TileLowerReduction(chip=options.chip, fold=options.fold)),
    )


def nvvm_stages(options: Options) -> tuple[Stage, ...]:
    """Everything before ``BINARY``: the module in the NVVM and LLVM dialects, checked
    against its target (``tile-check-target``)."""
    return tile_stages(options) + (
        Stage("tile-cache-hints", TileCacheHints()),
        Stage("convert-scf-to-cf", "convert-scf-to-cf"),
        Stage("convert-gpu-to-nvvm", "gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1})"),
        Stage("tile-forward-loop-annotations", TileForwardLoopAnnotations()),
        Stage("tile-externalize-dynamic-shared", TileExternalizeDynamicShared()),
        Stage("tile-align-shared-globals", TileAlignSharedGlobals()),
        Stage("reconcile-unrealized-casts", "reconcile-unrealized-casts"),
        Stage("tile-check-target", TileCheckTarget()),
    )


BINARY = Stage("gpu-module-to-binary", "gpu-module-to-binary{format=isa}")


# How many repro files the compile cache keeps (the newest; older ones are deleted).
REPRO_KEEP = 20


def save_repro(text: str, suffix: str = ".mlir") -> str:
    """Save ``text`` for a repro line and return its path.

    The files live in the compile cache, ``cache_dir() / "repro"``
    (``$TILE_MLIR_CACHE_DIR/repro``), named by a digest of their text, so the same
    failure saves one file. Only the newest ``REPRO_KEEP`` are kept. Where the cache
    cannot be written, the file goes to the system's temporary directory instead.
    """
    folder = cache_dir() / "repro"
    name = hashlib.sha256(text.encode()).hexdigest()[:16] + suffix
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)  # a rewrite also makes it the newest
    except OSError:
        fd, path = tempfile.mkstemp(prefix="tile-mlir-repro-", suffix=suffix)
        with open(fd, "w") as f:
            f.write(text)
        return path
    _prune(folder, REPRO_KEEP)
    return str(folder / name)


def _prune(folder: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest files of ``folder``."""
    def age(path: Path) -> int:
        try:
            return path.stat().st_mtime_ns
        except OSError:  # deleted meanwhile, by another process
            return 0

    for old in sorted(folder.iterdir(), key=age, reverse=True)[keep:]:
        try:
            old.unlink()
        except OSError:
            pass


@dataclass
class Run:
    """One compile's module on its way through the stages: where its diagnostics go
    (``sink``, which keeps them), the ``source`` text it was parsed from (for the repro
    file), and the stages ``done`` so far (for the repro line)."""

    module: ir.Module
    sink: DiagnosticSink
    source: str
    done: list[str]

    def repro(self, stage: Stage) -> str:
        pipeline = ",".join([*self.done, str(stage)])
        return f"tile-opt {save_repro(self.source)} --pass-pipeline='{ROOT_OP}({pipeline})'"


def run_stages(run: Run, stages) -> None:
    """Run ``stages`` on ``run.module``, one at a time. A failing stage raises
    ``CompileError`` with its diagnostics and a repro line that runs every stage so far
    on the saved source."""
    for stage in stages:
        pm = PassManager(ROOT_OP, run.module.context)
        stage.add_to(pm)
        start = len(run.sink.kept)
        try:
            pm.run(run.module.operation)
        except ir.MLIRError as e:
            raise CompileError(stage.name, run.sink.text(start) or str(e), run.repro(stage)) from None
        run.sink.check()
        run.done.append(str(stage))


# The process that runs LLVM's code generator for this one.
LLVM = Worker()


def binary_objects(run: Run) -> list[bytes]:
    """Run ``BINARY`` on ``run.module`` in the ``LLVM`` worker and return the objects of
    its gpu.binary ops (PTX for ``format=isa``). LLVM's fatal errors are a CompileError."""
    bytecode = io.BytesIO()
    run.module.operation.write_bytecode(bytecode)
    try:
        objects, diags = LLVM.call(_to_binary, bytecode.getvalue(), run.sink.files, run.sink.buffer)
    except ChildDied as e:
        raise CompileError(BINARY.name, f"LLVM stopped the compile ({e.how}):\n{e.stderr.strip()}",
                           run.repro(BINARY)) from None
    start = len(run.sink.kept)
    run.sink.kept.extend(diags)
    if objects is None:
        raise CompileError(BINARY.name, run.sink.text(start) or "gpu-module-to-binary failed", run.repro(BINARY))
    run.done.append(str(BINARY))
    return objects


_WORKER_CONTEXT: list[ir.Context] = []  # the worker's context, made on its first call


def _to_binary(bytecode: bytes, files: dict, source_name: str) -> tuple[list[bytes] | None, list[Diag]]:
    """In the worker: ``BINARY`` on the module ``bytecode`` holds, in the worker's own
    context. The objects of its gpu.binary ops (None if it failed), and its diagnostics."""
    if not _WORKER_CONTEXT:
        _WORKER_CONTEXT.append(new_context())
    ctx = _WORKER_CONTEXT[0]
    sink = DiagnosticSink(ctx, files, buffer=source_name)
    sink.keep = True
    try:
        module = ir.Module.parse(bytecode, ctx)
        pm = PassManager(ROOT_OP, ctx)
        BINARY.add_to(pm)
        try:
            pm.run(module.operation)
        except ir.MLIRError:
            return None, sink.kept
        return [gpu.ObjectAttr(obj).object
                for op in module.body.operations if op.operation.name == "gpu.binary"
                for obj in op.operation.attributes["objects"]], sink.kept
    finally:
        sink.detach()
