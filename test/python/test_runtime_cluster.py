"""Launching kernels that run in thread-block clusters, against ``fakecuda.FakeDriver``
(no GPU): cuLaunchKernelEx with the cluster dimension (or none, where the kernel fixes
its own), the non-portable size for 16 CTAs, the occupancy check, the errors that name
the cluster, and the signature that records it.
"""

import numpy as np
import pytest
from fakecuda import CLUSTER_SIGS, DeviceArray, fake_artifact, param
from tile_mlir import runtime
from tile_mlir.errors import CudaError, LaunchError
from tile_mlir.signature import KernelSignature


@pytest.fixture
def clustered():
    return runtime.cuda_kernels(fake_artifact(signatures=CLUSTER_SIGS))


def test_a_cluster_launch_gives_the_cluster_dimension(clustered, fake):
    a = np.arange(4, dtype=np.float32)
    clustered.cluster4.launch(8, 128, a, 3)
    np.testing.assert_array_equal(a, [1, 2, 3, 3])  # the kernel ran, on the copied array
    grid, block, shared, _, _, cluster = fake.launches[-1]
    assert (grid, block, shared, cluster) == ((8, 1, 1), (128, 1, 1), 0, (4, 1, 1))
    assert "cuLaunchKernel" not in fake.calls
    assert fake.calls.index("cuOccupancyMaxActiveClusters") < fake.calls.index("cuLaunchKernelEx")
    assert ("cluster4", "non-portable") not in fake.function_attributes  # 4 CTAs are portable


def test_bind_launches_a_cluster_too_and_checks_once(clustered, fake):
    a = np.zeros(4, np.float32)
    bound = clustered.cluster4.bind((4, 2), 128, DeviceArray(a), 4)
    for _ in range(3):
        bound()
    np.testing.assert_array_equal(a, [3, 3, 3, 3])
    assert fake.calls.count("cuLaunchKernelEx") == 3
    assert fake.calls.count("cuOccupancyMaxActiveClusters") == 1
    assert param(fake.launches[-1][4], 1, __import__("ctypes").c_int32) == 4
    assert [launch[5] for launch in fake.launches] == [(4, 1, 1)] * 3


def test_sixteen_ctas_ask_for_the_non_portable_size(clustered, fake):
    clustered.cluster16.launch(16, 128, np.zeros(4, np.float32), 1)
    assert fake.function_attributes[("cluster16", "non-portable")] == 1
    assert fake.calls.index("cuFuncSetAttribute") < fake.calls.index("cuOccupancyMaxActiveClusters")
    assert fake.launches[-1][5] == (16, 1, 1)


def test_a_kernel_that_fixes_its_cluster_launches_without_the_attribute(clustered, fake):
    clustered.cluster_fixed.launch(6, 64, np.zeros(4, np.float32), 1)
    assert fake.launches[-1][5] is None
    assert "cuLaunchKernelEx" in fake.calls


@pytest.mark.parametrize("grid", [6, (2, 4)])
def test_a_grid_of_partial_clusters_is_a_launch_error(clustered, no_driver, grid):
    with pytest.raises(LaunchError, match=r"kernel cluster4 runs in clusters of 4 CTA\(s\) \(its cluster-scope tile ops "
                       r"span \(4, 1, 1\)\), so each grid dim must be a multiple of the cluster's"):
        clustered.cluster4.launch(grid, 128, np.zeros(4, np.float32), 1)
    with pytest.raises(LaunchError, match="its known_cluster_size is"):
        clustered.cluster_fixed.bind(3, 64, DeviceArray(np.zeros(4, np.float32)), 1)


def test_a_cluster_the_gpu_cannot_hold_is_a_cuda_error_that_names_it(clustered, fake):
    fake.sm_threads = 4 * 128 - 1  # not one cluster of 4 CTAs of 128 threads
    with pytest.raises(CudaError, match=r"^cuOccupancyMaxActiveClusters failed: this GPU cannot schedule a single "
                       r"cluster \(kernel cluster4 in clusters of 4 CTAs \(4, 1, 1\), blocks of 128 threads, 64 bytes "
                       r"of dynamic shared memory\)"):
        clustered.cluster4.launch(4, 128, np.zeros(4, np.float32), 1, shared_mem=64)
    assert "cuLaunchKernelEx" not in fake.calls


def test_a_failing_cluster_launch_names_the_cluster(clustered, fake):
    fake.fail["cuLaunchKernelEx"] = fake.CUresult.CUDA_ERROR_LAUNCH_FAILED
    with pytest.raises(CudaError, match=r"^cuLaunchKernelEx failed: CUDA_ERROR_LAUNCH_FAILED .*\(kernel cluster4 in "
                       r"clusters of 4 CTAs \(4, 1, 1\), blocks of 128 threads"):
        clustered.cluster4.launch(4, 128, np.zeros(4, np.float32), 1)


def test_without_the_non_portable_attribute_the_driver_refuses_sixteen(clustered, fake, monkeypatch):
    """What the attribute is for: the fake driver, as the real one, refuses 16 CTAs
    without it; the error names the call, the driver's code and the cluster."""
    monkeypatch.setattr(runtime, "MAX_PORTABLE_CLUSTER_CTAS", 16)  # the runtime forgets it
    with pytest.raises(CudaError, match=r"^cuOccupancyMaxActiveClusters failed: CUDA_ERROR_INVALID_CLUSTER_SIZE.*"
                       r"clusters of 16 CTAs"):
        clustered.cluster16.launch(16, 128, np.zeros(4, np.float32), 1)


def test_the_signature_records_the_cluster():
    for sig in CLUSTER_SIGS:
        assert KernelSignature.from_json(sig.to_json()) == sig
    assert CLUSTER_SIGS[0].cluster_ctas == 4 and KernelSignature("k").cluster_ctas == 1
    assert "cluster" not in KernelSignature("k").to_json()
