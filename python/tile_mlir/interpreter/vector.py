"""The ``vector`` dialect: 1-D ``vector.load`` and ``vector.store``.

A vector value is a tuple of its elements, each a scalar or a per-thread array; the
arith ops apply elementwise to 1-D vectors (``arith.elementwise``).
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import Unsupported, Where, register
from .memref import memref_type, read, write


def vector_width(type_) -> int:
    if not isinstance(type_, ir.VectorType) or type_.rank != 1 or type_.scalable:
        raise Unsupported(f"type {type_} (only 1-D fixed vectors move through load/store)")
    return type_.shape[0]


def _vector_span(mr, n: int, where: Where):
    """Check that ``n`` elements from a flat index stay inside the memref's last dim."""
    last, text = mr.shape[-1], mr.text

    def check(env, mask, flat):
        bad = flat % last + n > last
        if np.any(bad if mask is None or type(bad) is not np.ndarray else bad & mask):
            raise InterpreterError(f"{where}: {n} elements from that index overrun {text}'s last dim")

    return check


def _vector_load(cx, op, where):
    operands = list(op.operands)
    mr = memref_type(cx, operands[0].type)
    m = cx.use(operands[0])
    n = vector_width(op.result.type)
    constant, index = mr.address(cx, operands[1:], where)
    check = _vector_span(mr, n, where)
    r = cx.define(op.result)
    from_storage = mr.elem.from_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        check(env, mask, flat)
        mem = env[m]
        env[r] = tuple(read(env, mem, flat + k, from_storage) for k in range(n))

    return run


def _vector_store(cx, op, where):
    operands = list(op.operands)
    v = cx.use(operands[0])
    n = vector_width(operands[0].type)
    mr = memref_type(cx, operands[1].type)
    m = cx.use(operands[1])
    constant, index = mr.address(cx, operands[2:], where)
    check = _vector_span(mr, n, where)
    to_storage = mr.elem.to_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        check(env, mask, flat)
        mem = env[m]
        for k, value in enumerate(env[v]):
            write(env, mem, flat + k, value, mask, to_storage)

    return run


register({"vector.load": _vector_load, "vector.store": _vector_store})
