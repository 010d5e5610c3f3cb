"""Dynamic shared memory on the GPU: the block sum of ``tile_mlir.testing.dynamic_shared``
through ``gpu.dynamic_shared_memory`` and a ``memref.view``, 64 bytes in (below 48 KB)
and 100000 bytes in (the launch opts in to more than 48 KB), bit for bit against the
numpy model of its order; a launch over the device's limit is a LaunchError. A carveout
with dynamic shared memory caps the CTAs an SM holds: as the occupancy query says, and as
the CTAs themselves count on their SMs (``dynamic_shared.resident``).

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
from tile_mlir.testing.dynamic_shared import GPU_OFFSETS, THREADS, needed, resident, tree_reference, tree_sum

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


@pytest.mark.skipif(BACKEND != "cuda", reason="the GPU's own count of its resident CTAs")
@pytest.mark.parametrize("block, percent, shared", [(128, 43, 24 * 1024), (256, 57, 21504), (256, 28, 19456),
                                                    (128, 100, 40 * 1024)])
def test_a_launch_holds_the_ctas_an_sm_that_the_query_says(block, percent, shared):
    """At 28-100% carveouts, every SM holds at once exactly the CTAs that max_active_blocks
    says for that shared memory and carveout, counted by the CTAs themselves
    (``dynamic_shared.resident``: each adds one to its SM's counter, keeps the peak, spins
    about 20 µs, and takes its one off), on a grid of 40 CTAs an SM."""
    torch = pytest.importorskip("torch")
    k = tile_mlir.compile(resident(CHIP), {"chip": CHIP}, backend=BACKEND).resident
    active, peak = (torch.zeros(1024, dtype=torch.int32, device="cuda") for _ in range(2))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    query = k.max_active_blocks(block, shared, carveout=percent)
    k.bind(40 * sms, block, active, peak, 40_000, shared_mem=shared, carveout=percent)()
    torch.cuda.synchronize()
    seen = peak[:sms].cpu()
    assert 1 <= query < k.max_active_blocks(block) and int(active.sum()) == 0
    assert int(seen.min()) == int(seen.max()) == query, (query, seen.tolist())
