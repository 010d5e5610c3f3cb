"""The ``gpu`` dialect: thread and block ids, barriers, and ``gpu.shuffle``.

Threads: linear id = x + y*bx + z*bx*by; lane = linear % 32; warp (subgroup) =
linear // 32. The id ops are preset slots of the environment (no work at run time).
``gpu.shuffle`` follows PTX ``shfl.sync`` as MLIR lowers it (member mask
``0xffffffff >> (32 - width)``; clamp ``width - 1``, or ``32 - width`` for ``up``): a lane
whose source is out of range gets its own value and ``valid = false``. All lanes of a
warp must execute it together; ``gpu.barrier`` must be reached by all threads of the
block (``sync.py`` keeps the order it makes, for the workgroup race check).
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
    ROWS,
    SYNC,
    TID,
    WARP,
    WARPS,
    N,
    Where,
    register,
    register_terminators,
    thread_name,
)
from .sync import warp_lanes


def _gpu_id(reserved: tuple[int, int, int]):
    def handler(cx, op, where):
        dim = str(op.attributes["dimension"])  # "#gpu<dim x>"
        cx.alias(op.result, reserved["xyz".index(dim[-2])])

    return handler


def _alias(slot: int):
    def handler(cx, op, where):
        cx.alias(op.result, slot)

    return handler


def _subgroup_size(cx, op, where):
    cx.preset(op.result, np.int64(WARP_SIZE))


def _global_id(cx, op, where):
    k = "xyz".index(str(op.attributes["dimension"])[-2])
    r = cx.define(op.result)

    def run(env, mask):
        env[r] = env[BID[k]] * env[BDIM[k]] + env[TID[k]]

    return run


def block_barrier(cx, op, where):
    """``gpu.barrier`` (and ``nvvm.barrier0``): every thread of the block must reach it;
    it orders every access to workgroup memory before it before every one after it."""

    def run(env, mask):
        if mask is not None:
            missing = int(np.argmin(mask))
            raise InterpreterError(
                f"{where}: reached by {np.count_nonzero(mask)} of {env[N]} threads of block "
                f"{tuple(int(env[s]) for s in BID)}: {thread_name(env, missing)} does not reach it, and "
                "all threads of a block must"
            )
        env[SYNC].barrier()

    return run


def _shuffle_sources(mode: str, offset, width, env: list, where: Where):
    """Per thread: the thread it reads, ``valid``, and the threads reading past the block."""
    if np.count_nonzero((width < 1) | (width > WARP_SIZE)):
        raise InterpreterError(f"{where}: width {width} is outside 1..{WARP_SIZE}")
    lane, rows, n = env[LANE], env[ROWS], env[N]
    offset = offset & (WARP_SIZE - 1)
    if mode == "xor":
        j, valid = lane ^ offset, (lane ^ offset) <= width - 1
    elif mode == "down":
        j, valid = lane + offset, lane + offset <= width - 1
    elif mode == "up":
        j, valid = lane - offset, lane - offset >= WARP_SIZE - width
    else:  # idx
        j, valid = offset, offset <= width - 1
    source = rows - lane + np.where(valid, j, lane)
    valid = np.broadcast_to(valid, (n,))
    missing = source >= n
    return source, valid, (missing if np.count_nonzero(missing) else None)


def check_converged(mask, env: list, where: Where) -> None:
    """All lanes of a warp, or none, must execute a warp op."""
    active, present, partial = warp_lanes(env, mask)
    if partial.size:
        w = int(partial[0])
        raise InterpreterError(
            f"{where}: warp {w} of block {tuple(int(env[s]) for s in BID)} executes it with "
            f"{active[w]} of {present[w]} lanes active; warp ops need the whole warp"
        )


def _shuffle(cx, op, where):
    mode_attr = str(op.attributes["mode"])  # "#gpu<shuffle_mode xor>"
    mode = mode_attr[mode_attr.rindex(" ") + 1 : -1]
    v, o, w = (cx.use(x) for x in op.operands)
    r, ok = (cx.define(x) for x in op.results)
    cache: dict = {}  # (offset, width, nthreads) -> sources, for uniform offset and width

    def run(env, mask):
        offset, width = env[o], env[w]
        if type(offset) is np.ndarray or type(width) is np.ndarray:
            source, valid, missing = _shuffle_sources(mode, offset, width, env, where)
        else:
            key = (int(offset), int(width), env[N])
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = _shuffle_sources(mode, offset, width, env, where)
            source, valid, missing = hit
        if mask is not None:
            check_converged(mask, env, where)
        if missing is not None:
            live = missing if mask is None else missing & mask
            if np.count_nonzero(live):
                k = int(np.argmax(live))
                raise InterpreterError(
                    f"{where}: {thread_name(env, k)} reads lane {int(source[k]) % WARP_SIZE}, "
                    f"which the block of {env[N]} threads does not have"
                )
        value = env[v]
        env[r] = value[source] if type(value) is np.ndarray else value
        env[ok] = valid

    return run


register(
    {
        "gpu.thread_id": _gpu_id(TID),
        "gpu.block_id": _gpu_id(BID),
        "gpu.block_dim": _gpu_id(BDIM),
        "gpu.grid_dim": _gpu_id(GDIM),
        "gpu.global_id": _global_id,
        "gpu.lane_id": _alias(LANE),
        "gpu.subgroup_id": _alias(WARP),
        "gpu.num_subgroups": _alias(WARPS),
        "gpu.subgroup_size": _subgroup_size,
        "gpu.barrier": block_barrier,
        "gpu.shuffle": _shuffle,
    }
)
register_terminators("gpu.return")
