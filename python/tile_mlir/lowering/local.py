"""The ``local`` variant of ``tile.reduce``: registers in, registers out.

Accepts: both operands in ``#gpu.address_space<private>`` (TIRx's ``local``
scope) and an op that passes every rule of ``tile_mlir.analysis``. At
warpgroup scope it only reduces within a thread.

The register iteration plan (spatial index ``s``, reduced index ``r``) and the
in-thread folds live in ``registers.py``, shared with the other register
variants. The algorithm (docs/lowering-local.md has the generated IR):

1. **thread-wise** (no reduced thread bits): TIRx's spatial loop with a
   reduction loop inside: ``for s: acc = src[s, 0]; for r in 1..R: acc = op(acc, src[s, r])``;
   then ``accum`` and the store.
2. **butterfly** (reduced lane bits ``L``, warp scope): for every dst slot,
   fold the thread's own registers (one reduction loop carrying all slots);
   then for each bit ``b`` of ``L``, highest first, ``v = op(v, shuffle xor v, 1 << b)``
   with width 32 and the full mask, the slots' shuffles interleaved (16-bit
   slots move in pairs, two per 32-bit shuffle); then ``accum`` once; then the store.

An argmax/argmin or a combiner function carries k values per dst slot (a *partial*,
``combiner.py``): the same steps, the partials' shuffles interleaved, and in each
butterfly step the lane whose bit b is clear on the left (a select on the lane bit,
skipped by a commutative combine).

The predicates ``storage_scope`` and ``local_valid``, and ``chip_problem``, are
reused by the higher-priority register variants (``local_redux``, ``sm100_packed``).
"""

from __future__ import annotations

from ..analysis import ReduceInfo, analyze
from ..dispatch import predicate, register_dispatch
from ..ir import ir
from ..vocab import reduce_operand_roles
from .registers import emit_across_lanes, emit_thread_wise, lane_butterfly, lower_with

# --- predicates ------------------------------------------------------------------------

_SPACE_NAMES = {"local": "#gpu.address_space<private>", "shared": "#gpu.address_space<workgroup>"}


def match_storage_scope(op, ctx, expected_scope=("local",)):
    """Both operands live in one of ``expected_scope`` (local = private memory)."""
    info = ctx.analysis.info if ctx.analysis is not None else None
    if info is not None and info.dst.storage in expected_scope and info.src.storage in expected_scope:
        return True, ""  # the analysis has read the memory spaces already
    wrong = []
    for role, value in zip(reduce_operand_roles(len(op.operands)), op.operands):
        space = ir.MemRefType(value.type).memory_space
        text = str(space) if space is not None else "no memory space"
        scope = next((k for k, v in _SPACE_NAMES.items() if v == text), "global")
        if scope not in expected_scope:
            wrong.append(f"{role} is {scope} ({text})")
    if wrong:
        return False, f"{' and '.join(wrong)}; expected {' or '.join(expected_scope)} on both sides"
    return True, ""


def reduce_info(op, ctx) -> ReduceInfo | None:
    """The op's checked view (``tile_mlir.analysis``), or None when the op is invalid."""
    return (ctx.analysis if ctx.analysis is not None else analyze(op)).info


def chip_problem(ctx, min_sm: int) -> str | None:
    """Why ``ctx``'s chip is not ``sm_<min_sm>`` or newer; None when it is."""
    if ctx.sm is None:
        return "no chip (no #nvvm.target on a gpu.module, no chip option)"
    if ctx.sm < min_sm:
        return f"sm_{ctx.sm} < sm_{min_sm}"
    return None


def named_only(info, what: str) -> list[str]:
    """Why a variant that exists for the named kinds only (``what``: its hardware
    shortcut) cannot lower ``info``: a combiner function or argmax/argmin."""
    if info.combiner is not None:
        return [f"combiner @{info.combiner}: {what} has no form for a combiner function (named kinds only)"]
    if not info.named:
        return [f"kind {info.kind}: {what} has no form for an index-carrying kind (named kinds only)"]
    return []


def verdict(problems: list[str], ctx, min_sm: int) -> tuple[bool, str]:
    """A sibling variant's predicate result: its own ``problems`` plus the chip check,
    all reported together."""
    chip = chip_problem(ctx, min_sm)
    if chip:
        problems = [*problems, chip]
    return not problems, "; ".join(problems)


def validate_op(op, ctx):
    """The op is valid (docs/spec.md); the reasons are tile-verify's errors."""
    analysis = ctx.analysis if ctx.analysis is not None else analyze(op)
    if analysis.errors:
        return False, "; ".join(analysis.errors)
    return True, ""


def validate_reduction_local(op, ctx):
    """The op is valid (docs/spec.md) and reduces within warps: no reduced warp bits, and
    not at cluster scope (the ``cluster`` variant's, whatever it reduces)."""
    ok, why = validate_op(op, ctx)
    if not ok:
        return ok, why
    info = reduce_info(op, ctx)
    if info.exec_scope == "cluster":
        return False, "exec_scope cluster: the cluster variant lowers every cluster-scope op"
    warp_bits = info.reduced_warp_bits
    if warp_bits:
        return False, (
            f"reduced thread bits {{{', '.join(map(str, warp_bits))}}} are warp bits: the local "
            "variant reduces within a warp (cross_warp exchanges the warps' partials)"
        )
    return True, ""


# What every register-to-register variant needs; its siblings add their own predicate.
LOCAL_PREDICATES = (
    predicate("storage_scope", match_storage_scope, expected_scope=["local"]),
    predicate("local_valid", validate_reduction_local),
)


def register_sibling(variant: str, priority: int, applies):
    """Register a sibling of ``local``: its predicates, then ``applies`` (named after the
    function), all evaluated for every op."""
    when = [*LOCAL_PREDICATES, predicate(applies.__name__, applies)]
    return register_dispatch("tile.reduce", "cuda", variant=variant, priority=priority, when=when)


# --- the lowering ------------------------------------------------------------------------


@register_dispatch("tile.reduce", "cuda", variant="local", priority=10, when=LOCAL_PREDICATES)
def lower_local(op, ctx, rewriter):
    if ctx.analysis.info.reduces_across_threads():
        lower_with(op, ctx, rewriter, _emit_butterfly)
    else:
        lower_with(op, ctx, rewriter, emit_thread_wise)


def _emit_butterfly(plan, dsts, srcs) -> None:
    bits = plan.info.reduced_lane_bits
    emit_across_lanes(plan, dsts, srcs, lambda partials: lane_butterfly(plan.combiner, partials, bits))
