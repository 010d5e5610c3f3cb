"""Build a launchable kernel from Python: ``tile_mlir.build.kernel``.

A kernel that ``tile_mlir.compile`` can launch is a ``gpu.func ... kernel`` inside a
``gpu.module`` that names its chip (``vocab.Chip.nvvm_target``), inside a module
marked ``gpu.container_module``. ``kernel`` writes that frame and hands over the body::

    import tile_mlir
    from mlir.dialects import arith
    from tile_mlir import build, ops

    with build.kernel("row_sums", {"X": "memref<4x256xf32>", "Y": "memref<4xf32>"},
                      known_block_size=32) as k:
        x, part, total = k.registers([8], "f32"), k.registers([1], "f32"), k.registers([1], "f32")
        row = k.block_id()
        ops.copy(x, k.args["X"], [row, 0], exec_scope="warp", layout="S[(1, (8, 32)) : (1, (1, 1@laneid))]")
        for i, acc, s in k.range(8, carry=k.constant(0.0, "f32")):
            k.yield_(arith.addf(acc, k.load(x, [i])))
        k.store(s, part, [0])
        ops.reduce(total, part, kind="sum", exec_scope="warp", axes=[0],
                   src_layout="S[32 : 1@laneid]", dst_layout="S[1 : 1] + R[32 : 1@laneid]")
        ops.copy(k.args["Y"], total, [row], exec_scope="warp", layout="S[1 : 1] + R[32 : 1@laneid]")

    kernels = tile_mlir.compile(k.module)
    kernels.row_sums.launch(4, 32, x, y)

Inside the ``with`` block the builder's MLIR context, a location and an insertion point at
the end of the kernel's body are current, so every upstream builder (``arith.addf``,
``math.exp``, ``vector.reduction``...) and ``tile_mlir.ops`` (``reduce``, ``copy``) work
as in any MLIR Python script. Each op is located at the line of Python that built it (the
bindings' ``loc_tracebacks``), so a diagnostic names the user's line; ``ops.reduce`` and
``ops.copy`` check their op as they build it, with tile-opt's rules and messages.
Leaving the block ends the body with ``gpu.return`` and verifies the module.

The builder's helpers are thin conveniences over the upstream builders:

* the frame: ``known_block_size`` and ``known_cluster_size`` (an int or up to three),
  ``align`` (``llvm.align`` bytes of every memref argument);
* where a thread is: ``lane_id``, ``warp_id``, ``thread_id``, ``block_id``,
  ``block_dim``, ``grid_dim``, ``cluster_rank``, ``cluster_block_id``, ``cluster_id``
  (indices);
* values: ``index``, ``constant`` (scalars and vectors), ``splat``, ``cast`` (bf16 <-> f32
  and any float or integer width, index <-> integer; a no-op for the same type),
  ``reduction`` (``vector.reduction``);
* memory: ``registers`` (a private register tile), ``shared`` (a workgroup buffer),
  ``load``/``store`` and ``vload``/``vstore`` (indices may be ints);
* control flow: ``range`` (``scf.for``, with loop-carried values: ``for i, acc, result
  in k.range(n, carry=x)``), ``yield_``, ``if_`` (``scf.if``, a context manager).

Types are MLIR type text (``"f32"``, ``"memref<32xf32>"``, ``"vector<4xf32>"``) or
``ir.Type``. docs/builder.md shows a whole softmax written this way.
"""

from __future__ import annotations


from contextlib import ExitStack
from pathlib import Path
from typing import Iterable, Mapping, Sequence, Union

from mlir.dialects import arith, gpu, memref, nvvm, scf, vector
from mlir.dialects._ods_common import _cext

from . import ops
from .diagnostics import to_diag
from .errors import BuildError, CompileError
from .ir import ir, make_context
from .vocab import DEFAULT_CHIP, WARP_SIZE, Chip, address_space

__all__ = ["KernelBuilder", "kernel"]

TypeLike = Union[str, ir.Type]
IndexLike = Union[int, ir.Value]

# Ops take the location of the first Python frame outside these files: the user's line,
# not this module's helpers, tile_mlir.ops, or the bindings' own Python wrappers
# (arith.constant, scf.for_...). The bindings register their generated files the same way.
def helpers(path: str) -> None:
    """Locate the ops that the functions of the Python file ``path`` build at the line
    that called them, as the builder's own helpers are: for a module of building steps
    (``tile_mlir.kernels.rows``) whose ops belong to the kernel that uses them."""
    _cext.globals.register_traceback_file_exclusion(str(path))


for _path in (__file__, ops.__file__, *Path(ir.__file__).parent.rglob("*.py")):
    helpers(_path)

_UNROLL = "#llvm.loop_annotation<unroll = <full = true>>"


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
        known_block_size: int | Sequence[int] | None = None,
        known_cluster_size: int | Sequence[int] | None = None,
        align: int | None = None,
        min_ctas_per_sm: int | None = None,
    ):
        pairs = list(args.items() if isinstance(args, Mapping) else args)
        names = [n for n, _ in pairs]
        if len(set(names)) != len(names):
            raise BuildError(f"kernel {name}: argument names must differ, got {names}")
        self.name, self.chip = name, Chip.parse(chip).name
        self.context = make_context()
        self._stack: ExitStack | None = None
        self._shared = 0
        with self.context, ir.Location.name(name), ir.loc_tracebacks(max_depth=1):
            types = [_type(t) for _, t in pairs]
            self.module = ir.Module.create()
            self.module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
            with ir.InsertionPoint(self.module.body):
                target = ir.Attribute.parse(f'#nvvm.target<chip = "{self.chip}">')
                self.gpu_module = gpu.GPUModuleOp(module_name, targets=ir.ArrayAttr.get([target]))
            with ir.InsertionPoint(self.gpu_module.bodyRegion.blocks.append()):
                self.func = gpu.GPUFuncOp(ir.FunctionType.get(types, []), sym_name=name, kernel=True)
            attributes = self.func.operation.attributes
            for key, dims in (("known_block_size", known_block_size), ("known_cluster_size", known_cluster_size)):
                if dims is not None:
                    attributes[key] = ir.DenseI32ArrayAttr.get(_dims(key, dims))
            if min_ctas_per_sm is not None:
                if min_ctas_per_sm < 1:
                    raise BuildError(f"kernel {name}: min_ctas_per_sm must be at least 1, got {min_ctas_per_sm}")
                # PTX .minnctapersm: ptxas keeps the registers low enough for that many CTAs
                attributes["nvvm.minctasm"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), min_ctas_per_sm)
            if align is not None:
                aligned = {"llvm.align": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), align)}
                attributes["arg_attrs"] = ir.ArrayAttr.get(
                    [ir.DictAttr.get(aligned if isinstance(t, ir.MemRefType) else {}) for t in types])
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
            if exc_type is None and not _terminated(self.block, "gpu.return"):
                gpu.ReturnOp([])
        finally:
            self._stack.close()
            self._stack = None
        if exc_type is None:
            self._verify()
        return False

    def _verify(self) -> None:
        try:
            self.module.operation.verify()
        except ir.MLIRError as e:
            message = ops.located([to_diag(d, "-", op_notes=False) for d in e.error_diagnostics]) or str(e)
            raise CompileError("verify", f"kernel {self.name}:\n{message}") from None

    # --- where the thread is ----------------------------------------------------------

    def lane_id(self) -> ir.Value:
        """This thread's lane in its warp (``gpu.lane_id``), an index."""
        return gpu.lane_id()

    def warp_id(self) -> ir.Value:
        """This thread's warp in its block, ``thread_id x / 32`` (a one-dimensional block:
        the warps a layout's ``warpid`` counts)."""
        return arith.divui(gpu.thread_id(gpu.Dimension.x), self.index(WARP_SIZE))

    def thread_id(self, dim: str = "x") -> ir.Value:
        """This thread's index in its block along ``dim`` (``gpu.thread_id``)."""
        return gpu.thread_id(_dimension(dim))

    def block_id(self, dim: str = "x") -> ir.Value:
        """This block's index in the grid along ``dim`` (``gpu.block_id``)."""
        return gpu.block_id(_dimension(dim))

    def block_dim(self, dim: str = "x") -> ir.Value:
        """The threads of a block along ``dim`` (``gpu.block_dim``)."""
        return gpu.block_dim(_dimension(dim))

    def grid_dim(self, dim: str = "x") -> ir.Value:
        """The blocks of the grid along ``dim`` (``gpu.grid_dim``)."""
        return gpu.grid_dim(_dimension(dim))

    def cluster_rank(self) -> ir.Value:
        """This block's rank in its thread-block cluster (PTX ``%cluster_ctarank``, what a
        layout's ``cta_in_cluster`` counts), an index."""
        return arith.index_cast(ir.IndexType.get(), nvvm.read_ptx_sreg_cluster_ctarank(ir.IntegerType.get_signless(32)))

    def cluster_block_id(self, dim: str = "x") -> ir.Value:
        """This block's index in its cluster along ``dim`` (``gpu.cluster_block_id``)."""
        return gpu.cluster_block_id(_dimension(dim))

    def cluster_id(self, dim: str = "x") -> ir.Value:
        """This block's cluster's index in the grid along ``dim`` (``gpu.cluster_id``)."""
        return gpu.cluster_id(_dimension(dim))

    # --- values -----------------------------------------------------------------------

    def index(self, value: IndexLike) -> ir.Value:
        """``value`` as an index: an ``arith.constant`` for an int, a Value as it is."""
        if isinstance(value, ir.Value):
            return value
        return arith.constant(ir.IndexType.get(), int(value))

    def constant(self, value, dtype: TypeLike) -> ir.Value:
        """An ``arith.constant`` of ``dtype``: a scalar (``"f32"``, ``"i32"``, ``"index"``),
        or a vector (``"vector<4xf32>"``) of one value or of a list of values."""
        t = _type(dtype)
        if isinstance(t, ir.VectorType):
            element = t.element_type
            if isinstance(value, (list, tuple)):
                attrs = [_scalar_attr(v, element) for v in value]
                return arith.constant(t, ir.DenseElementsAttr.get(attrs, type=t))
            return arith.constant(t, ir.DenseElementsAttr.get_splat(t, _scalar_attr(value, element)))
        return arith.constant(t, _scalar_attr(value, t))

    def splat(self, value: ir.Value, n: int) -> ir.Value:
        """A vector of ``n`` copies of the scalar ``value`` (``vector.broadcast``)."""
        return vector.broadcast(ir.VectorType.get([n], value.type), value)

    def cast(self, value: ir.Value, dtype: TypeLike) -> ir.Value:
        """``value`` (a scalar or a vector) with the element type ``dtype``: ``arith.extf``
        or ``truncf`` between floats (bf16 <-> f32), ``extsi``/``trunci`` between integers,
        ``index_cast`` to and from index, ``sitofp``/``fptosi``; ``value`` itself when it
        has that type already."""
        source = value.type
        element = source.element_type if isinstance(source, ir.VectorType) else source
        target = _type(dtype)
        result = ir.VectorType.get(source.shape, target) if isinstance(source, ir.VectorType) else target
        if element == target:
            return value
        f_in, f_out = isinstance(element, ir.FloatType), isinstance(target, ir.FloatType)
        if f_in and f_out:
            wider = ir.FloatType(target).width > ir.FloatType(element).width
            return (arith.extf if wider else arith.truncf)(result, value)
        if f_in or f_out:
            return (arith.fptosi if f_in else arith.sitofp)(result, value)
        if isinstance(element, ir.IndexType) or isinstance(target, ir.IndexType):
            return arith.index_cast(result, value)
        wider = ir.IntegerType(target).width > ir.IntegerType(element).width
        return (arith.extsi if wider else arith.trunci)(result, value)

    def reduction(self, kind: str, value: ir.Value, acc: ir.Value | None = None) -> ir.Value:
        """``vector.reduction <kind>`` of the vector ``value`` (into ``acc``, if given):
        kind ``add``, ``mul``, ``maximumf``, ``minimumf``, ``maxnumf``, ``maxsi``..."""
        try:
            combining = getattr(vector.CombiningKind, kind.upper())
        except AttributeError:
            known = ", ".join(str(k) for k in vector.CombiningKind)
            raise BuildError(f"reduction kind must be one of {known}; got {kind!r}") from None
        return vector.reduction(ir.VectorType(value.type).element_type, combining, value, acc=acc)

    # --- order ----------------------------------------------------------------------

    def warp_barrier(self) -> None:
        """``nvvm.bar.warp.sync -1`` (``__syncwarp()``): the 32 lanes of the warp wait for
        each other, and their memory accesses before it are ordered before those after it
        (PTX ISA, ``bar.warp.sync``: it "also guarantee[s] memory ordering among threads
        participating in barrier"). Every lane of the warp must reach it."""
        nvvm.bar_warp_sync(arith.constant(ir.IntegerType.get_signless(32), -1))

    # --- memory ---------------------------------------------------------------------

    def registers(self, shape: Sequence[int], dtype: TypeLike) -> ir.Value:
        """A private register tile: ``memref.alloca() : memref<shape x dtype,
        #gpu.address_space<private>>``, what ``tile.reduce`` reduces."""
        space = ir.Attribute.parse(address_space("local"))
        return memref.alloca(ir.MemRefType.get(list(shape), _type(dtype), memory_space=space), [], [])

    def shared(self, shape: Sequence[int], dtype: TypeLike, *, alignment: int = 16) -> ir.Value:
        """A workgroup (shared memory) buffer of the block: a ``memref.global`` in
        ``#gpu.address_space<workgroup>`` in the kernel's gpu.module, aligned to
        ``alignment`` bytes, read here with ``memref.get_global``."""
        space = ir.Attribute.parse(address_space("shared"))
        t = ir.MemRefType.get(list(shape), _type(dtype), memory_space=space)
        name = f"{self.name}_shared_{self._shared}"
        self._shared += 1
        with ir.InsertionPoint.at_block_begin(self.gpu_module.bodyRegion.blocks[0]):
            memref.GlobalOp(name, ir.TypeAttr.get(t), sym_visibility="private", alignment=alignment)
        return memref.get_global(t, name)

    def dynamic_shared(self, shape: Sequence[int], dtype: TypeLike, *, offset: int = 0) -> ir.Value:
        """A view of the launch's dynamic shared memory from byte ``offset``: ``memref.view``
        of ``gpu.dynamic_shared_memory`` as ``memref<shape x dtype, workgroup>``. A launch
        gives the bytes (``shared_mem=``: at least ``offset`` plus the view's)."""
        space = ir.Attribute.parse(address_space("shared"))
        raw = gpu.DynamicSharedMemoryOp(ir.MemRefType.get([ir.ShapedType.get_dynamic_size()],
                                                          ir.IntegerType.get_signless(8), memory_space=space))
        t = ir.MemRefType.get(list(shape), _type(dtype), memory_space=space)
        return memref.view(t, raw.result, self.index(offset), [])

    def load(self, ref: ir.Value, indices: Sequence[IndexLike]) -> ir.Value:
        """``memref.load ref[indices]``; int indices become index constants."""
        return memref.load(ref, [self.index(i) for i in indices])

    def store(self, value: ir.Value, ref: ir.Value, indices: Sequence[IndexLike]) -> None:
        """``memref.store value, ref[indices]``; int indices become index constants."""
        memref.store(value, ref, [self.index(i) for i in indices])

    def vload(self, ref: ir.Value, indices: IndexLike | Sequence[IndexLike], n: int) -> ir.Value:
        """``vector.load``: ``n`` consecutive elements of ``ref`` from ``indices`` (one
        index for a one-dimensional ``ref``)."""
        element = ir.MemRefType(ref.type).element_type
        return vector.load(ir.VectorType.get([n], element), ref, [self.index(i) for i in _indices(indices)])

    def vstore(self, value: ir.Value, ref: ir.Value, indices: IndexLike | Sequence[IndexLike]) -> None:
        """``vector.store``: the vector ``value`` into ``ref`` from ``indices``."""
        vector.store(value, ref, [self.index(i) for i in _indices(indices)])

    # --- control flow -----------------------------------------------------------------

    def range(self, start: IndexLike, stop: IndexLike | None = None, step: IndexLike = 1, *,
              carry: ir.Value | Sequence[ir.Value] = (), unroll: bool = False, unsigned: bool = False):
        """An ``scf.for`` from ``start`` to ``stop`` by ``step`` (``range(n)``: 0 to n),
        written as a Python ``for`` whose body runs once, to build the loop's body::

            for i in k.range(0, 16, 4): ...              # the body's scf.yield is added
            for i, acc, total in k.range(8, carry=zero):
                k.yield_(arith.addf(acc, ...))          # the next acc
            # total: the loop's result
            for i, (m, s), (m_end, s_end) in k.range(K, carry=[a, b]): ...

        Without ``carry`` the loop variable is the index; with it, the index, the
        carried value(s) inside the body and the loop's result(s) after it (one value,
        or a tuple for a list), as upstream's ``scf.for_``. A loop that carries values
        ends its body with ``k.yield_``. ``unroll`` asks LLVM to unroll it fully.
        ``unsigned`` compares the index with ``stop`` unsigned (``unsignedCmp``), as
        ``tile.copy`` tests an index against a dynamic extent: where ``stop`` is that
        extent, LLVM then drops the copies' tests inside the loop."""
        if stop is None:
            start, stop = 0, start
        values = [carry] if isinstance(carry, ir.Value) else list(carry)
        loop = scf.ForOp(self.index(start), self.index(stop), self.index(step), values)
        if unsigned:
            loop.operation.attributes["unsignedCmp"] = ir.UnitAttr.get()
        if unroll:
            loop.operation.attributes["llvm.loop_annotation"] = ir.Attribute.parse(_UNROLL)
        body, inner = loop.body, tuple(loop.inner_iter_args)
        with ir.InsertionPoint(body):
            if not values:
                yield loop.induction_variable
            elif isinstance(carry, ir.Value):
                yield loop.induction_variable, inner[0], loop.results[0]
            else:
                yield loop.induction_variable, inner, tuple(loop.results)
            if not _terminated(body, "scf.yield"):
                if values:
                    raise BuildError(f"a loop that carries {len(values)} value(s) ends its body with k.yield_(...)")
                scf.YieldOp([])

    def yield_(self, *values: ir.Value) -> None:
        """``scf.yield values``: end a loop's (or an ``if_``'s) body with its results."""
        scf.YieldOp(list(values))

    def if_(self, condition: ir.Value, results: Sequence[TypeLike] = (), *, else_: bool = False) -> "If":
        """An ``scf.if`` on the i1 ``condition``; ``with`` it to build the then-branch
        (ended by its ``scf.yield``, added without ``results``), ``with ... .else_()``
        for the else-branch; ``.results`` are its results::

            with k.if_(again):
                ops.copy(...)
            choice = k.if_(c, ["f32"])
            with choice: k.yield_(a)
            with choice.else_(): k.yield_(b)
            value = choice.results[0]
        """
        types = [_type(t) for t in results]
        return If(scf.IfOp(condition, types, has_else=else_ or bool(types)))


class If:
    """An ``scf.if`` being built (``KernelBuilder.if_``): ``with`` it to build the
    then-branch, ``with`` its ``else_()`` for the else-branch."""

    def __init__(self, op, block=None):
        self.op = op
        self._block = op.then_block if block is None else block
        self._ip: ir.InsertionPoint | None = None

    @property
    def results(self) -> tuple:
        return tuple(self.op.results)

    def else_(self) -> "If":
        """The else-branch, to build under ``with``."""
        if self.op.else_block is None:
            raise BuildError("this scf.if has no else-branch: make it with k.if_(cond, else_=True)")
        return If(self.op, self.op.else_block)

    def __enter__(self) -> "If":
        self._ip = ir.InsertionPoint(self._block)
        self._ip.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None and not _terminated(self._block, "scf.yield"):
                if len(self.op.results):
                    raise BuildError(f"an scf.if with {len(self.op.results)} result(s) ends each branch with k.yield_(...)")
                scf.YieldOp([])
        finally:
            self._ip.__exit__(exc_type, exc, tb)
        return False


def kernel(
    name: str,
    args: Mapping[str, TypeLike] | Iterable[tuple[str, TypeLike]],
    *,
    chip: str = DEFAULT_CHIP,
    module_name: str = "kernels",
    known_block_size: int | Sequence[int] | None = None,
    known_cluster_size: int | Sequence[int] | None = None,
    align: int | None = None,
    min_ctas_per_sm: int | None = None,
) -> KernelBuilder:
    """A builder for the kernel ``name`` with ``args`` ((name, type) pairs, or a dict),
    in ``gpu.module @<module_name>`` for ``chip``; ``known_block_size`` and
    ``known_cluster_size`` fix the block and the cluster (an int: along x), and ``align``
    gives every memref argument ``llvm.align`` (bytes); ``min_ctas_per_sm`` asks ptxas to
    keep the registers low enough for that many CTAs on an SM (``nvvm.minctasm``, PTX
    ``.minnctapersm``). Build its body in a ``with``
    block::

        with build.kernel("k", [("A", "memref<32xf32>")], chip="sm_80") as k:
            ...
        tile_mlir.compile(k.module)
    """
    return KernelBuilder(name, args, chip=chip, module_name=module_name, known_block_size=known_block_size,
                         known_cluster_size=known_cluster_size, align=align, min_ctas_per_sm=min_ctas_per_sm)


def _type(t: TypeLike) -> ir.Type:
    if isinstance(t, ir.Type):
        return t
    try:
        return ir.Type.parse(t)
    except (ir.MLIRError, TypeError) as e:
        raise BuildError(f"not an MLIR type: {t!r} ({str(e).splitlines()[-1].strip()})") from None


def _scalar_attr(value, t: ir.Type) -> ir.Attribute:
    if isinstance(t, ir.FloatType):
        return ir.FloatAttr.get(t, float(value))
    return ir.IntegerAttr.get(t, int(value))


def _dims(key: str, dims) -> list[int]:
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and d >= 1 for d in dims):
        raise BuildError(f"{key} must be one to three positive ints, got {dims}")
    return dims + [1] * (3 - len(dims))


def _indices(indices) -> list:
    return list(indices) if isinstance(indices, (list, tuple)) else [indices]


def _terminated(block, name: str) -> bool:
    ops_ = block.operations
    return len(ops_) > 0 and ops_[len(ops_) - 1].operation.name == name


def _dimension(dim: str):
    try:
        return getattr(gpu.Dimension, dim)
    except AttributeError:
        raise BuildError(f"dim must be x, y or z, got {dim!r}") from None
