"""What a ``tile.reduce`` means: the checked, normalised view of one op.

``analyze(op)`` reads an op's operands and attributes, checks every rule of
docs/spec.md (the op, layouts, semantics, exec scopes) that does not depend on the lowering variant, and returns an
``Analysis``: either a ``ReduceInfo`` (everything the lowering needs, already
resolved) or the list of broken rules, each one sentence that names the rule.

It is the one source of truth for those rules: ``tile-verify`` reports the
errors at the op's location, and the ``local`` variant's ``local_valid``
predicate reports them as its rejection reasons.

Thread bits. Every thread-axis iter of a layout moves some bits of the thread
index inside the exec scope: ``laneid`` and ``tid_in_wg`` iters move bits from
bit 0 up, ``wid_in_wg`` and ``warpid`` iters move bits from bit 5 up (a warp is 32
threads), ``cta_in_cluster`` iters from bit 10 up (a CTA counts as 1024 threads).
An iter of extent ``e`` and stride ``s`` (both powers of two) moves bits
``log2(s) .. log2(s) + log2(e) - 1``. The reduced thread bits ``L`` are the bits
moved by the reduced dims; at warp scope they are all lane bits. Bits 0-4 are lane
bits, 5-9 warp bits, 10-13 CTA bits.

At cta and cluster scope the layouts' warps are the block's, and at cluster scope the
layouts' CTAs are the cluster's: a power of two up to 16, equal to the function's
``known_cluster_size`` (or ``nvvm.cluster_dim``) where it has one.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field

from . import analysis_combiner as combiners
from .analysis_exchange import exchange_problems, thread_bits
from .errors import LayoutError
from .ir import ir, layout_text
from .layout import TileLayout
from .vocab import (
    ADDRESS_SPACES,
    ARG_KINDS,
    CTA_BITS_BASE,
    DTYPES,
    FOLDS,
    LANE_BITS,
    MAX_REGISTERS,
    REDUCE_ATTRIBUTES,
    SCOPE_AXES,
    SCOPE_THREADS,
    SCOPES,
    WARP_SIZE,
    WARPGROUP_SIZE,
)


@dataclass(frozen=True)
class Operand:
    """A memref operand: its static shape, element type and storage scope."""

    shape: tuple[int, ...]
    dtype: str
    storage: str  # "local" (registers), "shared" or "global"

    @property
    def numel(self) -> int:
        n = 1
        for e in self.shape:
            n *= e
        return n


@dataclass(frozen=True)
class ReduceInfo:
    """A verified ``tile.reduce``, with everything the lowering asks about.

    ``kind`` is a named kind, ``argmax``/``argmin``, or None for a combiner (``combiner``:
    its function's symbol name). ``dst`` and ``src`` are the first dst and src;
    ``dsts``/``srcs`` all of them (docs/spec.md, "Combiner reductions")."""

    kind: str | None
    exec_scope: str
    axes: tuple[int, ...]  # reduced src dims, ascending, non-negative
    accum: bool
    dispatch: str | None
    dst: Operand
    src: Operand
    src_layout: TileLayout
    dst_layout: TileLayout
    # For each src dim, the dst dim that holds it, or None for a dropped reduced dim.
    dst_dim: tuple[int | None, ...]
    reduced_thread_bits: tuple[int, ...]  # L, ascending
    src_replica_bits: tuple[int, ...]
    dsts: tuple[Operand, ...] = ()
    srcs: tuple[Operand, ...] = ()
    combiner: str | None = None
    fold: str | None = None  # the op's own ``fold``, over the pass option's

    @property
    def named(self) -> bool:
        """Whether the op combines with a named kind (sum, max, ...): one dst, one src."""
        return self.combiner is None and self.kind not in ARG_KINDS

    @property
    def dtype(self) -> str:
        return self.src.dtype

    @property
    def spatial_dims(self) -> tuple[int, ...]:
        return tuple(d for d in range(len(self.src_layout.shape)) if d not in self.axes)

    def reduces_across_threads(self) -> bool:
        return bool(self.reduced_thread_bits)

    @property
    def reduced_lane_bits(self) -> tuple[int, ...]:
        """The reduced thread bits inside a warp (0..4): a lane butterfly's."""
        return tuple(b for b in self.reduced_thread_bits if b < LANE_BITS)

    @property
    def reduced_warp_bits(self) -> tuple[int, ...]:
        """The reduced thread bits of a warp index (5-9): an exchange between warps."""
        return tuple(b for b in self.reduced_thread_bits if LANE_BITS <= b < CTA_BITS_BASE)

    @property
    def reduced_cta_bits(self) -> tuple[int, ...]:
        """The reduced thread bits of a CTA index in its cluster (10 up): an exchange
        between the CTAs of a cluster."""
        return tuple(b for b in self.reduced_thread_bits if b >= CTA_BITS_BASE)

    @property
    def cluster_ctas(self) -> int:
        """The CTAs of the cluster the layouts span (1 below cluster scope)."""
        return self.src_layout.reach("cta_in_cluster") + 1


class InLayoutText(str):
    """A reason about the text of the layout attribute ``attribute``, a plain string
    everywhere, that also knows the ``column`` (1-based) of that text it is about (None:
    no column), so that tile-verify can point there."""

    def __new__(cls, reason: str, attribute: str, column: int | None):
        self = super().__new__(cls, reason)
        self.attribute, self.column = attribute, column
        return self


@dataclass
class Analysis:
    info: ReduceInfo | None = None
    errors: list[str] = field(default_factory=list)


# --- reading the op ---------------------------------------------------------------


def _operand(value: ir.Value, role: str, errors: list[str]) -> Operand | None:
    t = value.type
    if not isinstance(t, ir.MemRefType):
        try:
            t = ir.MemRefType(t)
        except (ValueError, TypeError):
            errors.append(f"{role}: expected a memref, got {value.type}")
            return None
    if not t.has_static_shape:
        errors.append(f"{role}: expected a memref with a static shape, got {t}")
        return None
    if t.rank == 0:
        errors.append(f"{role}: a 0-d memref ({t}) holds no tile: give it shape 1 "
                      f"(memref<1x{t.element_type}...>)")
        return None
    if t.layout != ir.AffineMapAttr.get(ir.AffineMap.get_identity(t.rank)):
        errors.append(f"{role}: expected a memref with the identity layout, got {t.layout}")
        return None
    dtype = str(t.element_type)
    if dtype not in DTYPES:
        errors.append(
            f"{role}: element type {dtype} is not supported (expected one of {', '.join(DTYPES)})"
        )
        return None
    space = t.memory_space
    if space is None:
        storage = "global"
    else:
        text = str(space)
        name = text.removeprefix("#gpu.address_space<").removesuffix(">")
        if name not in ADDRESS_SPACES or not text.startswith("#gpu.address_space<"):
            spaces = ", ".join(f"#gpu.address_space<{name}>" for name in ADDRESS_SPACES)
            errors.append(f"{role}: memory space {text} is not a #gpu.address_space (expected one of "
                          f"{spaces}, or none)")
            return None
        storage = ADDRESS_SPACES[name]
    return Operand(tuple(t.shape), dtype, storage)


def _unknown_attributes(op, errors: list[str], known: tuple[str, ...] = REDUCE_ATTRIBUTES, skip=()) -> None:
    """An attribute the op does not know (``known``) is a typo until proven otherwise:
    its default would be used silently. Name the closest known one. (``skip``: names
    another error has explained already.)"""
    for name in op.attributes:
        if name in known or name in skip:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        errors.append(f"unknown attribute '{name}'{hint} ({op.name} takes: {', '.join(known)})")


def _attr(op, name: str, kind: type, what: str, errors: list[str]):
    if name not in op.attributes:
        return None
    a = op.attributes[name]
    if not isinstance(a, kind):
        errors.append(f"{name}: expected {what}, got {a}")
        return None
    return a


def _layout(op, name: str, operand: Operand, errors: list[str], scope: str) -> TileLayout | None:
    """The layout attribute ``name`` of the ``operand`` (its default without one), or None
    with the reasons in ``errors``: an invalid layout's problems, and the axes ``scope``
    does not allow, all at once (the scope's other checks need a valid layout)."""
    if name not in op.attributes:
        return _default_layout(name, operand, errors)
    text = layout_text(op.attributes[name])
    if text is None:
        errors.append(f'{name}: expected a #tile.layout<"..."> attribute, got {op.attributes[name]}')
        return None
    try:
        layout = TileLayout.parse(text)
    except LayoutError as e:
        errors.append(InLayoutText(f'{name}: cannot parse "{text}": {e}', name, e.column))
        return None
    bad = layout.problems()
    errors.extend(f"{name}: {p}" for p in bad)
    if bad:
        errors.extend(axis_problems(name, layout, scope))
    return None if bad else layout


def _default_layout(name: str, operand: Operand, errors: list[str]) -> TileLayout | None:
    """Without a layout, the memref's shape is the tile, row-major: in registers
    (``local``) one thread's tile, which the register cap bounds; in workgroup memory
    the tile the threads of the scope share."""
    role = name.removesuffix("_layout")
    if 0 in operand.shape:
        errors.append(f"{role}: memref dim {operand.shape.index(0)} has extent 0, but a tile has at "
                      "least one element in each dim")
        return None
    if operand.storage == "local" and operand.numel > MAX_REGISTERS:
        errors.append(f"{role}: without a {name}, the memref's {operand.numel} elements are one "
                      f"thread's registers, but a thread's tile may span at most {MAX_REGISTERS} slots; "
                      f"give a {name} that spreads them over threads")
        return None
    return TileLayout.row_major(operand.shape)


_MEMO: dict = {}
_MEMO_LIMIT = 4096


def memo_key(op) -> tuple:
    """What an op's analysis (and its lowering) depends on: its operand types and its
    attributes, as text, and the block and cluster sizes its function declares."""
    return (
        tuple(str(v.type) for v in op.operands),
        tuple((name, str(attr)) for name, attr in op.attributes.items()),
        known_block_size(op),
        known_cluster_size(op),
        combiners.combiner_key(op),
    )


def known_block_size(op) -> tuple[int, ...] | None:
    """The ``known_block_size`` of the enclosing ``gpu.func`` (``gpu.known_block_size``
    on another function), or None: the launch's block, where the IR fixes it."""
    return _function_dims(op, ("known_block_size", "gpu.known_block_size"))


# The attributes that fix a kernel's cluster shape: gpu.func's own, what
# convert-gpu-to-nvvm makes of it on an llvm.func, and the NVVM one (PTX .reqnctapercluster).
CLUSTER_SIZE_ATTRIBUTES = ("known_cluster_size", "gpu.known_cluster_size", "nvvm.cluster_dim")


def known_cluster_size(op) -> tuple[int, ...] | None:
    """The cluster shape the enclosing function fixes (``known_cluster_size`` on a
    ``gpu.func``, ``gpu.known_cluster_size`` or ``nvvm.cluster_dim`` on another), or None."""
    return _function_dims(op, CLUSTER_SIZE_ATTRIBUTES)


def _function_dims(op, names) -> tuple[int, ...] | None:
    """The first of the attributes ``names`` on the function around ``op``, as ints."""
    parent = op.parent
    while parent is not None:
        parent = getattr(parent, "operation", parent)
        for name in names:
            if name in parent.attributes:
                return tuple(ir.DenseI32ArrayAttr(parent.attributes[name]))
        if parent.name in ("gpu.func", "func.func", "llvm.func"):
            return None
        parent = parent.parent
    return None


def analyze(op) -> Analysis:
    """Check one ``tile.reduce`` (an ``ir.Operation`` or OpView) against the rules of docs/spec.md.

    The result depends only on the operand types and the attributes, so it is
    memoized on their text: a module of many identical reduces analyses once.
    Callers must treat the returned Analysis as read-only.
    """
    return memoized(_MEMO, op, _analyze)


def memoized(memo: dict, op, analyze_op) -> Analysis:
    """``analyze_op(op)``, looked up in ``memo`` by ``memo_key(op)`` first."""
    op = getattr(op, "operation", op)
    key = memo_key(op)
    found = memo.get(key)
    if found is None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        found = memo[key] = analyze_op(op)
    return found


def _analyze(op) -> Analysis:
    out = _analyze_op(op)
    if out.info is not None:
        _check_block(out, known_block_size(op), known_cluster_size(op))
    return out


def _check_block(out: Analysis, block: tuple[int, ...] | None, cluster: tuple[int, ...] | None) -> None:
    """What the op needs of its block (``block_needs``) against the block the function
    fixes, if it does; at cluster scope the layouts' CTAs are the cluster's
    (``cluster_problems``)."""
    info = out.info
    layouts = [(f"{name}_layout", layout) for name, layout, operand in
               (("src", info.src_layout, info.src), ("dst", info.dst_layout, info.dst))
               if operand.storage == "local"]
    out.errors.extend(block_problems(layouts, block, info.exec_scope))
    if info.exec_scope == "cluster":
        out.errors.extend(cluster_problems(layouts, cluster))
    if out.errors:
        out.info = None


# The threads a block must be a whole number of, for an op at each scope below cta: its
# instances are whole warps, and whole aligned warpgroups (docs/spec.md, "Exec scopes").
_SCOPE_UNIT = {"thread": 1, "warp": WARP_SIZE, "warpgroup": WARPGROUP_SIZE}


def block_needs(scope: str, layout: TileLayout | None) -> tuple[int | None, int]:
    """(exactly how many threads or None, a number the threads must be a multiple of)
    that an op at ``scope`` needs of its block, for its register ``layout`` (None: an
    operand in workgroup memory, which spreads nothing over threads).

    At thread, warp and warpgroup scope: whole instances of the scope. At cta and cluster
    scope, a register layout's warps are the block's: exactly ``32 * warps``; but a
    layout that reaches no thread other than 0 (no thread axis moves: each thread
    reduces or copies its own tile) needs nothing. tile-verify checks these against
    ``known_block_size`` (``block_problems``); the launch signature records them."""
    if scope not in ("cta", "cluster"):
        return None, _SCOPE_UNIT[scope]
    if layout is None or layout.thread_reach() == 0:
        return None, 1
    return WARP_SIZE * (layout.reach("warpid") + 1), WARP_SIZE


def block_problems(layouts, block: tuple[int, ...] | None, scope: str) -> list[str]:
    """Why the block that ``block`` fixes (the function's known_block_size, or None:
    unknown) cannot run an op at ``scope`` with these register ``layouts`` ((name,
    layout) pairs): see ``block_needs``."""
    if block is None:
        return []
    threads = math.prod(block)
    _, unit = block_needs(scope, None)
    if threads % unit:
        return [f"a {scope}-scope op runs on whole {scope}s ({unit} threads each), but the block has "
                f"{threads} threads (known_block_size = {list(block)})"]
    problems = []
    for name, layout in layouts:
        exact, _ = block_needs(scope, layout)
        if exact is not None and exact != threads:
            problems.append(
                f"{name} spans {exact // WARP_SIZE} warp(s) ({exact} threads), but the block has "
                f"{threads} threads (known_block_size = {list(block)}): at {scope} scope they must match"
            )
    return problems


def cluster_problems(layouts, cluster: tuple[int, ...] | None) -> list[str]:
    """Why the cluster-scope ``layouts`` ((name, layout) pairs) do not describe one
    cluster: the CTAs a layout spans (its largest ``cta_in_cluster`` + 1) must be a power
    of two (the CTA bits of the thread index; at most 16, ``AXIS_LIMITS``), and equal the
    function's cluster size where it fixes one (``cluster``: known_cluster_size, or None)."""
    problems = []
    for name, layout in layouts:
        ctas = layout.reach("cta_in_cluster") + 1
        if ctas & (ctas - 1):
            problems.append(
                f"{name} spans {ctas} CTAs of its cluster, but a cluster-scope layout spans a power of "
                "two (1, 2, 4, 8 or 16): its CTAs are bits of the thread index"
            )
        elif cluster is not None and math.prod(cluster) != ctas:
            problems.append(
                f"{name} spans {ctas} CTA(s), but the cluster has {math.prod(cluster)} (known_cluster_size = "
                f"{list(cluster)}): at cluster scope they must match"
            )
    return problems


def _analyze_op(op) -> Analysis:
    out = Analysis()
    errors = out.errors
    how, explained = combiners.combining(op, errors)
    names = combiners.roles(op, how, errors) if how is not None else None
    if names is None:
        return out
    _unknown_attributes(op, errors, skip=explained)
    if combiners.narrow_index(op, how, names, errors):
        return out
    operands = [_operand(v, name, errors) for v, name in zip(op.operands, names)]
    if None in operands:
        return out
    n_dst = 2 if how.arg else len(operands) // 2
    dsts, srcs = tuple(operands[:n_dst]), tuple(operands[n_dst:])
    combiners.check_sides(dsts, srcs, names, how, errors)
    if how.combiner is not None and not errors:
        combiners.check_function(op, how.combiner, dsts, errors)
    dst, src = dsts[0], srcs[0]

    kind = how.kind
    scope = _attr(op, "exec_scope", ir.StringAttr, "a string", errors)
    scope = scope.value if scope else None
    if scope not in SCOPES:
        errors.append(f"exec_scope: expected one of {', '.join(SCOPES)}, got {scope}")
    axes_attr = _attr(op, "axes", ir.DenseI64ArrayAttr, "array<i64: ...>", errors)
    accum_attr = _attr(op, "accum", ir.BoolAttr, "a bool (true or false)", errors)
    dispatch_attr = _attr(op, "dispatch", ir.StringAttr, "a string (a variant name)", errors)
    fold_attr = _attr(op, "fold", ir.StringAttr, f"a string ({' or '.join(FOLDS)})", errors)
    if fold_attr is not None and fold_attr.value not in FOLDS:
        errors.append(f"fold: expected {' or '.join(map(repr, FOLDS))}, got {fold_attr.value!r}")
    if errors:
        return out

    src_layout = _layout(op, "src_layout", src, errors, scope)
    dst_layout = _layout(op, "dst_layout", dst, errors, scope)
    for name, layout, operand in (("src", src_layout, src), ("dst", dst_layout, dst)):
        if layout is not None:  # an invalid one has said what it could
            errors.extend(scope_problems(f"{name}_layout", layout, scope))
            errors.extend(span_problems(name, operand, f"{name}_layout", layout))
    if errors:
        return out

    rank = len(src_layout.shape)
    raw_axes = list(axes_attr) if axes_attr is not None else [-1]
    axes = set()
    for a in raw_axes:
        if not -rank <= a < rank:
            errors.append(f"axes: {a} is out of range for a rank-{rank} source")
        else:
            axes.add(a % rank)
    if errors:
        return out
    axes = tuple(sorted(axes))

    dst_dim = _match_dst_shape(src_layout.shape, dst_layout.shape, axes, errors)
    if errors:
        return out

    try:
        reduced = tuple(sorted(b for d in axes for b in thread_bits(src_layout.shard[d])))
        src_rep = thread_bits(src_layout.replica)
    except LayoutError as e:
        errors.append(f"src_layout: {e}")
        return out
    try:
        dst_rep = thread_bits(dst_layout.replica)
    except LayoutError as e:
        errors.append(f"dst_layout: {e}")
        return out
    # The reduced bits never overlap the src replica bits (which would count copies of an
    # element twice): a valid layout's replica moves only thread bits its shard leaves free.
    errors.extend(exchange_problems(src_layout, dst_layout, axes, dst_dim, reduced, src_rep, dst_rep))
    combiners.check_index_width(how, dsts[-1].dtype, math.prod(src_layout.shape[d] for d in axes), errors)
    if errors:
        return out

    out.info = ReduceInfo(
        kind=kind,
        exec_scope=scope,
        axes=axes,
        accum=accum_attr.value if accum_attr is not None else False,
        dispatch=dispatch_attr.value if dispatch_attr is not None else None,
        dst=dst,
        src=src,
        src_layout=src_layout,
        dst_layout=dst_layout,
        dst_dim=dst_dim,
        reduced_thread_bits=reduced,
        src_replica_bits=src_rep,
        dsts=dsts,
        srcs=srcs,
        combiner=how.combiner,
        fold=fold_attr.value if fold_attr is not None else None,
    )
    return out


def scope_problems(name: str, layout: TileLayout, scope: str) -> list[str]:
    """Why the layout called ``name`` does not fit ``scope``: an axis the scope does not
    allow, or a thread past the scope's last."""
    problems = axis_problems(name, layout, scope)
    if not problems and layout.thread_reach() >= SCOPE_THREADS[scope]:
        problems.append(
            f"{name} reaches thread {layout.thread_reach()}, but {scope} scope has "
            f"threads 0..{SCOPE_THREADS[scope] - 1}"
        )
    return problems


def axis_problems(name: str, layout: TileLayout, scope: str) -> list[str]:
    """The axes of the layout called ``name`` that ``scope`` does not allow, one reason
    each. Asked of an invalid layout too: its other problems do not hide these."""
    problems = []
    for axis in sorted(layout.axes()):
        if axis not in SCOPE_AXES[scope]:
            hint = " (a warp-scope layout names lanes: use laneid)" if axis == "warpid" and scope == "warp" else ""
            problems.append(
                f"{name}: axis {axis} is not allowed at {scope} scope "
                f"(allowed: {', '.join(SCOPE_AXES[scope])}){hint}"
            )
    return problems


def span_problems(role: str, operand: Operand, name: str, layout: TileLayout) -> list[str]:
    """Why the register memref ``role`` is too small for the layout called ``name``."""
    if layout.span > operand.numel:
        return [f"{role}: the memref holds {operand.numel} element(s) but {name} spans {layout.span} register slot(s)"]
    return []


def _match_dst_shape(src_shape, dst_shape, axes, errors) -> tuple[int | None, ...]:
    """Map src dims to dst dims. Each reduced dim is dropped or kept with extent 1, dim
    by dim; a dst of shape (1,) also stands for a scalar (every dim dropped).
    Returns, for each src dim, its dst dim or None (dropped)."""
    dst_shape = tuple(dst_shape)

    def match(d: int, j: int) -> list | None:
        if d == len(src_shape):
            return [] if j == len(dst_shape) else None
        kept_extent = 1 if d in axes else src_shape[d]
        if j < len(dst_shape) and dst_shape[j] == kept_extent:
            rest = match(d + 1, j + 1)
            if rest is not None:
                return [j, *rest]
        if d in axes:
            rest = match(d + 1, j)
            if rest is not None:
                return [None, *rest]
        return None

    found = match(0, 0)
    if found is None and dst_shape == (1,) and all(d in axes for d in range(len(src_shape))):
        found = [None] * len(src_shape)
    if found is not None:
        return tuple(found)
    dropped = tuple(e for d, e in enumerate(src_shape) if d not in axes)
    kept = tuple(1 if d in axes else e for d, e in enumerate(src_shape))
    want = _shape(kept) if dropped == kept else f"{_shape(dropped or (1,))} or {_shape(kept)}"
    if len(axes) > 1 and dropped != kept:
        want += ", or a mix (each reduced dim dropped or kept with extent 1)"
    errors.append(
        f"dst shape {_shape(dst_shape)} does not match src shape {_shape(src_shape)} reduced over "
        f"axes {list(axes)}: expected {want}"
    )
    return ()


def _shape(s) -> str:
    return "(" + ", ".join(map(str, s)) + ")"
