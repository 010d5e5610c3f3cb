"""The ``nvvm`` dialect: ``nvvm.redux.sync``, ``nvvm.shfl.sync``, the barriers
(``nvvm.barrier`` with an id and a thread count, ``nvvm.barrier0``,
``nvvm.bar.warp.sync``) and the special registers (``tid``, ``ntid``, ``ctaid``,
``nctaid``, ``laneid``, ``warpsize``).

``nvvm.redux.sync`` (i32, the full member mask only) reduces over the 32 lanes of each
warp and gives every lane the result: ``add`` wraps, ``min``/``max`` are signed,
``umin``/``umax`` unsigned.

``nvvm.shfl.sync`` (PTX ``shfl.sync.{up,down,bfly,idx}.b32``) runs over the lanes its
member mask names, which may be part of a warp: a lane that executes it must be in its
own mask, and every lane the mask names (that the block has) must execute it at the
same op with the same mask, as PTX asks; other lanes of the warp may be elsewhere. The
source lane follows PTX's rule (clamp in bits 0-4 of c, segment mask in bits 8-12; a
source out of range gives the lane its own value), and must be in the mask: PTX leaves
a value read from any other lane undefined. Each of these is an error naming a thread.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..vocab import WARP_SIZE
from .core import (
    BDIM,
    BID,
    GDIM,
    LANE,
    SYNC,
    TID,
    WARP,
    N,
    Unsupported,
    register,
    thread_name,
    uniform,
)
from .gpu import block_barrier, check_converged
from .sync import arriving_warps
from .vector import ints

# redux.sync kind -> (reduction over the 32 lanes of a warp, reads its operand as unsigned)
_REDUX = {
    "add": (np.add.reduce, False),  # wraps
    "max": (np.maximum.reduce, False),
    "min": (np.minimum.reduce, False),
    "umax": (np.maximum.reduce, True),
    "umin": (np.minimum.reduce, True),
    "and": (np.bitwise_and.reduce, False),
    "or": (np.bitwise_or.reduce, False),
    "xor": (np.bitwise_xor.reduce, False),
}


def _redux_sync(cx, op, where):
    """``nvvm.redux.sync``: a 32-bit integer reduction over the warp, its result in every lane."""
    kind_attr = str(op.attributes["kind"])  # "#nvvm<redux_kind add>"
    kind = kind_attr[kind_attr.rindex(" ") + 1 : -1]
    if kind not in _REDUX:
        raise Unsupported(f"kind {kind}")
    for flag in ("abs", "nan"):
        if flag in op.attributes and str(op.attributes[flag]) != "false":
            raise Unsupported(f"{flag} = {op.attributes[flag]}")
    elem = cx.elem(op.operands[0].type)
    if elem.name != "i32":
        raise Unsupported(f"operand of type {elem.name}")
    reduce, unsigned = _REDUX[kind]
    reading = elem.udtype if unsigned else elem.dtype
    v, m = (cx.use(x) for x in op.operands)
    r = cx.define(op.result)

    def run(env, mask):
        member, n = env[m], env[N]
        if type(member) is np.ndarray or int(member) != -1:
            raise InterpreterError(f"{where}: member mask {member}: only the full mask (-1) is supported")
        if n % WARP_SIZE:
            raise InterpreterError(
                f"{where}: the block of {n} threads ends in a partial warp; "
                f"redux.sync with the full mask needs all {WARP_SIZE} lanes"
            )
        if mask is not None:
            check_converged(mask, env, where)
        lanes = np.broadcast_to(env[v], (n,)).view(reading).reshape(-1, WARP_SIZE)
        per_warp = reduce(lanes, axis=1).astype(reading).view(elem.dtype)
        env[r] = np.repeat(per_warp, WARP_SIZE)

    return run


def _shfl_sync(cx, op, where):
    """``nvvm.shfl.sync kind %mask, %value, %b, %c`` (module docstring)."""
    kind_attr = str(op.attributes["kind"])  # "#nvvm<shfl_kind bfly>"
    kind = kind_attr[kind_attr.rindex(" ") + 1 : -1]
    if "return_value_and_is_valid" in op.attributes:
        raise Unsupported("return_value_and_is_valid (a {value, valid} result)")
    m, v, b, c = (cx.use(x) for x in op.operands)
    r = cx.define(op.result)

    def run(env, mask):
        n, lane = env[N], env[LANE]
        member = np.broadcast_to(np.asarray(env[m]).astype(np.int64) & 0xFFFFFFFF, (n,))
        check_members(env, member, mask, where)
        bval = np.asarray(env[b]).astype(np.int64) & 31
        cval = np.asarray(env[c]).astype(np.int64)
        segment, clamp = (cval >> 8) & 31, cval & 31
        top = (lane & segment) | (clamp & ~segment)
        if kind == "up":
            j, ok = lane - bval, lane - bval >= top
        elif kind == "down":
            j, ok = lane + bval, lane + bval <= top
        elif kind == "bfly":
            j, ok = lane ^ bval, (lane ^ bval) <= top
        else:  # idx
            j = (lane & segment) | (bval & ~segment)
            ok = j <= top
        j = np.where(ok, j, lane)
        source = env[WARP] * WARP_SIZE + j
        bad = (((member >> j) & 1) == 0) | (source >= n)
        if mask is not None:
            bad = bad & mask
        if np.count_nonzero(bad):
            k = int(np.argmax(bad))
            why = "the block does not have" if source[k] >= n else f"its member mask 0x{int(member[k]):08x} does not name"
            raise InterpreterError(f"{where}: {thread_name(env, k)} reads lane {int(j[k])}, which {why}")
        value = env[v]
        if type(value) is np.ndarray:
            value = value[source if mask is None else np.where(mask, source, 0)]  # inactive: any
        env[r] = value

    return run


def check_members(env, member, mask, where) -> None:
    """The lanes that execute a ``shfl.sync`` (``mask``) agree with their member masks
    (``member``, per thread): each names itself, and each lane it names that the block
    has executes it too, with the same mask."""
    n = env[N]
    warps = -(-n // WARP_SIZE)
    size = warps * WARP_SIZE
    masks, active, exists = np.zeros(size, np.int64), np.zeros(size, bool), np.zeros(size, bool)
    masks[:n], exists[:n] = member, True
    active[:n] = True if mask is None else mask
    masks, active, exists = (a.reshape(warps, WARP_SIZE) for a in (masks, active, exists))
    lanes = np.arange(WARP_SIZE)
    names = ((masks[:, :, None] >> lanes) & 1).astype(bool)  # [warp, lane, named lane]
    outside = active & ~names[:, lanes, lanes]
    if np.count_nonzero(outside):
        w, lane = (int(x[0]) for x in np.nonzero(outside))
        raise InterpreterError(
            f"{where}: {thread_name(env, w * WARP_SIZE + lane)} executes it, but its member mask "
            f"0x{int(masks[w, lane]):08x} does not name its lane {lane}"
        )
    needed = active[:, :, None] & names & exists[:, None, :]
    absent = needed & ~active[:, None, :]
    differs = needed & active[:, None, :] & (masks[:, :, None] != masks[:, None, :])
    for problem, what in ((absent, "does not execute it with it"), (differs, "executes it with mask 0x{:08x}")):
        if np.count_nonzero(problem):
            w, lane, other = (int(x[0]) for x in np.nonzero(problem))
            raise InterpreterError(
                f"{where}: the member mask 0x{int(masks[w, lane]):08x} of "
                f"{thread_name(env, w * WARP_SIZE + lane)} names lane {other}, and "
                f"{thread_name(env, w * WARP_SIZE + other)} " + what.format(int(masks[w, other]))
            )


def _named_barrier(cx, op, where):
    """``nvvm.barrier id = %i number_of_threads = %n`` (PTX ``bar.sync id, n``): the warps
    that reach it (whole warps) with id i must be n threads; without a count, the whole
    block. It orders the workgroup accesses of those warps only. Warps that reach the op
    together with different ids (each warpgroup on its own barrier) are separate
    barriers; the id and the count must be the same on all lanes of a warp."""
    has_id, has_count, has_predicate = ints(op.attributes["operandSegmentSizes"])
    if has_predicate or len(op.results):
        raise Unsupported("a barrier with a reduction")
    operands = [cx.use(v) for v in op.operands]
    barrier = operands[0] if has_id else None
    count = operands[has_id] if has_count else None
    whole_block = block_barrier(cx, op, where)

    def per_warp(env, slot, warps, what):
        """The value of ``slot`` on each warp of ``warps`` (one value per warp)."""
        x = env[slot]
        if type(x) is not np.ndarray or x.ndim == 0:
            return np.full(len(warps), int(x))
        lanes = x[: len(x) // WARP_SIZE * WARP_SIZE].reshape(-1, WARP_SIZE)[warps]
        if np.count_nonzero(lanes != lanes[:, :1]):
            w = int(warps[np.flatnonzero((lanes != lanes[:, :1]).any(axis=1))[0]])
            raise InterpreterError(f"{where}: the {what} differs across the lanes of warp {w}")
        return lanes[:, 0].astype(np.int64)

    def run(env, mask):
        if count is None:
            if barrier is not None:
                number = uniform(env[barrier], mask, where, "barrier id")
                if not 0 <= number < 16:
                    raise InterpreterError(f"{where}: barrier {number} is outside 0..15")
            whole_block(env, mask)
            return
        warps = arriving_warps(env, mask, where)
        ids = per_warp(env, barrier, warps, "barrier id") if barrier is not None else np.zeros(len(warps), np.int64)
        counts = per_warp(env, count, warps, "thread count")
        for number in np.unique(ids):
            group = warps[ids == number]
            threads = set(counts[ids == number].tolist())
            if len(threads) > 1:
                raise InterpreterError(f"{where}: barrier {number} is reached with thread counts {sorted(threads)}")
            (threads,) = threads
            if not 0 <= number < 16:
                raise InterpreterError(f"{where}: barrier {number} is outside 0..15")
            if threads <= 0 or threads % WARP_SIZE:
                raise InterpreterError(f"{where}: a thread count of {threads} is not a positive multiple of {WARP_SIZE}")
            if len(group) * WARP_SIZE != threads:
                first = int(group[0]) * WARP_SIZE
                raise InterpreterError(
                    f"{where}: barrier {number} waits for {threads} threads, and {len(group) * WARP_SIZE} arrive "
                    f"(warps {', '.join(map(str, group.tolist()))} of block {tuple(int(env[s]) for s in BID)}): "
                    f"{thread_name(env, first)} would "
                    + ("wait forever" if len(group) * WARP_SIZE < threads else "pass a barrier meant for fewer threads")
                )
            env[SYNC].barrier(group)

    return run


def _warp_sync(cx, op, where):
    """``nvvm.bar.warp.sync`` (full mask only): orders the workgroup accesses of a
    warp's lanes."""
    m = cx.use(op.operands[0])

    def run(env, mask):
        if type(env[m]) is np.ndarray or int(env[m]) != -1:
            raise InterpreterError(f"{where}: member mask {env[m]}: only the full mask (-1) is supported")
        env[SYNC].warp_sync(arriving_warps(env, mask, where))

    return run


def _special_register(slot: int):
    """``nvvm.read.ptx.sreg.*``: a launch-geometry value as i32."""

    def handler(cx, op, where):
        r = cx.define(op.result)

        def run(env, mask):
            env[r] = np.asarray(env[slot]).astype(np.int32)[()]

        return run

    return handler


def _warp_size(cx, op, where):
    cx.preset(op.result, np.int32(WARP_SIZE))


_SPECIAL_REGISTERS = {"tid": TID, "ntid": BDIM, "ctaid": BID, "nctaid": GDIM}

register(
    {
        "nvvm.redux.sync": _redux_sync,
        "nvvm.shfl.sync": _shfl_sync,
        "nvvm.barrier": _named_barrier,
        "nvvm.barrier0": block_barrier,
        "nvvm.bar.warp.sync": _warp_sync,
        **{
            f"nvvm.read.ptx.sreg.{name}.{d}": _special_register(slots[k])
            for name, slots in _SPECIAL_REGISTERS.items()
            for k, d in enumerate("xyz")
        },
        "nvvm.read.ptx.sreg.laneid": _special_register(LANE),
        "nvvm.read.ptx.sreg.warpsize": _warp_size,
    }
)
