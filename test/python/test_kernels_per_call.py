"""The functional API's per-call path on torch CUDA tensors (issue 19, host cost): after
a first call of a kernel on a shape went the whole way (every check, the plan, the
compile), the same call finds its kernel and launches with ``CudaKernel.launch_trusted``;
whatever it does not take (a tensor on another device, misaligned, not contiguous, a
weight of another dtype or length) goes the whole way, with its usual error.

torch here is a stand-in module over numpy (CI has no torch), launched on
``fakecuda``'s driver; the kernel is the real rmsnorm, compiled here. What this checks
is what reaches the kernel's parameters, not the numbers (the kernels' own tests do).
"""

import ctypes
import sys
import types

import numpy as np
import pytest
from fakecuda import TorchDtype, param
from tile_mlir import api
from tile_mlir import kernels as K
from tile_mlir.errors import LaunchError
from tile_mlir.kernels import library, training




class Tensor:
    """A CUDA tensor over a numpy array: what the per-call path reads of one."""

    def __init__(self, host, device=0, contiguous=True):
        self.host, self.shape, self._device, self._contiguous = host, host.shape, device, contiguous
        self.dtype = TORCH.float32 if host.dtype == np.float32 else TORCH.bfloat16
        self.is_cuda, self.device, self.requires_grad = device >= 0, f"cuda:{device}", False

    ndim = property(lambda self: self.host.ndim)

    def dim(self):
        return self.host.ndim

    def data_ptr(self):
        return self.host.ctypes.data

    def is_contiguous(self):
        return self._contiguous

    def contiguous(self):
        return self if self._contiguous else Tensor(self.host.copy(), self._device)

    def get_device(self):
        return self._device

    def reshape(self, *shape):
        return Tensor(self.host.reshape(*shape), self._device, self._contiguous)

    view = reshape

    def new_empty(self, shape, dtype=None):
        return empty(shape, dtype=dtype or self.dtype)


Tensor.__module__ = "torch"  # what the library takes for a torch tensor


def empty(shape, dtype=None, device=None):
    host = np.full(shape, np.nan, np.float32 if dtype is TORCH.float32 else np.uint16)
    return Tensor(host)


TORCH = types.ModuleType("torch")
TORCH.Tensor = Tensor
TORCH.nn = types.SimpleNamespace(Parameter=type("Parameter", (Tensor,), {"__module__": "torch"}))
TORCH.float32, TORCH.bfloat16 = TorchDtype("float32"), TorchDtype("bfloat16")
TORCH.empty, TORCH.empty_like = empty, lambda x, **layout: empty(x.shape, x.dtype)
TORCH.contiguous_format = "contiguous_format"
TORCH._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 4242)


@pytest.fixture
def gpu(fake, monkeypatch, tmp_path):
    """The stand-in torch, a fake driver that records rmsnorm's parameters, a fresh
    per-call table, compile cache and compiled kernels."""
    monkeypatch.setitem(sys.modules, "torch", TORCH)
    monkeypatch.setattr(api, "gpu_available", lambda: True)
    monkeypatch.setattr(library, "_FAST", {})
    monkeypatch.setattr(library, "_PLAIN", set())
    monkeypatch.setattr(training, "_FAST", {})
    monkeypatch.setattr(training, "_PLAIN", library._PLAIN)  # the one set the two per-call paths share
    monkeypatch.setenv("TILE_MLIR_CACHE_DIR", str(tmp_path))
    fake.seen = []
    fake.kernels["rmsnorm"] = lambda p: fake.seen.append(
        [param(p, i, ctypes.c_uint64) for i in range(4)] + [param(p, 4, ctypes.c_float), param(p, 5, ctypes.c_int64)])
    forget = (library._kernel.cache_clear, library._compiled.cache_clear, library._compiled_for.cache_clear,
              training._compiled_backward.cache_clear)
    for f in forget:
        f()
    yield fake
    for f in forget:
        f()


def full_way(monkeypatch):
    """Count the calls that go the whole way."""
    calls = []
    whole = library._on_device
    monkeypatch.setattr(library, "_on_device", lambda *a: calls.append(a) or whole(*a))
    return calls


def test_a_second_call_launches_what_the_first_did(gpu, monkeypatch):
    rng = np.random.default_rng(20261201)
    x, w = Tensor(rng.standard_normal((3, 5, 1000), np.float32)), Tensor(rng.standard_normal(1000, np.float32))
    calls = full_way(monkeypatch)
    y, rstd = K.rms_norm(x, w, eps=1e-5)
    assert len(calls) == 1 and len(gpu.seen) == 1
    y2, rstd2 = K.rms_norm(x, w, eps=1e-3)  # the same shape and dtype: the per-call path
    assert len(calls) == 1 and len(gpu.seen) == 2
    first, second = gpu.seen
    assert first[0] == second[0] == x.data_ptr() and first[1] == second[1] == w.data_ptr()
    assert second[2:4] == [y2.data_ptr(), rstd2.data_ptr()] and second[2] != first[2]
    assert (first[4], second[4]) == (np.float32(1e-5), np.float32(1e-3)) and first[5] == second[5] == 15
    assert gpu.launches[0][:2] == gpu.launches[1][:2]  # the same grid and block
    assert (y2.shape, rstd2.shape) == ((3, 5, 1000), (3, 5))  # the leading dims kept
    K.rms_norm(x, w)  # no eps: the kernel's default
    assert gpu.seen[-1][4] == np.float32(1e-6) and len(calls) == 1


BAD = {
    "weight of another dtype": (lambda x, w: (x, Tensor(w.host.view(np.uint16)[::2].copy())),
                                "every array must have x's dtype|must be CUDA tensors of"),
    "weight of another length": (lambda x, w: (x, Tensor(w.host[:999].copy())), r"must have shape \(1000,\)"),
    "weight on the CPU": (lambda x, w: (x, Tensor(w.host, device=-1)), "must be CUDA tensors"),
    "weight a numpy array": (lambda x, w: (x, w.host), "must be CUDA tensors"),
    "x misaligned": (lambda x, w: (Tensor(np.zeros(15 * 1000 + 1, np.float32)[1:].reshape(15, 1000)), w),
                     "misaligned"),
}


@pytest.mark.parametrize("make, message", BAD.values(), ids=BAD.keys())
def test_what_the_per_call_path_does_not_take_goes_the_whole_way(gpu, monkeypatch, make, message):
    rng = np.random.default_rng(7)
    x, w = Tensor(rng.standard_normal((15, 1000), np.float32)), Tensor(rng.standard_normal(1000, np.float32))
    K.rms_norm(x, w)
    calls = full_way(monkeypatch)
    bad_x, bad_w = make(x, w)
    with pytest.raises(LaunchError, match=message):
        K.rms_norm(bad_x, bad_w)
    assert len(calls) == 1 and len(gpu.seen) == 1  # the whole way, which refused it


def test_a_tensor_not_contiguous_is_made_contiguous_the_whole_way(gpu, monkeypatch):
    rng = np.random.default_rng(8)
    x, w = Tensor(rng.standard_normal((15, 1000), np.float32)), Tensor(rng.standard_normal(1000, np.float32))
    K.rms_norm(x, w)
    calls = full_way(monkeypatch)
    K.rms_norm(Tensor(x.host, contiguous=False), w)
    assert len(calls) == 1 and len(gpu.seen) == 2 and gpu.seen[1][0] != x.data_ptr()  # a contiguous copy


# --- the backward passes: the row kernel, then the column sums ------------------------


def backward_args(rng, M=24, N=1000):
    """(dy, x, w, rstd) of rms_norm_backward, f32."""
    dy, x = (Tensor(rng.standard_normal((M, N), np.float32)) for _ in range(2))
    return dy, x, Tensor(rng.standard_normal(N, np.float32)), Tensor(rng.uniform(0.5, 2, M).astype(np.float32))


def record_backward(fake):
    fake.rows, fake.sums = [], []
    fake.kernels["rmsnorm_backward"] = lambda p: fake.rows.append(
        [param(p, i, ctypes.c_uint64) for i in range(6)] + [param(p, i, ctypes.c_int64) for i in (6, 7)])
    fake.kernels["column_sums"] = lambda p: fake.sums.append(
        [param(p, i, ctypes.c_uint64) for i in range(2)] + [param(p, 2, ctypes.c_int64)])


def test_a_second_backward_call_launches_what_the_first_did(gpu, monkeypatch):
    """rms_norm_backward: the second call on the same shape takes the per-call path and
    gives both kernels the first call's arguments, but for its own outputs (dx, the
    partial rows, dw) and the same grids."""
    record_backward(gpu)
    dy, x, w, rstd = backward_args(np.random.default_rng(11))
    calls = []
    whole = training._on_device
    monkeypatch.setattr(training, "_on_device", lambda *a: calls.append(a) or whole(*a))
    dx, dw = K.rms_norm_backward(dy, x, w, rstd)
    dx2, dw2 = K.rms_norm_backward(dy, x, w, rstd)
    assert len(calls) == 1 and len(gpu.rows) == len(gpu.sums) == 2
    (first, second), (sums1, sums2) = gpu.rows, gpu.sums
    inputs = [a.data_ptr() for a in (dy, x, w, rstd)]
    assert first[:4] == second[:4] == inputs
    assert second[4] == dx2.data_ptr() != first[4] and first[4] == dx.data_ptr()
    assert first[6:] == second[6:] and first[7] == 24  # P partial rows, M rows
    assert sums1[0] == first[5] and sums2[0] == second[5]  # the column sums read the row kernel's partials
    assert (sums1[1], sums2[1]) == (dw.data_ptr(), dw2.data_ptr()) and sums1[2] == sums2[2] == first[6]
    assert [launch[:2] for launch in gpu.launches[:2]] == [launch[:2] for launch in gpu.launches[2:4]]
    assert (dx2.shape, dw2.shape) == ((24, 1000), (1000,))


BAD_BACKWARD = {
    "rstd of another dtype": (lambda a: (*a[:3], Tensor(a[3].host.view(np.uint16)[::2].copy())), "must be a CUDA tensor"),
    "rstd of another length": (lambda a: (*a[:3], Tensor(a[3].host[:23].copy())), r"rstd must have shape \(24,\)"),
    "weight on the CPU": (lambda a: (*a[:2], Tensor(a[2].host, device=-1), a[3]), "must be a CUDA tensor"),
    "x misaligned": (lambda a: (a[0], Tensor(np.zeros(24 * 1000 + 1, np.float32)[1:].reshape(24, 1000)), *a[2:]),
                     "misaligned"),
}


@pytest.mark.parametrize("make, message", BAD_BACKWARD.values(), ids=BAD_BACKWARD.keys())
def test_what_the_backward_per_call_path_does_not_take_goes_the_whole_way(gpu, monkeypatch, make, message):
    record_backward(gpu)
    args = backward_args(np.random.default_rng(12))
    K.rms_norm_backward(*args)
    calls = []
    whole = training._on_device
    monkeypatch.setattr(training, "_on_device", lambda *a: calls.append(a) or whole(*a))
    with pytest.raises(LaunchError, match=message):
        K.rms_norm_backward(*make(args))
    assert len(calls) <= 1 and len(gpu.rows) == 1  # the whole way, which refused it
