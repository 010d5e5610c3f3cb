"""Build a launchable kernel from Python: ``tile_mlir.build.kernel``.

A kernel that ``tile_mlir.compile`` can launch is a ``gpu.func ... kernel`` inside a
``gpu.module`` that names its chip (``vocab.Chip.nvvm_target``), inside a module
marked ``gpu.container_module``. ``kernel`` writes that frame and hands over the body::

    import tile_mlir
    from tile_mlir import build, ops

    with build.kernel("warp_sum", [("A", "memref<32xf32>"), ("B", "memref<32xf32>")]) as k:
        lane = k.lane_id()
        src, dst = k.registers([1], "f32"), k.registers([1], "f32")
        k.store(k.load(k.args["A"], [lane]), src, [0])
        ops.reduce(dst, src, kind="sum", exec_scope="warp", axes=[0],
                   src_layout="S[32 : 1@laneid]", dst_layout="S[1 : 1] + R[32 : 1@laneid]")
        k.store(k.load(dst, [0]), k.args["B"], [lane])

    kernels = tile_mlir.compile(k.module)
    kernels.warp_sum.launch(1, 32, a, b)

Inside the ``with`` block the builder's MLIR context, a location and an insertion point at
the end of the kernel's body are current, so any upstream builder (``arith.addf``,
``scf.for_``, ``gpu.shuffle``...) and ``tile_mlir.ops.reduce`` work as they do in any
MLIR Python script; ``k.ip`` is that insertion point. Each op is located at the line of
Python that built it (the bindings' ``loc_tracebacks``), so a diagnostic from
``tile-verify`` names the user's line. Leaving the block ends the body with
``gpu.return`` and verifies the module (a ``CompileError`` if it is not valid MLIR).

The helpers are small conveniences over the upstream builders: ``lane_id``,
``thread_id``, ``block_id``, ``index`` (an index constant), ``constant``, ``registers``
(a private register tile: ``memref.alloca`` in ``#gpu.address_space<private>``),
``load`` and ``store`` (indices may be ints). Types are MLIR type text (``"f32"``,
``"memref<32xf32>"``) or ``ir.Type``.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

from mlir.dialects import arith, gpu, memref
from mlir.dialects._ods_common import _cext

from . import ops
from .errors import BuildError, CompileError
from .ir import ir, make_context
from .vocab import DEFAULT_CHIP, Chip, address_space

__all__ = ["KernelBuilder", "kernel"]

TypeLike = Union[str, ir.Type]
IndexLike = Union[int, ir.Value]

# Ops take the location of the first Python frame outside these files: the user's line,
# not this module's helpers, tile_mlir.ops, or the bindings' own Python wrappers
# (arith.constant, scf.for_...). The bindings register their generated files the same way.
for _path in (__file__, ops.__file__, *Path(ir.__file__).parent.rglob("*.py")):
    _cext.globals.register_traceback_file_exclusion(str(_path))


class KernelBuilder:
    """The kernel being built; see the module docstring. Use it as a context manager
    (``kernel`` makes one): the body is built inside the ``with`` block.

    ``module``: the ``ir.Module`` (launchable once the block is left); ``func``: the
    ``gpu.func``; ``block``: its body; ``args``: its arguments by name, in order;
    ``context``: the MLIR context everything lives in.
    """

    def __init__(
        self,
        name: str,
        args: Mapping[str, TypeLike] | Iterable[tuple[str, TypeLike]],
        chip: str = DEFAULT_CHIP,
        module_name: str = "kernels",
    ):
        pairs = list(args.items() if isinstance(args, Mapping) else args)
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names):
            raise BuildError(f"kernel {name}: argument names must differ, got {names}")
        self.name, self.chip = name, Chip.parse(chip).name
        self.context = make_context()
        self._stack: ExitStack | None = None
        with self.context, ir.Location.name(name), ir.loc_tracebacks(max_depth=1):
            types = [_type(t) for _, t in pairs]
            self.module = ir.Module.create()
            self.module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
            with ir.InsertionPoint(self.module.body):
                target = ir.Attribute.parse(f'#nvvm.target<chip = "{self.chip}">')
                gpu_module = gpu.GPUModuleOp(module_name, targets=ir.ArrayAttr.get([target]))
            with ir.InsertionPoint(gpu_module.bodyRegion.blocks.append()):
                self.func = gpu.GPUFuncOp(ir.FunctionType.get(types, []), sym_name=name, kernel=True)
            locations = [ir.Location.name(n) for n in names]  # printed as loc("A")
            self.block = self.func.body.blocks.append(*types, arg_locs=locations)
        self.args: dict[str, ir.Value] = dict(zip(names, self.block.arguments))
        self.ip = ir.InsertionPoint(self.block)

    def __enter__(self) -> "KernelBuilder":
        stack = ExitStack()
        location = ir.Location.name(self.name, context=self.context)
        for manager in (self.context, location, ir.loc_tracebacks(max_depth=1), self.ip):
            stack.enter_context(manager)
        self._stack = stack
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None and not self._terminated():
                gpu.ReturnOp([])
        finally:
            self._stack.close()
            self._stack = None
        if exc_type is None:
            self._verify()
        return False

    def _terminated(self) -> bool:
        ops_ = self.block.operations
        return len(ops_) > 0 and ops_[len(ops_) - 1].operation.name == "gpu.return"

    def _verify(self) -> None:
        try:
            self.module.operation.verify()
        except ir.MLIRError as e:
            message = "\n".join(f"{d.location}: {d.message}" for d in e.error_diagnostics) or str(e)
            raise CompileError("verify", f"kernel {self.name}:\n{message}") from None

    # --- values -----------------------------------------------------------------------

    def lane_id(self) -> ir.Value:
        """This thread's lane in its warp (``gpu.lane_id``), an index."""
        return gpu.lane_id()

    def thread_id(self, dim: str = "x") -> ir.Value:
        """This thread's index in its block along ``dim`` (``gpu.thread_id``)."""
        return gpu.thread_id(_dimension(dim))

    def block_id(self, dim: str = "x") -> ir.Value:
        """This block's index in the grid along ``dim`` (``gpu.block_id``)."""
        return gpu.block_id(_dimension(dim))

    def index(self, value: IndexLike) -> ir.Value:
        """``value`` as an index: an ``arith.constant`` for an int, a Value as it is."""
        if isinstance(value, ir.Value):
            return value
        return arith.constant(ir.IndexType.get(), int(value))

    def constant(self, value: int | float, dtype: TypeLike) -> ir.Value:
        """An ``arith.constant`` of ``dtype`` (``"f32"``, ``"i32"``...)."""
        return arith.constant(_type(dtype), value)

    # --- memory ---------------------------------------------------------------------

    def registers(self, shape: Sequence[int], dtype: TypeLike) -> ir.Value:
        """A private register tile: ``memref.alloca() : memref<shape x dtype,
        #gpu.address_space<private>>``, what ``tile.reduce`` reduces."""
        space = ir.Attribute.parse(address_space("local"))
        return memref.alloca(ir.MemRefType.get(list(shape), _type(dtype), memory_space=space), [], [])

    def load(self, ref: ir.Value, indices: Sequence[IndexLike]) -> ir.Value:
        """``memref.load ref[indices]``; int indices become index constants."""
        return memref.load(ref, [self.index(i) for i in indices])

    def store(self, value: ir.Value, ref: ir.Value, indices: Sequence[IndexLike]) -> None:
        """``memref.store value, ref[indices]``; int indices become index constants."""
        memref.store(value, ref, [self.index(i) for i in indices])


def kernel(
    name: str,
    args: Mapping[str, TypeLike] | Iterable[tuple[str, TypeLike]],
    *,
    chip: str = DEFAULT_CHIP,
    module_name: str = "kernels",
) -> KernelBuilder:
    """A builder for the kernel ``name`` with ``args`` ((name, type) pairs, or a dict),
    in ``gpu.module @<module_name>`` for ``chip``. Build its body in a ``with`` block::

        with build.kernel("k", [("A", "memref<32xf32>")], chip="sm_80") as k:
            ...
        tile_mlir.compile(k.module)
    """
    return KernelBuilder(name, args, chip=chip, module_name=module_name)


def _type(t: TypeLike) -> ir.Type:
    if isinstance(t, ir.Type):
        return t
    try:
        return ir.Type.parse(t)
    except (ir.MLIRError, TypeError) as e:
        raise BuildError(f"not an MLIR type: {t!r} ({str(e).splitlines()[-1].strip()})") from None


def _dimension(dim: str):
    try:
        return getattr(gpu.Dimension, dim)
    except AttributeError:
        raise BuildError(f"dim must be x, y or z, got {dim!r}") from None
