"""The peers that are libraries, not our own kernels: Liger-Kernel and ``torch.compile``.

**Liger-Kernel 0.8.5** is not installed on the GPU machine: it travels as its wheel, and
the run installs it first (``benchmarks/README.md``)::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    export PYTHONPATH=/tmp/site:$PYTHONPATH

``liger()`` imports it, or raises ``Unavailable("missing: ...")`` with why; a shape Liger
refuses (its kernels take rows of at most 65536 columns: ``calculate_settings`` raises)
raises ``Unavailable("refused: ...")`` on the first call. Either way the report says so
and gives no figure. Liger is called as users call it: ``LigerSoftmaxFunction``,
``LigerRMSNormFunction`` (``casting_mode="llama"``, its default) and
``LigerLayerNormFunction`` (``.apply``), ``liger_cross_entropy``.

**torch.compile** compiles the torch expression of each kernel (``TORCH_FORWARD``) once
per case: ``fresh_compile`` resets Dynamo first, so that no case reuses another's graph
nor hits the recompile limit, and compiles with ``dynamic=False`` (one static graph per
shape, as a user with a fixed shape gets). The first call compiles; the timings warm up
before they start, so no compile is timed.

Importing this module needs neither torch nor Liger.
"""

from __future__ import annotations

import functools

LIGER_VERSION = "0.8.5"
LIGER_MAX_N = 65536


class Unavailable(Exception):
    """A peer that gives no figure for a case: ``missing: why`` or ``refused: why``."""


@functools.cache
def _liger():
    try:
        import liger_kernel
        from liger_kernel.ops.layer_norm import LigerLayerNormFunction
        from liger_kernel.ops.rms_norm import LigerRMSNormFunction
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
        from liger_kernel.transformers.functional import liger_cross_entropy
    except Exception as e:  # noqa: BLE001 - any import failure means: missing, with why
        return f"missing: liger_kernel does not import ({type(e).__name__}: {e}); install the wheel (benchmarks/README.md)"
    from importlib import metadata

    try:
        version = metadata.version("liger_kernel")
    except metadata.PackageNotFoundError:
        version = getattr(liger_kernel, "__version__", "?")
    return {"version": version, "softmax": LigerSoftmaxFunction, "rmsnorm": LigerRMSNormFunction,
            "layernorm": LigerLayerNormFunction, "cross_entropy": liger_cross_entropy}


def liger() -> dict:
    """Liger's entry points and version, or ``Unavailable("missing: ...")``."""
    lib = _liger()
    if isinstance(lib, str):
        raise Unavailable(lib)
    return lib


def liger_version() -> str:
    lib = _liger()
    return lib if isinstance(lib, str) else lib["version"]


def refuses(N: int) -> str | None:
    """Why Liger refuses rows of N columns, or None."""
    if N > LIGER_MAX_N:
        return (f"refused: Liger's kernels take rows of at most {LIGER_MAX_N} columns (calculate_settings raises "
                f"for N = {N})")
    return None


def liger_forward(name: str, N: int, eps: float):
    """Liger's forward for kernel ``name``: f(x, params) -> y; Unavailable when it has none."""
    lib = liger()
    if name not in ("softmax", "rmsnorm", "layernorm"):
        raise Unavailable(f"missing: Liger-Kernel has no {name} kernel")
    why = refuses(N)
    if why:
        raise Unavailable(why)
    fn = lib[name]
    if name == "softmax":
        return lambda x, p: fn.apply(x)
    if name == "rmsnorm":
        return lambda x, p: fn.apply(x, p[0], eps, 0.0, "llama", False)
    return lambda x, p: fn.apply(x, p[0], p[1], eps)


def guarded(fn, N: int):
    """``fn`` with Liger's refusal of a row length turned into Unavailable("refused")."""
    def call(*args):
        try:
            return fn(*args)
        except RuntimeError as e:
            if "exceeds the recommended" in str(e) or "Cannot launch" in str(e):
                raise Unavailable(f"refused: {str(e).strip()[:200]}") from e
            raise
    return call


def torch_forward(name: str, eps: float):
    """torch's call for kernel ``name``: f(x, params) -> y."""
    import torch
    import torch.nn.functional as F

    return {"softmax": lambda x, p: torch.softmax(x, dim=-1),
            "rmsnorm": lambda x, p: F.rms_norm(x, (x.shape[-1],), p[0], eps),
            "layernorm": lambda x, p: F.layer_norm(x, (x.shape[-1],), p[0], p[1], eps),
            "logsumexp": lambda x, p: torch.logsumexp(x, dim=-1)}[name]


def fresh_compile(fn):
    """``torch.compile(fn, dynamic=False)`` after a Dynamo reset: this case's own graph."""
    import torch

    torch._dynamo.reset()
    return torch.compile(fn, dynamic=False)


def allow_retained_backward() -> None:
    """Let a compiled graph's backward run again on the same graph (``retain_graph=True``,
    how the backward timings call it): AOTAutograd refuses that with donated buffers."""
    import torch._functorch.config as config

    config.donated_buffer = False
