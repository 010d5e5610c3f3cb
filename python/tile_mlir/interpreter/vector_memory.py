"""The ``vector`` dialect's memory ops: load/store, masked load/store, transfers.

All of them are one access pattern (``_Access``): a base index per memref dim, and for
each element of the vector the memref dims it moves along. ``vector.load``/``store``
move along the trailing dims; ``transfer_read``/``transfer_write`` along the dims of
their permutation map (a dim mapped to the constant 0 broadcasts). An element past the
end of a dim is

* padding (``transfer_read``) or not written (``transfer_write``) when the transfer
  says that dim may be out of bounds (``in_bounds = false``);
* not accessed when the element's mask bit is off (masked loads take the pass-through
  value, transfers the padding);
* otherwise an error that names the element, the index and the thread.

An ``alignment`` attribute (bytes, on loads and stores, masked or not) is a promise: a
thread whose access is not that aligned (its first element's offset from the memref's
base, which counts as aligned) is an error, as a misaligned vector access is on the GPU.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import N, Unsupported, Where, register, thread_name
from .memref import memref_of, read, write
from .vector import ints, vector_shape


class _Access:
    """Where each element of a vector goes in a memref.

    ``moves[j]``: the memref dim vector dim ``j`` moves along, or None (broadcast).
    ``may_overrun[j]``: vector dim ``j`` may run past its memref dim (padding).
    """

    def __init__(self, cx, memref, index_values, vector_type, moves, may_overrun, where: Where, alignment=None):
        self.mr = memref_of(cx, memref)
        self.alignment = alignment  # bytes, or None
        self.m = cx.use(memref)
        self.slots = [cx.use(v) for v in index_values]
        self.shape = vector_shape(vector_type)
        self.where = where
        rank = len(self.mr.shape)
        # per element: the offset it adds to each memref dim
        self.offsets = []
        for i in itertools.product(*map(range, self.shape)):
            offset = [0] * rank
            for j, d in enumerate(moves):
                if d is not None:
                    offset[d] += i[j]
            self.offsets.append(offset)
        soft = {d for d, ok in zip(moves, may_overrun) if d is not None and ok}
        self.soft = [d in soft for d in range(rank)]  # overrunning this dim is padding

    def places(self, env, mask, enabled):
        """Per element: (flat index, valid) for the active threads; ``valid`` is None when
        every thread's element is in bounds, else a bool per thread (or a bool)."""
        base = [env[s] for s in self.slots]
        shape, strides = self.mr.shape, self.mr.strides
        out = []
        for k, offset in enumerate(self.offsets):
            flat, valid = 0, None
            for d, (b, o) in enumerate(zip(base, offset)):
                i = b + o
                inside = (i >= 0) & (i < shape[d])
                if not np.all(inside):
                    if self.soft[d]:
                        valid = inside if valid is None else valid & inside
                    else:
                        self._check(env, mask, enabled[k], inside, base, offset, k)
                        valid = inside if valid is None else valid & inside
                flat = flat + i * strides[d]
            if valid is not None:
                flat = np.where(valid, flat, 0)
            out.append((flat, valid))
        return out

    def _check(self, env, mask, enabled, inside, base, offset, k):
        """An element out of bounds on an active thread with its mask bit on: an error."""
        bad = ~np.broadcast_to(inside, (env[N],))
        if mask is not None:
            bad = bad & mask
        if enabled is not None:
            bad = bad & np.broadcast_to(enabled, bad.shape)
        if np.count_nonzero(bad):
            t = int(np.argmax(bad))
            at = [int(np.broadcast_to(b, bad.shape)[t]) + o for b, o in zip(base, offset)]
            raise InterpreterError(
                f"{self.where}: the vector overruns {self.mr.text}: its element {k} is at index {at} "
                f"in {thread_name(env, t)}"
            )

    def aligned(self, env, mask, enabled) -> None:
        """Raise if an active thread that accesses any element is not ``alignment``-aligned."""
        base = [env[s] for s in self.slots]
        flat = sum(b * stride for b, stride in zip(base, self.mr.strides))
        bad = (flat * self.mr.elem.storage.itemsize) % self.alignment != 0
        if not np.any(bad):
            return
        bad = np.broadcast_to(bad, (env[N],))
        if mask is not None:
            bad = bad & mask
        if enabled[0] is not None:
            bad = bad & np.logical_or.reduce([np.broadcast_to(e, (env[N],)) for e in enabled])
        if np.count_nonzero(bad):
            t = int(np.argmax(bad))
            at = [int(np.broadcast_to(b, bad.shape)[t]) for b in base]
            raise InterpreterError(
                f"{self.where}: the access at index {at} of {self.mr.text} is not aligned to "
                f"{self.alignment} bytes in {thread_name(env, t)}"
            )

    def load(self, env, mask, enabled, fill):
        """The elements (``fill[k]`` where not valid or not enabled).

        ``fill[k]`` None: the op has no fill (``vector.load``), so an element is only
        invalid on the threads that do not run it (an active one raised in ``places``);
        what they hold is never seen, and they keep what ``read`` gave them."""
        if self.alignment:
            self.aligned(env, mask, enabled)
        mem, from_storage = env[self.m], self.mr.elem.from_storage
        values = []
        for k, (flat, valid) in enumerate(self.places(env, mask, enabled)):
            keep = valid if enabled[k] is None else (enabled[k] if valid is None else valid & enabled[k])
            value = read(env, mem, flat, from_storage, self._on(env, mask, keep), self.where)
            values.append(value if keep is None or fill[k] is None else np.where(keep, value, fill[k])[()])
        return tuple(values)

    @staticmethod
    def _on(env, mask, keep):
        """The threads that access an element: active, and ``keep`` (None: all)."""
        if keep is None:
            return mask
        keep = np.broadcast_to(keep, (env[N],))
        return keep if mask is None else mask & keep

    def store(self, env, mask, enabled, elements):
        if self.alignment:
            self.aligned(env, mask, enabled)
        mem, to_storage = env[self.m], self.mr.elem.to_storage
        for k, (flat, valid) in enumerate(self.places(env, mask, enabled)):
            on = self._on(env, self._on(env, mask, valid), enabled[k])
            if on is None or np.count_nonzero(on):
                write(env, mem, flat, elements[k], on, to_storage, self.where)


def _alignment(op) -> int | None:
    """The ``alignment`` attribute of a load or store, in bytes, or None."""
    if "alignment" not in op.attributes:
        return None
    return ir.IntegerAttr(op.attributes["alignment"]).value


def _trailing(memref_type_, vector_type):
    rank, vrank = memref_type_.rank, len(vector_shape(vector_type))
    return [rank - vrank + j for j in range(vrank)]


def _load(cx, op, where):
    memref, *indices = op.operands
    access = _Access(cx, memref, indices, op.result.type, _trailing(memref.type, op.result.type), [], where,
                     _alignment(op))
    r = cx.define(op.result)
    none = [None] * len(access.offsets)

    def run(env, mask):
        env[r] = access.load(env, mask, none, none)

    return run


def _store(cx, op, where):
    value, memref, *indices = op.operands
    access = _Access(cx, memref, indices, value.type, _trailing(memref.type, value.type), [], where,
                     _alignment(op))
    v = cx.use(value)
    none = [None] * len(access.offsets)

    def run(env, mask):
        access.store(env, mask, none, env[v])

    return run


def _masked_load(cx, op, where):
    memref, *indices, mask_value, passthru = op.operands
    access = _Access(cx, memref, indices, op.result.type, _trailing(memref.type, op.result.type), [], where,
                     _alignment(op))
    m, p, r = cx.use(mask_value), cx.use(passthru), cx.define(op.result)

    def run(env, mask):
        env[r] = access.load(env, mask, env[m], env[p])

    return run


def _masked_store(cx, op, where):
    memref, *indices, mask_value, value = op.operands
    access = _Access(cx, memref, indices, value.type, _trailing(memref.type, value.type), [], where,
                     _alignment(op))
    m, v = cx.use(mask_value), cx.use(value)

    def run(env, mask):
        access.store(env, mask, env[m], env[v])

    return run


def _transfer(op, vector_type, memref):
    """(dims each vector dim moves along, may it overrun) from the permutation map."""
    rank = len(vector_shape(vector_type))
    perm = op.attributes["permutation_map"].value
    moves = []
    for e in perm.results:
        if isinstance(e, ir.AffineDimExpr):
            moves.append(e.position)
        elif isinstance(e, ir.AffineConstantExpr) and e.value == 0:
            moves.append(None)
        else:
            raise Unsupported(f"permutation map {perm}")
    bounds = op.attributes["in_bounds"]
    may_overrun = [not ir.BoolAttr(b).value for b in bounds] if len(bounds) else [True] * rank
    if len(moves) != rank:
        raise Unsupported(f"permutation map {perm} for a vector of rank {rank}")
    if not isinstance(memref.type, ir.MemRefType):
        raise Unsupported(f"a transfer on {memref.type}")
    return moves, may_overrun


def _segments(op):
    return ints(op.attributes["operandSegmentSizes"])


def _transfer_read(cx, op, where):
    operands = list(op.operands)
    _, n_indices, _, n_mask = _segments(op)
    memref, indices = operands[0], operands[1 : 1 + n_indices]
    padding = operands[1 + n_indices]
    moves, may_overrun = _transfer(op, op.result.type, memref)
    if n_mask and None in moves:
        raise Unsupported("a mask with a broadcast permutation map")
    access = _Access(cx, memref, indices, op.result.type, moves, may_overrun, where)
    pad = cx.use(padding)
    m = cx.use(operands[-1]) if n_mask else None
    r = cx.define(op.result)
    n = len(access.offsets)

    def run(env, mask):
        enabled = env[m] if m is not None else [None] * n
        env[r] = access.load(env, mask, enabled, [env[pad]] * n)

    return run


def _transfer_write(cx, op, where):
    operands = list(op.operands)
    _, _, n_indices, n_mask = _segments(op)
    value, memref, indices = operands[0], operands[1], operands[2 : 2 + n_indices]
    moves, may_overrun = _transfer(op, value.type, memref)
    if None in moves:
        raise Unsupported("a broadcast permutation map in a write")
    access = _Access(cx, memref, indices, value.type, moves, may_overrun, where)
    v = cx.use(value)
    m = cx.use(operands[-1]) if n_mask else None
    n = len(access.offsets)

    def run(env, mask):
        enabled = env[m] if m is not None else [None] * n
        access.store(env, mask, enabled, env[v])

    return run


register(
    {
        "vector.load": _load,
        "vector.store": _store,
        "vector.maskedload": _masked_load,
        "vector.maskedstore": _masked_store,
        "vector.transfer_read": _transfer_read,
        "vector.transfer_write": _transfer_write,
    }
)
