"""The pure-read ceiling: a CUDA kernel that reads a tensor once and nothing else.

``read_times(xs)`` times it on the same input sets as the kernel it is the ceiling of
(steady, rotating through ``xs``, and L2-flushed), as ``measure.copy_times`` does for the
copy, and returns ``(ms, ms flushed, config)``; GB/s = bytes of one input / time. The
kernel (``SOURCE``) is a grid-stride loop of 16-byte loads (``uint4`` through the
read-only path), ``UNROLL`` independent loads in flight per thread per step, folded with
XOR into one word per thread that is stored only when it equals a key no input hashes to
in practice: the loads cannot be optimised away, and nothing is written. It is compiled
at run time by cupy (NVRTC; ``nvcc -cubin`` when NVRTC is missing) and launched by cupy
on the legacy default stream, which torch's CUDA events bracket. The fastest of the
``CONFIGS`` (blocks per SM, threads, unroll) on the first input set is the one timed.

Tensors of any dtype are read as bytes (a bf16 tensor goes through a ``uint8`` view, as
cupy does not take bf16); their byte size must be a multiple of 16. Importing this module
needs neither cupy nor torch.
"""

from __future__ import annotations

import functools

SOURCE = r"""
template <int UNROLL>
__device__ __forceinline__ void read_all(const uint4* __restrict__ x, unsigned long long n,
                                         unsigned* __restrict__ out, unsigned key) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned acc = 0;
    for (; i + (UNROLL - 1) * stride < n; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = __ldg(x + i + u * stride);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) {
        uint4 v = __ldg(x + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == key) out[0] = acc;  // practically never: the result is consumed, nothing written
}
extern "C" __global__ void read_u4(const uint4* x, unsigned long long n, unsigned* out, unsigned key) {
    read_all<4>(x, n, out, key);
}
extern "C" __global__ void read_u8(const uint4* x, unsigned long long n, unsigned* out, unsigned key) {
    read_all<8>(x, n, out, key);
}
"""
KEY = 0x9E3779B9
CONFIGS = ((4, 512, 4), (8, 256, 4), (8, 512, 4), (4, 512, 8), (2, 1024, 8), (16, 256, 8))  # blocks/SM, threads, unroll


def label(cfg: tuple[int, int, int]) -> str:
    return f"{cfg[0]}/SM x {cfg[1]} threads, unroll {cfg[2]}"


@functools.cache
def _module():
    import cupy

    try:
        mod = cupy.RawModule(code=SOURCE, options=("-std=c++14",), name_expressions=None)
        mod.get_function("read_u4")
        return mod
    except Exception as nvrtc_error:  # noqa: BLE001 - NVRTC missing: build the cubin with nvcc
        import shutil
        import subprocess
        import tempfile
        from pathlib import Path

        nvcc = shutil.which("nvcc")
        if nvcc is None:
            raise RuntimeError(f"cupy could not compile the read kernel ({nvrtc_error}) and nvcc is not on PATH")
        tmp = Path(tempfile.mkdtemp())
        (tmp / "read.cu").write_text(SOURCE)
        subprocess.run([nvcc, "-cubin", "-O3", "-gencode=arch=compute_90a,code=sm_90a", "-o", str(tmp / "read.cubin"),
                        str(tmp / "read.cu")], check=True, capture_output=True, text=True)
        return cupy.RawModule(path=str(tmp / "read.cubin"))


def launcher(x, cfg: tuple[int, int, int]):
    """A call that reads all of torch tensor ``x`` once with configuration ``cfg``."""
    import cupy
    import torch

    nbytes = x.numel() * x.element_size()
    if nbytes % 16:
        raise ValueError(f"the read kernel reads 16-byte vectors: {nbytes} bytes is not a multiple of 16")
    flat = cupy.asarray(x.detach().contiguous().view(-1).view(torch.uint8))
    out = cupy.zeros(1, dtype=cupy.uint32)
    per_sm, threads, unroll = cfg
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    fn = _module().get_function(f"read_u{unroll}")
    args = (flat, cupy.uint64(nbytes // 16), out, cupy.uint32(KEY))
    grid = (sms * per_sm,)
    return lambda: fn(grid, (threads,), args)


def read_times(xs) -> tuple[float, float, str]:
    """The pure-read kernel over the tensors ``xs``: the fastest of ``CONFIGS`` (steady, on
    all of ``xs``), then timed again steady and L2-flushed; (ms, ms, its configuration)."""
    from .timing import flushed, steady

    fns, cfg = fastest_read(xs)
    return steady(fns), flushed(fns[0]), cfg


def fastest_read(xs) -> tuple[list, str]:
    """The launchers (one per tensor of ``xs``) of the fastest of ``CONFIGS`` (steady, on all
    of ``xs``), and its configuration."""
    from .timing import steady

    timed = []
    for cfg in CONFIGS:
        fns = [launcher(x, cfg) for x in xs]
        timed.append((steady(fns, target_ms=10.0, repeat=3), cfg, fns))
    _, cfg, fns = min(timed, key=lambda t: t[0])
    return fns, label(cfg)

