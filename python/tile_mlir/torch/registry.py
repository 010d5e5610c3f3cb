"""How ``tile_mlir.torch``'s custom ops are made and called: ``_register`` gives an op
its autograd, its twin without autograd and its ``call`` paths; ``call`` runs an op.
``tile_mlir.torch.ops`` (softmax, logsumexp, the norms, argmax) and
``tile_mlir.torch.loss_ops`` (cross-entropy) register theirs here.

**The graph path.** Each op has a twin without autograd of its own,
``torch.ops.tile_mlir_raw.<name>`` (the same implementation and fake kernel): traced,
``call`` runs an op that has a backward through its ``autograd.Function``, whose forward
and backward call the twins, and the others' twins directly. So a ``torch.compile`` graph
holds the twins, and each of its calls costs the dispatcher's C++ alone: a custom op's
Python layers (its autograd kernel, its checks) cost about 9 µs more a call (CPU torch
2.13), paid by every step of a compiled training loop. The twins take no gradient
themselves (autograd would warn and drop it): call them inside a graph, or call the ops.

**The eager path** (``call``, what ``tile_mlir.torch``'s functions use): torch's
dispatcher costs about 9 µs a call of a Python custom op (15 µs with autograd, CPU torch
2.13), more than the kernel's own launch. So where nothing needs the dispatcher
(``_traced`` false, plain tensors and Parameters, not under ``torch.compile``, export or a
jit trace, no torch function or dispatch mode, no functorch transform), ``call`` runs the
op's implementation itself, and, where an input requires grad, through a
``torch.autograd.Function`` with the same setup and backward as ``register_autograd`` (the
backward's ops taking the same path). Anywhere else it calls the twins, as above: the same
results, the op kept whole in a traced graph.
"""

from __future__ import annotations

import torch

LIB = "tile_mlir"
RAW = "tile_mlir_raw"  # the ops' twins without autograd (module docstring)
_RAW_LIB = torch.library.Library(RAW, "DEF")
_FAKES: dict = {}  # op name -> its fake kernel, for its twin


def _c(t):
    return t.contiguous()


def _as(t, dtype):
    """``t.to(dtype)``, without its call where t has that dtype already (about a µs)."""
    return t if t.dtype == dtype else t.to(dtype)


def _stat_like(x):
    return x.new_empty(x.shape[:-1], dtype=torch.float32)


# --- the eager path -------------------------------------------------------------------

_C = torch._C
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_OPS: dict = {}  # op name -> (its twin tile_mlir_raw.<name>, its implementation, its autograd.Function or None)


def _traced() -> bool:
    """Whether something sees the ops called here: torch.compile (Dynamo, AOTAutograd),
    export, a jit trace, a torch function or dispatch mode, a functorch transform."""
    return (torch.compiler.is_compiling() or _C._len_torch_dispatch_stack() > 0
            or _C._is_torch_function_mode_enabled() or _C._get_tracing_state() is not None
            or _C._functorch.maybe_current_level() is not None)


def call(name: str, *args):
    """Op ``name`` on ``args``, as ``torch.ops.tile_mlir.<name>(*args)`` gives it: eagerly,
    the implementation itself (through the op's ``autograd.Function`` where an input
    requires grad and grad mode is on); traced, or on a tensor subclass, the twin, through
    that Function where an input requires grad."""
    raw, impl, function = _OPS[name]
    grad, plain = _kinds(args)
    if grad and function is not None and torch.is_grad_enabled():
        return function.apply(*args)
    return impl(*args) if plain and not _traced() else raw(*args)


def _kinds(args) -> tuple[bool, bool]:
    """One pass over ``args``: whether a tensor requires grad, and whether every tensor
    is plain (a tensor or Parameter; a subclass has its own dispatch)."""
    grad, plain = False, True
    for a in args:
        if isinstance(a, torch.Tensor):
            grad = grad or a.requires_grad
            plain = plain and type(a) in _PLAIN
    return grad, plain


def _eager(args) -> bool:
    """Whether ``args`` may go to the implementation itself: plain tensors, nothing traced
    (``_traced``); else the twin, through the dispatcher."""
    return _kinds(args)[1] and not _traced()


def _fake(op):
    """``op.register_fake``, remembering the fake kernel for the op's twin."""
    def register(fn):
        _FAKES[op._name] = fn
        return op.register_fake(fn)
    return register


def _register(op, impl, setup=None, grad=None, mutates=(), differentiable: int = 1) -> None:
    """Give op ``op`` (its implementation ``impl``) its autograd (``register_autograd``),
    its twin without autograd (``tile_mlir_raw.<name>``: the same schema, implementation
    and fake kernel) and the ``call`` paths: an autograd.Function with the same ``setup``
    and ``grad``, the outputs after the first ``differentiable`` non-differentiable
    (statistics), which runs the implementation eagerly and the twin traced."""
    name = op._name
    _RAW_LIB.define(name + str(torch.library.infer_schema(impl, mutates_args=mutates)))
    _RAW_LIB.impl(name, impl, "CompositeExplicitAutograd")
    torch.library.register_fake(f"{RAW}::{name}", _FAKES[name], lib=_RAW_LIB)
    raw = getattr(torch.ops.tile_mlir_raw, name)
    function = None
    if grad is not None:
        op.register_autograd(grad, setup_context=setup)

        def forward(ctx, *inputs):
            ctx.set_materialize_grads(False)
            ctx.arity = len(inputs)
            output = impl(*inputs) if _eager(inputs) else raw(*inputs)
            setup(ctx, inputs, output)
            if isinstance(output, tuple):
                ctx.mark_non_differentiable(*output[differentiable:])
            return output

        @torch.autograd.function.once_differentiable
        def backward(ctx, *grads):
            if all(g is None for g in grads[:differentiable]):  # no differentiable output is used
                return (None,) * ctx.arity
            return grad(ctx, *grads)

        function = type(f"{name}_autograd", (torch.autograd.Function,),
                        {"forward": staticmethod(forward), "backward": staticmethod(backward)})
    _OPS[name] = (raw, impl, function)
