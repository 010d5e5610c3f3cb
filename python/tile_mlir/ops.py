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
"""

from __future__ import annotations

import linecache
from contextlib import nullcontext
from typing import Sequence, Union

from mlir.dialects import arith

from .checks import problems
from .diagnostics import Diag, Place, file_location, format_diag, to_diag
from .errors import BuildError
from .ir import PRIVATE, ir, layout_attr
from .layout import TileLayout

__all__ = ["copy", "reduce"]

Values = Union[ir.Value, Sequence[ir.Value]]


def reduce(
    dst: Values,
    src: Values,
    *,
    kind: str,
    exec_scope: str,
    axes: Sequence[int] | None = None,
    accum: bool | None = None,
    src_layout=None,
    dst_layout=None,
    dispatch: str | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Operation:
    """Create and check ``"tile.reduce"(dst, src)``; attributes left None take their
    defaults (docs/spec.md, "Attributes")."""
    attributes = {"kind": kind, "exec_scope": exec_scope, "axes": axes, "accum": accum,
                  "src_layout": src_layout, "dst_layout": dst_layout, "dispatch": dispatch}
    return _create("tile.reduce", [*_values(dst), *_values(src)], attributes, None, loc, ip)


def copy(
    dst: ir.Value,
    src: ir.Value,
    indices: Sequence,
    *,
    exec_scope: str,
    layout=None,
    padding=None,
    alignment: int | None = None,
    dispatch: str | None = None,
    loc: ir.Location | None = None,
    ip: ir.InsertionPoint | None = None,
) -> ir.Operation:
    """Create and check ``"tile.copy"(dst, src, indices...)``: a load when dst is the
    register tile, a store when src is. ``indices`` are the memory coordinates of the
    tile's origin, one per memory dim (ints become index constants); ``padding`` (loads
    only) is what reads past the memory's end give, a number of its element type."""
    with loc if loc is not None else nullcontext():
        index = [i if isinstance(i, ir.Value) else arith.constant(ir.IndexType.get(), int(i), ip=ip)
                 for i in indices]
    attributes = {"exec_scope": exec_scope, "layout": layout, "padding": padding,
                  "alignment": alignment, "dispatch": dispatch}
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
