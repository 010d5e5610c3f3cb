"""tile-check-target: check that each gpu.module's target can run what it holds, before
LLVM is asked to.

LLVM's NVPTX backend ends the process (``LLVM ERROR: Cannot select: intrinsic
%llvm.nvvm.shfl.sync.bfly.f32``, SIGABRT) on an instruction its target lacks, and on a
target it cannot build. This pass finds both first and reports them as diagnostics:

* at the gpu.module: a chip LLVM does not know, or features whose PTX ISA is older than
  the chip (``vocab.Target``, the one reading of the target that the lowering uses too);
* at each NVVM op whose instruction needs a newer chip or PTX ISA than the target gives
  (``vocab.NVVM_OP_NEEDS``): ``nvvm.shfl.sync`` needs PTX ISA 6.0, which LLVM uses by
  default only from sm_70 on, so a warp reduction for an ``#nvvm.target`` that names no
  chip (MLIR's default, sm_50, at PTX ISA 4.0) is an error at the reduction.

Run it after ``convert-gpu-to-nvvm`` (the ops are NVVM ops then), right before
``gpu-module-to-binary``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import file_location
from ..ir import ir
from ..vocab import Target
from .common import TilePass


@dataclass(frozen=True)
class TileCheckTarget(TilePass):
    argument = "tile-check-target"
    summary = ("Check that each gpu.module's #nvvm.target can run its NVVM ops "
               "(before gpu-module-to-binary)")

    def run(self, root, pass_) -> None:
        if not check(root):
            pass_.signal_pass_failure()


def check(root) -> bool:
    """Report every target problem under ``root`` (an op); True when there was none."""
    modules = []

    def find(op):
        if op.name == "gpu.module":
            modules.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(find)
    ok = True
    for module in modules:
        target = Target.of_gpu_module(module)
        if target is None or target.kind != "cuda":
            continue
        if target.problem is not None:
            module.location.emit_error(f"'gpu.module' op {target.problem}")
            ok = False
            continue
        ok &= _check_ops(module, target)
    return ok


def _check_ops(module, target: Target) -> bool:
    """One error per op name and source position (a reduction lowers to several
    shuffles) whose instruction the target lacks."""
    reported = set()

    def visit(op):
        why = target.lacks(op.name)
        place = str(file_location(op.location) or op.location)
        if why is not None and (op.name, place) not in reported:
            reported.add((op.name, place))
            op.location.emit_error(f"'{op.name}' op {why}")
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return not reported
