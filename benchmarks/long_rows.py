"""Long rows outside tile-mlir: ``benchmarks/long_rows.cu``, built with nvcc for sm_90a and
run on the GPU machine (``python -m benchmarks.long_rows [--out DIR]``): one JSON line per
kernel, with its GB/s (bytes read + written) against ``cudaMemcpy``'s in the same run.
What bounds the fused kernels' long rows, measured without tile-mlir's lowering
(docs/fused-kernels.md, "Long rows")."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .measure import run_cuda


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.long_rows", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="write long_rows.json there")
    args = parser.parse_args(argv)
    rows = run_cuda("long_rows.cu")
    for row in rows:
        print(json.dumps(row))
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "long_rows.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
