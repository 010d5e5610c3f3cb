"""Random kernels for the reference suite: several ops per kernel, loops, workgroup
operands, wild kept iters; and their runs in the CPU interpreter.

``sample(count, seed)`` is the seeded, deterministic sample: first the fixed kernels
(``_fixed``: configurations an outside fuzz campaign found wrong), then kernel i drawn
from ``random.Random(f"{seed}:{i}")`` (``random_kernel``), until the kernels hold
``count`` ops. A kernel (``harness.Kernel``) has one scope and one launch:

* **register operands** (most): one to three ops drawn by ``differential._draw`` for the
  same scope and the same warps and CTAs, with ``wild`` kept thread iters in half of the
  kernels: kept dims also get thread iters of any extent (2-7) and stride, so that their
  sums, with each other and with src replicas, may reach a reduced or replica bit. Such a
  draw is kept when the spec's rules hold (``reference.problems``); the reference then
  says whether the exchange is defined for it (``reference.exchange_problem``), and an op
  it cannot compute stands alone in its kernel, which the compiler must reject (and so
  does an op docs/spec.md lists as not supported, which the compiler may reject). Clusters
  of one CTA too (warps reduced, no CTA bit); two warps or two warpgroups in a block, two
  blocks at cta scope, two clusters at cluster scope, sometimes;
* **workgroup operands** (12%, the ``shared`` variant): one or two ops over row-major
  tiles of up to 2048 elements, at thread, warp, warpgroup or cta scope (blocks of 32 to
  256 threads, 48 and 96 among them), sometimes one instance of the scope in a bigger block;
* a loop of 3 iterations around the ops in 30% of kernels (accum on 80% of its ops),
  ``fold = tree`` in 25%, NaN/infinities/zeros among the float inputs in half of them.

``combiner_sample(count, seed)`` draws kernels the same way whose ops are argmax or
argmin (40%: every element type, an i32 or (one in three) i64 index) or a combiner
function (``DRAWN_FUNCTIONS``, from ``tile_mlir.testing.combiners``), each on a drawn op's
layouts, scope and accum; the scratch limit shrinks by the bytes of their partials. What
their operands hold: ``tile_mlir.testing.operands``.

``batches`` groups kernels into modules (one parse, lowering and interpreter build per
module), ``interpret`` runs a module's kernels, and ``verdict`` judges each outcome against
the reference. Needs MLIR only to run (``interpret``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..vocab import ARG_KINDS, DTYPE_BYTES, DTYPES, KINDS, LANE_BITS
from . import reference
from .differential import CLUSTERS, SCRATCH_LIMIT, WARPS, _draw, as_op
from .harness import Kernel, Run, module_text
from .operands import BAD_FUNCTIONS, FUNCTIONS, with_model
from .random_copies import CopyKernel, random_copy_kernel


# --- kernels for the reference: several ops, loops, workgroup operands ------------------------

KERNEL_SCOPES = ("thread", "warp", "warpgroup", "cta", "cta", "cluster", "cluster")
ONE_CTA_CLUSTERS = ((1, 2), (1, 4))  # cluster scope, one CTA: warps reduced, no CTA bit
COMBINER_OPS = 150  # prepare's default: argmax, argmin and combiner-function reductions
SHARED_SHARE, LOOP_SHARE, WILD_SHARE, TREE_SHARE = 0.12, 0.3, 0.5, 0.25
SPECIAL_RATES = (0.0, 0.0, 0.1, 0.3)  # the share of NaN, infinities and zeros in float inputs
# The combiner kernels' ops: argmax/argmin (ARG_SHARE of them), else a combiner function.
ARG_SHARE = 0.4
DRAWN_FUNCTIONS = ("online_softmax", "welford", "welford_f32", "first", "last", "first_f16", "last_f64",
                   "first_i64", "matrix", "matrix_i32")


def _flavor(rng: random.Random) -> tuple:
    """What a combiner kernel's op computes: ("arg", argmax or argmin, index type) or
    ("function", name)."""
    if rng.random() < ARG_SHARE:
        return "arg", rng.choice(ARG_KINDS), rng.choice(("i32", "i32", "i64"))
    return "function", rng.choice(DRAWN_FUNCTIONS)


def _partial_bytes(flavor: tuple | None) -> int:
    """An upper bound of the bytes of one partial in the exchange scratch (a 16-bit value
    widened to a word); None (a named kind): 2, the least that ``_draw`` assumes."""
    if flavor is None:
        return 2
    types = ("f64", flavor[2]) if flavor[0] == "arg" else FUNCTIONS[flavor[1]].types
    return sum(max(4, DTYPE_BYTES[t]) for t in types)


def _apply(flavor: tuple | None, op: reference.ReduceOp) -> reference.ReduceOp:
    """A drawn named op as the flavor's op: the same layouts, scope and accum."""
    if flavor is None:
        return op
    if flavor[0] == "arg":
        return replace(op, kind=flavor[1], dtypes=(op.dtypes[0], flavor[2]))
    return with_model(replace(op, kind=None, dtypes=FUNCTIONS[flavor[1]].types, function=flavor[1]))


def _fixed() -> list[Kernel]:
    """The configurations found wrong by an outside fuzz campaign: kept thread iters whose
    sum (with each other, or with a replica) reaches a reduced bit, at warp and cta scope;
    and cluster-scope ops in a loop that reduce warp bits but no CTA bit. And what the
    reference found: max and min over many NaNs, signaling ones among them; a cluster op
    that reduces lanes only, with a kept dim on a replica bit."""
    def op(scope, axes, src, dst, shape=(16,), dtype="i32", accum=False):
        return reference.ReduceOp(scope, axes, (dtype,), shape, shape, "sum", src, dst, accum)

    return [
        Kernel("ref_fixed_0", "warp", (op("warp", (2,), "S[((3), (2), 2) : ((3@laneid), (4@laneid), 8@laneid)]",
                                         "S[((3), (2)) : ((3@laneid), (4@laneid))] + R[2 : 8@laneid]"),), 32),
        Kernel("ref_fixed_1", "warp", (op("warp", (1,), "S[((3), 2) : ((3@laneid), 8@laneid)] + R[2 : 4@laneid]",
                                         "S[(3) : (3@laneid)] + R[(2, 2) : (4@laneid, 8@laneid)]"),), 32),
        Kernel("ref_fixed_2", "cta", (op("cta", (2,), "S[((3), (2), 2, 32) : ((3@warpid), (4@warpid), 8@warpid, 1@laneid)]",
                                        "S[((3), (2), 32) : ((3@warpid), (4@warpid), 1@laneid)] + R[2 : 8@warpid]"),), 608),
        Kernel("ref_fixed_3", "cluster", (op("cluster", (1,), "S[(2, (2, 32)) : (1@cta_in_cluster, (1@warpid, 1@laneid))]",
                                            "S[2 : 1@cta_in_cluster] + R[(2, 32) : (1@warpid, 1@laneid)]",
                                            (1,), "f32", True),), 64, 2, 2, repeat=3),
        Kernel("ref_fixed_4", "cluster", (op("cluster", (1,), "S[(4, (2, 32)) : (1, (1@warpid, 1@laneid))]",
                                            "S[4 : 1] + R[(2, 32) : (1@warpid, 1@laneid)]", (4,), "f32", True),),
               64, repeat=3),
        # max and min over NaNs of every payload, quiet and signaling: a NaN loses to any number
        Kernel("ref_fixed_5", "thread", tuple(reference.ReduceOp("thread", (0,), (dt,), (16,), (1,), kind)
                                              for dt, kind in (("f32", "max"), ("bf16", "min"), ("f16", "max"),
                                                               ("f64", "min"))), 4, special=0.5),
        # a cluster op that reduces lanes only, with a kept dim on a replica bit (docs/spec.md
        # leaves out of "not supported" what does not reduce across warps)
        Kernel("ref_fixed_6", "cluster", (op("cluster", (1,), "S[((3), 2, 2) : ((3@laneid), 16@laneid, 1@cta_in_cluster)]"
                                            " + R[2 : 2@laneid]", "S[((3), 2) : ((3@laneid), 1@cta_in_cluster)] + "
                                            "R[(2, 2) : (2@laneid, 16@laneid)]", (1,), "f32"),), 32, 2, 2),
    ]


def random_kernel(rng: random.Random, name: str, combiners: bool = False) -> Kernel:
    """A random kernel: one to three ops of one scope and launch, maybe in a loop; with
    ``combiners``, each op an argmax, an argmin or a combiner function (``_flavor``)."""
    while True:
        kernel = (_shared_kernel(rng, name, combiners) if rng.random() < SHARED_SHARE
                  else _register_kernel(rng, name, combiners))
        if kernel is not None:
            return kernel


def _register_kernel(rng: random.Random, name: str, combiners: bool = False) -> Kernel | None:
    scope = rng.choice(KERNEL_SCOPES)
    repeat = 3 if rng.random() < LOOP_SHARE else 1
    fold = "tree" if rng.random() < TREE_SHARE else "linear"
    wild = rng.random() < WILD_SHARE
    geometry = None
    if scope == "cta":
        geometry = (LANE_BITS + rng.choice(WARPS).bit_length() - 1, 0)
    elif scope == "cluster":
        ctas, warps = rng.choice(CLUSTERS + ONE_CTA_CLUSTERS)
        geometry = (LANE_BITS + warps.bit_length() - 1, ctas.bit_length() - 1)
    want = rng.choice((1, 1, 1, 2, 3))
    ops, reach, fixed_cluster = [], None, False
    for _ in range(4 * want):
        flavor = _flavor(rng) if combiners else None
        limit = SCRATCH_LIMIT // (want * (1 + (repeat > 1))) * 2 // _partial_bytes(flavor)
        case = _draw(rng, name, scope, geometry, wild, limit)
        if case is None:
            continue
        if repeat > 1 and rng.random() < 0.8:
            case = replace(case, accum=True)
        op = _apply(flavor, as_op(case, fold))
        here = (op.src.reach("warpid"), op.src.reach("cta_in_cluster"))
        rejected = reference.exchange_problem(op) or reference.unsupported(op)  # may be rejected
        if ops and (here != reach or rejected):
            continue
        ops.append(op)
        reach, fixed_cluster = here, fixed_cluster or case.cluster_fixed
        if rejected or len(ops) == want:
            break  # an op the compiler must reject stands alone
    if not ops:
        return None
    warps, ctas = reach
    block, grid, cluster = {"thread": (rng.choice((1, 2, 32)), 1, 1), "warp": (32 * rng.choice((1, 1, 2)), 1, 1),
                            "warpgroup": (128 * rng.choice((1, 1, 2)), 1, 1),
                            "cta": (32 * warps, rng.choice((1, 1, 1, 2)), 1),
                            "cluster": (32 * warps, ctas * rng.choice((1,) * 9 + (2,)), ctas)}[scope]
    return Kernel(name, scope, tuple(ops), block, grid, cluster, repeat, fold,
                  known_block=scope == "cta" and rng.random() < 0.5, cluster_fixed=fixed_cluster,
                  special=rng.choice(SPECIAL_RATES))


def _shared_kernel(rng: random.Random, name: str, combiners: bool = False) -> Kernel:
    """Workgroup operands: one or two ops on row-major tiles of up to 2048 elements; at
    thread, warp and warpgroup scope sometimes one instance in a bigger block."""
    scope = rng.choice(("thread", "warp", "warpgroup", "cta"))
    repeat = 3 if rng.random() < LOOP_SHARE else 1
    fold = "tree" if rng.random() < TREE_SHARE else "linear"
    if scope == "cta":
        block = threads = rng.choice((32, 48, 64, 96, 128, 256))
    else:
        threads = {"thread": 1, "warp": 32, "warpgroup": 128}[scope]
        block = threads * (rng.choice((2, 4, 32) if scope == "thread" else (2, 4)) if rng.random() < 0.3 else 1)
        block = min(block, 512)
    ops = []
    for _ in range(rng.choice((1, 1, 2))):
        rank = rng.randint(1, 3)
        shape = [rng.randint(1, 40) for _ in range(rank)]
        while math.prod(shape) > 2048:
            shape[rng.randrange(rank)] //= 2
        shape = tuple(max(e, 1) for e in shape)
        reduced = sorted(rng.sample(range(rank), rng.randint(1, rank)))
        axes = tuple(a - rank if rng.random() < 0.5 else a for a in reduced)
        dst = tuple(1 if d in reduced else e for d, e in enumerate(shape) if d not in reduced or rng.random() < 0.3)
        accum = rng.random() < (0.8 if repeat > 1 else 0.5)
        op = reference.ReduceOp(scope, axes, (rng.choice(DTYPES),), shape, dst or (1,), rng.choice(KINDS),
                                accum=accum, fold=fold, storage="shared", threads=threads)
        ops.append(_apply(_flavor(rng) if combiners else None, op))
    instance = rng.randrange(block // threads) if block != threads else None
    return Kernel(name, scope, tuple(ops), block, 1, 1, repeat, fold, known_block=True, instance=instance,
                  special=rng.choice(SPECIAL_RATES))


def sample(count: int, seed: int, copies: int = 0, combiners: int = 0) -> list:
    """The fixed kernels, then kernel i drawn from ``random.Random(f"{seed}:{i}")``, until
    they hold ``count`` ops; then combiner kernels (argmax, argmin, combiner functions),
    kernel i drawn from ``random.Random(f"comb:{seed}:{i}")``, until they hold
    ``combiners`` ops; then ``copies`` copy kernels (``random_copies``), copy i drawn
    from ``random.Random(f"copy:{seed}:{i}")``."""
    kernels = _fixed()
    i = 0
    while sum(len(k.ops) for k in kernels) < count:
        kernels.append(random_kernel(random.Random(f"{seed}:{i}"), f"ref_{seed}_{i}"))
        i += 1
    return kernels + combiner_sample(combiners, seed) + [
        random_copy_kernel(random.Random(f"copy:{seed}:{i}"), f"copy_{seed}_{i}") for i in range(copies)]


def combiner_sample(count: int, seed: int) -> list[Kernel]:
    """Combiner kernels: one warp op for each combiner function docs/spec.md forbids
    (``operands.BAD_FUNCTIONS``, which the compiler must reject), then kernels of argmax,
    argmin and combiner functions, kernel i drawn from ``random.Random(f"comb:{seed}:{i}")``,
    until they hold ``count`` ops."""
    kernels = [Kernel(f"comb_{seed}_{name}", "warp", (reference.ReduceOp(
        "warp", (0,), BAD_FUNCTIONS[name][0], (4,), (1,), src_layout="S[((4, 32)) : ((1, 1@laneid))]",
        dst_layout="S[1 : 1] + R[32 : 1@laneid]", function=name),), 32) for name in BAD_FUNCTIONS]
    held = len(kernels)
    while held < count:
        i = len(kernels) - len(BAD_FUNCTIONS)
        kernels.append(random_kernel(random.Random(f"comb:{seed}:{i}"), f"comb_{seed}_{i}", combiners=True))
        held += len(kernels[-1].ops)
    return kernels


def kernel_from_json(d: dict):
    return CopyKernel.from_json(d) if d.get("copy") else Kernel.from_json(d)


# --- running kernels in the interpreter (needs MLIR) ------------------------------------------

BATCH = 16  # kernels per module: one parse, one lowering, one interpreter build for all


def batches(kernels: list, size: int = BATCH) -> list[list]:
    """Kernels grouped into modules: by fold option; a kernel the compiler must or may
    reject alone, so that its rejection takes no other down."""
    alone = [[k] for k in kernels if k.must_reject(documented=True)]
    out = []
    for fold in ("linear", "tree"):
        rest = [k for k in kernels if k.fold == fold and not k.must_reject(documented=True)]
        out += [rest[i:i + size] for i in range(0, len(rest), size)]
    return alone + out


def kernel_inputs(kernel) -> Run:
    """The kernel's fresh random inputs, seeded by its name."""
    return kernel.inputs(np.random.default_rng(zlib.crc32(kernel.name.encode())))


def interpret(batch: list) -> list[tuple[str, object]]:
    """Compile the batch as one module (the tile lowerings, with the batch's fold) and run
    each kernel in the interpreter: per kernel ``("ran", Run)``, ``("rejected", message)``
    or ``("interpreter", message)``. A module that fails to compile is retried kernel by
    kernel, so that each rejection is the kernel's own."""
    from ..compiler import lower_tile_ops
    from ..errors import CompileError, TileError
    from ..interpreter import interpreted_kernels
    from ..options import Options

    try:
        lowered, signatures = lower_tile_ops(module_text(batch), Options(fold=batch[0].fold))
    except CompileError as e:
        if len(batch) == 1:
            return [("rejected", str(e))]
        return [out for k in batch for out in interpret([k])]
    built = interpreted_kernels(lowered, signatures)
    outcomes = []
    for kernel in batch:
        run = kernel_inputs(kernel)
        try:
            built[kernel.name].launch(kernel.grid, kernel.block, *run.buffers)
        except TileError as e:
            outcomes.append(("interpreter", f"{type(e).__name__}: {e}"))
            continue
        outcomes.append(("ran", run))
    return outcomes


def verdict(kernel, outcome: tuple[str, object], exact: bool = True) -> list[str]:
    """What is wrong with one kernel's outcome against the reference (empty: nothing);
    ``exact=False`` (the GPU): a combiner with math ops within a tolerance (``harness.judge``)."""
    status, detail = outcome
    must_reject = kernel.must_reject()
    if must_reject:
        if status == "rejected":
            return []
        wrong = kernel.judge(detail, evidence=True) if status == "ran" else [detail]
        return [f"accepted, but it must be rejected ({must_reject}); against the op's meaning "
                f"in row-major order: {'; '.join(wrong) or 'every dst place right'}"]
    if status == "rejected":
        if kernel.must_reject(documented=True):
            return []  # docs/spec.md, "What is not supported"
        return [f"rejected a configuration the reference computes: {detail}"]
    if status == "interpreter":
        return [f"the interpreter failed: {detail}"]
    return kernel.judge(detail, exact=exact) if isinstance(kernel, Kernel) else kernel.judge(detail)


# --- the GPU comparison: two commands ------------------------------------------------------


def prepare(count: int, seed: int, root: Path, copies: int = 0, combiners: int = 0) -> int:
    """Draw the sample, run it in the interpreter, compile it into ``root/cache``, and save
    the modules, the kernels, their inputs and the interpreter's outputs (needs MLIR)."""
    from .. import cache
    from .harness import module_text

    root.mkdir(parents=True, exist_ok=True)
    os.environ["TILE_MLIR_CACHE_DIR"] = str(root / "cache")
    modules, arrays, notes = [], {}, []
    n, kernels = count, sample(count, seed, copies, combiners)
    # draw until ``count`` reductions that the compiler must accept and the reference computes
    while sum(len(k.ops) for k in kernels
              if k.tag != "copy" and not k.must_reject(documented=True)) < count + combiners:
        n += max(count // 10, 10)
        kernels = sample(n, seed, copies, combiners)
    for batch in batches(kernels):
        ran = []
        for kernel, outcome in zip(batch, interpret(batch)):
            problems = verdict(kernel, outcome)
            notes += [f"{kernel.name}: {p}" for p in problems]
            if outcome[0] in ("ran", "interpreter"):  # a race in the interpreter: the GPU shows what it does
                ran.append((kernel, outcome[1] if outcome[0] == "ran" else None))
        if not ran:
            continue
        fold = ran[0][0].fold
        text = module_text([k for k, _ in ran])
        if _compile_apart(text, fold):  # find the kernels that fail, and compile the others
            good = []
            for kernel, out in ran:
                why = _compile_apart(module_text([kernel]), fold)
                if why:
                    notes.append(f"{kernel.name}: the compile to PTX and cubin failed: {why}")
                else:
                    good.append((kernel, out))
            ran, text = good, module_text([k for k, _ in good])
            if not ran or _compile_apart(text, fold):
                continue
        for kernel, out in ran:
            kernel.save(arrays, kernel_inputs(kernel), out)
        modules.append({"text": text, "fold": ran[0][0].fold, "kernels": [k.to_json() for k, _ in ran]})
    cache.prune_stale()
    np.savez_compressed(root / "reference.npz", **arrays)
    (root / "reference.json").write_text(json.dumps({"seed": seed, "count": count, "modules": modules}))
    for note in notes:
        print(f"NOTE {note[:2000]}")
    saved = [k for m in modules for k in m["kernels"]]
    print(f"prepared {len(saved)} kernels ({sum(len(k.get('ops', [0])) for k in saved)} ops, "
          f"{sum(bool(k.get('copy')) for k in saved)} of them copies) in {len(modules)} modules "
          f"(seed {seed}) in {root}; {len(notes)} kernel(s) failed here already")
    return 0


def _compile_apart(text: str, fold: str) -> str | None:
    """Compile a module for the GPU into the cache (``TILE_MLIR_CACHE_DIR``) in a child
    process, which an abort inside LLVM cannot take this one down with; why it failed, or None."""
    code = ("import sys; from tile_mlir import api; from tile_mlir.options import Options; "
            "api.compile(sys.stdin.read(), Options(fold=sys.argv[1]), backend='cuda')")
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code, fold], input=text, capture_output=True, text=True, env=env)
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
    return f"exit status {done.returncode}: {last[:600]}"


def compare(root: Path) -> int:
    """Launch the saved kernels on the GPU; judge every dst place against the reference,
    and against the interpreter, bit for bit (numpy and cuda-python only)."""
    os.environ["TILE_MLIR_CACHE_DIR"] = str(root / "cache")
    from collections import Counter

    from .. import api
    from ..errors import TileError
    from ..options import Options

    meta = json.loads((root / "reference.json").read_text())
    data = np.load(root / "reference.npz")
    cases, wrong, by, interp, evidence = 0, 0, Counter(), 0, []
    for module in meta["modules"]:
        built = api.compile(module["text"], Options(fold=module["fold"]), backend="cuda")
        for d in module["kernels"]:
            kernel = kernel_from_json(d)
            run = kernel.load(data)
            try:
                built[kernel.name].launch(kernel.grid, kernel.block, *run.buffers)
                problems = verdict(kernel, ("ran", run), exact=False)
            except TileError as e:
                problems = [f"the launch failed: {type(e).__name__}: {e}"]
            same = kernel.same_as_interpreter(run, data)
            interp += not same
            if not same:
                print(f"INTERPRETER {kernel.name}: the GPU and the interpreter differ")
            if kernel.must_reject():
                evidence.append(f"{kernel.name}: {problems[0] if problems else 'right'}")
                continue
            n = len(kernel.ops)
            cases += n
            by[kernel.tag] += n
            by["in loops"] += n * (getattr(kernel, "repeat", 1) > 1)
            for op in kernel.ops if isinstance(kernel, Kernel) else ():
                by["argmax/argmin" if op.arg else "named" if op.function is None else "combiner"] += 1
            if problems:
                wrong += 1
                print(f"MISMATCH {kernel.name} ({kernel.describe()}): {'; '.join(problems)[:1500]}\n{kernel.text()}")
    for line in evidence:
        print(f"MUST BE REJECTED, RAN {line[:1500]}")
    parts = ", ".join(f"{by[k]} {k}" for k in ("thread", "warp", "warpgroup", "cta", "cluster", "shared", "in loops",
                                                 "copy", "named", "argmax/argmin", "combiner"))
    print(f"reference: {cases} cases, {wrong} mismatches ({parts}); the interpreter differs in {interp} kernel(s); "
          f"{len(evidence)} kernel(s) that must be rejected ran")
    return 1 if wrong or interp else 0


def show(name: str, count: int, seed: int, copies: int, combiners: int = 0) -> int:
    """Print one kernel of the sample, its module, and its verdict in the interpreter."""

    kernel = next((k for k in sample(count, seed, copies, combiners) if k.name == name), None)
    if kernel is None:
        print(f"no kernel {name} in the sample of {count} ops (seed {seed})")
        return 1
    print(kernel.text(), end="")
    print(f"// fold = {kernel.fold}; launch: grid {kernel.grid}, block {kernel.block}")
    problems = verdict(kernel, interpret([kernel])[0])
    print("\n".join(problems) or "right: every dst place has the reference's bits")
    return 1 if problems else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tile_mlir.testing.random_kernels")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="draw, interpret and compile a seeded sample (needs MLIR)")
    p.add_argument("--count", type=int, default=300, help="reductions in the sample")
    p.add_argument("--copies", type=int, default=60, help="tile.copy kernels in the sample")
    p.add_argument("--combiners", type=int, default=COMBINER_OPS,
                   help="argmax, argmin and combiner-function reductions in the sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", type=Path, default=Path(".tile-cache/differential"))
    c = sub.add_parser("compare", help="run the sample on the GPU and compare bit for bit")
    c.add_argument("--dir", type=Path, default=Path(".tile-cache/differential"))
    s = sub.add_parser("show", help="one kernel of the sample, its text and its verdict (needs MLIR)")
    s.add_argument("name")
    s.add_argument("--count", type=int, default=2000)
    s.add_argument("--copies", type=int, default=300)
    s.add_argument("--combiners", type=int, default=1000)
    s.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.command == "prepare":
        return prepare(args.count, args.seed, args.dir.resolve(), args.copies, args.combiners)
    if args.command == "show":
        return show(args.name, args.count, args.seed, args.copies, args.combiners)
    return compare(args.dir.resolve())


if __name__ == "__main__":
    sys.exit(main())
