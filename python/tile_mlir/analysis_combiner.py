"""How a ``tile.reduce`` combines, and which operands it has (docs/spec.md, "Combiner
reductions").

An op combines with exactly one of:

* a named ``kind`` (``sum``, ``max``, ``min``, ``maximum``, ``minimum``): one dst, one src;
* ``kind = "argmax"`` or ``"argmin"``: two dsts (the value, and its index among the
  reduced coordinates, which the lowering generates), one src;
* ``combiner = @f``: k dsts, then k srcs, combined by ``f``, a ``func.func`` in the op's
  symbol table (its ``gpu.module``) with 2k arguments (the k left values, then the k
  right values, of the operands' element types) and k results, whose body is one block
  of pure ``arith`` and ``math`` ops ending in ``func.return``. The op is ``tile.reduce``
  for k = 1, ``tile.reduce<k>`` (``tile.reduce2`` ...) for more.

``combining(op, errors)`` reads which (``How``), ``roles(op, how, errors)`` checks the
operand count and names each operand, ``check_sides(dsts, srcs, how, errors)`` the
operands' element types, shapes and storage, and ``check_function`` the combiner.
Each broken rule is one sentence in ``errors``, as everywhere in ``tile_mlir.analysis``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from .diagnostics import file_location
from .ir import ir
from .vocab import ARG_KINDS, INDEX_DTYPES, MAX_OPERAND_PAIRS, REDUCE_KINDS, reduce_op_name, reduce_operand_roles

# The dialects whose ops a combiner may hold: pure computations on values.
PURE_DIALECTS = ("arith", "math")
_KINDS_TEXT = ", ".join(f'"{k}"' for k in REDUCE_KINDS)


@dataclass(frozen=True)
class How:
    """How an op combines: a kind (named, or argmax/argmin), or a combiner's symbol name."""

    kind: str | None
    combiner: str | None = None

    @property
    def arg(self) -> bool:
        return self.kind in ARG_KINDS


def combining(op, errors: list[str]) -> tuple[How | None, set[str]]:
    """The op's ``How``, or None after an error; and the unknown attribute names that the
    error already explains (a misspelt ``kind``), so that they are not reported twice."""
    kind_attr = op.attributes["kind"] if "kind" in op.attributes else None
    comb_attr = op.attributes["combiner"] if "combiner" in op.attributes else None
    if kind_attr is not None and comb_attr is not None:
        errors.append(f"an op combines with a kind or with a combiner, never both: it has kind = {kind_attr} "
                      f"and combiner = {comb_attr}")
        return None, set()
    if kind_attr is None and comb_attr is None:
        message = f"missing attribute 'kind' (one of {_KINDS_TEXT}) or 'combiner' (= @a func.func that combines)"
        names = list(op.attributes)
        close = [n for n in names if difflib.get_close_matches(n, ["kind", "combiner"], n=1, cutoff=0.5)]
        if close:
            message += f"; '{close[0]}' looks like a misspelling of '{'kind' if _closer(close[0]) else 'combiner'}'"
        errors.append(message)
        return None, set(close[:1])
    if comb_attr is not None:
        if not isinstance(comb_attr, ir.FlatSymbolRefAttr):
            errors.append(f"combiner must name a func.func in the op's module (combiner = @name), got {comb_attr}")
            return None, set()
        return How(None, comb_attr.value), set()
    kind = kind_attr.value if isinstance(kind_attr, ir.StringAttr) else None
    if kind not in REDUCE_KINDS:
        errors.append(f"kind must be one of {_KINDS_TEXT}; got {kind_attr}")
        return None, set()
    return How(kind), set()


def _closer(name: str) -> bool:
    """Whether ``name`` is closer to ``kind`` than to ``combiner``."""
    ratio = lambda a: difflib.SequenceMatcher(None, name, a).ratio()  # noqa: E731
    return ratio("kind") >= ratio("combiner")


def roles(op, how: How, errors: list[str]) -> tuple[str, ...] | None:
    """The role of each operand (``dst``, ``src``; ``dst 0 (value)``...), or None when the
    count does not fit ``how`` and the op (``tile.reduce`` or ``tile.reduce<k>``)."""
    n = len(op.operands)
    pairs = 1 if op.name == "tile.reduce" else int(op.name.removeprefix("tile.reduce"))
    if pairs > 1 and how.combiner is None:
        errors.append(f"{op.name} combines {pairs} operand pairs with a combiner (combiner = @f); "
                      f"kind = {how.kind} is for tile.reduce")
        return None
    if how.arg:
        if n != 3:
            errors.append(f"kind {how.kind} takes 3 operands (value dst, index dst, src), got {n}")
            return None
        return reduce_operand_roles(3, how.kind)
    if n != 2 * pairs:
        what = "2 operands (dst, src)" if pairs == 1 else f"{2 * pairs} operands ({pairs} dsts, then {pairs} srcs)"
        hint = ""
        if pairs == 1 and n >= 4 and n % 2 == 0 and n // 2 <= MAX_OPERAND_PAIRS:
            hint = f" ({n // 2} operand pairs are {reduce_op_name(n // 2)}, with a combiner = @f)"
        errors.append(f"takes {what}, got {n}{hint}")
        return None
    return reduce_operand_roles(n)


def check_sides(dsts, srcs, names: tuple[str, ...], how: How, errors: list[str]) -> None:
    """Element types, shapes and storage of the operands (``Operand``s, named ``names``):
    dst j and src j share an element type (for argmax: the value dst and the src; the
    index dst is i32 or i64); every dst has one shape and storage scope, every src too
    (dsts and srcs in different scopes are valid, but no variant lowers them)."""
    dst_names, src_names = names[: len(dsts)], names[len(dsts):]
    if how.arg:
        value, index = dsts
        if value.dtype != srcs[0].dtype:
            errors.append(f"dtype mismatch: src={srcs[0].dtype} dst={value.dtype} (the value dst has the src's type)")
        if index.dtype not in INDEX_DTYPES:
            errors.append(f"{dst_names[1]}: element type {index.dtype}: the index of {how.kind} is i32 or i64")
    else:
        for j, (d, s) in enumerate(zip(dsts, srcs)):
            if d.dtype != s.dtype:
                which = "" if len(dsts) == 1 else f" (operand {j})"
                errors.append(f"dtype mismatch{which}: src={s.dtype} dst={d.dtype}")
    for side, side_names in ((dsts, dst_names), (srcs, src_names)):
        for operand, name in zip(side[1:], side_names[1:]):
            if operand.shape != side[0].shape:
                errors.append(f"{name}: shape {_shape(operand.shape)} differs from {side_names[0]}'s "
                              f"{_shape(side[0].shape)}: the operands of a side share one shape and layout")
    for side, side_names in ((dsts, dst_names), (srcs, src_names)):
        if len({o.storage for o in side}) > 1:
            where = ", ".join(f"{name} {o.storage}" for o, name in zip(side, side_names))
            errors.append(f"the operands of a side are in different storage scopes ({where}): they share one")


def narrow_index(op, how: How, names: tuple[str, ...], errors: list[str]) -> bool:
    """Whether an argmax/argmin's index dst has an integer element type narrower than 32
    bits (reported here, in those words, rather than as an unsupported type)."""
    if not how.arg:
        return False
    t = op.operands[1].type
    elem = getattr(t, "element_type", None)
    if isinstance(elem, ir.IntegerType) and elem.width < 32:
        errors.append(f"{names[1]}: element type {elem} is too narrow for the index of {how.kind}: "
                      "it is i32 (or i64, where the reduced coordinates need more than 31 bits)")
        return True
    return False


def check_index_width(how: How, index_dtype: str, count: int, errors: list[str]) -> None:
    """An argmax/argmin index of ``index_dtype`` must hold every index below ``count``
    (the number of reduced coordinates): i32 up to 2^31 of them, else i64."""
    if how.arg and index_dtype == "i32" and count > 2**31:
        errors.append(f"the index dst is i32, but {how.kind} reduces {count} coordinates per element: "
                      "their indices need i64")


def symbol_table_of(op):
    """(the nearest ancestor of ``op`` that is a symbol table (its ``gpu.module``), its
    ``ir.SymbolTable``), or (None, None)."""
    parent = op.parent
    while parent is not None:
        parent = getattr(parent, "operation", parent)
        try:
            return parent, ir.SymbolTable(parent)
        except (TypeError, ValueError):
            parent = parent.parent
    return None, None


def combiner_function(op, name: str):
    """The ``func.func`` named ``name`` in ``op``'s nearest symbol table, or None."""
    _, table = symbol_table_of(op)
    if table is None:
        return None
    try:
        found = table[name]
    except KeyError:
        return None
    found = getattr(found, "operation", found)
    return found if found.name == "func.func" else None


def combiner_key(op) -> str | None:
    """What the lowering of ``op`` depends on in its combiner: the function's text."""
    if "combiner" not in op.attributes:
        return None
    attr = op.attributes["combiner"]
    if not isinstance(attr, ir.FlatSymbolRefAttr):
        return None
    fn = combiner_function(op, attr.value)
    return None if fn is None else fn.get_asm(print_generic_op_form=True)


def check_function(op, name: str, dsts, errors: list[str]) -> None:
    """The combiner ``@name`` exists, is a ``func.func`` with one block of pure ops and
    the signature ``(left values, right values) -> values`` of the operands' types."""
    fn = combiner_function(op, name)
    if fn is None:
        owner, _ = symbol_table_of(op)
        known = []
        if owner is not None:
            known = [ir.StringAttr(o.attributes["sym_name"]).value for o in owner.regions[0].blocks[0]
                     if o.operation.name == "func.func"]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f" (did you mean @{close[0]}?)" if close else ""
        errors.append(f"combiner: no func.func named @{name} in the op's module{hint}")
        return
    k = len(dsts)
    types = [d.dtype for d in dsts]
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    inputs, results = [str(t) for t in ftype.inputs], [str(t) for t in ftype.results]
    want = f"({', '.join(types * 2)}) -> ({', '.join(types)})"
    if len(inputs) != 2 * k or len(results) != k:
        errors.append(
            f"combiner @{name} has {len(inputs)} argument(s) and {len(results)} result(s), but an op with "
            f"{k} dst(s) and {k} src(s) needs {2 * k} arguments (the {k} left values, then the {k} right values) "
            f"and {k} result(s): {want}")
        return
    for i, t in enumerate(inputs):
        j = i % k
        if t != types[j]:
            side = "left" if i < k else "right"
            errors.append(f"combiner @{name} argument {i} (the {side} value of operand {j}) is {t}, "
                          f"but operand {j}'s element type is {types[j]}: the combiner must be {want}")
    for j, t in enumerate(results):
        if t != types[j]:
            errors.append(f"combiner @{name} result {j} is {t}, but operand {j}'s element type is {types[j]}: "
                          f"the combiner must be {want}")
    blocks = list(fn.regions[0].blocks)
    if len(blocks) != 1:
        what = "a declaration, with no body" if not blocks else f"{len(blocks)} blocks"
        errors.append(f"combiner @{name} is {what}: a combiner is one block of pure arith and math ops, "
                      "ending in func.return")
        return
    for inner in blocks[0].operations:
        inner = inner.operation
        if inner.name == "func.return":
            continue
        if inner.name.split(".")[0] not in PURE_DIALECTS or len(inner.regions):
            errors.append(
                f"combiner @{name}: {inner.name}{_line(inner)} is not allowed in a combiner: its ops are pure "
                f"{' and '.join(PURE_DIALECTS)} ops (no memory, barriers, calls or regions)")


def _line(op) -> str:
    loc = file_location(op.location)
    return "" if loc is None else f" (line {loc.start_line})"


def _shape(s) -> str:
    return "(" + ", ".join(map(str, s)) + ")"
