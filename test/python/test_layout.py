"""Tests for tile_mlir.layout: the examples of docs/spec.md ("Tile layouts"), errors, and properties."""

import itertools
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tile_mlir.layout import AXES, Iter, LayoutError, Place, TileLayout
from tile_mlir.vocab import MAX_REGISTERS

MMA = "S[((8,4),(4,2)) : ((4@laneid,2),(1@laneid,1))]"


def coords(layout):
    return itertools.product(*map(range, layout.shape))


def home(layout, coord):
    """The one place of ``coord`` in replica copy 0."""
    (place,) = TileLayout(layout.shard).forward(coord)
    return place


# -- the worked examples of docs/spec.md, "Tile layouts" ---------------------------------


def test_row_per_lane():
    layout = TileLayout.parse("S[(32, 8) : (1@laneid, 1)]")
    assert layout.shape == (32, 8) and layout.rank == 2
    for i, j in [(0, 0), (1, 7), (17, 3), (31, 5)]:
        assert layout.forward((i, j)) == {Place(lane=i, warp=0, slot=j)}
    assert (layout.span, layout.size) == (8, 8)
    assert layout.local_extent(1) == 8 and layout.thread_extent(0) == 32
    assert layout.problems() == []


def test_mma_accumulator_formulas():
    layout = TileLayout.parse(MMA)
    assert layout.shape == (32, 8)
    for i, j in coords(layout):
        assert layout.forward((i, j)) == {Place(4 * (i // 4) + j // 2, 0, 2 * (i % 4) + j % 2)}
    assert (layout.span, layout.size) == (8, 8)
    assert layout.local_iters(0) == (Iter(4, 2),) and layout.thread_iters(-1) == (Iter(4, 1, "laneid"),)
    assert layout.problems() == []


def test_default_strides_are_row_major_over_all_iters():
    assert TileLayout.parse("S[(4, 8)]") == TileLayout.parse("S[(4,8) : (8,1)]")
    assert TileLayout.parse("S[(4, 8)]") == TileLayout.row_major((4, 8))
    assert TileLayout.parse("S[((2, 3), 4)]") == TileLayout.parse("S[((2, 3), 4) : ((12, 4), 1)]")


def test_nesting_decides_the_rank():
    assert TileLayout.parse("S[(8, 4)]").shape == (8, 4)
    assert TileLayout.parse("S[((8, 4))]").shape == (32,)
    assert TileLayout.parse("S[4]") == TileLayout.parse("S[4 : 1]") == TileLayout.parse("S[(4,)]")


def test_replicated_dst():
    layout = TileLayout.parse("S[4 : 1] + R[32 : 1@laneid]")
    for i in range(4):
        assert layout.forward((i,)) == {Place(lane, 0, i) for lane in range(32)}
    assert (layout.span, layout.size) == (4, 4)
    assert layout.axes() == {"m", "laneid"}
    assert layout.replica_lane_bits() == (0, 1, 2, 3, 4)


def test_register_stride_gap_makes_span_exceed_size():
    layout = TileLayout.parse("S[(2, 4) : (8, 1)]")
    assert (layout.span, layout.size) == (12, 8)
    assert layout.problems() == []


def test_thread_index_combines_lanes_and_warps():
    layout = TileLayout.parse("S[(4, 32, 2) : (1@warpid, 1@laneid, 1)]")
    assert layout.forward((3, 5, 1)) == {Place(5, 3, 1)}
    wg = TileLayout.parse("S[(128, 2) : (1@tid_in_wg, 1)]")
    assert wg.forward((70, 0)) == {Place(6, 2, 0)}
    overflow = TileLayout.parse("S[64 : 1@laneid]")
    assert overflow.forward((33,)) == {Place(1, 1, 0)}


def test_printing_matches_the_spec_spelling():
    for text in [
        "S[(32, 4) : (1@laneid, 1)] + R[32 : 1@laneid]",
        "S[4 : 1]",
        "S[((8, 4), (4, 2)) : ((4@laneid, 2), (1@laneid, 1))]",
        "S[((8, 4)) : ((4, 1))] + R[(2, 4) : (1@warpid, 8@laneid)]",
    ]:
        assert str(TileLayout.parse(text)) == text
    assert str(TileLayout.parse("S[4 : 1@m]")) == "S[4 : 1]"


def test_canonical_examples():
    assert TileLayout.parse("S[((4, 8)) : ((8, 1))]").canonical() == TileLayout.parse("S[32 : 1]")
    ones = TileLayout.parse("S[((1, 4), 1) : ((9, 1), 5)]")
    assert ones.canonical() == TileLayout.parse("S[(4, 1) : (1, 0)]")
    replica = TileLayout.parse("S[4] + R[(2, 1, 4, 2) : (4@laneid, 3, 1@laneid, 1@warpid)]").canonical()
    assert replica == TileLayout.parse("S[4] + R[(8, 2) : (1@laneid, 1@warpid)]")
    # A lane iter and a register iter are never merged.
    mixed = TileLayout.parse("S[((4, 8)) : ((8@laneid, 1))]")
    assert mixed.canonical() == mixed


# -- parse errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, reason",
    [
        ("S[(32, 4) : (1@laneid, 1)", "at column 26: expected ']', got end of text"),
        ("S[(32, 4", "at column 9: expected ',' or ')'"),
        ("", "at column 1: expected 'S['"),
        ("S[4 : 1@lane]", "at column 9: unknown axis 'lane'"),
        ("S[4 : 1@]", "expected an axis"),
        ("S[4] + R[32]", "at column 12: expected ':' (R[...] needs strides)"),
        ("S[(32, 8) : (1@laneid)]", "at column 13: the strides' nesting (iters per dim: 1) does not match"),
        ("S[((8, 4)) : (1, 8)]", "the strides' nesting (iters per dim: 1, 1) does not match the modes' (2)"),
        ("S[4] + R[(2, 4) : 1@laneid]", "1 replica strides for 2 modes"),
        ("S[4.5]", "at column 4: unexpected character '.'"),
        ("S[four]", "at column 3: expected an integer, got 'four'"),
        ("S[(((4)))]", "at column 5: nested too deep"),
        ("S[4] R[2 : 1]", "at column 6: expected '+' or end of text"),
        ("S[4] + R[2 : 1@laneid] + R[2 : 1]", "expected end of text, got '+'"),
    ],
)
def test_parse_errors(text, reason):
    with pytest.raises(LayoutError) as error:
        TileLayout.parse(text)
    assert reason in str(error.value)


def test_structure_errors():
    with pytest.raises(LayoutError, match="unknown axis"):
        Iter(4, 1, "lane")
    with pytest.raises(LayoutError, match="at least one dim"):
        TileLayout.row_major(())
    with pytest.raises(LayoutError, match="dim 1 has no iters"):
        TileLayout(((Iter(4, 1),), ()))
    layout = TileLayout.parse("S[(2, 3)]")
    with pytest.raises(LayoutError, match="rank 1"):
        layout.forward((0,))
    with pytest.raises(LayoutError, match=r"index 3 of dim 1 is out of range \[0, 3\)"):
        layout.forward((0, 3))
    with pytest.raises(LayoutError, match="dim 2 is out of range for rank 2"):
        layout.local_extent(2)


# -- validity -----------------------------------------------------------------------------


def test_problems_zero_extent():
    assert TileLayout.parse("S[(4, 0) : (1, 1)]").problems() == ["dim 1 iter 0: extent 0 must be >= 1"]


def test_problems_thread_stride_zero():
    layout = TileLayout.parse("S[(4, 2) : (1, 0@laneid)] + R[2 : 0@warpid]")
    assert layout.problems() == [
        "dim 1 iter 0: stride 0 on laneid must be >= 1",
        "replica iter 0: stride 0 on warpid must be >= 1",
    ]
    assert TileLayout.parse("S[(4, 1) : (1, 0)]").problems() == []


def test_problems_shared_place():
    assert TileLayout.parse("S[(2, 2) : (1, 1)]").problems() == [
        "coordinates (0, 1) and (1, 0) both map to lane 0 slot 1"
    ]
    assert TileLayout.parse("S[(2, 2) : (1@warpid, 32@tid_in_wg)]").problems() == [
        "coordinates (0, 1) and (1, 0) both map to lane 0 warp 1 slot 0"
    ]
    # Strides that do not dominate one another, and yet never collide (3*{0,1} + 2*{0,1,2}).
    assert TileLayout.parse("S[(3, 2) : (2@laneid, 3@laneid)]").problems() == []
    assert TileLayout.parse("S[(2, 3) : (2@laneid, 1@laneid)]").problems() == [
        "coordinates (0, 2) and (1, 0) both map to lane 2 slot 0"
    ]


@pytest.mark.parametrize(
    "text, problem",
    [
        # A replica copy on a place the shard uses: lane 8 would hold row 8 and row 0.
        ("S[(16, 4) : (1@laneid, 1)] + R[2 : 8@laneid]",
         "coordinates (0, 0) (replica copy 1) and (8, 0) both map to lane 8 slot 0"),
        ("S[2 : 1@laneid] + R[2 : 1@laneid]",
         "coordinates (0,) (replica copy 1) and (1,) both map to lane 1 slot 0"),
        # A register replica on a slot the shard uses.
        ("S[4 : 1] + R[2 : 2]", "coordinates (0,) (replica copy 1) and (2,) both map to lane 0 slot 2"),
        # Two replica iters moving one lane bit: copies 1 and 2 of an element coincide.
        ("S[1 : 1] + R[(2, 2) : (1@laneid, 1@laneid)]",
         "coordinates (0,) (replica copy 1) and (0,) (replica copy 2) both map to lane 1 slot 0"),
        # An extent on a zero register stride, however large.
        ("S[(32, 1000000000000000000) : (1@laneid, 0)]",
         "coordinates (0, 0) and (0, 1) both map to lane 0 slot 0"),
    ],
)
def test_problems_replica_copies_never_share_a_place(text, problem):
    assert TileLayout.parse(text).problems() == [problem]


def test_register_replica_on_unused_slots_is_valid():
    layout = TileLayout.parse("S[4 : 1] + R[2 : 4]")
    assert layout.problems() == []
    assert layout.forward((1,)) == {Place(0, 0, 1), Place(0, 0, 5)}
    assert (layout.span, layout.size) == (8, 8)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("S[64 : 1@laneid]", "laneid reaches lane 63, but a warp has lanes 0..31"),
        ("S[(2, 32) : (32@laneid, 1@laneid)]", "laneid reaches lane 63, but a warp has lanes 0..31"),
        ("S[1 : 1] + R[64 : 1@laneid]", "laneid reaches lane 63, but a warp has lanes 0..31"),
        ("S[8 : 1@wid_in_wg]", "wid_in_wg reaches warp 7 of its warpgroup, but a warpgroup has warps 0..3"),
        ("S[256 : 1@tid_in_wg]",
         "tid_in_wg reaches thread 255 of its warpgroup, but a warpgroup has threads 0..127"),
        ("S[64 : 1@warpid]", "warpid reaches warp 63, but a block has at most 32 warps"),
        ("S[(4096, 4096)]", "m reaches register slot 16777215, but a thread's tile may span at most 1024 slots"),
        ("S[2000 : 1]", "m reaches register slot 1999, but a thread's tile may span at most 1024 slots"),
    ],
)
def test_problems_axes_stay_inside_the_hardware(text, problem):
    assert TileLayout.parse(text).problems() == [problem]


@pytest.mark.parametrize("digits", [19, 20, 23, 30])
def test_integers_beyond_int64_are_a_layout_error(digits):
    number = "9" * digits if digits > 19 else str(2**63 + 1)
    with pytest.raises(LayoutError, match=f"at column 3: {number} does not fit in 64 bits"):
        TileLayout.parse(f"S[{number}]")
    with pytest.raises(LayoutError, match="does not fit in 64 bits"):
        TileLayout.parse(f"S[4 : -{number}]")


def test_problems_of_huge_layouts_cost_nothing():
    # Each would take hours, or all memory, to enumerate; the rules need only the iters.
    for text in ("S[(1000000000, 1000000000)]", "S[(4611686018427387904, 2) : (1, 1)]",
                 "S[(1000000, 1000000) : (1@laneid, 0)]"):
        assert TileLayout.parse(text).problems()
    assert TileLayout(((Iter(2**70, 1),),)).problems()[0] == "dim 0 iter 0: extent " + str(2**70) + " does not fit in 64 bits"


# -- lane bits -----------------------------------------------------------------------------


def test_lane_bits():
    assert TileLayout.parse("S[32 : 1@laneid]").lane_bits(0) == (0, 1, 2, 3, 4)
    mma = TileLayout.parse(MMA)
    assert mma.lane_bits(1) == (0, 1) and mma.lane_bits(0) == (2, 3, 4) and mma.lane_bits(-2) == (2, 3, 4)
    strided = TileLayout.parse("S[(8, 4) : (1@laneid, 8@laneid)]")
    assert strided.lane_bits(1) == (3, 4) and strided.lane_bits(0) == (0, 1, 2)
    assert TileLayout.parse("S[(4, 8)]").lane_bits(0) == ()
    assert TileLayout.parse("S[4] + R[(2, 4) : (1@laneid, 8@laneid)]").replica_lane_bits() == (0, 3, 4)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("S[3 : 1@laneid]", "dim 0 iter 0: laneid extent 3 is not a power of two"),
        ("S[4 : 3@laneid]", "dim 0 iter 0: laneid stride 3 is not a power of two"),
        ("S[((4, 4)) : ((2@laneid, 1@laneid))]", "dim 0: iters 0 and 1 both move lane bit 1"),
        ("S[8 : 8@laneid]", "dim 0 iter 0: moves lane bit 5, but lanes have bits 0..4"),
    ],
)
def test_lane_bits_errors(text, reason):
    with pytest.raises(LayoutError) as error:
        TileLayout.parse(text).lane_bits(0)
    assert str(error.value) == reason


# -- properties -------------------------------------------------------------------------------


@st.composite
def valid_layouts(draw):
    """Random valid layouts over m and laneid: ranks 1-3, 1-3 iters a dim.

    Lane iters get disjoint, contiguous lane-bit ranges (in random order, with random
    gaps); register iters get row-major strides over a random permutation of them, each
    radix optionally doubled to leave gaps; the replica takes some unused lane bits.
    """
    free_bits = 5
    dims = []  # per dim: a list of [axis, extent, stride]
    for _ in range(draw(st.integers(1, 3))):
        dim = []
        for _ in range(draw(st.integers(1, 3))):
            axis = draw(st.sampled_from(["m", "laneid"]))
            extent = draw(st.sampled_from([1, 2, 4, 8]))
            if axis == "laneid" and extent.bit_length() - 1 > free_bits:
                axis = "m"
            if axis == "laneid":
                free_bits -= extent.bit_length() - 1
            elif draw(st.booleans()):
                extent = draw(st.integers(1, 3))
            dim.append([axis, extent, None])
        dims.append(dim)
    lane_iters = draw(st.permutations([it for dim in dims for it in dim if it[0] == "laneid"]))
    bit, used = 0, set()
    for it in lane_iters:
        gap = draw(st.integers(0, free_bits))
        free_bits -= gap
        bit += gap
        it[2] = 1 << bit
        used.update(range(bit, bit + it[1].bit_length() - 1))
        bit += it[1].bit_length() - 1
    stride = 1
    for it in reversed(draw(st.permutations([it for dim in dims for it in dim if it[0] == "m"]))):
        it[2] = stride
        stride *= it[1] * draw(st.sampled_from([1, 1, 2]))
    unused = [b for b in range(5) if b not in used]
    replica_bits = draw(st.lists(st.sampled_from(unused), unique=True)) if unused else []
    replica = [Iter(2, 1 << b, "laneid") for b in replica_bits]
    shard = [[Iter(extent, stride, axis) for axis, extent, stride in dim] for dim in dims]
    layout = TileLayout(shard, draw(st.permutations(replica)))
    assume(layout.span <= MAX_REGISTERS)
    return layout


# Any structurally sound layout, valid or not (small values keep replicas cheap to expand).
any_iters = st.builds(Iter, st.integers(-3, 12), st.integers(-3, 12), st.sampled_from(AXES))
any_layouts = st.builds(
    TileLayout,
    st.lists(st.lists(any_iters, min_size=1, max_size=3), min_size=1, max_size=3),
    st.lists(any_iters, max_size=3),
)


@given(st.one_of(valid_layouts(), any_layouts))
def test_print_then_parse_is_identity(layout):
    assert TileLayout.parse(str(layout)) == layout


@settings(deadline=None)
@given(valid_layouts())
def test_canonical_keeps_the_forward_map_and_is_idempotent(layout):
    canonical = layout.canonical()
    assert canonical.shape == layout.shape
    assert all(canonical.forward(c) == layout.forward(c) for c in coords(layout))
    assert canonical.canonical() == canonical
    assert not any(it.extent == 1 for it in canonical.replica)


@settings(deadline=None)
@given(any_layouts)
def test_canonical_of_any_layout_is_idempotent_and_keeps_what_it_can(layout):
    canonical = layout.canonical()
    assert canonical.canonical() == canonical
    if all(it.extent >= 1 for it in itertools.chain(*layout.shard, layout.replica)):
        assert (canonical.shape, canonical.span, canonical.size) == (layout.shape, layout.span, layout.size)
        assert all(canonical.forward(c) == layout.forward(c) for c in itertools.islice(coords(layout), 50))


@settings(deadline=None)
@given(valid_layouts())
def test_forward_is_injective_within_a_replica_copy(layout):
    assert layout.problems() == []
    homes = [home(layout, c) for c in coords(layout)]
    assert len(set(homes)) == len(homes) == math.prod(layout.shape)


@settings(deadline=None)
@given(valid_layouts())
def test_storage_matches_the_forward_map(layout):
    slots = {place.slot for c in coords(layout) for place in layout.forward(c)}
    assert layout.size == len(slots) <= layout.span == max(slots) + 1


@settings(deadline=None)
@given(valid_layouts())
def test_lane_bits_describe_the_lanes_reached(layout):
    bits = [layout.replica_lane_bits()] + [layout.lane_bits(d) for d in range(layout.rank)]
    all_bits = [b for group in bits for b in group]
    assert len(all_bits) == len(set(all_bits))
    copy0_lanes = {home(layout, c).lane for c in coords(layout)}
    shard_bits = all_bits[len(bits[0]):]
    masks = itertools.product((0, 1), repeat=len(shard_bits))
    assert copy0_lanes == {sum(1 << b for b, on in zip(shard_bits, mask) if on) for mask in masks}


@given(st.lists(st.integers(1, 6), min_size=1, max_size=4))
def test_row_major_forward_is_the_row_major_index(shape):
    layout = TileLayout.row_major(shape)
    for index, c in enumerate(itertools.product(*map(range, shape))):
        assert layout.forward(c) == {Place(0, 0, index)}
    assert layout.span == layout.size == math.prod(shape)
