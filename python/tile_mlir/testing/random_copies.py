"""Random ``tile.copy`` kernels, judged by the reference (``reference_copy``), bit for bit.

A ``CopyKernel`` is one copy in a kernel ``@<name>(%M, %R[, origins])``: every thread loads
its registers from ``R[thread, :]``, the copy runs (a load from ``M`` into the registers,
or a store of them into ``M``), and a load's registers go back to ``R``. So a load must
leave every register slot the layout gives no element as it was, and a store every memory
element outside the tile. Inputs are random values of the element type (NaN of any
payload, infinities and zeros among the floats in half the kernels); a load's padding is
absent (zero), a random value, or a NaN of a random payload.

``random_copy_kernel`` draws layouts of rank 1-3 whose thread iters nest (any extents, gaps
between them, on lanes and warps; a few that do not nest, which the compiler must reject),
register iters in a random order with gaps, thread and register replicas, memory shapes
the tile overhangs, origins (some negative) as constants or kernel arguments, every scope a
copy has and every element type. The differential suite runs them with the reductions
(``random_kernels.sample``). No MLIR.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass

import numpy as np

from ..vocab import DEFAULT_CHIP
from . import reference_copy as rc
from .cases import _copies, private_type
from .harness import _BITS, Run, module_text, random_values

_SCOPE_THREADS = {"thread": 1, "warp": 32, "warpgroup": 128}


@dataclass(frozen=True)
class CopyKernel:
    name: str
    op: rc.CopyOp
    block: int
    origin_args: bool = False  # the origin comes in kernel arguments, not constants
    known_block: bool = False
    special: float = 0.0
    grid: int = 1
    fold: str = "linear"  # (modules are grouped by fold)

    @property
    def ops(self) -> tuple:
        return (self.op,)

    @property
    def tag(self) -> str:
        return "copy"

    def describe(self) -> str:
        return f"{self.op.scope}-scope {self.op.direction} of {self.op.dtype}"

    def must_reject(self, documented: bool = False) -> str | None:
        why = rc.nesting_problem(self.op)
        return f"op 0: {why}" if why else None

    def to_json(self) -> dict:
        return {"copy": True, **{k: v for k, v in asdict(self).items() if k != "op"}, "op": asdict(self.op)}

    @staticmethod
    def from_json(d: dict) -> CopyKernel:
        tup = lambda v: tuple(v) if isinstance(v, list) else v  # noqa: E731
        rest = {k: v for k, v in d.items() if k not in ("copy", "op")}
        return CopyKernel(op=rc.CopyOp(**{k: tup(v) for k, v in d["op"].items()}), **rest)

    def text(self, chip: str = DEFAULT_CHIP) -> str:
        return module_text([self], chip)

    def _types(self):
        op = self.op
        mem = f"memref<{'x'.join(map(str, op.mem_shape))}x{op.dtype}>"
        return mem, f"memref<{self.block}x{op.regs}x{op.dtype}>", private_type((op.regs,), op.dtype)

    def lines(self) -> tuple[list[str], list[str]]:
        op, (mem_t, r_t, t_t) = self.op, self._types()
        args = [f"%M: {mem_t}", f"%R: {r_t}"] + [f"%o{d}: index" for d in range(len(op.mem_shape))] * self.origin_args
        body = ["%tid = gpu.thread_id x"] + [f"%c{n} = arith.constant {n} : index" for n in range(op.regs)]
        if not self.origin_args:
            body += [f"%o{d} = arith.constant {o} : index" for d, o in enumerate(op.origin)]
        body.append(f"%t = memref.alloca() : {t_t}")
        body += _copies("r", (op.regs,), "%R", r_t, "%t", t_t, True)
        pad = ""
        if op.padding_bits is not None:
            pad = f", padding = {op.padding_bits:#x} : {op.dtype}"
        elif op.padding is not None:
            pad = f", padding = {op.padding!r} : {op.dtype}"
        dst, src, dst_t, src_t = ("%t", "%M", t_t, mem_t) if op.direction == "load" else ("%M", "%t", mem_t, t_t)
        origin = ", ".join(f"%o{d}" for d in range(len(op.mem_shape)))
        body.append(f'"tile.copy"({dst}, {src}, {origin}) {{exec_scope = "{op.scope}", '
                    f'layout = #tile.layout<"{op.layout}">{pad}}} : ({dst_t}, {src_t}{", index" * len(op.mem_shape)}) -> ()')
        if op.direction == "load":
            body += _copies("w", (op.regs,), "%R", r_t, "%t", t_t, False)
        attrs = f" attributes {{known_block_size = array<i32: {self.block}, 1, 1>}}" if self.known_block else ""
        func = [f"// {self.name}: a {op.scope}-scope {op.direction} of {op.dtype}, one block of {self.block} thread(s).",
                f"gpu.func @{self.name}({', '.join(args)}) kernel{attrs} {{", *("  " + line for line in body),
                "  gpu.return", "}"]
        return [], func

    def inputs(self, rng: np.random.Generator) -> Run:
        """``Run(x=[memory, registers] before, buffers=[memory, registers, origin...])``."""
        op = self.op
        mem = random_values(rng, op.mem_shape, op.dtype, self.special)
        regs = random_values(rng, (self.block, op.regs), op.dtype, self.special)
        return Run([mem.copy(), regs.copy()], None, [mem, regs, *(op.origin if self.origin_args else ())])

    def _changed(self) -> int:
        return 1 if self.op.direction == "load" else 0

    def judge(self, run: Run, evidence: bool = False) -> list[str]:
        """Every register (load) or memory element (store) whose bits are not the reference's."""
        op, (mem, regs) = self.op, run.x
        expect = rc.load(op, mem, regs) if op.direction == "load" else rc.store(op, mem, regs)
        what = "register" if op.direction == "load" else "memory element"
        bits = _BITS[op.dtype]
        e, g = np.asarray(expect).view(bits), np.asarray(run.buffers[self._changed()]).view(bits)
        bad = np.argwhere(e != g)
        if not len(bad):
            return []
        shown = "; ".join(f"{what} {tuple(int(i) for i in at)}: got {int(g[tuple(at)]):#x}, want {int(e[tuple(at)]):#x}"
                          for at in bad[:6])
        return [f"op 0: {len(bad)} of {e.size} {what}s wrong: {shown}"]

    def save(self, arrays: dict, fresh: Run, out: Run | None) -> None:
        arrays[f"{self.name}.M"], arrays[f"{self.name}.R"] = fresh.x
        if out is not None:
            arrays[f"{self.name}.I"] = out.buffers[self._changed()]

    def load(self, data) -> Run:
        mem, regs = data[f"{self.name}.M"], data[f"{self.name}.R"]
        return Run([mem, regs], None, [mem.copy(), regs.copy(), *(self.op.origin if self.origin_args else ())])

    def same_as_interpreter(self, run: Run, data) -> bool:
        key = f"{self.name}.I"
        return key not in data or np.asarray(run.buffers[self._changed()]).tobytes() == data[key].tobytes()


def random_copy_kernel(rng: random.Random, name: str) -> CopyKernel:
    """One random copy (module docstring)."""
    while True:
        kernel = _draw(rng, name)
        if kernel is not None:
            return kernel


def _thread_iters(rng: random.Random, scope: str, warps: int) -> list:
    """Thread iters (extent, stride, axis) that nest, in the order they nest: each stride
    at least what the ones before reach (a gap of 0-2 more); lanes first, then warps."""
    out, reach = [], 1
    lanes = {"thread": 0, "warp": 32, "warpgroup": 128, "cta": 32}[scope]
    axis = "tid_in_wg" if scope == "warpgroup" and rng.random() < 0.5 else "laneid"
    for _ in range(rng.randint(0 if scope == "thread" else 1, 3)):
        stride = reach + rng.choice((0, 0, 0, 1, 2)) * (reach > 1)
        extent = rng.choice((2, 2, 3, 4, 4, 5, 8, 16))
        if (extent - 1) * stride + reach > lanes:
            break
        out.append((extent, stride, axis))
        reach = stride * extent
    if scope == "cta" and warps > 1:
        out.append((warps, 1, "warpid"))
    return out


def _draw(rng: random.Random, name: str) -> CopyKernel | None:
    scope = rng.choice(rc.COPY_SCOPES[1:] + ("warp",) + rc.COPY_SCOPES[:1])
    dtype = rng.choice(("f32", "f16", "bf16", "f64", "i32", "i64"))
    rank = rng.randint(1, 3)
    warps = rng.choice((1, 2, 3, 4)) if scope == "cta" else 1
    dims: list[list] = [[] for _ in range(rank)]
    replica = []
    for extent, stride, axis in _thread_iters(rng, scope, warps):
        where = rng.random()
        (replica if where < 0.15 else dims[rng.randrange(rank)]).append((extent, stride, axis))
    if rng.random() < 0.05 and any(dims):  # thread iters that do not nest
        d = next(d for d in dims if d)
        extent, stride, axis = d[0]
        if axis != "warpid":
            d[0] = (3, stride + 1, axis)
            d.append((2, stride + 2, axis))
    regs = []
    for d in range(rank):
        for _ in range(rng.randint(0 if dims[d] else 1, 2)):
            regs.append((d, rng.choice((1, 2, 3, 4, 8))))
    rng.shuffle(regs)
    stride = 1
    for d, extent in reversed(regs):  # row-major over a random order, with gaps
        dims[d].append((extent, stride, "m"))
        stride = stride * extent + (rng.random() < 0.2)
    span = stride
    if rng.random() < 0.15:
        replica.append((2, span, "m"))
        span *= 2
    for d in dims:
        rng.shuffle(d)
    text = "S[(" + ", ".join("(" + ", ".join(str(e) for e, _, _ in d) + ")" for d in dims) + ") : (" + \
        ", ".join("(" + ", ".join(f"{s}@{a}" if a != "m" else str(s) for _, s, a in d) + ")" for d in dims) + ")]"
    if replica:
        text += " + R[(" + ", ".join(str(e) for e, _, _ in replica) + ") : (" + \
            ", ".join(f"{s}@{a}" if a != "m" else str(s) for _, s, a in replica) + ")]"
    tile_shape = [math.prod(e for e, _, _ in d) for d in dims]
    mem_shape = tuple(max(1, e + rng.randint(-e // 2, e)) for e in tile_shape)
    origin = tuple(rng.choice((0, 0, rng.randint(-2, max(0, m - 1)))) for m in mem_shape)
    has_threads = any(a != "m" for d in dims for _, _, a in d) or any(a != "m" for _, _, a in replica)
    direction = "load" if rng.random() < 0.6 or (scope != "thread" and not has_threads) else "store"
    padding = padding_bits = None
    if direction == "load" and rng.random() < 0.7:
        if dtype in ("i32", "i64"):
            padding = rng.randint(-1000, 1000)
        else:  # any bits; a NaN of a random payload, quiet or signaling, in 30%
            width, mantissa = {"f16": (16, 10), "bf16": (16, 7), "f32": (32, 23), "f64": (64, 52)}[dtype]
            exponent = ((1 << (width - 1 - mantissa)) - 1) << mantissa
            padding_bits = (exponent | rng.randint(1, (1 << mantissa) - 1) if rng.random() < 0.3
                            else rng.getrandbits(width - 1)) | (rng.getrandbits(1) << (width - 1))
    block = 32 * warps if scope == "cta" else _SCOPE_THREADS[scope]
    op = rc.CopyOp(scope, direction, dtype, text, mem_shape, origin, max(span, 1), padding, padding_bits)
    if rc.copy_problems(op, warps=warps if scope == "cta" else None):
        return None
    return CopyKernel(name, op, block, origin_args=rng.random() < 0.5, known_block=scope == "cta" and rng.random() < 0.5,
                      special=rng.choice((0.0, 0.1, 0.3)))
