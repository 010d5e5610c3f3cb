"""Pointers into shared memory: a block's own (``!llvm.ptr<3>``) and its cluster's
(``!llvm.ptr<7>``, distributed shared memory).

The ops: ``memref.extract_aligned_pointer_as_index`` of a workgroup memref (its address),
``llvm.inttoptr`` and ``llvm.ptrtoint`` (the same number), ``nvvm.mapa`` (a shared::cta
address to the same place in the block of another rank of the cluster) and ``llvm.load``
/ ``llvm.store`` through a pointer of address space 3 or 7.

**Addresses.** Every workgroup array of a block (a ``memref.global``, an attribution) has
an index in its cluster, the same in every block (``sync.ClusterSync.keys``), and its
shared::cta address is ``(index + 1) << 32`` plus the byte offset, the same number in
every block, as on the GPU. A shared::cluster address adds ``(rank + 1) << 48``: the
rank of the block whose memory it names. An access goes to that block's array, through
the same race check as any workgroup access (``sync``), with the accessing thread's
name. Each of these is an error that names the op and a thread: a pointer that names no
array or falls outside one, a type other than the array's, a rank outside the cluster,
a shared::cta pointer read as a shared::cluster one, and an access to a block that has
not started yet or has already exited (no cluster barrier kept it).
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import SYNC, N, Unsupported, register, thread_name
from .memref import WORKGROUP, read, write

_OFFSET_BITS = 32  # a byte offset inside one array
_RANK_SHIFT = 48  # a shared::cluster address: (rank + 1) << 48
_LOCAL = (1 << _RANK_SHIFT) - 1


def space_of(type_) -> int:
    """The address space of an ``!llvm.ptr<N>`` type (0 for ``!llvm.ptr``)."""
    text = str(type_)
    if not text.startswith("!llvm.ptr"):
        raise Unsupported(f"{text} is not an LLVM pointer")
    return int(text[len("!llvm.ptr<"):-1]) if "<" in text else 0


def _extract_pointer(cx, op, where):
    """The address of a workgroup memref's array (module docstring)."""
    source = op.operands[0]
    if str(ir.MemRefType(source.type).memory_space) != WORKGROUP:
        raise Unsupported("the address of a memref outside workgroup memory")
    m, r = cx.use(source), cx.define(op.result)

    def run(env, mask):
        sync = env[SYNC]
        key = sync.keys.get(id(env[m]))
        if key is None:  # a memref.view (dynamic_shared.py): its address is not modelled
            raise InterpreterError(f"{where}: the interpreter cannot take the address of a view of shared "
                                   "memory (memref.view); take the address of the memory it views")
        env[r] = np.int64((sync.cluster.keys[key] + 1) << _OFFSET_BITS)

    return run


def _same(cx, op, where):
    """``llvm.inttoptr`` and ``llvm.ptrtoint``: the same number."""
    cx.alias(op.result, cx.use(op.operands[0]))


def _mapa(cx, op, where):
    """``nvvm.mapa %p, %rank : !llvm.ptr<3> -> !llvm.ptr<7>``."""
    if space_of(op.operands[0].type) != 3 or space_of(op.result.type) != 7:
        raise Unsupported("only nvvm.mapa from !llvm.ptr<3> to !llvm.ptr<7>")
    p, rank = (cx.use(v) for v in op.operands)
    r = cx.define(op.result)

    def run(env, mask):
        n, ctas = env[N], env[SYNC].cluster.ctas
        address = np.broadcast_to(np.asarray(env[p], np.int64), (n,))
        target = np.broadcast_to(np.asarray(env[rank]).astype(np.int64), (n,))
        live = np.ones(n, bool) if mask is None else mask
        for bad, why in (((target < 0) | (target >= ctas), "a rank outside its cluster of {c} block(s)"),
                         ((address >> _RANK_SHIFT) != 0, "an address that is not a shared::cta one")):
            bad = bad & live
            if np.count_nonzero(bad):
                k = int(np.argmax(bad))
                raise InterpreterError(f"{where}: {thread_name(env, k)} maps {int(address[k]):#x} to rank "
                                       f"{int(target[k])}: " + why.format(c=ctas))
        out = address + ((target + 1) << _RANK_SHIFT)
        env[r] = out[0] if type(env[p]) is not np.ndarray and type(env[rank]) is not np.ndarray else out

    return run


def accesses(env, pointer, mask, space: int, elem, where, verb: str):
    """(threads, array, flat index) for each array the active threads' ``pointer``s name."""
    sync, n = env[SYNC], env[N]
    cluster = sync.cluster
    address = np.broadcast_to(np.asarray(pointer, np.int64), (n,))
    live = np.ones(n, bool) if mask is None else mask

    def fail(bad, what):
        k = int(np.argmax(bad))
        raise InterpreterError(f"{where}: {thread_name(env, k)} {verb} {int(address[k]):#x}, {what}")

    if space == 7:
        rank = (address >> _RANK_SHIFT) - 1
        if np.count_nonzero(live & (rank < 0)):
            fail(live & (rank < 0), "a shared::cta address used as a shared::cluster one (no nvvm.mapa)")
    else:
        rank = np.full(n, sync.rank)
    local = address & _LOCAL
    index, offset = (local >> _OFFSET_BITS) - 1, local & ((1 << _OFFSET_BITS) - 1)
    keys = {i: key for key, i in cluster.keys.items()}
    for r, i in sorted(set(zip(rank[live].tolist(), index[live].tolist()))):
        these = live & (rank == r) & (index == i)
        target = cluster.syncs[r] if 0 <= r < cluster.ctas else None
        run = cluster.run
        if run is not None and target is not None and not run.started[r]:
            fail(these, f"in the shared memory of rank {r} of the cluster, which has not started (a cluster "
                        "barrier must come first)")
        if run is not None and run.state[r] == "done":
            fail(these, f"in the shared memory of rank {r} of the cluster, which has exited (a cluster barrier "
                        "must keep it until every block is done with its memory)")
        array = target.arrays.get(keys.get(i)) if target is not None else None
        if array is None:
            fail(these, "which is no workgroup array")
        if array.dtype != elem.storage:
            fail(these, f"as {elem.name}, but the array there holds {array.dtype}")
        itemsize = array.dtype.itemsize
        outside = these & ((offset % itemsize != 0) | (offset // itemsize >= array.size))
        if np.count_nonzero(outside):
            fail(outside, f"outside the {array.size} element(s) of the array there, or between them")
        yield these, array, np.where(these, offset // itemsize, 0)


def _load(cx, op, where):
    """``llvm.load %p : !llvm.ptr<3 or 7> -> T``."""
    space = space_of(op.operands[0].type)
    if space not in (3, 7):
        raise Unsupported(f"a load through a pointer of address space {space}")
    elem = cx.elem(op.result.type)
    p, r = cx.use(op.operands[0]), cx.define(op.result)

    def run(env, mask):
        out = None
        for these, array, flat in accesses(env, env[p], mask, space, elem, where, "reads"):
            value = read(env, array, flat, elem.from_storage, these, where)
            out = value if out is None else np.where(these, value, out)
        env[r] = out if out is not None else np.zeros(env[N], elem.dtype)

    return run


def _store(cx, op, where):
    """``llvm.store %v, %p : T, !llvm.ptr<3 or 7>``."""
    space = space_of(op.operands[1].type)
    if space not in (3, 7):
        raise Unsupported(f"a store through a pointer of address space {space}")
    elem = cx.elem(op.operands[0].type)
    v, p = (cx.use(x) for x in op.operands)

    def run(env, mask):
        for these, array, flat in accesses(env, env[p], mask, space, elem, where, "writes"):
            value = np.broadcast_to(env[v], (env[N],))
            write(env, array, flat, value, these, elem.to_storage, where)

    return run


register(
    {
        "memref.extract_aligned_pointer_as_index": _extract_pointer,
        "llvm.inttoptr": _same,
        "llvm.ptrtoint": _same,
        "nvvm.mapa": _mapa,
        "llvm.load": _load,
        "llvm.store": _store,
    }
)
