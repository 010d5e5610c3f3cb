"""The compile entry points: from IR text to lowered IR, PTX, a cubin and an artifact.

Each entry point takes the IR text, an ``Options`` (``tile_mlir.options``) and the name
of the text for diagnostics (``source_name``: a file name; ``<source>`` by default):

* ``parse`` reads the text and runs ``tile-verify`` on it (``tile_mlir.source``, the path
  tile-opt takes too), so that a broken rule is reported once, at its op, and not as a
  lowering failure;
* ``lower_tile_ops`` runs only the tile lowerings (``tile-lower-copy``,
  ``tile-lower-reduction``): the scf/arith/memref/vector/gpu level that the CPU
  interpreter executes;
* ``lower_to_ptx`` runs the whole pipeline (``tile_mlir.pipeline.stages``) and returns
  the PTX; the chip is the gpu.module's target's (``vocab.Target``), which must agree
  with ``options.chip`` where both name one; a gpu.module without a target gets one for
  ``options.chip``, else ``vocab.DEFAULT_CHIP``. LLVM runs in a child process, so that
  its fatal errors are ``CompileError``s;
* ``ptx_to_cubin`` assembles the PTX with ptxas, where ptxas is on PATH;
* ``build_artifact`` does both and returns a cache ``Artifact``;
* ``kernel_signatures`` reads the launch signature of every ``gpu.func ... kernel``, and
  ``with_alignments`` adds what the lowered code assumes of each pointer (``alignment``).

A failure is a ``CompileError`` that names its stage (``parse``, a pass, ``ptxas``), with
each diagnostic at its place in the text, under ``source_name``.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from . import dynamic_dims
from .alignment import argument_alignments
from .analysis import analyze, block_needs
from .analysis_copy import analyze_copy
from .cache import Artifact
from .diagnostics import DiagnosticSink
from .errors import CompileError
from .ir import find_ops, ir, memref_shape
from .options import Options
from .pipeline.stages import Run, binary_objects, nvvm_stages, run_stages, save_repro, tile_stages
from .signature import MLIR_TO_NUMPY, ArgSpec, KernelSignature
from .source import load, new_context
from .vocab import DEFAULT_CHIP, NVVM_DEFAULT_CHIP, REDUCE_OPS, Chip, Target

# The name of the text in diagnostics, where it has no file name.
SOURCE = "<source>"


@dataclass
class Lowered:
    ptx: str
    signatures: tuple[KernelSignature, ...]
    chip: str


def kernel_signatures(module: ir.Module, *, dynamic: bool = False) -> tuple[KernelSignature, ...]:
    """The launch signature of every ``gpu.func ... kernel`` in the module; ``dynamic``:
    memref arguments may have dynamic dims (the interpreter runs them, the CUDA path's
    bare pointers cannot carry their extents)."""
    sigs = []
    for op in find_ops(module.operation, "gpu.func"):
        if "gpu.kernel" not in op.attributes:
            continue
        fn_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        name = ir.StringAttr(op.attributes["sym_name"]).value
        args = tuple(_arg_spec(name, i, t, dynamic) for i, t in enumerate(fn_type.inputs))
        sigs.append(KernelSignature(name, args, *_block_needs(name, op), *_cluster_needs(name, op)))
    return tuple(sigs)


def with_alignments(signatures, lowered: ir.Module) -> tuple[KernelSignature, ...]:
    """``signatures`` with each memref argument's alignment (``ArgSpec.align``) read
    from ``lowered``, the module after the tile lowerings (``alignment``)."""
    needs = argument_alignments(lowered)
    return tuple(
        replace(s, args=tuple(a if need is None else replace(a, align=need)
                              for a, need in zip(s.args, needs.get(s.name, (None,) * len(s.args)))))
        for s in signatures
    )


def _block_needs(kernel: str, fn) -> tuple[int | None, int]:
    """(exact threads, threads multiple) that a kernel needs of its block
    (``KernelSignature``): exactly its ``known_block_size``, which the lowering may rely
    on, and what each tile op needs (``analysis.block_needs``: whole warps or warpgroups
    at those scopes, exactly the layout's warps for a cta- or cluster-scope register
    tile that spreads over threads). Needs that disagree are an error."""
    exact, multiple = None, 1
    if "known_block_size" in fn.attributes:
        exact = math.prod(ir.DenseI32ArrayAttr(fn.attributes["known_block_size"]))
    # An operand in workgroup memory spreads nothing over threads: no layout.
    ops = [(info.exec_scope, info.src_layout if info.src.storage == "local" else None)
           for info in (analyze(op).info for op in find_ops(fn, REDUCE_OPS)) if info is not None]
    ops += [(info.exec_scope, info.layout)
            for info in (analyze_copy(op).info for op in find_ops(fn, "tile.copy")) if info is not None]
    for scope, layout in ops:
        threads, unit = block_needs(scope, layout)
        multiple = math.lcm(multiple, unit)
        if threads is not None:
            if exact not in (None, threads):
                raise CompileError(
                    "signature", f"kernel {kernel}: its block must have both {exact} and {threads} "
                    "threads (known_block_size, or the warps of its cta- or cluster-scope tile ops)", "")
            exact = threads
    return exact, multiple


def _cluster_needs(kernel: str, fn) -> tuple[tuple[int, int, int] | None, bool]:
    """(cluster shape, fixed) that a kernel needs (``KernelSignature.cluster``): its
    ``known_cluster_size`` where it has one (fixed: PTX ``.reqnctapercluster``), else
    ``(C, 1, 1)`` for the C CTAs its cluster-scope register tile ops span, else none.
    Two ops that need different clusters are an error."""
    fixed = None
    if "known_cluster_size" in fn.attributes:
        fixed = tuple(ir.DenseI32ArrayAttr(fn.attributes["known_cluster_size"]))
        fixed = (fixed + (1, 1, 1))[:3]
    ctas = {info.cluster_ctas for info in (analyze(op).info for op in find_ops(fn, REDUCE_OPS))
            if info is not None and info.exec_scope == "cluster" and info.src.storage == "local"}
    if len(ctas) > 1:
        raise CompileError("signature", f"kernel {kernel}: its cluster-scope tile ops span clusters of "
                           f"{' and '.join(map(str, sorted(ctas)))} CTAs; one kernel runs in one cluster shape", "")
    if fixed is not None:
        return fixed, True
    if ctas and max(ctas) > 1:
        return (max(ctas), 1, 1), False
    return None, False


def _arg_spec(kernel: str, i: int, t: ir.Type, dynamic: bool) -> ArgSpec:
    if isinstance(t, ir.MemRefType):
        elem = str(t.element_type)
        if elem not in MLIR_TO_NUMPY:
            raise CompileError("signature", f"kernel {kernel}: argument {i} has unsupported type {t}", "")
        if not t.has_static_shape and not dynamic:
            raise CompileError("signature", f"kernel {kernel}: argument {i} is {t}: a dynamic dim runs only in "
                               'the interpreter (backend="interpreter"), the CUDA backend passes a memref as a '
                               "bare pointer, which needs a static shape", "")
        return ArgSpec("memref", MLIR_TO_NUMPY[elem], memref_shape(t))
    if str(t) not in MLIR_TO_NUMPY:
        raise CompileError("signature", f"kernel {kernel}: argument {i} has unsupported type {t}", "")
    return ArgSpec("scalar", MLIR_TO_NUMPY[str(t)])


def _options(options) -> Options:
    """``options`` as an ``Options``: an Options as it is (it was checked when made)."""
    return options if isinstance(options, Options) else Options.from_mapping(options)


def _loaded(text: str, ctx: ir.Context, source_name: str) -> tuple[ir.Module, DiagnosticSink]:
    """``text`` parsed and verified in ``ctx`` (``source.load``), with the sink that keeps
    its diagnostics; a ``CompileError`` of stage ``parse`` or ``tile-verify`` if not."""
    sink = DiagnosticSink(ctx, {source_name: text.split("\n")}, buffer=source_name)
    sink.keep = True
    module, failed = load(text, ctx, sink, source_name, name_locations=True)
    if module is None:
        raise CompileError(failed, sink.text(), f"tile-opt {save_repro(text)}")
    return module, sink


def parse(text: str, *, source_name: str = SOURCE) -> ir.Module:
    """Parse ``text`` in the current context and verify its tile ops (the context's error
    diagnostics go to its handlers from then on, as ``source.new_context``'s do).

    A syntax error is a ``CompileError`` of stage ``parse``, a broken tile rule one of
    stage ``tile-verify``: the message has each diagnostic at its place in ``text``
    (``<source>:3:5: error: ...``, the line and a caret), called ``source_name``.
    """
    ctx = ir.Context.current
    ctx.emit_error_diagnostics = True
    return _loaded(text, ctx, source_name)[0]


def lower_tile_ops(text: str, options: Options | None = None, *,
                   source_name: str = SOURCE) -> tuple[str, tuple[KernelSignature, ...]]:
    """Run only the tile lowerings (``tile-lower-copy``, ``tile-lower-reduction``): the
    scf/arith/memref/vector/gpu level the CPU interpreter executes. Returns the lowered
    text and the kernel signatures. Diagnostics call the text ``source_name``, and so do
    the lowered text's locations, where the interpreter's errors read it."""
    options = _options(options)
    with new_context() as ctx, ir.Location.unknown(ctx):
        module, sink = _loaded(text, ctx, source_name)
        signatures = kernel_signatures(module, dynamic=True)
        run_stages(Run(module, sink, text, []), tile_stages(options))
        signatures = with_alignments(signatures, module)
        # with locations, so that the interpreter names ops where the user wrote them
        # (generic form: some custom parsers, nvvm.barrier's, cannot take a loc alias after them)
        return module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True), signatures


def lower_to_ptx(text: str, options: Options | None = None, *, source_name: str = SOURCE) -> Lowered:
    """Parse, lower and translate a module to PTX. Needs only MLIR (no ptxas).
    Diagnostics call the text ``source_name``."""
    options = _options(options)
    with new_context() as ctx, ir.Location.unknown(ctx):
        module, sink = _loaded(text, ctx, source_name)
        chip = _target_chip(module, options.chip, sink)
        signatures = kernel_signatures(module, dynamic=dynamic_dims.bound(module))
        run = Run(module, sink, text, [])
        stages, tile = nvvm_stages(options), len(tile_stages(options))
        run_stages(run, stages[:tile])
        # what the lowered code assumes of each pointer, read before LLVM hides it
        signatures = with_alignments(signatures, module)
        dynamic_dims.rewrite(module)  # dynamic dims from integer arguments, for bare pointers
        run_stages(run, stages[tile:])
        objects = binary_objects(run)
        if len(objects) != 1:
            raise CompileError(
                "gpu-module-to-binary", f"expected exactly one gpu.module to compile, found {len(objects)}", ""
            )
        return Lowered(objects[0].decode(), signatures, str(chip))


def _target_chip(module: ir.Module, chip: Chip | None, sink: DiagnosticSink) -> Chip | None:
    """The chip the module's gpu.modules are compiled for (``vocab.Target``). A gpu.module
    without a target gets ``#nvvm.target`` for ``chip`` (else ``DEFAULT_CHIP``); one whose
    ``#nvvm.target`` names another chip than ``chip`` is an error at the gpu.module."""
    found = None
    for op in find_ops(module.operation, "gpu.module"):
        target = Target.of_gpu_module(op)
        if target is None:
            target = Target("cuda", chip or Chip.parse(DEFAULT_CHIP))
            op.attributes["targets"] = ir.ArrayAttr.get([ir.Attribute.parse(target.chip.nvvm_target)])
        elif target.kind == "cuda" and target.problem is None and chip not in (None, target.chip):
            named = " (MLIR's default, where it names no chip)" if target.chip.name == NVVM_DEFAULT_CHIP else ""
            start = len(sink.kept)
            op.location.emit_error(f"'gpu.module' op its #nvvm.target is for {target.chip}{named}, "
                                   f"but the chip option asks for {chip}")
            raise CompileError("target", sink.text(start), "")
        found = found or target.chip
    return found


def ptx_to_cubin(ptx: str, chip: Chip | str | None = None) -> bytes | None:
    """Assemble PTX with ptxas for ``chip`` (else ``DEFAULT_CHIP``); None when ptxas is
    not on PATH."""
    chip = Chip.parse(chip or DEFAULT_CHIP)
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        src.write_text(ptx)
        r = subprocess.run([ptxas, f"-arch={chip}", "-o", str(out), str(src)],
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            repro = f"ptxas -arch={chip} {save_repro(ptx, '.ptx')}"
            raise CompileError("ptxas", r.stderr.strip(), repro)
        return out.read_bytes()


def build_artifact(text: str, options: Options | None = None, *, source_name: str = SOURCE) -> Artifact:
    """IR text -> a cache ``Artifact`` (PTX, cubin where ptxas exists, signatures)."""
    lowered = lower_to_ptx(text, _options(options), source_name=source_name)
    cubin = ptx_to_cubin(lowered.ptx, lowered.chip)
    return Artifact(ptx=lowered.ptx, cubin=cubin, signatures=lowered.signatures, chip=lowered.chip, meta={})
