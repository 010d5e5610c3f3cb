"""The launch's fast path (issue 19, host overhead): a launch configuration is checked
once and its driver call kept; torch CUDA tensors (read through ``data_ptr()`` and
their own accessors, never DLPack) and Python numbers go straight into the kernel's
parameters (``params.Packer``); anything that does not match takes the full check, with
the same errors. torch here is a stand-in module in ``sys.modules`` (the runtime never
imports torch itself), its tensors over host memory, launched on ``fakecuda``'s driver.
"""

import ctypes
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from fakecuda import DeviceArray, TorchDtype, fake_artifact, param
from tile_mlir import arrays, params, runtime
from tile_mlir.errors import LaunchError
from tile_mlir.signature import ArgSpec, KernelSignature

ROOT = Path(__file__).resolve().parents[2]




class Tensor:
    """A torch.Tensor stand-in: a CUDA tensor over a numpy array."""

    def __init__(self, host, dtype=None, device=0, contiguous=True):
        self.host, self.shape, self.is_cuda = host, host.shape, device >= 0
        self.dtype = dtype or getattr(TORCH, host.dtype.name)
        self._device, self._contiguous = device, contiguous
        self.calls = 0

    def data_ptr(self):
        self.calls += 1
        return self.host.ctypes.data

    def is_contiguous(self):
        return self._contiguous

    def get_device(self):
        return self._device


TORCH = types.ModuleType("torch")
TORCH.Tensor = Tensor
TORCH.float32, TORCH.int32, TORCH.bfloat16 = TorchDtype("float32"), TorchDtype("int32"), TorchDtype("bfloat16")
TORCH._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 4242 + device)


class Parameter(Tensor):
    """A subclass, as torch.nn.Parameter is."""


@pytest.fixture
def torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", TORCH)
    monkeypatch.setattr(params, "_KINDS", {int: params._INT, float: params._FLOAT})  # forget the types seen
    return TORCH


SIG = KernelSignature("add_into", (ArgSpec("memref", "float32", (4,)), ArgSpec("memref", "float32", (4,))))
SCALARS = KernelSignature("add_one", (ArgSpec("memref", "float32", (4,)), ArgSpec("scalar", "int32")))
FILL = KernelSignature("fill", (ArgSpec("memref", "float32", (2, 2)), ArgSpec("scalar", "float32")))


@pytest.fixture
def rng():
    return np.random.default_rng(20261205)


def kernel(sig):
    return runtime.cuda_kernels(fake_artifact(signatures=(sig,)))[sig.name]


def no_full_check(monkeypatch):
    """Fail if an argument takes the full check (arrays.argument): the fast path must do."""
    def refuse(*args, **kwargs):
        raise AssertionError("the full check ran")

    monkeypatch.setattr(params, "argument", refuse)


def test_torch_tensors_and_numbers_take_the_fast_path(torch, fake, monkeypatch, rng):
    x = rng.uniform(0.5, 2, 4).astype(np.float32)
    a, b = Tensor(x.copy()), Parameter(np.zeros(4, np.float32))
    no_full_check(monkeypatch)
    kernel(SIG).launch(1, 32, a, b)
    np.testing.assert_array_equal(b.host, x + 1)
    k = kernel(SCALARS)
    k.launch(1, 32, a, 3)
    np.testing.assert_array_equal(a.host, x + np.array([1, 1, 1, 0], np.float32))
    assert param(fake.launches[-1][4], 1, ctypes.c_int32) == 3
    fill = kernel(FILL)  # held: its parameters are read after the launch
    fill.launch(1, 32, Tensor(np.zeros((2, 2), np.float32)), 2.5)
    assert param(fake.launches[-1][4], 1, ctypes.c_float) == 2.5


# Each goes through the full check, which accepts it or raises its usual error.
MISMATCHES = {
    "flat shape": (lambda: Tensor(np.zeros((2, 2), np.float32).reshape(4)), None),
    "wrong dtype": (lambda: Tensor(np.zeros(4, np.int32)), "got dtype int32"),
    "wrong shape": (lambda: Tensor(np.zeros(5, np.float32)), r"got shape \(5,\)"),
    "misaligned": (lambda: Tensor(np.zeros(5, np.float32)[1:]), r"is misaligned: its address 0x[0-9a-f]+ % 16 = 4"),
    "not contiguous": (lambda: Tensor(np.zeros(4, np.float32), contiguous=False), "C-contiguous device array"),
    "another device": (lambda: Tensor(np.zeros(4, np.float32), device=1), "on CUDA device 1"),
    "a CPU tensor": (lambda: Tensor(np.zeros(4, np.float32), device=-1), r"a numpy array or a CUDA array .* got Tensor"),
}


@pytest.mark.parametrize("make, message", MISMATCHES.values(), ids=MISMATCHES.keys())
def test_a_tensor_that_does_not_match_takes_the_full_check(torch, fake, make, message):
    k, good = kernel(SIG), Tensor(np.zeros(4, np.float32))
    if message is None:
        k.launch(1, 32, make(), good)
        return
    with pytest.raises(LaunchError, match=message):
        k.launch(1, 32, make(), good)
    with pytest.raises(LaunchError, match=message):  # bind: the full check only, the same error
        k.bind(1, 32, make(), good)


@pytest.mark.parametrize("value, message", [
    (2**31, "argument 1: int 2147483648 does not fit a scalar int32"),
    (-(2**31) - 1, "does not fit a scalar int32"),
    (1.5, "argument 1 is a scalar int32, got float 1.5"),
    (True, None),  # a bool is an int, through the full check
    (np.int32(7), None),
])
def test_numbers_out_of_the_fast_path(torch, fake, value, message):
    k = kernel(SCALARS)
    a = Tensor(np.zeros(4, np.float32))
    if message is None:
        k.launch(1, 32, a, value)
        assert param(fake.launches[-1][4], 1, ctypes.c_int32) == int(value)
    else:
        with pytest.raises(LaunchError, match=message):
            k.launch(1, 32, a, value)


def test_a_launch_configuration_is_checked_once(torch, fake, monkeypatch):
    k = kernel(SIG)
    a, b = Tensor(np.zeros(4, np.float32)), Tensor(np.zeros(4, np.float32))
    checks = []
    original = runtime.check_launch
    monkeypatch.setattr(runtime, "check_launch", lambda *args: checks.append(args) or original(*args))
    for _ in range(3):
        k.launch(2, 64, a, b, stream=7)
    k.launch((2,), (64, 1), a, b, stream=7)
    k.launch((2,), (64, 1), a, b, stream=7)
    assert len(checks) == 2  # one per spelling of the configuration
    assert [launch[:4] for launch in fake.launches] == [((2, 1, 1), (64, 1, 1), 0, 7)] * 5
    with pytest.raises(LaunchError, match="grid must be a positive int"):
        k.launch(2.0, 64, a, b, stream=7)  # equal to 2, but no int: never the cached call
    with pytest.raises(LaunchError, match="block must be a positive int"):
        k.launch(2, (64.0,), a, b, stream=7)


def test_a_new_pointer_each_launch_is_packed_each_launch(torch, fake, rng):
    k = kernel(SIG)
    xs = [rng.uniform(0.5, 2, 4).astype(np.float32) for _ in range(3)]
    outs = [Tensor(np.zeros(4, np.float32)) for _ in xs]
    for x, out in zip(xs, outs):
        k.launch(1, 32, Tensor(x), out)
    for x, out in zip(xs, outs):
        np.testing.assert_array_equal(out.host, x + 1)


def test_torch_stream_reads_the_current_stream_without_importing_torch(torch, fake):
    assert arrays.torch_stream() == 4242 and arrays.torch_stream(1) == 4243
    k = kernel(SIG)
    k.launch(1, 32, Tensor(np.zeros(4, np.float32)), Tensor(np.zeros(4, np.float32)), stream=arrays.torch_stream())
    assert fake.launches[-1][3] == 4242


def test_other_device_arrays_still_launch(fake, rng):
    """Without torch, device arrays take the full check, as before."""
    x = rng.uniform(0.5, 2, 4).astype(np.float32)
    out = np.zeros(4, np.float32)
    kernel(SIG).launch(1, 32, DeviceArray(x), DeviceArray(out))
    np.testing.assert_array_equal(out, x + 1)


def test_the_benchmark_runs_on_the_fake_driver(tmp_path):
    """benchmarks/launch_overhead.py --fake: every way it times, in µs per call."""
    script = ("import json, benchmarks.launch_overhead as b; "
              "print(json.dumps(b.measure(n=200, repeat=1, fake=True)))")
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'python'}:{ROOT}", "TILE_MLIR_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True, env=env)
    results = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert set(results) == {"launch(a, b)", "launch(a, b, stream=handle)", "launch(a, b, stream=torch_stream())",
                            "bind(a, b)()", "driver floor"}
    assert all(0 < us < 1000 for us in results.values())


def test_a_dynamic_leading_dim_takes_the_fast_path(torch, fake, monkeypatch):
    """A memref whose leading dim an integer argument gives (tile_mlir.dynamic_dims):
    any row count with the static dims goes straight in; other dims take the full
    check and its error."""
    k = kernel(KernelSignature("fill", (ArgSpec("memref", "float32", (None, 2)), ArgSpec("scalar", "float32"))))
    rows = Tensor(np.zeros((2, 2), np.float32))
    with monkeypatch.context() as m:
        no_full_check(m)
        k.launch(1, 32, rows, 1.5)
    np.testing.assert_array_equal(rows.host, 1.5)
    with pytest.raises(LaunchError, match=r"must be float32\[\?, 2\], got shape \(2, 3\)"):
        k.launch(1, 32, Tensor(np.zeros((2, 3), np.float32)), 1.5)
