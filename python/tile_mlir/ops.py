"""Build tile ops from Python.

IRDL-defined ops have no generated OpView classes, so ``reduce`` builds the
generic op with ``ir.Operation.create``. Use it under an insertion point and a
location, like any upstream builder::

    from tile_mlir import ops
    with ctx, ir.InsertionPoint(block), ir.Location.unknown():
        ops.reduce(dst, src, kind="sum", exec_scope="warp", axes=[0],
                   src_layout="S[32 : 1@laneid]", dst_layout="S[1 : 1] + R[32 : 1@laneid]")

Several operands (docs/spec.md, "Combiner reductions") are lists, dsts then srcs, with a
``combine`` callable that builds the combiner from the left and right value lists with
upstream builders and returns the combined values::

    ops.reduce([dm, ds], [sm, ss], combine=online_softmax, exec_scope="warp", ...)
    ops.reduce([dv, di], sv, kind="argmax", exec_scope="warp", ...)

The op is not checked here; run ``tile-verify`` (or ``tile_mlir.analysis.analyze``)
for the semantic rules, as ``tile-opt`` does after parsing.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence, Union

from mlir.dialects import func

from .errors import BuildError
from .ir import ir, layout_attr
from .vocab import MAX_OPERAND_PAIRS, reduce_op_name

Values = Union[ir.Value, Sequence[ir.Value]]
Combine = Callable[[list, list], object]


def reduce(
    dst: Values,
    src: Values,
    *,
    kind: str | None = None,
    combine: Combine | str | None = None,
    exec_scope: str,
    axes: Sequence[int] | None = None,
    accum: bool | None = None,
    src_layout: str | None = None,
    dst_layout: str | None = None,
    dispatch: str | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Operation:
    """Create ``"tile.reduce"(dsts..., srcs...)`` (``tile.reduce<k>`` for k operand pairs);
    omitted attributes take their defaults (docs/spec.md, "Attributes").

    ``dst`` and ``src`` are values or lists of values. Give ``kind`` (a named kind, or
    ``"argmax"``/``"argmin"`` with ``dst = [value, index]``) or ``combine``: a callable
    ``combine(left, right)`` that receives the k left and the k right values (block
    arguments of the combiner function it builds, in the op's ``gpu.module``) and
    returns the k combined values (a list, or one value), built with upstream builders;
    or the name of a ``func.func`` already in the module."""
    dsts, srcs = _values(dst), _values(src)
    if (kind is None) == (combine is None):
        raise BuildError("tile.reduce combines with a kind or with combine=..., exactly one of them")
    if combine is not None and len(dsts) != len(srcs):
        raise BuildError(f"with a combiner, give as many srcs as dsts: got {len(dsts)} dst(s) and {len(srcs)} src(s)")
    if len(srcs) > MAX_OPERAND_PAIRS:
        raise BuildError(f"at most {MAX_OPERAND_PAIRS} operand pairs, got {len(srcs)}")
    attrs = {"exec_scope": ir.StringAttr.get(exec_scope)}
    if kind is not None:
        attrs["kind"] = ir.StringAttr.get(kind)
    else:
        name = combine if isinstance(combine, str) else _combiner(combine, dsts, loc, ip)
        attrs["combiner"] = ir.FlatSymbolRefAttr.get(name)
    if axes is not None:
        attrs["axes"] = ir.DenseI64ArrayAttr.get(list(axes))
    if accum is not None:
        attrs["accum"] = ir.BoolAttr.get(accum)
    if src_layout is not None:
        attrs["src_layout"] = layout_attr(src_layout)
    if dst_layout is not None:
        attrs["dst_layout"] = layout_attr(dst_layout)
    if dispatch is not None:
        attrs["dispatch"] = ir.StringAttr.get(dispatch)
    return ir.Operation.create(
        reduce_op_name(len(srcs) if combine is not None else 1), results=[], operands=[*dsts, *srcs],
        attributes=attrs, loc=loc, ip=ip,
    )


def _values(v: Values) -> list[ir.Value]:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _combiner(combine: Combine, dsts: list[ir.Value], loc, ip) -> str:
    """Build ``combine`` into a private ``func.func`` in the symbol table around the
    insertion point, just before the op that holds it; return its name (the callable's,
    when it is an identifier, else ``tile_combiner``; made unique with ``_<n>``)."""
    ip = ip or ir.InsertionPoint.current
    top, table = ip.block.owner, None
    while top is not None:
        parent = top.parent
        if parent is None:
            break
        try:
            table = ir.SymbolTable(parent.operation)
            break
        except (TypeError, ValueError):
            top = parent.operation
    if table is None:
        raise BuildError("combine=...: the insertion point is not inside a module (the combiner is a func.func there)")
    types = [ir.MemRefType(v.type).element_type for v in dsts]
    base = getattr(combine, "__name__", "")
    base = base if re.fullmatch(r"[A-Za-z_][\w$.]*", base) else "tile_combiner"
    name, n = base, 0
    while name in table:
        n += 1
        name = f"{base}_{n}"
    with loc or ir.Location.current:
        fn = func.FuncOp(name, (types * 2, types), visibility="private", ip=ir.InsertionPoint(top))
        block = fn.add_entry_block()
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            result = combine(args[: len(types)], args[len(types):])
            values = list(result) if isinstance(result, (list, tuple)) else [result]
            problem = _result_problem(values, types)
            if problem is None:
                func.ReturnOp(values)
    if problem is not None:
        fn.operation.erase()
        raise BuildError(f"combine={base}: {problem}")
    return name


def _result_problem(values: list, types: list[ir.Type]) -> str | None:
    """Why ``values`` (what a combine callable returned) are not k values of ``types``."""
    if len(values) != len(types):
        return (f"returned {len(values)} value(s), but the op reduces {len(types)} operand(s): return one "
                f"combined value per operand ({', '.join(map(str, types))})")
    for j, (v, t) in enumerate(zip(values, types)):
        if not isinstance(v, ir.Value):
            return f"value {j} is a {type(v).__name__}, not an MLIR value: build it with upstream builders"
        if v.type != t:
            return f"value {j} is {v.type}, but operand {j} is {t}"
    return None
