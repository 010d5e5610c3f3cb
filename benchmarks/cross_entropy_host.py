"""Host time of cross-entropy's calls: the reductions over the rows as torch ops around
the kernel (the code of tile_mlir.kernels.loss up to commit 3416df9, rebuilt here from
the library's kernels) against the kernels that do them now (``cross_entropy_reduce``,
``cross_entropy_row_scale``), alternating in one process, on the GPU machine:

    PYTHONPATH=python TILE_MLIR_CACHE_DIR=.tile-cache python3 -m benchmarks.cross_entropy_host

(37 x 1000 f32 logits, one row ignored, the kernels of ``benchmarks.host_overhead
--prepare``). Both ways are checked to agree before they are timed; a figure is the host
µs per call (2000 calls, no sync inside), the median of 7 loops of each, alternating.
"""

from __future__ import annotations

import statistics
import sys
import time

M, V, IGNORE = 37, 1000, -100


def ways(torch) -> dict:
    """{call: (old, new)}, zero-argument callables, checked to agree."""
    from tile_mlir import kernels as K
    from tile_mlir.arrays import torch_stream
    from tile_mlir.kernels import library as L

    x = torch.randn(M, V, device="cuda")
    t = torch.randint(0, V, (M,), device="cuda")
    t[3] = IGNORE

    def launch(name, *args):
        c = L.compiled(name, M, V, "f32", backend="cuda")
        L.launch_tensors(c.kernel, c.grid, c.block, torch_stream(0), (*args, M))

    def old_forward():
        loss, lse = torch.empty(M, device="cuda"), torch.empty(M, device="cuda")
        launch("cross_entropy", x, t, loss, lse, IGNORE, 0.0)
        return loss.sum() / (t != IGNORE).sum(), lse

    def old_with_grad():
        loss, lse, dx = torch.empty(M, device="cuda"), torch.empty(M, device="cuda"), torch.empty_like(x)
        count = (t != IGNORE).sum(dtype=torch.float32)
        launch("cross_entropy_fused", x, t, loss, lse, dx, (1.0 / count.clamp(min=1)).reshape(1), IGNORE, 0.0)
        return loss.sum() / count, lse, dx

    def old_backward(lse, dloss):
        valid = t != IGNORE
        out = torch.empty_like(x)
        launch("cross_entropy_backward", x, t, lse, torch.where(valid, dloss / valid.sum(), 0.0), out, 0.0)
        return out

    loss, lse = K.cross_entropy(x, t)
    dloss = torch.ones((), device="cuda")
    assert torch.allclose(old_forward()[0], loss)
    assert torch.allclose(old_with_grad()[2], K.cross_entropy_with_grad(x, t)[2])
    assert torch.allclose(old_backward(lse, dloss), K.cross_entropy_backward(x, t, lse, dloss))
    return {"K.cross_entropy": (old_forward, lambda: K.cross_entropy(x, t)),
            "K.cross_entropy_with_grad": (old_with_grad, lambda: K.cross_entropy_with_grad(x, t)),
            "K.cross_entropy_backward": (lambda: old_backward(lse, dloss),
                                         lambda: K.cross_entropy_backward(x, t, lse, dloss))}


def main() -> int:
    import torch

    pairs = ways(torch)
    for fn in [f for pair in pairs.values() for f in pair]:
        for _ in range(300):
            fn()
    torch.cuda.synchronize()

    def once(fn, n=2000):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        return (t1 - t0) / n * 1e6

    print("host µs per call, old (torch ops around the kernel) / new (our kernels): median of 7 alternating"
          " loops of 2000")
    for name, (old, new) in pairs.items():
        a, b = [], []
        for _ in range(7):
            a.append(once(old))
            b.append(once(new))
        print(f"  {name:28s} old {statistics.median(a):7.2f}  new {statistics.median(b):7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
