"""How the lowering combines two partials of a ``tile.reduce``: one abstraction for the
named kinds, argmax/argmin and combiner functions (docs/spec.md, "Combiner reductions").

A *partial* is the list of the k values an op carries per element (k = 1 for a named
kind; the value and its index for argmax/argmin; the combiner's k operands). Every
variant folds partials with one ``Combiner``:

* ``element(plan, srcs, base, r)``: the partial of src element ``r`` of the dst slot at
  ``base`` (for argmax/argmin: the value and its generated index);
* ``combine(left, right)``: the partial of ``left`` then ``right``, where ``left``
  covers the lower reduced coordinates (in-thread the accumulator, in a butterfly step
  the lane whose bit is clear, across warps and CTAs the accumulator, with accum the old
  value);
* ``commutative``: whether ``combine`` gives the same bits with its operands swapped,
  so that a butterfly step may skip the select that puts the lower lane's value left;
* ``result(partial)``: the values to store, with NaN made canonical where the kind
  promises it (``registers.finish``).

``Named`` is a named kind (``emit.combine``), ``ArgBest`` argmax/argmin, ``Function`` a
combiner function, whose body is cloned at each combine (its ops are pure arith and
math, checked by ``tile_mlir.analysis_combiner``). ``of(op, info)`` builds the one an op
needs. Partials move through scratch memory as *words* (``Words``): the values
themselves when the k types are one, else 32-bit integers holding their bits.
"""

from __future__ import annotations

from mlir.dialects import arith

from ..analysis_combiner import combiner_function
from ..ir import ir
from ..vocab import ARG_KINDS
from . import emit


class Combiner:
    """Base: the k element types; ``element``, ``combine``, ``result`` (module docstring)."""

    commutative = False

    def __init__(self, types: list[ir.Type]):
        self.types = types

    @property
    def k(self) -> int:
        return len(self.types)

    def prepare(self, plan) -> None:
        """Build, at the lowering's top level, what ``element`` needs in every thread."""

    def element(self, plan, srcs, base, r) -> list[ir.Value]:
        return [plan.load(src, base, r) for src in srcs]

    def combine(self, left: list[ir.Value], right: list[ir.Value]) -> list[ir.Value]:
        raise NotImplementedError

    def combine_in_order(self, left: list[ir.Value], right: list[ir.Value]) -> list[ir.Value]:
        """``combine`` where every coordinate ``right`` covers is above every one ``left``
        covers (a thread's own fold: its elements in row-major order of the reduced
        coordinates). The same bits as ``combine``; a combiner may use the order to do
        less (argmax/argmin)."""
        return self.combine(left, right)

    def result(self, plan, values: list[ir.Value]) -> list[ir.Value]:
        return values

    def two_phase(self) -> bool:
        """Whether a thread's own fold is ``registers._fold_two_phase`` (argmax/argmin),
        not ``combine_in_order`` element by element."""
        return False


class Named(Combiner):
    """A named kind: one value, ``emit.combine``. NaN results are canonical: the f32, f16
    and bf16 arithmetic gives the canonical NaN, and ``result`` makes an f64 NaN (or an
    element no combine touched) canonical."""

    commutative = True

    def __init__(self, kind: str, t: ir.Type):
        super().__init__([t])
        self.kind = kind

    def combine(self, left, right):
        return [emit.combine(self.kind, left[0], right[0])]

    def result(self, plan, values):
        (v,) = values
        if emit.is_float(v.type) and (str(v.type) == "f64" or not plan.combines()):
            v = emit.canonical_nan(v)
        return [v]


class ArgBest(Combiner):
    """argmax/argmin: (value, index). The better of two is the one with the greater
    (argmin: smaller) value; a NaN beats every number; between equal values (-0 and +0
    are equal) or two NaNs, the smaller index. That is a total order on (value, index)
    pairs of distinct indices, so ``combine`` is commutative. The index of src element r
    is its row-major position among the reduced coordinates (``plan.reduced_index``)."""

    commutative = True

    def __init__(self, kind: str, value: ir.Type, index: ir.Type):
        super().__init__([value, index])
        self.kind = kind
        self.thread_base = None

    def prepare(self, plan) -> None:
        self.thread_base = plan.thread_index_base()

    def element(self, plan, srcs, base, r):
        (src,) = srcs
        value = plan.load(src, base, r)
        return [value, _index_value(emit.add_slots(self.thread_base, plan.reduced_index(r)), self.types[1])]

    def combine(self, left, right):
        (lv, li), (rv, ri) = left, right
        smaller = arith.cmpi(arith.CmpIPredicate.slt, ri, li)
        if emit.is_float(lv.type):
            better = arith.cmpf(arith.CmpFPredicate.OGT if self.kind == "argmax" else arith.CmpFPredicate.OLT, rv, lv)
            equal = arith.cmpf(arith.CmpFPredicate.OEQ, rv, lv)
            r_nan = arith.cmpf(arith.CmpFPredicate.UNO, rv, rv)
            l_nan = arith.cmpf(arith.CmpFPredicate.UNO, lv, lv)
            numbers = arith.ori(r_nan, arith.ori(better, arith.andi(equal, smaller)))
            take = arith.select(l_nan, arith.andi(r_nan, smaller), numbers)
        else:
            better = arith.cmpi(arith.CmpIPredicate.sgt if self.kind == "argmax" else arith.CmpIPredicate.slt, rv, lv)
            equal = arith.cmpi(arith.CmpIPredicate.eq, rv, lv)
            take = arith.ori(better, arith.andi(equal, smaller))
        return [arith.select(take, rv, lv), arith.select(take, ri, li)]

    def combine_in_order(self, left, right):
        """Right's index is the greater, so a tie keeps left, and only a strictly better
        right value, or a NaN right after a number left, wins: for argmax
        ``(lv <u rv) and lv is a number`` (``<u``: less, or unordered), two compares and
        two selects instead of ``combine``'s six and a half."""
        (lv, li), (rv, ri) = left, right
        if emit.is_float(lv.type):
            beaten = arith.cmpf(arith.CmpFPredicate.ULT if self.kind == "argmax" else arith.CmpFPredicate.UGT, lv, rv)
            take = arith.andi(beaten, arith.cmpf(arith.CmpFPredicate.ORD, lv, lv))
        else:
            take = arith.cmpi(arith.CmpIPredicate.sgt if self.kind == "argmax" else arith.CmpIPredicate.slt, rv, lv)
        return [arith.select(take, rv, lv), arith.select(take, ri, li)]

    def result(self, plan, values):
        v, i = values
        return [emit.canonical_nan(v) if emit.is_float(v.type) else v, i]

    # --- a thread's own fold in two phases (``registers.fold_registers``) ---------------

    def two_phase(self) -> bool:
        """Whether a thread folds its own elements in two phases
        (``registers.fold_registers``): the best value, then the first index that holds
        it. 16-bit floats and integers. Not f64, whose maximum has no one PTX
        instruction (``max.NaN`` is f32/f16/bf16 only), nor f32, whose in-order fold
        is short already (2 FSETP, FSEL and SEL an element, against FMNMX, FSETP and
        SEL) and measured shorter in the argmax benchmark's chunk loop: 147 and 226
        SASS instructions against at best 155 and 232 in two phases (16384x4096 W1 RB8
        C4, 4096x16384 W4 RB1 C8; the ``scf.if`` of a NaN or zero best keeps ptxas from
        loading the next chunk into this one's registers), where bf16 went from 217
        to 172."""
        t = self.types[0]
        return not emit.is_float(t) or emit.bit_width(t) == 16

    def best(self, a: ir.Value, b: ir.Value) -> ir.Value:
        """The value phase's combine, of two values or two vectors of them:
        ``maximumf``/``minimumf`` (PTX ``max.NaN``/``min.NaN``), ``maxsi``/``minsi``.
        Of numbers it gives the operand with the best value, but of -0 and +0 it gives
        +0 (argmin: -0), not the first."""
        ops = emit.FLOAT_COMBINE if emit.is_float(self.types[0]) else emit.INT_COMBINE
        return ops["maximum" if self.kind == "argmax" else "minimum"](a, b)

    def local_index(self, plan, r) -> ir.Value:
        """``element``'s index of src register ``r``, less the thread's part
        (``with_thread``): a constant once the fold is unrolled."""
        return _index_value(plan.reduced_index(r), self.types[1])

    def with_thread(self, local: ir.Value) -> ir.Value:
        """The index ``local`` (``local_index``) plus the thread's part."""
        if isinstance(self.thread_base, int):
            return local
        return arith.addi(local, _index_value(self.thread_base, self.types[1]))

    def sure(self, best: ir.Value) -> ir.Value | None:
        """Whether the value phase's ``best`` is a number other than a zero (``one(best,
        0)``): then the elements that hold it are those equal to it (``equal``), with
        its bits. None for integers: always."""
        if not emit.is_float(self.types[0]):
            return None
        return arith.cmpf(arith.CmpFPredicate.ONE, best, arith.constant(best.type, 0.0))

    def equal(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """``oeq(x, y)``, ``eq`` for integers (of vectors too)."""
        if emit.is_float(self.types[0]):
            return arith.cmpf(arith.CmpFPredicate.OEQ, x, y)
        return arith.cmpi(arith.CmpIPredicate.eq, x, y)

    def holds(self, x: ir.Value, best: ir.Value) -> ir.Value:
        """Whether element ``x`` (or each of a vector) holds ``best``, the value phase's
        result, whatever it is: ``oeq(x, best) or uno(x, x)``. If ``best`` is a NaN,
        some element is, and only the NaNs hold it; if not, no element is a NaN, and
        only those equal to it hold it (both zeros, if it is a zero)."""
        return arith.ori(self.equal(x, best), arith.cmpf(arith.CmpFPredicate.UNO, x, x))


class Function(Combiner):
    """A combiner function (a ``func.func`` of pure ops): its body, cloned at each combine
    with its arguments replaced by the left then the right values. The result is the
    function's, bit for bit: nothing is made canonical."""

    def __init__(self, fn: ir.Operation):
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        super().__init__(list(ftype.results))
        self.block = fn.regions[0].blocks[0]

    def combine(self, left, right):
        values = dict(zip(self.block.arguments, [*left, *right]))
        for op in self.block.operations:
            op = op.operation
            if op.name == "func.return":
                return [values.get(v, v) for v in op.operands]
            new = op.clone(ip=ir.InsertionPoint.current)
            for i, operand in enumerate(new.operands):
                if operand in values:
                    new.operands[i] = values[operand]
            values.update(zip(op.results, new.results))
        raise AssertionError("a combiner ends in func.return (tile-verify checks it)")


def of(op, info) -> Combiner:
    """The combiner of ``op`` (its checked view ``info``)."""
    dst_types = [ir.MemRefType(v.type).element_type for v in op.operands[: len(info.dsts)]]
    if info.combiner is not None:
        return Function(combiner_function(op, info.combiner))
    if info.kind in ARG_KINDS:
        return ArgBest(info.kind, *dst_types)
    return Named(info.kind, dst_types[0])


def _index_value(index, t: ir.Type) -> ir.Value:
    """``index`` (a Python int or an index value) as a value of the integer type ``t``."""
    if isinstance(index, int):
        return emit.constant(t, index)
    return arith.index_cast(t, index)


# --- partials in scratch memory ---------------------------------------------------------


class Words:
    """How partials of ``types`` sit in scratch memory: one element per value, of the one
    type when every value has it (``elem`` is that type), else 32-bit words (``elem`` is
    i32): a 16-bit value widened into one, a 32-bit value in one, a 64-bit value in two
    (low half first), always bit for bit."""

    def __init__(self, types: list[ir.Type]):
        self.types = types
        self.same = len({str(t) for t in types}) == 1
        self.elem = types[0] if self.same else ir.IntegerType.get_signless(32)
        self.counts = [1 if self.same else max(1, emit.bit_width(t) // 32) for t in types]
        self.size = sum(self.counts)  # elements per partial

    def describe(self) -> str:
        """One partial, in a scratch's description: ``f32``, ``2 x f32`` for two operands
        of one type, ``3 i32 words (i32, f32, f32)``."""
        if self.size == 1:
            return str(self.elem)
        if self.same:
            return f"{self.size} x {self.elem}"
        return f"{self.size} i32 words ({', '.join(map(str, self.types))})"

    def pack(self, partial: list[ir.Value]) -> list[ir.Value]:
        if self.same:
            return list(partial)
        return [w for v in partial for w in _to_words(v)]

    def unpack(self, words: list[ir.Value]) -> list[ir.Value]:
        if self.same:
            return list(words)
        out, at = [], 0
        for t, n in zip(self.types, self.counts):
            out.append(_from_words(words[at:at + n], t))
            at += n
        return out


def _to_words(v: ir.Value) -> list[ir.Value]:
    i32 = ir.IntegerType.get_signless(32)
    bits = emit.bit_width(v.type)
    raw = emit.as_int(v)
    if bits == 32:
        return [raw]
    if bits < 32:
        return [arith.extui(i32, raw)]
    ib = ir.IntegerType.get_signless(bits)
    return [arith.trunci(i32, raw), arith.trunci(i32, arith.shrui(raw, emit.constant(ib, 32)))]


def _from_words(words: list[ir.Value], t: ir.Type) -> ir.Value:
    bits = emit.bit_width(t)
    ib = ir.IntegerType.get_signless(bits)
    if bits == 32:
        raw = words[0]
    elif bits < 32:
        raw = arith.trunci(ib, words[0])
    else:
        lo, hi = (arith.extui(ib, w) for w in words)
        raw = arith.ori(lo, arith.shli(hi, emit.constant(ib, 32)))
    return emit.from_int(raw, t)
