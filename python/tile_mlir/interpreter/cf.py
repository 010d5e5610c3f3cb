"""The ``cf`` dialect: branches between the blocks of a region, under lane masks.

A region of several blocks (a ``gpu.func`` body after ``convert-scf-to-cf``, or one
written with ``cf.br``/``cf.cond_br``/``cf.switch``) runs as a set of pending blocks,
each with the threads waiting to enter it and their block arguments (a value per
thread). The pending block that comes first in the region runs next, under its mask;
its terminator sends each thread on to a successor, merging masks and arguments where
threads from several predecessors meet. Code that MLIR generates puts a loop's body
before its exit and both arms of a branch before their join, so the threads of a
divergent branch or loop run together again (reconverge) where the code joins, as on
the GPU; warp ops and barriers after the join see all of them.

``cf.assert`` fails, naming the first thread whose condition is false and its message.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import (
    N,
    Op,
    Unsupported,
    Where,
    assign,
    choose,
    register,
    register_terminators,
    run_ops,
    thread_name,
)
from .vector import ints


class _Block:
    """A compiled block: its argument slots, ops and terminator."""

    __slots__ = ("args", "branch", "memref_args", "ops")

    def __init__(self, args, memref_args):
        self.args, self.memref_args = args, memref_args
        self.ops: list[Op] = []
        self.branch = None  # run(env, mask) -> [(block index, mask, argument values)]


def region_ops(cx, region) -> list[Op]:
    """The ops that run a region: its block's ops, or one op that runs its CFG."""
    blocks = list(region.blocks)
    if len(blocks) == 1:
        ops, _ = cx.block(blocks[0])
        return ops
    index = {b: k for k, b in enumerate(blocks)}
    compiled = [_Block([], [])]  # the entry block's arguments belong to the region's op
    for b in blocks[1:]:
        args = list(b.arguments)
        compiled.append(_Block([cx.define(a) for a in args], [isinstance(a.type, ir.MemRefType) for a in args]))
    for k in _reverse_postorder(blocks, index):  # definitions before their uses
        block = blocks[k]
        *body, terminator = (view.operation for view in block.operations)
        for op in body:
            fn = cx.op(op)
            if fn is not None:
                compiled[k].ops.append(fn)
        try:
            compiled[k].branch = _terminator(cx, terminator, index)
        except Unsupported as e:
            cx.unsupported.append(f"{Where(terminator.name, terminator.location)}: {e}")
    return [_cfg(compiled)]


def _reverse_postorder(blocks, index) -> list[int]:
    seen, order = set(), []

    def visit(k):
        seen.add(k)
        terminator = list(blocks[k].operations)[-1].operation
        for s in terminator.successors:
            if index[s] not in seen:
                visit(index[s])
        order.append(k)

    visit(0)
    return order[::-1]


def _terminator(cx, op, index):
    """run(env, mask) -> the (block, mask, arguments) each thread goes on to."""
    name = op.name
    targets = [index[s] for s in op.successors]
    if name in ("gpu.return", "func.return"):
        return lambda env, mask: ()
    if name == "cf.br":
        slots = [cx.use(v) for v in op.operands]
        (target,) = targets
        return lambda env, mask: ((target, mask, [env[s] for s in slots]),)
    if name == "cf.cond_br":
        _, n_true, _ = ints(op.attributes["operandSegmentSizes"])
        c, *rest = (cx.use(v) for v in op.operands)
        arms = [(targets[0], rest[:n_true]), (targets[1], rest[n_true:])]
        return _select_targets(c, lambda env, cond: [cond, ~cond], lambda cond: 0 if cond else 1, arms)
    if name == "cf.switch":
        flag, *rest = (cx.use(v) for v in op.operands)
        _, n_default, _ = ints(op.attributes["operandSegmentSizes"])
        segments = ints(op.attributes["case_operand_segments"])
        values = [int(v) for v in op.attributes["case_values"]] if "case_values" in op.attributes else []
        arms, at = [(targets[0], rest[:n_default])], n_default
        for target, size in zip(targets[1:], segments):
            arms.append((target, rest[at : at + size]))
            at += size

        def selectors(env, x):
            cases = [x == v for v in values]
            taken = np.logical_or.reduce(cases) if cases else np.zeros(np.shape(x), bool)
            return [~taken, *cases]

        def pick(x):
            return values.index(int(x)) + 1 if int(x) in values else 0

        return _select_targets(flag, selectors, pick, arms)
    raise Unsupported("the interpreter does not support this op")


def _select_targets(c, selectors, pick, arms):
    """Branch on the value at slot ``c``: uniform, every active thread takes
    ``arms[pick(value)]``; per thread, arm k takes the threads of ``selectors[k]``."""

    def branch(env, mask):
        x = env[c]
        if type(x) is not np.ndarray:
            target, slots = arms[pick(x)]
            return ((target, mask, [env[s] for s in slots]),)
        out = []
        for sel, (target, slots) in zip(selectors(env, x), arms):
            if mask is not None:
                sel = sel & mask
            if np.count_nonzero(sel):
                out.append((target, sel, [env[s] for s in slots]))
        return out

    return branch


def _cfg(blocks: list[_Block]) -> Op:
    """The op that runs a region's blocks (see the module's docstring)."""

    def run(env, mask):
        pending = {0: (mask, [])}  # block -> (threads waiting to enter it, their arguments)
        while pending:
            k = min(pending)
            waiting, args = pending.pop(k)
            if waiting is not None and np.count_nonzero(waiting) == env[N]:
                waiting = None
            block = blocks[k]
            assign(env, block.args, args)
            run_ops(block.ops, env, waiting)
            for target, sel, values in block.branch(env, waiting):
                if target not in pending:
                    pending[target] = (sel, values)
                    continue
                other, old = pending[target]
                for is_memref, v, o in zip(blocks[target].memref_args, values, old):
                    if is_memref and v is not o:
                        raise InterpreterError(
                            f"{run.where}: threads reach a block with different memrefs as its argument"
                        )
                merged = [choose(sel, v, o) for v, o in zip(values, old)]
                pending[target] = (None if sel is None or other is None else sel | other, merged)

    run.where = "a region of several blocks"
    return run


def _assert(cx, op, where):
    c = cx.use(op.operands[0])
    message = op.attributes["msg"].value

    def run(env, mask):
        ok = np.broadcast_to(env[c], (env[N],))
        bad = ~ok if mask is None else mask & ~ok
        if np.count_nonzero(bad):
            raise InterpreterError(f"{where}: {message!r} fails in {thread_name(env, int(np.argmax(bad)))}")

    return run


register({"cf.assert": _assert})
register_terminators("cf.br", "cf.cond_br", "cf.switch")
