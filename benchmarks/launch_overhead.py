"""Host overhead per launch: what one ``launch()`` and one bound call ``bind(...)()`` cost.

    python -m benchmarks.launch_overhead [--fake] [--n 20000] [--repeat 5] [--cache DIR]

The kernel is the launch probe of ``benchmarks.kernels`` (``add_one``: two 1024-f32
arrays, one block). Each way is called ``--n`` times back to back (then one synchronize);
a figure is the wall time per call, the median of ``--repeat`` such loops, in µs:

* ``launch(a, b)``: two torch CUDA tensors, the default stream: checked and packed on
  every call (``params.Packer``);
* ``launch(a, b, stream=handle)``: the same on a stream given as an int handle;
* ``launch(a, b, stream=torch_stream())``: the stream read from torch on every call
  (``arrays.torch_stream``), as a torch entry point does;
* ``launch(a, b, stream=torch.cuda.current_stream())``: the same through torch's Python
  API;
* ``bind(a, b)()``: packed once;
* ``driver floor``: ``cuLaunchKernel`` itself, through cuda-python, with its arguments
  made beforehand: what no launcher through cuda-python can go below;
* ``ctypes floor``: the same driver call through ``ctypes`` (libcuda's
  ``cuLaunchKernel``, its argument types declared, the arguments Python ints): what a
  launcher that calls the driver without cuda-python would pay (GPU only).
* ``torch a.add_(1)``: a torch kernel launch, for scale.

On the GPU machine (torch, cuda-python, no MLIR), with the kernel in the compile cache
(``python -m benchmarks.launch_overhead --prepare --cache .tile-cache/launch`` here,
where MLIR is, then copy the directory over)::

    PYTHONPATH=python TILE_MLIR_CACHE_DIR=.tile-cache/launch python3 -m benchmarks.launch_overhead

``--fake`` runs here, without a GPU or torch: the driver is one whose calls do nothing
(``NullDriver``) and the tensors are stand-ins with torch's accessors, implemented in
Python (``FakeTensor``, a ``torch`` module of its own in ``sys.modules``). It measures
tile-mlir's own Python, plus the stand-ins' accessor calls.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import types

from . import kernels as K

OPTIONS = {"chip": "sm_90a"}


# --- --fake: a driver that does nothing, tensors that only answer -------------------------


class NullDriver:
    """The cuda.bindings.driver calls a launch makes, each doing nothing."""

    CUstream = int
    CUdevice_attribute = types.SimpleNamespace(
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR=9, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR=0,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN=232448)

    def cuInit(self, flags):
        return (0,)

    def cuDeviceGet(self, ordinal):
        return (0, 0)

    def cuDevicePrimaryCtxRetain(self, device):
        return (0, "context")

    def cuDeviceGetAttribute(self, attribute, device):
        return (0, attribute)

    def cuCtxSetCurrent(self, context):
        return (0,)

    def cuModuleLoadData(self, image):
        return (0, "module")

    def cuModuleGetFunction(self, module, name):
        return (0, name)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        return (0,)

    def cuStreamSynchronize(self, stream):
        return (0,)


class FakeDtype:
    def __str__(self) -> str:
        return "torch.float32"


class FakeTensor:
    """What the launch reads of a torch CUDA tensor, in Python."""

    __slots__ = ("dtype", "is_cuda", "shape", "_pointer")

    def __init__(self, pointer: int, shape, dtype):
        self._pointer, self.shape, self.dtype, self.is_cuda = pointer, shape, dtype, True

    def data_ptr(self) -> int:
        return self._pointer

    def is_contiguous(self) -> bool:
        return True

    def get_device(self) -> int:
        return 0


def install_fake():
    """Launch on ``NullDriver``, with a ``torch`` of ``FakeTensor``s; returns that torch."""
    from tile_mlir import runtime

    torch = types.ModuleType("torch", "a stand-in: FakeTensor and float32")
    torch.Tensor, torch.float32 = FakeTensor, FakeDtype()
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0)
    sys.modules["torch"] = torch
    driver = NullDriver()
    runtime._driver = lambda: driver
    return torch, driver


# --- the measurement ------------------------------------------------------------------------


def per_call(fn, n: int, repeat: int, sync) -> float:
    """µs per call of ``fn``: the median of ``repeat`` loops of ``n`` calls (and a sync)."""
    for _ in range(min(n, 1000)):
        fn()
    sync()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        samples.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(samples)


def _ctypes_launch():
    """libcuda's ``cuLaunchKernel`` through ctypes, its argument types declared."""
    import ctypes

    fn = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    return fn


def measure(n: int = 20000, repeat: int = 5, fake: bool = False) -> dict:
    """µs per call of each way (module docstring), by name."""
    import tile_mlir
    from tile_mlir import arrays, runtime

    if fake:
        torch, driver = install_fake()
        a = FakeTensor(1 << 20, (K.LAUNCH_N,), torch.float32)
        b = FakeTensor(1 << 21, (K.LAUNCH_N,), torch.float32)
        def sync():
            return None
    else:
        import torch

        driver = runtime._driver()
        a = torch.randn(K.LAUNCH_N, device="cuda")
        b = torch.full_like(a, float("nan"))
        sync = torch.cuda.synchronize
    kern = tile_mlir.compile(K.launch_probe(), OPTIONS, backend="cuda")["add_one"]
    kern.launch(1, K.LAUNCH_N, a, b)
    sync()
    if not fake:
        assert torch.equal(b, a + 1), "add_one is wrong"
    handle = arrays.torch_stream()
    bound = kern.bind(1, K.LAUNCH_N, a, b)
    params = runtime.Params(kern.signature)
    params.slots[0], params.slots[1] = a.data_ptr(), b.data_ptr()
    floor_args = (kern._cu_function(), 1, 1, 1, K.LAUNCH_N, 1, 1, 0, driver.CUstream(0), params.address, 0)
    ways = {
        "launch(a, b)": lambda: kern.launch(1, K.LAUNCH_N, a, b),
        "launch(a, b, stream=handle)": lambda: kern.launch(1, K.LAUNCH_N, a, b, stream=handle),
        "launch(a, b, stream=torch_stream())": lambda: kern.launch(1, K.LAUNCH_N, a, b, stream=arrays.torch_stream()),
        "bind(a, b)()": bound,
        "driver floor": lambda: driver.cuLaunchKernel(*floor_args),
    }
    if not fake:
        ways["launch(a, b, stream=torch.cuda.current_stream())"] = (
            lambda: kern.launch(1, K.LAUNCH_N, a, b, stream=torch.cuda.current_stream()))
        ways["torch a.add_(1)"] = lambda: a.add_(1.0)
        ctypes_launch = _ctypes_launch()
        ctypes_args = (int(floor_args[0]), *floor_args[1:8], 0, params.address, None)
        ways["ctypes floor"] = lambda: ctypes_launch(*ctypes_args)
    return {name: per_call(fn, n, repeat, sync) for name, fn in ways.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.launch_overhead", description=__doc__.split("\n")[0])
    parser.add_argument("--fake", action="store_true", help="no GPU: a driver that does nothing, stand-in tensors")
    parser.add_argument("--prepare", action="store_true", help="only compile the launch probe into the cache (needs MLIR)")
    parser.add_argument("--cache", help="the compile cache (default: $TILE_MLIR_CACHE_DIR, else the cache's default)")
    parser.add_argument("--n", type=int, default=20000, help="calls per loop (default 20000)")
    parser.add_argument("--repeat", type=int, default=5, help="loops; the median is reported (default 5)")
    args = parser.parse_args(argv)
    if args.cache:
        import os

        os.environ["TILE_MLIR_CACHE_DIR"] = args.cache
    if args.prepare:
        import tile_mlir

        tile_mlir.compile(K.launch_probe(), OPTIONS, backend="cuda")
        print(f"compiled the launch probe into {args.cache or 'the default compile cache'}")
        return 0
    results = measure(args.n, args.repeat, args.fake)
    where = "fake driver, stand-in tensors" if args.fake else "GPU"
    print(f"host time per call, µs ({where}; median of {args.repeat} loops of {args.n} calls)")
    for name, us in results.items():
        print(f"  {name:<52} {us:7.2f}")
    print(json.dumps({"launch_overhead_us": results, "fake": args.fake}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
