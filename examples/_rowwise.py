"""What the four fused row kernels of examples/ share: the plan, the template, the launch.

softmax, rmsnorm, layernorm and logsumexp each work on the rows of an M x N matrix, and
each is one MLIR file in examples/ (``softmax.mlir``...) written with ``tile.copy``,
``tile.reduce`` and arith/math on vectors. A kernel's memrefs have static shapes (the
bare-pointer calling convention needs them), so each file is a *template*: its fields,
written ``${NAME}``, are filled in by ``string.Template.substitute`` for one shape, one
dtype and one plan (``kernel_text``). docs/fused-kernels.md describes the fields.

**The plan** (``plan``) decides how a row is spread over threads. A thread holds E
elements of its row per *chunk*, as C vectors of 16 bytes (V = 4 f32 or 8 bf16
elements each), and a row is K chunks of CH = 32·W·E columns:

* ``warp``: one warp per row (W = 1), 4 rows per block, for rows that fit in one warp's
  registers (N <= 32·E_MAX: 1024 f32, 2048 bf16);
* ``warps``: W = 2..32 warps per row, one row per block, the row in the block's
  registers (N <= 16384 f32, 32768 bf16), reduced by cta-scope ``tile.reduce``
  (the ``cross_warp`` lowering: one barrier per reduction);
* ``online``: longer rows, 32 warps per row and K >= 2 chunks; each thread keeps running
  statistics (a running max and a rescaled sum for softmax), and the output pass reads
  the row again, last chunk first: that chunk is still in registers.

E_MAX, the elements a thread keeps, is 32 registers of data: 32 f32 or 64 bf16 (two to a
register), and half that with 32 warps, where a cta reduction's 32 partials need
registers of their own beside the tile in the 64 a thread of a 1024-thread block has.

**Arrays** (``RowKernel.__call__``): a numpy array (f32, or bf16 as ``uint16`` bits or an
``ml_dtypes.bfloat16`` array) runs through copies; a torch tensor on the GPU is passed
by pointer (zero copy) on torch's current stream, and a torch tensor on the CPU goes
through numpy. Any shape (..., N) works; the leading dims are the rows.
"""

from __future__ import annotations

import argparse
import functools
import math
import string
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tile_mlir import api
from tile_mlir.bf16 import from_bits as bf16_values
from tile_mlir.bf16 import to_bits as bf16_bits
from tile_mlir.vocab import DEFAULT_CHIP, DTYPE_BYTES, MAX_BLOCK_THREADS
from tile_mlir.vocab import WARP_SIZE as WARP

HERE = Path(__file__).resolve().parent
ITEMSIZE = {dtype: DTYPE_BYTES[dtype] for dtype in ("f32", "bf16")}  # the dtypes the kernels take
MAX_WARPS = MAX_BLOCK_THREADS // WARP  # the largest block
ROWS_PER_BLOCK = 4  # the warp form: 4 rows (warps) per block
DATA_BYTES = 128  # a thread keeps 32 registers of its row (64 bytes with 32 warps)
TORCH_EPS = {"f32": 1.1920928955078125e-07, "bf16": 0.0078125}  # torch.finfo(dtype).eps


def max_elements(dtype: str, warps: int) -> int:
    """E_MAX: the elements of a row one thread keeps in registers, for ``warps`` per row."""
    return (DATA_BYTES if warps < MAX_WARPS else DATA_BYTES // 2) // ITEMSIZE[dtype]


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(n)))


@dataclass(frozen=True)
class Plan:
    """How a kernel spreads an M x N matrix: R rows per block, W warps per row, C vectors
    of V elements per thread per chunk (E = C·V), K chunks of CH columns per row."""

    M: int
    N: int
    dtype: str  # "f32" | "bf16"
    R: int
    W: int
    C: int
    K: int

    @property
    def form(self) -> str:
        return "online" if self.K > 1 else ("warp" if self.W == 1 else "warps")

    @property
    def V(self) -> int:
        return 16 // ITEMSIZE[self.dtype]

    @property
    def E(self) -> int:
        return self.C * self.V

    @property
    def CH(self) -> int:
        return WARP * self.W * self.E

    @property
    def block(self) -> int:
        return WARP * self.R * self.W

    @property
    def grid(self) -> int:
        return -(-self.M // self.R)

    def describe(self) -> str:
        return (f"{self.form}: {self.R} row(s) per block of {self.block} threads, {self.W} warp(s) per row,"
                f" {self.E} elements per thread per chunk, {self.K} chunk(s) of {self.CH} columns")

    def layouts(self) -> dict[str, str]:
        """The tile layouts: ROWS (a chunk of R rows, cta scope), WEIGHTS (a chunk of a
        weight vector, the same columns, replicated over the R rows), PARTIALS (one value
        per thread, the W·32 of a row along dim 1) and RESULT (one value per row, held by
        each of the row's threads)."""
        R, W, C, V = self.R, self.W, self.C, self.V
        cols = ([(C, f"{V}")] if C > 1 else []) + ([(W, "1@warpid")] if W > 1 else []) + [(WARP, "1@laneid")]
        cols += [(V, "1")]
        threads = ([(W, "1@warpid")] if W > 1 else []) + [(WARP, "1@laneid")]
        lanes = [(WARP, "1@laneid")] + ([(W, "1@warpid")] if W > 1 else [])
        row = f"{W}@warpid" if R > 1 else "1"

        def modes(iters):
            return f"({', '.join(str(e) for e, _ in iters)})", f"({', '.join(s for _, s in iters)})"

        (ce, cs), (te, ts), (le, ls) = modes(cols), modes(threads), modes(lanes)
        return {
            "ROWS": f"S[({R}, {ce}) : ({row}, {cs})]",
            "WEIGHTS": f"S[({ce}) : ({cs})]" + (f" + R[{R} : {W}@warpid]" if R > 1 else ""),
            "PARTIALS": f"S[({R}, {te}) : ({row}, {ts})]",
            "RESULT": f"S[{R} : {row}] + R[{le} : {ls}]",
        }

    def fields(self, chip: str = DEFAULT_CHIP) -> dict[str, object]:
        """Every field a template may name (docs/fused-kernels.md lists them)."""
        bf16 = self.dtype == "bf16"
        return {
            "M": self.M, "N": self.N, "T": self.dtype, "CHIP": chip, "THREADS": self.block,
            "R": self.R, "V": self.V, "C": self.C, "E": self.E, "K": self.K, "CH": self.CH,
            "TW": WARP * self.W, "SLICE": WARP * self.W * self.V, "LANES": ", ".join(map(str, range(self.V))),
            "NEG_INF": "0xFF80" if bf16 else "0xFF800000",
            "EXTF": "arith.extf" if bf16 else "arith.bitcast",  # to f32; a no-op cast for f32
            "TRUNCF": "arith.truncf" if bf16 else "arith.bitcast",
            **self.layouts(),
        }


def plan(M: int, N: int, dtype: str = "f32", *, warps: int | None = None, vectors: int | None = None) -> Plan:
    """The plan for an M x N matrix of ``dtype`` (module docstring). ``warps`` (per row)
    and ``vectors`` (16-byte vectors per thread per chunk) override the choice, for tests
    and tuning; the rows are then as many chunks as it takes."""
    if dtype not in ITEMSIZE:
        raise ValueError(f"dtype must be f32 or bf16, got {dtype!r}")
    if M < 1 or N < 1:
        raise ValueError(f"the matrix must have at least one row and one column, got {M} x {N}")
    V = 16 // ITEMSIZE[dtype]
    if warps is None:
        if N <= WARP * max_elements(dtype, 1):
            warps = 1
        else:  # half the budget per thread where the row allows it: more warps, shorter chains
            warps = min(MAX_WARPS, _pow2(-(-N // (WARP * max_elements(dtype, 2) // 2))))
            if N > WARP * warps * max_elements(dtype, warps):
                warps = MAX_WARPS
    if warps not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"warps per row must be a power of two up to {MAX_WARPS}, got {warps}")
    if vectors is None:
        vectors = min(max_elements(dtype, warps), _round_up(-(-N // (WARP * warps)), V)) // V
    if vectors < 1:
        raise ValueError(f"vectors per thread must be at least 1, got {vectors}")
    chunks = -(-N // (WARP * warps * V * vectors))
    return Plan(M, N, dtype, ROWS_PER_BLOCK if warps == 1 else 1, warps, vectors, chunks)


def _round_up(n: int, m: int) -> int:
    return -(-n // m) * m


def kernel_text(name: str, p: Plan, chip: str = DEFAULT_CHIP) -> str:
    """examples/<name>.mlir with its fields filled in for plan ``p``."""
    return string.Template((HERE / f"{name}.mlir").read_text()).substitute(p.fields(chip))


@dataclass(frozen=True)
class Compiled:
    """What a launch needs: ``kernel.launch(grid, block, *args)`` or, for benchmarks,
    ``kernel.bind(grid, block, *args)``; ``args`` in the order ``signature`` gives."""

    kernel: object
    grid: int
    block: int
    plan: Plan
    backend: str
    signature: str


@functools.lru_cache(maxsize=256)
def _compile(name: str, p: Plan, backend: str, chip: str, params: tuple[str, ...]) -> Compiled:
    kernels = api.compile(kernel_text(name, p, chip), {"chip": chip}, backend=backend)
    signature = ", ".join(("x", *params, "y", *(("eps",) if params else ())))
    return Compiled(kernels[name], p.grid, p.block, p, backend, f"{name}({signature})")


# The kernels and shapes test/gpu/test_fused_gpu.py checks on the GPU (issue 10's, and one
# with N = 1000), and the default shape of ``python -m tile_mlir.examples.<name>``, both
# dtypes: ``python -m tile_mlir.testing.prepare`` compiles them ahead, for a GPU machine
# without MLIR.
KERNELS = ("softmax", "rmsnorm", "layernorm", "logsumexp")
GPU_SHAPES = ((16384, 1024), (4096, 4096), (4096, 16384), (1024, 65536), (16384, 1000))
MAIN_SHAPE = (37, 1000)
GPU_KERNELS = [(name, plan(M, N, dtype)) for name in KERNELS for (M, N) in (*GPU_SHAPES, MAIN_SHAPE)
               for dtype in ITEMSIZE]


# --- arrays ---------------------------------------------------------------------------


def _numpy_dtype(a: np.ndarray) -> str:
    if a.dtype == np.float32:
        return "f32"
    if a.dtype == np.uint16 or a.dtype.name == "bfloat16":
        return "bf16"
    raise TypeError(f"the fused kernels take f32 or bf16 arrays (bf16 as uint16 bits or ml_dtypes.bfloat16); got {a.dtype}")


def _torch_dtype(t) -> str:
    name = str(t.dtype).removeprefix("torch.")
    if name not in ("float32", "bfloat16"):
        raise TypeError(f"the fused kernels take float32 or bfloat16 tensors; got {t.dtype}")
    return "f32" if name == "float32" else "bf16"


def _is_torch(a) -> bool:
    return type(a).__module__.startswith("torch")


@dataclass(frozen=True)
class RowKernel:
    """One fused kernel: its name (the template's and the gpu.func's), the per-column
    parameters it takes after x (``weight``, ``bias``), whether its output is a row
    (M x N) or one value per row (M), and the default of ``eps``, which every kernel
    with parameters takes (as an f32 kernel argument, after y)."""

    name: str
    params: tuple[str, ...] = ()
    per_row: bool = False
    default_eps: float | None = None  # None: torch.finfo(dtype).eps, as F.rms_norm

    def eps(self, dtype: str) -> float:
        return TORCH_EPS[dtype] if self.default_eps is None else self.default_eps

    def plan(self, M: int, N: int, dtype: str = "f32", **overrides) -> Plan:
        """The plan for an M x N matrix (``_rowwise.plan``)."""
        return plan(M, N, dtype, **overrides)

    def kernel_text(self, M: int, N: int, dtype: str = "f32", *, chip: str = DEFAULT_CHIP, **overrides) -> str:
        """The kernel's MLIR text for an M x N matrix of ``dtype``."""
        return kernel_text(self.name, plan(M, N, dtype, **overrides), chip)

    def compiled(self, M: int, N: int, dtype: str = "f32", *, backend: str = "auto",
                 chip: str = DEFAULT_CHIP, **overrides) -> Compiled:
        """The compiled kernel for an M x N matrix, with its grid and block (cached)."""
        return _compile(self.name, plan(M, N, dtype, **overrides), api.choose_backend(backend), chip, self.params)

    def __call__(self, x, *params, eps=None, backend: str = "auto", **overrides):
        """Run the kernel on x (..., N) and the per-column ``params``; return an array of
        x's kind (numpy, or a torch tensor on x's device) and dtype."""
        if len(params) != len(self.params):
            raise TypeError(f"{self.name} takes x and {len(self.params)} more array(s) {self.params}, got {len(params)}")
        if x.ndim < 1:
            raise ValueError(f"{self.name} needs an array of at least one dim, got a scalar")
        torch_in = _is_torch(x)
        dtype = _torch_dtype(x) if torch_in else _numpy_dtype(np.asarray(x))
        N = x.shape[-1]
        M = math.prod(x.shape[:-1])
        out_shape = tuple(x.shape[:-1]) if self.per_row else tuple(x.shape)
        if self.params and eps is None:
            eps = self.eps(dtype)
        scalars = (float(eps),) if self.params else ()
        backend = api.choose_backend(backend)
        if torch_in and x.is_cuda and backend == "cuda":
            return self._on_device(x, params, scalars, M, N, dtype, out_shape, overrides)
        host = [self._host(a, dtype) for a in (x, *params)]
        if M == 0 or N == 0:
            y = np.empty(out_shape, host[0].dtype)
        else:
            c = self.compiled(M, N, dtype, backend=backend, **overrides)
            y = np.empty((M,) if self.per_row else (M, N), host[0].dtype)
            inputs = [host[0].reshape(M, N), *(self._check_param(a, N) for a in host[1:])]
            c.kernel.launch(c.grid, c.block, *inputs, y, *scalars)
        if torch_in:
            import torch

            return torch.from_numpy(y.reshape(out_shape).view(np.int16)).view(x.dtype).to(x.device) if dtype == "bf16" \
                else torch.from_numpy(y.reshape(out_shape)).to(x.device)
        return y.reshape(out_shape)

    def _host(self, a, dtype: str) -> np.ndarray:
        if _is_torch(a):
            import torch

            a = a.detach().cpu().contiguous()
            a = a.view(torch.int16).numpy().view(np.uint16) if dtype == "bf16" else a.numpy()
        a = np.ascontiguousarray(a)
        if _numpy_dtype(a) != dtype:
            raise TypeError(f"{self.name}: every array must have x's dtype ({dtype}); got {a.dtype}")
        return a

    def _check_param(self, a, N: int):
        if tuple(a.shape) != (N,):
            raise ValueError(f"{self.name}: {', '.join(self.params)} must have shape ({N},), got {tuple(a.shape)}")
        return a

    def _on_device(self, x, params, scalars, M, N, dtype, out_shape, overrides):
        import torch

        for a in params:
            if not (_is_torch(a) and a.is_cuda and a.dtype == x.dtype):
                raise TypeError(f"{self.name}: with a CUDA x, {', '.join(self.params)} must be CUDA tensors of {x.dtype}")
        y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        if M and N:
            c = self.compiled(M, N, dtype, backend="cuda", **overrides)
            inputs = [x.reshape(M, N).contiguous(), *(self._check_param(a.contiguous(), N) for a in params)]
            c.kernel.launch(c.grid, c.block, *inputs, y.view(M) if self.per_row else y.view(M, N), *scalars,
                            stream=torch.cuda.current_stream())
        return y

    # --- the check that ``python -m tile_mlir.examples.<name>`` runs -----------------

    def main(self, reference, argv=None) -> int:
        """Run the kernel on a fresh random matrix (in the interpreter without a GPU) and
        compare it with ``reference`` (numpy float64); print one line, exit 0 if it agrees."""
        parser = argparse.ArgumentParser(prog=f"python -m tile_mlir.examples.{self.name}")
        parser.add_argument("--shape", default="{}x{}".format(*MAIN_SHAPE), help="M x N (default %(default)s)")
        parser.add_argument("--dtype", default="f32", choices=sorted(ITEMSIZE))
        parser.add_argument("--backend", default="auto", choices=api.BACKENDS)
        args = parser.parse_args(argv)
        M, N = (int(n) for n in args.shape.lower().split("x"))
        backend = api.choose_backend(args.backend)
        rng = np.random.default_rng()
        x, *params = random_inputs(rng, M, N, args.dtype, len(self.params))
        eps = {"eps": self.eps(args.dtype)} if self.params else {}
        y = self(x, *params, backend=backend, **eps)
        error, ok = check(y, reference(*(as_f64(a) for a in (x, *params)), **eps), args.dtype)
        print(f"plan: {plan(M, N, args.dtype).describe()}")
        print(f"{self.name} {M}x{N} {args.dtype} ({backend}): max abs error {error:.1e}"
              f" vs numpy float64: {'OK' if ok else 'FAILED'}")
        return 0 if ok else 1


# --- references and checks, shared by main and the tests ---------------------------------

RTOL = {"f32": 2e-5, "bf16": 2.0**-8}  # bf16: one rounding of the output, and f32 math
ATOL = {"f32": 1e-6, "bf16": 1e-5}


def random_inputs(rng, M: int, N: int, dtype: str, params: int) -> list[np.ndarray]:
    """x (M x N, standard normal) and ``params`` per-column vectors (around 1), in dtype."""
    arrays = [rng.standard_normal((M, N)), *(1 + 0.5 * rng.standard_normal(N) for _ in range(params))]
    return [to_dtype(a, dtype) for a in arrays]


def to_dtype(a, dtype: str) -> np.ndarray:
    return bf16_bits(np.asarray(a, np.float32)) if dtype == "bf16" else np.asarray(a, np.float32)


def as_f64(a: np.ndarray) -> np.ndarray:
    """An f32 or bf16 (uint16 bits) array's values in float64."""
    return (bf16_values(a) if a.dtype == np.uint16 else np.asarray(a, np.float32)).astype(np.float64)


def check(y: np.ndarray, ref: np.ndarray, dtype: str) -> tuple[float, bool]:
    """(max abs error, whether y agrees with the float64 ``ref``): within RTOL·|ref| + ATOL,
    and NaN exactly where ref is NaN, infinities equal."""
    got = as_f64(y)
    finite = np.isfinite(ref)
    same_special = np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[~finite & ~np.isnan(ref)],
                                                                                   ref[~finite & ~np.isnan(ref)])
    error = float(np.max(np.abs(got[finite] - ref[finite]), initial=0.0))
    ok = same_special and bool(np.all(np.abs(got[finite] - ref[finite]) <= RTOL[dtype] * np.abs(ref[finite]) + ATOL[dtype]))
    return error, ok


if __name__ == "__main__":
    sys.exit("run one of the kernels: python -m tile_mlir.examples.softmax (or rmsnorm, layernorm, logsumexp)")
