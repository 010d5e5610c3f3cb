"""Random ``tile.reduce`` configurations, and the GPU-vs-interpreter bitwise comparison.

``random_case(rng)`` draws one valid configuration from a ``random.Random``:

* the exec scope, thread or warp; a kind; a dtype; accum or not;
* a src layout of rank 1-3: at warp scope every lane bit goes to a random dim
  (split into ``laneid`` iters), to the src replica, or stays unused; every dim
  gets 0-2 register iters of extent 1-4, the iters of a dim in random order, and
  the register strides are row-major over a random permutation of the register
  iters (sometimes with a gap, so span > size);
* the reduced axes, a random non-empty set, each written positive or negative,
  sometimes twice;
* the dst layout that SPEC section 5 asks for: the kept dims with the same thread
  iters and register extents (its own compact random strides), the reduced dims
  dropped or kept with extent 1, replicated over the src replica bits and the
  reduced lane bits;
* at thread scope, half the cases have no layouts at all (multi-dim memrefs).

The property test ``test/python/test_differential.py`` feeds it hypothesis's
``randoms()`` (so failures shrink) and checks the interpreter against numpy.

The bitwise comparison with the hardware is two commands, as GPU.md prescribes::

    python -m tile_mlir.testing.differential prepare --count 300 --seed 0 --dir DIR   # here, with MLIR
    python -m tile_mlir.testing.differential compare --dir DIR                        # on the GPU

``prepare`` draws the seeded sample, draws inputs, runs every case in the
interpreter, compiles it into the compile cache under ``DIR/cache``, and saves the
cases, inputs and interpreter outputs in ``DIR``. ``compare`` (numpy and
cuda-python only) launches each kernel on the GPU with the same inputs and
compares the outputs with the interpreter's bit for bit, at every place the dst
layout gives an element (``ReduceCase.owned``): lanes outside the layout hold
whatever their poisoned, unowned inputs made, and NaN payloads are not part of
the contract. The last line printed is the summary:
``differential: N cases, M bitwise mismatches``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..layout import Iter, TileLayout
from .cases import DTYPES, KINDS, ReduceCase

MAX_REGISTERS = 64  # registers per thread in one random src tile


def _lane_iters(bits: list[int], rng: random.Random) -> list[Iter]:
    """``laneid`` iters moving exactly ``bits``: runs of consecutive bits, split at random."""
    iters, run = [], []
    for b in sorted(bits):
        if run and (b != run[-1] + 1 or rng.random() < 0.3):
            iters.append(run)
            run = []
        run.append(b)
    if run:
        iters.append(run)
    return [Iter(1 << len(r), 1 << r[0], "laneid") for r in iters]


def _assign_strides(dims: list[list[Iter]], rng: random.Random, gap: bool) -> list[list[Iter]]:
    """Give the register iters row-major strides over a random order of them."""
    where = [(d, k) for d, its in enumerate(dims) for k, it in enumerate(its) if it.axis == "m"]
    rng.shuffle(where)
    stride = 1
    out = [list(its) for its in dims]
    for d, k in reversed(where):  # the last in the order is innermost
        it = out[d][k]
        out[d][k] = Iter(it.extent, stride, "m")
        stride *= it.extent
        if gap and rng.random() < 0.3:
            stride += 1  # an unused slot: span > size
    return out


def random_case(rng: random.Random, name: str = "diff") -> ReduceCase:
    """One valid random configuration (module docstring)."""
    scope = rng.choice(("thread", "warp"))
    kind, dtype, accum = rng.choice(KINDS), rng.choice(DTYPES), rng.random() < 0.5
    rank = rng.randint(1, 3)
    axes_set = sorted(rng.sample(range(rank), rng.randint(1, rank)))
    axes = [a - rank if rng.random() < 0.5 else a for a in axes_set]
    if rng.random() < 0.2:
        axes.append(rng.choice(axes))  # duplicates collapse
    keep = rng.random() < 0.3  # keep reduced dims with extent 1

    if scope == "thread" and rng.random() < 0.5:
        shape = tuple(rng.randint(1, 4) for _ in range(rank))
        dst = tuple(1 if d in axes_set else e for d, e in enumerate(shape)) if keep else tuple(
            e for d, e in enumerate(shape) if d not in axes_set
        )
        return ReduceCase(name, kind, dtype, scope, tuple(axes), accum, shape, dst or (1,))

    # The src layout: lane bits, then register iters, in a random order per dim.
    dims: list[list[Iter]] = [[] for _ in range(rank)]
    replica_bits: list[int] = []
    if scope == "warp":
        owner: dict[int, list[int]] = {}
        for b in range(5):
            choice = rng.choice([*range(rank), *range(rank), "replica", "unused"])
            if choice == "replica":
                replica_bits.append(b)
            elif choice != "unused":
                owner.setdefault(choice, []).append(b)
        for d, bits in owner.items():
            dims[d] += _lane_iters(bits, rng)
    budget = MAX_REGISTERS
    for d in range(rank):
        for _ in range(rng.randint(0 if dims[d] else 1, 2)):
            extent = rng.randint(1, min(4, budget))
            budget //= extent
            dims[d].append(Iter(extent, 1, "m"))
        rng.shuffle(dims[d])
    dims = _assign_strides(dims, rng, gap=True)
    src = TileLayout(tuple(map(tuple, dims)), tuple(_lane_iters(replica_bits, rng)))

    # The dst layout SPEC 5 asks for.
    reduced_bits = sorted(int(math.log2(it.stride)) + k for d in axes_set for it in dims[d]
                          if it.axis == "laneid" for k in range(int(math.log2(it.extent))))
    dst_dims = []
    for d in range(rank):
        if d in axes_set:
            if keep:
                dst_dims.append([Iter(1, 1, "m")])
        else:
            dst_dims.append(list(dims[d]))
    dst_dims = _assign_strides(dst_dims, rng, gap=False) if dst_dims else [[Iter(1, 1, "m")]]
    dst = TileLayout(tuple(map(tuple, dst_dims)), tuple(_lane_iters(replica_bits + reduced_bits, rng)))
    return ReduceCase(
        name, kind, dtype, scope, tuple(axes), accum, (max(src.span, 1),), (max(dst.span, 1),),
        str(src), str(dst),
    )


def sample(count: int, seed: int) -> list[ReduceCase]:
    """The fixed seeded sample: case i is drawn from ``random.Random(f"{seed}:{i}")``."""
    return [random_case(random.Random(f"{seed}:{i}"), f"diff_{seed}_{i}") for i in range(count)]


# --- the two commands -----------------------------------------------------------------------


def prepare(count: int, seed: int, root: Path) -> int:
    """Draw, interpret, compile and save the sample (needs MLIR)."""
    from .. import runtime
    from ..interpreter import interpreted_kernels
    from ..compiler import lower_tile_ops

    root.mkdir(parents=True, exist_ok=True)
    os.environ["TILE_MLIR_CACHE_DIR"] = str(root / "cache")
    cases = sample(count, seed)
    arrays = {}
    rng = np.random.default_rng(seed)
    for i, case in enumerate(cases):
        text = case.kernel_text()
        x, old = case.random_inputs(rng)
        a = case.pack(x)
        b = case.output_buffer(old if case.accum else None)
        lowered, signatures = lower_tile_ops(text)
        interpreted_kernels(lowered, signatures)[case.name].launch(1, case.threads(), a, b)
        problems = case.check(x, old if case.accum else None, b)
        if problems:
            raise SystemExit(f"{case.name}: the interpreter disagrees with numpy: {problems[:3]}")
        runtime.compile(text, backend="cuda")  # into DIR/cache; no CUDA call
        arrays[f"a{i}"], arrays[f"b0_{i}"] = a, case.output_buffer(old if case.accum else None)
        arrays[f"b{i}"] = b
    np.savez_compressed(root / "data.npz", **arrays)
    (root / "cases.json").write_text(json.dumps([asdict(c) for c in cases]))
    print(f"prepared {count} differential cases (seed {seed}) in {root}")
    return 0


def compare(root: Path) -> int:
    """Launch the sample on the GPU; compare with the interpreter's outputs bit for bit."""
    os.environ["TILE_MLIR_CACHE_DIR"] = str(root / "cache")
    from .. import runtime

    cases = [ReduceCase(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})
             for d in json.loads((root / "cases.json").read_text())]
    data = np.load(root / "data.npz")
    mismatches = 0
    for i, case in enumerate(cases):
        b = data[f"b0_{i}"].copy()
        runtime.compile(case.kernel_text(), backend="cuda")[case.name].launch(1, case.threads(), data[f"a{i}"], b)
        got, want = case.owned(b), case.owned(data[f"b{i}"])
        if got.tobytes() != want.tobytes():
            mismatches += 1
            raw = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[b.itemsize]
            got, want = got.view(raw), want.view(raw)
            at = np.flatnonzero(got != want)
            print(f"MISMATCH {case.name}: {len(at)} owned place(s) differ, the first ({at[0]}): "
                  f"GPU {int(got[at[0]]):#x}, interpreter {int(want[at[0]]):#x}; {case}")
    print(f"differential: {len(cases)} cases, {mismatches} bitwise mismatches")
    return 1 if mismatches else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tile_mlir.testing.differential")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="draw, interpret and compile a seeded sample (needs MLIR)")
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dir", type=Path, default=Path(".tile-cache/differential"))
    c = sub.add_parser("compare", help="run the sample on the GPU and compare bit for bit")
    c.add_argument("--dir", type=Path, default=Path(".tile-cache/differential"))
    args = ap.parse_args(argv)
    if args.command == "prepare":
        return prepare(args.count, args.seed, args.dir.resolve())
    return compare(args.dir.resolve())


if __name__ == "__main__":
    sys.exit(main())
