"""mbarrier objects in shared memory: ``nvvm.mbarrier.init``, ``nvvm.mbarrier.arrive``,
``nvvm.mbarrier.try_wait`` (on a phase parity) and ``nvvm.fence.mbarrier.init``.

An mbarrier is an ``i64`` of a workgroup array, reached through a pointer
(``pointers.py``: ``!llvm.ptr<3>`` in the block's own shared memory; an arrive may also
go through an ``!llvm.ptr<7>`` to another block of the cluster, ``nvvm.mapa``). Its
state lives beside the array (``ClusterSync.mbarriers``), as PTX describes it: the
expected arrival count, the arrivals still pending in the current phase, and the number
of phases completed.

* **init** (one thread per mbarrier: two in one op race, as any two writes; with a
  predicate, the threads where it holds) sets the count and phase 0. It is a write of the ``i64``: an arrive or wait on it is a read,
  checked for races, so it must be ordered after the init. ``nvvm.fence.mbarrier.init``
  (PTX ``fence.mbarrier_init.release.cluster``) makes the warp's next cluster arrive,
  even ``nvvm.cluster.arrive.relaxed``, release what the warp did before: the
  interpreter is coarser here than PTX, which releases only the inits.
* **arrive**: each arriving thread takes ``count`` (default 1) off the pending arrivals;
  the last one completes the phase (more than the phase expects is an error). Unless
  ``relaxed``, an arrive releases what the thread's warp did before it, at its ``scope``
  (``cta`` by default, or ``cluster``).
* **try_wait** with a phase parity ``p`` is true once the phase of parity ``p`` has
  completed: the current phase has the other parity. The interpreter lets the other
  blocks of the cluster run until it is, so a try_wait returns true (a timeout is never
  modelled); a phase that no block can complete is an error naming the mbarrier and
  the arrivals it misses. Unless ``relaxed``, the wait acquires the releases of that
  phase's arrivals whose scopes reach each other: an arrive of the same block, or one at
  ``cluster`` scope when the wait's scope is ``cluster`` too. So a wait at ``cta`` scope
  does not order the stores of another block before the reads after it, as in PTX: the
  race check reports them.
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import N, SYNC, Unsupported, register
from .memref import read, write
from .pointers import accesses, space_of

_CTA, _CLUSTER = "cta", "cluster"


class MBarrier:
    """One mbarrier's state (module docstring)."""

    def __init__(self, count: int, text: str):
        self.count, self.pending, self.phase, self.text = count, count, 0, text
        self.releases: list = []  # this phase's: (rank, the warp's clock, scope)
        self.completed: dict[int, list] = {}  # the releases of the last two completed phases

    def arrive(self, count: int, release, where, who: str) -> bool:
        """One thread's arrive; True when it completes the phase."""
        if count > self.pending:
            raise InterpreterError(f"{where}: {who} arrives {count} time(s) at {self.text}, whose phase {self.phase} "
                                   f"expects only {self.pending} more arrival(s) of its {self.count}")
        self.pending -= count
        if release is not None:
            self.releases.append(release)
        if self.pending:
            return False
        self.completed[self.phase] = self.releases
        self.completed.pop(self.phase - 2, None)
        self.phase, self.pending, self.releases = self.phase + 1, self.count, []
        return True

    def done(self, parity: int) -> bool:
        return self.phase & 1 != parity

    def missing(self) -> str:
        return f"{self.pending} of its {self.count} arrival(s) of phase {self.phase} never come"


def _scope(op) -> str:
    if "scope" not in op.attributes:
        return _CTA
    text = str(op.attributes["scope"])  # "#nvvm.mem_scope<cluster>"
    return text[text.index("<") + 1 : -1]


def _relaxed(op) -> bool:
    return "relaxed" in op.attributes and ir.BoolAttr(op.attributes["relaxed"]).value


def _barriers(env, pointer, mask, space, elem, where, verb, *, write_it=False):
    """(threads, flat indices, the arrays' mbarrier keys) for each array the pointers
    name, each access checked for races (a write for ``write_it``, else a read)."""
    for these, array, flat in accesses(env, pointer, mask, space, elem, where, verb):
        if write_it:
            write(env, array, flat, np.zeros(env[N], np.int64), these, None, where)
        else:
            read(env, array, flat, None, these, where)
        yield these, array, flat


def _init(cx, op, where):
    elem = cx.elem(ir.IntegerType.get_signless(64, op.context))
    p, c = cx.use(op.operands[0]), cx.use(op.operands[1])
    pred = cx.use(op.operands[2]) if len(op.operands) > 2 else None

    def run(env, mask):
        states = env[SYNC].cluster.mbarriers
        count = np.broadcast_to(np.asarray(env[c], np.int64), (env[N],))
        if pred is not None:  # only the threads whose predicate holds
            on = np.broadcast_to(np.asarray(env[pred], bool), (env[N],))
            mask = on if mask is None else mask & on
            if not np.count_nonzero(mask):
                return
        for these, array, flat in _barriers(env, env[p], mask, 3, elem, where, "initializes", write_it=True):
            for k in np.flatnonzero(these):
                states[id(array), int(flat[k])] = MBarrier(int(count[k]), f"the mbarrier initialized by {where}")

    return run


def _fence_init(cx, op, where):
    def run(env, mask):
        sync = env[SYNC]
        t = np.flatnonzero(mask) if mask is not None else np.arange(env[N])
        sync.cluster.fenced.update((sync.base + np.unique(t // 32)).tolist())

    return run


def _arrive(cx, op, where):
    space = space_of(op.operands[0].type)
    if space not in (3, 7):
        raise Unsupported(f"nvvm.mbarrier.arrive through a pointer of address space {space}")
    elem = cx.elem(ir.IntegerType.get_signless(64, op.context))
    p = cx.use(op.operands[0])
    c = cx.use(op.operands[1]) if len(op.operands) > 1 else None
    scope, relaxed = _scope(op), _relaxed(op)
    r = cx.define(op.results[0]) if len(op.results) else None

    def run(env, mask):
        sync = env[SYNC]
        cluster, n = sync.cluster, env[N]
        count = np.broadcast_to(np.asarray(env[c] if c is not None else 1, np.int64), (n,))
        tokens = np.zeros(n, np.int64)
        completed = False
        for these, array, flat in _barriers(env, env[p], mask, space, elem, where, "arrives at"):
            for k in np.flatnonzero(these):
                bar = _state(cluster, array, flat[k], where, env, k)
                warp = sync.base + k // 32
                release = None if relaxed else (sync.rank, cluster.clock[warp].copy(), scope)
                tokens[k] = bar.phase
                completed |= bar.arrive(int(count[k]), release, where, cluster.thread_name(warp * 32 + k % 32))
        t = np.flatnonzero(mask) if mask is not None else np.arange(n)
        warps = sync.base + np.unique(t // 32)
        cluster.clock[warps, warps] += 1  # what they do next is not ordered by this arrive
        if completed and cluster.run is not None:
            cluster.run.wake_all()
        if r is not None:
            env[r] = tokens

    return run


def _try_wait(cx, op, where):
    if space_of(op.operands[0].type) != 3:
        raise Unsupported("nvvm.mbarrier.try_wait on an mbarrier outside the block's own shared memory")
    if ir.IntegerType(op.operands[1].type).width != 32:
        raise Unsupported("nvvm.mbarrier.try_wait on a state token (only a phase parity, i32)")
    elem = cx.elem(ir.IntegerType.get_signless(64, op.context))
    p, q = cx.use(op.operands[0]), cx.use(op.operands[1])
    scope, relaxed = _scope(op), _relaxed(op)
    r = cx.define(op.result)

    def run(env, mask):
        sync = env[SYNC]
        cluster, n = sync.cluster, env[N]
        parity = np.broadcast_to(np.asarray(env[q], np.int64), (n,))
        for these, array, flat in _barriers(env, env[p], mask, 3, elem, where, "waits on"):
            for key in sorted(set(flat[these].tolist())):
                waiting = these & (flat == key)
                k = int(np.argmax(waiting))
                bar = _state(cluster, array, key, where, env, k)
                for bit in sorted(set(parity[waiting].tolist())):
                    threads = waiting & (parity == bit)
                    _block_until_done(env, bar, bit & 1, where)
                    if not relaxed:
                        _acquire(sync, bar, bit & 1, scope, np.flatnonzero(threads))
        env[r] = np.ones(n, bool)

    return run


def _block_until_done(env, bar: MBarrier, parity: int, where) -> None:
    if bar.done(parity):
        return
    run = env[SYNC].cluster.run
    never = f"{where}: {bar.text} can never complete the phase a thread waits for: {bar.missing()}"
    if run is None:  # a block alone: nobody else can arrive
        raise InterpreterError(never)
    run.block_until(env, lambda: bar.done(parity), where, never=never)


def _acquire(sync, bar: MBarrier, parity: int, scope: str, threads) -> None:
    """The waiting warps synchronize with the releases of the completed phase of
    ``parity`` that reach them (module docstring)."""
    phase = bar.phase - 1 if (bar.phase - 1) & 1 == parity else bar.phase - 2
    warps = sync.base + np.unique(threads // 32)
    clock = sync.cluster.clock
    for rank, row, released in bar.completed.get(phase, ()):
        if rank == sync.rank or (released == _CLUSTER and scope == _CLUSTER):
            clock[warps] = np.maximum(clock[warps], row)
    clock[warps, warps] += 1


def _state(cluster, array, flat, where, env, k) -> MBarrier:
    bar = cluster.mbarriers.get((id(array), int(flat)))
    if bar is None:
        raise InterpreterError(f"{where}: {cluster.thread_name(env[SYNC].base * 32 + int(k))} uses an mbarrier that "
                               "no nvvm.mbarrier.init has initialized")
    return bar


register({"nvvm.mbarrier.init": _init, "nvvm.fence.mbarrier.init": _fence_init, "nvvm.mbarrier.arrive": _arrive,
          "nvvm.mbarrier.try_wait": _try_wait})
