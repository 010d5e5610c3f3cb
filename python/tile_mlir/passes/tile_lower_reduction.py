"""tile-lower-reduction: lower every ``tile.reduce`` through the dispatch registry.

For each op, the target and its ``sm_XX`` come from the enclosing ``gpu.module``'s
``#nvvm.target`` (or the ``chip`` option; ``vocab.Target.of_op``), the op is analysed (``tile_mlir.analysis``),
and ``tile_mlir.dispatch`` picks the first applicable variant. Afterwards no
``tile.reduce`` is left, or the pass has failed with one error per unlowered op,
listing every variant with its reasons.

**Each distinct op is lowered once.** What an op lowers to depends only on its operand
types, its attributes, its function's block size, the chip and the options. So the first op of each kind is lowered
into a *template*: a detached ``func.func`` whose two arguments stand for dst and src,
with the op's location left unknown. Every op of that kind, the first included, then
gets a clone of the template's body in its place: the arguments replaced by the op's
operands, and every location set to the op's own (``name("tile.reduce.fold")`` under it,
and so on). A module of many identical reduces so costs one lowering and a copy per op.
A variant that makes something per op (``cross_warp``'s scratch memory) registers as
not copyable, and each of its ops is lowered in place.

The same holds for every operand count (``tile.reduce2`` ... have 2k arguments). A
combiner function is part of what an op lowers to: its text is part of the key
(``analysis.memo_key``), and the template's module holds a copy of it. Once every op
that names a combiner is lowered, the combiner is erased, unless something else still
refers to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir.dialects import func

from .. import lowering  # noqa: F401  (registers the variants)
from ..analysis import analyze, memo_key
from ..analysis_combiner import combiner_function, symbol_table_of
from ..dispatch import DispatchContext, applicable, dispatch
from ..ir import ir
from ..options import chip_option, fold_option
from ..vocab import REDUCE_OPS, Chip, Fold
from .common import Targets, TilePass, lower_each


@dataclass(frozen=True)
class TileLowerReduction(TilePass):
    argument = "tile-lower-reduction"
    summary = "Lower tile.reduce to scf loops and gpu.shuffle butterflies through the dispatch registry"

    chip: Chip | None = chip_option()
    fold: Fold = fold_option()

    def run(self, root, pass_) -> None:
        targets = Targets(self.chip)
        templates: dict = {}
        combiners: dict = {}  # (symbol table op, name) -> the combiner functions the ops name

        def lower(op, rewriter):
            combiner = _combiner_of(op)
            if combiner is not None:
                table, _ = symbol_table_of(op)
                combiners[(table, ir.FlatSymbolRefAttr(op.attributes["combiner"]).value)] = combiner
            target = targets.of(op)
            key = (memo_key(op), target)
            if key not in templates:
                # the pass itself carries the lowering options the plan reads (fold)
                ctx = DispatchContext(target.kind, target.chip, analyze(op), self)
                forced = ctx.analysis.info.dispatch if ctx.analysis.info else None
                case = applicable("tile.reduce", op, ctx, forced)
                copyable = case is None or case.copyable  # None: build() reports why
                templates[key] = (ctx, _Template.build(op, ctx) if copyable else None)
            ctx, template = templates[key]
            if template is None:  # a variant that makes something per op: lower in place
                dispatch("tile.reduce", op, ctx, rewriter, forced=ctx.analysis.info.dispatch)
                return
            template.instantiate(op)
            rewriter.erase_op(op)

        lower_each(root, pass_, REDUCE_OPS, self.argument, lower)
        _erase_unused(combiners)


class _Detached:
    """The rewriter a template is built with: inserts before the stand-in op, and erases
    it like any op (the template is no pattern driver's business)."""

    def __init__(self, standin: ir.Operation):
        self.ip = ir.InsertionPoint(standin)

    @staticmethod
    def erase_op(op) -> None:
        op.erase()


@dataclass
class _Template:
    """One lowering, ready to copy: a detached function whose arguments are (dst, src)."""

    module: ir.Module  # keeps the function alive
    function: ir.Operation
    # Per top-level op of the body (the terminator excluded): its location's names,
    # outermost first (() for the op's own location), and the same for the ops nested
    # in it, in walk order.
    names: list[tuple[tuple[str, ...], list[tuple[str, ...]]]]

    @classmethod
    def build(cls, op: ir.Operation, ctx: DispatchContext) -> "_Template":
        """Lower a stand-in copy of ``op`` (its location unknown) into a new template.
        Raises DispatchError as ``dispatch`` does."""
        unknown = ir.Location.unknown(op.context)
        module = ir.Module.create(unknown)
        with ir.InsertionPoint(module.body), unknown:
            combiner = _combiner_of(op)
            if combiner is not None:
                combiner.clone(ip=ir.InsertionPoint(module.body))
            fn = func.FuncOp("tile_reduce_template", ([v.type for v in op.operands], []))
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                func.ReturnOp([])
            standin = op.clone(ip=ir.InsertionPoint.at_block_begin(block))
            standin.location = unknown
            for i, arg in enumerate(block.arguments):
                standin.operands[i] = arg
            forced = ctx.analysis.info.dispatch if ctx.analysis.info else None
            dispatch("tile.reduce", standin, ctx, _Detached(standin), forced=forced)
        body = list(block.operations)[:-1]
        names = [(_loc_name(o), [_loc_name(n) for n in _nested(o)]) for o in body]
        return cls(module, fn.operation, names)

    def instantiate(self, op: ir.Operation) -> None:
        """Put a copy of the body before ``op``, on ``op``'s operands and location."""
        clone = self.function.clone(ip=ir.InsertionPoint(op))
        block = clone.regions[0].blocks[0]
        for arg, operand in zip(block.arguments, op.operands):
            arg.replace_all_uses_with(operand)
        here = op.location
        locations = {(): here}

        def at(names: tuple[str, ...]) -> ir.Location:
            if names not in locations:
                locations[names] = ir.Location.name(names[0], childLoc=at(names[1:]))
            return locations[names]

        for new, (names, nested) in zip(list(block.operations), self.names):
            new.move_before(op)
            new.location = at(names)
            if nested:
                for inner, inner_names in zip(_nested(new), nested):
                    inner.location = at(inner_names)
        clone.erase()


def _combiner_of(op: ir.Operation):
    """The combiner function ``op`` names, or None."""
    attr = op.attributes["combiner"] if "combiner" in op.attributes else None
    if not isinstance(attr, ir.FlatSymbolRefAttr):
        return None
    return combiner_function(op, attr.value)


def _erase_unused(combiners: dict) -> None:
    """Erase each combiner function (``combiners``: (table op, name) -> function) that no
    op of its symbol table refers to any more."""
    for (table, name), fn in combiners.items():
        used = []

        def visit(op, name=name, used=used):
            if op is not fn and any(_names(attr, name) for attr in _attributes(op)):
                used.append(op)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        table.walk(visit)
        if not used:
            fn.erase()


def _attributes(op):
    op = op.operation
    return [op.attributes[i].attr for i in range(len(op.attributes))]


def _names(attr, name: str) -> bool:
    """Whether ``attr`` (a symbol reference, or an array or dictionary of attributes)
    refers to the symbol ``name``."""
    if isinstance(attr, ir.FlatSymbolRefAttr):
        return attr.value == name
    if isinstance(attr, ir.SymbolRefAttr):
        return name in list(attr.value)
    if isinstance(attr, ir.ArrayAttr):
        return any(_names(a, name) for a in attr)
    if isinstance(attr, ir.DictAttr):
        return any(_names(attr[i].attr, name) for i in range(len(attr)))
    return False


def _nested(op: ir.Operation) -> list[ir.Operation]:
    """The ops inside ``op``'s regions, in walk order (``op`` itself excluded)."""
    out = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                out.append(inner.operation)
                out.extend(_nested(inner.operation))
    return out


def _loc_name(op: ir.Operation) -> tuple[str, ...]:
    """The names a template op's location wraps around the op's own (unknown) location,
    outermost first."""
    names, loc = [], op.location
    while loc.is_a_name():
        names.append(loc.name_str)
        loc = loc.child_loc
    return tuple(names)
