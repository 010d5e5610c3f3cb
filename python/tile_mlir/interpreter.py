"""A CPU interpreter for lowered kernels, in the spirit of Triton's ``TRITON_INTERPRET=1``.

It runs a ``gpu.func`` (inside a ``gpu.module``) at the scf/arith/memref/gpu level, before
NVVM conversion, on the CPU with numpy, for a given grid and block. Kernels can so be
tested, and the lowering checked against numpy, on a machine without a GPU.

Execution model
---------------
* **SIMT in lockstep.** The threads of one block execute every op together. An SSA value
  holds one element per thread: a numpy array of shape ``[nthreads]``, or a numpy scalar
  when the value is uniform over the block (constants, block ids, loop induction
  variables and what is computed from them only). Broadcasting makes the two
  interchangeable. Blocks of the grid run one after another.
* **Threads.** Linear id = x + y*bx + z*bx*by; lane = linear % 32; warp = linear // 32.
* **Control flow.** ``scf.if`` on a per-thread condition runs both branches under lane
  masks and selects its results per lane; a branch no active thread takes is skipped.
  Stores only happen for active threads. ``scf.for`` iterates in Python: its bounds must
  be uniform over the active threads.
* **Warp ops.** ``gpu.shuffle`` follows PTX ``shfl.sync`` as MLIR lowers it (member mask
  ``0xffffffff >> (32 - width)``; clamp ``width - 1``, or ``32 - width`` for ``up``): a lane
  whose source is out of range gets its own value and ``valid = false``. All lanes of a
  warp must execute it together; ``gpu.barrier`` must be reached by all threads.
  ``nvvm.redux.sync`` (i32, the full member mask only) reduces over the 32 lanes of
  each warp and gives every lane the result: ``add`` wraps, ``min``/``max`` are
  signed, ``umin``/``umax`` unsigned.
* **Memory.** A memref kernel argument is the caller's array (row-major, flat).
  Workgroup memory (``#gpu.address_space<workgroup>``) is one array per block; other
  allocations (``memref.alloca``, ``memref.alloc``, private attributions) hold one copy
  per thread. Fresh memory holds NaN (floats) or 0xA5 bytes (integers; ``true`` for i1),
  so that a read before a write shows. Out-of-bounds accesses are errors.
* **Numbers.** f32, f64 and f16 compute in the numpy type of the same name, so every op
  rounds to its type. bf16 values are float32 numbers rounded to bf16 (to nearest even)
  after every op, and are stored as uint16 bits. As NVIDIA GPUs do for f32, f16 and
  bf16, a NaN result of arithmetic is the canonical NaN (positive, all payload bits set),
  and max/min order -0 below +0 (measured on the H200: ``max.f32(+0, -0) = +0`` in
  either order), so results never depend on the operand order. Not modelled: an f64 NaN
  result on the H200 keeps one operand's payload (measured), where this gives the
  canonical NaN; so f64 NaN payloads may differ from the hardware's, NaN-ness never. Integers wrap; i1 is
  bool; index is int64. ``fptosi``/``fptoui`` saturate, and map NaN to 0, as PTX
  ``cvt`` does.

Every kernel is compiled once into a tree of Python closures, one per op, which read
and write a flat list of values by slot numbers fixed at compile time; nothing is
looked up or parsed while a kernel runs. An op the interpreter does not support (see
``SUPPORTED_OPS``) raises ``InterpreterError`` when a launch reaches it.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Mapping

import numpy as np

from .errors import InterpreterError
from .ir import ir, make_context
from .signature import MLIR_TO_NUMPY, ArgSpec, KernelSignature, LaunchError
from .vocab import WARP_SIZE

MAX_BLOCK_THREADS = 1024


class _Unsupported(Exception):
    """Raised while compiling an op the interpreter cannot run (reported when it runs)."""


# ---------------------------------------------------------------------------------------
# Element types

_WORKGROUP = "#gpu.address_space<workgroup>"


class _Elem:
    """An MLIR element type and how its values live in numpy.

    ``dtype`` holds SSA values and private memory, ``storage`` global and workgroup
    memory; they differ only for bf16 (float32 values, uint16 bits).
    """

    def __init__(self, name: str, dtype: str, bits: int):
        self.name = name
        self.bits = bits
        self.is_float = name.startswith(("f", "bf"))
        self.dtype = np.dtype(dtype)
        self.storage = np.dtype("uint16") if name == "bf16" else self.dtype
        self.udtype = np.dtype(f"uint{max(bits, 8)}")  # unsigned reading, bit patterns
        # poison: what fresh memory holds, NaN or 0xA5 bytes (true for i1).
        if self.is_float:
            self.poison = self.dtype.type(np.nan)
            # nan: what float arithmetic returns for NaN, as NVIDIA GPUs do: positive,
            # all payload bits set. (x86 returns a negative NaN for inf - inf, and the
            # first operand's NaN for NaN + NaN: lanes would disagree on the bits.)
            nan_bits = {"f16": 0x7FFF, "bf16": 0x7FFF0000, "f32": 0x7FFFFFFF, "f64": 2**63 - 1}[name]
            self.nan = np.array(nan_bits, f"uint{self.dtype.itemsize * 8}").view(self.dtype)[()]
        elif bits == 1:
            self.poison = np.bool_(True)
        else:
            self.poison = np.frombuffer(b"\xa5" * self.dtype.itemsize, self.dtype)[0]
        # values <-> global and workgroup memory; None: the same
        self.to_storage = self.to_bits if name == "bf16" else None
        self.from_storage = self.from_bits if name == "bf16" else None

    def scalar(self, value):
        """A Python number as a uniform value of this type (OverflowError if out of range)."""
        if self.name == "bf16":
            return _to_bf16(np.float64(value))
        return self.dtype.type(value)

    def wrap(self, value: int) -> int:
        """An integer wrapped to this type's width, as a signed number."""
        half = 1 << (self.bits - 1)
        return ((value + half) & ((half << 1) - 1)) - half

    def to_bits(self, v):
        """Values -> their bit patterns, as unsigned integers of the type's width."""
        if self.name == "bf16":
            return (v.view(np.uint32) >> 16).astype(np.uint16)
        return v.view(self.udtype)

    def from_bits(self, b):
        """Unsigned bit patterns of the type's width -> values."""
        if self.name == "bf16":
            return (b.astype(np.uint32) << 16).view(np.float32)
        return b.view(self.dtype)


_ELEMS = {
    e.name: e
    for e in (
        _Elem("f16", "float16", 16),
        _Elem("bf16", "float32", 16),
        _Elem("f32", "float32", 32),
        _Elem("f64", "float64", 64),
        _Elem("i1", "bool", 1),
        _Elem("i8", "int8", 8),
        _Elem("i16", "int16", 16),
        _Elem("i32", "int32", 32),
        _Elem("i64", "int64", 64),
        _Elem("index", "int64", 64),
    )
}


def _round_bf16(x):
    """float32 values rounded to the nearest bf16 (ties to even); NaN becomes the canonical NaN."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    out = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    nan = (bits & 0x7FFFFFFF) > 0x7F800000
    if np.count_nonzero(nan):
        out = np.where(nan, 0x7FFF0000, out)
    return out.view(np.float32)[()]


def _round_to_odd_f32(x):
    """float64 -> float32 rounded to odd, so that rounding it again to bf16 is exact."""
    x = np.asarray(x, np.float64)
    y = x.astype(np.float32)
    back = y.astype(np.float64)
    bits = y.view(np.uint32) - (np.abs(back) > np.abs(x)).astype(np.uint32)
    bits |= ((back != x) & (x == x)).astype(np.uint32)
    return bits.view(np.float32)[()]


def _to_bf16(x):
    """Float or integer values -> bf16, rounded once (int64 beyond 2**53 rounds twice)."""
    if x.dtype != np.float32:
        x = _round_to_odd_f32(x.astype(np.float64))
    return _round_bf16(x)


def _sext_i1(x):
    """i1 values as sign-extended int8: true is -1."""
    return -(x.astype(np.int8))


# ---------------------------------------------------------------------------------------
# Elementwise op semantics. A "maker" gets (op, operand type, result type) at compile
# time and returns the numpy function that computes the result from the operand values.


def _float_op(fn, rounds=True, canonical=True):
    """A float op: bf16 results are rounded unless the op returns an operand (``rounds``);
    NaN results become the type's canonical NaN unless the op only moves bits (``canonical``)."""

    def make(op, t, _):
        if not t.is_float:
            raise _Unsupported(f"operands of type {t.name}")
        if t.name == "bf16" and rounds:
            return lambda *xs: _round_bf16(fn(*xs))
        if not canonical:
            return fn
        nan = t.nan

        def apply(*xs):
            r = fn(*xs)
            is_nan = r != r
            return np.where(is_nan, nan, r)[()] if np.count_nonzero(is_nan) else r

        return apply

    return make


def _signed_zeros(r, a, b, larger: bool):
    """Order -0 < +0 in a max (``larger``) or min result, as IEEE 754-2019 does.

    numpy returns the first operand of a tie, so max(-0, +0) would depend on the operand
    order, and the lanes of a butterfly could disagree on the sign of a zero.
    """
    zero = r == 0
    if not np.count_nonzero(zero):
        return r
    if larger:
        negative = ~(((a == 0) & ~np.signbit(a)) | ((b == 0) & ~np.signbit(b)))
    else:
        negative = ((a == 0) & np.signbit(a)) | ((b == 0) & np.signbit(b))
    magnitude = np.abs(r)
    return np.where(zero, np.where(negative, -magnitude, magnitude), r)[()]


def _maxnumf(a, b):
    return _signed_zeros(np.fmax(a, b), a, b, True)


def _minnumf(a, b):
    return _signed_zeros(np.fmin(a, b), a, b, False)


def _maximumf(a, b):
    return _signed_zeros(np.maximum(a, b), a, b, True)


def _minimumf(a, b):
    return _signed_zeros(np.minimum(a, b), a, b, False)


def _uniform_nonnegative(a, b) -> bool:
    """Both operands uniform and >= 0: their signed and unsigned readings agree."""
    return type(a) is not np.ndarray and type(b) is not np.ndarray and a >= 0 and b >= 0


def _int_op(fn, unsigned=False, fast=None):
    """An integer op: ``fn`` on signed values, or on their unsigned reading (``unsigned``).

    ``fast`` is the same op for two uniform operands >= 0 (index math, mostly): on numpy
    scalars, Python operators are some 20 times faster than numpy function calls.
    i1 operands are computed as sign-extended int8 (true = -1), keeping the low bit.
    """

    def make(op, t, _):
        if t.is_float:
            raise _Unsupported(f"operands of type {t.name}")
        if t.bits == 1:
            inner = make(op, _ELEMS["i8"], None)
            return lambda a, b: (inner(_sext_i1(a), _sext_i1(b)) & 1).astype(np.bool_)
        general = fn
        if unsigned:
            u, s = t.udtype, t.dtype

            def general(a, b):
                return fn(a.view(u), b.view(u)).view(s)

        if fast is None:
            return general
        return lambda a, b: fast(a, b) if _uniform_nonnegative(a, b) else general(a, b)

    return make


def _bitwise(fn):
    def make(op, t, _):
        if t.is_float:
            raise _Unsupported(f"operands of type {t.name}")
        return fn

    return make


def _divsi(a, b):
    """Signed division rounding toward zero (numpy's // rounds down)."""
    return (a - np.fmod(a, b)) // b


_CMPI = {  # arith::CmpIPredicate -> (comparison, compares unsigned)
    0: (operator.eq, False),
    1: (operator.ne, False),
    2: (operator.lt, False),
    3: (operator.le, False),
    4: (operator.gt, False),
    5: (operator.ge, False),
    6: (operator.lt, True),
    7: (operator.le, True),
    8: (operator.gt, True),
    9: (operator.ge, True),
}


def _cmpi(op, t, _):
    fn, unsigned = _CMPI[op.attributes["predicate"].value]
    if t.is_float:
        raise _Unsupported(f"operands of type {t.name}")
    if unsigned:
        u = t.udtype
        return lambda a, b: fn(a, b) if _uniform_nonnegative(a, b) else fn(a.view(u), b.view(u))
    if t.bits == 1 and fn not in (operator.eq, operator.ne):
        return lambda a, b: fn(_sext_i1(a), _sext_i1(b))
    return fn


def _constant_bool(value: bool):
    def compare(a, b):
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        return np.full(shape, value) if shape else np.bool_(value)

    return compare


def _unordered(a, b):
    return (a != a) | (b != b)


_CMPF = {  # arith::CmpFPredicate -> comparison; NaN compares false in numpy, but !=
    0: _constant_bool(False),
    1: operator.eq,  # oeq
    2: operator.gt,  # ogt
    3: operator.ge,  # oge
    4: operator.lt,  # olt
    5: operator.le,  # ole
    6: lambda a, b: (a < b) | (a > b),  # one
    7: lambda a, b: (a == a) & (b == b),  # ord
    8: lambda a, b: ~((a < b) | (a > b)),  # ueq
    9: lambda a, b: ~(a <= b),  # ugt
    10: lambda a, b: ~(a < b),  # uge
    11: lambda a, b: ~(a >= b),  # ult
    12: lambda a, b: ~(a > b),  # ule
    13: operator.ne,  # une
    14: _unordered,  # uno
    15: _constant_bool(True),
}


def _cmpf(op, t, _):
    if not t.is_float:
        raise _Unsupported(f"operands of type {t.name}")
    return _CMPF[op.attributes["predicate"].value]


def _float_converter(dst):
    if not dst.is_float:
        raise _Unsupported(f"result of type {dst.name}")
    if dst.name == "bf16":
        return _to_bf16
    return lambda x: x.astype(dst.dtype)


def _extf_truncf(op, src, dst):
    if not src.is_float:
        raise _Unsupported(f"operand of type {src.name}")
    return _float_converter(dst)


def _int_to_float(signed: bool):
    def make(op, src, dst):
        if src.is_float:
            raise _Unsupported(f"operand of type {src.name}")
        convert = _float_converter(dst)
        if not signed:
            return lambda x: convert(x.astype(src.udtype))
        if src.bits == 1:
            return lambda x: convert(_sext_i1(x))
        return convert

    return make


def _float_to_int(signed: bool):
    """fptosi/fptoui, saturating and with NaN -> 0 (PTX ``cvt.rzi``; LLVM says poison)."""

    def make(op, src, dst):
        if not src.is_float or dst.is_float or dst.bits == 1:
            raise _Unsupported(f"{src.name} -> {dst.name}")
        if signed:
            lo, hi = -(1 << (dst.bits - 1)), (1 << (dst.bits - 1)) - 1
        else:
            lo, hi = 0, (1 << dst.bits) - 1
        target = dst.dtype if signed else dst.udtype

        def convert(x):
            x = np.asarray(x, np.float64)
            over, under = x >= hi + 1.0, x <= lo - 1.0
            r = np.where(over | under | (x != x), 0.0, x).astype(target)
            r = np.where(over, target.type(hi), np.where(under, target.type(lo), r))
            return r.astype(dst.dtype)[()]

        return convert

    return make


def _int_cast(signed: bool):
    """Integer width changes: sign- or zero-extension (``signed``), or wrapping truncation."""

    def make(op, src, dst):
        if src.is_float or dst.is_float:
            raise _Unsupported(f"{src.name} -> {dst.name}")
        if dst.bits == 1:
            return lambda x: (x & 1).astype(np.bool_)
        if src.bits == 1 and signed:
            return lambda x: -(x.astype(dst.dtype))
        if dst.bits > src.bits and not signed:
            return lambda x: x.astype(src.udtype).astype(dst.dtype)
        return lambda x: x.astype(dst.dtype)

    return make


def _bitcast(op, src, dst):
    if src.bits != dst.bits or src.name == "index" or dst.name == "index":
        raise _Unsupported(f"{src.name} -> {dst.name}")
    return lambda x: dst.from_bits(src.to_bits(x))


# ---------------------------------------------------------------------------------------
# The environment: one flat list of values per block. The first slots hold the launch
# geometry; op results follow, at slots fixed when the kernel is compiled.

_N, _ROWS, _LANE = 0, 1, 2  # thread count (int), linear thread ids, lane ids
_TID, _BID, _BDIM, _GDIM = (3, 4, 5), (6, 7, 8), (9, 10, 11), (12, 13, 14)
_RESERVED = 15

Op = Callable[[list, "np.ndarray | None"], None]  # run(env, mask); mask: active threads


def _run(ops: list[Op], env: list, mask) -> None:
    """Run compiled ops; mask is None when all threads are active."""
    try:
        for fn in ops:
            fn(env, mask)
    except InterpreterError:
        raise
    except Exception as e:  # a numpy failure: name the op, never a bare traceback
        raise InterpreterError(f"{fn.where}: {type(e).__name__}: {e}") from e


def _thread_name(env: list, k: int) -> str:
    tid = tuple(int(env[s][k]) for s in _TID)
    bid = tuple(int(env[s]) for s in _BID)
    return f"thread {tid} of block {bid}"


def _first(mask) -> int:
    return 0 if mask is None else int(np.argmax(mask))


def _uniform(x, mask, where: "_Where", what: str) -> int:
    """A value that must be the same on all active threads, as an int."""
    if type(x) is not np.ndarray or x.ndim == 0:
        return int(x)
    live = x if mask is None else x[mask]
    if np.count_nonzero(live != live[0]):
        seen = ", ".join(map(str, np.unique(live)[:8]))
        raise InterpreterError(
            f"{where}: the {what} differs across threads ({seen}); the interpreter needs uniform loop bounds"
        )
    return int(live[0])


# ---------------------------------------------------------------------------------------
# The compiler: MLIR ops -> closures. A handler(cx, op, where) returns run(env, mask),
# or None when the op needs no work at run time (constants and ids are preset slots).


class _Compiler:
    """Compiles the ops of one gpu.func: value slots, constants, and one closure per op."""

    def __init__(self):
        self.slots: dict = {}  # ir.Value -> slot
        self.template: list = [None] * _RESERVED  # the initial environment: constants
        self.constants: set[int] = set()  # slots of values known at compile time
        self._elems: dict = {}  # ir.Type -> _Elem (str() of a type is slow)
        self._memrefs: dict = {}  # ir.Type -> _MemRef

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

    def elem(self, type_) -> _Elem:
        elem = self._elems.get(type_)
        if elem is None:
            elem = self._elems[type_] = _ELEMS.get(str(type_))
            if elem is None:
                raise _Unsupported(f"type {type_}")
        return elem

    def memref(self, type_) -> "_MemRef":
        memref = self._memrefs.get(type_)
        if memref is None:
            memref = self._memrefs[type_] = _MemRef(self, type_)
        return memref

    def block(self, block) -> tuple[list[Op], list[int]]:
        """Compile a block: its ops, and the slots its terminator yields."""
        ops, yields = [], []
        for view in block.operations:
            op = view.operation
            if op.name in _TERMINATORS:
                yields = [self.use(v) for v in op.operands]
                continue
            fn = self.op(op)
            if fn is not None:
                ops.append(fn)
        return ops, yields

    def op(self, op) -> Op | None:
        where = _Where(op.name, op.location)
        handler = _HANDLERS.get(op.name)
        try:
            if handler is None:
                raise _Unsupported("the interpreter does not support this op")
            fn = handler(self, op, where)
        except _Unsupported as e:
            for r in op.results:
                if r not in self.slots:
                    self.define(r)
            fn = _raiser(where, str(e))
        if fn is not None:
            fn.where = where
        return fn


def _raiser(where: "_Where", message: str) -> Op:
    def run(env, mask):
        raise InterpreterError(f"{where}: {message}")

    return run


class _Where:
    """Names an op in messages: "name at file:line:col", formatted only when needed."""

    __slots__ = ("name", "location")

    def __init__(self, name: str, location):
        self.name, self.location = name, location

    def __str__(self) -> str:
        return f"{self.name} at {_location(self.location)}"


def _location(loc) -> str:
    """file:line:col of a location (through name and call-site wrappers)."""
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
    if loc.is_a_name():
        return f"{_location(loc.child_loc)} ({loc.name_str})"
    if loc.is_a_callsite():
        return _location(loc.callee)
    if loc.is_a_fused() and loc.locations:
        return _location(loc.locations[0])
    return str(loc)


# --- arith


def _constant(cx, op, where):
    elem = cx.elem(op.result.type)
    value = op.attributes["value"].value  # IntegerAttr, FloatAttr or BoolAttr
    cx.preset(op.result, elem.scalar(value if elem.is_float else elem.wrap(int(value))))


def _elementwise(make):
    """Handler of an op whose one result is an elementwise function of its operands."""

    def handler(cx, op, where):
        src, dst = op.operands[0].type, op.results[0].type
        if isinstance(src, ir.VectorType):  # 1-D vectors: the same function per element
            _vector_width(src)
            per_element = make(op, cx.elem(src.element_type), cx.elem(dst.element_type))

            def fn(*vectors):
                return tuple(per_element(*elements) for elements in zip(*vectors))
        else:
            fn = make(op, cx.elem(src), cx.elem(dst))
        ins = [cx.use(v) for v in op.operands]
        r = cx.define(op.results[0])
        if len(ins) == 1:
            (a,) = ins

            def run(env, mask):
                env[r] = fn(env[a])
        else:
            a, b = ins

            def run(env, mask):
                env[r] = fn(env[a], env[b])

        return run

    return handler


def _select(cx, op, where):
    c, a, b = (cx.use(v) for v in op.operands)
    r = cx.define(op.result)
    per_thread_ok = not isinstance(op.result.type, ir.MemRefType)

    def run(env, mask):
        cond = env[c]
        if type(cond) is not np.ndarray:
            env[r] = env[a] if cond else env[b]
        elif per_thread_ok:
            env[r] = np.where(cond, env[a], env[b])
        else:
            raise InterpreterError(f"{where}: selecting a memref per thread is not supported")

    return run


# --- scf


def _for(cx, op, where):
    operands = list(op.operands)
    lb, ub, step = (cx.use(v) for v in operands[:3])
    inits = [cx.use(v) for v in operands[3:]]
    body = op.regions[0].blocks[0]
    args = list(body.arguments)
    iv_elem = cx.elem(args[0].type)
    iv = cx.define(args[0])
    carried = [cx.define(a) for a in args[1:]]
    ops, yields = cx.block(body)
    results = [cx.define(v) for v in op.results]
    unsigned = "unsignedCmp" in op.attributes
    if unsigned:
        mask_bits = (1 << iv_elem.bits) - 1

        def make_iv(i):
            return iv_elem.scalar(iv_elem.wrap(i))
    else:
        make_iv = iv_elem.scalar

    def run(env, mask):
        start = _uniform(env[lb], mask, where, "lower bound")
        stop = _uniform(env[ub], mask, where, "upper bound")
        stride = _uniform(env[step], mask, where, "step")
        if unsigned:
            start, stop, stride = start & mask_bits, stop & mask_bits, stride & mask_bits
        if stride <= 0:
            raise InterpreterError(f"{where}: step {stride} is not positive")
        values = [env[s] for s in inits]
        for i in range(start, stop, stride):
            env[iv] = make_iv(i)
            for s, v in zip(carried, values):
                env[s] = v
            _run(ops, env, mask)
            values = [env[s] for s in yields]
        for s, v in zip(results, values):
            env[s] = v

    return run


def _if(cx, op, where):
    c = cx.use(op.operands[0])
    then_ops, then_yields = cx.block(op.regions[0].blocks[0])
    else_ops, else_yields = [], []
    if len(op.regions[1].blocks):
        else_ops, else_yields = cx.block(op.regions[1].blocks[0])
    results = [cx.define(v) for v in op.results]
    memref_results = any(isinstance(v.type, ir.MemRefType) for v in op.results)

    def branch(ops, yields, env, mask):
        _run(ops, env, mask)
        for s, y in zip(results, yields):
            env[s] = env[y]

    def run(env, mask):
        cond = env[c]
        if type(cond) is not np.ndarray:
            branch(*((then_ops, then_yields) if cond else (else_ops, else_yields)), env, mask)
            return
        on = cond if mask is None else cond & mask
        off = ~cond if mask is None else mask & ~cond
        if not np.count_nonzero(off):
            branch(then_ops, then_yields, env, mask)
        elif not np.count_nonzero(on):
            branch(else_ops, else_yields, env, mask)
        elif memref_results:
            raise InterpreterError(f"{where}: yielding memrefs under a per-thread condition is unsupported")
        else:
            _run(then_ops, env, on)
            taken = [env[y] for y in then_yields]
            _run(else_ops, env, off)
            for s, t, y in zip(results, taken, else_yields):
                env[s] = np.where(cond, t, env[y])

    return run


# --- memref


class _MemRef:
    """A static, identity-layout memref type: element, shape, row-major strides, space."""

    def __init__(self, cx: _Compiler, type_):
        if not isinstance(type_, ir.MemRefType):
            raise _Unsupported(f"type {type_}")
        if not type_.has_static_shape:
            raise _Unsupported(f"dynamic shape in {type_}")
        self.text = str(type_)
        self.elem = cx.elem(type_.element_type)
        self.shape = tuple(type_.shape)
        strides, size = [], 1
        for extent in reversed(self.shape):
            strides.insert(0, size)
            size *= extent
        self.strides, self.numel = tuple(strides), size
        if type_.get_strides_and_offset() != (strides, 0):
            raise _Unsupported(f"non-identity layout in {type_}")
        self.workgroup = str(type_.memory_space) == _WORKGROUP

    def allocator(self, slot: int) -> Op:
        """run() that sets ``slot`` to fresh memory: one array per block, or one per thread."""
        elem, numel = self.elem, self.numel
        if self.workgroup:
            fill = elem.poison if elem.to_storage is None else elem.to_storage(elem.poison)

            def run(env, mask):
                env[slot] = np.full(numel, fill, elem.storage)
        else:

            def run(env, mask):  # [numel, nthreads]: a register is one contiguous row
                env[slot] = np.full((numel, env[_N]), elem.poison, elem.dtype)

        return run

    def address(self, cx: _Compiler, indices, where: "_Where"):
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
            raise InterpreterError(f"{where}: index {at} is out of bounds for {text} in {_thread_name(env, k)}")

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
                        fail(env, _first(mask))
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
                    fail(env, _first(mask))
                flat = flat + i * stride
            if bad is not None and np.count_nonzero(bad):
                return masked(env, mask, flat, bad)
            return flat

        return None, index


def _alloc(cx, op, where):
    if len(op.operands):
        raise _Unsupported("dynamic sizes")
    return cx.memref(op.result.type).allocator(cx.define(op.result))


def _read(env, mem, flat, from_storage):
    """The value at flat index ``flat`` (scalar or per-thread array) of memory ``mem``."""
    if mem.ndim == 2:  # per-thread memory [numel, nthreads]
        return mem[flat, env[_ROWS]] if type(flat) is np.ndarray else mem[flat].copy()
    value = mem[flat]
    return value if from_storage is None else from_storage(value)


def _write(env, mem, flat, value, mask, to_storage) -> None:
    """Store ``value`` at flat index ``flat`` of ``mem`` for the active threads."""
    if mem.ndim == 2:  # per-thread memory [numel, nthreads]
        if type(flat) is not np.ndarray:
            if mask is None:
                mem[flat] = value
            else:
                np.copyto(mem[flat], value, where=mask)
            return
        rows = env[_ROWS]
        if mask is not None:
            flat, rows = flat[mask], rows[mask]
            value = value[mask] if type(value) is np.ndarray else value
        mem[flat, rows] = value
        return
    if to_storage is not None:
        value = to_storage(value)
    if type(flat) is not np.ndarray:  # one address: the last active thread wins
        if type(value) is np.ndarray:
            value = value[-1] if mask is None else value[mask][-1]
    elif mask is not None:
        flat = flat[mask]
        value = value[mask] if type(value) is np.ndarray else value
    mem[flat] = value


def _load(cx, op, where):
    operands = list(op.operands)
    mr = cx.memref(operands[0].type)
    m = cx.use(operands[0])
    constant, index = mr.address(cx, operands[1:], where)
    r = cx.define(op.result)
    from_storage = mr.elem.from_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        env[r] = _read(env, env[m], flat, from_storage)

    return run


def _store(cx, op, where):
    operands = list(op.operands)
    v = cx.use(operands[0])
    mr = cx.memref(operands[1].type)
    m = cx.use(operands[1])
    constant, index = mr.address(cx, operands[2:], where)
    to_storage = mr.elem.to_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        _write(env, env[m], flat, env[v], mask, to_storage)

    return run


# --- vector: 1-D vector.load / vector.store, and elementwise arith ops on 1-D vectors
# (``_elementwise``). A vector value is a tuple of its elements, each a scalar or a
# per-thread array.


def _vector_width(type_) -> int:
    if not isinstance(type_, ir.VectorType) or type_.rank != 1 or type_.scalable:
        raise _Unsupported(f"type {type_} (only 1-D fixed vectors move through load/store)")
    return type_.shape[0]


def _vector_span(mr, n: int, where: "_Where"):
    """Check that ``n`` elements from a flat index stay inside the memref's last dim."""
    last, text = mr.shape[-1], mr.text

    def check(env, mask, flat):
        bad = flat % last + n > last
        if np.any(bad if mask is None or type(bad) is not np.ndarray else bad & mask):
            raise InterpreterError(f"{where}: {n} elements from that index overrun {text}'s last dim")

    return check


def _vector_load(cx, op, where):
    operands = list(op.operands)
    mr = cx.memref(operands[0].type)
    m = cx.use(operands[0])
    n = _vector_width(op.result.type)
    constant, index = mr.address(cx, operands[1:], where)
    check = _vector_span(mr, n, where)
    r = cx.define(op.result)
    from_storage = mr.elem.from_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        check(env, mask, flat)
        mem = env[m]
        env[r] = tuple(_read(env, mem, flat + k, from_storage) for k in range(n))

    return run


def _vector_store(cx, op, where):
    operands = list(op.operands)
    v = cx.use(operands[0])
    n = _vector_width(operands[0].type)
    mr = cx.memref(operands[1].type)
    m = cx.use(operands[1])
    constant, index = mr.address(cx, operands[2:], where)
    check = _vector_span(mr, n, where)
    to_storage = mr.elem.to_storage

    def run(env, mask):
        flat = constant if index is None else index(env, mask)
        check(env, mask, flat)
        mem = env[m]
        for k, value in enumerate(env[v]):
            _write(env, mem, flat + k, value, mask, to_storage)

    return run


# --- gpu


def _gpu_id(reserved: tuple[int, int, int]):
    def handler(cx, op, where):
        dim = str(op.attributes["dimension"])  # "#gpu<dim x>"
        cx.alias(op.result, reserved["xyz".index(dim[-2])])

    return handler


def _lane_id(cx, op, where):
    cx.alias(op.result, _LANE)


def _barrier(cx, op, where):
    def run(env, mask):
        if mask is not None:
            raise InterpreterError(
                f"{where}: reached by {np.count_nonzero(mask)} of {env[_N]} threads of block "
                f"{tuple(int(env[s]) for s in _BID)}; all threads of a block must reach it"
            )

    return run


def _shuffle_sources(mode: str, offset, width, env: list, where: "_Where"):
    """Per thread: the thread it reads, ``valid``, and the threads reading past the block."""
    if np.count_nonzero((width < 1) | (width > WARP_SIZE)):
        raise InterpreterError(f"{where}: width {width} is outside 1..{WARP_SIZE}")
    lane, rows, n = env[_LANE], env[_ROWS], env[_N]
    offset = offset & (WARP_SIZE - 1)
    if mode == "xor":
        j, valid = lane ^ offset, (lane ^ offset) <= width - 1
    elif mode == "down":
        j, valid = lane + offset, lane + offset <= width - 1
    elif mode == "up":
        j, valid = lane - offset, lane - offset >= WARP_SIZE - width
    else:  # idx
        j, valid = offset, offset <= width - 1
    source = rows - lane + np.where(valid, j, lane)
    valid = np.broadcast_to(valid, (n,))
    missing = source >= n
    return source, valid, (missing if np.count_nonzero(missing) else None)


def _check_converged(mask, env: list, where: "_Where") -> None:
    """All lanes of a warp, or none, must execute a warp op."""
    n = env[_N]
    warps = -(-n // WARP_SIZE)
    padded = np.zeros(warps * WARP_SIZE, bool)
    padded[:n] = mask
    active = padded.reshape(warps, WARP_SIZE).sum(axis=1)
    size = np.minimum(WARP_SIZE, n - WARP_SIZE * np.arange(warps))
    partial = np.flatnonzero((active != 0) & (active != size))
    if partial.size:
        w = int(partial[0])
        raise InterpreterError(
            f"{where}: warp {w} of block {tuple(int(env[s]) for s in _BID)} executes it with "
            f"{active[w]} of {size[w]} lanes active; warp ops need the whole warp"
        )


def _shuffle(cx, op, where):
    mode_attr = str(op.attributes["mode"])  # "#gpu<shuffle_mode xor>"
    mode = mode_attr[mode_attr.rindex(" ") + 1 : -1]
    v, o, w = (cx.use(x) for x in op.operands)
    r, ok = (cx.define(x) for x in op.results)
    cache: dict = {}  # (offset, width, nthreads) -> sources, for uniform offset and width

    def run(env, mask):
        offset, width = env[o], env[w]
        if type(offset) is np.ndarray or type(width) is np.ndarray:
            source, valid, missing = _shuffle_sources(mode, offset, width, env, where)
        else:
            key = (int(offset), int(width), env[_N])
            hit = cache.get(key)
            if hit is None:
                hit = cache[key] = _shuffle_sources(mode, offset, width, env, where)
            source, valid, missing = hit
        if mask is not None:
            _check_converged(mask, env, where)
        if missing is not None:
            live = missing if mask is None else missing & mask
            if np.count_nonzero(live):
                k = int(np.argmax(live))
                raise InterpreterError(
                    f"{where}: {_thread_name(env, k)} reads lane {int(source[k]) % WARP_SIZE}, "
                    f"which the block of {env[_N]} threads does not have"
                )
        value = env[v]
        env[r] = value[source] if type(value) is np.ndarray else value
        env[ok] = valid

    return run


# --- nvvm

# redux.sync kind -> (reduction over the 32 lanes of a warp, reads its operand as unsigned)
_REDUX = {
    "add": (np.add.reduce, False),  # wraps
    "max": (np.maximum.reduce, False),
    "min": (np.minimum.reduce, False),
    "umax": (np.maximum.reduce, True),
    "umin": (np.minimum.reduce, True),
    "and": (np.bitwise_and.reduce, False),
    "or": (np.bitwise_or.reduce, False),
    "xor": (np.bitwise_xor.reduce, False),
}


def _redux_sync(cx, op, where):
    """``nvvm.redux.sync``: a 32-bit integer reduction over the warp, its result in every lane."""
    kind_attr = str(op.attributes["kind"])  # "#nvvm<redux_kind add>"
    kind = kind_attr[kind_attr.rindex(" ") + 1 : -1]
    if kind not in _REDUX:
        raise _Unsupported(f"kind {kind}")
    for flag in ("abs", "nan"):
        if flag in op.attributes and str(op.attributes[flag]) != "false":
            raise _Unsupported(f"{flag} = {op.attributes[flag]}")
    elem = cx.elem(op.operands[0].type)
    if elem.name != "i32":
        raise _Unsupported(f"operand of type {elem.name}")
    reduce, unsigned = _REDUX[kind]
    reading = elem.udtype if unsigned else elem.dtype
    v, m = (cx.use(x) for x in op.operands)
    r = cx.define(op.result)

    def run(env, mask):
        member, n = env[m], env[_N]
        if type(member) is np.ndarray or int(member) != -1:
            raise InterpreterError(f"{where}: member mask {member}: only the full mask (-1) is supported")
        if n % WARP_SIZE:
            raise InterpreterError(
                f"{where}: the block of {n} threads ends in a partial warp; "
                f"redux.sync with the full mask needs all {WARP_SIZE} lanes"
            )
        if mask is not None:
            _check_converged(mask, env, where)
        lanes = np.broadcast_to(env[v], (n,)).view(reading).reshape(-1, WARP_SIZE)
        per_warp = reduce(lanes, axis=1).astype(reading).view(elem.dtype)
        env[r] = np.repeat(per_warp, WARP_SIZE)

    return run


def _no_op(cx, op, where):
    return None


# Python operators rather than numpy functions where they agree: on numpy scalars
# (uniform values) they are some 20 times faster, on arrays the same.
_FLOAT_BINARY = {
    "addf": operator.add,
    "subf": operator.sub,
    "mulf": operator.mul,
    "divf": operator.truediv,
    "remf": np.fmod,
}
_INT_BINARY = {
    "addi": _int_op(operator.add),
    "subi": _int_op(operator.sub),
    "muli": _int_op(operator.mul),
    "divsi": _int_op(_divsi, fast=operator.floordiv),
    "remsi": _int_op(np.fmod, fast=operator.mod),
    "floordivsi": _int_op(operator.floordiv),
    "divui": _int_op(operator.floordiv, unsigned=True, fast=operator.floordiv),
    "remui": _int_op(operator.mod, unsigned=True, fast=operator.mod),
    "shli": _int_op(operator.lshift, unsigned=True, fast=operator.lshift),
    "shrui": _int_op(operator.rshift, unsigned=True, fast=operator.rshift),
    "shrsi": _int_op(operator.rshift),
    "maxsi": _int_op(np.maximum, fast=max),
    "minsi": _int_op(np.minimum, fast=min),
    "maxui": _int_op(np.maximum, unsigned=True, fast=max),
    "minui": _int_op(np.minimum, unsigned=True, fast=min),
    "andi": _bitwise(operator.and_),
    "ori": _bitwise(operator.or_),
    "xori": _bitwise(operator.xor),
}
_ELEMENTWISE = {
    **{name: _float_op(fn) for name, fn in _FLOAT_BINARY.items()},
    "negf": _float_op(operator.neg, rounds=False, canonical=False),
    "maxnumf": _float_op(_maxnumf, rounds=False),
    "minnumf": _float_op(_minnumf, rounds=False),
    "maximumf": _float_op(_maximumf, rounds=False),
    "minimumf": _float_op(_minimumf, rounds=False),
    **_INT_BINARY,
    "cmpi": _cmpi,
    "cmpf": _cmpf,
    "extf": _extf_truncf,
    "truncf": _extf_truncf,
    "sitofp": _int_to_float(signed=True),
    "uitofp": _int_to_float(signed=False),
    "fptosi": _float_to_int(signed=True),
    "fptoui": _float_to_int(signed=False),
    "index_cast": _int_cast(signed=True),
    "index_castui": _int_cast(signed=False),
    "extsi": _int_cast(signed=True),
    "extui": _int_cast(signed=False),
    "trunci": _int_cast(signed=True),
    "bitcast": _bitcast,
}

_HANDLERS: dict[str, Callable] = {
    "arith.constant": _constant,
    "arith.select": _select,
    **{f"arith.{name}": _elementwise(make) for name, make in _ELEMENTWISE.items()},
    "scf.for": _for,
    "scf.if": _if,
    "memref.alloca": _alloc,
    "memref.alloc": _alloc,
    "memref.dealloc": _no_op,
    "memref.load": _load,
    "memref.store": _store,
    "vector.load": _vector_load,
    "vector.store": _vector_store,
    "gpu.thread_id": _gpu_id(_TID),
    "gpu.block_id": _gpu_id(_BID),
    "gpu.block_dim": _gpu_id(_BDIM),
    "gpu.grid_dim": _gpu_id(_GDIM),
    "gpu.lane_id": _lane_id,
    "gpu.barrier": _barrier,
    "gpu.shuffle": _shuffle,
    "nvvm.redux.sync": _redux_sync,
}
_TERMINATORS = frozenset({"scf.yield", "gpu.return", "func.return"})

SUPPORTED_OPS = frozenset(_HANDLERS) | _TERMINATORS


# ---------------------------------------------------------------------------------------
# Kernels


@functools.cache
def _context():
    """One MLIR context for all interpreted modules (making one costs ~15 ms)."""
    return make_context()


@functools.lru_cache(maxsize=4)
def _parse(module_text: str):
    """Parse a module; cached, so the kernels of one module share one parse."""
    try:
        return ir.Module.parse(module_text, _context())
    except ir.MLIRError as e:
        raise InterpreterError(f"cannot parse the module: {e}") from e


def _find_kernel(module, name: str):
    for gpu_module in module.body.operations:
        if gpu_module.operation.name != "gpu.module":
            continue
        for op in gpu_module.regions[0].blocks[0].operations:
            if op.operation.name == "gpu.func" and op.attributes["sym_name"].value == name:
                return op.operation
    raise InterpreterError(f"no gpu.func @{name} in a gpu.module of the module")


def _arg_dtype(type_) -> str | None:
    return MLIR_TO_NUMPY.get(str(type_))


def _check_signature(func, inputs, signature: KernelSignature) -> None:
    """The signature must describe the function's arguments."""
    where = f"gpu.func @{signature.name} at {_location(func.location)}"
    if len(inputs) != len(signature.args):
        raise InterpreterError(
            f"{where} has {len(inputs)} argument(s), its signature {signature.describe()} has "
            f"{len(signature.args)}"
        )
    for i, (t, spec) in enumerate(zip(inputs, signature.args)):
        if isinstance(t, ir.MemRefType):
            fits = spec == ArgSpec("memref", _arg_dtype(t.element_type), tuple(t.shape))
        else:
            fits = spec == ArgSpec("scalar", _arg_dtype(t))
        if not fits:
            raise InterpreterError(f"{where}: argument {i} is {t}, the signature says {spec.describe()}")


class _Program:
    """A compiled gpu.func: its ops, the initial environment, its argument slots."""

    def __init__(self, module, name: str, signature: KernelSignature):
        func = _find_kernel(module, name)
        inputs = list(func.attributes["function_type"].value.inputs)
        _check_signature(func, inputs, signature)
        if len(func.regions[0].blocks) != 1:
            raise InterpreterError(f"gpu.func @{name}: only a one-block body (scf, no cf) can run")
        body = func.regions[0].blocks[0]
        args = list(body.arguments)
        cx = _Compiler()
        self.arg_slots = [cx.define(a) for a in args[: len(inputs)]]
        self.arg_elems = [cx.elem(getattr(t, "element_type", t)) for t in inputs]
        prologue = []  # workgroup and private attributions, allocated per block
        for a in args[len(inputs) :]:
            try:
                allocate = cx.memref(a.type).allocator(cx.define(a))
            except _Unsupported as e:
                raise InterpreterError(f"gpu.func @{name}: attribution {a.type}: {e}") from e
            allocate.where = f"gpu.func @{name}: attribution {a.type}"
            prologue.append(allocate)
        ops, _ = cx.block(body)
        self.ops = prologue + ops
        self.template = cx.template


def _dims(value, what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, (int, np.integer)) and d >= 1 for d in dims):
        raise LaunchError(f"{what} must be a positive int or a tuple of 1 to 3, got {value!r}")
    return tuple(int(d) for d in dims) + (1,) * (3 - len(dims))


class InterpretedKernel:
    """A kernel run by the CPU interpreter; launched like a compiled one."""

    def __init__(self, module_text: str, name: str, signature: KernelSignature):
        self.name = name
        self.signature = signature
        self._program = _Program(_parse(module_text), name, signature)

    def __repr__(self) -> str:
        return f"InterpretedKernel({self.signature.describe()})"

    def __call__(self, *args, grid=(1, 1, 1), block=(1, 1, 1)) -> None:
        self.launch(grid, block, *args)

    def launch(self, grid, block, *args) -> None:
        """Run the kernel on ``grid`` blocks of ``block`` threads; arrays are updated in place."""
        grid, block = _dims(grid, "grid"), _dims(block, "block")
        n = block[0] * block[1] * block[2]
        if n > MAX_BLOCK_THREADS:
            raise LaunchError(f"kernel {self.name}: block {block} has {n} threads, over {MAX_BLOCK_THREADS}")
        with np.errstate(all="ignore"):  # wrapping integers, inf and NaN are the semantics
            env = list(self._program.template)
            copies = self._bind(args, env)
            linear = np.arange(n, dtype=np.int64)
            env[_N], env[_ROWS], env[_LANE] = n, linear, linear % WARP_SIZE
            bx, by, _ = block
            tids = (linear % bx, linear // bx % by, linear // (bx * by))
            for k in range(3):
                env[_TID[k]], env[_BDIM[k]], env[_GDIM[k]] = tids[k], np.int64(block[k]), np.int64(grid[k])
            for bid in itertools.product(*(range(g) for g in reversed(grid))):
                block_env = env.copy()
                for s, b in zip(_BID, reversed(bid)):
                    block_env[s] = np.int64(b)
                _run(self._program.ops, block_env, None)
        for array, flat in copies:
            array[...] = flat.reshape(array.shape)

    def _bind(self, args, env: list) -> list:
        """Check the arguments and put them in ``env``; returns (array, copy) to write back."""
        sig = self.signature
        sig.check_count(args)
        copies = []
        program = self._program
        for i, (arg, slot, elem) in enumerate(zip(args, program.arg_slots, program.arg_elems)):
            if isinstance(arg, np.ndarray):
                sig.check_array(i, arg.dtype.name, arg.shape)
                if arg.flags.c_contiguous and arg.flags.writeable:
                    flat = arg.reshape(-1)
                else:  # work on a copy; write it back unless the array is read-only
                    flat = arg.flatten()
                    if arg.flags.writeable:
                        copies.append((arg, flat))
                env[slot] = flat.view(elem.storage)
            else:
                sig.check_scalar(i, arg)
                try:
                    env[slot] = elem.scalar(arg)
                except OverflowError as e:
                    raise LaunchError(f"kernel {self.name}: argument {i}: {e}") from e
        return copies


def interpreted_kernels(module_text: str, signatures) -> dict[str, InterpretedKernel]:
    """Interpreted kernels for the gpu.funcs of a module, parsed once.

    ``signatures``: KernelSignatures (an iterable, or a mapping whose values they are).
    """
    if isinstance(signatures, Mapping):
        signatures = signatures.values()
    return {s.name: InterpretedKernel(module_text, s.name, s) for s in signatures}
