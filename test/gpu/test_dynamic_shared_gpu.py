"""Dynamic shared memory on the GPU: the block sum of ``tile_mlir.testing.dynamic_shared``
through ``gpu.dynamic_shared_memory`` and a ``memref.view``, 64 bytes in (below 48 KB)
and 100000 bytes in (the launch opts in to more than 48 KB), bit for bit against the
numpy model of its order; a launch over the device's limit is a LaunchError.

The kernels come from the compile cache that ``python -m tile_mlir.testing.prepare``
fills (see conftest.py); ``TILE_MLIR_CONFORMANCE_BACKEND=interpreter`` runs the same
tests in the interpreter.
"""

import os

import numpy as np
import pytest
import tile_mlir
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.copies import CHIP
from tile_mlir.testing.dynamic_shared import GPU_OFFSETS, THREADS, needed, tree_reference, tree_sum

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


def kernel(offset):
    return tile_mlir.compile(tree_sum(offset, chip=CHIP), {"chip": CHIP}, backend=BACKEND).tree


@pytest.mark.parametrize("offset", GPU_OFFSETS)
def test_a_block_sum_through_dynamic_shared_memory(seed, offset):
    rng = np.random.default_rng([seed, offset])
    tree = kernel(offset)
    for _ in range(3):
        a = rng.uniform(-4, 4, THREADS).astype(np.float32)
        b = np.full(1, np.nan, np.float32)
        tree.launch(1, THREADS, a, b, shared_mem=needed(offset))
        assert b.view(np.uint32)[0] == tree_reference(a).view(np.uint32), (b[0], tree_reference(a))


@pytest.mark.skipif(BACKEND != "cuda", reason="device arrays")
@pytest.mark.parametrize("offset", GPU_OFFSETS)
def test_bind_with_torch_tensors_and_a_stream(seed, offset):
    torch = pytest.importorskip("torch")
    gen = torch.Generator(device="cuda").manual_seed(seed % 2**63)
    a = torch.rand(THREADS, device="cuda", generator=gen) * 8 - 4
    b = torch.full((1,), float("nan"), device="cuda")
    stream = torch.cuda.Stream()
    bound = kernel(offset).bind(1, THREADS, a, b, shared_mem=needed(offset), stream=stream)
    bound()
    stream.synchronize()
    assert b.cpu().numpy().view(np.uint32)[0] == tree_reference(a.cpu().numpy()).view(np.uint32)


def test_more_than_the_device_allows_is_a_launch_error():
    a, b = np.ones(THREADS, np.float32), np.zeros(1, np.float32)
    with pytest.raises(tile_mlir.LaunchError, match=r"shared_mem=1000000 bytes of dynamic shared memory, but a block "
                                                    r"of it can have at most \d+"):
        kernel(GPU_OFFSETS[0]).launch(1, THREADS, a, b, shared_mem=1_000_000)


@pytest.mark.skipif(BACKEND != "cuda", reason="device arrays, and the GPU's occupancy")
def test_a_carveout_caps_the_ctas_an_sm_holds(seed):
    """bind(..., shared_mem, carveout): a 100 KB carveout (43% of 228 KB) holds fewer CTAs
    of 24 KB than the whole 228 KB does, as the driver's occupancy query says; the bound
    launch gives the same bits, and leaves the function's carveout at the default after."""
    torch = pytest.importorskip("torch")
    from cuda.bindings import driver

    tree, shared = kernel(GPU_OFFSETS[0]), 24 * 1024
    capped, whole = (tree.max_active_blocks(THREADS, shared, carveout=p) for p in (43, 100))
    assert 1 <= capped < whole <= tree.max_active_blocks(THREADS), (capped, whole)
    gen = torch.Generator(device="cuda").manual_seed(seed % 2**63)
    a = torch.rand(THREADS, device="cuda", generator=gen) * 8 - 4
    b = torch.full((1,), float("nan"), device="cuda")
    tree.bind(1, THREADS, a, b, shared_mem=shared, carveout=43)()
    torch.cuda.synchronize()
    assert b.cpu().numpy().view(np.uint32)[0] == tree_reference(a.cpu().numpy()).view(np.uint32)
    attribute = driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
    err, value = driver.cuFuncGetAttribute(attribute, tree._cu_function())
    assert int(err) == 0 and value == -1
