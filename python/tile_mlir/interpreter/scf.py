"""The ``scf`` dialect: structured control flow under lane masks.

``scf.if`` on a per-thread condition runs both branches under lane masks and selects
its results per lane; a branch no active thread takes is skipped. ``scf.index_switch``
does the same with one mask per case. ``scf.for`` iterates in Python: its bounds must
be uniform over the active threads. ``scf.while`` runs while any active thread goes
on, each thread under the mask of those still looping.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import assign, choose, register, register_terminators, run_ops, uniform
from .vector import ints


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
            assign(env, carried, values)
            run_ops(ops, env, mask)
            values = [env[s] for s in yields]
        assign(env, results, values)

    return run


def _cases(env, mask, selectors, cases, results, where, memref_results) -> None:
    """Run the cases (``(ops, yields)``) whose selector (active threads, disjoint) is not
    empty, each under its own mask; set ``results`` per thread from the case it took."""
    live = [(sel, case) for sel, case in zip(selectors, cases) if np.count_nonzero(sel)]
    if len(live) == 1:  # every active thread takes one case: run it under ``mask``
        ops, yields = live[0][1]
        run_ops(ops, env, mask)
        assign(env, results, [env[y] for y in yields])
        return
    if memref_results and live:
        raise InterpreterError(f"{where}: yielding memrefs under a per-thread condition is unsupported")
    merged = None
    for sel, (ops, yields) in live:
        run_ops(ops, env, sel)
        values = [env[y] for y in yields]
        merged = values if merged is None else [choose(sel, v, m) for v, m in zip(values, merged)]
    assign(env, results, merged or ())


def _region(cx, region):
    return cx.block(region.blocks[0]) if len(region.blocks) else ([], [])


def _if(cx, op, where):
    c = cx.use(op.operands[0])
    cases = [_region(cx, op.regions[0]), _region(cx, op.regions[1])]
    results = [cx.define(v) for v in op.results]
    memref_results = any(isinstance(v.type, ir.MemRefType) for v in op.results)

    def run(env, mask):
        cond = env[c]
        if type(cond) is not np.ndarray:
            _cases(env, mask, [True], [cases[0 if cond else 1]], results, where, memref_results)
            return
        on = cond if mask is None else cond & mask
        off = ~cond if mask is None else mask & ~cond
        _cases(env, mask, [on, off], cases, results, where, memref_results)

    return run


def _index_switch(cx, op, where):
    """``scf.index_switch``: each thread takes the case of its value, or the default."""
    c = cx.use(op.operands[0])
    values = ints(op.attributes["cases"])
    default = _region(cx, op.regions[0])
    cases = [_region(cx, r) for r in list(op.regions)[1:]]
    results = [cx.define(v) for v in op.results]
    memref_results = any(isinstance(v.type, ir.MemRefType) for v in op.results)

    def run(env, mask):
        x = env[c]
        if type(x) is not np.ndarray:
            case = cases[values.index(int(x))] if int(x) in values else default
            _cases(env, mask, [True], [case], results, where, memref_results)
            return
        selectors = [x == v if mask is None else (x == v) & mask for v in values]
        taken = np.logical_or.reduce(selectors) if selectors else np.zeros_like(x, bool)
        selectors.append(~taken if mask is None else mask & ~taken)
        _cases(env, mask, selectors, [*cases, default], results, where, memref_results)

    return run


def _while(cx, op, where):
    """``scf.while``: each thread loops until its condition is false; the loop ends
    when no active thread goes on. A thread's results are the values it forwarded
    when it stopped."""
    inits = [cx.use(v) for v in op.operands]
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    before_args = [cx.define(a) for a in before.arguments]
    before_ops, (cond, *forwarded) = cx.block(before)
    after_args = [cx.define(a) for a in after.arguments]
    after_ops, yields = cx.block(after)
    results = [cx.define(v) for v in op.results]

    def run(env, mask):
        values = [env[s] for s in inits]
        active, final = mask, None
        while True:
            assign(env, before_args, values)
            run_ops(before_ops, env, active)
            go, out = env[cond], [env[s] for s in forwarded]
            if type(go) is np.ndarray:
                stop = ~go if active is None else active & ~go
                go = go if active is None else active & go
                if np.count_nonzero(stop):
                    final = out if final is None else [choose(stop, v, f) for v, f in zip(out, final)]
                if not np.count_nonzero(go):
                    break
                active = go
            elif not go:
                final = out if final is None else [choose(active, v, f) for v, f in zip(out, final)]
                break
            assign(env, after_args, out)
            run_ops(after_ops, env, active)
            values = [env[y] for y in yields]
        assign(env, results, final)

    return run


register({"scf.for": _for, "scf.if": _if, "scf.index_switch": _index_switch, "scf.while": _while})
register_terminators("scf.yield", "scf.condition")
