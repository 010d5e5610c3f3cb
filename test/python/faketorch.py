"""Stand-ins for torch, triton and the CUDA backend, just enough to run a GPU benchmark
section's control flow here (benchmarks/argmax.py), for ``test_benchmarks_argmax.py``.

Tensors are numpy arrays on the host; a "kernel" computes its documented result with
numpy (argmax: the row's argmax; softmax: the rows' softmax; logsumexp: the rows'
logsumexp; anything else: nothing);
every timing is a constant. What this checks is the plumbing: the sweeps, the checks
against torch, the rates, the results' keys and the report, not any figure.
"""

import functools
import sys
import types

import numpy as np


class Tensor:
    def __init__(self, a, dtype):
        self.a, self.dtype = a, dtype

    def fill_(self, v):
        self.a[...] = v
        return self

    def long(self):
        return Tensor(self.a.astype(np.int64), "int64")

    def double(self):
        return Tensor(self.a.astype(np.float64), "float64")

    def amax(self, dim, keepdim=False):
        return Tensor(self.a.max(axis=dim, keepdims=keepdim), self.dtype)

    def sum(self):
        return Tensor(np.asarray(self.a.sum()), self.dtype)

    def all(self):
        return Tensor(np.asarray(self.a.all()), "bool")

    def norm(self):
        return Tensor(np.asarray(np.linalg.norm(self.a)), self.dtype)

    def item(self):
        return self.a.item()

    def __bool__(self):
        return bool(self.a)

    def __eq__(self, other):
        return Tensor(self.a == (other.a if isinstance(other, Tensor) else other), "bool")

    def __sub__(self, other):
        return Tensor(self.a - other.a, self.dtype)

    def __truediv__(self, other):
        return Tensor(self.a / other.a, self.dtype)


def _torch() -> types.ModuleType:
    t = types.ModuleType("torch")
    t.float32, t.bfloat16, t.int32, t.int64 = "float32", "bfloat16", "int32", "int64"
    kinds = {"float32": np.float32, "bfloat16": np.float32, "int32": np.int32, "int64": np.int64}

    def randn(*shape, device=None, dtype="float32"):
        a = np.random.standard_normal(shape).astype(np.float32)
        if dtype == "bfloat16":  # the values a bf16 tensor can hold
            a = ((a.view(np.uint32) >> 16) << 16).view(np.float32)
        return Tensor(a, dtype)

    def softmax(x, dim):
        e = np.exp(x.a - x.a.max(axis=dim, keepdims=True))
        return Tensor(e / e.sum(axis=dim, keepdims=True), x.dtype)

    def logsumexp(x, dim):
        m = x.a.max(axis=dim, keepdims=True)
        return Tensor((m + np.log(np.exp(x.a - m).sum(axis=dim, keepdims=True))).squeeze(dim), x.dtype)

    class Event:
        def __init__(self, enable_timing=False):
            pass

        def record(self):
            pass

        def synchronize(self):
            pass

        def elapsed_time(self, other):
            return 1.0

    t.randn = randn
    t.empty = lambda *shape, device=None, dtype="float32": Tensor(np.zeros(shape, kinds[dtype]), dtype)
    t.empty_like = lambda x: Tensor(np.zeros_like(x.a), x.dtype)
    t.argmax = lambda x, dim: Tensor(np.argmax(x.a, axis=dim).astype(np.int64), "int64")
    t.equal = lambda a, b: a.a.shape == b.a.shape and bool((a.a == b.a).all())
    t.softmax = softmax
    t.logsumexp = logsumexp
    t.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda: None, empty_cache=lambda: None)
    return t


def _triton() -> tuple[types.ModuleType, types.ModuleType, types.ModuleType]:
    class Jit:
        def __init__(self, fn):
            self.fn = fn

        def __getitem__(self, grid):  # every Triton kernel here is an argmax over rows
            def run(x, y, N, **meta):
                y.a[:] = np.argmax(x.a, axis=1)
            return run

    triton = types.ModuleType("triton")
    triton.jit = Jit
    testing = types.ModuleType("triton.testing")
    testing.do_bench = lambda fn, warmup=25, rep=100, return_mode="median": (fn(), 2.0)[1]
    triton.testing = testing
    language = types.ModuleType("triton.language")
    language.constexpr = object  # what a kernel's annotations name
    return triton, language, testing


class Kernel:
    def __init__(self, name):
        self.name = name

    def max_active_blocks(self, block, shared_mem=0, carveout=None):
        """2048 threads an SM; with a carveout, as many CTAs as its share of 228 KB holds
        at ``shared_mem`` bytes and 1 KB each (fakecuda's model)."""
        fit = 2048 // block
        return fit if carveout is None else min(fit, carveout * 228 * 1024 // 100 // (shared_mem + 1024))

    def bind(self, grid, block, x, y, *scalars, shared_mem=0, carveout=None):
        def launch():
            if self.name.startswith("argmax"):
                y.a[:] = np.argmax(x.a, axis=1)
            elif self.name.startswith("softmax"):
                e = np.exp(x.a - x.a.max(axis=1, keepdims=True))
                y.a[:] = e / e.sum(axis=1, keepdims=True)
            elif self.name.startswith("logsumexp"):
                m = x.a.max(axis=1)
                y.a[:] = m + np.log(np.exp(x.a - m[:, None]).sum(axis=1))
        return launch


class Kernels(dict):
    def __missing__(self, name):
        return Kernel(name)


def install(monkeypatch) -> None:
    """torch, triton and ``tile_mlir.compile(..., backend="cuda")`` replaced for one test."""
    import tile_mlir

    triton, language, testing = _triton()
    for name, mod in (("torch", _torch()), ("triton", triton), ("triton.language", language), ("triton.testing", testing)):
        monkeypatch.setitem(sys.modules, name, mod)
    # the Triton peer is built on the stand-ins, and forgotten after the test
    monkeypatch.setitem(sys.modules, "benchmarks.triton_argmax", None)
    del sys.modules["benchmarks.triton_argmax"]
    monkeypatch.setattr(tile_mlir, "compile", lambda text, options=None, backend=None: Kernels())
    # the library's kernels (K.argmax) too, through caches of this test's own
    from tile_mlir import api
    from tile_mlir.kernels import library

    monkeypatch.setattr(api, "compile", lambda text, options=None, backend=None: Kernels())
    for name in ("_compiled_for", "_compiled", "_kernel"):
        monkeypatch.setattr(library, name, functools.lru_cache(maxsize=None)(getattr(library, name).__wrapped__))
