"""An LM head and its loss, forward and backward: ``tile_mlir.torch.linear_cross_entropy``
(the logits a chunk at a time) against torch eager and ``torch.compile`` of
``F.cross_entropy(F.linear(h, w), t)``, and Liger's ``LigerFusedLinearCrossEntropyLoss``,
in one run on the GPU::

    PYTHONPATH=python python3 -m benchmarks.linear_cross_entropy --prepare --cache DIR   # here, where MLIR is
    PYTHONPATH=python TILE_MLIR_CACHE_DIR=DIR python3 -m benchmarks.linear_cross_entropy [--out DIR]

Shapes (tokens x hidden -> vocabulary): the training step's head (4096 x 512 -> 32000,
f32, ``benchmarks/train_step.py``), and bf16 heads of 128256 (Llama 3) and 256000 classes
at a hidden size of 4096. Each call is one step: the loss, then the gradients of h and w
(``torch.autograd.grad``), timed back to back (``measure.steady``); its peak memory is what
the call allocates beyond its inputs (``torch.cuda.max_memory_allocated``). Each peer's
loss and gradients are compared with torch eager's (relative L2), so that a fast wrong
answer shows. TF32 is off. Liger is the carried wheel (``benchmarks/README.md``); where it
does not import, its column says why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SHAPES = [(4096, 512, 32000, "f32"), (8192, 4096, 128256, "bf16"), (4096, 4096, 256000, "bf16")]


def _liger_loss():
    try:
        from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss
    except Exception as e:  # noqa: BLE001 - any import failure: missing, with why
        return f"missing: {type(e).__name__}: {e}"
    loss = LigerFusedLinearCrossEntropyLoss()
    return lambda h, w, t: loss(w, h, t)


def case(torch, M: int, D: int, V: int, dtype: str, peers: dict) -> dict:
    from benchmarks.measure import steady

    g = torch.Generator(device="cuda").manual_seed(M + V)
    torch_dtype = torch.float32 if dtype == "f32" else torch.bfloat16
    h = torch.randn(M, D, device="cuda", generator=g).to(torch_dtype).requires_grad_()
    w = (torch.randn(V, D, device="cuda", generator=g) / D**0.5).to(torch_dtype).requires_grad_()
    t = torch.randint(0, V, (M,), device="cuda", generator=g)
    row = {"shape": f"{M}x{D}->{V}", "dtype": dtype, "ms": {}, "peak_mib": {}, "error": {}, "status": {}}
    reference = None
    for who, fn in peers.items():
        if isinstance(fn, str):
            row["status"][who] = fn
            continue

        def step(fn=fn):
            loss = fn(h, w, t)
            return (loss, *torch.autograd.grad(loss, (h, w)))

        try:
            torch.cuda.synchronize()
            out = step()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            out = step()
            torch.cuda.synchronize()
            row["peak_mib"][who] = round((torch.cuda.max_memory_allocated() - base) / 2**20, 1)
            if reference is None:
                reference = [o.detach().double() for o in out]
            row["error"][who] = max(float((o.detach().double() - r).norm() / r.norm()) for o, r in zip(out, reference))
            del out
            row["ms"][who] = round(steady([step], target_ms=200.0, repeat=3), 3)
        except Exception as e:  # noqa: BLE001 - a peer that fails says why, the others run
            row["status"][who] = f"error: {type(e).__name__}: {str(e)[:200]}"
        torch.cuda.empty_cache()
    return row


def prepare() -> int:
    """Compile the cross-entropy kernels of every shape (the fused kernel, the forward's and
    the reductions'), for any row count: what a run there takes."""
    from tile_mlir.kernels import kernel_text

    texts = [kernel_text(k, M, V, dtype, remember=True) for k in ("cross_entropy", "cross_entropy_fused")
             for M, _, V, dtype in SHAPES]
    texts += [kernel_text(k, 1, 1, remember=True) for k in ("cross_entropy_reduce", "cross_entropy_row_scale")]
    import tile_mlir
    from tile_mlir.options import Options
    from tile_mlir.vocab import DEFAULT_CHIP

    for text in texts:  # as tile_mlir.kernels compiles them: the same cache keys
        tile_mlir.compile(text, Options(chip=DEFAULT_CHIP), backend="cuda")
    return len(texts)


def main(argv=None) -> int:
    from benchmarks.measure import prepare_or_run

    return prepare_or_run("python -m benchmarks.linear_cross_entropy", __doc__, prepare, run, argv,
                          out="linear_cross_entropy.json")


def run(out) -> None:
    """Every shape, each peer checked and timed; the rows to ``out``/linear_cross_entropy.json."""
    import torch

    import tile_mlir.torch as tt

    torch.backends.cuda.matmul.allow_tf32 = False
    F = torch.nn.functional

    def plain(h, w, t):
        return F.cross_entropy(F.linear(h, w), t)

    torch._dynamo.reset()
    peers = {"torch": plain, "compile": torch.compile(plain, dynamic=False), "liger": _liger_loss(),
             "ours": tt.linear_cross_entropy}
    rows = []
    for M, D, V, dtype in SHAPES:
        r = case(torch, M, D, V, dtype, peers)
        rows.append(r)
        cols = "  ".join(f"{who} {r['ms'].get(who, '--')} ms {r['peak_mib'].get(who, '--')} MiB"
                         f" (err {r['error'].get(who, float('nan')):.1e})" for who in peers)
        print(f"{r['shape']} {dtype}: {cols}", flush=True)
        for who, why in r["status"].items():
            print(f"  {who}: {why}", flush=True)
        done = {k: v for k, v in r["ms"].items() if k != "ours"}
        if "ours" in r["ms"] and done:
            best = min(done, key=done.get)
            print(f"  ours {done[best] / r['ms']['ours']:.2f}x the fastest peer ({best}), memory"
                  f" {r['peak_mib']['ours']} MiB against {best}'s {r['peak_mib'][best]}", flush=True)
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "linear_cross_entropy.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(main())
