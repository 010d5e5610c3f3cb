"""Dispatch between the register variants of ``tile.reduce``, and what they emit.

* the registry order (sm100_packed 20, local_redux 15, local 10) and which
  variant each configuration gets, with the rejection reasons of the others;
* ``local_redux`` in the CPU interpreter: ``nvvm.redux.sync`` kernels against numpy
  (sums wrap, min/max signed), and the interpreter's redux kinds and errors;
* ``local``'s packed pairs: two 16-bit values per 32-bit shuffle, bit-exact for
  any bit pattern (NaN payloads, -0.0, subnormals).
"""

import numpy as np
import pytest

from tile_mlir.analysis import analyze
from tile_mlir.dispatch import DispatchContext, cases
from tile_mlir.interpreter import InterpreterError, interpreted_kernels
from tile_mlir.ir import find_ops, ir, make_context
from tile_mlir.lowering import emit
from tile_mlir.options import Options
from tile_mlir.vocab import Chip, Target
from tile_mlir.compiler import kernel_signatures, lower_tile_ops
from tile_mlir.testing.cases import ReduceCase, bits

FULL = ("S[32 : 1@laneid]", "S[1 : 1] + R[32 : 1@laneid]")  # src, dst layouts of a full warp
PRIVATE = "#gpu.address_space<private>"


def op_text(kind, dtype, scope, src_shape, dst_shape, layouts=None, axes=(0,), chip="sm_90a"):
    """A tile.reduce in a gpu.func, in a gpu.module targeting ``chip`` (None: no gpu.module)."""
    src_t = f"memref<{'x'.join(map(str, src_shape))}x{dtype}, {PRIVATE}>"
    dst_t = f"memref<{'x'.join(map(str, dst_shape))}x{dtype}, {PRIVATE}>"
    attrs = f'kind = "{kind}", exec_scope = "{scope}", axes = array<i64: {", ".join(map(str, axes))}>'
    if layouts:
        attrs += f', src_layout = #tile.layout<"{layouts[0]}">, dst_layout = #tile.layout<"{layouts[1]}">'
    reduce = f'"tile.reduce"(%dst, %src) {{{attrs}}} : ({dst_t}, {src_t}) -> ()'
    if chip is None:
        return f"func.func @f(%dst: {dst_t}, %src: {src_t}) {{\n  {reduce}\n  return\n}}"
    return (
        f'gpu.module @k [#nvvm.target<chip = "{chip}">] {{\n'
        f"  gpu.func @f(%dst: {dst_t}, %src: {src_t}) {{\n    {reduce}\n    gpu.return\n  }}\n}}"
    )


def verdicts(text, chip_option=None, fold="linear"):
    """{variant: (accepted, every rejection reason)} for the one tile.reduce in ``text``,
    and the variant dispatch picks (the first accepted, in registry order; None if none)."""
    with make_context():
        module = ir.Module.parse(text)
        (op,) = find_ops(module.operation, "tile.reduce")
        target = Target.of_op(op, chip_option and Chip.parse(chip_option))
        ctx = DispatchContext(target.kind, target.chip, analyze(op), Options(fold=fold))
        out = {}
        for case in cases("tile.reduce", target.kind):
            results = [(p.name, *p.evaluate(op, ctx)) for p in case.when]
            out[case.variant] = (
                all(ok for _, ok, _ in results),
                "; ".join(f"{name} — {why}" for name, ok, why in results if not ok),
            )
    chosen = next((v for v, (ok, _) in out.items() if ok), None)
    return chosen, out


# --- the registry ----------------------------------------------------------------------


def test_registry_order():
    assert [(c.variant, c.priority) for c in cases("tile.reduce", "cuda")] == [
        ("cluster_push", 20),
        ("sm100_packed", 20),
        ("local_redux", 15),
        ("cluster", 10),
        ("cross_warp", 10),
        ("local", 10),
        ("shared", 10),
    ]


# --- local_redux -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sum", "max", "min", "maximum", "minimum"])
@pytest.mark.parametrize("chip", ["sm_80", "sm_90a", "sm_100a"])
def test_redux_picked_for_full_warp_i32(kind, chip):
    chosen, _ = verdicts(op_text(kind, "i32", "warp", (1,), (1,), FULL, chip=chip))
    assert chosen == "local_redux"


@pytest.mark.parametrize(
    "dtype, kind, layouts, chip, reason",
    [
        ("f32", "sum", FULL, "sm_90a", "dtype f32: redux.sync has no float add"),
        ("bf16", "sum", FULL, "sm_90a", "dtype bf16: redux.sync has no float add"),
        ("f32", "max", FULL, "sm_90a", "dtype f32: this variant's redux.sync min/max is i32 only"),
        ("i64", "sum", FULL, "sm_90a", "dtype i64: redux.sync is 32-bit only"),
        ("i32", "sum", ("S[(8, 4) : (4@laneid, 1@laneid)]", "S[8 : 4@laneid] + R[4 : 1@laneid]"),
         "sm_90a", "lane bits {0, 1} are not the full warp"),
        ("i32", "sum", ("S[(2, 16) : (1@laneid, 2@laneid)]", "S[2 : 1@laneid] + R[16 : 2@laneid]"),
         "sm_90a", "lane bits {1, 2, 3, 4} are not the full warp"),
        ("i32", "sum", FULL, "sm_70", "sm_70 < sm_80"),
        ("i32", "sum", FULL, "sm_75", "sm_75 < sm_80"),
    ],
)
def test_redux_rejections_fall_back_to_local(dtype, kind, layouts, chip, reason):
    axes = (0,) if layouts is FULL else (1,)
    chosen, out = verdicts(op_text(kind, dtype, "warp", (1,), (1,), layouts, axes=axes, chip=chip))
    assert chosen == "local"
    ok, why = out["local_redux"]
    assert not ok and f"redux_applies — {reason}" in why


def test_redux_names_every_failure():
    layouts = ("S[(8, 4) : (4@laneid, 1@laneid)]", "S[8 : 4@laneid] + R[4 : 1@laneid]")
    _, out = verdicts(op_text("sum", "f32", "warp", (1,), (1,), layouts, axes=(1,), chip="sm_70"))
    assert out["local_redux"][1] == (
        "redux_applies — dtype f32: redux.sync has no float add; "
        "lane bits {0, 1} are not the full warp; sm_70 < sm_80"
    )


def test_redux_thread_scope_and_invalid_op():
    _, out = verdicts(op_text("sum", "i32", "thread", (4,), (1,)))
    assert "exec_scope thread: redux.sync is a warp-scope instruction" in out["local_redux"][1]
    chosen, out = verdicts(op_text("sum", "i32", "thread", (4,), (2,)))  # a dst of the wrong shape
    assert chosen is None
    assert "redux_applies — the op is not valid (see local_valid)" in out["local_redux"][1]


def test_redux_chip_from_option_or_none():
    text = op_text("sum", "i32", "warp", (1,), (1,), FULL, chip=None)
    chosen, out = verdicts(text)
    assert chosen == "local"
    assert "no chip (no #nvvm.target on a gpu.module, no chip option)" in out["local_redux"][1]
    assert verdicts(text, chip_option="sm_80")[0] == "local_redux"
    assert verdicts(text, chip_option="sm_70")[0] == "local"


def test_gpu_module_chip_wins_over_option():
    text = op_text("sum", "i32", "warp", (1,), (1,), FULL, chip="sm_70")
    assert verdicts(text, chip_option="sm_90a")[0] == "local"


# --- sm100_packed ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sum", "max", "min", "maximum", "minimum"])
@pytest.mark.parametrize("chip", ["sm_100a", "sm_100", "sm_103a"])
def test_sm100_packed_picked(kind, chip):
    assert verdicts(op_text(kind, "f32", "thread", (8,), (1,), chip=chip))[0] == "sm100_packed"


@pytest.mark.parametrize(
    "dtype, shapes, axes, chip, reason",
    [
        ("f32", ((16,), (1,)), (0,), "sm_90a", "sm_90 < sm_100"),
        ("f32", ((4,), (1,)), (0,), "sm_100a", "4 elements < 8"),
        ("f32", ((7,), (1,)), (0,), "sm_100a", "7 elements < 8"),
        ("f16", ((16,), (1,)), (0,), "sm_100a", "f16: fast path is f32 only"),
        ("f64", ((16,), (1,)), (0,), "sm_100a", "f64: fast path is f32 only"),
        ("f32", ((4, 4), (1,)), (0, 1), "sm_100a", "2 reduced dims [0, 1]: the fast path reduces one dim"),
    ],
)
def test_sm100_packed_rejections(dtype, shapes, axes, chip, reason):
    chosen, out = verdicts(op_text("sum", dtype, "thread", *shapes, axes=axes, chip=chip))
    assert chosen == "local"
    ok, why = out["sm100_packed"]
    assert not ok and reason in why


def test_sm100_packed_warp_scope_and_tree_fold():
    _, out = verdicts(op_text("sum", "f32", "warp", (1,), (1,), FULL, chip="sm_100a"))
    assert "exec_scope warp: the fast path is thread scope only" in out["sm100_packed"][1]
    text = op_text("sum", "f32", "thread", (16,), (1,), chip="sm_100a")
    chosen, out = verdicts(text, fold="tree")
    assert chosen == "local"
    assert "fold=tree: the packed sum has its own order (even/odd partial sums)" in out["sm100_packed"][1]
    # max and min do not depend on the order: the fast path keeps them.
    assert verdicts(text.replace('"sum"', '"max"'), fold="tree")[0] == "sm100_packed"


def test_sm100_packed_spatial_dims_allowed():
    """One reduced dim, any number of kept ones: a spatial loop around the packed fold."""
    assert verdicts(op_text("sum", "f32", "thread", (4, 16), (4,), axes=(1,), chip="sm_100a"))[0] == "sm100_packed"


# --- local_redux in the interpreter ---------------------------------------------------


REDUX_CASES = {
    "one_slot": dict(axes=(0,), src_shape=(1,), dst_shape=(1,), src_layout=FULL[0], dst_layout=FULL[1]),
    "two_slots_folded": dict(
        axes=(1,), src_shape=(8,), dst_shape=(2,),
        src_layout="S[(2, (32, 4)) : (4, (1@laneid, 1))]", dst_layout="S[2 : 1] + R[32 : 1@laneid]",
    ),
    "lanes_over_two_dims": dict(
        axes=(0, 2), src_shape=(6,), dst_shape=(3,),
        src_layout="S[(8, 3, (2, 4)) : (4@laneid, 2, (1, 1@laneid))]", dst_layout="S[3 : 1] + R[32 : 1@laneid]",
    ),
}


@pytest.mark.parametrize("accum", [False, True])
@pytest.mark.parametrize("kind", ["sum", "max", "min", "maximum", "minimum"])
@pytest.mark.parametrize("config", sorted(REDUX_CASES))
def test_redux_kernels_match_numpy(config, kind, accum):
    case = ReduceCase(f"redux_{config}", kind, "i32", "warp", accum=accum, **REDUX_CASES[config])
    lowered, signatures = lower_tile_ops(case.kernel_text("sm_90a"))
    assert lowered.count("nvvm.redux.sync") == case.dst_tile.size and "gpu.shuffle" not in lowered
    rng = np.random.default_rng(7)
    for x, old in (case.random_inputs(rng), _wrapping_inputs(case, rng)):
        old = old if accum else None
        a, b = case.pack(x), case.output_buffer(old)
        interpreted_kernels(lowered, signatures)[case.name].launch(1, 32, a, b)
        assert not case.check(x, old, b)


def _wrapping_inputs(case, rng):
    """Large i32 values of both signs: sums wrap around."""
    big = lambda shape: rng.integers(-(2**31), 2**31, size=shape, dtype=np.int64).astype(np.int32)
    return big(case.src_tile.shape), big(case.dst_tile.shape)


REDUX_KERNEL = """
module attributes {{gpu.container_module}} {{
  gpu.module @k {{
    gpu.func @redux(%A: memref<{n}xi32>, %B: memref<{n}xi32>) kernel {{
      %tid = gpu.thread_id x
      %v = memref.load %A[%tid] : memref<{n}xi32>
      %mask = arith.constant {mask} : i32
      %r = nvvm.redux.sync {kind} %v, %mask : i32 -> i32
      memref.store %r, %B[%tid] : memref<{n}xi32>
      gpu.return
    }}
  }}
}}
"""


def _redux_kernel(kind, n=64, mask=-1):
    text = REDUX_KERNEL.format(kind=kind, n=n, mask=mask)
    with make_context():
        signatures = kernel_signatures(ir.Module.parse(text))
    return interpreted_kernels(text, signatures)["redux"]


@pytest.mark.parametrize(
    "kind, reduce",
    [
        ("add", lambda w: np.sum(w.astype(np.int64)).astype(np.int32)),
        ("max", np.max),
        ("min", np.min),
        ("umax", lambda w: np.max(w.view(np.uint32)).view(np.int32)),
        ("umin", lambda w: np.min(w.view(np.uint32)).view(np.int32)),
        ("and", np.bitwise_and.reduce),
        ("or", np.bitwise_or.reduce),
        ("xor", np.bitwise_xor.reduce),
    ],
)
def test_interpreter_redux_kinds(kind, reduce):
    a = np.random.default_rng(3).integers(-(2**31), 2**31, size=64, dtype=np.int64).astype(np.int32)
    b = np.zeros(64, np.int32)
    _redux_kernel(kind).launch(1, 64, a, b)
    for w in range(2):  # each warp reduces its own 32 lanes, every lane gets the result
        assert (b[32 * w : 32 * w + 32] == np.int32(reduce(a[32 * w : 32 * w + 32]))).all()


def test_interpreter_redux_errors():
    a, b = np.arange(64, dtype=np.int32), np.zeros(64, np.int32)
    with pytest.raises(InterpreterError, match="only the full mask"):
        _redux_kernel("add", mask=0xFFFF).launch(1, 64, a, b)
    with pytest.raises(InterpreterError, match="partial warp"):
        _redux_kernel("add", n=48).launch(1, 48, a[:48], b[:48])


# --- packed pairs ------------------------------------------------------------------------


SHUFFLE_KERNEL = """
module attributes {{gpu.container_module}} {{
  gpu.module @k {{
    gpu.func @moved(%A: memref<32x{n}x{dt}>, %B: memref<32x{n}x{dt}>) kernel {{
      %lane = gpu.lane_id
{body}
      gpu.return
    }}
  }}
}}
"""


def _shuffled_kernel(dtype: str, n: int, offset: int):
    """A kernel that moves its lane's n values of A through ``emit.shuffle_xor_all``
    into B: B[lane, k] = A[lane ^ offset, k]. Returns (module text, shuffle count)."""
    memref = f"memref<32x{n}x{dtype}>"
    body = []
    for k in range(n):
        body.append(f"      %c{k} = arith.constant {k} : index")
        body.append(f"      %x{k} = memref.load %A[%lane, %c{k}] : {memref}")
    for k in range(n):
        body.append(f"      memref.store %x{k}, %B[%lane, %c{k}] : {memref}")
    text = SHUFFLE_KERNEL.format(n=n, dt=dtype, body="\n".join(body))
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        func = module.body.operations[0].regions[0].blocks[0].operations[0]
        ops = list(func.regions[0].blocks[0].operations)
        stores = [op for op in ops if op.operation.name == "memref.store"]
        values = [op.result for op in ops if op.operation.name == "memref.load"]
        with ir.InsertionPoint(stores[0]):
            moved = emit.shuffle_xor_all(values, offset)
        for store, v in zip(stores, moved):
            store.operation.operands[0] = v
        text = str(module)
    return text, text.count("gpu.shuffle")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("n, shuffles", [(2, 1), (3, 2), (4, 2), (5, 3)])
@pytest.mark.parametrize("offset", [1, 16])
def test_packed_pairs_are_bit_exact(dtype, n, shuffles, offset):
    text, count = _shuffled_kernel(dtype, n, offset)
    assert count == shuffles
    raw = np.random.default_rng(n).integers(0, 2**16, size=(32, n), dtype=np.uint16)
    # NaN payloads of both signs, signed zeros, infinities, subnormals
    specials = {"f16": [0x7C01, 0xFE3A, 0x7DFF, 0x8000, 0x0000, 0x7C00, 0x0001, 0x83FF],
                "bf16": [0x7F81, 0xFFC3, 0x7FBF, 0x8000, 0x0000, 0x7F80, 0x0001, 0x807F]}[dtype]
    raw[: len(specials), 0] = specials
    raw[len(specials) : 2 * len(specials), n - 1] = specials
    a = raw.view(np.float16) if dtype == "f16" else raw.copy()
    b = np.zeros_like(a)
    with make_context():
        signatures = kernel_signatures(ir.Module.parse(text))
    interpreted_kernels(text, signatures)["moved"].launch(1, 32, a, b)
    lanes = np.arange(32)
    assert (bits(b, dtype) == raw[lanes ^ offset]).all()


def test_packed_pairs_other_types_one_by_one():
    """Only 16-bit values pair up: 32- and 64-bit ones shuffle as before."""
    for dtype, per_value in (("f32", 1), ("i32", 1), ("f64", 2), ("i64", 2)):
        assert _shuffled_kernel(dtype, 4, 1)[1] == 4 * per_value
