"""The ``vector`` dialect's values: building, taking apart and reducing vectors.

A vector value is a tuple of its elements in row-major order, each a scalar (uniform
over the block) or a per-thread array; its shape is the type's, known at compile time.
Ops that only move elements (broadcast, extract, insert, shuffle, transpose, slices,
shape_cast) are index maps computed once at compile time. arith and math ops apply
elementwise to vectors of any rank (``elementwise``). The memory ops are in
``vector_memory.py``.

``vector.reduction`` folds left to right, ``((acc + v0) + v1) + ...``, as LLVM's ordered
reductions do (MLIR gives them no reassociation flag unless the op's fastmath has one).
"""

from __future__ import annotations

import itertools
import math as _pymath

import numpy as np

from ..errors import InterpreterError
from ..ir import ir
from .core import N, Unsupported, assign, first_active, register, thread_name

DYNAMIC = -(2**63)  # a dynamic position in static_position


def vector_shape(type_) -> tuple[int, ...]:
    """The shape of a fixed-size vector type."""
    if not isinstance(type_, ir.VectorType) or any(type_.scalable_dims):
        raise Unsupported(f"type {type_} (only fixed-size vectors)")
    return tuple(type_.shape)


def numel(shape) -> int:
    return _pymath.prod(shape)


def ints(attr) -> list[int]:
    """The integers of an array attribute (``array<i64: ...>`` or ``[1, 2]``)."""
    if isinstance(attr, ir.ArrayAttr):
        return [ir.IntegerAttr(a).value for a in attr]
    return list(attr)


def elementwise(make):
    """Handler of an op whose one result is an elementwise function of its operands.

    ``make(op, operand elem, result elem)`` returns the function of the operand values;
    vectors of any shape apply it per element.
    """

    def handler(cx, op, where):
        src, dst = op.operands[0].type, op.results[0].type
        if isinstance(src, ir.VectorType):
            vector_shape(src)
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
        elif len(ins) == 2:
            a, b = ins

            def run(env, mask):
                env[r] = fn(env[a], env[b])
        else:

            def run(env, mask):
                env[r] = fn(*(env[i] for i in ins))

        return run

    return handler


def _gather(cx, op, source, mapping):
    """Handler body: the result's elements are ``source``'s at ``mapping`` (a tuple of
    flat indices, or None for a scalar source repeated)."""
    s = cx.use(source)
    r = cx.define(op.results[0])
    if mapping is None:
        n = numel(vector_shape(op.results[0].type))

        def run(env, mask):
            env[r] = (env[s],) * n
    else:

        def run(env, mask):
            v = env[s]
            env[r] = tuple(v[i] for i in mapping)

    return run


def _flat(index, shape) -> int:
    return int(np.ravel_multi_index(index, shape)) if shape else 0


def _broadcast(cx, op, where):
    source = op.operands[0]
    dst = vector_shape(op.result.type)
    if not isinstance(source.type, ir.VectorType):
        cx.elem(source.type)
        return _gather(cx, op, source, None)
    src = vector_shape(source.type)
    lead = len(dst) - len(src)
    mapping = tuple(
        _flat(tuple(0 if src[d] == 1 else i[lead + d] for d in range(len(src))), src)
        for i in itertools.product(*map(range, dst))
    )
    return _gather(cx, op, source, mapping)


def _positions(op, shape):
    """(static position, dynamic operand slots, sub-shape) of vector.extract/insert."""
    static = ints(op.attributes["static_position"])
    return static, shape[len(static) :]


def _offset_fn(cx, op, static, shape, dynamic_operands, where):
    """The flat offset of a (maybe dynamic) position: an int, or run-time function."""
    stride = [numel(shape[d + 1 :]) for d in range(len(static))]
    slots = [cx.use(v) for v in dynamic_operands]
    if not slots:
        return sum(p * s for p, s in zip(static, stride)), None
    dims = [d for d, p in enumerate(static) if p == DYNAMIC]
    base = sum(p * s for p, s in zip(static, stride) if p != DYNAMIC)

    def offset(env, mask):
        """The offset per thread; a position out of bounds is an error on an active
        thread, and position 0 on the others (which skip the op)."""
        total = base
        for d, slot in zip(dims, slots):
            i = env[slot]
            bad = (i < 0) | (i >= shape[d])
            if np.count_nonzero(bad):
                live = bad if mask is None else bad & mask
                if np.count_nonzero(live):
                    k = first_active(np.broadcast_to(live, (env[N],)))
                    at = int(i[k]) if type(i) is np.ndarray else int(i)
                    raise InterpreterError(f"{where}: position {at} is out of bounds for dim {d} of {shape} "
                                           f"in {thread_name(env, k)}")
                i = np.where(bad, 0, i)
            total = total + i * stride[d]
        return total

    return None, offset


def _pick(elements, offset):
    """Per thread, ``elements[offset]`` (offset an array): a value per thread."""
    *columns, offset = np.broadcast_arrays(*elements, offset)  # uniform elements too
    stacked = np.stack(columns)
    return stacked[offset, np.arange(stacked.shape[1])]


def _extract(cx, op, where):
    operands = list(op.operands)
    shape = vector_shape(operands[0].type)
    static, rest = _positions(op, shape)
    width = numel(rest)
    constant, offset = _offset_fn(cx, op, static, shape, operands[1:], where)
    v, r = cx.use(operands[0]), cx.define(op.result)
    scalar = not isinstance(op.result.type, ir.VectorType)

    def run(env, mask):
        at = constant if offset is None else offset(env, mask)
        value = env[v]
        if type(at) is not np.ndarray:
            part = value[int(at) : int(at) + width]
        else:
            part = tuple(_pick(value, at + k) for k in range(width))
        env[r] = part[0] if scalar else part

    return run


def _insert(cx, op, where):
    operands = list(op.operands)
    shape = vector_shape(op.result.type)
    static, rest = _positions(op, shape)
    width = numel(rest)
    constant, offset = _offset_fn(cx, op, static, shape, operands[2:], where)
    s, v, r = cx.use(operands[0]), cx.use(operands[1]), cx.define(op.result)
    scalar = not isinstance(operands[0].type, ir.VectorType)

    def run(env, mask):
        at = constant if offset is None else offset(env, mask)
        part = (env[s],) if scalar else env[s]
        value = list(env[v])
        if type(at) is not np.ndarray:
            value[int(at) : int(at) + width] = part
        else:
            for k in range(len(value)):
                hit = (at <= k) & (k < at + width)
                if np.count_nonzero(hit):
                    inside = np.clip(k - at, 0, width - 1)
                    value[k] = np.where(hit, _pick(part, inside) if width > 1 else part[0], value[k])
        env[r] = tuple(value)

    return run


def _from_elements(cx, op, where):
    slots = [cx.use(v) for v in op.operands]
    vector_shape(op.result.type)
    r = cx.define(op.result)

    def run(env, mask):
        env[r] = tuple(env[s] for s in slots)

    return run


def _to_elements(cx, op, where):
    v = cx.use(op.operands[0])
    results = [cx.define(x) for x in op.results]

    def run(env, mask):
        assign(env, results, env[v])

    return run


def _shape_cast(cx, op, where):
    vector_shape(op.result.type)
    cx.alias(op.result, cx.use(op.operands[0]))


def _transpose(cx, op, where):
    src = vector_shape(op.operands[0].type)
    dst = vector_shape(op.result.type)
    perm = ints(op.attributes["permutation"])
    mapping = []
    for i in itertools.product(*map(range, dst)):
        index = [0] * len(src)
        for d, p in enumerate(perm):
            index[p] = i[d]
        mapping.append(_flat(tuple(index), src))
    return _gather(cx, op, op.operands[0], tuple(mapping))


def _strided(op, shape):
    offsets, sizes = ints(op.attributes["offsets"]), ints(op.attributes["sizes"])
    if any(s != 1 for s in ints(op.attributes["strides"])):
        raise Unsupported("strides other than 1")
    offsets += [0] * (len(shape) - len(offsets))
    sizes += list(shape[len(sizes) :])
    return [
        _flat(tuple(o + k for o, k in zip(offsets, i)), shape) for i in itertools.product(*map(range, sizes))
    ]


def _extract_strided_slice(cx, op, where):
    mapping = _strided(op, vector_shape(op.operands[0].type))
    return _gather(cx, op, op.operands[0], tuple(mapping))


def _insert_strided_slice(cx, op, where):
    dst_shape = vector_shape(op.result.type)
    offsets = ints(op.attributes["offsets"])
    src_shape = vector_shape(op.operands[0].type)
    lead = len(dst_shape) - len(src_shape)
    places = [
        _flat(tuple(offsets[d] + (i[d - lead] if d >= lead else 0) for d in range(len(dst_shape))), dst_shape)
        for i in itertools.product(*map(range, src_shape))
    ]
    s, v, r = cx.use(op.operands[0]), cx.use(op.operands[1]), cx.define(op.result)

    def run(env, mask):
        value = list(env[v])
        for place, element in zip(places, env[s]):
            value[place] = element
        env[r] = tuple(value)

    return run


def _shuffle(cx, op, where):
    """``vector.shuffle`` of two 1-D vectors (or scalars); a -1 (poison) takes element 0."""
    a, b = op.operands
    vectors = [isinstance(v.type, ir.VectorType) for v in (a, b)]
    if any(len(vector_shape(v.type)) > 1 for v, is_vector in zip((a, b), vectors) if is_vector):
        raise Unsupported("shuffles of vectors of rank > 1")
    mask = ints(op.attributes["mask"])
    sa, sb, r = cx.use(a), cx.use(b), cx.define(op.result)

    def run(env, _):
        both = tuple(env[s] if is_vector else (env[s],) for s, is_vector in zip((sa, sb), vectors))
        both = both[0] + both[1]
        env[r] = tuple(both[max(i, 0)] for i in mask)

    return run


def _constant_mask(cx, op, where):
    shape = vector_shape(op.result.type)
    sizes = ints(op.attributes["mask_dim_sizes"])
    cx.preset(
        op.result,
        tuple(np.bool_(all(k < s for k, s in zip(i, sizes))) for i in itertools.product(*map(range, shape))),
    )


def _create_mask(cx, op, where):
    shape = vector_shape(op.result.type)
    bounds = [cx.use(v) for v in op.operands]
    r = cx.define(op.result)

    def run(env, mask):
        limits = [env[b] for b in bounds]
        env[r] = tuple(
            np.logical_and.reduce([np.asarray(k < lim) for k, lim in zip(i, limits)])[()]
            for i in itertools.product(*map(range, shape))
        )

    return run


def _step(cx, op, where):
    (n,) = vector_shape(op.result.type)
    elem = cx.elem(op.result.type.element_type)
    cx.preset(op.result, tuple(elem.scalar(k) for k in range(n)))


def _bitcast(cx, op, where):
    src_t, dst_t = op.operands[0].type, op.result.type
    src, dst = cx.elem(src_t.element_type), cx.elem(dst_t.element_type)
    if 1 in (src.bits, dst.bits) or "index" in (src.name, dst.name):
        raise Unsupported(f"{src_t} -> {dst_t}")
    if len(vector_shape(src_t)) != 1:
        raise Unsupported("bitcasts of vectors of rank > 1")
    v, r = cx.use(op.operands[0]), cx.define(op.result)

    def run(env, mask):
        bits = [np.atleast_1d(src.to_bits(np.asarray(x, src.dtype))) for x in env[v]]
        uniform = all(x.shape == (1,) for x in bits)
        rows = np.stack(np.broadcast_arrays(*bits), axis=1)  # [nthreads, elements]
        reread = np.ascontiguousarray(rows).view(dst.udtype)
        out = dst.from_bits(reread)
        env[r] = tuple(out[0, k][()] if uniform else out[:, k] for k in range(out.shape[1]))

    return run


register(
    {
        "vector.broadcast": _broadcast,
        "vector.extract": _extract,
        "vector.insert": _insert,
        "vector.from_elements": _from_elements,
        "vector.to_elements": _to_elements,
        "vector.shape_cast": _shape_cast,
        "vector.transpose": _transpose,
        "vector.extract_strided_slice": _extract_strided_slice,
        "vector.insert_strided_slice": _insert_strided_slice,
        "vector.shuffle": _shuffle,
        "vector.constant_mask": _constant_mask,
        "vector.create_mask": _create_mask,
        "vector.step": _step,
        "vector.bitcast": _bitcast,
    }
)
