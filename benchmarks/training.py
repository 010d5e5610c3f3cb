"""Benchmark 6 on the GPU: the training kernels (backward passes, cross-entropy) against
torch, ``torch.compile`` and Liger-Kernel.

Ours are ``tile_mlir.kernels``'s functional API on torch tensors (``OURS``)::

    dx = K.softmax_backward(y, dy)
    dx, dw = K.rms_norm_backward(dy, x, w, rstd)
    dx, dw, db = K.layer_norm_backward(dy, x, w, mean, rstd)
    loss, lse, dlogits = K.cross_entropy_with_grad(logits, target)   # ours; "ours_two", also timed:
    loss, lse = K.cross_entropy(logits, target);  dlogits = K.cross_entropy_backward(logits, target, lse, dloss)

When ``tile_mlir.kernels`` lacks one of them (``hasattr`` is false), ours is reported
"not built" and the peers are still timed. The peers:

* **torch**: the backward of ``torch.softmax`` / ``F.rms_norm`` / ``F.layer_norm`` through
  autograd: the forward once per input set, then ``torch.autograd.grad(y, inputs, dy,
  retain_graph=True)`` per timed call; cross-entropy: ``F.cross_entropy`` then its grad,
  both in each timed call;
* **torch.compile**: the same forward under ``torch.compile(dynamic=False)`` (after a
  Dynamo reset), so that its backward is the compiled one (AOTAutograd's donated buffers
  are turned off: they forbid ``retain_graph``);
* **Liger** 0.8.5 (``peers``): ``LigerSoftmaxFunction``, ``LigerRMSNormFunction``
  (``in_place=False``, so that dy stays the same input across timed calls; Liger's
  default writes dx over dy), ``LigerLayerNormFunction``, ``liger_cross_entropy`` (which
  writes the gradient over the logits in its forward: it runs last in a case).

Each implementation is checked against float64 (autograd on float64 copies; cross-entropy
row block by row block) with ``fused.TOLERANCE`` on every output, then timed steady and
L2-flushed. Bytes (``traffic``): backward: x (or y), dy read, dx written, and the weight
read, dw and db written, once each; cross-entropy fwd+bwd: the logits read once, dlogits
written once. Every case frees its tensors before the next. Importing this module needs
neither torch nor the kernels.
"""

from __future__ import annotations

import traceback

from . import peers
from .fused import ITEMSIZE, TOLERANCE
from .measure import ROTATE_BYTES, copy_times, flushed, log, steady

KERNELS = ("softmax_backward", "rmsnorm_backward", "layernorm_backward", "cross_entropy")
TITLES = {"softmax_backward": "softmax backward", "rmsnorm_backward": "RMSNorm backward (dx, dw)",
          "layernorm_backward": "LayerNorm backward (dx, dw, db)", "cross_entropy": "cross-entropy fwd+bwd"}
OURS = {"softmax_backward": ("softmax_backward",), "rmsnorm_backward": ("rms_norm_backward",),
        "layernorm_backward": ("layer_norm_backward",), "cross_entropy": ("cross_entropy_with_grad",)}
NORM_SHAPES = ((4096, 4096), (4096, 16384), (1024, 65536))
CASES = ([("softmax_backward", 4096, 16384, dt) for dt in ("f32", "bf16")]
         + [(k, M, N, dt) for k in ("rmsnorm_backward", "layernorm_backward") for M, N in NORM_SHAPES
            for dt in ("f32", "bf16")]
         + [("cross_entropy", 8192, 131072, "bf16"), ("cross_entropy", 4096, 262144, "bf16"),
            ("cross_entropy", 8192, 131072, "f32")])
PEERS = ("torch", "compile", "liger")
EPS = {"rmsnorm_backward": 1e-6, "layernorm_backward": 1e-5}  # our kernels' defaults
GRADS = {"softmax_backward": 0, "rmsnorm_backward": 1, "layernorm_backward": 2}  # dw (and db) written
PARAMS = {"softmax_backward": 0, "rmsnorm_backward": 1, "layernorm_backward": 2}  # w (and b) read
REF_ROWS = 512  # cross-entropy's float64 reference, this many rows at a time
DEVICE = "cuda"


def label(name: str, M: int, N: int, dtype: str) -> str:
    return f"{name}_{dtype}_{M}x{N}"


def traffic(name: str, M: int, N: int, dtype: str) -> int:
    """Bytes the kernel must move (module docstring)."""
    s = ITEMSIZE[dtype]
    if name == "cross_entropy":
        return 2 * M * N * s
    return (3 * M * N + (PARAMS[name] + GRADS[name]) * N) * s


def selected(kernels=KERNELS, shapes=None, dtypes=None) -> list[tuple]:
    return [c for c in CASES if c[0] in kernels and (shapes is None or (c[1], c[2]) in shapes)
            and (dtypes is None or c[3] in dtypes)]


# The names under which ``tile_mlir.kernels.SPECS`` (and ``kernel_text``) may know each
# case's kernels: ``benchmarks.prepare`` compiles those it finds (and remembers their texts
# for the GPU machine), and says which it does not find.
SPEC_NAMES = {"softmax_backward": ("softmax_backward",), "rmsnorm_backward": ("rmsnorm_backward",),
              "layernorm_backward": ("layernorm_backward",),
              "cross_entropy": ("cross_entropy_fused", "cross_entropy", "cross_entropy_backward",
                                "cross_entropy_reduce", "cross_entropy_row_scale")}


def kernel_texts(remember: bool = False) -> tuple[dict[str, str], list[str]]:
    """({label: text} of ours for every case whose kernels ``tile_mlir.kernels`` has specs
    for, [why each other case has none]); with ``remember``, the compile cache keeps each
    text by name for the GPU machine (``kernel_text(..., remember=True)``). A backward pass
    (``K.BACKWARD``) is its row kernel and, for the norms, its column sums
    (``K.text_backward``: labels ``<spec>_<dtype>_<M>x<N>`` and ``<spec>_sums_...``)."""
    try:
        from tile_mlir import kernels as K

        specs, backward = K.SPECS, getattr(K, "BACKWARD", {})
    except Exception as e:  # noqa: BLE001
        return {}, [f"tile_mlir.kernels does not load: {type(e).__name__}: {e}"]
    texts, notes = {}, []
    for name, M, N, dtype in CASES:
        for spec in SPEC_NAMES[name]:
            if spec not in specs and spec not in backward:
                notes.append(f"{label(name, M, N, dtype)}: tile_mlir.kernels.SPECS has no {spec!r}")
                continue
            try:
                if spec in backward:
                    made = K.text_backward(spec, M, N, dtype, remember=remember)
                    for part, text in zip(("", "_sums"), made):
                        texts[f"{spec}{part}_{dtype}_{M}x{N}"] = text
                else:
                    texts[f"{spec}_{dtype}_{M}x{N}"] = K.kernel_text(spec, M, N, dtype, remember=remember)
            except Exception as e:  # noqa: BLE001 - reported by prepare, the case left out
                notes.append(f"{label(name, M, N, dtype)}: kernel_text({spec!r}) failed: {type(e).__name__}: {e}")
    return texts, notes


def not_built(name: str) -> str | None:
    """Why ours cannot run for ``name`` (the functional API lacks a function), or None."""
    try:
        from tile_mlir import kernels as K
    except Exception as e:  # noqa: BLE001
        return f"not built: tile_mlir.kernels does not import ({type(e).__name__}: {e})"
    lacking = [f for f in OURS[name] if not hasattr(K, f)]
    return f"not built: tile_mlir.kernels has no {', '.join(lacking)}" if lacking else None


def _error(got, ref) -> float:
    import torch

    got = got.double()
    if torch.isnan(got).any():
        return float("nan")
    return ((got - ref).norm() / ref.norm()).item()


# --- the backward of a row kernel ---------------------------------------------------------


def _forward(name: str, eps: float):
    """f(x, params) -> y in torch: the forward whose backward is timed."""
    return peers.torch_forward(name.removesuffix("_backward"), eps)


def bound_backward(name: str, M: int, N: int, dtype: str, arrays, **overrides):
    """(a call, its outputs): a norm's or softmax's backward of ``tile_mlir.kernels`` on
    the torch CUDA ``arrays`` (its ``BACKWARD[name].inputs``) as its bound launches (the
    row kernel, then the column sums), outputs made once: what the kernels cost without
    the functional API's host work (a call of it checks, allocates and looks the kernels
    up). ``overrides`` go to the row plan (``benchmarks.plan_search``)."""
    import torch

    from tile_mlir import kernels as K
    from tile_mlir.kernels.training import partial_rows

    rows, total = K.compiled_backward(name, M, N, dtype, backend="cuda", **overrides)
    x = arrays[0]
    dx = torch.empty_like(x)
    sums = [torch.empty(N, device=x.device, dtype=x.dtype) for _ in range(K.BACKWARD[name].sums)]
    P = partial_rows(rows.grid, rows.plan)
    partials = [torch.empty(P, N, device=x.device, dtype=torch.float32) for _ in sums]
    a = rows.kernel.bind(rows.grid, rows.block, *arrays, dx, *partials, *((P,) if sums else ()), M)
    if total is None:
        return a, (dx,)
    b = total.kernel.bind(total.grid, total.block, *partials, *sums, P)
    return (lambda: (a(), b())), (dx, *sums)


def backward_case(name: str, M: int, N: int, dtype: str) -> dict:
    import torch

    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    eps = EPS.get(name, 0.0)
    nbuf = max(2, -(-ROTATE_BYTES // (2 * M * N * ITEMSIZE[dtype])))
    xs = [torch.randn(M, N, device=DEVICE, dtype=tdt) for _ in range(nbuf)]
    dys = [torch.randn(M, N, device=DEVICE, dtype=tdt) for _ in range(nbuf)]
    params = [torch.randn(N, device=DEVICE, dtype=tdt) for _ in range(PARAMS[name])]
    row = {"kernel": name, "M": M, "N": N, "dtype": dtype, "bytes": traffic(name, M, N, dtype), "input_sets": nbuf,
           "eps": eps, "errors": {}, "status": {}}
    fwd = _forward(name, eps)

    # float64 references: dx (and dw, db) of set 0; softmax's backward starts from y in dtype
    x64 = xs[0].double().requires_grad_()
    p64 = [p.double().requires_grad_() for p in params]
    if name == "softmax_backward":
        y0 = torch.softmax(xs[0], dim=-1)
        y64, dy64 = y0.double(), dys[0].double()
        refs = [y64 * (dy64 - (dy64 * y64).sum(-1, keepdim=True))]
    else:
        refs = list(torch.autograd.grad(fwd(x64, p64), [x64, *p64], dys[0].double()))
    del x64, p64

    def check(who, outs):
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        err = max(_error(o, r) for o, r in zip(outs, refs))
        row["errors"][who] = err
        if not err < TOLERANCE[dtype]:
            row["status"][who] = f"wrong: error {err:.3g}, tolerance {TOLERANCE[dtype]:g}"

    def timed(who, fns):
        row[f"{who}_ms"], row[f"{who}_flushed_ms"] = steady(fns), flushed(fns[0])

    def autograd_calls(apply):
        """apply(x, params) -> y, once per input set with x and the params as leaves;
        each timed call runs the backward of its set's graph again (retain_graph)."""
        leaves = [p.detach().requires_grad_() for p in params]
        calls = []
        for x, dy in zip(xs, dys):
            xl = x.detach().requires_grad_()
            y = apply(xl, leaves)
            calls.append(lambda y=y, xl=xl, dy=dy: torch.autograd.grad(y, [xl, *leaves], dy, retain_graph=True))
        return calls

    def peer(who, make):
        try:
            fns = make()
            check(who, fns[0]())
            timed(who, fns)
            row["status"].setdefault(who, "ok")
        except peers.Unavailable as e:
            row["status"][who] = str(e)
        except Exception as e:  # noqa: BLE001 - one peer failing must not lose the case
            row["status"][who] = f"failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
            log(f"  {label(name, M, N, dtype)}: {who} failed\n{traceback.format_exc()}")
        torch.cuda.synchronize()
        torch.cuda.empty_cache()

    # ours, through the functional API; the statistics it takes come from torch (f32)
    why = not_built(name)
    if why:
        row["status"]["ours"] = why
    else:
        from tile_mlir import kernels as K

        if name == "softmax_backward":
            ys = [torch.softmax(x, dim=-1) for x in xs]
            make = lambda: [lambda i=i: K.softmax_backward(ys[i], dys[i]) for i in range(nbuf)]  # noqa: E731
        elif name == "rmsnorm_backward":
            rstd = [torch.rsqrt(x.float().square().mean(-1) + eps) for x in xs]
            make = lambda: [lambda i=i: K.rms_norm_backward(dys[i], xs[i], params[0], rstd[i])  # noqa: E731
                            for i in range(nbuf)]
        else:
            mean = [x.float().mean(-1) for x in xs]
            rstd = [torch.rsqrt(x.float().var(-1, unbiased=False) + eps) for x in xs]
            make = lambda: [lambda i=i: K.layer_norm_backward(dys[i], xs[i], params[0], mean[i], rstd[i])  # noqa: E731
                            for i in range(nbuf)]
        peer("ours", make)
        # the same kernels as bound launches: the kernels' own rate, without the API's host work
        if name == "softmax_backward":
            arrays = [(ys[i], dys[i]) for i in range(nbuf)]
        elif name == "rmsnorm_backward":
            arrays = [(dys[i], xs[i], params[0], rstd[i]) for i in range(nbuf)]
        else:
            arrays = [(dys[i], xs[i], params[0], mean[i], rstd[i]) for i in range(nbuf)]

        def kernels_only():
            bound = [bound_backward(name, M, N, dtype, a) for a in arrays]
            return [lambda c=c, o=o: (c(), o)[1] for c, o in bound]
        peer("ours_kernels", kernels_only)

    peer("torch", lambda: autograd_calls(fwd))
    peers.allow_retained_backward()
    peer("compile", lambda: autograd_calls(peers.fresh_compile(fwd)))

    def liger_calls():
        lib = peers.liger()
        fn = lib[name.removesuffix("_backward")]
        if name == "softmax_backward":
            return autograd_calls(lambda x, p: fn.apply(x))
        if name == "rmsnorm_backward":
            return autograd_calls(lambda x, p: fn.apply(x, p[0], eps, 0.0, "llama", False))
        return autograd_calls(lambda x, p: fn.apply(x, p[0], p[1], eps))

    if peers.refuses(N):
        row["status"]["liger"] = peers.refuses(N)
    else:
        peer("liger", liger_calls)
    row["copy_ms"], row["copy_flushed_ms"] = copy_times(xs)
    return row


# --- cross-entropy, forward and backward ----------------------------------------------------


def _ce_reference(logits, target):
    """(mean loss, dlogits of the mean) in float64, REF_ROWS rows at a time."""
    import torch

    M = logits.shape[0]
    loss, grads = 0.0, []
    for r in range(0, M, REF_ROWS):
        x = logits[r:r + REF_ROWS].double()
        t = target[r:r + REF_ROWS]
        lse = torch.logsumexp(x, dim=-1)
        loss += (lse - x.gather(1, t[:, None])[:, 0]).sum().item()
        g = torch.softmax(x, dim=-1)
        g[torch.arange(len(t), device=x.device), t] -= 1.0
        grads.append(g / M)
    return loss / M, grads


def ce_error(loss, grad, ref_loss: float, ref_grads) -> float:
    """The larger of the mean loss's relative error and dlogits' relative L2 error, against
    ``_ce_reference``'s (NaN where either is)."""
    loss_err = abs(float(loss) - ref_loss) / abs(ref_loss)
    rows = range(0, grad.shape[0], REF_ROWS)
    num = sum(((grad[r:r + REF_ROWS].double() - g).norm() ** 2).item() for r, g in zip(rows, ref_grads))
    den = sum((g.norm() ** 2).item() for g in ref_grads)
    grad_err = (num / den) ** 0.5
    return max(loss_err, grad_err) if loss_err == loss_err and grad_err == grad_err else float("nan")


def cross_entropy_case(M: int, V: int, dtype: str) -> dict:
    import torch
    import torch.nn.functional as F

    name = "cross_entropy"
    tdt = torch.float32 if dtype == "f32" else torch.bfloat16
    nbuf = max(2, -(-ROTATE_BYTES // (M * V * ITEMSIZE[dtype])))
    xs = [torch.randn(M, V, device=DEVICE, dtype=tdt) for _ in range(nbuf)]
    ts = [torch.randint(0, V, (M,), device=DEVICE, dtype=torch.int64) for _ in range(nbuf)]
    row = {"kernel": name, "M": M, "N": V, "dtype": dtype, "bytes": traffic(name, M, V, dtype), "input_sets": nbuf,
           "errors": {}, "status": {}}
    ref_loss, ref_grads = _ce_reference(xs[0], ts[0])

    def check(who, loss, grad):
        err = row["errors"][who] = ce_error(loss, grad, ref_loss, ref_grads)
        if not err < TOLERANCE[dtype] or torch.isnan(grad).any():
            row["status"][who] = f"wrong: error {err:.3g}, tolerance {TOLERANCE[dtype]:g}"

    def peer(who, step, fresh=False):
        """step(logits, target) -> (loss, dlogits); with ``fresh``, the check runs on a
        copy of set 0 (the peer writes over its logits)."""
        try:
            x0 = xs[0].clone() if fresh else xs[0]
            loss, grad = step(x0, ts[0])
            check(who, loss, grad)
            del x0, loss, grad
            fns = [lambda i=i: step(xs[i], ts[i]) for i in range(nbuf)]
            row[f"{who}_ms"], row[f"{who}_flushed_ms"] = steady(fns), flushed(fns[0])
            row["status"].setdefault(who, "ok")
        except peers.Unavailable as e:
            row["status"][who] = str(e)
        except Exception as e:  # noqa: BLE001
            row["status"][who] = f"failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"
            log(f"  {label(name, M, V, dtype)}: {who} failed\n{traceback.format_exc()}")
        torch.cuda.synchronize()
        torch.cuda.empty_cache()

    def autograd_step(loss_fn):
        def step(x, t):
            xl = x.detach().requires_grad_()
            loss = loss_fn(xl, t)
            (grad,) = torch.autograd.grad(loss, xl)
            return loss, grad
        return step

    why = not_built(name)
    if why:
        row["status"]["ours"] = why
    else:
        from tile_mlir import kernels as K

        dloss = torch.ones((), device=DEVICE, dtype=torch.float32)

        def ours(x, t):  # the loss and dlogits of one kernel (dloss = 1: nothing to scale)
            loss, _, dx = K.cross_entropy_with_grad(x, t)
            return loss, dx

        def ours_two(x, t):  # the forward kernel, then the backward's
            loss, lse = K.cross_entropy(x, t)
            return loss, K.cross_entropy_backward(x, t, lse, dloss)
        peer("ours", ours)
        peer("ours_two", ours_two)
    peer("torch", autograd_step(lambda x, t: F.cross_entropy(x, t)))
    peer("compile", autograd_step(peers.fresh_compile(lambda x, t: F.cross_entropy(x, t))))
    row["copy_ms"], row["copy_flushed_ms"] = copy_times(xs)

    def liger_step(x, t):
        return autograd_step(peers.liger()["cross_entropy"])(x, t)
    peer("liger", liger_step, fresh=True)  # last: it writes its gradient over the logits
    return row


def rates(row: dict) -> None:
    """GB/s of ours and each timed peer, of the copy (of x: read + written), ours as % of
    the copy, x each peer and x the best (fastest) peer; steady and flushed."""
    x_bytes = row["M"] * row["N"] * ITEMSIZE[row["dtype"]]
    for mode in ("", "flushed_"):
        suffix = "_flushed" if mode else ""
        for who in ("ours", "ours_two", "ours_kernels", *PEERS):
            if f"{who}_{mode}ms" in row:
                row[f"{who}_{mode}GBs"] = row["bytes"] / row[f"{who}_{mode}ms"] / 1e6
        row[f"copy_{mode}GBs"] = 2 * x_bytes / row[f"copy_{mode}ms"] / 1e6
        timed = [who for who in PEERS if f"{who}_{mode}ms" in row]
        if timed:
            best = min(timed, key=lambda who: row[f"{who}_{mode}ms"])
            row[f"best_peer{suffix}"] = best
        if "ours_ms" not in row:
            continue
        row[f"pct_copy{suffix}"] = 100 * row[f"ours_{mode}GBs"] / row[f"copy_{mode}GBs"]
        if f"ours_kernels_{mode}GBs" in row:
            row[f"pct_copy_kernels{suffix}"] = 100 * row[f"ours_kernels_{mode}GBs"] / row[f"copy_{mode}GBs"]
        for who in timed:
            row[f"vs_{who}{suffix}"] = row[f"{who}_{mode}ms"] / row[f"ours_{mode}ms"]
        if timed:
            row[f"vs_best{suffix}"] = row[f"vs_{row[f'best_peer{suffix}']}{suffix}"]


def summary(row: dict) -> str:
    parts = []
    for who in ("ours", *(w for w in ("ours_two", "ours_kernels") if f"{w}_ms" in row), *PEERS):
        st = row["status"].get(who, "not run")
        parts.append(f"{who} {row[who + '_GBs']:7.0f}" + ("" if st == "ok" else f" ({st[:50]})") if f"{who}_GBs" in row
                     else f"{who} -- ({st[:80]})")
    tail = f"-> {row['pct_copy']:.1f}% of copy, {row['vs_best']:.3f}x best peer ({row['best_peer']})" if "vs_best" in row else ""
    return f"  {label(row['kernel'], row['M'], row['N'], row['dtype'])}: {'  '.join(parts)}  copy {row['copy_GBs']:7.0f}  {tail}"


def bench_training(deadline: float | None = None, kernels=KERNELS, shapes=None, dtypes=None) -> dict:
    """Every case of ``selected(kernels, shapes, dtypes)`` under the deadline, as
    ``fused.bench_fused`` runs its cases."""
    import torch

    log.section("6. training kernels: backward passes and cross-entropy fwd+bwd against torch, torch.compile, Liger "
                "(GB/s = bytes / median time)")
    cases = selected(kernels, shapes, dtypes)
    out = {"kernels": list(kernels), "cases": [list(c) for c in cases], "rows": [], "failed": [], "skipped": [],
           "tolerance": TOLERANCE, "liger": peers.liger_version(),
           "ours": {k: not_built(k) or "built" for k in kernels}}
    log(f"  Liger-Kernel: {out['liger']}; ours: {out['ours']}")
    last = 0.0
    for name, M, N, dtype in cases:
        if deadline is not None and log.elapsed() + last > deadline:
            out["skipped"].append({"kernel": name, "M": M, "N": N, "dtype": dtype})
            continue
        t0 = log.elapsed()
        try:
            row = cross_entropy_case(M, N, dtype) if name == "cross_entropy" else backward_case(name, M, N, dtype)
            rates(row)
            log(summary(row))
            out["rows"].append(row)
        except Exception as e:  # noqa: BLE001 - report the case and go on
            log(f"  {label(name, M, N, dtype)}: failed\n{traceback.format_exc()}")
            out["failed"].append({"kernel": name, "M": M, "N": N, "dtype": dtype, "error": f"{type(e).__name__}: {e}"})
        torch.cuda.empty_cache()
        last = log.elapsed() - t0
    if out["skipped"]:
        log(f"  skipped, as they would end past the run's {deadline:.0f} s deadline: "
            f"{', '.join(label(s['kernel'], s['M'], s['N'], s['dtype']) for s in out['skipped'])}")
    return out
