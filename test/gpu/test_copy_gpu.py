"""tile.copy on the GPU: every case of ``tile_mlir.testing.copies.CASES``, and the example
row sum over a whole 4096 x 1000 matrix, checked bit for bit against numpy.

The same cases run in the interpreter in test/python/test_copy.py. Here they run on the
GPU, from the compile cache that ``python -m tile_mlir.testing.prepare`` fills (see
conftest.py for the command), or in the interpreter with
``TILE_MLIR_CONFORMANCE_BACKEND=interpreter``. A misaligned vector access (a wrong
alignment proof) is a CUDA error here.
"""

import os
import zlib
from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.copies import CASES, CHIP, memory, row_sum_reference

BACKEND = os.environ.get("TILE_MLIR_CONFORMANCE_BACKEND", "cuda")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "row_sum_copy.mlir"

pytestmark = pytest.mark.skipif(BACKEND == "cuda" and not gpu_available(), reason="no GPU")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_copy_case(case, seed):
    kernels = tile_mlir.compile(case.kernel_text(CHIP), {"chip": CHIP}, backend=BACKEND)
    case.check(kernels, np.random.default_rng([seed, zlib.crc32(case.name.encode())]))


def test_row_sum_example(seed):
    kernels = tile_mlir.compile(EXAMPLE.read_text(), {"chip": CHIP}, backend=BACKEND)
    x = memory(np.random.default_rng([seed, 1]), (4096, 1000), "f32")
    x[~np.isfinite(x)] = 1.0
    y = np.zeros(4096, np.float32)
    blocks = 1024 if BACKEND == "cuda" else 2  # the interpreter: the first 8 rows
    kernels.row_sum.launch(blocks, 128, x, y)
    rows = 4 * blocks
    np.testing.assert_array_equal(y[:rows], row_sum_reference(x[:rows]))
    np.testing.assert_allclose(y[:rows], x[:rows].astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-3)


@pytest.mark.skipif(BACKEND != "cuda", reason="device arrays")
def test_a_misaligned_device_view_is_refused_and_cuda_keeps_working(seed):
    """Issue 15 item 8: a torch view 4 bytes past a 16-byte boundary reached the row
    sum's 16-byte vector loads (``CUDA error: misaligned address``) and broke every later
    CUDA call. The launch refuses it, naming the argument; CUDA is fine afterwards."""
    torch = pytest.importorskip("torch")
    kernels = tile_mlir.compile(EXAMPLE.read_text(), {"chip": CHIP}, backend=BACKEND)
    gen = torch.Generator(device="cuda").manual_seed(seed % 2**63)
    base = torch.randn(4096 * 1000 + 4, device="cuda", generator=gen)
    y = torch.zeros(4096, device="cuda")
    with pytest.raises(tile_mlir.LaunchError, match=r"argument 0 \(float32\[4096, 1000\]\) is misaligned: .* % 16 = 4"):
        kernels.row_sum.launch(1024, 128, base[1:4096 * 1000 + 1].view(4096, 1000), y)
    aligned = base[4:].view(4096, 1000)  # 16 bytes in: aligned
    kernels.row_sum.launch(1024, 128, aligned, y)
    torch.cuda.synchronize()
    assert torch.ones(4, device="cuda").sum().item() == 4.0
    np.testing.assert_allclose(y.cpu().numpy(), aligned.double().sum(dim=1).cpu().numpy(), rtol=1e-4, atol=1e-3)
