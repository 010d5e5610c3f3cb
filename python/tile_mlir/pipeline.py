"""The pipeline from ``tile.reduce`` to PTX and a cubin (SPEC section 7).

Stages, each its own pass pipeline so that a failure names its stage::

    tile-lower-reduction
    convert-scf-to-cf
    gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1})
    tile-forward-loop-annotations           (keeps "unroll full" for LLVM: registers
                                             indexed in loops stay registers)
    reconcile-unrealized-casts
    gpu-module-to-binary{format=isa}        -> PTX
    ptxas -arch=<chip>                      -> cubin, where ptxas is on PATH

A failing stage raises ``CompileError`` with the diagnostics and a one-line
repro (``tile-opt <saved input> --pass-pipeline='builtin.module(...)'``).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mlir.dialects import gpu
from mlir.passmanager import PassManager

from .errors import CompileError
from .ir import ir, make_context
from .passes import REGISTRY, make_pass
from .signature import MLIR_TO_NUMPY, ArgSpec, KernelSignature

# (stage name, textual pipeline element). Tile passes are looked up in REGISTRY.
STAGES = (
    ("tile-lower-reduction", "tile-lower-reduction"),
    ("convert-scf-to-cf", "convert-scf-to-cf"),
    ("convert-gpu-to-nvvm", "gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1})"),
    ("tile-forward-loop-annotations", "tile-forward-loop-annotations"),
    ("reconcile-unrealized-casts", "reconcile-unrealized-casts"),
    ("gpu-module-to-binary", "gpu-module-to-binary{format=isa}"),
)



@dataclass
class Lowered:
    ptx: str
    signatures: tuple[KernelSignature, ...]
    chip: str


def kernel_signatures(module: ir.Module) -> tuple[KernelSignature, ...]:
    """The launch signature of every ``gpu.func ... kernel`` in the module."""
    sigs = []

    def visit(op):
        if op.name == "gpu.func" and "gpu.kernel" in op.attributes:
            fn_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            name = ir.StringAttr(op.attributes["sym_name"]).value
            sigs.append(KernelSignature(name, tuple(_arg_spec(name, i, t) for i, t in enumerate(fn_type.inputs))))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return tuple(sigs)


def _arg_spec(kernel: str, i: int, t: ir.Type) -> ArgSpec:
    if isinstance(t, ir.MemRefType):
        elem = str(t.element_type)
        if elem not in MLIR_TO_NUMPY or not t.has_static_shape:
            raise CompileError("signature", f"kernel {kernel}: argument {i} has unsupported type {t}", "")
        return ArgSpec("memref", MLIR_TO_NUMPY[elem], tuple(t.shape))
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


def _save_repro(text: str) -> str:
    fd, path = tempfile.mkstemp(prefix="tile-mlir-repro-", suffix=".mlir")
    with open(fd, "w") as f:
        f.write(text)
    return path


def run_stages(module: ir.Module, stages, pass_options: dict | None = None, source: str | None = None) -> None:
    """Run ``stages`` ((name, pipeline element) pairs) on ``module``, one at a time.

    ``pass_options`` maps a tile pass's name to its options, e.g.
    ``{"tile-lower-reduction": {"fold": "tree"}}``.
    """
    ctx = module.context
    done: list[str] = []
    for name, element in stages:
        options = (pass_options or {}).get(element, {})
        spelled = element + ("{" + " ".join(f"{k}={v}" for k, v in options.items()) + "}" if options else "")
        pm = PassManager("builtin.module", ctx)
        if element in REGISTRY:
            info = REGISTRY[element]
            pm.add(make_pass(element, **options), name=info.class_name, argument=element)
        else:
            pm.add(element)
        messages: list[str] = []

        def collect(d):
            messages.append(f"{d.location}: {d.message}")
            return True

        handle = ctx.attach_diagnostic_handler(collect)
        try:
            pm.run(module.operation)
        except ir.MLIRError as e:
            messages.extend(f"{d.location}: {d.message}" for d in e.error_diagnostics)
            path = _save_repro(source if source is not None else str(module))
            repro = f"tile-opt {path} --pass-pipeline='builtin.module({','.join(done + [spelled])})'"
            raise CompileError(name, "\n".join(messages) or str(e), repro) from None
        finally:
            handle.detach()
        done.append(spelled)


def _parse(text: str) -> ir.Module:
    """Parse in the current context; a syntax or verifier error is a CompileError."""
    try:
        return ir.Module.parse(text)
    except ir.MLIRError as e:
        msg = "\n".join(f"{d.location}: {d.message}" for d in e.error_diagnostics) or str(e)
        raise CompileError("parse", msg, f"tile-opt {_save_repro(text)}") from None


def lower_tile_ops(text: str, fold: str = "linear") -> tuple[str, tuple[KernelSignature, ...]]:
    """Run only ``tile-lower-reduction``: the scf/arith/memref/gpu level the
    CPU interpreter executes. Returns the lowered text and the kernel signatures."""
    with make_context(), ir.Location.unknown():
        module = _parse(text)
        signatures = kernel_signatures(module)
        run_stages(module, STAGES[:1], {"tile-lower-reduction": {"fold": fold}}, source=text)
        # with locations, so that the interpreter names ops where the user wrote them
        return module.operation.get_asm(enable_debug_info=True), signatures


def lower_to_ptx(text: str, chip: str = "sm_90a", fold: str = "linear") -> Lowered:
    """Parse, lower and translate a module to PTX. Needs only MLIR (no ptxas)."""
    with make_context(), ir.Location.unknown():
        module = _parse(text)
        declared = _module_chip(module)
        if declared is None:
            run_stages(module, [("nvvm-attach-target", f"nvvm-attach-target{{chip={chip}}}")])
        elif declared != chip:
            raise CompileError(
                "target", f"the gpu.module targets {declared}, but {chip} was asked for", ""
            )
        signatures = kernel_signatures(module)
        run_stages(module, STAGES, {"tile-lower-reduction": {"fold": fold}}, source=text)
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


def ptx_to_cubin(ptx: str, chip: str) -> bytes | None:
    """Assemble PTX with ptxas; None when ptxas is not on PATH."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        src.write_text(ptx)
        r = subprocess.run([ptxas, f"-arch={chip}", "-o", str(out), str(src)], capture_output=True, text=True)
        if r.returncode != 0:
            raise CompileError("ptxas", r.stderr.strip(), f"ptxas -arch={chip} {src}")
        return out.read_bytes()


def build_artifact(text: str, arch: str = "sm_90a", fold: str = "linear"):
    """IR text -> a cache ``Artifact`` (PTX, cubin where ptxas exists, signatures)."""
    from .cache import Artifact

    lowered = lower_to_ptx(text, arch, fold)
    cubin = ptx_to_cubin(lowered.ptx, arch)
    return Artifact(ptx=lowered.ptx, cubin=cubin, signatures=lowered.signatures, arch=arch, meta={})
