"""A real training step: a small decoder-only language model trained twice, once with
torch's RMSNorm and cross-entropy, once with ``tile_mlir.torch``'s, both under torch.compile.

    PYTHONPATH=python python3 -m benchmarks.train_step [--out DIR] [--steps 50] [--batch 8] [--seq 512]
                                                     [--no-compile] [--fullgraph] [--device cuda] [--tiny]
                                                     [--inplace] [--fused-residual] [--fused-linear]
                                                     [--profile STEPS]

The model (plain torch): a token embedding (vocabulary 32000, d_model 512), 4 blocks of
pre-norm RMSNorm + causal self-attention (8 heads, ``F.scaled_dot_product_attention``) and
RMSNorm + MLP (GELU, 4x), a final RMSNorm and an untied output projection; the loss is the
mean cross-entropy of the next token, computed inside the model so that it is in the
compiled graph. Both runs start from the same weights (one seeded initialisation, loaded
into both) and see the same batches (random tokens from a fixed seed); AdamW (lr 3e-4),
f32 throughout (TF32 off), ``torch.compile`` of the whole model.

It prints, per step, both losses and their relative difference (the target: at most 1e-3
at every step), then each run's step time (median over steps 10..steps, each step timed
with a synchronize) and peak memory (``torch.cuda.max_memory_allocated``, reset before
each run). When ``tile_mlir.torch`` does not import, or lacks ``RMSNorm`` or
``CrossEntropyLoss``, it says "tile_mlir.torch: not built" and runs the baseline alone.
``--inplace`` gives tile_mlir's loss ``inplace=True`` (dlogits written over the logits,
as Liger's: one M x V buffer, not two); ``--fused-residual`` makes tile_mlir's model add
each residual in the next norm (``RMSNorm(x, residual)``: ``add_rms_norm``, one kernel for
the add and the norm, and one for both gradients), where Inductor fuses torch's adds into
its own norm kernels; ``--fused-linear`` gives tile_mlir's model the output projection
and its loss in one module (``LinearCrossEntropyLoss``: the logits a chunk at a time, never
all M x V of them; the same parameter, ``head.weight``); ``--profile STEPS`` prints the CUDA kernels of
STEPS more steps of each run (``torch.profiler``, by GPU time). With ``--out`` it writes
``train_step.json``. About 1-2 minutes on the H200, most of it
the two compiles. ``--tiny --device cpu --no-compile`` runs a small model for 2 steps on
the CPU (a check of the script, not a benchmark).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

TARGET_REL = 1e-3


def build(torch, vocab: int, d: int, layers: int, heads: int, norm, loss_fn, fused: bool = False,
          linear_loss: bool = False):
    """The model class's instance, with ``norm(d)`` for every RMSNorm and ``loss_fn`` the
    module for the cross-entropy (with ``linear_loss``, of the head's input and weight, not
    of the logits: ``loss_fn(y, head.weight, target)``). ``fused``: each residual add is made by the next norm
    (``norm(x, residual) -> (y, x + residual)``, ``tile_mlir.torch.RMSNorm``'s; vLLM's
    order): a block takes the stream and the last sublayer's output not yet added to it.
    The same sums, each ``output + stream`` where torch's is ``stream + output`` (the same
    bits), and the same parameters."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = norm(d), norm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.up, self.down = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

        def attention(self, y):
            B, T, _ = y.shape
            q, k, v = self.qkv(y).view(B, T, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(a.transpose(1, 2).reshape(B, T, d))

        def forward(self, h, pending=None):
            if not fused:
                h = h + self.attention(self.norm1(h))
                return h + self.down(F.gelu(self.up(self.norm2(h))))
            y, h = (self.norm1(h), h) if pending is None else self.norm1(pending, h)
            y, h = self.norm2(self.attention(y), h)
            return h, self.down(F.gelu(self.up(y)))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = norm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.loss = loss_fn

        def forward(self, tokens):
            h = self.embed(tokens[:, :-1])
            if fused:
                pending = None
                for block in self.blocks:
                    h, pending = block(h, pending)
                y, _ = self.norm(pending, h)
            else:
                for block in self.blocks:
                    h = block(h)
                y = self.norm(h)
            target = tokens[:, 1:].reshape(-1)
            if linear_loss:
                return self.loss(y.reshape(-1, d), self.head.weight, target)
            return self.loss(self.head(y).reshape(-1, vocab), target)

    return LM()


def ours():
    """(RMSNorm class, CrossEntropyLoss class, LinearCrossEntropyLoss class) of
    ``tile_mlir.torch``, or why not."""
    try:
        import tile_mlir.torch as tt
    except Exception as e:  # noqa: BLE001 - not built yet, or broken: said, and the baseline runs alone
        return f"tile_mlir.torch: not built ({type(e).__name__}: {e})"
    lacking = [n for n in ("RMSNorm", "CrossEntropyLoss", "LinearCrossEntropyLoss") if not hasattr(tt, n)]
    if lacking:
        return f"tile_mlir.torch: not built (no {', '.join(lacking)})"
    return tt.RMSNorm, tt.CrossEntropyLoss, tt.LinearCrossEntropyLoss


def train(torch, model, batches, steps: int, compile_: bool, fullgraph: bool, device: str, profile: int = 0,
          profile_cpu: bool = False) -> dict:
    """``steps`` AdamW steps on ``batches``: the losses, each step's seconds, peak memory."""
    import gc

    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    step_model = torch.compile(model, fullgraph=fullgraph) if compile_ else model
    cuda = device == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    losses, times, host = [], [], []
    collections = [g["collections"] for g in gc.get_stats()]
    for i in range(steps):
        t0 = time.perf_counter()
        loss = step_model(batches[i % len(batches)])
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        host.append(time.perf_counter() - t0)  # the host's part: every launch made
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        losses.append(loss.item())
    out = {"losses": losses, "step_s": times, "host_s": host,
           "peak_bytes": torch.cuda.max_memory_allocated() if cuda else None,
           "gc_collections": [g["collections"] - c for g, c in zip(gc.get_stats(), collections)]}
    if profile_cpu:  # the host's time by op, one more step (each custom op's Python included)
        from torch.profiler import ProfilerActivity
        with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:
            step_model(batches[0]).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        if cuda:
            torch.cuda.synchronize()
        out["cpu_profile"] = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25,
                                                       max_name_column_width=60)
        print(out["cpu_profile"], flush=True)
    if profile and cuda:  # where a step's GPU time goes: the kernels of a few more steps, timed as above
        from torch.profiler import ProfilerActivity
        with torch.profiler.profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(profile):
                step_model(batches[i % len(batches)]).backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                torch.cuda.synchronize()
        events = prof.key_averages()
        out["profile"] = events.table(sort_by="self_cuda_time_total", row_limit=40, max_name_column_width=70)
        total = sum(e.self_device_time_total for e in events) / profile
        out["gpu_us_per_step"] = total
        print(out["profile"], flush=True)
        print(f"GPU time a step (the kernels' sum): {total:.1f} us", flush=True)
        out["timeline"] = timeline(prof, profile)
        print(out["timeline"]["text"], flush=True)
    return out


def timeline(prof, steps: int, top: int = 12) -> dict:
    """The profiled steps' GPU timeline: from the first kernel's start to the last one's
    end, the time some kernel ran (busy) and none did (idle, a step's start waiting for
    the host included), and the longest idle gaps with the kernels around them."""
    from torch.autograd import DeviceType

    kernels = sorted((e.time_range.start, e.time_range.end, e.name) for e in prof.events()
                     if e.device_type == DeviceType.CUDA)
    if not kernels:
        return {"text": "no CUDA kernels profiled"}
    busy, gaps, end, before = 0.0, [], kernels[0][0], kernels[0][2]
    for start, stop, name in kernels:
        if start > end:
            gaps.append((start - end, before, name))
        busy += max(0.0, stop - max(start, end))
        if stop > end:
            end, before = stop, name
    span = end - kernels[0][0]
    idle = span - busy
    lines = [f"GPU timeline of {steps} steps: span {span / steps:.1f} us a step, kernels running {busy / steps:.1f},"
             f" idle {idle / steps:.1f} ({len(gaps) / steps:.0f} gaps a step); the longest gaps:"]
    for gap, a, b in sorted(gaps, reverse=True)[:top]:
        lines.append(f"  {gap:8.1f} us  after {a[:60]}  before {b[:60]}")
    return {"span_us": span / steps, "busy_us": busy / steps, "idle_us": idle / steps, "gaps": len(gaps) / steps,
            "text": "\n".join(lines)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.train_step", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="write train_step.json here")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--device", default="cuda")
    p.add_argument("--no-compile", action="store_true", help="eager (torch.compile is the benchmark's setting)")
    p.add_argument("--fullgraph", action="store_true", help="torch.compile(fullgraph=True): graph breaks are errors")
    p.add_argument("--tiny", action="store_true", help="vocabulary 1000, d_model 64, seq 32, batch 2, 2 steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--inplace", action="store_true",
                   help="tile_mlir.torch.CrossEntropyLoss(inplace=True): dlogits over the logits, as Liger's")
    p.add_argument("--fused-residual", action="store_true",
                   help="tile_mlir's model makes each residual add in the next norm (RMSNorm(x, residual))")
    p.add_argument("--fused-linear", action="store_true",
                   help="tile_mlir's model computes the head and its loss in one module (LinearCrossEntropyLoss)")
    p.add_argument("--profile", type=int, default=0, metavar="STEPS",
                   help="after the timed steps, print the CUDA kernels of STEPS more (torch.profiler)")
    p.add_argument("--profile-cpu", action="store_true",
                   help="after the timed steps, print the host's time by op of one more step (torch.profiler, CPU)")
    args = p.parse_args(argv)
    if args.tiny:
        args.vocab, args.d_model, args.seq, args.batch, args.steps, args.heads = 1000, 64, 32, 2, 2, 4
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = args.device
    gen = torch.Generator(device="cpu").manual_seed(args.seed + 1)
    batches = [torch.randint(0, args.vocab, (args.batch, args.seq + 1), generator=gen).to(dev) for _ in range(args.steps)]

    def model(norm, loss, fused=False, linear_loss=False):
        torch.manual_seed(args.seed)
        return build(torch, args.vocab, args.d_model, args.layers, args.heads, norm, loss, fused, linear_loss).to(dev)

    base = model(lambda d: torch.nn.RMSNorm(d, eps=1e-6), torch.nn.CrossEntropyLoss())
    state = {k: v.detach().clone() for k, v in base.state_dict().items()}
    n_params = sum(v.numel() for v in base.parameters())
    print(f"model: vocabulary {args.vocab}, d_model {args.d_model}, {args.layers} blocks, {args.heads} heads, "
          f"batch {args.batch} x seq {args.seq}, {n_params / 1e6:.1f} M parameters; {args.steps} steps, AdamW, f32, "
          f"{'eager' if args.no_compile else 'torch.compile' + (' (fullgraph)' if args.fullgraph else '')}, {dev}",
          flush=True)
    runs = {"torch": train(torch, base, batches, args.steps, not args.no_compile, args.fullgraph, dev, args.profile,
                           args.profile_cpu)}
    del base
    mine = ours()
    if isinstance(mine, str):
        print(mine, flush=True)
    else:
        RMSNorm, CrossEntropyLoss, LinearCrossEntropyLoss = mine
        if not args.no_compile:
            torch._dynamo.reset()
        loss = LinearCrossEntropyLoss() if args.fused_linear else CrossEntropyLoss(inplace=args.inplace)
        tile = model(lambda d: RMSNorm(d, eps=1e-6), loss, args.fused_residual, args.fused_linear)
        try:
            tile.load_state_dict(state)  # the same weights, whatever the modules initialised
        except RuntimeError as e:
            mine = f"tile_mlir.torch: its modules' parameters do not load torch's ({' '.join(str(e).split())[:300]})"
            print(mine, flush=True)
        else:
            runs["tile_mlir"] = train(torch, tile, batches, args.steps, not args.no_compile, args.fullgraph, dev,
                                      args.profile, args.profile_cpu)

    worst = 0.0
    print(f"{'step':>4} {'torch loss':>12} {'tile_mlir loss':>15} {'rel diff':>10}")
    for i, lt in enumerate(runs["torch"]["losses"]):
        if "tile_mlir" in runs:
            lo = runs["tile_mlir"]["losses"][i]
            rel = abs(lo - lt) / abs(lt)
            worst = max(worst, rel)
            print(f"{i:>4} {lt:12.6f} {lo:15.6f} {rel:10.2e}")
        else:
            print(f"{i:>4} {lt:12.6f} {'--':>15} {'--':>10}")
    first = min(10, max(0, args.steps - 1))
    summary = {"args": vars(args), "parameters": n_params, "not_built": mine if isinstance(mine, str) else None}
    for name, r in runs.items():
        r["median_step_ms"] = 1e3 * statistics.median(r["step_s"][first:])
        mem = f"{r['peak_bytes'] / 2**20:.0f} MiB" if r["peak_bytes"] is not None else "n/a (not CUDA)"
        r["median_host_ms"] = 1e3 * statistics.median(r["host_s"][first:])
        print(f"{name}: step {r['median_step_ms']:.2f} ms (median of steps {first}..{args.steps - 1}; the host's"
              f" launches {r['median_host_ms']:.2f} ms of it), peak memory {mem}; garbage collections in the timed"
              f" steps, by generation: {r['gc_collections']}")
        summary[name] = r
    if "tile_mlir" in runs:
        t, o = runs["torch"], runs["tile_mlir"]
        summary["worst_rel_diff"] = worst
        faster = o["median_step_ms"] < t["median_step_ms"]
        leaner = o["peak_bytes"] is None or o["peak_bytes"] <= t["peak_bytes"]
        print(f"summary: losses agree to {worst:.2e} relative at worst ({'met' if worst <= TARGET_REL else 'MISSED'}: "
              f"<= {TARGET_REL:g}); step {o['median_step_ms']:.2f} ms vs {t['median_step_ms']:.2f} ms "
              f"({t['median_step_ms'] / o['median_step_ms']:.3f}x, {'met' if faster else 'MISSED'}: faster); peak memory "
              f"{'met' if leaner else 'MISSED'} (<= torch's)")
    else:
        print(f"summary: baseline only, step {runs['torch']['median_step_ms']:.2f} ms; {mine}")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "train_step.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
