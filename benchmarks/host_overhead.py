"""Host overhead of ``tile_mlir.torch``: the CPU time of one call of each function.

    python -m benchmarks.host_overhead [--out DIR] [--n 2000] [--repeat 5] [--fake]
    python -m benchmarks.host_overhead --prepare --cache DIR   # here, where MLIR is

Each function (softmax, logsumexp, rms_norm, layer_norm, cross_entropy) is called ``--n``
times back to back on tiny tensors (``SHAPE``, ``CE_SHAPE``: the GPU is not the
bottleneck), with no synchronization inside the loop; a figure is the wall time of the
loop divided by ``--n``, in µs, the median of ``--repeat`` loops. Beside each, torch
eager's own call of the same op, the reference point. Three ways per function:

* ``call``: the forward, no input requiring grad (what inference pays);
* ``call, grad``: the forward with inputs that require grad (it records the backward);
* ``fwd+bwd``: ``torch.autograd.grad`` of the forward, the whole step of a layer.

``--graph`` adds the cost inside a ``torch.compile`` graph (``graph_cases``): a compiled
function of RMSNorm alone, and of a residual add, RMSNorm and a product (the pattern of a
transformer block, where Inductor fuses torch's norm with its neighbours and ours stands
between two of Inductor's kernels), each called forward only and forward + backward,
ours (``tile_mlir.torch.rms_norm``) against torch's (``F.rms_norm``).

and, for softmax, a breakdown of the layers one call goes through: the custom op
through torch's dispatcher (``torch.ops.tile_mlir.softmax``, and its twin without autograd,
``torch.ops.tile_mlir_raw.softmax``, which a compiled graph calls), the functional API
(``K.softmax``), ``kernel.launch`` with the arguments made, and the bound launch
(``bind(...)()``). The target is at most 10 µs per ``call``. A loop whose final
synchronize took over a fifth of its time was waiting for the GPU: it is marked
``gpu-bound`` (the figure is then the GPU's, not the host's).

On the GPU machine (torch, cuda-python, no MLIR), with the kernels compiled here into
a cache (``--prepare --cache .tile-cache/hostov``: the shapes below, and the kernels of
test/gpu/test_torch_gpu.py and test_torch_graph_gpu.py, a few MB) and copied there::

    PYTHONPATH=python TILE_MLIR_CACHE_DIR=.tile-cache/hostov python3 -m benchmarks.host_overhead --out OUT

``--fake`` runs here with CPU torch: the tensors are CPU tensors that say they are on
CUDA device 0 and the driver's calls do nothing (``launch_overhead.NullDriver``): it
measures tile-mlir's and torch's Python and dispatch, not the driver's launch; torch's
figures are then CPU torch's, a reference of scale only. It prints a table and writes
``host_overhead.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import types
from pathlib import Path

SHAPE = (256, 1024)  # rows x columns of the row kernels, f32 (also test/gpu/test_torch_gpu.py's)
CE_SHAPE = (37, 1000)  # rows x classes of cross-entropy, f32 (also test_cross_entropy_gpu.py's)
FAKE_SHAPES = ((8, 128), (8, 128))  # --fake: CPU torch computes, and allocates, for real
TARGET_US = 10.0
FUNCTIONS = ("softmax", "logsumexp", "rms_norm", "layer_norm", "cross_entropy")


def prepare() -> int:
    """Compile every kernel a run takes (forward and backward), and those of
    test/gpu/test_torch_gpu.py and test_torch_graph_gpu.py (``testing.fused``'s
    ``TORCH_GPU_SHAPES``, cross-entropy at 37 x 1000 and 4096 x 32000, f32 and bf16),
    into the cache: a few MB, for a GPU run of these alone."""
    from tile_mlir.kernels import kernel_text, text_backward
    from tile_mlir.testing.fused import TORCH_GPU_SHAPES

    assert (*SHAPE, "f32") in TORCH_GPU_SHAPES
    texts = []
    for M, N, dtype in TORCH_GPU_SHAPES:
        texts += [kernel_text(k, M, N, dtype, remember=True) for k in ("softmax", "logsumexp", "rmsnorm", "layernorm")]
        texts += [t for k in ("softmax_backward", "logsumexp_backward", "rmsnorm_backward", "layernorm_backward")
                  for t in text_backward(k, M, N, dtype, remember=True)]
    texts += [kernel_text(k, M, V, dtype, remember=True) for k in ("cross_entropy", "cross_entropy_backward", "cross_entropy_fused")
              for M, V in (CE_SHAPE, (4096, 32000)) for dtype in ("f32", "bf16")]
    texts += [kernel_text(k, 1, 1, remember=True) for k in ("cross_entropy_reduce", "cross_entropy_row_scale")]
    import tile_mlir
    from tile_mlir.options import Options
    from tile_mlir.vocab import DEFAULT_CHIP

    for text in texts:  # as tile_mlir.kernels compiles them: the same cache keys
        tile_mlir.compile(text, Options(chip=DEFAULT_CHIP), backend="cuda")
    return len(texts)


def install_fake():
    """CPU tensors that say they are on CUDA device 0, torch's current stream 0, and the
    driver of ``launch_overhead`` (calls that do nothing); a GPU is then "available"."""
    import torch

    from benchmarks.launch_overhead import NullDriver
    from tile_mlir import api, runtime

    torch.set_num_threads(1)  # CPU time: no idle OpenMP workers spinning
    torch.Tensor.is_cuda = property(lambda self: True)
    torch.Tensor.get_device = lambda self: 0
    torch._C._cuda_getCurrentRawStream = lambda device: 0
    torch.cuda.current_stream = lambda device=None: types.SimpleNamespace(cuda_stream=0)
    torch.cuda.is_current_stream_capturing = lambda: False
    driver = NullDriver()
    runtime._driver = lambda: driver
    api.gpu_available = lambda: True


def per_call(fn, n: int, repeat: int, sync, clock=time.perf_counter) -> tuple[float, bool]:
    """(µs per call of ``fn``, the median of ``repeat`` loops of ``n`` calls, whether the
    GPU was the bottleneck: the synchronize after a loop took over a fifth of it).
    ``clock``: wall time on the GPU; the process's CPU time with ``--fake`` (a shared
    machine's other processes then do not count)."""
    for _ in range(min(n, 200)):
        fn()
    sync()
    samples, bound = [], False
    for _ in range(repeat):
        t0 = clock()
        for _ in range(n):
            fn()
        t1 = clock()
        sync()
        t2 = clock()
        samples.append((t1 - t0) / n * 1e6)
        bound = bound or (t2 - t1) > 0.2 * (t1 - t0)
    return statistics.median(samples), bound


def cases(torch, tt, device: str, shape, ce_shape) -> dict:
    """{function: {way: (ours, torch's)}}, each a zero-argument callable."""
    F = torch.nn.functional
    M, N = shape
    g = torch.Generator(device=device).manual_seed(19)

    def rand(*shape, scale=1.0):
        return scale * torch.randn(shape, generator=g, device=device)

    x, w, b = rand(M, N), 1 + rand(N, scale=0.3), rand(N, scale=0.3)
    logits = rand(*ce_shape, scale=2.0)
    target = torch.randint(0, ce_shape[1], (ce_shape[0],), generator=g, device=device)
    fns = {
        "softmax": ((x,), tt.softmax, lambda x: torch.softmax(x, -1)),
        "logsumexp": ((x,), tt.logsumexp, lambda x: torch.logsumexp(x, -1)),
        "rms_norm": ((x, w), lambda x, w: tt.rms_norm(x, w, 1e-6), lambda x, w: F.rms_norm(x, (N,), w, 1e-6)),
        "layer_norm": ((x, w, b), lambda x, w, b: tt.layer_norm(x, w, b, 1e-5),
                       lambda x, w, b: F.layer_norm(x, (N,), w, b, 1e-5)),
        "cross_entropy": ((logits, target), tt.cross_entropy, F.cross_entropy),
    }
    out = {}
    for name, (args, ours, theirs) in fns.items():
        leaves = [a.detach().requires_grad_() if a.is_floating_point() else a for a in args]
        dy = torch.ones_like(ours(*args))
        floats = [a for a in leaves if a.is_floating_point()]

        def step(fn, leaves=leaves, dy=dy, floats=floats):
            return lambda: torch.autograd.grad(fn(*leaves), floats, dy)

        out[name] = {
            "call": (lambda fn=ours, a=args: fn(*a), lambda fn=theirs, a=args: fn(*a)),
            "call, grad": (lambda fn=ours, a=leaves: fn(*a), lambda fn=theirs, a=leaves: fn(*a)),
            "fwd+bwd": (step(ours), step(theirs)),
        }
    return out


def graph_cases(torch, tt, device: str, shape) -> dict:
    """{case: (ours, torch's)}: zero-argument callables of compiled functions (module
    docstring, ``--graph``)."""
    F = torch.nn.functional
    M, N = shape
    g = torch.Generator(device=device).manual_seed(23)
    x, r = (torch.randn(M, N, generator=g, device=device) for _ in range(2))
    w = 1 + 0.3 * torch.randn(N, generator=g, device=device)
    norms = {"ours": lambda x, w: tt.rms_norm(x, w, 1e-6), "torch": lambda x, w: F.rms_norm(x, (N,), w, 1e-6)}
    out = {}
    for case, body in (("rms_norm alone", lambda norm, x, r, w: norm(x, w)),
                       ("add, rms_norm, mul", lambda norm, x, r, w: norm(x + r, w) * 2)):
        pair = []
        for name in ("ours", "torch"):
            fn = torch.compile(lambda x, r, w, norm=norms[name], body=body: body(norm, x, r, w), fullgraph=True)
            pair.append(fn)
        leaves = [a.detach().requires_grad_() for a in (x, r, w)]
        dy = torch.ones(M, N, device=device)
        out[f"{case}: call"] = tuple(lambda fn=fn: fn(x, r, w) for fn in pair)
        out[f"{case}: fwd+bwd"] = tuple(lambda fn=fn: torch.autograd.grad(fn(*leaves), leaves, dy, allow_unused=True)
                                        for fn in pair)
    return out


def breakdown(torch, x) -> dict:
    """The layers of one ``tt.softmax(x)``, each timed alone (µs per call by name)."""
    from tile_mlir import arrays
    from tile_mlir import kernels as K

    M, N = x.shape
    c = K.compiled("softmax", M, N)
    y = torch.empty_like(x)
    stream = arrays.torch_stream()
    bound = c.kernel.bind(c.grid, c.block, x, y, M, stream=stream)
    return {
        "torch.ops.tile_mlir.softmax (dispatcher)": lambda: torch.ops.tile_mlir.softmax(x),
        "torch.ops.tile_mlir_raw.softmax (the twin a graph calls)": lambda: torch.ops.tile_mlir_raw.softmax(x),
        "K.softmax (functional API)": lambda: K.softmax(x),
        "kernel.launch (made arguments)": lambda: c.kernel.launch(c.grid, c.block, x, y, M, stream=stream),
        "bind(...)() (packed once)": bound,
        "torch.empty_like(x)": lambda: torch.empty_like(x),
    }


def measure(n: int, repeat: int, fake: bool, functions=FUNCTIONS, graph: bool = False) -> dict:
    """µs per call: {"functions": {"<function>: <way>": ours, torch's, whether GPU-bound},
    "breakdown": {layer: µs}, "graph": {case: ours, torch's, ...} with ``graph``} (module
    docstring)."""
    if fake:
        install_fake()
    import torch

    import tile_mlir.torch as tt

    device = "cpu" if fake else "cuda"
    shape, ce_shape = FAKE_SHAPES if fake else (SHAPE, CE_SHAPE)
    sync = (lambda: None) if fake else torch.cuda.synchronize
    clock = time.process_time if fake else time.perf_counter
    results = {"functions": {}, "breakdown": {}}
    for name, ways in cases(torch, tt, device, shape, ce_shape).items():
        if name not in functions:
            continue
        for way, (ours, theirs) in ways.items():
            us, bound = per_call(ours, n, repeat, sync, clock)
            ref, ref_bound = per_call(theirs, n, repeat, sync, clock)
            results["functions"][f"{name}: {way}"] = {"ours_us": us, "torch_us": ref, "gpu_bound": bound,
                                                      "torch_gpu_bound": ref_bound}
    if graph:
        results["graph"] = {}
        for case, (ours, theirs) in graph_cases(torch, tt, device, shape).items():
            us, bound = per_call(ours, n, repeat, sync, clock)
            ref, ref_bound = per_call(theirs, n, repeat, sync, clock)
            results["graph"][case] = {"ours_us": us, "torch_us": ref, "gpu_bound": bound,
                                      "torch_gpu_bound": ref_bound}
    x = torch.randn(*shape, device=device)
    for name, fn in breakdown(torch, x).items():
        us, bound = per_call(fn, n, repeat, sync, clock)
        results["breakdown"][name] = {"us": us, "gpu_bound": bound}
    return results


def table(results: dict, fake: bool) -> str:
    ref = "CPU torch" if fake else "torch"
    lines = [f"{'function: way':<28} {'ours µs':>8} {ref + ' µs':>12}  target {TARGET_US:g} µs per call"]
    for name, r in results["functions"].items():
        flag = " gpu-bound" if r["gpu_bound"] else ""
        ok = "" if not name.endswith(": call") else ("  ok" if r["ours_us"] <= TARGET_US else "  OVER")
        lines.append(f"{name:<28} {r['ours_us']:8.2f} {r['torch_us']:12.2f}{ok}{flag}")
    if results.get("graph"):
        lines.append("in a torch.compile graph (ours: tile_mlir.torch.rms_norm; torch: F.rms_norm, fused by Inductor):")
        for name, r in results["graph"].items():
            flag = " gpu-bound" if r["gpu_bound"] or r["torch_gpu_bound"] else ""
            lines.append(f"  {name:<26} {r['ours_us']:8.2f} {r['torch_us']:12.2f}{flag}")
    lines.append("softmax, layer by layer:")
    for name, r in results["breakdown"].items():
        lines.append(f"  {name:<42} {r['us']:8.2f}{' gpu-bound' if r['gpu_bound'] else ''}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.host_overhead", description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="write host_overhead.json here")
    parser.add_argument("--fake", action="store_true", help="CPU torch, a driver that does nothing (no GPU)")
    parser.add_argument("--prepare", action="store_true", help="only compile the kernels into the cache (needs MLIR)")
    parser.add_argument("--cache", help="the compile cache (default: $TILE_MLIR_CACHE_DIR, else the cache's default)")
    parser.add_argument("--functions", default=",".join(FUNCTIONS), help="which, comma-separated (default: all)")
    parser.add_argument("--graph", action="store_true", help="also inside torch.compile graphs (graph_cases)")
    parser.add_argument("--n", type=int, default=2000, help="calls per loop (default 2000)")
    parser.add_argument("--repeat", type=int, default=5, help="loops; the median is reported (default 5)")
    args = parser.parse_args(argv)
    if args.cache:
        os.environ["TILE_MLIR_CACHE_DIR"] = str(Path(args.cache).resolve())
    if args.prepare:
        count = prepare()
        print(f"compiled {count} kernels into {args.cache or 'the default compile cache'}")
        return 0
    results = measure(args.n, args.repeat, args.fake, tuple(args.functions.split(",")), args.graph)
    where = "fake: CPU torch, a driver that does nothing" if args.fake else "GPU"
    print(f"host time per call, µs ({where}; median of {args.repeat} loops of {args.n} calls, no sync inside)")
    print(table(results, args.fake))
    record = {"host_overhead_us": results, "fake": args.fake, "n": args.n, "repeat": args.repeat,
              "shapes": FAKE_SHAPES if args.fake else (SHAPE, CE_SHAPE), "target_us": TARGET_US}
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "host_overhead.json").write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
