"""The interpreter's core: the registry of op handlers, the environment, the compiler.

Every kernel is compiled once into a tree of Python closures, one per op, which read
and write a flat list of values (the environment) by slot numbers fixed at compile
time; nothing is looked up or parsed while a kernel runs.

* **The registry.** Each dialect module of this package registers a handler per op
  name (``register``), and the ops its blocks end with (``register_terminators``).
  ``HANDLERS`` and ``TERMINATORS`` are the whole list of what the interpreter runs.
  A handler ``handler(cx, op, where)`` returns ``run(env, mask)``, or None when the op
  needs no work at run time (constants and thread ids are preset slots).
* **The environment.** One flat list of values per block of the grid. The first slots
  hold the launch geometry (``N``, ``ROWS``, ``LANE``, ``TID``...); op results follow.
  A value is a numpy array with one element per thread, or a numpy scalar when it is
  uniform over the block.
* **Masks.** ``run(env, mask)``: ``mask`` is a bool array of the active threads, or None
  when all threads of the block are active.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping

import numpy as np

from ..errors import InterpreterError, TileError
from ..vocab import WARP_SIZE
from .elements import ELEMS, Elem

Op = Callable[[list, "np.ndarray | None"], None]  # run(env, mask); mask: active threads
Handler = Callable[["Compiler", object, "Where"], "Op | None"]

# op name -> handler, filled by the dialect modules; ops that end a block
HANDLERS: dict[str, Handler] = {}
TERMINATORS: set[str] = set()


def register(handlers: Mapping[str, Handler]) -> None:
    """Add op handlers to the registry (each op name once)."""
    for name, handler in handlers.items():
        if name in HANDLERS:
            raise ValueError(f"{name} is registered twice")
        HANDLERS[name] = handler


def register_terminators(*names: str) -> None:
    """Ops that end a block; the block compiler reads their operands."""
    TERMINATORS.update(names)


class Unsupported(InterpreterError):
    """Raised while compiling an op the interpreter cannot run; building the kernel
    then reports every such op at its location."""


# ---------------------------------------------------------------------------------------
# The environment: one flat list of values per block. The first slots hold the launch
# geometry; op results follow, at slots fixed when the kernel is compiled.

N, ROWS, LANE = 0, 1, 2  # thread count (int), linear thread ids, lane ids
TID, BID, BDIM, GDIM = (3, 4, 5), (6, 7, 8), (9, 10, 11), (12, 13, 14)
WARP, WARPS = 15, 16  # warp ids (linear // 32), warp count
READ_ONLY = 17  # id() of a read-only argument's array -> "kernel k: argument i (...)"
SYNC = 18  # the block's barriers and workgroup race check (sync.BlockSync)
CLUSTER_DIM = 19  # the CTAs of a thread-block cluster along x, y, z: (1, 1, 1) without one
RESERVED = 20

def block_environments(env: list, grid, block):
    """The environments of the blocks of a launch, in order: ``env`` with the launch
    geometry and each block's ids set (``grid`` and ``block``: 3 ints each)."""
    n = block[0] * block[1] * block[2]
    linear = np.arange(n, dtype=np.int64)
    env[N], env[ROWS], env[LANE] = n, linear, linear % WARP_SIZE
    env[WARP], env[WARPS] = linear // WARP_SIZE, np.int64(-(-n // WARP_SIZE))
    bx, by, _ = block
    tids = (linear % bx, linear // bx % by, linear // (bx * by))
    for k in range(3):
        env[TID[k]], env[BDIM[k]], env[GDIM[k]] = tids[k], np.int64(block[k]), np.int64(grid[k])
    for bid in itertools.product(*(range(g) for g in reversed(grid))):
        block_env = env.copy()
        for s, b in zip(BID, reversed(bid)):
            block_env[s] = np.int64(b)
        yield block_env


def run_ops(ops: list[Op], env: list, mask) -> None:
    """Run compiled ops; mask is None when all threads are active."""
    try:
        for fn in ops:
            fn(env, mask)
    except TileError:  # InterpreterError, or LaunchError for a store to an input
        raise
    except Exception as e:  # a numpy failure: name the op, never a bare traceback
        raise InterpreterError(f"{fn.where}: {type(e).__name__}: {e}") from e


def assign(env: list, slots, values) -> None:
    """Set each slot of ``slots`` to the value at the same place in ``values``."""
    for s, v in zip(slots, values):
        env[s] = v


def choose(cond, a, b):
    """Per thread, ``a`` where ``cond`` else ``b`` (vectors element by element)."""
    if type(a) is tuple:
        return tuple(np.where(cond, x, y) for x, y in zip(a, b))
    return np.where(cond, a, b)


def thread_name(env: list, k: int) -> str:
    tid = tuple(int(env[s][k]) for s in TID)
    bid = tuple(int(env[s]) for s in BID)
    return f"thread {tid} of block {bid}"


def first_active(mask) -> int:
    return 0 if mask is None else int(np.argmax(mask))


def uniform(x, mask, where: Where, what: str) -> int:
    """A value that must be the same on all active threads, as an int."""
    if type(x) is not np.ndarray or x.ndim == 0:
        return int(x)
    live = x if mask is None else x[mask]
    if np.count_nonzero(live != live[0]):
        seen = ", ".join(map(str, np.unique(live)[:8]))
        raise InterpreterError(
            f"{where}: the {what} differs across threads ({seen}); it must be the same on all of them"
        )
    return int(live[0])


# ---------------------------------------------------------------------------------------
# The compiler: MLIR ops -> closures. A handler(cx, op, where) returns run(env, mask),
# or None when the op needs no work at run time (constants and ids are preset slots).


class Compiler:
    """Compiles the ops of one gpu.func: value slots, constants, and one closure per op."""

    def __init__(self):
        self.slots: dict = {}  # ir.Value -> slot
        self.template: list = [None] * RESERVED  # the initial environment: constants
        self.constants: set[int] = set()  # slots of values known at compile time
        self._elems: dict = {}  # ir.Type -> Elem (str() of a type is slow)
        self.unsupported: list[str] = []  # "op at location: why", for ops that cannot run
        self.memrefs: dict = {}  # ir.Type -> memref.MemRef (memref.memref_type)
        self.shapes: dict = {}  # a dynamic memref value -> the static shape a memref.cast fixes
        self.prologue: list[Op] = []  # what runs when a block starts: its workgroup globals
        self.globals: set[str] = set()  # the workgroup memref.globals the prologue allocates

    def define(self, value) -> int:
        slot = self.slots[value] = len(self.template)
        self.template.append(None)
        return slot

    def preset(self, value, constant) -> None:
        slot = self.define(value)
        self.template[slot] = constant
        self.constants.add(slot)

    def alias(self, value, slot: int) -> None:
        self.slots[value] = slot

    def use(self, value) -> int:
        return self.slots[value]

    def elem(self, type_) -> Elem:
        elem = self._elems.get(type_)
        if elem is None:
            elem = self._elems[type_] = ELEMS.get(str(type_))
            if elem is None:
                raise Unsupported(f"type {type_}")
        return elem

    def block(self, block) -> tuple[list[Op], list[int]]:
        """Compile a block: its ops, and the slots its terminator yields."""
        ops, yields = [], []
        for view in block.operations:
            op = view.operation
            if op.name in TERMINATORS:
                yields = [self.use(v) for v in op.operands]
                continue
            fn = self.op(op)
            if fn is not None:
                ops.append(fn)
        return ops, yields

    def op(self, op) -> Op | None:
        """Compile one op; an op that cannot run is noted in ``unsupported``."""
        where = Where(op.name, op.location)
        handler = HANDLERS.get(op.name)
        try:
            if handler is None:
                raise Unsupported("the interpreter does not support this op")
            fn = handler(self, op, where)
        except Unsupported as e:
            self.unsupported.append(f"{where}: {e}")
            for r in op.results:
                if r not in self.slots:
                    self.define(r)
            return None
        if fn is not None:
            fn.where = where
        return fn


class Where:
    """Names an op in messages: "name at file:line:col", formatted only when needed."""

    __slots__ = ("location", "name")

    def __init__(self, name: str, location):
        self.name, self.location = name, location

    def __str__(self) -> str:
        return f"{self.name} at {location_text(self.location)}"


def location_text(loc) -> str:
    """``file:line:col`` of the innermost file location in ``loc``, through name,
    call-site and fused locations; a name location adds `` (name)``."""
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
    if loc.is_a_name():
        return f"{location_text(loc.child_loc)} ({loc.name_str})"
    if loc.is_a_callsite():
        return location_text(loc.callee)
    if loc.is_a_fused():
        texts = [location_text(part) for part in loc.locations]
        located = [t for t in texts if not t.startswith("loc(")]
        return (located or texts or [str(loc)])[0]
    return str(loc)


def no_op(cx, op, where):
    """The handler of an op that does nothing in the interpreter."""
