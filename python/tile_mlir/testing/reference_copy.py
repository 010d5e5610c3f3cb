"""The reference's ``tile.copy``, written from docs/spec.md ("The op: tile.copy") alone.

Part of ``tile_mlir.testing.reference`` (read its docstring first): it shares nothing with
the compiler either. A copy's layout places each tile coordinate c on (thread, slot) places
(``reference_layout``); tile coordinate c is memory element ``origin + c``.

* ``load``: every place of every coordinate (every replica copy) receives the memory
  element, or ``padding`` (zero when absent) where ``origin + c`` is outside the memory in
  some dim; every other register slot keeps its contents.
* ``store``: every coordinate inside the memory is written once, from the place of its
  replica copy 0; other copies are not read; elements outside are not written.

One instance of the scope runs the copy (its threads are the rows of the register buffer);
a layout that names no thread axis is one thread's tile, which every thread loads at the
same origin. ``nesting_problem`` is the condition docs/spec.md gives both copy variants
(thread iters that nest): a copy that fails it is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .reference_layout import Layout, layout_problems
from .reference_numbers import from_values, storage_dtype

COPY_SCOPES = ("thread", "warp", "warpgroup", "cta")


@dataclass(frozen=True)
class CopyOp:
    """One ``tile.copy``, as plain data."""

    scope: str
    direction: str  # "load" (memory -> registers) or "store"
    dtype: str
    layout: str
    mem_shape: tuple[int, ...]
    origin: tuple[int, ...]
    regs: int  # the register memref's elements (flat)
    padding: float | int | None = None  # a load's padding value; None: zero
    padding_bits: int | None = None  # or its exact bits (floats), which win

    @property
    def tile(self) -> Layout:
        return Layout.parse(self.layout)


def copy_problems(op: CopyOp, warps: int | None = None) -> list[str]:
    """Why ``op`` is not valid by docs/spec.md "tile.copy", "Rules" (empty when it is)."""
    out = []
    if op.scope not in COPY_SCOPES:
        out.append(f"exec_scope {op.scope}")
    if op.direction not in ("load", "store"):
        out.append(f"direction {op.direction}")
    try:
        tile = op.tile
    except ValueError as e:
        return [*out, str(e)]
    out += layout_problems(tile, op.scope if op.scope in COPY_SCOPES else "thread", warps=warps)
    if len(tile.shape) != len(op.mem_shape) or len(op.origin) != len(op.mem_shape):
        out.append(f"a rank-{len(tile.shape)} layout for a rank-{len(op.mem_shape)} memory")
    if not out and tile.span > op.regs:
        out.append(f"span {tile.span} > {op.regs} registers")
    if op.direction == "store" and (op.padding is not None or op.padding_bits is not None):
        out.append("padding on a store")
    return out


def nesting_problem(op: CopyOp) -> str | None:
    """docs/spec.md, "tile.copy", "Lowering": both variants need thread iters that nest:
    sorted by how far each moves the thread index, each moves it at least as far as the
    previous one's whole extent. Why this layout's do not, or None."""
    its = sorted((it.stride * it.weight, it.extent) for it in op.tile.iters if it.axis != "m" and it.extent > 1)
    for (s0, e0), (s1, e1) in zip(its, its[1:]):
        if s1 < s0 * e0:
            return f"thread iters do not nest: one of extent {e0} moves the thread index by {s0}, the next by {s1}"
    return None


def _places(op: CopyOp):
    """(memory index or None outside, thread, slot, is copy 0) of every place."""
    tile = op.tile
    k, copy, thread, slot = tile.places
    coords = np.stack(np.unravel_index(k, tile.shape), axis=1) + np.array(op.origin)
    inside = np.all((coords >= 0) & (coords < np.array(op.mem_shape)), axis=1)
    _, reg = tile.copies("m")
    first = (copy == 0) & (np.arange(len(k)) % len(reg) == 0)  # thread copy 0, register copy 0
    return coords, inside, thread, slot, first


def _padding(op: CopyOp) -> np.ndarray:
    """The padding's bits, as a 0-d buffer of the element type."""
    if op.padding_bits is not None:
        width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[storage_dtype(op.dtype).itemsize]
        return np.array(op.padding_bits, width).view(storage_dtype(op.dtype))
    return from_values([op.padding if op.padding is not None else 0], op.dtype, ())


def load(op: CopyOp, mem: np.ndarray, regs: np.ndarray) -> np.ndarray:
    """The register buffer ``regs[thread, slot]`` after the load (one instance, or with no
    thread axis every row its own copy of the tile)."""
    out = np.array(regs, copy=True)
    coords, inside, thread, slot, _ = _places(op)
    values = np.empty(len(thread), out.dtype)
    values[:] = _padding(op)
    values[inside] = mem[tuple(coords[inside].T)]
    per_thread = all(it.axis == "m" for it in op.tile.iters)  # every thread loads its own tile
    for row in [thread + t for t in range(out.shape[0])] if per_thread else [thread]:
        out[row, slot] = values
    return out


def store(op: CopyOp, mem: np.ndarray, regs: np.ndarray) -> np.ndarray:
    """The memory after the store."""
    out = np.array(mem, copy=True)
    coords, inside, thread, slot, first = _places(op)
    take = inside & first
    out[tuple(coords[take].T)] = regs[thread[take], slot[take]]
    return out
