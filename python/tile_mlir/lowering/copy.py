"""The lowering of ``tile.copy``: the variants ``copy_vector`` and ``copy_scalar``.

Both accept a valid op (``tile_mlir.analysis_copy``) whose layout's thread iters nest
(``copy_plan``). ``copy_vector`` (priority 10) moves each thread's consecutive elements
of a memory row as vectors of up to 16 bytes; it applies where the layout gives a thread
at least two consecutive elements and the alignment of every access is proven (or
asserted with ``alignment``) for two or more. ``copy_scalar`` (priority 0) moves one
element at a time and takes every valid op. docs/lowering-copy.md shows the IR and PTX.

The emitted IR, in order, under the op's location:

1. ``tile.copy.thread``: the thread's index in its scope (``gpu.lane_id``, the thread id
   in its warpgroup, or in the block), its digits on the layout's thread iters, and so
   the tile coordinate of its first element in each dim; where some threads hold
   nothing (or, for a store, hold a replica's copy), one ``scf.if`` around the rest.
2. ``tile.copy.bounds``: the memory dims (``memref.dim`` where dynamic) and the start
   index in each (origin + the thread's coordinate).
3. ``tile.copy.loop``: one access per step of an ``scf.for`` that LLVM unrolls fully
   (none when there is one access): the register slot and the memory index of the
   access, an in-bounds condition per memory dim that is not statically in bounds, and
   the access itself:

   * a vector that cannot run past the end of its row is in or out as a whole: a
     ``vector.maskedload``/``maskedstore`` whose mask is that one condition, broadcast
     (LLVM makes it one predicated ``ld.global.v4``/``st.global.v4``);
   * a vector that may run past the end (a dynamic row length, or one that is not a
     multiple of the width): ``scf.if`` the whole vector is inside, a plain
     ``vector.load``/``store``, else, element by element, a ``memref.load`` under its
     own bound (padding otherwise) or a ``maskedstore`` with a mask per element (LLVM
     splits both into predicated scalar accesses; its NVPTX backend asserts on a
     masked load whose pass-through is the padding);
   * a scalar: ``scf.if`` inside, ``memref.load``/``store`` (a load yields ``padding``
     otherwise).

   A load writes the registers of every register-replica copy; a store reads the first.
"""

from __future__ import annotations

import math

from mlir.dialects import arith, gpu, memref, scf, vector

from ..analysis import known_block_size
from ..analysis_copy import CopyInfo, analyze_copy
from ..dispatch import predicate, register_dispatch
from ..ir import ir
from ..vocab import CACHE_MARK
from . import emit, threads
from .copy_facts import read_facts
from .copy_plan import CopyPlan, Facts
from .registers import name

# --- predicates ------------------------------------------------------------------------


def _analysis(op, ctx):
    return ctx.analysis if ctx.analysis is not None else analyze_copy(op)


def copy_valid(op, ctx):
    """The op is valid (docs/spec.md); the reasons are tile-verify's errors."""
    errors = _analysis(op, ctx).errors
    return not errors, "; ".join(errors)


def threads_nest(op, ctx):
    """The layout's thread iters nest, so a thread's digits can be read off its index."""
    info = _analysis(op, ctx).info
    if info is None:
        return False, "the op is invalid"
    problem = CopyPlan(info).nest_problem()
    return problem is None, problem or ""


def vectors_apply(op, ctx):
    """Two or more consecutive elements per access, proven aligned."""
    info = _analysis(op, ctx).info
    if info is None:
        return False, "the op is invalid"
    width, why = CopyPlan(info).vector_width(read_facts(op, info))
    if width > 1:
        return True, ""
    return False, "; ".join(why)


_COMMON = (predicate("copy_valid", copy_valid), predicate("threads_nest", threads_nest))


@register_dispatch("tile.copy", "cuda", variant="copy_vector", priority=10,
                   when=[*_COMMON, predicate("vectors_apply", vectors_apply)])
def lower_vector(op, ctx, rewriter):
    info = ctx.analysis.info
    plan = CopyPlan(info)
    facts = read_facts(op, info)
    width, _ = plan.vector_width(facts)
    _lower(op, rewriter, plan, facts, width)


@register_dispatch("tile.copy", "cuda", variant="copy_scalar", priority=0, when=list(_COMMON))
def lower_scalar(op, ctx, rewriter):
    info = ctx.analysis.info
    _lower(op, rewriter, CopyPlan(info), read_facts(op, info), 1)


def _lower(op, rewriter, plan: CopyPlan, facts: Facts, width: int) -> None:
    with rewriter.ip, op.location, emit.constant_cache():
        _Emitter(op, plan, facts, width).emit()
    rewriter.erase_op(op)


# --- the emitter -------------------------------------------------------------------------


class _Emitter:
    def __init__(self, op, plan: CopyPlan, facts: Facts, width: int):
        info: CopyInfo = plan.info
        self.info, self.plan, self.facts, self.width = info, plan, facts, width
        self.load = info.direction == "load"
        self.regs = op.operands[info.register_operand]
        self.mem = op.operands[info.memory_operand]
        self.origin = list(op.operands)[2:]
        self.block = known_block_size(op)
        self.elem = ir.MemRefType(self.mem.type).element_type
        self.iters = plan.accesses(width)
        self.straddle = plan.may_straddle(facts, width)
        self.checked = [d for d in range(plan.rank) if not plan.in_bounds(facts, d)]
        self.mask = None  # a whole-vector mask that no access changes, made once

    def _marked(self, access):
        """``access`` (a memory access of the op's memory, or its result), marked with the
        op's cache hint for tile-cache-hints (which gives it its PTX cache operator)."""
        if self.info.cache is not None:
            op = access.owner if isinstance(access, ir.Value) else access.operation
            op.attributes[CACHE_MARK] = ir.StringAttr.get(self.info.cache)
        return access

    def emit(self) -> None:
        with name("tile.copy.thread"):
            coords, holds = self._thread()
        if holds is None:
            self._body(coords)
            return
        with name("tile.copy.thread"):
            branch = scf.IfOp(holds)
            with ir.InsertionPoint(branch.then_block):
                self._body(coords)
                scf.yield_([])

    # -- 1. the thread's coordinates ---------------------------------------------------

    def _thread(self):
        """(per dim: the tile coordinate of the thread's first element, the condition
        that the thread takes part, or None when every thread does)."""
        plan, coords, checks = self.plan, [0] * self.plan.rank, []
        iters = plan.threads
        if not iters:
            return coords, None
        rest = self._thread_index()
        for k in range(len(iters) - 1, -1, -1):
            it = iters[k]
            top = self.facts.threads - 1 if k == len(iters) - 1 else iters[k + 1].weight - 1
            digit = rest if it.weight == 1 else arith.divui(rest, emit.index(it.weight))
            if top // it.weight >= it.extent:
                checks.append(arith.cmpi(arith.CmpIPredicate.ult, digit, emit.index(it.extent)))
            if it.dim is None:
                if not self.load:  # only replica copy 0 stores
                    checks.append(arith.cmpi(arith.CmpIPredicate.eq, digit, emit.index(0)))
            else:
                term = digit if it.inner == 1 else arith.muli(digit, emit.index(it.inner))
                coords[it.dim] = emit.add_slots(coords[it.dim], term)
            if it.weight > 1:
                rest = arith.remui(rest, emit.index(it.weight))
        if iters[0].weight > 1:  # a thread between two digits' places holds nothing
            checks.append(arith.cmpi(arith.CmpIPredicate.eq, rest, emit.index(0)))
        return coords, _all(checks)

    def _thread_index(self) -> ir.Value:
        scope = self.info.exec_scope
        if scope == "warp":
            return gpu.lane_id()
        if scope == "warpgroup":
            return threads.scope_thread("warpgroup", self.block)[0]
        return threads.linear_thread_id(self.block)

    # -- 2. and 3. the accesses ----------------------------------------------------------

    def _body(self, coords) -> None:
        moved = {it.dim for it in self.iters}
        with name("tile.copy.bounds"):
            starts = [emit.add_slots(self._origin(d), c) for d, c in enumerate(coords)]
            extents = {d: self._extent(d) for d in self.checked}
            # dims that no access moves along: one check for all accesses
            fixed = [(d, self._inside(starts[d], extents[d])) for d in self.checked if d not in moved]
            pad = self._padding() if self.load else None
            if self.width > 1 and fixed and len(fixed) == len(self.checked) and not self.straddle:
                self.mask = vector.broadcast(_mask_type(self.width), _all(c for _, c in fixed))
        count = math.prod(it.extent for it in self.iters)
        if count == 1:
            self._access(0, starts, extents, fixed, pad)
            return
        with name("tile.copy.loop"):
            loop = emit.unrolled_for(0, count)
            with ir.InsertionPoint(loop.body):
                self._access(loop.induction_variable, starts, extents, fixed, pad)
                scf.yield_([])

    def _origin(self, d: int):
        """The origin index of dim ``d``: a Python int where it is a constant."""
        c = self.facts.constant[d]
        return c if c is not None else self.origin[d]

    @staticmethod
    def _inside(index, extent) -> ir.Value:
        if isinstance(index, int):
            index = emit.index(index)
        return arith.cmpi(arith.CmpIPredicate.ult, index, extent)

    def _extent(self, d: int) -> ir.Value:
        extent = self.info.memory.shape[d]
        return emit.index(extent) if extent is not None else memref.dim(self.mem, emit.index(d))

    def _padding(self) -> ir.Value:
        if self.info.padding is not None:
            scalar = ir.Attribute.parse(self.info.padding)
        elif emit.is_float(self.elem):
            scalar = ir.FloatAttr.get(self.elem, 0.0)
        else:
            scalar = ir.IntegerAttr.get(self.elem, 0)
        if self.width == 1:
            return arith.constant(self.elem, scalar)
        vtype = ir.VectorType.get([self.width], self.elem)
        return arith.constant(vtype, ir.DenseElementsAttr.get_splat(vtype, scalar))

    def _access(self, i, starts, extents, fixed, pad) -> None:
        iters, made = self.iters, {}

        def linear(strides):  # one value per distinct linear map of i (slot and offsets)
            key = tuple(zip((it.extent for it in iters), strides))
            if key not in made:
                made[key] = emit.slot_of(i, list(key))
            return made[key]

        slot = linear(it.slot for it in iters)
        index = [
            emit.add_slots(start, linear(it.inner if it.dim == d else 0 for it in iters))
            for d, start in enumerate(starts)
        ]
        index = [v if not isinstance(v, int) else emit.index(v) for v in index]
        done = {d for d, _ in fixed}
        inside = fixed + [(d, self._inside(index[d], extents[d])) for d in self.checked if d not in done]
        if self.width == 1:
            self._scalar(slot, index, _all(c for _, c in inside), pad)
        else:
            self._vector(slot, index, inside, extents, pad)

    def _scalar(self, slot, index, inside, pad) -> None:
        with name(f"tile.copy.{self.info.direction}"):
            if self.load:
                if inside is None:
                    value = self._marked(memref.load(self.mem, index))
                else:
                    branch = scf.IfOp(inside, [self.elem], has_else=True)
                    with ir.InsertionPoint(branch.then_block):
                        scf.yield_([self._marked(memref.load(self.mem, index))])
                    with ir.InsertionPoint(branch.else_block):
                        scf.yield_([pad])
                    value = branch.results[0]
                self._write_registers(slot, value)
                return
            value = self._read_registers(slot)
            if inside is None:
                self._marked(memref.store(value, self.mem, index))
                return
            branch = scf.IfOp(inside)
            with ir.InsertionPoint(branch.then_block):
                self._marked(memref.store(value, self.mem, index))
                scf.yield_([])

    def _vector(self, slot, index, inside, extents, pad) -> None:
        vtype = ir.VectorType.get([self.width], self.elem)
        align = self.width * self.plan.bytes
        last = self.plan.rank - 1
        value = None if self.load else self._read_registers(slot)
        with name(f"tile.copy.{self.info.direction}"):
            if not inside:
                if self.load:
                    value = self._marked(vector.load(vtype, self.mem, index, alignment=align))
                else:
                    self._marked(vector.store(value, self.mem, index, alignment=align))
            elif not self.straddle:
                mask = self.mask or vector.broadcast(_mask_type(self.width), _all(c for _, c in inside))
                value = self._masked(vtype, index, mask, pad, value, align)
            else:
                # the whole vector inside: the fast path; else a mask per element
                others = [c for d, c in inside if d != last]
                end = emit.add_slots(index[last], self.width - 1)
                full = _all([*(c for _, c in inside), self._inside(end, extents[last])])
                branch = scf.IfOp(full, [vtype] if self.load else [], has_else=True)
                with ir.InsertionPoint(branch.then_block):
                    if self.load:
                        scf.yield_([self._marked(vector.load(vtype, self.mem, index, alignment=align))])
                    else:
                        self._marked(vector.store(value, self.mem, index, alignment=align))
                        scf.yield_([])
                with ir.InsertionPoint(branch.else_block):
                    bits = [
                        _all([*others, self._inside(emit.add_slots(index[last], j), extents[last])])
                        for j in range(self.width)
                    ]
                    if self.load:  # element by element (LLVM's NVPTX asserts on a masked load's padding)
                        scf.yield_([self._elementwise_load(vtype, index, bits, pad)])
                    else:
                        mask = vector.from_elements(_mask_type(self.width), bits)
                        self._masked(vtype, index, mask, pad, value, align)
                        scf.yield_([])
                value = branch.results[0] if self.load else None
        if self.load:
            self._write_registers(slot, value)

    def _elementwise_load(self, vtype, index, bits, pad) -> ir.Value:
        """The vector at ``index``, each element loaded where its bit holds, else the
        padding's: scalar loads under ``scf.if``, what LLVM would split a masked load into."""
        last = self.plan.rank - 1
        elements = []
        for j, inside in enumerate(bits):
            at = [*index[:last], _index(emit.add_slots(index[last], j))]
            branch = scf.IfOp(inside, [self.elem], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                scf.yield_([self._marked(memref.load(self.mem, at))])
            with ir.InsertionPoint(branch.else_block):
                scf.yield_([vector.extract(pad, [], [j])])
            elements.append(branch.results[0])
        return vector.from_elements(vtype, elements)

    def _masked(self, vtype, index, mask, pad, value, align):
        if self.load:
            return self._marked(vector.maskedload(vtype, self.mem, index, mask, pad, alignment=align))
        self._marked(vector.maskedstore(self.mem, index, mask, value, alignment=align))
        return None

    # -- registers --------------------------------------------------------------------

    def _contiguous_registers(self) -> bool:
        """Whether a vector's registers are consecutive slots of a rank-1 register memref."""
        return len(self.info.registers.shape) == 1 and self.plan.run.stride == 1

    def _write_registers(self, slot, value) -> None:
        shape = self.info.registers.shape
        with name("tile.copy.registers"):
            for copy in self.plan.copies:
                base = emit.add_slots(slot, copy)
                if self.width == 1:
                    emit.store(value, self.regs, shape, base)
                elif self._contiguous_registers():
                    vector.store(value, self.regs, emit.indices(shape, base))
                else:
                    for j in range(self.width):
                        element = vector.extract(value, [], [j])
                        emit.store(element, self.regs, shape, emit.add_slots(base, j * self.plan.run.stride))

    def _read_registers(self, slot) -> ir.Value:
        shape = self.info.registers.shape
        with name("tile.copy.registers"):
            if self.width == 1:
                return emit.load(self.regs, shape, slot)
            vtype = ir.VectorType.get([self.width], self.elem)
            if self._contiguous_registers():
                return vector.load(vtype, self.regs, emit.indices(shape, slot))
            elements = [
                emit.load(self.regs, shape, emit.add_slots(slot, j * self.plan.run.stride)) for j in range(self.width)
            ]
            return vector.from_elements(vtype, elements)


def _mask_type(width: int) -> ir.VectorType:
    return ir.VectorType.get([width], ir.IntegerType.get_signless(1))


def _all(conditions) -> ir.Value | None:
    """The conjunction of ``conditions`` (i1 values), or None for none."""
    out = None
    for c in conditions:
        out = c if out is None else arith.andi(out, c)
    return out


def _index(v) -> ir.Value:
    return emit.index(v) if isinstance(v, int) else v
