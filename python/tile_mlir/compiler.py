"""The compile entry points: from IR text to lowered IR, PTX, a cubin and an artifact.

Each entry point takes the IR text and an ``Options`` (``tile_mlir.options``):

* ``parse`` reads the text in the current context and runs ``tile-verify`` on it, as
  tile-opt does, so that a broken rule is reported once, at its op, and not as a
  lowering failure;
* ``lower_tile_ops`` runs only the tile lowerings (``tile-lower-copy``,
  ``tile-lower-reduction``): the scf/arith/memref/vector/gpu level that the CPU
  interpreter executes;
* ``lower_to_ptx`` runs the whole pipeline (``tile_mlir.pipeline.STAGES``) and returns
  the PTX; the chip is ``options.chip``, else ``vocab.DEFAULT_CHIP``;
* ``ptx_to_cubin`` assembles the PTX with ptxas, where ptxas is on PATH;
* ``build_artifact`` does both and returns a cache ``Artifact``;
* ``kernel_signatures`` reads the launch signature of every ``gpu.func ... kernel``, and
  ``with_alignments`` adds what the lowered code assumes of each pointer (``alignment``).

A failure is a ``CompileError`` that names its stage (``parse``, a pass, ``ptxas``).
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from mlir.dialects import gpu
from mlir.passmanager import PassManager

from .alignment import argument_alignments
from .analysis import analyze, block_needs
from .analysis_copy import analyze_copy
from .diagnostics import format_diag, format_errors, parse_failure
from .errors import CompileError
from .ir import find_ops, ir, make_context, memref_shape, name_source
from .options import Options
from .passes import add_pass
from .pipeline import STAGES, TILE_STAGES, run_stages, save_repro
from .signature import MLIR_TO_NUMPY, ArgSpec, KernelSignature
from .vocab import DEFAULT_CHIP

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
           for info in (analyze(op).info for op in find_ops(fn, "tile.reduce")) if info is not None]
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
    ctas = {info.cluster_ctas for info in (analyze(op).info for op in find_ops(fn, "tile.reduce"))
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


def _module_chip(module: ir.Module) -> str | None:
    for op in module.body.operations:
        op = op.operation
        if op.name == "gpu.module" and "targets" in op.attributes:
            text = str(op.attributes["targets"])
            if 'chip = "' in text:
                return text.split('chip = "', 1)[1].split('"', 1)[0]
    return None


def verify_tile_ops(module: ir.Module) -> None:
    """Run ``tile-verify`` on ``module``, as tile-opt does right after parsing; raises
    ``ir.MLIRError`` (with one diagnostic per broken rule, at its op) on failure."""
    pm = PassManager("any", module.context)
    add_pass(pm, "tile-verify")
    pm.run(module.operation)


def _failure(stage: str, error: ir.MLIRError, text: str, source_name: str) -> CompileError:
    return CompileError(stage, format_errors(error, source_name, text), f"tile-opt {save_repro(text)}")


def parse(text: str, *, source_name: str = SOURCE) -> ir.Module:
    """Parse ``text`` in the current context and verify its tile ops.

    A syntax error is a ``CompileError`` of stage ``parse``, a broken tile rule one of
    stage ``tile-verify``: the message has each diagnostic at its place in ``text``
    (``<source>:3:5: error: ...``, the line and a caret), called ``source_name``.
    """
    try:
        module = ir.Module.parse(text)
    except ir.MLIRError as e:
        if not e.error_diagnostics:  # the parser said nothing: say what it stopped at
            message = format_diag(parse_failure(text, source_name), {source_name: text.split("\n")})
            raise CompileError("parse", message.rstrip("\n"), f"tile-opt {save_repro(text)}") from None
        raise _failure("parse", e, text, source_name) from None
    try:
        verify_tile_ops(module)
    except ir.MLIRError as e:
        raise _failure("tile-verify", e, text, source_name) from None
    return module


def lower_tile_ops(text: str, options: Options | None = None, *,
                   source_name: str = SOURCE) -> tuple[str, tuple[KernelSignature, ...]]:
    """Run only the tile lowerings (``tile-lower-copy``, ``tile-lower-reduction``): the
    scf/arith/memref/vector/gpu level the CPU interpreter executes. Returns the lowered text and the kernel signatures.
    Diagnostics call the text ``source_name``, and so do the lowered text's locations,
    where the interpreter's errors read it."""
    options = Options.from_mapping(options)
    with make_context(), ir.Location.unknown():
        module = parse(text, source_name=source_name)
        name_source(module.operation, source_name)
        signatures = kernel_signatures(module, dynamic=True)
        run_stages(module, STAGES[:TILE_STAGES], options, source=text, source_name=source_name)
        signatures = with_alignments(signatures, module)
        # with locations, so that the interpreter names ops where the user wrote them
        # (generic form: some custom parsers, nvvm.barrier's, cannot take a loc alias after them)
        return module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True), signatures


def lower_to_ptx(text: str, options: Options | None = None, *, source_name: str = SOURCE) -> Lowered:
    """Parse, lower and translate a module to PTX. Needs only MLIR (no ptxas).
    Diagnostics call the text ``source_name``."""
    options = Options.from_mapping(options)
    with make_context(), ir.Location.unknown():
        module = parse(text, source_name=source_name)
        declared = _module_chip(module)
        # An unset chip is the one the gpu.module's #nvvm.target names, else the default.
        chip = options.chip or declared or DEFAULT_CHIP
        if declared is None:
            run_stages(module, [("nvvm-attach-target", f"nvvm-attach-target{{chip={chip}}}")])
        elif declared != chip:
            raise CompileError(
                "target", f"the gpu.module targets {declared}, but {chip} was asked for", ""
            )
        options = options.replace(chip=chip)
        signatures = kernel_signatures(module)
        run_stages(module, STAGES[:TILE_STAGES], options, source=text, source_name=source_name)
        signatures = with_alignments(signatures, module)
        run_stages(module, STAGES[TILE_STAGES:], options, source=text, source_name=source_name,
                   ran=STAGES[:TILE_STAGES])
        ptx = []
        for op in module.body.operations:
            if op.operation.name == "gpu.binary":
                for obj in op.operation.attributes["objects"]:
                    ptx.append(gpu.ObjectAttr(obj).object.decode())
        if len(ptx) != 1:
            raise CompileError(
                "gpu-module-to-binary", f"expected exactly one gpu.module to compile, found {len(ptx)}", ""
            )
        return Lowered(ptx[0], signatures, chip)


def ptx_to_cubin(ptx: str, options: Options | None = None) -> bytes | None:
    """Assemble PTX with ptxas for ``options.chip`` (else ``DEFAULT_CHIP``); None when
    ptxas is not on PATH."""
    chip = Options.from_mapping(options).chip or DEFAULT_CHIP
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


def build_artifact(text: str, options: Options | None = None):
    """IR text -> a cache ``Artifact`` (PTX, cubin where ptxas exists, signatures)."""
    from .cache import Artifact

    options = Options.from_mapping(options)
    lowered = lower_to_ptx(text, options)
    cubin = ptx_to_cubin(lowered.ptx, options.replace(chip=lowered.chip))
    return Artifact(ptx=lowered.ptx, cubin=cubin, signatures=lowered.signatures, chip=lowered.chip, meta={})
