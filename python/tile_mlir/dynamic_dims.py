"""Dynamic dims of kernel arguments on the GPU: a memref argument whose extents come from
an integer argument of the same kernel.

The CUDA path passes a memref argument as a bare pointer (``use-bare-ptr-memref-call-conv``),
which carries no extents, so a ``memref<?x1000xf32>`` argument cannot cross it as such. A
kernel may instead say where each dynamic dim's extent is: the argument attribute
``tile.dims`` lists, for each dynamic dim of the memref in order, the position of the
kernel's integer (``index``, ``i32``, ``i64``) argument that holds it::

    gpu.func @k(%x: memref<?x1000xf32> {tile.dims = [2]}, %y: memref<?xf32> {tile.dims = [2]},
                %rows: index) kernel

``rewrite`` (run by ``compiler.lower_to_ptx`` after the tile lowerings) gives each such
argument a static type, its dynamic dims made 1 (one bare pointer still), and rebuilds the
memref at the top of the body with ``memref.reinterpret_cast`` from the extents, so that
everything below (``memref.dim`` among it) reads the dims from the integer arguments. The
launch passes the arrays and the extents as it passes any argument; the signature keeps
the dynamic dims (``None``), so a launch checks each array's rank and static dims, and
the caller gives extents that match the arrays (a larger one reads and writes past them).
The interpreter runs the kernel as written, reading the dims from the arrays.
"""

from __future__ import annotations

from mlir.dialects import arith, memref

from .errors import CompileError
from .ir import ir

ATTRIBUTE = "tile.dims"

__all__ = ["ATTRIBUTE", "bound", "mark", "rewrite"]


def mark(fn, dims: dict[int, list[int]]) -> None:
    """Give the arguments of the ``gpu.func`` ``fn`` their ``tile.dims``: argument
    position -> the positions of the integer arguments holding its dynamic dims (for a
    kernel being built, as ``tile_mlir.build`` makes them)."""
    fn = fn.operation
    n = len(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs)
    old = _arg_attrs(fn) or [ir.DictAttr.get({}) for _ in range(n)]
    i64 = ir.IntegerType.get_signless(64)
    new = []
    for i, attrs in enumerate(old):
        entries = {a.name: a.attr for a in attrs}
        if i in dims:
            entries[ATTRIBUTE] = ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in dims[i]])
        new.append(ir.DictAttr.get(entries))
    fn.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


def _kernels(module):
    for top in module.body.operations:
        if top.operation.name != "gpu.module":
            continue
        for op in top.operation.regions[0].blocks[0].operations:
            if op.operation.name == "gpu.func" and "gpu.kernel" in op.operation.attributes:
                yield op.operation


def _arg_attrs(fn) -> list:
    if "arg_attrs" not in fn.attributes:
        return []
    return [ir.DictAttr(a) for a in ir.ArrayAttr(fn.attributes["arg_attrs"])]


def _dims(fn, i: int, t, attrs) -> list[int] | None:
    """The argument positions of the dynamic dims of argument ``i``, checked; None
    without the attribute."""
    name = ir.StringAttr(fn.attributes["sym_name"]).value
    if i >= len(attrs) or ATTRIBUTE not in attrs[i]:
        return None
    where = f"kernel {name}: argument {i} ({t})"
    try:
        dims = [ir.IntegerAttr(d).value for d in ir.ArrayAttr(attrs[i][ATTRIBUTE])]
    except (ValueError, TypeError):
        raise CompileError("signature", f"{where}: {ATTRIBUTE} must be an array of argument positions", "") from None
    dynamic = sum(1 for d in t.shape if d == ir.ShapedType.get_dynamic_size())
    inputs = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs
    if len(dims) != dynamic:
        raise CompileError("signature", f"{where}: {ATTRIBUTE} names {len(dims)} argument(s) for its {dynamic}"
                           " dynamic dim(s)", "")
    for d in dims:
        if not (0 <= d < len(inputs)) or not isinstance(inputs[d], (ir.IndexType, ir.IntegerType)):
            raise CompileError("signature", f"{where}: {ATTRIBUTE} entry {d} is not an integer argument of the"
                               " kernel", "")
    return dims


def bound(module) -> bool:
    """True if the module has dynamic memref kernel arguments and every one says where
    its extents are (``tile.dims``, checked): ``rewrite`` makes them launchable. False
    otherwise (the signature then refuses the unbound one, as before)."""
    any_dynamic = False
    for fn in _kernels(module):
        attrs = _arg_attrs(fn)
        for i, t in enumerate(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs):
            if isinstance(t, ir.MemRefType) and not t.has_static_shape:
                if _dims(fn, i, ir.MemRefType(t), attrs) is None:
                    return False
                any_dynamic = True
    return any_dynamic


def rewrite(module) -> None:
    """Give every dynamic memref kernel argument with ``tile.dims`` a static type (its
    dynamic dims 1) and rebuild it in the body from the integer arguments (module
    docstring)."""
    for fn in _kernels(module):
        attrs = _arg_attrs(fn)
        fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        inputs = list(fn_type.inputs)
        block = fn.regions[0].blocks[0]
        changed = False
        for i, t in enumerate(inputs):
            if not isinstance(t, ir.MemRefType) or t.has_static_shape:
                continue
            t = ir.MemRefType(t)
            dims = _dims(fn, i, t, attrs)
            if dims is None:
                continue
            _rebuild(block, i, t, dims)
            inputs[i] = block.arguments[i].type
            changed = True
        if changed:
            fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(fn_type.results)))


def _rebuild(block, i: int, t, dims: list[int]) -> None:
    dynamic = ir.ShapedType.get_dynamic_size()
    static = [1 if d == dynamic else d for d in t.shape]
    arg = block.arguments[i]
    arg.set_type(ir.MemRefType.get(static, t.element_type, memory_space=t.memory_space))
    if any(d == dynamic for d in t.shape[1:]):
        raise CompileError("signature", f"argument {i} ({t}): only the leading dim may be dynamic", "")
    strides = [1] * t.rank
    for d in reversed(range(t.rank - 1)):
        strides[d] = strides[d + 1] * t.shape[d + 1]
    with ir.InsertionPoint.at_block_begin(block), ir.Location.unknown():
        index = ir.IndexType.get()
        extents = iter(dims)
        sizes = []
        for d in t.shape:
            if d != dynamic:
                continue
            v = block.arguments[next(extents)]
            sizes.append(v if isinstance(v.type, ir.IndexType) else arith.index_cast(index, v))
        cast = memref.reinterpret_cast(t, arg, [], sizes, [], static_offsets=[0],
                                       static_sizes=list(t.shape), static_strides=strides)
    arg.replace_all_uses_except(cast, cast.owner.operation)
