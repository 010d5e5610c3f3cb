"""What the tile passes share: the ``TilePass`` base, the pass-option grammar, errors at
ops, and the loop that lowers every op of one name through the dispatch registry.

A tile pass is a frozen dataclass whose fields are its options, as xDSL's passes are:
``TileLowerReduction(chip=Chip.parse("sm_80"), fold=Fold.TREE)``. Its ``run(op, pass_)``
is what the upstream ``PassManager`` calls. Options are read from text only where a
person typed them: ``from_text`` (a pipeline's ``{chip=sm_80 fold=tree}``) and
``from_strings`` (tile-opt's flags, ``add_pass(pm, name, fold="tree")``).

No pass imports another: what two passes share lives here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from mlir import rewrite

from ..diagnostics import layout_location
from ..dispatch import DispatchError
from ..errors import TileError, UsageError
from ..ir import ir
from ..option_fields import coerce, from_strings, spelled
from ..vocab import Chip, Target, gpu_module_of


@dataclass(frozen=True)
class TilePass:
    """The base of the tile passes. A subclass sets ``argument`` (its command-line name,
    ``tile-<verb>[-<object>]``) and ``summary``, declares its options as fields
    (``option_fields.option``), and implements ``run``."""

    argument: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def __post_init__(self):
        coerce(self)

    def run(self, op: ir.Operation, pass_) -> None:
        raise NotImplementedError

    @classmethod
    def class_name(cls) -> str:
        """The name MLIR prints for it (``TileLowerReduction``)."""
        return cls.__name__

    @classmethod
    def from_strings(cls, values) -> TilePass:
        """The pass with options given as strings (a flag, a keyword of ``add_pass``)."""
        return from_strings(cls, values, f"pass {cls.argument}")

    @classmethod
    def from_text(cls, text: str) -> TilePass:
        """The pass with options given as pass-option text, ``chip=sm_80 fold=tree``."""
        return cls.from_strings(parse_options(text, cls.argument))

    def __str__(self) -> str:
        """As a pipeline writes it, ``tile-lower-reduction{fold=tree}``: for people (a
        repro line, ``--dump-pass-pipeline``)."""
        options = spelled(self)
        return f"{self.argument}{{{options}}}" if options else self.argument

    def add_to(self, pm, anchors: tuple[str, ...] = ()) -> None:
        """Add the pass to an upstream PassManager, as a Python pass. Under ``anchors``
        (``gpu.module(...)``) it runs on each op that the anchor path selects: the
        bindings cannot nest a Python pass in an op-anchored pass manager."""
        run = on_anchored_ops(self.run, anchors) if anchors else self.run
        pm.add(run, name=self.class_name(), argument=self.argument, description=self.summary)


_OPTION = re.compile(r"""([\w.-]+)(?:=("[^"]*"|'[^']*'|[^\s"']+))?(?:\s+|$)""")


def parse_options(text: str, pass_name: str) -> dict[str, str]:
    """Parse pass options, e.g. ``chip=sm_80 fold='tree' verbose``, as upstream does.

    A bare key means ``true``. Quotes around a value are removed.
    """
    options, text, pos = {}, text.strip(), 0
    while pos < len(text):
        m = _OPTION.match(text, pos)
        if not m:
            raise UsageError(f"invalid options for pass '{pass_name}': '{text}'")
        key, value = m.groups()
        if value is None:
            value = "true"
        elif value[0] in "'\"":
            value = value[1:-1]
        options[key] = value
        pos = m.end()
    return options


def on_anchored_ops(run: Callable, anchors: tuple[str, ...]) -> Callable:
    """Wrap a pass so that it runs on the ops that `anchors` selects below the pass
    manager's op.

    This works like MLIR's nested pass managers: each anchor picks the ops with that
    name (any op for ``any``) directly inside the ops picked by the level above.
    """

    def run_on_anchored_ops(op: ir.Operation, pass_) -> None:
        targets = [op]
        for anchor in anchors:
            targets = [child.operation
                       for parent in targets
                       for region in parent.regions
                       for block in region.blocks
                       for child in block.operations
                       if anchor in ("any", child.operation.name)]
        for target in targets:
            run(target, pass_)

    return run_on_anchored_ops


def emit_errors(op, errors) -> None:
    """Each error at the op's location; one about a layout's text at its column there
    (``diagnostics.layout_location``: placed where the source is known)."""
    for e in errors:
        loc = op.location
        if getattr(e, "column", None) is not None:
            loc = layout_location(loc, e.attribute, e.column)
        loc.emit_error(f"'{op.name}' op {e}")


class Unlowerable(TileError):
    """An op that cannot be lowered for a reason already reported (its gpu.module's
    target)."""


class Targets:
    """The target of each op a lowering pass meets (``Target.of_op``: its gpu.module's,
    else cuda for the pass's ``chip`` option). A gpu.module whose target LLVM cannot
    compile for is an error at the gpu.module, reported once."""

    def __init__(self, chip: Chip | None):
        self.chip = chip
        self.reported: list = []

    def of(self, op) -> Target:
        target = Target.of_op(op, self.chip)
        if target.problem is None:
            return target
        module = gpu_module_of(op)
        if module not in self.reported:
            self.reported.append(module)
            module.location.emit_error(f"'gpu.module' op {target.problem}")
        raise Unlowerable


def lower_each(root, pass_, op_names: str | tuple[str, ...], pass_name: str, lower: Callable) -> None:
    """Lower every op named ``op_names`` (one name or several) under ``root`` with
    ``lower(op, rewriter)``, which erases
    or replaces the op, or raises. A ``DispatchError`` is the op's error; any other
    exception is a bug, reported at the op as an internal error, never a traceback.
    The ops that fail stay, and the pass fails."""
    failures: list = []

    def pattern(op, rewriter):
        op = op.operation
        try:
            lower(op, rewriter)
        except Unlowerable:
            pass
        except DispatchError as e:
            emit_errors(op, [str(e)])
        except Exception as e:  # a bug in a variant: a diagnostic, never a traceback
            emit_errors(op, [f"internal error in {pass_name}: {type(e).__name__}: {e}"])
        else:
            return None
        failures.append(op)
        return True  # no match: the op stays, and the pass fails below

    patterns = rewrite.RewritePatternSet()
    for name in (op_names,) if isinstance(op_names, str) else op_names:
        patterns.add(name, pattern)
    rewrite.walk_and_apply_patterns(root, patterns.freeze())
    if failures:
        pass_.signal_pass_failure()
