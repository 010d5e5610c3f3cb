"""The ``scf`` dialect: structured control flow under lane masks.

``scf.if`` on a per-thread condition runs both branches under lane masks and selects
its results per lane; a branch no active thread takes is skipped. ``scf.for`` iterates
in Python: its bounds must be uniform over the active threads.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import register, register_terminators, run_ops, uniform


def _for(cx, op, where):
    operands = list(op.operands)
    lb, ub, step = (cx.use(v) for v in operands[:3])
    inits = [cx.use(v) for v in operands[3:]]
    body = op.regions[0].blocks[0]
    args = list(body.arguments)
    iv_elem = cx.elem(args[0].type)
    iv = cx.define(args[0])
    carried = [cx.define(a) for a in args[1:]]
    ops, yields = cx.block(body)
    results = [cx.define(v) for v in op.results]
    unsigned = "unsignedCmp" in op.attributes
    if unsigned:
        mask_bits = (1 << iv_elem.bits) - 1

        def make_iv(i):
            return iv_elem.scalar(iv_elem.wrap(i))
    else:
        make_iv = iv_elem.scalar

    def run(env, mask):
        start = uniform(env[lb], mask, where, "lower bound")
        stop = uniform(env[ub], mask, where, "upper bound")
        stride = uniform(env[step], mask, where, "step")
        if unsigned:
            start, stop, stride = start & mask_bits, stop & mask_bits, stride & mask_bits
        if stride <= 0:
            raise InterpreterError(f"{where}: step {stride} is not positive")
        values = [env[s] for s in inits]
        for i in range(start, stop, stride):
            env[iv] = make_iv(i)
            for s, v in zip(carried, values):
                env[s] = v
            run_ops(ops, env, mask)
            values = [env[s] for s in yields]
        for s, v in zip(results, values):
            env[s] = v

    return run


def _if(cx, op, where):
    c = cx.use(op.operands[0])
    then_ops, then_yields = cx.block(op.regions[0].blocks[0])
    else_ops, else_yields = [], []
    if len(op.regions[1].blocks):
        else_ops, else_yields = cx.block(op.regions[1].blocks[0])
    results = [cx.define(v) for v in op.results]
    memref_results = any(isinstance(v.type, ir.MemRefType) for v in op.results)

    def branch(ops, yields, env, mask):
        run_ops(ops, env, mask)
        for s, y in zip(results, yields):
            env[s] = env[y]

    def run(env, mask):
        cond = env[c]
        if type(cond) is not np.ndarray:
            branch(*((then_ops, then_yields) if cond else (else_ops, else_yields)), env, mask)
            return
        on = cond if mask is None else cond & mask
        off = ~cond if mask is None else mask & ~cond
        if not np.count_nonzero(off):
            branch(then_ops, then_yields, env, mask)
        elif not np.count_nonzero(on):
            branch(else_ops, else_yields, env, mask)
        elif memref_results:
            raise InterpreterError(f"{where}: yielding memrefs under a per-thread condition is unsupported")
        else:
            run_ops(then_ops, env, on)
            taken = [env[y] for y in then_yields]
            run_ops(else_ops, env, off)
            for s, t, y in zip(results, taken, else_yields):
                env[s] = np.where(cond, t, env[y])

    return run


register({"scf.for": _for, "scf.if": _if})
register_terminators("scf.yield")
