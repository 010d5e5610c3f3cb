"""What a lowering that crosses warps needs: thread indices, barriers and scratch.

Everything builds at the current insertion point and location, as ``emit`` does.

* ``scope_thread(scope, block)``: the thread's index inside its instance of the exec
  scope, and the instance's index in the block: for a warp, its lane and warp w of the
  block; for a warpgroup, its index in the warpgroup and warpgroup w; for a cta, the
  linear thread id and 0.
  The linear thread id is ``x + y * Dx + z * Dx * Dy``; where the function's
  ``known_block_size`` says the block is one-dimensional, it is ``x``.
* ``scope_thread_index(scope, block)``: the thread's index in its instance of the scope,
  as the layouts' thread bits number it (at cluster scope, with its CTA's rank).
* ``compress(t, bits)``: the listed bits of ``t``, packed from bit 0 up, in order.
* ``barrier(scope, instance)``: ``gpu.barrier`` for a cta; for a warpgroup a named
  barrier over its own 128 threads (PTX ``bar.sync id, 128``, id
  ``FIRST_NAMED_BARRIER + instance``), never the whole block; for a warp
  ``nvvm.bar.warp.sync`` over its 32 lanes (``__syncwarp()``); nothing for a thread.
* ``Site``: where an op sits. It allocates the op's own scratch, a
  ``memref.global`` in workgroup memory at the enclosing symbol table, named
  ``tile_scratch_<n>`` and carrying a ``tile.scratch`` attribute that says what it
  holds; and, for an op that may run more than once (inside a loop, in a function with
  several blocks, or in a function that is not a kernel and may be called again), a
  phase counter at the function's entry that alternates between two halves of the
  scratch.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir.dialects import arith, gpu, memref, nvvm

from ..ir import ir
from ..vocab import CTA_BITS_BASE, FIRST_NAMED_BARRIER, WARP_SIZE, WARPGROUP_SIZE, address_space
from . import emit

# Ops whose regions run at most once each time the op runs: anything else (scf.for,
# scf.while, ...) may run an op inside it several times.
_RUN_ONCE = {"scf.if", "scf.execute_region", "scf.index_switch"}
_FUNCTIONS = {"gpu.func", "func.func"}
_SYMBOL_TABLES = {"gpu.module", "builtin.module"}


def linear_thread_id(block: tuple[int, ...] | None) -> ir.Value:
    """The thread's linear index in its block, as an ``index``."""
    x = gpu.thread_id(gpu.Dimension.x)
    if block is not None and all(e == 1 for e in block[1:]):
        return x
    y, z = gpu.thread_id(gpu.Dimension.y), gpu.thread_id(gpu.Dimension.z)
    dx, dy = gpu.block_dim(gpu.Dimension.x), gpu.block_dim(gpu.Dimension.y)
    return arith.addi(x, arith.muli(arith.addi(y, arith.muli(z, dy)), dx))


def scope_thread(scope: str, block: tuple[int, ...] | None) -> tuple[ir.Value, ir.Value | int]:
    """(thread index in the scope's instance, the instance's index in the block)."""
    linear = linear_thread_id(block)
    if scope == "cta":
        return linear, 0
    size = {"warp": WARP_SIZE, "warpgroup": WARPGROUP_SIZE}[scope]
    shift = size.bit_length() - 1
    return arith.andi(linear, emit.index(size - 1)), arith.shrui(linear, emit.index(shift))


def scope_thread_index(scope: str, block: tuple[int, ...] | None) -> ir.Value:
    """The thread's index t inside its instance of ``scope``, whose bits the layouts'
    thread iters move: its lane, its index in the warpgroup, its linear id, or at
    cluster scope its linear id + 1024 * its CTA's rank in the cluster."""
    if scope != "cluster":
        return scope_thread(scope, block)[0]
    rank = nvvm.read_ptx_sreg_cluster_ctarank(ir.IntegerType.get_signless(32))
    cta = arith.muli(arith.index_cast(ir.IndexType.get(), rank), emit.index(1 << CTA_BITS_BASE))
    return arith.addi(linear_thread_id(block), cta)


def compress(t: ir.Value, bits) -> ir.Value | int:
    """``bits`` of ``t`` (ascending), packed into bits 0, 1, ... of the result."""
    total, out = None, 0
    bits = sorted(bits)
    while bits:
        low, n = bits[0], 1
        while n < len(bits) and bits[n] == low + n:
            n += 1
        part = arith.shrui(t, emit.index(low)) if low else t
        part = arith.andi(part, emit.index((1 << n) - 1))
        if out:
            part = arith.shli(part, emit.index(out))
        total = part if total is None else arith.ori(total, part)
        out += n
        bits = bits[n:]
    return 0 if total is None else total


def barrier(scope: str, instance) -> None:
    """The barrier of one instance of ``scope`` (module docstring)."""
    if scope == "thread":
        return
    if scope == "cta":
        gpu.barrier()
        return
    if scope == "warp":
        nvvm.bar_warp_sync(emit.i32(-1))
        return
    assert scope == "warpgroup", scope
    i32 = ir.IntegerType.get_signless(32)
    if isinstance(instance, int):
        bar_id = emit.i32(FIRST_NAMED_BARRIER + instance)
    else:
        bar_id = arith.addi(arith.index_cast(i32, instance), emit.i32(FIRST_NAMED_BARRIER))
    nvvm.BarrierOp(None, barrierId=bar_id, numberOfThreads=emit.i32(WARPGROUP_SIZE))


@dataclass
class Site:
    """Where an op sits: its function, its symbol table, whether it may run repeatedly."""

    function: ir.Operation
    table: ir.Operation
    repeats: bool

    @classmethod
    def of(cls, op: ir.Operation) -> Site:
        repeats, parent = False, op.parent
        while parent is not None and parent.operation.name not in _FUNCTIONS:
            repeats = repeats or parent.operation.name not in _RUN_ONCE
            parent = parent.parent
        if parent is None:
            raise ValueError("the op is not inside a function")
        function = parent.operation
        repeats = (
            repeats
            or len(function.regions[0].blocks) > 1  # cf branches may loop
            or "gpu.kernel" not in function.attributes  # a device function may be called again
        )
        table = function.parent
        while table is not None and table.operation.name not in _SYMBOL_TABLES:
            table = table.parent
        if table is None:
            raise ValueError("the op's function is not inside a module")
        return cls(function, table.operation, repeats)

    def scratch(self, elem: ir.Type, count: int, what: str) -> ir.Value:
        """A fresh workgroup buffer of ``count`` elements for this op, as a memref value."""
        body = self.table.regions[0].blocks[0]
        taken = {
            ir.StringAttr(op.attributes["sym_name"]).value
            for op in body.operations
            if "sym_name" in op.attributes
        }
        name = next(f"tile_scratch_{n}" for n in range(len(taken) + 1) if f"tile_scratch_{n}" not in taken)
        t = ir.MemRefType.get([count], elem, memory_space=ir.Attribute.parse(address_space("shared")))
        nbytes = count * emit.bit_width(elem) // 8
        with ir.InsertionPoint.at_block_begin(body):
            g = memref.GlobalOp(
                name, ir.TypeAttr.get(t), sym_visibility="private", alignment=16
            )
        g.operation.attributes["tile.scratch"] = ir.StringAttr.get(f"{what}: {nbytes} bytes")
        return memref.get_global(t, name)

    def phase(self) -> ir.Value:
        """0 or 1, alternating each time the op runs (a counter at the function's entry)."""
        return arith.index_cast(ir.IndexType.get(), self.runs(2))

    def runs(self, period: int) -> ir.Value:
        """How many times the op has run before, modulo ``period`` (a power of two), as an
        i32: a counter at the function's entry, advanced each time the op runs."""
        i32 = ir.IntegerType.get_signless(32)
        counter_t = ir.MemRefType.get([1], i32, memory_space=ir.Attribute.parse(address_space("local")))
        entry = self.function.regions[0].blocks[0]
        with ir.InsertionPoint.at_block_begin(entry):
            counter = memref.alloca(counter_t, [], [])
            zero = arith.constant(ir.IndexType.get(), 0)
            memref.store(arith.constant(i32, 0), counter, [zero])
        now = memref.load(counter, [emit.index(0)])
        after = arith.xori(now, emit.i32(1)) if period == 2 else arith.andi(arith.addi(now, emit.i32(1)), emit.i32(period - 1))
        memref.store(after, counter, [emit.index(0)])
        return now
