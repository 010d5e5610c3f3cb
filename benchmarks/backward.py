"""The backward kernels on the GPU against torch's autograd and a copy (issue 19's shapes).

    # here, where MLIR is: the kernels into the cache (the GPU tests' prepare holds them)
    python -m tile_mlir.testing.prepare --cache .tile-cache
    # on the GPU machine (torch, Triton for do_bench), with .tile-cache copied along:
    TILE_MLIR_CACHE_DIR=.tile-cache PYTHONPATH=python:. python3 -m benchmarks.backward

For each case of ``testing.fused.BACKWARD_CASES`` (softmax, logsumexp, RMSNorm and
LayerNorm backward at 4096 x 4096, 4096 x 16384 and 1024 x 65536, f32 and bf16) it times,
L2 flushed (``measure.flushed``: ``triton.testing.do_bench``, median):

* ours: the row kernel and, for the norms, the column sums, both launched from bound
  arguments (``kernel.bind(...)()``), as one call;
* torch eager: ``torch.autograd.grad`` of the forward's output (its graph kept), the
  gradients of x and of the weight and bias;
* a copy (``dst.copy_(x)``, bytes read + written) of an M x N tensor of the dtype.

GB/s counts the bytes issue 19 counts: x (softmax: y), dy and w read; dx and the dw/db
partials written (logsumexp: x read, dx written; the per-row values aside). Before
timing, ours is checked against torch's autograd of the forward in f32 (relative L2 error
under 5e-2: a sanity check, which bf16's l in logsumexp's exp(x − l) uses up to 2% of;
test/gpu/test_backward_gpu.py checks the numerics). One line per case,
then a markdown table.
"""

from __future__ import annotations

import argparse
import sys

from .measure import flushed

ITEMSIZE = {"f32": 4, "bf16": 2}


def forward(name: str, x, w, b):
    """The forward torch differentiates, on tensors that require grad: (out, inputs)."""
    import torch
    import torch.nn.functional as F

    N = x.shape[-1]
    if name == "softmax_backward":
        return torch.softmax(x, -1), (x,)
    if name == "logsumexp_backward":
        return torch.logsumexp(x, -1), (x,)
    if name == "rmsnorm_backward":
        return F.rms_norm(x, (N,), w, 1e-6), (x, w)
    return F.layer_norm(x, (N,), w, b, 1e-5), (x, w, b)


def case(name: str, M: int, N: int, dtype: str) -> dict:
    import torch
    from tile_mlir import kernels as K

    T = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
    x, dy = torch.randn(M, N, device="cuda", dtype=T), torch.randn(M, N, device="cuda", dtype=T)
    w = (1 + 0.5 * torch.randn(N, device="cuda")).to(T)
    b = torch.randn(N, device="cuda").to(T)
    rows, sums = K.compiled_backward(name, M, N, dtype, backend="cuda")
    dx = torch.empty_like(x)
    partials = [torch.empty(rows.grid * rows.plan.R, N, device="cuda") for _ in range(K.BACKWARD[name].sums)]
    outs = [torch.empty(N, device="cuda", dtype=T) for _ in partials]
    item, xf = ITEMSIZE[dtype], x.float()
    if name == "softmax_backward":
        args, nbytes = (torch.softmax(xf, -1).to(T), dy), 3 * M * N * item
    elif name == "logsumexp_backward":
        dy = torch.randn(M, device="cuda", dtype=T)
        args, nbytes = (x, torch.logsumexp(xf, -1).to(T), dy), 2 * M * N * item
    elif name == "rmsnorm_backward":
        args = (dy, x, w, torch.rsqrt(xf.square().mean(-1) + 1e-6))
        nbytes = 3 * M * N * item + N * item + partials[0].numel() * 4
    else:
        args = (dy, x, w, xf.mean(-1), torch.rsqrt(xf.var(-1, unbiased=False) + 1e-5))
        nbytes = 3 * M * N * item + N * item + 2 * partials[0].numel() * 4
    launches = [rows.kernel.bind(rows.grid, rows.block, *args, dx, *partials)]
    if sums is not None:
        launches.append(sums.kernel.bind(sums.grid, sums.block, *partials, *outs))

    def ours():
        for launch in launches:
            launch()

    out, inputs = forward(name, *(a.clone().requires_grad_() for a in (x, w, b)))

    def eager():
        return torch.autograd.grad(out, inputs, dy, retain_graph=True)

    ours()
    reference, f32_inputs = forward(name, *(a.float().requires_grad_() for a in (x, w, b)))
    want = torch.autograd.grad(reference, f32_inputs, dy.float())
    errors = [float((got.double() - ref.double()).norm() / ref.double().norm()) for got, ref in zip([dx, *outs], want)]
    dst = torch.empty_like(x)
    row = {"case": f"{name} {M}x{N} {dtype}", "plan": rows.plan.label(), "ctas": rows.grid, "error": max(errors),
           "ours_ms": flushed(ours), "torch_ms": flushed(eager), "copy_ms": flushed(lambda: dst.copy_(x))}
    for who in ("ours", "torch"):
        row[f"{who}_GBs"] = nbytes / row[f"{who}_ms"] / 1e6
    row["copy_GBs"] = 2 * M * N * item / row["copy_ms"] / 1e6
    row["pct_copy"] = 100 * row["ours_GBs"] / row["copy_GBs"]
    row["vs_torch"] = row["torch_ms"] / row["ours_ms"]
    return row


def main(argv=None) -> int:
    from tile_mlir.testing.fused import BACKWARD_CASES

    parser = argparse.ArgumentParser(prog="python -m benchmarks.backward", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run the cases whose label contains this text")
    args = parser.parse_args(argv)
    rows, ok = [], True
    for name, M, N, dtype in BACKWARD_CASES:
        if args.only not in f"{name} {M}x{N} {dtype}":
            continue
        try:
            row = case(name, M, N, dtype)
        except Exception as e:  # noqa: BLE001 - reported, and the run goes on
            print(f"{name} {M}x{N} {dtype}: FAILED {type(e).__name__}: {e}", flush=True)
            ok = False
            continue
        ok &= row["error"] < 5e-2
        rows.append(row)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()), flush=True)
    print("\n| case | plan | CTAs | ours GB/s | torch GB/s | copy GB/s | % copy | × torch | rel. error |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['plan']} | {r['ctas']} | {r['ours_GBs']:.0f} | {r['torch_GBs']:.0f} |"
              f" {r['copy_GBs']:.0f} | {r['pct_copy']:.0f}% | {r['vs_torch']:.2f} | {r['error']:.1e} |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
