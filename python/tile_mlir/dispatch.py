"""The dispatch registry (docs/spec.md, "Dispatch"), after TIRx's design.

A lowering variant registers an implementation for (op name, target) with a
priority and a list of predicates::

    @register_dispatch("tile.reduce", "cuda", variant="local", priority=10, when=[
        predicate("storage_scope", match_storage_scope, expected_scope=["local"]),
        predicate("local_valid", validate_reduction_local)])
    def lower_local(op, ctx, rewriter): ...

``dispatch`` tries the cases of (op name, target) ordered by (-priority,
variant name). Every predicate of a case is evaluated, without short-circuit,
so a rejection lists all its reasons. A predicate returns a bool, an
``(ok, reason)`` pair, or raises (the exception is its reason). The first case
whose predicates all pass and whose implementation does not ``Decline`` wins.
``dispatch = "name"`` on the op restricts the search to that variant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import Decline, DispatchError, OptionError
from .options import Options
from .vocab import Chip


@dataclass(frozen=True)
class Predicate:
    name: str
    fn: Callable[..., Any]
    kwargs: dict = field(default_factory=dict)

    def evaluate(self, op, ctx) -> tuple[bool, str]:
        try:
            r = self.fn(op, ctx, **self.kwargs)
        except Exception as e:  # a predicate that raises rejects, with its reason
            return False, f"raised {type(e).__name__}: {e}"
        if isinstance(r, tuple):
            ok, reason = r
            return bool(ok), str(reason or "")
        return bool(r), ""


def predicate(name: str, fn: Callable[..., Any], **kwargs) -> Predicate:
    return Predicate(name, fn, kwargs)


@dataclass(frozen=True)
class DispatchCase:
    op_name: str
    target: str
    variant: str
    priority: int
    when: tuple[Predicate, ...]
    impl: Callable[..., Any]
    # Whether the lowering of one op may be copied for an identical op. Not when it
    # makes something per op: scratch memory, a counter at the function's entry.
    copyable: bool = True

    @property
    def title(self) -> str:
        return f"{self.variant} (prio={self.priority})"


_CASES: dict[tuple[str, str], list[DispatchCase]] = {}


def register_dispatch(op_name: str, target: str, *, variant: str, priority: int = 0, when=(), copyable=True):
    """Decorator: register ``impl(op, ctx, rewriter)`` as a lowering variant."""

    def deco(impl):
        case = DispatchCase(op_name, target, variant, priority, tuple(when), impl, copyable)
        cases = [c for c in _CASES.get((op_name, target), []) if c.variant != variant]
        cases.append(case)
        cases.sort(key=lambda c: (-c.priority, c.variant))
        _CASES[(op_name, target)] = cases
        return impl

    return deco


def cases(op_name: str, target: str) -> list[DispatchCase]:
    return list(_CASES.get((op_name, target), []))


def variant_names(op_name: str) -> list[str]:
    """The names of the variants registered for ``op_name``, on any target, sorted."""
    return sorted({c.variant for (name, _), found in _CASES.items() if name == op_name for c in found})


@dataclass
class DispatchContext:
    """What predicates and implementations may ask about the op's context."""

    target: str  # "cuda"
    chip: Chip | str | None  # the gpu.module's (vocab.Target.of_op), or the chip option
    analysis: Any = None  # tile_mlir.analysis.Analysis of the op
    # The lowering options (fold, ...): an Options, or the lowering pass itself, whose
    # fields are the same options.
    options: Any = field(default_factory=Options)

    @property
    def sm(self) -> int | None:
        """The compute capability as an int (90 for sm_90), if known."""
        try:
            return Chip.parse(self.chip).sm if self.chip else None
        except OptionError:
            return None

    def describe(self) -> str:
        return f"target {self.target}" + (f", {self.chip}" if self.chip else "")


def applicable(op_name: str, op, ctx: DispatchContext, forced: str | None = None) -> DispatchCase | None:
    """The first case whose predicates all pass (its implementation may still decline)."""
    for case in cases(op_name, ctx.target):
        if forced in (None, case.variant) and all(p.evaluate(op, ctx)[0] for p in case.when):
            return case
    return None


def dispatch(op_name: str, op, ctx: DispatchContext, rewriter, forced: str | None = None) -> str:
    """Lower ``op`` with the first applicable variant; return the variant's name.

    Raises DispatchError with one line per variant tried, each with every reason.
    """
    all_cases = cases(op_name, ctx.target)
    if forced is not None:
        chosen = [c for c in all_cases if c.variant == forced]
        if not chosen:
            known = ", ".join(c.title for c in all_cases) or "none"
            raise DispatchError(
                f'dispatch = "{forced}" names no variant of {op_name} for {ctx.describe()}; '
                f"registered: {known}"
            )
        all_cases = chosen
    if not all_cases:
        raise DispatchError(f"no variant of {op_name} is registered for {ctx.describe()}")
    report = []
    for case in all_cases:
        results = [(p.name, *p.evaluate(op, ctx)) for p in case.when]
        failed = [(name, reason) for name, ok, reason in results if not ok]
        if failed:
            why = "; ".join(f"{name} — {reason}" if reason else name for name, reason in failed)
            report.append(f"  {case.title}: rejected: {why}")
            continue
        try:
            case.impl(op, ctx, rewriter)
        except Decline as e:
            report.append(f"  {case.title}: declined: {e}")
            continue
        return case.variant
    raise DispatchError(
        f"no variant of {op_name} applies ({ctx.describe()}):\n" + "\n".join(report)
    )
