"""The ``nvvm`` dialect: ``nvvm.redux.sync`` and the special registers (``tid``, ``ntid``,
``ctaid``, ``nctaid``, ``laneid``, ``warpsize``).

``nvvm.redux.sync`` (i32, the full member mask only) reduces over the 32 lanes of each
warp and gives every lane the result: ``add`` wraps, ``min``/``max`` are signed,
``umin``/``umax`` unsigned.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..vocab import WARP_SIZE
from .core import BDIM, BID, GDIM, LANE, TID, N, Unsupported, register
from .gpu import check_converged

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
        **{
            f"nvvm.read.ptx.sreg.{name}.{d}": _special_register(slots[k])
            for name, slots in _SPECIAL_REGISTERS.items()
            for k, d in enumerate("xyz")
        },
        "nvvm.read.ptx.sreg.laneid": _special_register(LANE),
        "nvvm.read.ptx.sreg.warpsize": _warp_size,
    }
)
