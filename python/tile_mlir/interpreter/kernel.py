"""Kernels: compiling a gpu.func, and launching it on a grid of blocks.

``InterpretedKernel(module_text, name, signature)`` compiles one ``gpu.func`` of a
module; ``interpreted_kernels`` does so for every kernel of a module, parsed once.
``kernel.launch(grid, block, *args, shared_mem=0, stream=None)`` runs it (a CUDA kernel's
arguments, checked the same way; ``bind`` too): the blocks of the grid one after another,
the threads of one block in lockstep (see ``core``); a kernel whose signature names a
thread-block cluster runs its clusters one after another, the blocks of each together
(``cluster``). Arrays are updated in place; the interpreter runs on their memory, so each
must be as aligned as the kernel's compiled code assumes (``ArgSpec.align``), as a
device array must be on the GPU: a view into an array (``a[1:]``) may not be.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping

import numpy as np

from ..arrays import HOST, argument, check_carveout, check_launch, check_shared
from ..errors import InterpreterError
from ..ir import ir, make_context, memref_shape
from ..signature import KernelSignature
from ..vocab import MAX_SHARED_BYTES_PER_BLOCK, MLIR_TO_NUMPY, WARP_SIZE
from .cf import region_ops
from .cluster import run_cluster
from .core import (
    BID,
    CLUSTER_DIM,
    READ_ONLY,
    SYNC,
    Compiler,
    Unsupported,
    block_environments,
    location_text,
    register_terminators,
    run_ops,
)
from .memref import memref_type
from .sync import BlockSync, ClusterSync, track_arguments

_SHAPES_KEPT = 16  # the programs an interpreted kernel keeps, one per dynamic extents


@functools.cache
def _context():
    """One MLIR context for all interpreted modules (making one costs ~15 ms)."""
    return make_context()


@functools.lru_cache(maxsize=4)
def _parse(module_text: str):
    """Parse a module; cached, so the kernels of one module share one parse."""
    try:
        return ir.Module.parse(module_text, _context())
    except ir.MLIRError as e:
        raise InterpreterError(f"cannot parse the module: {e}") from e


def _find_kernel(module, name: str):
    for gpu_module in module.body.operations:
        if gpu_module.operation.name != "gpu.module":
            continue
        for op in gpu_module.regions[0].blocks[0].operations:
            if op.operation.name == "gpu.func" and op.attributes["sym_name"].value == name:
                return op.operation
    raise InterpreterError(f"no gpu.func @{name} in a gpu.module of the module")


def _arg_dtype(type_) -> str | None:
    return MLIR_TO_NUMPY.get(str(type_))


def _check_signature(func, inputs, signature: KernelSignature) -> None:
    """The signature must describe the function's arguments."""
    where = f"gpu.func @{signature.name} at {location_text(func.location)}"
    if len(inputs) != len(signature.args):
        raise InterpreterError(
            f"{where} has {len(inputs)} argument(s), its signature {signature.describe()} has "
            f"{len(signature.args)}"
        )
    for i, (t, spec) in enumerate(zip(inputs, signature.args)):
        if isinstance(t, ir.MemRefType):
            fits = (spec.kind, spec.dtype, spec.shape) == ("memref", _arg_dtype(t.element_type), memref_shape(t))
        else:
            fits = (spec.kind, spec.dtype) == ("scalar", _arg_dtype(t))
        if not fits:
            raise InterpreterError(f"{where}: argument {i} is {t}, the signature says {spec.describe()}")


class _Program:
    """A compiled gpu.func: its ops, the initial environment, its argument slots, and
    ``unsupported``: the ops it has that the interpreter cannot run (at their locations).

    ``shapes``: the extents of the memref arguments with dynamic dims (``dynamic``, by
    argument index), which the program is built for; without them, extents of 1 (a
    program that only tells what the interpreter cannot run)."""

    def __init__(self, module, name: str, signature: KernelSignature, shapes: Mapping | None = None):
        self.module = module
        func = _find_kernel(module, name)
        inputs = list(func.attributes["function_type"].value.inputs)
        _check_signature(func, inputs, signature)
        body = func.regions[0].blocks[0]
        args = list(body.arguments)
        cx = Compiler()
        self.arg_slots = [cx.define(a) for a in args[: len(inputs)]]
        self.dynamic = [i for i, spec in enumerate(signature.args) if spec.kind == "memref" and spec.dynamic]
        for i in self.dynamic:  # memref_of gives these values these extents
            cx.shapes[args[i]] = tuple(shapes[i]) if shapes else tuple(1 if d is None else d for d in signature.args[i].shape)
        try:
            self.arg_elems = [cx.elem(getattr(t, "element_type", t)) for t in inputs]
        except Unsupported as e:
            raise InterpreterError(f"gpu.func @{name} at {location_text(func.location)}: {e}") from None
        prologue = []  # workgroup and private attributions, allocated per block
        workgroup = []  # the static shared memory: the workgroup attributions' and globals' types
        for a in args[len(inputs) :]:
            try:
                memref = memref_type(cx, a.type)
                allocate = memref.allocator(cx.define(a))
            except Unsupported as e:
                raise InterpreterError(f"gpu.func @{name}: attribution {a.type}: {e}") from e
            allocate.where = f"gpu.func @{name}: attribution {a.type}"
            prologue.append(allocate)
            if memref.workgroup:
                workgroup.append(a.type)
        body = region_ops(cx, func.regions[0])
        workgroup += _global_types(func, cx.globals)
        self.static_shared = sum(_bytes(ir.MemRefType(t)) for t in workgroup)
        self.ops = prologue + cx.prologue + body  # cx.prologue: the workgroup globals
        self.template = cx.template
        self.unsupported = cx.unsupported


def _global_types(func, names) -> list:
    """The types of the ``memref.global``s named ``names`` in ``func``'s gpu.module."""
    types = []
    for op in func.parent.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "memref.global" and ir.StringAttr(op.attributes["sym_name"]).value in names:
            types.append(ir.TypeAttr(op.attributes["type"]).value)
    return types


def _bytes(type_: ir.MemRefType) -> int:
    """The bytes a static memref type holds (a byte for an i1)."""
    bits = type_.element_type.width if hasattr(type_.element_type, "width") else 64  # index: 64 bits
    return math.prod(type_.shape) * max(bits // 8, 1)


def _check_supported(programs) -> None:
    """Raise one InterpreterError that lists every op of ``programs`` that cannot run."""
    problems = [p for program in programs for p in program.unsupported]
    if problems:
        raise InterpreterError(
            f"the interpreter cannot run {len(problems)} op(s) of this module:\n  " + "\n  ".join(problems)
        )


class InterpretedKernel:
    """A kernel run by the CPU interpreter; launched like a compiled one."""

    def __init__(self, module_text: str, name: str, signature: KernelSignature):
        self.name = name
        self.signature = signature
        self._program = _Program(_parse(module_text), name, signature)
        self._shaped: dict = {}  # dynamic extents -> the program built for them
        _check_supported([self._program])

    @classmethod
    def _of(cls, program: _Program, signature: KernelSignature) -> InterpretedKernel:
        kernel = cls.__new__(cls)
        kernel.name, kernel.signature, kernel._program = signature.name, signature, program
        kernel._shaped = {}
        return kernel

    def _program_for(self, args) -> _Program:
        """The program for these arguments: the kernel's, or for memref arguments with
        dynamic dims, one built for their arrays' extents (kept for the next launches)."""
        program = self._program
        if not program.dynamic:
            return program
        self.signature.check_count(args)
        shapes = {}
        for i in program.dynamic:
            if not isinstance(args[i], np.ndarray):
                return program  # not an array: _bind says so, before anything runs
            self.signature.check_array(i, args[i].dtype.name, args[i].shape)
            shapes[i] = args[i].shape
        key = tuple(shapes.values())
        shaped = self._shaped.get(key)
        if shaped is None:
            shaped = _Program(program.module, self.name, self.signature, shapes)
            _check_supported([shaped])
            if len(self._shaped) >= _SHAPES_KEPT:
                del self._shaped[next(iter(self._shaped))]
            self._shaped[key] = shaped
        return shaped

    def __repr__(self) -> str:
        return f"InterpretedKernel({self.signature.describe()})"

    def launch(self, grid, block, *args, shared_mem: int = 0, stream=None) -> None:
        """Run the kernel on ``grid`` blocks of ``block`` threads; arrays are updated in
        place. The arguments are a CUDA kernel's (``runtime.CudaKernel.launch``), checked
        the same way (``arrays.check_launch``, ``arrays.argument``); ``stream`` is
        checked and otherwise ignored: the run is over when this returns."""
        grid, block, shared_mem, _ = check_launch(self.signature, grid, block, shared_mem, stream)
        check_shared(self.signature, shared_mem, MAX_SHARED_BYTES_PER_BLOCK, self._program.static_shared)
        self._run(grid, block, shared_mem, self._arguments(args))

    def bind(self, grid, block, *args, shared_mem: int = 0, stream=None, carveout=None) -> BoundLaunch:
        """Check the arguments once, as ``launch`` does, and return a callable that takes
        none and runs the kernel on them (as ``runtime.CudaKernel.bind``; ``carveout``, a
        hint to the GPU's SMs, is checked and otherwise ignored)."""
        check_carveout(self.signature, carveout)
        grid, block, shared_mem, _ = check_launch(self.signature, grid, block, shared_mem, stream)
        check_shared(self.signature, shared_mem, MAX_SHARED_BYTES_PER_BLOCK, self._program.static_shared)
        checked = self._arguments(args)
        return BoundLaunch(self, args, lambda: self._run(grid, block, shared_mem, checked))

    def _arguments(self, args) -> list:
        """The checked arguments: (HOST, numpy array) or (SCALAR, value) each."""
        sig = self.signature
        sig.check_count(args)
        return [argument(sig, i, arg, 0, device=False) for i, arg in enumerate(args)]

    def _run(self, grid, block, shared_mem: int, checked) -> None:
        n = block[0] * block[1] * block[2]
        cluster = self.signature.cluster or (1, 1, 1)
        program = self._program_for([value for _, value in checked])
        env = list(program.template)
        env[CLUSTER_DIM] = tuple(cluster)
        with np.errstate(all="ignore"):
            copies = self._bind(checked, env, program)
        ops = program.ops
        sig = self.signature
        arrays = [(env[slot], f"argument {i} ({sig.args[i].describe()})", value.shape)
                  for i, ((kind, value), slot) in enumerate(zip(checked, program.arg_slots)) if kind is HOST]

        def run(block_env):
            with np.errstate(all="ignore"):  # wrapping integers, inf and NaN are the semantics
                run_ops(ops, block_env, None)

        for envs in _clusters(block_environments(env, grid, block), grid, cluster):
            shared = ClusterSync(len(envs), -(-n // WARP_SIZE))
            for rank, block_env in enumerate(envs):
                block_env[SYNC] = BlockSync(n, block_env, shared, rank, dynamic_bytes=shared_mem)
            track_arguments(shared, arrays)  # global memory, within global_races() only
            run_cluster(envs, run)
        for array, flat in copies:
            array[...] = flat.reshape(array.shape)

    def _bind(self, checked, env: list, program: _Program) -> list:
        """Put the checked arguments in ``env``; returns (array, copy) to write back.

        The kernel runs on a contiguous array's own memory, so its address must be
        aligned as the kernel's code assumes (``KernelSignature.check_aligned``); a
        non-contiguous array is copied in (and back, if writeable). A read-only array is
        an input: the kernel reads it where it is (or a copy, kept read-only), and a
        store to it raises LaunchError (see ``memref.write``)."""
        sig = self.signature
        copies, read_only = [], {}
        for i, ((kind, arg), slot, elem) in enumerate(zip(checked, program.arg_slots, program.arg_elems)):
            if kind is HOST:
                if arg.flags.c_contiguous:
                    flat = arg.reshape(-1)  # a view: read-only if the array is
                else:  # work on a copy; write it back unless the array is read-only
                    flat = arg.flatten()
                    if arg.flags.writeable:
                        copies.append((arg, flat))
                    else:
                        flat.flags.writeable = False
                if flat.size:  # the memory the kernel runs on, as a device array's would be
                    sig.check_aligned(i, flat.ctypes.data)
                env[slot] = flat.view(elem.storage)
                if not arg.flags.writeable:
                    read_only[id(env[slot])] = f"kernel {self.name}: argument {i} ({sig.args[i].describe()})"
            else:
                env[slot] = elem.scalar(arg)
        env[READ_ONLY] = read_only
        return copies


class BoundLaunch:
    """A launch with its arguments checked (``InterpretedKernel.bind``): calling it runs
    the kernel on them, as ``runtime.BoundLaunch`` launches a CUDA kernel."""

    __slots__ = ("_run", "args", "kernel")

    def __init__(self, kernel: InterpretedKernel, args: tuple, run):
        self.kernel, self.args, self._run = kernel, args, run

    def __call__(self) -> None:
        self._run()


def _clusters(envs, grid, cluster):
    """The block environments of a launch (x fastest), grouped by cluster: each group
    in rank order (``cluster.rank_of``), the groups in the order of their first block."""
    groups: dict = {}
    for block_env in envs:
        bid = [int(block_env[s]) for s in BID]
        key = tuple(b // c for b, c in zip(bid, cluster))
        groups.setdefault(key, []).append(block_env)
    for group in groups.values():
        group.sort(key=lambda e: [int(e[s]) % c for s, c in zip(reversed(BID), reversed(cluster))])
        yield group


def interpreted_kernels(module_text: str, signatures) -> dict[str, InterpretedKernel]:
    """Interpreted kernels for the gpu.funcs of a module, parsed once.

    ``signatures``: KernelSignatures (an iterable, or a mapping whose values they are).
    Raises one InterpreterError listing every op of these kernels that cannot run.
    """
    if isinstance(signatures, Mapping):
        signatures = signatures.values()
    module = _parse(module_text)
    programs = {s.name: (_Program(module, s.name, s), s) for s in signatures}
    _check_supported(program for program, _ in programs.values())
    return {name: InterpretedKernel._of(program, s) for name, (program, s) in programs.items()}


register_terminators("func.return")
