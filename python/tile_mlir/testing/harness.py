"""Kernels around random ``tile.reduce`` ops, their inputs, and the judgement of their
outputs against ``tile_mlir.testing.reference``, bit for bit. No MLIR: runs on the GPU machine.

A ``Kernel`` is plain data: one exec scope, one variant (register or workgroup operands),
one to a few ops (``reference.ReduceOp``), a launch (``grid`` blocks of ``block`` threads,
clusters of ``cluster`` CTAs), and a loop of ``repeat`` iterations around the ops.

**Register operands.** ``@<name>(%A0, %B0, %A1, %B1, ...)``: op i's src is loaded from
``A_i[(iteration,) row, slot]`` into a private memref, its dst from ``B_i[row, slot]``
(with accum), and after the loop dst is stored back to ``B_i``. The row of a thread is
``block id * block + thread id``. Several instances of the scope may share a launch (two
warps, two warpgroups, two blocks): each reduces its own data. The places come from the
reference's own forward map (``reference_layout``): every place of every coordinate holds
the element, except the register replica copies of a src element (and with accum, of an
old dst element) past the lowest slot, which hold another random value, since the op
reads the lowest slot only (docs/spec.md, "Register replicas"). Every other src slot,
and every dst slot without accum, holds poison.

**Workgroup operands** (the ``shared`` variant): the tiles are ``memref.global``s; every
thread of the block copies ``A_i`` (one tile per iteration) into src behind barriers, the
threads of one instance of the scope run the ops, and then copy dst out in reverse order
(so only the op's own barrier makes it visible to them).

``judge`` lists every dst place (every replica of every dst coordinate on every thread)
whose bits differ from the reference's, or says that the kernel must have been rejected
(``reference.exchange_problem``, ``reference.unsupported``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..vocab import DEFAULT_CHIP
from . import reference as ref
from .cases import _copies, private_type  # the IR text of straight-line copies

POISON = {"f32": 0x7FE0DEAD, "f16": 0x7E5A, "bf16": 0x7FDA, "f64": 0x7FFC0BADDEADBEEF,
          "i32": 0x7F7F7F7F, "i64": 0x7F7F7F7F7F7F7F7F}
_BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64, "i32": np.uint32, "i64": np.uint64}
# The exponent and mantissa fields of each float type: a NaN has every exponent bit set and
# a mantissa other than 0.
_NAN_FIELDS = {"f16": (0x7C00, 0x3FF), "bf16": (0x7F80, 0x7F), "f32": (0x7F800000, 0x7FFFFF),
               "f64": (0x7FF0000000000000, 0xFFFFFFFFFFFFF)}
_SPECIALS = (math.nan, -math.nan, math.inf, -math.inf, -0.0, 0.0)


@dataclass(frozen=True)
class Kernel:
    """One kernel of the random suite (module docstring)."""

    name: str
    scope: str
    ops: tuple[ref.ReduceOp, ...]
    block: int
    grid: int = 1
    cluster: int = 1  # CTAs per cluster, at cluster scope
    repeat: int = 1
    fold: str = "linear"
    known_block: bool = False  # the kernel declares known_block_size
    cluster_fixed: bool = False  # the kernel declares known_cluster_size
    instance: int | None = None  # workgroup operands: the instance of the scope that runs the ops
    special: float = 0.0  # the share of NaN, infinities and zeros among float inputs

    @property
    def shared(self) -> bool:
        return self.ops[0].storage == "shared"

    @property
    def scope_threads(self) -> int:
        return {"thread": 1, "warp": 32, "warpgroup": 128, "cta": self.block,
                "cluster": self.block * self.cluster}[self.scope]

    @property
    def instances(self) -> int:
        return 1 if self.shared else self.grid * self.block // self.scope_threads

    def row(self, instance: int, t: np.ndarray) -> np.ndarray:
        """The buffer row of thread ``t`` (its layout index) of an instance of the scope."""
        if self.scope == "cluster":
            return (instance * self.cluster + t // 1024) * self.block + t % 1024
        return instance * self.scope_threads + t

    def to_json(self) -> dict:
        d = asdict(self)
        d["ops"] = [{k: v for k, v in asdict(op).items() if k != "combine"} for op in self.ops]
        return d

    @staticmethod
    def from_json(d: dict) -> Kernel:
        tup = lambda v: tuple(v) if isinstance(v, list) else v  # noqa: E731
        ops = tuple(ref.ReduceOp(**{k: tup(v) for k, v in op.items()}) for op in d["ops"])
        return Kernel(**{**d, "ops": ops})

    def with_fold(self, fold: str) -> Kernel:
        return replace(self, fold=fold, ops=tuple(replace(op, fold=fold) for op in self.ops))

    # -- what the suite asks of every kind of kernel (``random_copies.CopyKernel`` too) ---

    @property
    def tag(self) -> str:
        return "shared" if self.shared else self.scope

    def describe(self) -> str:
        return f"{self.scope}{', shared' if self.shared else ''}, {self.repeat} iteration(s), fold {self.fold}"

    def must_reject(self, documented: bool = False) -> str | None:
        return rejected_reason(self, documented)

    def inputs(self, rng: np.random.Generator) -> Run:
        return inputs(self, rng)

    def judge(self, run: Run, evidence: bool = False) -> list[str]:
        """``judge``; with ``evidence`` (an op the reference cannot compute), against the op's
        meaning in row-major order (``reference.meaning``)."""
        return judge(self, run, expected(self, run, ref.meaning) if evidence else None)

    def save(self, arrays: dict, fresh: Run, out: Run | None) -> None:
        """Put the launch's inputs (``fresh``) and the interpreter's outputs in ``arrays``."""
        for o in range(len(self.ops)):
            arrays[f"{self.name}.A{o}"], arrays[f"{self.name}.B{o}"] = fresh.buffers[2 * o: 2 * o + 2]
            if out is not None:
                arrays[f"{self.name}.I{o}"] = out.buffers[2 * o + 1]
            for i, (xs, old) in enumerate(zip(fresh.x[o], fresh.old[o])):
                arrays[f"{self.name}.old{o}.{i}"] = old
                for it, x in enumerate(xs):
                    arrays[f"{self.name}.x{o}.{i}.{it}"] = x

    def load(self, data) -> Run:
        """The inputs ``save`` saved, ready to launch."""
        n = range(len(self.ops))
        return Run([[[data[f"{self.name}.x{o}.{i}.{it}"] for it in range(self.repeat)] for i in range(self.instances)]
                    for o in n], [[data[f"{self.name}.old{o}.{i}"] for i in range(self.instances)] for o in n],
                   [data[f"{self.name}.{p}{o}"].copy() for o in n for p in "AB"])

    def same_as_interpreter(self, run: Run, data) -> bool:
        """Whether the launch left the interpreter's bits at every dst place (True when the
        interpreter could not run it)."""
        return all(f"{self.name}.I{o}" not in data or owned_bits(self, o, run.buffers[2 * o + 1]).tobytes()
                   == owned_bits(self, o, data[f"{self.name}.I{o}"]).tobytes() for o in range(len(self.ops)))

    # -- the kernel's text --------------------------------------------------------------

    def text(self, chip: str = DEFAULT_CHIP) -> str:
        """A module holding this kernel alone."""
        return module_text([self], chip)

    def lines(self) -> tuple[list[str], list[str]]:
        """The kernel's ``memref.global``s and its ``gpu.func``, as lines of a gpu.module."""
        args, body = self._shared_body() if self.shared else self._register_body()
        attrs = []
        if self.known_block or self.shared:
            attrs.append(f"known_block_size = array<i32: {self.block}, 1, 1>")
        if self.cluster_fixed:
            attrs.append(f"known_cluster_size = array<i32: {self.cluster}, 1, 1>")
        where = f"{self.grid} block(s) of {self.block} thread(s)" + (
            f" in clusters of {self.cluster}" if self.scope == "cluster" else "")
        globals_ = []
        if self.shared:
            for i, op in enumerate(self.ops):
                for part, shape in (("src", op.src_shape), ("dst", op.dst_shape)):
                    globals_.append(f'memref.global "private" @{self.name}_{part}{i} : '
                                    f"{_workgroup(shape, op.dtypes[0])}")
        func = [
            f"// {self.name}: {len(self.ops)} {self.scope}-scope op(s), {where}, {self.repeat} iteration(s).",
            f"gpu.func @{self.name}({', '.join(args)}) kernel"
            + (f" attributes {{{', '.join(attrs)}}}" if attrs else "") + " {",
            *("  " + line for line in body),
            "  gpu.return",
            "}",
        ]
        return globals_, func

    def buffer_types(self) -> list[str]:
        out = []
        for op in self.ops:
            dt, rows = op.dtypes[0], self.grid * self.block
            if self.shared:
                a = (math.prod(op.src_shape),)
                b = (math.prod(op.dst_shape),)
            else:
                a, b = (rows, math.prod(op.src_shape)), (rows, math.prod(op.dst_shape))
            a = (self.repeat, *a) if self.repeat > 1 else a
            out += [f"memref<{'x'.join(map(str, a))}x{dt}>", f"memref<{'x'.join(map(str, b))}x{dt}>"]
        return out

    def _reduce(self, i: int, op: ref.ReduceOp, dst_type: str, src_type: str) -> str:
        attrs = [f'kind = "{op.kind}"', f'exec_scope = "{op.scope}"',
                 f"axes = array<i64: {', '.join(map(str, op.axes))}>", f"accum = {str(op.accum).lower()}"]
        if op.src_layout:
            attrs.append(f'src_layout = #tile.layout<"{op.src_layout}">')
        if op.dst_layout:
            attrs.append(f'dst_layout = #tile.layout<"{op.dst_layout}">')
        return f'"tile.reduce"(%dst{i}, %src{i}) {{{", ".join(attrs)}}} : ({dst_type}, {src_type}) -> ()'

    def _register_body(self) -> tuple[list[str], list[str]]:
        types = self.buffer_types()
        args = [f"%{p}{i}: {types[2 * i + (p == 'B')]}" for i in range(len(self.ops)) for p in "AB"]
        body = ["%tx = gpu.thread_id x", "%bid = gpu.block_id x",
                f"%cblock = arith.constant {self.block} : index", "%first = arith.muli %bid, %cblock : index",
                "%tid = arith.addi %first, %tx : index  // the thread's row"]
        n = max(max(math.prod(op.src_shape), math.prod(op.dst_shape)) for op in self.ops)
        body += [f"%c{k} = arith.constant {k} : index" for k in range(n)]
        inner, after = [], []
        for i, op in enumerate(self.ops):
            dt = op.dtypes[0]
            st, dtt = private_type(op.src_shape, dt), private_type(op.dst_shape, dt)
            at, bt = types[2 * i], types[2 * i + 1]
            body += [f"%src{i} = memref.alloca() : {st}", f"%dst{i} = memref.alloca() : {dtt}"]
            if op.accum:
                body += _copies(f"o{i}x", op.dst_shape, f"%B{i}", bt, f"%dst{i}", dtt, True)
            lead = "%it, " if self.repeat > 1 else ""
            inner += _copies(f"a{i}x", op.src_shape, f"%A{i}", at, f"%src{i}", st, True, lead)
            inner.append(self._reduce(i, op, dtt, st))
            after += _copies(f"b{i}x", op.dst_shape, f"%B{i}", bt, f"%dst{i}", dtt, False)
        return args, body + self._loop(inner) + after

    def _loop(self, inner: list[str]) -> list[str]:
        if self.repeat == 1:
            return inner
        return ["%lo = arith.constant 0 : index", f"%hi = arith.constant {self.repeat} : index",
                "%step = arith.constant 1 : index", "scf.for %it = %lo to %hi step %step {",
                *("  " + line for line in inner),
                "} {llvm.loop_annotation = #llvm.loop_annotation<unroll = <disable = true>>}"]

    def _shared_body(self) -> tuple[list[str], list[str]]:
        types = self.buffer_types()
        args = [f"%{p}{i}: {types[2 * i + (p == 'B')]}" for i in range(len(self.ops)) for p in "AB"]
        T = self.scope_threads
        body = ["%tid = gpu.thread_id x", "%k0 = arith.constant 0 : index", "%k1 = arith.constant 1 : index"]
        sub = T != self.block
        if sub:
            body += [f"%kT = arith.constant {T} : index", f"%kI = arith.constant {self.instance} : index",
                     "%inst = arith.divui %tid, %kT : index", "%mine = arith.cmpi eq, %inst, %kI : index",
                     "%ts = arith.remui %tid, %kT : index"]
        ts = "%ts" if sub else "%tid"
        body += [f"%kTm1 = arith.constant {T - 1} : index", f"%tr = arith.subi %kTm1, {ts} : index"]
        inner, ops, out = ["gpu.barrier"], [], []
        for i, op in enumerate(self.ops):
            dt = op.dtypes[0]
            st, dtt = _workgroup(op.src_shape, dt), _workgroup(op.dst_shape, dt)
            body += [f"%src{i} = memref.get_global @{self.name}_src{i} : {st}",
                     f"%dst{i} = memref.get_global @{self.name}_dst{i} : {dtt}"]
            body += _strided(f"o{i}", math.prod(op.dst_shape), self.block, "%tid", (f"%B{i}", types[2 * i + 1], None),
                             (f"%dst{i}", dtt, op.dst_shape))
            lead = "%it" if self.repeat > 1 else None
            inner += _strided(f"a{i}", math.prod(op.src_shape), self.block, "%tid",
                              (f"%A{i}", types[2 * i], None), (f"%src{i}", st, op.src_shape), lead)
            ops.append(self._reduce(i, op, dtt, st))
            out += _strided(f"b{i}", math.prod(op.dst_shape), T, "%tr", (f"%dst{i}", dtt, op.dst_shape),
                            (f"%B{i}", types[2 * i + 1], None))
        inner.append("gpu.barrier")
        inner += _guard(ops, sub)
        return args, body + self._loop(inner) + _guard(out, sub)


def module_text(kernels, chip: str = DEFAULT_CHIP) -> str:
    """One module, one ``gpu.module @kernels`` holding every kernel of ``kernels``."""
    globals_, funcs = [], []
    for kernel in kernels:
        g, f = kernel.lines()
        globals_ += g
        funcs += f
    lines = ["module attributes {gpu.container_module} {",
             f'  gpu.module @kernels [#nvvm.target<chip = "{chip}">] {{',
             *("    " + line for line in globals_ + funcs), "  }", "}"]
    return "\n".join(lines) + "\n"


def _guard(lines: list[str], sub: bool) -> list[str]:
    return ["scf.if %mine {", *("  " + line for line in lines), "}"] if sub else lines


def _workgroup(shape, dt: str) -> str:
    return f"memref<{'x'.join(map(str, shape))}x{dt}, #gpu.address_space<workgroup>>"


def _strided(p: str, n: int, threads: int, t: str, source, target, lead: str | None = None) -> list[str]:
    """Element e < n from ``source`` to ``target`` by thread ``t`` = e mod ``threads``;
    each is (value, type, shape), shape None for a flat global buffer (with ``lead``, its
    leading index), else the row-major split of e."""
    def index(value, type_, shape, tag):
        if shape is None:
            return [], f"{value}[{lead + ', ' if lead and value.startswith('%A') else ''}%{p}e] : {type_}"
        lines, q, idx = [], f"%{p}e", []
        for d in range(len(shape) - 1, 0, -1):
            lines += [f"%{p}{tag}r{d} = arith.remui {q}, %{p}n{d} : index", f"%{p}{tag}q{d} = arith.divui {q}, %{p}n{d} : index"]
            idx.insert(0, f"%{p}{tag}r{d}")
            q = f"%{p}{tag}q{d}"
        return lines, f"{value}[{', '.join([q, *idx])}] : {type_}"

    shape = source[2] or target[2]
    consts = [f"%{p}n{d} = arith.constant {e} : index" for d, e in enumerate(shape or ())]
    rounds = -(-n // threads)
    src_lines, load = index(*source, "s")
    dst_lines, store = index(*target, "d")
    return consts + [
        f"%{p}R = arith.constant {rounds} : index", f"%{p}T = arith.constant {threads} : index",
        f"%{p}N = arith.constant {n} : index",
        f"scf.for %{p}i = %k0 to %{p}R step %k1 {{",
        f"  %{p}f = arith.muli %{p}i, %{p}T : index", f"  %{p}e = arith.addi %{p}f, {t} : index",
        f"  %{p}ok = arith.cmpi ult, %{p}e, %{p}N : index", f"  scf.if %{p}ok {{",
        *("    " + line for line in src_lines), f"    %{p}v = memref.load {load}",
        *("    " + line for line in dst_lines), f"    memref.store %{p}v, {store}",
        "  }", "}",
    ]


# --- inputs -----------------------------------------------------------------------------------


def random_values(rng: np.random.Generator, shape, dtype: str, special: float = 0.0) -> np.ndarray:
    """Fresh values of ``dtype``, never zero: floats in [-1, 1] (a share ``special`` of them
    NaN with random payloads, +-inf or +-0), integers small or (one time in four) of any size."""
    n = math.prod(shape)
    if dtype in ("i32", "i64"):
        if rng.random() < 0.25:
            info = np.iinfo(ref.storage_dtype(dtype))
            v = rng.integers(info.min, info.max, n, dtype=ref.storage_dtype(dtype), endpoint=True)
        else:
            v = rng.integers(1, 100, n) * rng.choice([-1, 1], n)
        v = np.where(v == 0, 1, v)
        return v.astype(ref.storage_dtype(dtype)).reshape(shape)
    v = rng.uniform(-1, 1, n)
    v[v == 0] = 0.5
    mask = rng.random(n) < special
    v[mask] = np.array(_SPECIALS)[rng.integers(len(_SPECIALS), size=int(mask.sum()))]
    if dtype == "bf16":  # to nearest even, on the bits of the f32
        u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
        out = np.where(np.isnan(v), 0x7FFF, (u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    else:
        out = v.astype(ref.storage_dtype(dtype))
    bits = out.view(_BITS[dtype])
    bits[~mask & ((bits << _BITS[dtype](1)) == 0)] = ref.from_values([0.5], dtype, (1,)).view(_BITS[dtype])[0]  # never 0
    exponent, mantissa = _NAN_FIELDS[dtype]
    nans = np.flatnonzero(mask & np.isnan(v) & (rng.random(n) < 0.5))
    if len(nans):  # NaNs of other payloads and signs
        sign = rng.integers(2, size=len(nans)).astype(_BITS[dtype]) << _BITS[dtype](8 * bits.itemsize - 1)
        payload = rng.integers(1, mantissa, size=len(nans), endpoint=True).astype(_BITS[dtype])
        bits[nans] = sign | _BITS[dtype](exponent) | payload
    return out.reshape(shape)


@dataclass
class Run:
    """One launch's data: per op, the logical inputs of each instance and the buffers."""

    x: list  # x[op][instance][iteration]: logical src
    old: list  # old[op][instance]: logical dst before (with accum)
    buffers: list  # A0, B0, A1, B1, ... as launched (B: written by the launch)


def inputs(kernel: Kernel, rng: np.random.Generator) -> Run:
    x, old, buffers = [], [], []
    for op in kernel.ops:
        dt = op.dtypes[0]
        src, dst = op.src, op.dst
        xs = [[random_values(rng, src.shape, dt, kernel.special) for _ in range(kernel.repeat)]
              for _ in range(kernel.instances)]
        olds = [random_values(rng, dst.shape, dt, kernel.special) for _ in range(kernel.instances)]
        x.append(xs)
        old.append(olds)
        if kernel.shared:
            a = np.stack([xi.reshape(-1) for xi in xs[0]]) if kernel.repeat > 1 else xs[0][0].reshape(-1)
            b = olds[0].reshape(-1).copy() if op.accum else _poison(dt, math.prod(op.dst_shape))
            buffers += [a, b]
            continue
        rows = kernel.grid * kernel.block
        a = _poison(dt, (kernel.repeat, rows, math.prod(op.src_shape)))
        for i in range(kernel.instances):
            for it in range(kernel.repeat):
                _pack(a[it], kernel, i, src, xs[i][it], rng)
        b = _poison(dt, (rows, math.prod(op.dst_shape)))
        if op.accum:
            for i in range(kernel.instances):
                _pack(b, kernel, i, dst, olds[i], rng)
        buffers += [a if kernel.repeat > 1 else a[0], b]
    return Run(x, old, buffers)


def _poison(dt: str, shape) -> np.ndarray:
    return np.full(shape, POISON[dt], dtype=_BITS[dt]).view(ref.storage_dtype(dt))


def _pack(buf: np.ndarray, kernel: Kernel, instance: int, layout, values: np.ndarray, rng) -> None:
    """Every place of every coordinate gets its value; register copies past the first get
    another random value (the op reads the lowest slot only)."""
    k, copy, thread, slot = layout.places
    rows = kernel.row(instance, thread)
    first = np.r_[True, (k[1:] != k[:-1]) | (copy[1:] != copy[:-1])]
    flat = values.reshape(-1)
    junk = rng.permutation(flat)[k] if len(flat) > 1 else flat[k]
    buf[rows[~first], slot[~first]] = junk[~first]
    buf[rows[first], slot[first]] = flat[k[first]]


# --- the judgement ----------------------------------------------------------------------------


def expected(kernel: Kernel, run: Run, model=ref.reduce) -> list[list[np.ndarray]]:
    """expected[op][instance]: the logical dst after the launch (``reference.reduce``, each
    iteration in turn: with accum onto the previous result, else the last one)."""
    out = []
    for o, op in enumerate(kernel.ops):
        per = []
        for i in range(kernel.instances):
            acc = run.old[o][i]
            for it in range(kernel.repeat):
                acc = model(op, [run.x[o][i][it]], [acc] if op.accum else None)[0]
            per.append(acc)
        out.append(per)
    return out


def rejected_reason(kernel: Kernel, documented: bool = False) -> str | None:
    """Why the compiler must reject the kernel, or None: an op the reference cannot compute
    (``exchange_problem``). With ``documented``, also why it may: an op docs/spec.md lists
    as not supported (``reference.unsupported``), which the reference computes all the same."""
    for i, op in enumerate(kernel.ops):
        why = ref.exchange_problem(op) or (ref.unsupported(op) if documented else None)
        if why:
            return f"op {i}: {why}"
    return None


def judge(kernel: Kernel, run: Run, want=None, limit: int = 6) -> list[str]:
    """Every dst place whose bits differ from the reference's (at most ``limit`` lines per
    op); empty when the launch is right."""
    want = expected(kernel, run) if want is None else want
    problems = []
    for o, op in enumerate(kernel.ops):
        dt = op.dtypes[0]
        got_buf = np.asarray(run.buffers[2 * o + 1]).view(_BITS[dt])
        bad, total = [], 0
        for i in range(kernel.instances):
            w = want[o][i].reshape(-1).view(_BITS[dt])
            if kernel.shared:
                g = got_buf.reshape(-1)
                idx = np.flatnonzero(g != w)
                total += len(w)
                bad += [f"dst[{e}]: got {int(g[e]):#x}, want {int(w[e]):#x}" for e in idx]
                continue
            k, copy, thread, slot = op.dst.places
            g = got_buf.reshape(kernel.grid * kernel.block, -1)[kernel.row(i, thread), slot]
            total += len(k)
            for j in np.flatnonzero(g != w[k]):
                bad.append(f"instance {i} dst coordinate {tuple(int(c) for c in np.unravel_index(k[j], op.dst.shape))} on thread "
                           f"{thread[j]} slot {slot[j]}: got {int(g[j]):#x}, want {int(w[k[j]]):#x}")
        if bad:
            problems.append(f"op {o}: {len(bad)} of {total} dst places wrong: " + "; ".join(bad[:limit]))
    return problems


def owned_bits(kernel: Kernel, o: int, b: np.ndarray) -> np.ndarray:
    """The bits of op ``o``'s output buffer at every place its dst layout gives an element."""
    bits = np.asarray(b).view(_BITS[kernel.ops[o].dtypes[0]])
    if kernel.shared:
        return bits.reshape(-1)
    _, _, thread, slot = kernel.ops[o].dst.places
    rows = np.concatenate([kernel.row(i, thread) for i in range(kernel.instances)])
    return bits.reshape(kernel.grid * kernel.block, -1)[rows, np.tile(slot, kernel.instances)]
