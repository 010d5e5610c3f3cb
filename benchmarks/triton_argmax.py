"""The Triton peer of benchmark 7: argmax over rows, one program per row.

``argmax_rows[(M,)](X, Y, N, BLOCK_N=..., ONE_PASS=..., num_warps=...)`` writes each row's
argmax to Y (int32). With ``ONE_PASS`` (``BLOCK_N == N``) the row is one ``tl.argmax``;
otherwise the program keeps a running (value, index) per position over chunks of
``BLOCK_N`` columns (the first of equal values: the chunks come in column order) and
reduces the pairs with ``tl.reduce``, equal values to the lower index. The inputs the
benchmark draws hold no NaN, so neither path handles one.

Importing this module needs Triton (benchmarks/argmax.py imports it on the GPU only).
"""

import triton
import triton.language as tl


@triton.jit
def _larger(v1, i1, v2, i2):
    left = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(left, v1, v2), tl.where(left, i1, i2)


@triton.jit
def argmax_rows(X, Y, N, BLOCK_N: tl.constexpr, ONE_PASS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    base = X + row * N
    if ONE_PASS:
        best = tl.argmax(tl.load(base + cols), axis=0)
    else:
        acc_v = tl.full([BLOCK_N], float("-inf"), tl.float32)
        acc_i = tl.zeros([BLOCK_N], tl.int32)
        for start in range(0, N, BLOCK_N):
            x = tl.load(base + start + cols).to(tl.float32)
            take = x > acc_v
            acc_v = tl.where(take, x, acc_v)
            acc_i = tl.where(take, start + cols, acc_i)
        _, best = tl.reduce((acc_v, acc_i), 0, _larger)
    tl.store(Y + row, best.to(tl.int32))
