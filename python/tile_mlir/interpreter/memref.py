"""The ``memref`` dialect: allocations, loads and stores.

A memref kernel argument is the caller's array (row-major, flat). Workgroup memory
(``#gpu.address_space<workgroup>``, allocated or a ``memref.global``) is one array per
block; other allocations
(``memref.alloca``, ``memref.alloc``, private attributions) hold one copy per thread,
as a ``[numel, nthreads]`` array. Fresh memory holds NaN (floats) or 0xA5 bytes
(integers; ``true`` for i1), so that a read before a write shows. Out-of-bounds
accesses by active threads are errors; only identity-layout memrefs run, of a static
shape, or of a dynamic shape that the launch fixes (a kernel argument: the extents of
the array passed, for which the kernel is built, ``kernel._Program``) or a ``memref.cast``
from such a memref (the cast's result is its source's array; ``memref.dim`` reads the
source's extents).
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, LaunchError
from ..ir import ir
from .core import (
    READ_ONLY,
    ROWS,
    SYNC,
    Compiler,
    N,
    Op,
    Unsupported,
    Where,
    first_active,
    no_op,
    register,
    thread_name,
)
from .sync import record, shadow_of

WORKGROUP = "#gpu.address_space<workgroup>"


def memref_type(cx: Compiler, type_) -> MemRef:
    """The MemRef of a memref type, made once per type and compiler."""
    memref = cx.memrefs.get(type_)
    if memref is None:
        memref = cx.memrefs[type_] = MemRef(cx, type_)
    return memref


def memref_of(cx: Compiler, value) -> MemRef:
    """The MemRef of a memref value: its type's, or, for a dynamic shape, the shape a
    ``memref.cast`` from a static memref gave it."""
    shape = cx.shapes.get(value)
    if shape is None:
        return memref_type(cx, value.type)
    key = (value.type, shape)
    memref = cx.memrefs.get(key)
    if memref is None:
        memref = cx.memrefs[key] = MemRef(cx, value.type, shape)
    return memref


class MemRef:
    """An identity-layout memref type: element, shape, row-major strides, space.

    ``shape``: the extents of a dynamic type, where the kernel fixes them (``memref_of``)."""

    def __init__(self, cx: Compiler, type_, shape: tuple[int, ...] | None = None):
        if not isinstance(type_, ir.MemRefType):
            raise Unsupported(f"type {type_}")
        if shape is None and not type_.has_static_shape:
            raise Unsupported(f"dynamic shape in {type_}")
        self.text = str(type_)
        self.elem = cx.elem(type_.element_type)
        self.shape = tuple(type_.shape) if shape is None else shape
        strides, size = [], 1
        for extent in reversed(self.shape):
            strides.insert(0, size)
            size *= extent
        self.strides, self.numel = tuple(strides), size
        if type_.layout != ir.AffineMapAttr.get(ir.AffineMap.get_identity(type_.rank, type_.context)):
            raise Unsupported(f"non-identity layout in {type_}")
        self.workgroup = str(type_.memory_space) == WORKGROUP

    def allocator(self, slot: int, key=None) -> Op:
        """run() that sets ``slot`` to fresh memory: one array per block, or one per thread.
        A workgroup array is known to its block by ``key`` (default: the slot), which
        ``pointers.py`` turns into its shared-memory address."""
        elem, numel = self.elem, self.numel
        if self.workgroup:
            fill = elem.poison if elem.to_storage is None else elem.to_storage(elem.poison)

            text, shape = self.text, self.shape
            key = ("slot", slot) if key is None else key

            def run(env, mask):
                env[slot] = np.full(numel, fill, elem.storage)
                env[SYNC].track(env[slot], text, shape, key)
        else:

            def run(env, mask):  # [numel, nthreads]: a register is one contiguous row
                env[slot] = np.full((numel, env[N]), elem.poison, elem.dtype)

        return run

    def address(self, cx: Compiler, indices, where: Where):
        """How a load or store finds its element, as (constant, index).

        Constant in-bounds indices give (flat index, None). Otherwise ``index(env, mask)``
        returns the flat index: a scalar if uniform, else an int64 array. An
        out-of-bounds index on an active thread raises; inactive threads use element 0.
        """
        slots = [cx.use(v) for v in indices]
        # Constant in-bounds indices fold into one offset; the other dims vary at run time.
        offset, dims = 0, []
        for slot, extent, stride in zip(slots, self.shape, self.strides):
            if slot in cx.constants and 0 <= cx.template[slot] < extent:
                offset += int(cx.template[slot]) * stride
            else:
                dims.append((slot, extent, stride))
        if not dims:
            return offset, None
        text = self.text

        def fail(env, k):
            at = [int(env[s][k]) if type(env[s]) is np.ndarray else int(env[s]) for s in slots]
            raise InterpreterError(f"{where}: index {at} is out of bounds for {text} in {thread_name(env, k)}")

        def masked(env, mask, flat, bad):
            """Raise if an active thread is out of bounds; point inactive ones at 0."""
            live = bad if mask is None else bad & mask
            if np.count_nonzero(live):
                fail(env, int(np.argmax(live)))
            return np.where(bad, 0, flat)

        if len(dims) == 1:
            ((slot, extent, stride),) = dims
            plain = stride == 1 and offset == 0

            def index(env, mask):
                i = env[slot]
                if type(i) is not np.ndarray:
                    if not 0 <= i < extent:
                        fail(env, first_active(mask))
                else:
                    bad = i.view(np.uint64) >= extent  # negative indices are huge
                    if np.count_nonzero(bad):
                        i = masked(env, mask, i, bad)
                return i if plain else i * stride + offset

            return None, index

        def index(env, mask):
            flat, bad = offset, None
            for slot, extent, stride in dims:
                i = env[slot]
                if type(i) is np.ndarray:
                    out = i.view(np.uint64) >= extent
                    bad = out if bad is None else bad | out
                elif not 0 <= i < extent:
                    fail(env, first_active(mask))
                flat = flat + i * stride
            if bad is not None and np.count_nonzero(bad):
                return masked(env, mask, flat, bad)
            return flat

        return None, index


def _alloc(cx, op, where):
    if len(op.operands):
        raise Unsupported("dynamic sizes")
    return memref_type(cx, op.result.type).allocator(cx.define(op.result))


def _get_global(cx, op, where):
    """A workgroup ``memref.global``: one array per block, allocated (poisoned) when the
    block starts, as the hardware's static shared memory is (the kernel's prologue,
    ``Compiler.prologue``), and the same for every ``memref.get_global`` of its symbol."""
    memref = memref_type(cx, op.result.type)
    if not memref.workgroup:
        raise Unsupported("a global outside workgroup memory")
    name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
    slot = cx.define(op.result)
    if name not in cx.globals:
        cx.globals.add(name)
        fresh = memref.allocator(slot, key=("global", name))

        def allocate(env, mask):
            fresh(env, mask)
            env[SYNC].globals[name] = env[slot]

        allocate.where = where
        cx.prologue.append(allocate)

    def run(env, mask):
        env[slot] = env[SYNC].globals[name]

    return run


def read(env, mem, flat, from_storage, mask, where: Where):
    """The value at flat index ``flat`` (scalar or per-thread array) of memory ``mem``;
    ``mask``: the threads that read (workgroup memory checks them for races)."""
    if mem.ndim == 2:  # per-thread memory [numel, nthreads]
        return mem[flat, env[ROWS]] if type(flat) is np.ndarray else mem[flat].copy()
    shadow = shadow_of(env, mem)
    if shadow is not None:
        record(env, shadow, flat, mask, where, write=False)
    value = mem[flat]
    return value if from_storage is None else from_storage(value)


def write(env, mem, flat, value, mask, to_storage, where: Where) -> None:
    """Store ``value`` at flat index ``flat`` of ``mem`` for the active threads.

    A read-only array argument (an input) raises LaunchError, naming the argument."""
    if mem.ndim == 2:  # per-thread memory [numel, nthreads]
        if type(flat) is not np.ndarray:
            if mask is None:
                mem[flat] = value
            else:
                np.copyto(mem[flat], value, where=mask)
            return
        rows = env[ROWS]
        if mask is not None:
            flat, rows = flat[mask], rows[mask]
            value = value[mask] if type(value) is np.ndarray else value
        mem[flat, rows] = value
        return
    shadow = shadow_of(env, mem)
    if shadow is not None:
        record(env, shadow, flat, mask, where, write=True)
    if to_storage is not None:
        value = to_storage(value)
    if type(flat) is not np.ndarray:  # one address: the last active thread wins
        if type(value) is np.ndarray:
            value = value[-1] if mask is None else value[mask][-1]
    elif mask is not None:
        flat = flat[mask]
        value = value[mask] if type(value) is np.ndarray else value
    try:
        mem[flat] = value
    except ValueError:
        if mem.flags.writeable:
            raise
        raise LaunchError(
            f"{env[READ_ONLY][id(mem)]} is a read-only array, and {where} writes it; "
            "pass a writeable array"
        ) from None


def _cast(cx, op, where):
    """The result is the source's array; a dynamic result keeps the source's shape. A
    static result must have the source's shape, which for a dynamic source the kernel
    learns at launch: a cast to another shape is an error when it runs."""
    source, result = op.operands[0], op.result
    shape = memref_of(cx, source).shape
    cx.alias(result, cx.use(source))
    if not ir.MemRefType(result.type).has_static_shape:
        cx.shapes[result] = shape
    elif tuple(ir.MemRefType(result.type).shape) != shape:
        message = f"{where}: the memref has shape {list(shape)}, not {list(ir.MemRefType(result.type).shape)}"

        def run(env, mask):
            raise InterpreterError(message)

        return run
    return None  # no work at run time


def _dim(cx, op, where):
    """A constant: the extent of a static dim, or of a dynamic one, as the launch's
    array (a dynamic argument) or a memref.cast fixed it."""
    source, index = op.operands
    slot = cx.use(index)
    if slot not in cx.constants:
        raise Unsupported("a dim index that is not a constant")
    shape = memref_of(cx, source).shape
    k = int(cx.template[slot])
    if not 0 <= k < len(shape):
        raise Unsupported(f"dim {k} of a rank-{len(shape)} memref")
    cx.preset(op.result, np.int64(shape[k]))  # no work at run time


def _load(cx, op, where):
    operands = list(op.operands)
    mr = memref_of(cx, operands[0])
    m = cx.use(operands[0])
    constant, index = mr.address(cx, operands[1:], where)
    r = cx.define(op.result)
    from_storage = mr.elem.from_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        env[r] = read(env, env[m], flat, from_storage, mask, where)

    return run


def _store(cx, op, where):
    operands = list(op.operands)
    v = cx.use(operands[0])
    mr = memref_of(cx, operands[1])
    m = cx.use(operands[1])
    constant, index = mr.address(cx, operands[2:], where)
    to_storage = mr.elem.to_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        write(env, env[m], flat, env[v], mask, to_storage, where)

    return run


# --- vector: 1-D vector.load / vector.store, and elementwise arith ops on 1-D vectors
# (``_elementwise``). A vector value is a tuple of its elements, each a scalar or a
# per-thread array.


register(
    {
        "memref.alloca": _alloc,
        "memref.alloc": _alloc,
        "memref.get_global": _get_global,
        "memref.dealloc": no_op,
        "memref.load": _load,
        "memref.store": _store,
        "memref.cast": _cast,
        "memref.dim": _dim,
    }
)
