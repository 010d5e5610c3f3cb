"""The differential suite: random kernels in the CPU interpreter, judged bit for bit by a
reference that shares nothing with the lowering (``tile_mlir.testing.reference``).

The sample is ``tile_mlir.testing.random_kernels.sample(COUNT, SEED, COPIES)``: the fixed
kernels, then random ones, until they hold COUNT ops (every scope, the register and the
``shared`` variants, several ops per kernel, loops, wild kept thread iters, register and
thread replicas, special float values), then COPIES ``tile.copy`` kernels
(``tile_mlir.testing.random_copies``). They run in modules of up to 16 kernels (one parse,
lowering and interpreter build per module). For each kernel:

* if the reference cannot compute one of its ops (the documented exchange is not defined
  for its layout pair) or docs/spec.md lists it as not supported, the compiler must
  reject it;
* otherwise it must compile, run in the interpreter without an error, and leave the
  reference's bits at every dst place (every replica of every dst coordinate on every
  thread), NaNs canonical; a copy, the reference's bits in every register (a load) or
  every memory element (a store).

The combiner sample (``random_kernels.combiner_sample(COMBINER_OPS, SEED)``): kernels
of argmax, argmin and combiner functions (the online-softmax pair, Welford, first, last,
the 2x2 matrix product in f32 and i32) drawn the same way, judged the same way
(``test_combiners_match_reference``); the README's test command runs one module in four
(conftest.py marks the others ``sweep``).

A failure names each kernel; ``python -m tile_mlir.testing.random_kernels show NAME`` prints
its module and its verdict. ``test_random_case_is_valid`` checks the op-level draws that
``tile_mlir.testing.invalid`` mutates, against the project's own rules.
"""

import random
from collections import Counter

import pytest

from tile_mlir.analysis import analyze
from tile_mlir.ir import find_ops, ir, make_context
from tile_mlir.testing import reference
from tile_mlir.testing.reference_layout import pow2
from tile_mlir.testing.differential import iter_bits, random_case
from tile_mlir.testing.harness import rejected_reason
from tile_mlir.testing.random_kernels import DRAWN_FUNCTIONS, batches, combiner_sample, interpret, sample, verdict

COUNT, SEED, COPIES, COMBINER_OPS = 2000, 0, 300, 480
KERNELS = sample(COUNT, SEED, COPIES)
BATCHES = batches(KERNELS)
COMBINER_KERNELS = combiner_sample(COMBINER_OPS, SEED)
COMBINER_BATCHES = batches(COMBINER_KERNELS)


@pytest.mark.parametrize("batch", BATCHES, ids=[f"{b[0].name}+{len(b) - 1}" for b in BATCHES])
def test_interpreter_matches_reference(batch, record_property):
    _run(batch, record_property)


# (parametrized by ``case``: conftest.py marks three modules in four ``sweep``)
@pytest.mark.parametrize("case", COMBINER_BATCHES, ids=[f"{b[0].name}+{len(b) - 1}" for b in COMBINER_BATCHES])
def test_combiners_match_reference(case, record_property):
    _run(case, record_property)


def _run(batch, record_property):
    failures = []
    # what ran, summed over every worker by conftest's terminal summary
    record_property("differential", (len(batch), sum(len(k.ops) for k in batch)))
    for kernel, outcome in zip(batch, interpret(batch)):
        failures += [f"{kernel.name} ({kernel.describe()}): {p}" for p in verdict(kernel, outcome)]
    assert not failures, "\n".join(failures) + (
        "\nrepro: python -m tile_mlir.testing.random_kernels show " + failures[0].split(" ")[0])


def _info(op: reference.ReduceOp) -> dict:
    src = op.src
    kept_thread = [it for d, its in enumerate(src.dims) if d not in op.reduced for it in its if it.axis != "m"]
    uneven = [it for it in kept_thread if not (pow2(it.extent) and pow2(it.stride))]
    return {"uneven": len(uneven), "thread replica": any(it.axis != "m" for it in src.replica),
            "register replica": any(it.axis == "m" for lay in (src, op.dst) for it in lay.replica)}


def test_sample_covers_what_it_should():
    """What the sample holds: every scope in both variants and in loops, wild kept iters in
    combination (two or more in one op, with src replicas), register replicas, ops the
    reference cannot compute, several ops per kernel, several instances per launch."""
    seen = Counter()
    for k in KERNELS:
        if k.tag == "copy":
            op = k.op
            seen["copy", op.scope, op.direction, op.dtype] += 1
            seen["copy must reject"] += bool(k.must_reject())
            seen["copy overhangs"] += any(o < 0 or o + e > m for o, e, m in zip(op.origin, op.tile.shape, op.mem_shape))
            seen["copy replica"] += bool(op.tile.replica)
            seen["copy padding bits"] += op.padding_bits is not None
            continue
        seen["kernel", k.scope, "shared" if k.shared else "registers"] += 1
        seen["loop", k.scope, "shared" if k.shared else "registers"] += k.repeat > 1
        seen["several ops"] += len(k.ops) > 1
        seen["several instances"] += k.instances > 1 or (k.scope == "cluster" and k.grid > k.cluster)
        seen["must reject"] += bool(rejected_reason(k))
        seen["cluster of one"] += k.scope == "cluster" and k.cluster == 1
        seen["tree"] += k.fold == "tree"
        seen["special"] += k.special > 0
        for op in k.ops:
            seen["op", op.dtypes[0], op.kind] += 1
            if op.storage == "local" and op.scope != "thread":
                info = _info(op)
                seen["uneven >= 2"] += info["uneven"] >= 2
                seen["uneven + replica"] += info["uneven"] >= 1 and info["thread replica"]
                seen["register replica"] += info["register replica"]
    assert sum(len(k.ops) for k in KERNELS if k.tag != "copy") >= COUNT
    assert all(seen["copy", scope, "load", dt] for scope in ("thread", "warp", "warpgroup", "cta")
               for dt in ("f32", "f16", "bf16", "f64", "i32", "i64")), seen
    assert all(seen["copy", scope, "store", dt] for scope in ("warp", "cta") for dt in ("f32", "bf16", "i64")), seen
    for what, least in (("copy must reject", 3), ("copy overhangs", 50), ("copy replica", 30), ("copy padding bits", 30)):
        assert seen[what] >= least, (what, seen)
    for scope in ("thread", "warp", "warpgroup", "cta", "cluster"):
        assert seen["loop", scope, "registers"] >= 10, (scope, seen)
        if scope != "cluster":
            assert seen["loop", scope, "shared"] >= 2, (scope, seen)
    assert all(seen["op", dt, kind] for dt in ("f32", "f16", "bf16", "f64", "i32", "i64")
               for kind in reference.KINDS), seen
    for what, least in (("uneven >= 2", 50), ("uneven + replica", 50), ("register replica", 100),
                        ("must reject", 10), ("several ops", 200), ("several instances", 100),
                        ("cluster of one", 20), ("tree", 200), ("special", 300)):
        assert seen[what] >= least, (what, seen)


def test_random_case_is_valid():
    """1000 op-level draws (the ones ``tile_mlir.testing.invalid`` breaks): all valid by the
    project's rules and by the reference's, and the reference can compute every one;
    among them, reductions across warps at warpgroup and cta scope (2 to 32 warps) and
    across the CTAs of clusters of 2 to 16."""
    seen = Counter()
    with make_context(), ir.Location.unknown():
        for i in range(1000):
            case = random_case(random.Random(f"valid:{i}"))
            module = ir.Module.parse(case.kernel_text())  # alive while its op is analysed
            analysis = analyze(find_ops(module.operation, "tile.reduce")[0])
            assert analysis.errors == [], (case, analysis.errors)
            op = reference.ReduceOp(case.exec_scope, case.axes, (case.dtype,), case.src_shape, case.dst_shape,
                                    case.kind, case.src_layout, case.dst_layout, case.accum)
            assert reference.problems(op) == [] and reference.exchange_problem(op) is None, case
            info = analysis.info
            seen[case.exec_scope, "across warps" if info.reduced_warp_bits else "within warps"] += 1
            if case.exec_scope == "cta" and info.reduced_warp_bits:
                seen["cta warps", case.threads() // 32] += 1
            if case.exec_scope == "cluster" and info.reduced_cta_bits:
                seen["cluster ctas", info.cluster_ctas] += 1
            for it in (it for d in info.axes for it in info.src_layout.shard[d]):
                if any(b >= 5 for b in iter_bits(it)):
                    seen["across warps by", it.axis] += 1
    for scope in ("warpgroup", "cta"):
        assert seen[scope, "within warps"] and seen[scope, "across warps"] >= 50, seen
    assert all(seen["cta warps", w] for w in (2, 4, 8, 16, 32)), seen
    assert all(seen["across warps by", axis] for axis in ("tid_in_wg", "wid_in_wg", "warpid")), seen
    assert all(seen["cluster ctas", c] for c in (2, 4, 8, 16)), seen


def test_combiner_sample_covers_what_it_should():
    """The combiner sample: argmax and argmin of every element type (i32 and i64 indices)
    and every drawn combiner function, each family at every scope in registers, and in
    workgroup memory, in loops, with accum, fold tree; ops the compiler must reject."""
    seen = Counter()
    for k in COMBINER_KERNELS:
        seen["must reject"] += bool(rejected_reason(k))
        seen["tree"] += k.fold == "tree"
        for op in k.ops:
            family = "arg" if op.arg else "function"
            seen[family, k.tag] += 1
            seen[family, "loop"] += k.repeat > 1
            seen[family, "accum"] += op.accum
            seen[op.kind or op.function, op.dtypes[0] if op.arg else None] += 1
            seen["index", op.dtypes[1] if op.arg else None] += 1
    for family in ("arg", "function"):
        for tag in ("thread", "warp", "warpgroup", "cta", "cluster", "shared"):
            assert seen[family, tag] >= 5, (family, tag, seen)
        assert seen[family, "loop"] >= 20 and seen[family, "accum"] >= 40, (family, seen)
    assert all(seen[kind, dt] for kind in ("argmax", "argmin")
               for dt in ("f32", "f16", "bf16", "f64", "i32", "i64")), seen
    assert all(seen[name, None] >= 10 for name in DRAWN_FUNCTIONS), seen
    assert seen["index", "i64"] >= 10 and seen["must reject"] >= 3 and seen["tree"] >= 30, seen
