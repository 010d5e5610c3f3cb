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
from .operands import (  # noqa: F401  (random_values: re-exported)
    _BITS, BAD_FUNCTIONS, function_text, gpu_tolerance, op_inputs, random_values, with_model)

POISON = {"f32": 0x7FE0DEAD, "f16": 0x7E5A, "bf16": 0x7FDA, "f64": 0x7FFC0BADDEADBEEF,
          "i32": 0x7F7F7F7F, "i64": 0x7F7F7F7F7F7F7F7F}


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
        ops = tuple(with_model(ref.ReduceOp(**{k: tup(v) for k, v in op.items()})) for op in d["ops"])
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

    def judge(self, run: Run, evidence: bool = False, exact: bool = True) -> list[str]:
        """``judge``; with ``evidence`` (an op the reference cannot compute), against the op's
        meaning in row-major order (``reference.meaning``); ``exact=False`` (the GPU): a
        combiner with math ops within ``operands.gpu_tolerance``."""
        if evidence and any(op.function in BAD_FUNCTIONS for op in self.ops):
            return ["a combiner function docs/spec.md forbids has no meaning to judge by"]
        return judge(self, run, expected(self, run, ref.meaning) if evidence else None, exact=exact)

    @property
    def slots(self) -> list[tuple[list[str], list[str]]]:
        """Per op, the keys of its src and of its dst buffers, in launch order: op o's
        srcs ``A<o>.<j>``, then its dsts ``B<o>.<j>``."""
        return [([f"A{o}.{j}" for j in range(len(op.src_dtypes))], [f"B{o}.{j}" for j in range(len(op.dtypes))])
                for o, op in enumerate(self.ops)]

    def dst_buffers(self, run: Run) -> list[list[np.ndarray]]:
        """Per op, its dst buffers after the launch."""
        out, at = [], 0
        for srcs, dsts in self.slots:
            at += len(srcs)
            out.append(run.buffers[at: at + len(dsts)])
            at += len(dsts)
        return out

    def save(self, arrays: dict, fresh: Run, out: Run | None) -> None:
        """Put the launch's inputs (``fresh``) and the interpreter's outputs in ``arrays``."""
        keys = [k for srcs, dsts in self.slots for k in srcs + dsts]
        for key, buf in zip(keys, fresh.buffers):
            arrays[f"{self.name}.{key}"] = buf
        for o, op in enumerate(self.ops):
            if out is not None:
                for j, b in enumerate(self.dst_buffers(out)[o]):
                    arrays[f"{self.name}.I{o}.{j}"] = b
            for i, (xs, old) in enumerate(zip(fresh.x[o], fresh.old[o])):
                for j, v in enumerate(old):
                    arrays[f"{self.name}.old{o}.{i}.{j}"] = v
                for it, x in enumerate(xs):
                    for j, v in enumerate(x):
                        arrays[f"{self.name}.x{o}.{i}.{it}.{j}"] = v

    def load(self, data) -> Run:
        """The inputs ``save`` saved, ready to launch."""
        name, ops = self.name, list(enumerate(self.ops))
        x = [[[[data[f"{name}.x{o}.{i}.{it}.{j}"] for j in range(len(op.src_dtypes))] for it in range(self.repeat)]
              for i in range(self.instances)] for o, op in ops]
        old = [[[data[f"{name}.old{o}.{i}.{j}"] for j in range(len(op.dtypes))] for i in range(self.instances)]
               for o, op in ops]
        return Run(x, old, [data[f"{name}.{k}"].copy() for srcs, dsts in self.slots for k in srcs + dsts])

    def same_as_interpreter(self, run: Run, data) -> bool:
        """Whether the launch left the interpreter's bits at every dst place (True when the
        interpreter could not run it; an op whose combiner has math ops is not compared:
        the GPU's exp is not the interpreter's, ``judge`` bounds it)."""
        got = self.dst_buffers(run)
        return all(f"{self.name}.I{o}.{j}" not in data or gpu_tolerance(op, 1) is not None
                   or owned_bits(self, o, j, b).tobytes()
                   == owned_bits(self, o, j, data[f"{self.name}.I{o}.{j}"]).tobytes()
                   for o, op in enumerate(self.ops) for j, b in enumerate(got[o]))

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
        for i, op in enumerate(self.ops):
            if op.function is not None:
                globals_ += function_text(op, f"{self.name}_f{i}").splitlines()
            if self.shared:
                for part, shape, types in (("src", op.src_shape, op.src_dtypes), ("dst", op.dst_shape, op.dtypes)):
                    globals_ += [f'memref.global "private" @{self.name}_{part}{i}_{j} : {_workgroup(shape, t)}'
                                 for j, t in enumerate(types)]
        func = [
            f"// {self.name}: {len(self.ops)} {self.scope}-scope op(s), {where}, {self.repeat} iteration(s).",
            f"gpu.func @{self.name}({', '.join(args)}) kernel"
            + (f" attributes {{{', '.join(attrs)}}}" if attrs else "") + " {",
            *("  " + line for line in body),
            "  gpu.return",
            "}",
        ]
        return globals_, func

    def buffer_types(self) -> list[list[tuple[str, str]]]:
        """Per op, (argument name, memref type) of each of its buffers, srcs then dsts."""
        out = []
        for (srcs, dsts), op in zip(self.slots, self.ops):
            rows = self.grid * self.block
            if self.shared:
                a, b = (math.prod(op.src_shape),), (math.prod(op.dst_shape),)
            else:
                a, b = (rows, math.prod(op.src_shape)), (rows, math.prod(op.dst_shape))
            a = (self.repeat, *a) if self.repeat > 1 else a
            out.append([(f"%{k.replace('.', '_')}", f"memref<{'x'.join(map(str, a))}x{t}>")
                        for k, t in zip(srcs, op.src_dtypes)]
                       + [(f"%{k.replace('.', '_')}", f"memref<{'x'.join(map(str, b))}x{t}>")
                          for k, t in zip(dsts, op.dtypes)])
        return out

    def _reduce(self, i: int, op: ref.ReduceOp, dst_types: list[str], src_types: list[str]) -> str:
        what = f"combiner = @{self.name}_f{i}" if op.function is not None else f'kind = "{op.kind}"'
        attrs = [what, f'exec_scope = "{op.scope}"',
                 f"axes = array<i64: {', '.join(map(str, op.axes))}>", f"accum = {str(op.accum).lower()}"]
        if op.src_layout:
            attrs.append(f'src_layout = #tile.layout<"{op.src_layout}">')
        if op.dst_layout:
            attrs.append(f'dst_layout = #tile.layout<"{op.dst_layout}">')
        name = "tile.reduce" if op.arg or len(op.dtypes) == 1 else f"tile.reduce{len(op.dtypes)}"
        operands = [f"%dst{i}_{j}" for j in range(len(dst_types))] + [f"%src{i}_{j}" for j in range(len(src_types))]
        return (f'"{name}"({", ".join(operands)}) {{{", ".join(attrs)}}} : '
                f"({', '.join(dst_types + src_types)}) -> ()")

    def _register_body(self) -> tuple[list[str], list[str]]:
        types = self.buffer_types()
        args = [f"{a}: {t}" for per in types for a, t in per]
        body = ["%tx = gpu.thread_id x", "%bid = gpu.block_id x",
                f"%cblock = arith.constant {self.block} : index", "%first = arith.muli %bid, %cblock : index",
                "%tid = arith.addi %first, %tx : index  // the thread's row"]
        n = max(max(math.prod(op.src_shape), math.prod(op.dst_shape)) for op in self.ops)
        body += [f"%c{k} = arith.constant {k} : index" for k in range(n)]
        inner, after = [], []
        for i, op in enumerate(self.ops):
            ns = len(op.src_dtypes)
            st = [private_type(op.src_shape, t) for t in op.src_dtypes]
            dtt = [private_type(op.dst_shape, t) for t in op.dtypes]
            body += [f"%src{i}_{j} = memref.alloca() : {t}" for j, t in enumerate(st)]
            body += [f"%dst{i}_{j} = memref.alloca() : {t}" for j, t in enumerate(dtt)]
            lead = "%it, " if self.repeat > 1 else ""
            for j, ((a, at), t) in enumerate(zip(types[i][:ns], st)):
                inner += _copies(f"a{i}_{j}x", op.src_shape, a, at, f"%src{i}_{j}", t, True, lead)
            for j, ((b, bt), t) in enumerate(zip(types[i][ns:], dtt)):
                if op.accum:
                    body += _copies(f"o{i}_{j}x", op.dst_shape, b, bt, f"%dst{i}_{j}", t, True)
                after += _copies(f"b{i}_{j}x", op.dst_shape, b, bt, f"%dst{i}_{j}", t, False)
            inner.append(self._reduce(i, op, dtt, st))
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
        args = [f"{a}: {t}" for per in types for a, t in per]
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
            ns = len(op.src_dtypes)
            st = [_workgroup(op.src_shape, t) for t in op.src_dtypes]
            dtt = [_workgroup(op.dst_shape, t) for t in op.dtypes]
            body += [f"%src{i}_{j} = memref.get_global @{self.name}_src{i}_{j} : {t}" for j, t in enumerate(st)]
            body += [f"%dst{i}_{j} = memref.get_global @{self.name}_dst{i}_{j} : {t}" for j, t in enumerate(dtt)]
            lead = "%it" if self.repeat > 1 else None
            for j, ((a, at), t) in enumerate(zip(types[i][:ns], st)):
                inner += _strided(f"a{i}_{j}", math.prod(op.src_shape), self.block, "%tid", (a, at, None),
                                  (f"%src{i}_{j}", t, op.src_shape), lead)
            for j, ((b, bt), t) in enumerate(zip(types[i][ns:], dtt)):
                body += _strided(f"o{i}_{j}", math.prod(op.dst_shape), self.block, "%tid", (b, bt, None),
                                 (f"%dst{i}_{j}", t, op.dst_shape))
                out += _strided(f"b{i}_{j}", math.prod(op.dst_shape), T, "%tr", (f"%dst{i}_{j}", t, op.dst_shape),
                                (b, bt, None))
            ops.append(self._reduce(i, op, dtt, st))
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


@dataclass
class Run:
    """One launch's data: per op, the logical inputs of each instance and the buffers."""

    x: list  # x[op][instance][iteration]: the logical src operands (a list)
    old: list  # old[op][instance]: the logical dst operands before (with accum; a list)
    buffers: list  # per op its srcs then its dsts (``Kernel.slots``), as launched


def inputs(kernel: Kernel, rng: np.random.Generator) -> Run:
    x, old, buffers = [], [], []
    for op in kernel.ops:
        src, dst = op.src, op.dst
        xs, olds = op_inputs(op, rng, kernel.instances, kernel.repeat, kernel.special)
        x.append(xs)
        old.append(olds)
        if kernel.shared:
            for j, dt in enumerate(op.src_dtypes):
                buffers.append(np.stack([xi[j].reshape(-1) for xi in xs[0]]) if kernel.repeat > 1
                               else xs[0][0][j].reshape(-1))
            buffers += [olds[0][j].reshape(-1).copy() if op.accum else _poison(dt, math.prod(op.dst_shape))
                        for j, dt in enumerate(op.dtypes)]
            continue
        rows = kernel.grid * kernel.block
        for j, dt in enumerate(op.src_dtypes):
            a = _poison(dt, (kernel.repeat, rows, math.prod(op.src_shape)))
            for i in range(kernel.instances):
                for it in range(kernel.repeat):
                    _pack(a[it], kernel, i, src, xs[i][it][j], rng)
            buffers.append(a if kernel.repeat > 1 else a[0])
        for j, dt in enumerate(op.dtypes):
            b = _poison(dt, (rows, math.prod(op.dst_shape)))
            if op.accum:
                for i in range(kernel.instances):
                    _pack(b, kernel, i, dst, olds[i][j], rng)
            buffers.append(b)
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


def expected(kernel: Kernel, run: Run, model=ref.reduce) -> list[list[list[np.ndarray]]]:
    """expected[op][instance]: the logical dst operands after the launch (``reference.reduce``, each
    iteration in turn: with accum onto the previous result, else the last one)."""
    out = []
    for o, op in enumerate(kernel.ops):
        per = []
        for i in range(kernel.instances):
            acc = run.old[o][i]
            for it in range(kernel.repeat):
                acc = model(op, run.x[o][i][it], acc if op.accum else None)
            per.append(acc)
        out.append(per)
    return out


def rejected_reason(kernel: Kernel, documented: bool = False) -> str | None:
    """Why the compiler must reject the kernel, or None: an op the reference cannot compute
    (``exchange_problem``). With ``documented``, also why it may: an op docs/spec.md lists
    as not supported (``reference.unsupported``), which the reference computes all the same."""
    for i, op in enumerate(kernel.ops):
        if op.function in BAD_FUNCTIONS:
            why = BAD_FUNCTIONS[op.function][2]
            return f"op {i}: its combiner function has {why} (docs/spec.md, \"Combiner functions\")"
        why = ref.exchange_problem(op) or (ref.unsupported(op) if documented else None)
        if why:
            return f"op {i}: {why}"
    return None


def judge(kernel: Kernel, run: Run, want=None, limit: int = 6, exact: bool = True) -> list[str]:
    """Every dst place whose bits differ from the reference's (at most ``limit`` lines per
    op); empty when the launch is right. ``exact=False`` (the GPU): a float result of a
    combiner with math ops within ``operands.gpu_tolerance`` of the reference's."""
    want = expected(kernel, run) if want is None else want
    problems = []
    for o, (op, dsts) in enumerate(zip(kernel.ops, kernel.dst_buffers(run))):
        n_r = math.prod(op.src.shape[d] for d in op.reduced)
        bad, total = [], 0
        for j, (dt, buf) in enumerate(zip(op.dtypes, dsts)):
            tol = None if exact or dt not in ("f16", "f32", "f64") else gpu_tolerance(op, n_r * kernel.repeat + 1)
            got_buf = np.asarray(buf).view(_BITS[dt])
            name = f"dst {j} " if len(op.dtypes) > 1 else "dst "
            for i in range(kernel.instances):
                w = want[o][i][j].reshape(-1).view(_BITS[dt])
                if kernel.shared:
                    g, w_at = got_buf.reshape(-1), w
                    where = lambda e: f"{name}[{e}]"  # noqa: E731
                else:
                    k, copy, thread, slot = op.dst.places
                    g = got_buf.reshape(kernel.grid * kernel.block, -1)[kernel.row(i, thread), slot]
                    w_at = w[k]
                    where = lambda e: (f"instance {i} {name}coordinate "  # noqa: E731
                                       f"{tuple(int(c) for c in np.unravel_index(k[e], op.dst.shape))} "
                                       f"on thread {thread[e]} slot {slot[e]}")
                total += len(g)
                if tol is None:
                    wrong = g != w_at
                else:
                    value = lambda b: b.view(ref.storage_dtype(dt)).astype(np.float64)  # noqa: E731
                    wrong = ~np.isclose(value(g), value(w_at), rtol=tol, atol=0, equal_nan=True)
                bad += [f"{where(e)}: got {int(g[e]):#x}, want {int(w_at[e]):#x}" for e in np.flatnonzero(wrong)]
        if bad:
            problems.append(f"op {o}: {len(bad)} of {total} dst places wrong: " + "; ".join(bad[:limit]))
    return problems


def owned_bits(kernel: Kernel, o: int, j: int, b: np.ndarray) -> np.ndarray:
    """The bits of op ``o``'s dst buffer ``j`` at every place its dst layout gives an element."""
    bits = np.asarray(b).view(_BITS[kernel.ops[o].dtypes[j]])
    if kernel.shared:
        return bits.reshape(-1)
    _, _, thread, slot = kernel.ops[o].dst.places
    rows = np.concatenate([kernel.row(i, thread) for i in range(kernel.instances)])
    return bits.reshape(kernel.grid * kernel.block, -1)[rows, np.tile(slot, kernel.instances)]
