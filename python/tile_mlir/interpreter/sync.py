"""Barriers, and races on workgroup memory (and, asked for, global memory): each
block's synchronization state.

Every block of a launch has a ``BlockSync`` (the environment's ``SYNC`` slot), and the
blocks of one thread-block cluster share a ``ClusterSync`` (a block outside a cluster is
a cluster of one): its clocks, over every warp of the cluster, and the shadows of every
workgroup array of its blocks, so that the race check also covers one block's accesses
to another's shared memory (``cluster.py``: ``nvvm.mapa``). A warp of a cluster is
named by ``rank * warps + w`` (warp w of the block of rank ``rank``), a thread by
``32 * that + lane``. The cluster keeps a vector clock per warp, the happens-before
order that barriers make:
``clock[b, a]`` is the latest clock of warp a that warp b has synchronized with, and
``clock[a, a]`` warp a's own clock, which starts at 1. A barrier over a set of warps
(``gpu.barrier``: all of them; ``nvvm.barrier`` with a thread count: the warps that
arrive) merges their clocks and then advances each one's own; ``nvvm.bar.warp.sync``
advances one warp's own clock, which orders its lanes. The cluster barrier
(``cluster.py``) orders the warps of every block of the cluster alike.

Each workgroup array has a shadow: per element, its last writer (thread, the writer's
warp clock, op), and per warp the clock of its latest reads of the element and which
lanes read it then. An access by thread t (warp b) races with an earlier access by
another thread u (warp a) when at least one writes and the earlier one is not ordered
before it: a different warp's access is ordered when its clock is at most
``clock[b, a]``, the same warp's when its warp has synchronized since. Two threads
writing one element in the same op race too. A read is checked against the last write,
a write against the last write and the reads since; so each access costs O(warps),
each barrier O(warps²), whatever the memory's size. Accesses by one thread never race
with each other, and ``gpu.shuffle`` moves registers, not memory: it orders nothing.

Within ``global_races()``, a launch also checks its writeable array arguments (global
memory) the same way, between the threads of one cluster (a block alone is a cluster of
one): each cluster gets fresh shadows of them (O(elements · warps) memory per array),
and arguments that are the same memory (same address, size and dtype: an output written
over an input) share one shadow. Accesses of two different clusters are not compared.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from ..errors import InterpreterError
from ..vocab import WARP_SIZE
from .core import ROWS, SYNC, Where, thread_name


class ClusterSync:
    """What the blocks of one cluster share: the clocks of all their warps, the shadows
    of all their workgroup arrays, and the blocks (``syncs``, by rank)."""

    def __init__(self, ctas: int, warps: int):
        self.ctas, self.warps = ctas, warps  # warps: per block
        self.clock = np.eye(ctas * warps, dtype=np.int64)
        self.shadows: dict[int, _Shadow] = {}
        self.ops: list[Where] = []
        self._op_ids: dict[int, int] = {}
        self.syncs: list[BlockSync | None] = [None] * ctas
        self.barrier = None  # cluster.ClusterBarrier, set when the cluster starts
        self.run = None  # cluster.ClusterRun, for a cluster of several blocks
        self.keys: dict = {}  # allocation key -> its index in every block's shared memory (pointers.py)
        self.mbarriers: dict = {}  # (id(array), flat index) -> mbarrier.MBarrier
        self.fenced: set[int] = set()  # warps whose next cluster arrive releases (nvvm.fence.mbarrier.init)

    def op_id(self, where: Where) -> int:
        key = id(where)
        if key not in self._op_ids:
            self._op_ids[key] = len(self.ops)
            self.ops.append(where)
        return self._op_ids[key]

    def thread_name(self, thread: int) -> str:
        """The name of a thread of the cluster (numbered as in the module docstring)."""
        rank, local = divmod(thread, self.warps * WARP_SIZE)
        return thread_name(self.syncs[rank].env, local)


_GLOBAL_RACES = contextvars.ContextVar("tile_mlir_global_races", default=False)


@contextlib.contextmanager
def global_races(on: bool = True):
    """Interpreted launches within check their array arguments for races too (module
    docstring): costly in memory, so asked for (tests of kernels that write in place)."""
    token = _GLOBAL_RACES.set(on)
    try:
        yield
    finally:
        _GLOBAL_RACES.reset(token)


def track_arguments(cluster: ClusterSync, arrays) -> None:
    """Shadow a cluster's global arrays, ``arrays``: (flat array, text, shape) each, when
    ``global_races()`` asks for it; the same memory twice shares one shadow."""
    if not _GLOBAL_RACES.get():
        return
    seen: dict = {}
    for array, text, shape in arrays:
        if not array.flags.writeable:
            continue  # an input: read only, it cannot race
        memory = (array.ctypes.data, array.nbytes, array.dtype.str)
        if memory in seen:
            shadow = cluster.shadows[id(seen[memory])]
            shadow.text += f" = {text}"
            cluster.shadows[id(array)] = shadow
            continue
        seen[memory] = array
        cluster.shadows[id(array)] = _Shadow(array, text, shape, cluster.ctas * cluster.warps, "global")


class _Shadow:
    """What the race check remembers of one workgroup (or global) array."""

    def __init__(self, array, text: str, shape, warps: int, space: str = "workgroup"):
        n = array.size
        self.array = array  # held, so that no other array gets its id() while it is tracked
        self.text, self.shape, self.space = text, shape, space
        self.writer = np.full(n, -1, np.int64)
        self.write_clock = np.zeros(n, np.int64)
        self.write_op = np.zeros(n, np.int32)
        self.read_clock = np.zeros((n, warps), np.int64)
        self.read_lanes = np.zeros((n, warps), np.uint32)
        self.read_op = np.zeros((n, warps), np.int32)


class BlockSync:
    """One block's part of its cluster's clocks and shadows, and its workgroup arrays:
    ``globals`` (memref.globals by symbol) and ``arrays`` (every workgroup array by the
    key its allocation names, ``cluster.py`` maps addresses to them). ``env``: the
    block's environment; ``cluster``: None for a block alone (a cluster of one)."""

    def __init__(self, threads: int, env=None, cluster: ClusterSync | None = None, rank: int = 0,
                 dynamic_bytes: int = 0):
        self.dynamic_bytes = dynamic_bytes  # the launch's shared_mem (dynamic_shared.py)
        self.dynamic = None  # its array, once the block asks for it
        self.views: dict = {}  # (byte offset, end, dtype) -> a typed view of it
        self.warps = -(-threads // WARP_SIZE)
        self.cluster = cluster if cluster is not None else ClusterSync(1, self.warps)
        self.rank, self.env = rank, env
        self.base = rank * self.warps  # this block's first warp in the cluster's numbering
        self.clock = self.cluster.clock
        self.shadows = self.cluster.shadows
        self.ops = self.cluster.ops
        self.globals: dict[str, np.ndarray] = {}  # workgroup memref.globals, by symbol
        self.arrays: dict = {}  # allocation key -> workgroup array
        self.keys: dict[int, object] = {}  # id() of a workgroup array -> its allocation key
        self.cluster.syncs[rank] = self

    def track(self, array, text: str, shape, key=None) -> None:
        """Check the accesses to a fresh workgroup array (``key``: what allocated it)."""
        self.shadows[id(array)] = _Shadow(array, text, shape, self.cluster.ctas * self.warps)
        if key is not None:
            self.arrays[key] = array
            self.keys[id(array)] = key
            self.cluster.keys.setdefault(key, len(self.cluster.keys))

    def barrier(self, warps=None) -> None:
        """The warps (all when None) wait for each other: each then knows what all knew."""
        warps = self.base + (np.arange(self.warps) if warps is None else np.asarray(warps))
        merged = self.clock[warps].max(axis=0)
        self.clock[warps] = merged
        self.clock[warps, warps] += 1

    def warp_sync(self, warps) -> None:
        """The lanes of each warp wait for each other."""
        warps = self.base + np.asarray(warps)
        self.clock[warps, warps] += 1

    def op_id(self, where: Where) -> int:
        return self.cluster.op_id(where)


class ViewShadow:
    """The shadow of a typed view of a byte array (``memref.view`` of dynamic shared
    memory): its accesses are checked on the bytes they cover, in ``base``'s shadow, so
    that views of other types or offsets race with each other as the bytes do."""

    def __init__(self, view, base: _Shadow, offset: int):
        self.view = view  # held, so that no other array gets its id() while it is tracked
        self.base, self.offset, self.itemsize = base, offset, view.dtype.itemsize


def shadow_of(env, mem):
    """The shadow of ``mem`` if it is a tracked workgroup (or global) array, else None."""
    return env[SYNC].shadows.get(id(mem)) if mem.ndim == 1 else None


def record(env, shadow, flat, mask, where: Where, write: bool) -> None:
    """Check one access (an element per active thread) for races, then remember it."""
    if type(shadow) is ViewShadow:  # byte by byte, in the array it views
        start = shadow.offset + np.asarray(flat, np.int64) * shadow.itemsize
        for k in range(shadow.itemsize):
            _record(env, shadow.base, start + k, mask, where, write)
        return
    _record(env, shadow, flat, mask, where, write)


def _record(env, shadow: _Shadow, flat, mask, where: Where, write: bool) -> None:
    rows = env[ROWS]
    f = np.broadcast_to(flat, rows.shape)
    t = rows if mask is None else rows[mask]
    if mask is not None:
        f = f[mask]
    if not t.size:
        return
    f = f.astype(np.int64)
    sync = env[SYNC]
    clock = sync.clock
    t = t + sync.base * WARP_SIZE  # the cluster's numbering
    b, lane = t // WARP_SIZE, (t % WARP_SIZE).astype(np.uint32)
    # against the last write
    writer = shadow.writer[f]
    a = writer // WARP_SIZE
    bad = (writer >= 0) & (writer != t) & (shadow.write_clock[f] > clock[b, a] - (a == b))
    if np.count_nonzero(bad):
        k = int(np.argmax(bad))
        _race(env, shadow, f[k], (int(writer[k]), "writes", sync.ops[shadow.write_op[f[k]]]),
              (int(t[k]), "writes" if write else "reads", where))  # fmt: skip
    op = sync.op_id(where)
    if not write:
        now = clock[b, b]
        stale = shadow.read_clock[f, b] != now
        shadow.read_lanes[f[stale], b[stale]] = 0
        shadow.read_clock[f, b] = now
        before = shadow.read_lanes[f, b]
        np.bitwise_or.at(shadow.read_lanes, (f, b), np.uint32(1) << lane)
        after = shadow.read_lanes[f, b]
        # the op of each warp's lowest reading lane, which a race report names
        lower = (after & (~after + np.uint32(1))) != (before & (~before + np.uint32(1)))
        shadow.read_op[f[lower], b[lower]] = op
        return
    if t.size > 1:  # two threads writing one element in this op
        order = np.argsort(f, kind="stable")
        same = f[order][1:] == f[order][:-1]
        if np.count_nonzero(same):
            i = int(np.argmax(same))
            first, second = int(t[order[i]]), int(t[order[i + 1]])
            _race(env, shadow, f[order[i]], (first, "writes", where), (second, "writes", where))
    # against the reads since the last write
    own = np.arange(clock.shape[0])[None, :] == b[:, None]
    others = np.where(own, shadow.read_lanes[f] & ~(np.uint32(1) << lane)[:, None], shadow.read_lanes[f])
    conflict = (shadow.read_clock[f] > clock[b] - own) & (others != 0)
    if np.count_nonzero(conflict):
        k, w = divmod(int(np.argmax(conflict)), clock.shape[0])
        bits = int(others[k, w])
        reader = w * WARP_SIZE + (bits & -bits).bit_length() - 1
        _race(env, shadow, f[k], (reader, "reads", sync.ops[shadow.read_op[f[k], w]]), (int(t[k]), "writes", where))
    shadow.writer[f] = t
    shadow.write_clock[f] = clock[b, b]
    shadow.write_op[f] = op
    shadow.read_clock[f] = 0
    shadow.read_lanes[f] = 0


def _race(env, shadow: _Shadow, flat, earlier, later):
    index = [int(i) for i in np.unravel_index(int(flat), shadow.shape)]
    (u, verb_u, op_u), (t, verb_t, op_t) = earlier, later
    name = env[SYNC].cluster.thread_name
    raise InterpreterError(
        f"{op_t}: a race on {shadow.space} memory {shadow.text} at index {index}: {name(u)} {verb_u} "
        f"it ({op_u}), and {name(t)} {verb_t} it ({op_t}), with no barrier between them"
    )


def warp_lanes(env, mask):
    """Per warp of the block: its active lanes, its lanes, and the warps that are only
    partly active (``mask`` is an array of the active threads)."""
    n = env[ROWS].size
    warps = -(-n // WARP_SIZE)
    padded = np.zeros(warps * WARP_SIZE, bool)
    padded[:n] = mask
    active = padded.reshape(warps, WARP_SIZE).sum(axis=1)
    present = np.minimum(WARP_SIZE, n - WARP_SIZE * np.arange(warps))
    return active, present, np.flatnonzero((active != 0) & (active != present))


def arriving_warps(env, mask, where: Where):
    """The warps that reach a barrier, each with all its lanes (else an error naming a
    thread that does not reach it)."""
    if mask is None:
        return np.arange(env[SYNC].warps)
    active, present, partial = warp_lanes(env, mask)
    if partial.size:
        w = int(partial[0])
        lanes = mask[w * WARP_SIZE : w * WARP_SIZE + present[w]]
        missing = w * WARP_SIZE + int(np.argmin(lanes))
        raise InterpreterError(
            f"{where}: warp {w} reaches it with {active[w]} of {present[w]} lanes: "
            f"{thread_name(env, missing)} does not (a barrier must not be in code a warp diverges on)"
        )
    return np.flatnonzero(active)
