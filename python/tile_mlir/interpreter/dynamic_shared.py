"""Dynamic shared memory: ``gpu.dynamic_shared_memory`` and ``memref.view``.

A launch's ``shared_mem`` bytes are one array per block (``sync.BlockSync.dynamic``),
made when the block first asks for it and filled with 0xFF bytes (NaN in every float
type, -1 in every signed integer), so that a read before a write shows.
``gpu.dynamic_shared_memory`` gives it as ``memref<?xi8, #gpu.address_space<workgroup>>``,
and ``memref.view %bytes[%shift][] : ... to memref<SHAPExT, #gpu.address_space<workgroup>>``
a typed view of it ``shift`` bytes in, which loads, stores and vector ops then use as
any workgroup memref. A view

* must lie inside the launch's ``shared_mem`` bytes: one that reaches past them is an
  error that names the op, the bytes it needs and ``shared_mem`` (on the GPU its
  accesses would fall outside the block's shared memory);
* starts at a multiple of its element's size (else its accesses are misaligned: an
  error), the same for every thread of the block;
* is checked for races byte by byte in the array it views (``sync.ViewShadow``), so
  that accesses through views of other types or offsets race as the bytes they share
  do, with the same rules as static workgroup memory.

The source of a ``memref.view`` is a 1-D ``i8`` workgroup memref (the dynamic memory, or
a static byte array); a dynamic size of the result must be a constant. A vector
access's ``alignment`` is checked from the view's start (``vector_memory``).
"""

from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import SYNC, Unsupported, register, uniform
from .memref import WORKGROUP, memref_of
from .sync import ViewShadow, shadow_of

# What fresh dynamic shared memory holds, byte by byte: NaN as any float, -1 as an int.
POISON = -1


def dynamic_shared(sync, text: str):
    """The block's dynamic shared memory (made and tracked on first use)."""
    if sync.dynamic is None:
        n = sync.dynamic_bytes
        sync.dynamic = np.full(n, POISON, np.int8)
        sync.track(sync.dynamic, f"{text} (gpu.dynamic_shared_memory, {n} bytes)", (n,), key=("dynamic",))
    return sync.dynamic


def _dynamic_shared_memory(cx, op, where):
    type_ = ir.MemRefType(op.result.type)
    if str(type_.memory_space) != WORKGROUP or str(type_.element_type) != "i8" or type_.rank != 1:
        raise Unsupported(f"gpu.dynamic_shared_memory of type {type_}")
    text, r = str(type_), cx.define(op.result)

    def run(env, mask):
        env[r] = dynamic_shared(env[SYNC], text)

    return run


def _constant_shape(cx, result: ir.MemRefType, sizes) -> tuple[int, ...]:
    """The result's shape; its dynamic dims from the constant ``sizes``."""
    dynamic = iter(sizes)
    shape = []
    for n in result.shape:
        if n == ir.ShapedType.get_dynamic_size():
            slot = cx.use(next(dynamic))
            if slot not in cx.constants:
                raise Unsupported("a memref.view with a dynamic size that is not a constant")
            n = int(cx.template[slot])
        shape.append(n)
    return tuple(shape)


def _view(cx, op, where):
    source, shift, *sizes = op.operands
    source_type, result = ir.MemRefType(source.type), ir.MemRefType(op.result.type)
    if str(source_type.memory_space) != WORKGROUP or str(source_type.element_type) != "i8" or source_type.rank != 1:
        raise Unsupported(f"a memref.view of {source_type} (only of 1-D i8 workgroup memory)")
    if not result.has_static_shape:
        cx.shapes[op.result] = _constant_shape(cx, result, sizes)
    memref = memref_of(cx, op.result)
    dtype = memref.elem.storage
    nbytes, text = memref.numel * dtype.itemsize, memref.text
    src, off, r = cx.use(source), cx.use(shift), cx.define(op.result)

    def run(env, mask):
        base, sync = env[src], env[SYNC]
        offset = uniform(env[off], mask, where, "byte shift")
        if offset < 0 or offset + nbytes > base.size:
            given = (f"the launch's {base.size} bytes of dynamic shared memory (shared_mem={base.size})"
                     if base is sync.dynamic else f"the {base.size} bytes of its source")
            raise InterpreterError(f"{where}: the view {text} needs bytes [{offset}, {offset + nbytes}), "
                                   f"past the end of {given}")
        if offset % dtype.itemsize:
            raise InterpreterError(f"{where}: the view {text} starts at byte {offset}, not a multiple of its "
                                   f"element's {dtype.itemsize} bytes: its accesses would be misaligned")
        key = (id(base), offset, nbytes, dtype)
        view = sync.views.get(key)
        if view is None:
            view = sync.views[key] = base[offset : offset + nbytes].view(dtype)
            shadow = shadow_of(env, base)
            if type(shadow) is ViewShadow:  # a view of a view: of the same bytes
                shadow, offset = shadow.base, offset + shadow.offset
            if shadow is not None:
                sync.shadows[id(view)] = ViewShadow(view, shadow, offset)
        env[r] = view

    return run


register({"gpu.dynamic_shared_memory": _dynamic_shared_memory, "memref.view": _view})
