"""A CPU interpreter for lowered kernels, in the spirit of Triton's ``TRITON_INTERPRET=1``.

It runs a ``gpu.func`` (inside a ``gpu.module``) at the level ``tile-lower-reduction``
leaves (arith, math, scf, cf, memref, vector, gpu and some nvvm ops), before NVVM
conversion, on the CPU with numpy, for a given grid and block. Kernels can so be tested,
and the lowering checked against numpy, on a machine without a GPU.

Execution model
---------------
* **SIMT in lockstep.** The threads of one block execute every op together. An SSA value
  holds one element per thread: a numpy array of shape ``[nthreads]``, or a numpy scalar
  when the value is uniform over the block (constants, block ids, loop induction
  variables and what is computed from them only). Broadcasting makes the two
  interchangeable. Blocks of the grid run one after another; the blocks of one
  thread-block cluster run together, each in turn until it waits at the cluster's
  barrier (``cluster``), and reach each other's shared memory (``pointers``).
* **Control flow** (``scf``, ``cf``), **warp ops** (``gpu``, ``nvvm``), **memory**
  (``memref``, ``vector_memory``, ``dynamic_shared``), **vectors** (``vector``), **numbers** (``elements``,
  ``arith``, ``math``) and **barriers and races** on workgroup memory, and on global
  memory within ``global_races()`` (``sync``): see each module. docs/interpreter.md
  is the user's guide, with every op it runs.

The package has one module per dialect; each registers the ops it runs in the registry
of ``core``, so ``SUPPORTED_OPS`` is the registry's list. ``kernel`` compiles and
launches kernels: ``interpreted_kernels(module_text, signatures)``, then
``kernel.launch(grid, block, *args, shared_mem=0, stream=None)`` (or ``bind``), as a CUDA
kernel. Building the kernels raises one
``InterpreterError`` that lists every op the interpreter cannot run, each at its
location: the innermost file location, which is where the user wrote the op when the
module comes from ``tile_mlir.compile(..., backend="interpreter")`` (the lowered text
it runs is printed with its locations).
"""

from ..errors import InterpreterError, LaunchError
from ..vocab import MAX_BLOCK_THREADS
from . import arith, cf, cluster, dynamic_shared, gpu, math, mbarrier, memref, nvvm, pointers, scf, vector, vector_memory  # noqa: F401,E501  (each fills the registry)
from .core import HANDLERS, TERMINATORS
from .kernel import BoundLaunch, InterpretedKernel, interpreted_kernels
from .sync import global_races

SUPPORTED_OPS = frozenset(HANDLERS) | frozenset(TERMINATORS)

__all__ = [
    "MAX_BLOCK_THREADS",
    "SUPPORTED_OPS",
    "BoundLaunch",
    "InterpretedKernel",
    "InterpreterError",
    "LaunchError",
    "global_races",
    "interpreted_kernels",
]
