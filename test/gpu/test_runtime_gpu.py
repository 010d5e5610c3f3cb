"""The runtime on a real GPU, with hand-written PTX: no MLIR needed.

Skips without a GPU. On the GPU machine: ``python3 -m pytest test/gpu/test_runtime_gpu.py -s``
(``-s`` shows the launch-overhead figures).
"""

import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import tile_mlir  # noqa: E402
from tile_mlir import runtime  # noqa: E402
from tile_mlir.cache import Artifact  # noqa: E402
from tile_mlir.errors import CudaError, LaunchError  # noqa: E402
from tile_mlir.runtime import gpu_available  # noqa: E402
from tile_mlir.signature import ArgSpec, KernelSignature  # noqa: E402

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no GPU")

N = 256

PTX = r"""
.version 8.0
.target sm_90a
.address_size 64

// x[i] += 1.0f for i < 256
.visible .entry add_one(
	.param .u64 add_one_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [add_one_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	setp.ge.u32 	%p1, %r4, 256;
	@%p1 bra 	$L__add_one_done;
	mul.wide.u32 	%rd3, %r4, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.f32 	%f1, [%rd4];
	add.f32 	%f2, %f1, 0f3F800000;
	st.global.f32 	[%rd4], %f2;
$L__add_one_done:
	ret;
}

// y[i] = x[i] + 1.0f for i < 256
.visible .entry add_into(
	.param .u64 add_into_param_0,
	.param .u64 add_into_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<5>;
	.reg .f32 	%f<3>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [add_into_param_0];
	ld.param.u64 	%rd5, [add_into_param_1];
	cvta.to.global.u64 	%rd2, %rd1;
	cvta.to.global.u64 	%rd6, %rd5;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	setp.ge.u32 	%p1, %r4, 256;
	@%p1 bra 	$L__add_into_done;
	mul.wide.u32 	%rd3, %r4, 4;
	add.s64 	%rd4, %rd2, %rd3;
	add.s64 	%rd7, %rd6, %rd3;
	ld.global.f32 	%f1, [%rd4];
	add.f32 	%f2, %f1, 0f3F800000;
	st.global.f32 	[%rd7], %f2;
$L__add_into_done:
	ret;
}

// x[i] += value for i < n
.visible .entry add_value(
	.param .u64 add_value_param_0,
	.param .f32 add_value_param_1,
	.param .u32 add_value_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<4>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [add_value_param_0];
	ld.param.f32 	%f3, [add_value_param_1];
	ld.param.u32 	%r5, [add_value_param_2];
	cvta.to.global.u64 	%rd2, %rd1;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	setp.ge.u32 	%p1, %r4, %r5;
	@%p1 bra 	$L__add_value_done;
	mul.wide.u32 	%rd3, %r4, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.f32 	%f1, [%rd4];
	add.f32 	%f2, %f1, %f3;
	st.global.f32 	[%rd4], %f2;
$L__add_value_done:
	ret;
}
"""

SIGNATURES = (
    KernelSignature("add_one", (ArgSpec("memref", "float32", (N,)),)),
    KernelSignature("add_into", (ArgSpec("memref", "float32", (16, 16)), ArgSpec("memref", "float32", (N,)))),
    KernelSignature(
        "add_value", (ArgSpec("memref", "float32", (N,)), ArgSpec("scalar", "float32"), ArgSpec("scalar", "int32"))
    ),
)
GRID, BLOCK = 2, 128  # 256 threads: one per element


def ptx_artifact():
    return Artifact(ptx=PTX, cubin=None, signatures=SIGNATURES, chip="sm_90a")


def cubin_artifact(tmp_path):
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("no ptxas to build the cubin")
    (tmp_path / "k.ptx").write_text(PTX)
    subprocess.run([ptxas, "-arch=sm_90a", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")], check=True)
    return Artifact(ptx=PTX, cubin=(tmp_path / "k.cubin").read_bytes(), signatures=SIGNATURES, chip="sm_90a")


@pytest.fixture(scope="module")
def kernels():
    return runtime.cuda_kernels(ptx_artifact())


def random_input(rng, shape=(N,)):
    return rng.standard_normal(shape).astype(np.float32)


class DeviceBuffer:
    """A device allocation with ``__cuda_array_interface__``, made with the driver alone."""

    def __init__(self, host: np.ndarray):
        driver = runtime._driver()
        runtime._device()
        self.host = np.ascontiguousarray(host)
        self.pointer = int(runtime._check(driver.cuMemAlloc(self.host.nbytes), "cuMemAlloc"))
        runtime._check(driver.cuMemcpyHtoD(self.pointer, self.host.ctypes.data, self.host.nbytes), "cuMemcpyHtoD")
        self.__cuda_array_interface__ = {
            "shape": self.host.shape,
            "typestr": self.host.dtype.str,
            "data": (self.pointer, False),
            "strides": None,
            "version": 3,
        }

    def get(self) -> np.ndarray:
        driver = runtime._driver()
        out = np.empty_like(self.host)
        runtime._check(driver.cuCtxSynchronize(), "cuCtxSynchronize")
        runtime._check(driver.cuMemcpyDtoH(out.ctypes.data, self.pointer, out.nbytes), "cuMemcpyDtoH")
        return out

    def free(self):
        runtime._check(runtime._driver().cuMemFree(self.pointer), "cuMemFree")


def test_numpy_round_trip_through_the_ptx_jit(kernels):
    x = random_input(np.random.default_rng(1))
    expected = x + np.float32(1)
    kernels.add_one.launch(GRID, BLOCK, x)
    np.testing.assert_array_equal(x, expected)


def test_numpy_round_trip_through_the_cubin(tmp_path):
    artifact = cubin_artifact(tmp_path)
    assert runtime._module_image(artifact, runtime._device().capability) == artifact.cubin
    k = runtime.cuda_kernels(artifact)
    rng = np.random.default_rng(2)
    x, y = random_input(rng, (16, 16)), np.full(N, np.nan, np.float32)  # poisoned output
    k.add_into.launch(GRID, BLOCK, x, y)
    np.testing.assert_array_equal(y, x.reshape(-1) + np.float32(1))


def test_scalar_arguments(kernels):
    x = random_input(np.random.default_rng(3))
    expected = x.copy()
    expected[:100] += np.float32(2.5)
    kernels.add_value.launch(GRID, BLOCK, x, 2.5, 100)
    np.testing.assert_array_equal(x, expected)


def test_read_only_numpy_arrays(kernels):
    """Read-only arrays are fine as inputs; one the kernel writes is a LaunchError."""
    rng = np.random.default_rng(10)
    x, y = random_input(rng, (16, 16)), np.full(N, np.nan, np.float32)
    x.flags.writeable = False
    kernels.add_into.launch(GRID, BLOCK, x, y)
    np.testing.assert_array_equal(y, x.reshape(-1) + np.float32(1))
    z = random_input(rng)
    before = z.copy()
    z.flags.writeable = False
    with pytest.raises(LaunchError, match="argument 0 is a read-only numpy array, but the kernel wrote to it"):
        kernels.add_one.launch(GRID, BLOCK, z)
    np.testing.assert_array_equal(z, before)


def test_device_arrays_through_the_cuda_array_interface(kernels):
    rng = np.random.default_rng(4)
    x = random_input(rng, (16, 16))
    dx, dy = DeviceBuffer(x), DeviceBuffer(np.full(N, np.nan, np.float32))
    kernels.add_into.launch(GRID, BLOCK, dx, dy)
    np.testing.assert_array_equal(dy.get(), x.reshape(-1) + np.float32(1))
    dx.free()
    dy.free()


def test_cupy_zero_copy(kernels):
    cp = pytest.importorskip("cupy")
    x = random_input(np.random.default_rng(5), (16, 16))
    dx, dy = cp.asarray(x), cp.full(N, cp.nan, dtype=cp.float32)
    kernels.add_into.launch(GRID, BLOCK, dx, dy)
    np.testing.assert_array_equal(cp.asnumpy(dy), x.reshape(-1) + np.float32(1))
    stream = cp.cuda.Stream(non_blocking=True)
    kernels.add_one.launch(GRID, BLOCK, dy, stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(cp.asnumpy(dy), (x.reshape(-1) + np.float32(1)) + np.float32(1))


def test_torch_zero_copy_and_dlpack(kernels):
    torch = pytest.importorskip("torch")
    x = random_input(np.random.default_rng(6), (16, 16))
    tx = torch.from_numpy(x).cuda()
    ty = torch.full((N,), float("nan"), device="cuda")
    kernels.add_into.launch(GRID, BLOCK, tx, ty)
    torch.cuda.synchronize()
    np.testing.assert_array_equal(ty.cpu().numpy(), x.reshape(-1) + np.float32(1))

    class DLPackOnly:  # only the DLPack protocol: exercises the capsule reader
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        kernels.add_one.launch(GRID, BLOCK, DLPackOnly(ty), stream=stream)
    stream.synchronize()
    np.testing.assert_array_equal(ty.cpu().numpy(), (x.reshape(-1) + np.float32(1)) + np.float32(1))

    with pytest.raises(LaunchError, match="got dtype bfloat16"):
        kernels.add_one.launch(GRID, BLOCK, torch.zeros(N, dtype=torch.bfloat16, device="cuda"))
    with pytest.raises(LaunchError, match="C-contiguous"):
        kernels.add_one.launch(GRID, BLOCK, torch.zeros(2 * N, device="cuda")[::2])


def test_a_bad_launch_raises_and_the_process_survives(kernels):
    with pytest.raises(LaunchError, match=r"got shape \(255,\)"):
        kernels.add_one.launch(GRID, BLOCK, np.zeros(N - 1, np.float32))
    with pytest.raises(LaunchError, match="takes 3 argument"):
        kernels.add_value.launch(GRID, BLOCK, np.zeros(N, np.float32), 1.0)
    x = random_input(np.random.default_rng(7))
    expected = x + np.float32(1)
    kernels.add_one.launch(GRID, BLOCK, x)
    np.testing.assert_array_equal(x, expected)


def test_invalid_ptx_is_a_cuda_error_naming_the_call():
    bad = Artifact(ptx=".version 8.0\n.target sm_90a\nthis is not ptx\n", cubin=None, signatures=SIGNATURES, chip="sm_90a")
    with pytest.raises(CudaError, match=r"^cuModuleLoadData failed: CUDA_ERROR_\w+") as info:
        runtime.cuda_kernels(bad).add_one.launch(GRID, BLOCK, np.zeros(N, np.float32))
    print(f"\ninvalid PTX: {info.value}")


def test_too_large_a_block_is_a_launch_error(kernels):
    with pytest.raises(LaunchError, match=r"block \(4096, 1, 1\) has 4096 threads, over 1024"):
        kernels.add_one.launch(1, 4096, np.zeros(N, np.float32))
    with pytest.raises(CudaError, match="^cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE"):
        kernels.add_one.launch(2**31, BLOCK, np.zeros(N, np.float32))  # a grid the driver refuses
    x = np.zeros(N, np.float32)
    kernels.add_one.launch(GRID, BLOCK, x)  # the context is still good
    np.testing.assert_array_equal(x, 1)


def test_launch_from_another_thread(kernels):
    x = random_input(np.random.default_rng(8))
    expected = x + np.float32(1)
    worker = threading.Thread(target=lambda: kernels.add_one.launch(GRID, BLOCK, x))
    worker.start()
    worker.join()
    np.testing.assert_array_equal(x, expected)


def test_saved_artifact_and_bare_files_load(tmp_path):
    artifact = cubin_artifact(tmp_path)
    artifact.save(tmp_path / "saved")
    (tmp_path / "signatures.json").write_text(Artifact.signatures_to_json(SIGNATURES))
    for path in (tmp_path / "saved", tmp_path / "k.cubin", tmp_path / "k.ptx"):
        x = random_input(np.random.default_rng(9))
        expected = x + np.float32(1)
        tile_mlir.load_kernel(path, name="add_one").launch(GRID, BLOCK, x)
        np.testing.assert_array_equal(x, expected, err_msg=str(path))
