"""Build tile ops from Python: ``reduce`` and ``copy``, checked as tile-opt checks them.

IRDL-defined ops have no generated OpView classes, so each function builds the generic
op with ``ir.Operation.create``, under the current insertion point and location, like
any upstream builder (inside ``tile_mlir.build.kernel``'s ``with`` block, the location
is the user's line of Python)::

    from tile_mlir import ops
    ops.copy(regs, X, [row, col], exec_scope="cta", layout=ROWS, padding=float("-inf"))
    ops.reduce(dst, src, kind="sum", exec_scope="warp", axes=[0],
               src_layout="S[32 : 1@laneid]", dst_layout="S[1 : 1] + R[32 : 1@laneid]")

An attribute is given as a Python value, which becomes the attribute tile-opt would read
from the same text: a ``str`` a string (``kind = "sum"``), an ``int`` an ``i64``, a
``bool`` a bool, a list of ints an ``array<i64: ...>``, a layout a ``#tile.layout<"...">``
(its text, or a ``TileLayout``), a padding a value of the memory's element type; an
``ir.Attribute`` is taken as it is. The op is then checked by the rules tile-opt checks,
with the same messages: the dialect's verifier (IRDL, in the words of
``tile_mlir.irdl_messages``), then the semantic rules (``tile_mlir.checks``). A broken
rule removes the op and raises ``BuildError`` at the op's location, as tile-opt prints
it::

    softmax.py:12:8: error: 'tile.reduce' op kind must be one of "sum", "max", ...; got "prod"
            ops.reduce(q, p, kind="prod", exec_scope="cta", axes=[1])
            ^

``dst`` and ``src`` are each a value, or a list of values (operands in that order).
Several operands (docs/spec.md, "Combiner reductions") combine with ``kind="argmax"``
(``dst = [value, index]``) or with a ``combine`` callable, which builds the combiner
function from the k left and k right values with upstream builders and returns the k
combined values::

    ops.reduce([dm, ds], [sm, ss], combine=online_softmax, exec_scope="warp", ...)
    ops.reduce([dv, di], sv, kind="argmax", exec_scope="warp", ...)
"""

from __future__ import annotations

import linecache
import re
from contextlib import nullcontext
from typing import Callable, Sequence, Union

from mlir.dialects import arith, func

from .checks import problems
from .diagnostics import Diag, Place, file_location, format_diag, to_diag
from .errors import BuildError
from .ir import PRIVATE, ir, layout_attr
from .layout import TileLayout
from .vocab import MAX_OPERAND_PAIRS, reduce_op_name

__all__ = ["copy", "reduce"]

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
    fold: str | None = None,
    src_layout=None,
    dst_layout=None,
    dispatch: str | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Operation:
    """Create and check ``"tile.reduce"(dsts..., srcs...)`` (``tile.reduce<k>`` for k
    operand pairs and a combiner); attributes left None take their defaults
    (docs/spec.md, "Attributes").

    Give ``kind`` (a named kind, or ``"argmax"``/``"argmin"`` with ``dst = [value,
    index]``) or ``combine``: a callable ``combine(left, right)`` that receives the k left
    and the k right values (the block arguments of the combiner function it builds, a
    private ``func.func`` named after it in the op's ``gpu.module``) and returns the k
    combined values (a list, or one value) built with upstream builders; or the name of
    a ``func.func`` already in the module."""
    dsts, srcs = _values(dst), _values(src)
    if len(srcs) > MAX_OPERAND_PAIRS:
        raise BuildError(f"tile.reduce combines at most {MAX_OPERAND_PAIRS} operand pairs, got {len(srcs)}")
    combiner = None
    if combine is not None:
        name = combine if isinstance(combine, str) else _combiner(combine, dsts, loc, ip)
        combiner = ir.FlatSymbolRefAttr.get(name)
    attributes = {"kind": kind, "combiner": combiner, "exec_scope": exec_scope, "axes": axes, "accum": accum,
                  "fold": fold, "src_layout": src_layout, "dst_layout": dst_layout, "dispatch": dispatch}
    op_name = reduce_op_name(len(srcs)) if combine is not None else "tile.reduce"
    return _create(op_name, [*dsts, *srcs], attributes, None, loc, ip)


def copy(
    dst: ir.Value,
    src: ir.Value,
    indices: Sequence,
    *,
    exec_scope: str,
    layout=None,
    padding=None,
    alignment: int | None = None,
    cache: str | None = None,
    dispatch: str | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Operation:
    """Create and check ``"tile.copy"(dst, src, indices...)``: a load when dst is the
    register tile, a store when src is. ``indices`` are the memory coordinates of the
    tile's origin, one per memory dim (ints become index constants); ``padding`` (loads
    only) is what reads past the memory's end give, a number of its element type;
    ``cache="streaming"`` (global memory) marks data touched once (``ld.global.cs``)."""
    with loc if loc is not None else nullcontext():
        index = [i if isinstance(i, ir.Value) else arith.constant(ir.IndexType.get(), int(i), ip=ip)
                 for i in indices]
    attributes = {"exec_scope": exec_scope, "layout": layout, "padding": padding,
                  "alignment": alignment, "cache": cache, "dispatch": dispatch}
    memory = src if _is_register(dst) else dst
    return _create("tile.copy", [dst, src, *index], attributes, _element(memory), loc, ip)


# --- making and checking the op ---------------------------------------------------------


def _create(name: str, operands, attributes: dict, element, loc, ip) -> ir.Operation:
    bad, attrs = [], {}
    for key, value in attributes.items():
        if value is not None:
            try:
                attrs[key] = _attribute(key, value, element)
            except (ValueError, TypeError, ir.MLIRError) as e:
                bad.append(f"{key}: {e}")
    op = ir.Operation.create(name, results=[], operands=operands, attributes=attrs, loc=loc, ip=ip)
    if bad:
        _fail(op, [_diag(op, f"'{name}' op {b}") for b in bad])
    try:
        op.verify()
    except ir.MLIRError as e:
        _fail(op, [to_diag(d, "-", op_notes=False) for d in e.error_diagnostics])
    found = problems(op)
    if found:
        _fail(op, [_diag(op, f"'{name}' op {p}") for p in found])
    return op


def _attribute(key: str, value, element) -> ir.Attribute:
    """The attribute tile-opt reads from the text of ``value`` (module docstring)."""
    if isinstance(value, ir.Attribute):
        return value
    if key.endswith("layout"):
        if not isinstance(value, (str, TileLayout)):
            raise TypeError(f"expected a layout (its text, or a TileLayout), got {value!r}")
        return layout_attr(str(value).replace("\\", "\\\\").replace('"', '\\"'))
    if key == "padding" and element is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(element, ir.IntegerType):
            return ir.IntegerAttr.get(element, int(value))
        return ir.FloatAttr.get(element, float(value))
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, (list, tuple, range)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return ir.DenseI64ArrayAttr.get(list(value))
    raise TypeError(f"cannot make an attribute of {value!r} (give a str, an int, a bool or a list of ints)")


def _fail(op, diags: list[Diag]) -> None:
    """Remove the op and raise its diagnostics as one BuildError."""
    op.erase()
    raise BuildError(located(diags))


def _diag(op, message: str) -> Diag:
    where = file_location(op.location)
    place = Place(where.filename, where.start_line, where.start_col) if where is not None else str(op.location)
    return Diag("error", place, message)


def located(diags: list[Diag]) -> str:
    """Diagnostics as tile-opt prints them, ``file:line:col: error: ...`` with the line
    and a caret, the line read from the Python file the location names. The bindings
    locate an op at its Python line with Python's 0-based column; a diagnostic's
    column is 1-based, as everywhere else in MLIR, so it is moved by one."""
    diags = [_python_column(d) for d in diags]
    files = {d.where.file: [line.rstrip("\n") for line in linecache.getlines(d.where.file)]
             for d in diags if isinstance(d.where, Place)}
    return "".join(format_diag(d, files) for d in diags).rstrip("\n")


def _python_column(diag: Diag) -> Diag:
    where = diag.where
    if isinstance(where, Place) and where.file.endswith(".py"):
        where = Place(where.file, where.line, where.col + 1)
    return Diag(diag.severity, where, diag.message, tuple(_python_column(n) for n in diag.notes))


def _values(v) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _combiner(combine: Combine, dsts: list, loc, ip) -> str:
    """Build ``combine`` into a private ``func.func`` in the symbol table around the
    insertion point, just before the op that holds it; return its name (the callable's,
    when it is an identifier, else ``tile_combiner``; made unique with ``_<n>``). What the
    callable returns must be one value per dst, of its element type (a ``BuildError`` at
    the user's line says what is wrong, and no function is left behind)."""
    ip = ip or ir.InsertionPoint.current
    top, table = ip.block.owner, None
    while top is not None and top.parent is not None:
        try:
            table = ir.SymbolTable(top.parent.operation)
            break
        except (TypeError, ValueError):
            top = top.parent.operation
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
            diag = _diag(fn.operation, f"combine={base}: {problem}")  # at the ops.reduce call
            fn.operation.erase()
            raise BuildError(located([diag]))
    return name


def _result_problem(values: list, types: list) -> str | None:
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



def _is_register(value: ir.Value) -> bool:
    try:
        return str(ir.MemRefType(value.type).memory_space) == PRIVATE
    except (ValueError, TypeError):
        return False


def _element(value: ir.Value):
    try:
        return ir.MemRefType(value.type).element_type
    except (ValueError, TypeError):
        return None
