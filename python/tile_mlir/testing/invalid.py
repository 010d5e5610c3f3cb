"""Random invalid ``tile.reduce`` ops, each breaking exactly one rule.

``random_invalid_case(rng)`` draws a valid configuration (``differential.random_case``)
and breaks one rule of docs/spec.md in it, chosen at random among the rules that apply
to that configuration. It returns an ``InvalidCase``: the rule's name, the op as a
complete ``func.func`` (the op on line 2, column 3; a cta's function declares its
``gpu.known_block_size``, the src layout's warps), and a fragment that the diagnostic
must contain (a cluster's function declares its ``gpu.known_block_size`` too, and some its
``gpu.known_cluster_size``). ``test/python/test_invalid.py`` checks that every one is rejected by
``tile-verify`` with that diagnostic, at the op's own location.

Nothing here imports MLIR.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..analysis import scope_problems
from ..layout import Iter, TileLayout
from ..vocab import AXIS_LIMITS, CTA_BITS_BASE, LANE_BITS, REDUCE_ATTRIBUTES, REDUCE_KINDS, SCOPES
from .cases import ReduceCase, private_type
from .differential import iter_bits, random_case


@dataclass(frozen=True)
class InvalidCase:
    rule: str  # which rule is broken
    text: str  # a func.func holding the op, on line 2 at column 3
    expected: str  # a fragment of the diagnostic that names the broken rule


@dataclass
class _Op:
    """A tile.reduce being broken: its memref types and attributes, as text."""

    dst_type: str
    src_type: str
    attrs: dict[str, str]
    case: ReduceCase
    block: int | None = None  # the function's gpu.known_block_size (x), if it declares one
    cluster: int | None = None  # the function's gpu.known_cluster_size (x), if it declares one

    @classmethod
    def of(cls, case: ReduceCase) -> _Op:
        attrs = {
            "kind": f'"{case.kind}"',
            "exec_scope": f'"{case.exec_scope}"',
            "axes": f"array<i64: {', '.join(map(str, case.axes))}>",
            "accum": "true" if case.accum else "false",
        }
        if case.src_layout is not None:
            attrs["src_layout"] = f'#tile.layout<"{case.src_layout}">'
            attrs["dst_layout"] = f'#tile.layout<"{case.dst_layout}">'
        block = case.block() if case.exec_scope in ("cta", "cluster") else None
        cluster = case.grid() if case.cluster_fixed else None
        return cls(private_type(case.dst_shape, case.dtype), private_type(case.src_shape, case.dtype), attrs, case,
                   block, cluster)

    def text(self) -> str:
        attrs = ", ".join(f"{k} = {v}" for k, v in self.attrs.items())
        declared = [f"gpu.known_{what}_size = array<i32: {n}, 1, 1>"
                    for what, n in (("block", self.block), ("cluster", self.cluster)) if n is not None]
        block = f" attributes {{{', '.join(declared)}}}" if declared else ""
        return (
            f"func.func @bad(%dst: {self.dst_type}, %src: {self.src_type}){block} {{\n"
            f'  "tile.reduce"(%dst, %src) {{{attrs}}} : ({self.dst_type}, {self.src_type}) -> ()\n'
            "  return\n}\n"
        )

    def layout(self, role: str) -> TileLayout:
        """The layout as the op has it now (so that two rules may break one op)."""
        text = self.attrs[f"{role}_layout"]
        return TileLayout.parse(text.removeprefix('#tile.layout<"').removesuffix('">'))

    def set_layout(self, role: str, layout: TileLayout | str) -> None:
        self.attrs[f"{role}_layout"] = f'#tile.layout<"{layout}">'


# --- the rules: each breaks one, or returns None when it does not apply -------------------


# The attributes an op must have, with their values. A misspelled one is reported as
# missing, and the diagnostic names the misspelling: IRDL's exec_scope (in the words of
# tile_mlir.irdl_messages), tile-verify's kind (which a combiner may replace); a
# misspelled optional one is tile-verify's unknown attribute.
REQUIRED = {"kind": REDUCE_KINDS, "exec_scope": SCOPES}


def _misspelled(op: _Op, rng: random.Random):
    name = rng.choice(list(op.attrs))
    value = op.attrs.pop(name)
    i = rng.randrange(len(name))
    typo = rng.choice([name[:i] + name[i + 1:], name[:i] + name[i] * 2 + name[i + 1:], name + "s"])
    if typo in REDUCE_ATTRIBUTES or not re.fullmatch(r"[a-z_]+", typo):
        typo = name.replace("_", "") + "x"
    op.attrs[typo] = value
    if name in REQUIRED:
        values = ", ".join(f'"{v}"' for v in REQUIRED[name])
        if name == "kind":
            return (f"missing attribute 'kind' (one of {values}) or 'combiner' (= @a func.func that combines); "
                    f"'{typo}' looks like a misspelling of 'kind'")
        return f"missing attribute '{name}' (one of {values}); '{typo}' looks like a misspelling of it"
    return f"unknown attribute '{typo}'"


_WRONG_TYPES = {
    "axes": ["0", '"0"', "array<i32: 0>", "[0]"],
    "accum": ['"true"', "1", "1 : i32"],
    "src_layout": ['"S[4]"', "4"],
    "dst_layout": ['"S[1]"', "unit"],
    "dispatch": ["1", "true"],
}


def _wrong_type(op: _Op, rng: random.Random):
    name = rng.choice(sorted(_WRONG_TYPES))
    op.attrs[name] = rng.choice(_WRONG_TYPES[name])
    return f"{name}: expected"


def _axis_out_of_range(op: _Op, rng: random.Random):
    rank = len(op.case.src_shape) if op.case.src_layout is None else op.layout("src").rank
    axis = rng.choice([rank, rank + 3, -rank - 1])
    op.attrs["axes"] = f"array<i64: {axis}>"
    return f"axes: {axis} is out of range for a rank-{rank} source"


def _dtype_mismatch(op: _Op, rng: random.Random):
    other = "f64" if op.case.dtype != "f64" else "f32"
    op.dst_type = private_type(op.case.dst_shape, other)
    return f"dtype mismatch: src={op.case.dtype} dst={other}"


def _unsupported_dtype(op: _Op, rng: random.Random):
    dtype = rng.choice(["i8", "i16", "f8E4M3FN", "i1"])
    op.dst_type, op.src_type = private_type(op.case.dst_shape, dtype), private_type(op.case.src_shape, dtype)
    return f"element type {dtype} is not supported"


def _dynamic_shape(op: _Op, rng: random.Random):
    op.src_type = f"memref<?x{op.case.dtype}, #gpu.address_space<private>>"
    return "src: expected a memref with a static shape"


def _memref_too_small(op: _Op, rng: random.Random):
    if op.case.src_layout is None or op.layout("src").span < 2:
        return None
    op.src_type = private_type((op.layout("src").span - 1,), op.case.dtype)
    return "src: the memref holds"


def _replica(op: _Op, role: str, extra: Iter) -> TileLayout:
    layout = op.layout(role)
    return TileLayout(layout.shard, (*layout.replica, extra))


def _lanes_past_the_warp(op: _Op, rng: random.Random):
    if op.case.exec_scope == "thread" or op.case.src_layout is None:
        return None
    op.set_layout("src", _replica(op, "src", Iter(2, rng.choice([32, 64]), "laneid")))
    return "src_layout: laneid reaches lane"


def _past_the_register_cap(op: _Op, rng: random.Random):
    if op.case.src_layout is None:
        return None
    op.set_layout("src", _replica(op, "src", Iter(2, rng.choice([1024, 5000, 10**12]), "m")))
    return "src_layout: m reaches register slot"


def _beyond_int64(op: _Op, rng: random.Random):
    if op.case.src_layout is None:
        return None
    number = str(rng.choice([2**63, 10**20, 10**30]))
    text = re.sub(r"^S\[(\(*)\d+", lambda m: f"S[{m.group(1)}{number}", op.case.src_layout)
    op.set_layout("src", text)
    return f"{number} does not fit in 64 bits"


def _copies_overlap(op: _Op, rng: random.Random):
    if op.case.src_layout is None:
        return None
    role = rng.choice(["src", "dst"])
    layout = op.layout(role)
    # An iter that moves an axis once more, without reaching past the axis's limit.
    movers = [it for dim in layout.shard for it in dim
              if it.extent > 1 and layout.reach(it.axis) + it.stride < AXIS_LIMITS[it.axis]]
    if not movers:
        return None
    it = rng.choice(movers)
    op.set_layout(role, _replica(op, role, Iter(2, it.stride, it.axis)))
    return f"{role}_layout: coordinates"


def _dst_shape(op: _Op, rng: random.Random):
    if op.case.dst_layout is None:
        shape = (*op.case.dst_shape, 2)
        op.dst_type = private_type(shape, op.case.dtype)
        return f"dst shape {_shape(shape)} does not match"
    dst = op.layout("dst")
    shard = (*dst.shard, (Iter(2, dst.span, "m"),))
    op.set_layout("dst", TileLayout(shard, dst.replica))
    op.dst_type = private_type((dst.span * 2,), op.case.dtype)
    return "does not match src shape"


def _dst_replica(op: _Op, rng: random.Random, warp_bits: bool = False, cta_bits: bool = False):
    """The dst leaves out one of its thread replica iters; with ``warp_bits``, one that
    holds a reduced warp (or CTA) bit; with ``cta_bits``, one that holds a reduced CTA bit."""
    if op.case.dst_layout is None:
        return None
    src, dst = op.layout("src"), op.layout("dst")
    low = CTA_BITS_BASE if cta_bits else LANE_BITS
    reduced = {b for a in op.case.axes for it in src.shard[a % src.rank] for b in iter_bits(it) if b >= low}
    thread = [it for it in dst.replica if it.axis != "m" and (not (warp_bits or cta_bits) or set(iter_bits(it)) & reduced)]
    if not thread:
        return None
    drop = rng.choice(thread)
    op.set_layout("dst", TileLayout(dst.shard, tuple(it for it in dst.replica if it is not drop)))
    return "dst_layout must replicate over thread bits"


def _axis_not_in_scope(op: _Op, rng: random.Random):
    if op.case.src_layout is None:
        return None
    scope = op.case.exec_scope
    axis = {"thread": "laneid", "warp": "wid_in_wg", "warpgroup": rng.choice(["warpid", "cta_in_cluster"]),
            "cta": rng.choice(["wid_in_wg", "cta_in_cluster"]), "cluster": "tid_in_wg"}[scope]
    op.set_layout("src", _replica(op, "src", Iter(2, 2**4, axis) if axis == "laneid" else Iter(1, 1, axis)))
    return f"src_layout: axis {axis} is not allowed at {op.case.exec_scope} scope"


def _kept_sum_carries(op: _Op, rng: random.Random):
    """A new leading kept dim of two lane iters, each clear of the reduced bits, whose
    sum sets one (``S[(2, 2) : (3@laneid, 5@laneid)]`` reaches lane 8): the exchange would
    pair its threads with others. Src and dst get the dim alike, and stay valid layouts."""
    if op.case.src_layout is None or op.case.exec_scope == "thread":
        return None
    src, dst = op.layout("src"), op.layout("dst")
    axes = sorted({a % src.rank for a in op.case.axes})
    reduced = {b for a in axes for it in src.shard[a] for b in iter_bits(it)}
    mask = sum(1 << b for b in reduced)
    pairs = [(s1, s2) for s1 in range(1, 32) for s2 in range(s1 + 1, 32)
             if not (s1 | s2) & mask and (s1 + s2) & mask and s1 + s2 < 32]
    rng.shuffle(pairs)
    for s1, s2 in pairs[:40]:
        dim = (Iter(2, s1, "laneid"), Iter(2, s2, "laneid"))
        new_src, new_dst = TileLayout((dim, *src.shard), src.replica), TileLayout((dim, *dst.shard), dst.replica)
        scope = op.case.exec_scope  # the new lanes must keep both inside the scope's threads: one rule broken
        if not (new_src.problems() or new_dst.problems() or scope_problems("src_layout", new_src, scope)
                or scope_problems("dst_layout", new_dst, scope)):
            op.set_layout("src", new_src)
            op.set_layout("dst", new_dst)
            op.attrs["axes"] = f"array<i64: {', '.join(str(a + 1) for a in axes)}>"
            return "which has reduced bit(s)"
    return None


def _warp_bit_at_warp_scope(op: _Op, rng: random.Random):
    """A reduced dim spans two warps (``warpid`` or ``wid_in_wg``), and the dst replicates
    over them as the rules ask: only the scope forbids it."""
    if op.case.exec_scope != "warp" or op.case.src_layout is None:
        return None
    axis = rng.choice(["warpid", "wid_in_wg"])
    src, dst = op.layout("src"), op.layout("dst")
    d = rng.choice(sorted({a % src.rank for a in op.case.axes}))
    shard = tuple((Iter(2, 1, axis), *dim) if k == d else dim for k, dim in enumerate(src.shard))
    op.set_layout("src", TileLayout(shard, src.replica))
    op.set_layout("dst", TileLayout(dst.shard, (*dst.replica, Iter(2, 1, axis))))
    return f"src_layout: axis {axis} is not allowed at warp scope"


def _ctas_past_the_cluster(op: _Op, rng: random.Random):
    """A cluster-scope replica on CTAs 16 and up: a cluster has at most 16."""
    if op.case.exec_scope != "cluster":
        return None
    op.set_layout("src", _replica(op, "src", Iter(2, rng.choice([16, 32]), "cta_in_cluster")))
    return "src_layout: cta_in_cluster reaches CTA"


def _cluster_size_mismatch(op: _Op, rng: random.Random):
    """A cluster's function declares another cluster size than its layouts' CTAs."""
    if op.case.exec_scope != "cluster":
        return None
    ctas = op.case.grid()
    op.cluster = rng.choice([n for n in (1, 2, 4, 8, 16) if n != ctas])
    return f"but the cluster has {op.cluster} (known_cluster_size"


def _block_size_mismatch(op: _Op, rng: random.Random):
    """A cta's (or cluster's) function declares a block of another number of threads than
    its layouts' warps."""
    if op.block is None:
        return None
    op.block = rng.choice([n for n in (op.block // 2, op.block + 32, op.block * 2, 1024) if 0 < n <= 1024 and n != op.block])
    return f"but the block has {op.block} threads"


def _memory_space(op: _Op, rng: random.Random):
    op.src_type = op.src_type.replace("#gpu.address_space<private>", rng.choice(["1", '"regs"']))
    return "src: memory space"


RULES = {
    "unknown attribute": _misspelled,
    "attribute type": _wrong_type,
    "axes in range": _axis_out_of_range,
    "one element type": _dtype_mismatch,
    "supported element types": _unsupported_dtype,
    "static shapes": _dynamic_shape,
    "memref holds the span": _memref_too_small,
    "lanes inside the warp": _lanes_past_the_warp,
    "register cap": _past_the_register_cap,
    "64-bit integers": _beyond_int64,
    "no shared places": _copies_overlap,
    "dst shape": _dst_shape,
    "dst replicates over the reduced bits": _dst_replica,
    "axes of the scope": _axis_not_in_scope,
    "a warp bit at warp scope": _warp_bit_at_warp_scope,
    "kept sums clear of the reduced bits": _kept_sum_carries,
    "dst replicates over the reduced warp bits": lambda op, rng: _dst_replica(op, rng, warp_bits=True),
    "a cta's block size": _block_size_mismatch,
    "CTAs inside the cluster": _ctas_past_the_cluster,
    "a cluster's size": _cluster_size_mismatch,
    "dst replicates over the reduced CTA bits": lambda op, rng: _dst_replica(op, rng, cta_bits=True),
    "gpu memory spaces": _memory_space,
}


def random_invalid_case(rng: random.Random) -> InvalidCase:
    """A valid random configuration with exactly one rule broken (module docstring)."""
    while True:
        base = random_case(rng, "bad")
        names = list(RULES)
        rng.shuffle(names)
        for rule in names:
            op = _Op.of(base)
            expected = RULES[rule](op, rng)
            if expected is not None:
                return InvalidCase(rule, op.text(), expected)


def with_rules_broken(case: ReduceCase, rng: random.Random, rules) -> tuple[str, list[str | None]]:
    """The op of ``case`` with each of ``rules`` (names in ``RULES``) broken in turn, a
    later one on what the earlier ones left: its text, and each rule's fragment of the
    diagnostic (None where the rule did not apply)."""
    op = _Op.of(case)
    expected = [RULES[rule](op, rng) for rule in rules]
    return op.text(), expected


def valid_text(case: ReduceCase) -> str:
    """The unbroken op, in the same form (a control for the test)."""
    return _Op.of(case).text()


def _shape(s) -> str:
    return "(" + ", ".join(map(str, s)) + ")"
