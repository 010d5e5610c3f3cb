"""Compile every conformance case, every tile.copy case, the port of Triton's reduction
tests, every example, the fused kernels of test/gpu/test_fused_gpu.py,
test_cross_entropy_gpu.py and test_torch_gpu.py (and of ``python -m tile_mlir.kernels``'s
default shape), the backward kernels of test/gpu/test_backward_gpu.py and the dynamic
shared memory kernels of test/gpu/test_dynamic_shared_gpu.py into the compile cache, for
a GPU machine without MLIR.

    python -m tile_mlir.testing.prepare [--cache DIR] [--chip sm_XX] [--jobs N]

Run it where MLIR (and ptxas, for cubins) is installed. Each case's kernel goes through
``tile_mlir.compile(text, Options(chip=...), backend="cuda")``, which looks the module up
in the cache and on a miss builds it and stores it. A CUDA
backend makes no CUDA call until a launch, so no GPU is needed here. Then copy DIR to
the GPU machine and run ``test/gpu`` there with ``TILE_MLIR_CACHE_DIR=DIR``.

The cache directory is ``--cache``, else ``$TILE_MLIR_CACHE_DIR``, else the cache's
default (``tile_mlir.cache.cache_dir()``). The cache key covers the IR, the options (the chip), the
toolchain versions and a digest of tile_mlir's own source, so a changed lowering is
rebuilt; the entries older builds left are then removed (``cache.prune_stale``), so the
directory holds what the GPU needs and little else. The last line printed is the summary::

    prepared N kernels into DIR (M built, K cached)
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from .. import api, cache
from ..kernels import SPECS, kernel_text
from ..kernels.training import text_backward
from ..options import Options
from ..vocab import DEFAULT_CHIP
from . import copies, dynamic_shared, loops, triton_port
from .combiner_matrix import COMBINER_CASES
from .fused import (BACKWARD_CASES, CE_GPU_CASES, GPU_CASES, SELECTION_GPU_CASES, TORCH_BACKWARD_KERNELS,
                    TORCH_GPU_SHAPES)
from .matrix import CASES as REDUCE_CASES
from .shared_cases import SHARED_CASES

# Every tile.reduce and tile.copy kernel a GPU suite compiles (the conformance matrix,
# the combiner cases, the tile.copy cases, the ops in loops and the port of Triton's
# reduction tests), and the dynamic shared memory kernels; the shared cases are added below.
CASES = (*REDUCE_CASES, *COMBINER_CASES, *copies.CASES, *loops.CASES, *dynamic_shared.CASES,
         *(() if triton_port.unsupported() else triton_port.CASES))

# The examples (the demonstration among them), so they launch from the cache too; and
# the fused kernels (``tile_mlir.kernels``), built for each case of FUSED. Building one
# remembers its text in the cache by name (``kernels.kernel_text``), for the GPU machine.
EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.mlir"))
FUSED = GPU_CASES + CE_GPU_CASES + SELECTION_GPU_CASES + [
    (name, M, N, dtype) for name in SPECS if SPECS[name].module == "forward" for M, N, dtype in TORCH_GPU_SHAPES]
# the backward kernels (a row kernel each, and the norms' column sums), also at the
# shapes of test/gpu/test_torch_gpu.py (its autograd calls them)
BACKWARD = BACKWARD_CASES + [(name, M, N, dtype) for name in TORCH_BACKWARD_KERNELS for M, N, dtype in TORCH_GPU_SHAPES]


def prepare_one(text: str, chip: str) -> bool:
    """Make sure the cache holds ``text`` for ``chip``; True if it had to be built."""
    options = Options(chip=chip)  # what the GPU side compiles with: the same cache key
    cached = cache.lookup(text, options) is not None
    api.compile(text, options, backend="cuda")
    return not cached


def _use_cache_dir(path: str) -> None:
    """Point this process (and the workers it starts) at ``path``."""
    os.environ["TILE_MLIR_CACHE_DIR"] = path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tile_mlir.testing.prepare",
        description="Compile every conformance case (tile_mlir.testing.matrix, shared_cases, copies) "
        "and every example into the compile cache.",
    )
    parser.add_argument("--cache", help="the cache directory (default: $TILE_MLIR_CACHE_DIR, else the cache's default)")
    parser.add_argument("--chip", default=DEFAULT_CHIP, help=f"the chip to compile for (default: {DEFAULT_CHIP})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="compile processes (default: all cores)")
    args = parser.parse_args(argv)
    if args.cache:
        _use_cache_dir(str(Path(args.cache).resolve()))
    root = cache.cache_dir()

    if triton_port.unsupported():
        print(f"the port of Triton's reduction tests is left out: {triton_port.unsupported()}")
    texts = [case.kernel_text(args.chip) for case in CASES + SHARED_CASES] + [p.read_text() for p in EXAMPLES]
    texts += [kernel_text(name, M, N, dtype, chip=args.chip, remember=True) for name, M, N, dtype in FUSED]
    texts += [text for name, M, N, dtype in BACKWARD
              for text in text_backward(name, M, N, dtype, chip=args.chip, remember=True)]
    texts = list(dict.fromkeys(texts))  # one kernel serves every M: shapes of one N share it
    # Spawned workers, not forked ones: the caller may hold MLIR contexts and their threads.
    with ProcessPoolExecutor(
        max_workers=max(1, args.jobs),
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_use_cache_dir,
        initargs=(str(root),),
    ) as pool:
        built = sum(pool.map(prepare_one, texts, [args.chip] * len(texts)))
    stale = cache.prune_stale()
    if stale:
        print(f"removed {stale} stale entries (built by another toolchain or tile_mlir source)")
    print(f"prepared {len(texts)} kernels into {root} ({built} built, {len(texts) - built} cached)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
