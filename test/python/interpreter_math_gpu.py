"""How far the H200's math functions are from the interpreter's, in ulps.

The bounds ``tile_mlir.interpreter.math.GPU_ULPS`` states were checked this way:

1. on the GPU machine, ``interpreter_math_gpu.cu`` (beside this file; how to build and
   run it is at its top) writes the inputs and the GPU's outputs of 33 float ops;
2. here, ``python test/python/interpreter_math_gpu.py DIR`` runs the interpreter's op on
   the same inputs and prints, per op and type: how many results agree bit for bit, the
   most ulps between finite results, and where NaN-ness, infinities or NaN bits differ.
   It exits 1 if a distance is over the stated bound.

f16 and bf16: the GPU computes the f32 function on the f16/bf16 value (MLIR extends the
operand to f32 and calls the f32 function); the result is rounded to the type here, as
``cvt.rn`` does it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from tile_mlir.interpreter import math as interpreted
from tile_mlir.interpreter.elements import ELEMS, round_bf16

OPS = ["absf", "ceil", "floor", "round", "roundeven", "sqrt", "rsqrt", "cbrt", "exp", "exp2", "expm1",
       "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
       "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "powf", "atan2", "copysign", "fma"]  # fmt: skip
FILES = {"f32": (65536, np.float32), "f64": (32768, np.float64), "f16": (65536, np.float32), "bf16": (65536, np.float32)}
BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}


def _operand(values, t):
    """An input of the file as the interpreter's value (f16 and bf16 inputs are exact)."""
    return values.astype(np.float16) if t == "f16" else values


def _result(values, t):
    """The GPU's f32 result rounded to f16 or bf16 as ``cvt.rn`` does (measured on the
    H200: a NaN becomes the canonical NaN)."""
    if t == "f16":
        half = values.astype(np.float16)
        return np.where(np.isnan(half), np.uint16(0x7FFF).view(np.float16), half)
    return round_bf16(values) if t == "bf16" else values


def _bits(values, t):
    if t == "bf16":
        return (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return np.asarray(values).view(BITS[t])


def ulps(a, b, t):
    """Distance in ulps between bit patterns of finite values of type ``t``."""
    width = np.dtype(BITS[t]).itemsize * 8
    if width == 64:
        ia, ib = (x.view(np.int64) for x in (a, b))
        ia, ib = (np.where(i < 0, np.iinfo(np.int64).min - i, i) for i in (ia, ib))
    else:
        sign = 1 << (width - 1)
        ia, ib = (x.astype(np.int64) for x in (a, b))
        ia, ib = (np.where(i & sign, sign - i, i) for i in (ia, ib))
    return np.abs(ia - ib)


def interpreter(op, t, operands):
    elem = ELEMS[t]
    if op == "fma":
        return interpreted._fma(None, elem, elem)(*operands)
    if op == "copysign":
        return interpreted._copysign(None, elem, elem)(*operands[:2])
    arity = 2 if op in ("powf", "atan2") else 1
    return interpreted._float(op)(None, elem, elem)(*operands[:arity])


def compare(directory: Path) -> int:
    over = 0
    for t, (n, dtype) in FILES.items():
        raw = np.fromfile(directory / f"{t}.bin", dtype).reshape(36, n)
        operands = [_operand(x, t) for x in raw[:3]]
        for k, op in enumerate(OPS):
            gpu = _result(raw[3 + k], t)
            with np.errstate(all="ignore"):
                want = np.asarray(interpreter(op, t, operands))
            wb, gb = _bits(want, t), _bits(gpu, t)
            fw, fg = (np.asarray(v, np.float64) for v in (want, gpu))
            nan_w, nan_g = np.isnan(fw), np.isnan(fg)
            finite = ~nan_w & ~nan_g & np.isfinite(fw) & np.isfinite(fg)
            infinite = ~nan_w & ~nan_g & ~finite & (wb != gb)
            most = int(ulps(wb[finite], gb[finite], t).max()) if finite.any() else 0
            bound = interpreted.gpu_ulps(op, t)
            over += most > bound or int(np.count_nonzero(nan_w != nan_g)) > 0 or int(np.count_nonzero(infinite)) > 0
            print(
                f"{t:4} {op:9} bitwise {np.count_nonzero(wb == gb):5}/{n}  most {most} ulp (bound {bound})  "
                f"NaN-ness differs {np.count_nonzero(nan_w != nan_g)}  inf differs {np.count_nonzero(infinite)}  "
                f"NaN bits differ {np.count_nonzero(nan_w & nan_g & (wb != gb))}"
            )
    print("over a bound" if over else "every op within its bound")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(compare(Path(sys.argv[1])))
