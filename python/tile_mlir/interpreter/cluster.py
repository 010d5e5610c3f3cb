"""Thread-block clusters: the blocks of a cluster run together, and meet at its barrier.

* **Running a cluster** (``run_cluster``). The blocks of one cluster run as cooperative
  threads of the host, one at a time, in a fixed order: the block of rank 0 runs until
  it waits at a cluster barrier that not every thread of the cluster has arrived at (or
  it exits); then the next block in rank order that can run does, and so on. So a run
  is deterministic, and each block runs in lockstep as any block does (``core``). A
  barrier that can never complete (a block exits without arriving, or waits elsewhere)
  is an error that names a thread that never arrives. Clusters run one after another.
* **The cluster barrier**: ``nvvm.cluster.arrive`` (release: the accesses before it are
  ordered before those after the matching wait of every thread of the cluster),
  ``nvvm.cluster.arrive.relaxed`` (orders nothing) and ``nvvm.cluster.wait`` (acquire).
  Each thread arrives, then waits, then may arrive again; a thread that waits without
  having arrived, or arrives twice, is an error. The race check (``sync``) follows the
  order the barrier makes, across the blocks of the cluster.
* **Where a block is in its cluster**: ``nvvm.read.ptx.sreg.cluster.{ctarank, nctarank,
  ctaid.*, nctaid.*}``, ``...clusterid.*``, ``...nclusterid.*``, and ``gpu.cluster_block_id``,
  ``gpu.cluster_dim_blocks``, ``gpu.cluster_id``, ``gpu.cluster_dim``. The rank is
  ``x + y * cx + z * cx * cy`` over the block's coordinates in its cluster.

``pointers.py`` reaches another block's shared memory (``nvvm.mapa``, ``llvm.load``).
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import InterpreterError
from ..vocab import WARP_SIZE
from .core import BID, CLUSTER_DIM, GDIM, ROWS, SYNC, register, thread_name
from .gpu import check_converged


class _Abort(InterpreterError):
    """Unwinds a block's host thread when another block of its cluster has failed (the
    other block's error is the one reported)."""


def rank_of(env) -> int:
    """The block's rank in its cluster."""
    (cx, cy, cz), (bx, by, bz) = env[CLUSTER_DIM], (int(env[s]) for s in BID)
    return bx % cx + (by % cy) * cx + (bz % cz) * cx * cy


def block_text(env) -> str:
    return f"block {tuple(int(env[s]) for s in BID)} (rank {rank_of(env)} of its cluster)"


class ClusterRun:
    """The blocks of one cluster (their environments, by rank), run by ``run_cluster``."""

    def __init__(self, envs: list):
        self.envs = envs
        self.cond = threading.Condition()
        self.turn = 0
        self.state = ["ready"] * len(envs)  # "ready", "blocked" (at a wait), or "done"
        self.started = [False] * len(envs)
        self.waiting_at = [None] * len(envs)
        self.never: list[str | None] = [None] * len(envs)  # why a blocked block can never go on, if not the barrier
        self.error: BaseException | None = None

    def run(self, body) -> None:
        """``body(env)`` for each block, in cooperative host threads; raises the first
        error of any block."""
        threads = [threading.Thread(target=self._main, args=(rank, body), daemon=True) for rank in range(len(self.envs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self.error is not None:
            raise self.error

    def _main(self, rank: int, body) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.turn == rank or self.error is not None)
            if self.error is not None:
                return
            self.started[rank] = True
        try:
            body(self.envs[rank])
        except _Abort:
            return
        except BaseException as e:  # noqa: BLE001 - handed to the launching thread
            self._fail(e)
            return
        with self.cond:
            self.state[rank] = "done"
            if not self._hand_over(rank) and "blocked" in self.state:
                blocked = self.never[self.state.index("blocked")]
                self._fail(InterpreterError(blocked) if blocked else
                           self._never_completes(f"{block_text(self.envs[rank])} exits"))

    def _fail(self, error: BaseException) -> None:
        with self.cond:
            if self.error is None:
                self.error = error
            self.cond.notify_all()

    def _hand_over(self, rank: int) -> bool:
        """Give the turn to the next block after ``rank`` that can run; False if none can."""
        n = len(self.envs)
        for step in range(1, n + 1):
            other = (rank + step) % n
            if self.state[other] == "ready":
                self.turn = other
                self.cond.notify_all()
                return True
        return False

    def block_until(self, env, ready, where, never: str | None = None) -> None:
        """Let the other blocks run until ``ready()`` holds (a barrier phase completed);
        ``never``: the error when no block can run any more (default: the cluster
        barrier's)."""
        rank = env[SYNC].rank
        with self.cond:
            while not ready():
                self.state[rank], self.waiting_at[rank], self.never[rank] = "blocked", where, never
                if not self._hand_over(rank):
                    raise InterpreterError(never) if never else self._never_completes(f"{block_text(env)} waits ({where})")
                self.cond.wait_for(lambda: self.turn == rank or self.error is not None)
                if self.error is not None:
                    raise _Abort
            self.state[rank], self.waiting_at[rank], self.never[rank] = "ready", None, None

    def wake_all(self) -> None:
        """A barrier phase completed: every blocked block may run again."""
        self.state = ["ready" if s == "blocked" else s for s in self.state]

    def _never_completes(self, what: str) -> InterpreterError:
        barrier = self.envs[0][SYNC].cluster.barrier
        rank, thread = barrier.missing()
        env = self.envs[rank]
        if not self.started[rank]:
            fate = "its block has not started"
        elif self.state[rank] == "done":
            fate = "its block has exited"
        else:
            fate = f"its block waits at {self.waiting_at[rank]}"
        waiting = ", ".join(f"rank {r} at {w}" for r, w in enumerate(self.waiting_at) if w is not None)
        return InterpreterError(
            f"{what}, and the cluster barrier can never complete: {thread_name(env, thread)} never arrives "
            f"({fate}); waiting: {waiting or 'none'}"
        )


def run_cluster(envs: list, body) -> None:
    """Run ``body(env)`` for the blocks of one cluster (``ClusterRun``)."""
    sync = envs[0][SYNC].cluster
    sync.barrier = ClusterBarrier(sync, envs[0][ROWS].size)
    if len(envs) == 1:
        body(envs[0])
        return
    sync.run = ClusterRun(envs)
    sync.run.run(body)


class ClusterBarrier:
    """The state of a cluster's barrier: which threads arrived in the current phase, and
    the clocks they arrived with (``sync``)."""

    def __init__(self, cluster, threads: int):
        self.cluster = cluster
        self.pending = np.full((cluster.ctas, threads), -1, np.int64)  # the phase arrived at, not yet waited for
        self.arrivals = 0
        self.phase = 0
        self.snapshot = np.zeros(cluster.clock.shape[0], np.int64)
        self.completed = self.snapshot.copy()

    def missing(self) -> tuple[int, int]:
        """(rank, thread) of the first thread that has not arrived in the current phase."""
        rank, thread = np.argwhere(self.pending != self.phase)[0]
        return int(rank), int(thread)

    def arrive(self, env, mask, where, release: bool) -> None:
        sync = env[SYNC]
        t = env[ROWS] if mask is None else env[ROWS][mask]
        again = t[self.pending[sync.rank, t] >= 0]
        if again.size:
            raise InterpreterError(
                f"{where}: {thread_name(env, int(again[0]))} arrives at the cluster barrier again before it waits")
        self.pending[sync.rank, t] = self.phase
        warps = sync.base + np.unique(t // WARP_SIZE)
        fenced = warps if release else np.array(sorted(self.cluster.fenced.intersection(warps.tolist())), np.int64)
        if fenced.size:  # released: all of them, or those after an nvvm.fence.mbarrier.init (mbarrier.py)
            self.snapshot = np.maximum(self.snapshot, sync.clock[fenced].max(axis=0))
            self.cluster.fenced.difference_update(fenced.tolist())
        sync.clock[warps, warps] += 1  # what they do next is not ordered by this phase
        self.arrivals += t.size
        if self.arrivals == self.pending.size:
            self.completed, self.snapshot = self.snapshot, np.zeros_like(self.snapshot)
            self.phase, self.arrivals = self.phase + 1, 0
            if self.cluster.run is not None:
                self.cluster.run.wake_all()

    def wait(self, env, mask, where) -> None:
        sync = env[SYNC]
        t = env[ROWS] if mask is None else env[ROWS][mask]
        phases = self.pending[sync.rank, t]
        if np.count_nonzero(phases < 0):
            k = int(t[np.argmax(phases < 0)])
            raise InterpreterError(f"{where}: {thread_name(env, k)} waits at the cluster barrier without arriving first")
        phase = int(phases.max())
        if self.phase <= phase:
            run = self.cluster.run
            if run is None:  # a block alone: nobody else can arrive
                _, thread = self.missing()
                raise InterpreterError(f"{where}: the cluster barrier can never complete: "
                                       f"{thread_name(env, thread)} never arrives")
            run.block_until(env, lambda: self.phase > phase, where)
        warps = sync.base + np.unique(t // WARP_SIZE)
        sync.clock[warps] = np.maximum(sync.clock[warps], self.completed)
        sync.clock[warps, warps] += 1
        self.pending[sync.rank, t] = -1


def _arrive(release: bool):
    def handler(cx, op, where):
        aligned = "aligned" in op.attributes

        def run(env, mask):
            if aligned and mask is not None:
                check_converged(mask, env, where)
            env[SYNC].cluster.barrier.arrive(env, mask, where, release)

        return run

    return handler


def _wait(cx, op, where):
    aligned = "aligned" in op.attributes

    def run(env, mask):
        if aligned and mask is not None:
            check_converged(mask, env, where)
        env[SYNC].cluster.barrier.wait(env, mask, where)

    return run


# --- where a block is in its cluster ---------------------------------------------------


def _position(what: str, k: int):
    """The block's position along dim k: in its cluster (``in``), the cluster's size
    (``size``), the cluster's index in the grid (``id``), the clusters of the grid (``count``)."""

    def value(env) -> int:
        c, b, g = env[CLUSTER_DIM][k], int(env[BID[k]]), int(env[GDIM[k]])
        return {"in": b % c, "size": c, "id": b // c, "count": g // c}[what]

    return value


def _scalar(value, dtype):
    def handler(cx, op, where):
        r = cx.define(op.result)

        def run(env, mask):
            env[r] = dtype(value(env))

        return run

    return handler


def _gpu_dim(what: str):
    def handler(cx, op, where):
        k = "xyz".index(str(op.attributes["dimension"])[-2])
        return _scalar(_position(what, k), np.int64)(cx, op, where)

    return handler


_SREG = "nvvm.read.ptx.sreg."
register(
    {
        "nvvm.cluster.arrive": _arrive(True),
        "nvvm.cluster.arrive.relaxed": _arrive(False),
        "nvvm.cluster.wait": _wait,
        _SREG + "cluster.ctarank": _scalar(rank_of, np.int32),
        _SREG + "cluster.nctarank": _scalar(lambda env: int(np.prod(env[CLUSTER_DIM])), np.int32),
        **{f"{_SREG}{name}.{d}": _scalar(_position(what, k), np.int32)
           for name, what in (("cluster.ctaid", "in"), ("cluster.nctaid", "size"), ("clusterid", "id"),
                              ("nclusterid", "count"))
           for k, d in enumerate("xyz")},
        "gpu.cluster_block_id": _gpu_dim("in"),
        "gpu.cluster_dim_blocks": _gpu_dim("size"),
        "gpu.cluster_id": _gpu_dim("id"),
        "gpu.cluster_dim": _gpu_dim("count"),
    }
)
