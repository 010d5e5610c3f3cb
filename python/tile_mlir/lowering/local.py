"""The ``local`` variant of ``tile.reduce``: registers in, registers out.

Accepts: both operands in ``#gpu.address_space<private>`` (the seed's ``local``
scope) and an op that passes every rule of ``tile_mlir.analysis``. At
warpgroup scope it only reduces within a thread.

Each thread sees its registers through the layouts' ``m`` iters:

* the *spatial* iters (``m`` iters of the kept dims) enumerate the dst slots a
  thread owns, as a linear index ``s`` in ``[0, S)``;
* the *reduced* iters (``m`` iters of the reduced dims) enumerate the registers
  folded into each of them, ``r`` in ``[0, R)``, in row-major order of the
  reduced coordinates;
* the src slot is ``slot(s) + slot(r)``; the dst slot uses the dst layout's
  iters (its register strides may differ, a compact dst is normal).

The algorithm (docs/lowering-local.md has the generated IR):

1. **thread-wise** (no reduced thread bits): the seed's spatial loop with a
   reduction loop inside: ``for s: acc = src[s, 0]; for r in 1..R: acc = op(acc, src[s, r])``;
   then ``accum`` and the store.
2. **butterfly** (reduced lane bits ``L``, warp scope): for every dst slot,
   fold the thread's own registers (one reduction loop carrying all slots);
   then for each bit ``b`` of ``L``, highest first, ``v = op(v, shuffle xor v, 1 << b)``
   with width 32 and the full mask, the slots' shuffles interleaved; then
   ``accum`` once; then the store.

No identity is ever emitted: every fold starts from its first element.
"""

from __future__ import annotations

from mlir.dialects import scf

from ..analysis import ReduceInfo, analyze
from ..dispatch import predicate, register_dispatch
from ..ir import ir
from . import emit

# --- predicates ------------------------------------------------------------------------

_SPACE_NAMES = {"local": "#gpu.address_space<private>", "shared": "#gpu.address_space<workgroup>"}


def match_storage_scope(op, ctx, expected_scope=("local",)):
    """Both operands live in one of ``expected_scope`` (local = private memory)."""
    wrong = []
    for role, value in (("dst", op.operands[0]), ("src", op.operands[1])):
        space = ir.MemRefType(value.type).memory_space
        text = str(space) if space is not None else "no memory space"
        scope = next((k for k, v in _SPACE_NAMES.items() if v == text), "global")
        if scope not in expected_scope:
            wrong.append(f"{role} is {scope} ({text})")
    if wrong:
        return False, f"{' and '.join(wrong)}; expected {' or '.join(expected_scope)} on both sides"
    return True, ""


def validate_reduction_local(op, ctx):
    """The op is valid (SPEC 2-5) and needs no cross-warp communication."""
    analysis = ctx.analysis if ctx.analysis is not None else analyze(op)
    if analysis.errors:
        return False, "; ".join(analysis.errors)
    info = analysis.info
    if info.exec_scope == "warpgroup" and info.reduces_across_threads():
        dims = [d for d in info.axes if info.src_layout.thread_iters(d)]
        return False, (
            f"reduced dim(s) {dims} span threads at warpgroup scope; the local variant reduces "
            "within a thread only, and the cross-warp (shared-memory) variant is not implemented"
        )
    return True, ""


# --- the lowering ------------------------------------------------------------------------


@register_dispatch(
    "tile.reduce",
    "cuda",
    variant="local",
    priority=10,
    when=[
        predicate("storage_scope", match_storage_scope, expected_scope=["local"]),
        predicate("local_valid", validate_reduction_local),
    ],
)
def lower_local(op, ctx, rewriter):
    info: ReduceInfo = ctx.analysis.info
    dst, src = op.operands
    plan = _Plan(info, ctx.options.get("fold", "linear"))
    with rewriter.ip, op.location, emit.constant_cache():
        if info.reduces_across_threads():
            _emit_butterfly(plan, dst, src)
        else:
            _emit_thread_wise(plan, dst, src)
    rewriter.erase_op(op)


class _Plan:
    """The register iteration space of one op: spatial iters, reduced iters, shapes."""

    def __init__(self, info: ReduceInfo, fold: str = "linear"):
        src_l, dst_l = info.src_layout, info.dst_layout
        spatial = info.spatial_dims
        self.info = info
        self.fold = fold
        self.src_spatial = [(it.extent, it.stride) for d in spatial for it in src_l.local_iters(d)]
        self.dst_spatial = [
            (it.extent, it.stride) for d in spatial for it in dst_l.local_iters(info.dst_dim[d])
        ]
        self.reduced = [(it.extent, it.stride) for d in info.axes for it in src_l.local_iters(d)]
        self.S = _product(e for e, _ in self.src_spatial)
        self.R = _product(e for e, _ in self.reduced)
        self.src_shape = info.src.shape
        self.dst_shape = info.dst.shape

    def src_base(self, s):
        """The src slot of spatial index ``s`` at reduced index 0."""
        return emit.slot_of(s, self.src_spatial)

    def src_slot(self, base, r):
        return emit.add_slots(base, emit.slot_of(r, self.reduced))

    def dst_slot(self, s):
        return emit.slot_of(s, self.dst_spatial)


def _product(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _name(text: str) -> ir.Location:
    """A named location under the op's, so generated IR maps back to the op."""
    return ir.Location.name(text, childLoc=ir.Location.current)


def _fold_registers(plan: _Plan, src, slots) -> list[ir.Value]:
    """Fold the thread's own reduced registers for each spatial index in ``slots``.

    linear: one ``scf.for`` over r in [1, R) carries one accumulator per slot,
    so the slots' folds interleave; each starts from its element r = 0, and
    folds r = 1, 2, ... in turn (row-major order of the reduced coordinates).

    tree: unrolled; level by level, element 2k is combined with element 2k+1
    (an odd last element moves up unchanged), until one value is left.
    """
    bases = [plan.src_base(s) for s in slots]
    if plan.fold == "tree":
        return [_tree_fold(plan, src, base) for base in bases]
    firsts = [emit.load(src, plan.src_shape, plan.src_slot(base, 0)) for base in bases]
    if plan.R == 1:
        return firsts
    with _name("tile.reduce.fold"):
        loop = emit.unrolled_for(1, plan.R, firsts)
        with ir.InsertionPoint(loop.body):
            r = loop.induction_variable
            accs = list(loop.inner_iter_args)
            new = [
                emit.combine(plan.info.kind, acc, emit.load(src, plan.src_shape, plan.src_slot(base, r)))
                for base, acc in zip(bases, accs)
            ]
            scf.yield_(new)
    return list(loop.results)


def _tree_fold(plan: _Plan, src, base) -> ir.Value:
    level = [emit.load(src, plan.src_shape, plan.src_slot(base, r)) for r in range(plan.R)]
    with _name("tile.reduce.tree"):
        while len(level) > 1:
            pairs = [emit.combine(plan.info.kind, a, b) for a, b in zip(level[0::2], level[1::2])]
            level = pairs + level[len(pairs) * 2 :]
    return level[0]


def _finish(plan: _Plan, dst, s, v) -> None:
    """Apply accum (once) and store the result of spatial index ``s``."""
    slot = plan.dst_slot(s)
    if plan.info.accum:
        v = emit.combine(plan.info.kind, emit.load(dst, plan.dst_shape, slot), v)
    emit.store(v, dst, plan.dst_shape, slot)


def _emit_thread_wise(plan: _Plan, dst, src) -> None:
    if plan.S == 1:
        (v,) = _fold_registers(plan, src, [0])
        _finish(plan, dst, 0, v)
        return
    with _name("tile.reduce.spatial"):
        loop = emit.unrolled_for(0, plan.S)
        with ir.InsertionPoint(loop.body):
            s = loop.induction_variable
            (v,) = _fold_registers(plan, src, [s])
            _finish(plan, dst, s, v)
            scf.yield_([])


def _emit_butterfly(plan: _Plan, dst, src) -> None:
    info = plan.info
    slots = list(range(plan.S))
    values = _fold_registers(plan, src, slots)
    # Lanes i and i ^ (1 << b) compute op(v_i, v_j) and op(v_j, v_i): identical bits,
    # since every combine here is commutative on PTX (NaN results are canonical).
    for b in sorted(info.reduced_thread_bits, reverse=True):
        with _name(f"tile.reduce.butterfly.{1 << b}"):
            others = [emit.shuffle_xor(v, 1 << b) for v in values]
            values = [emit.combine(info.kind, v, o) for v, o in zip(values, others)]
    if str(values[0].type) == "f64":
        # An f64 NaN result keeps one operand's payload on NVIDIA GPUs (f32/f16/bf16
        # NaN results are canonical), so lanes whose NaNs had different payloads
        # could end up different: make an f64 NaN result canonical, once, here.
        values = [emit.canonical_nan(v) for v in values]
    for s, v in zip(slots, values):
        _finish(plan, dst, s, v)
