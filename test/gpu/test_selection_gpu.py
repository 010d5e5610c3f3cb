"""K.argmax / K.argmin and tt.argmax / tt.argmin on CUDA tensors (the zero-copy path,
torch's current stream) against torch.argmax / torch.argmin over the last dim, equal
index for index: f32 and bf16, vocabularies up to 256000 and the argmax benchmark's rows
(``testing.fused.SELECTION_GPU_SHAPES``: one warp a row, several warps, a cluster of
CTAs), with ties (integer values), NaN rows (several NaNs, only NaN), rows of -inf and
of signed zeros. The kernels come from the compile cache that ``python -m
tile_mlir.testing.prepare`` fills; see conftest.py for the commands. Needs torch."""

import pytest
from tile_mlir import kernels as K
from tile_mlir.runtime import gpu_available
from tile_mlir.testing.fused import DTYPES, SELECTION_GPU_SHAPES

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not gpu_available() or not torch.cuda.is_available(), reason="no GPU")

TORCH = {"f32": torch.float32, "bf16": torch.bfloat16}


def rows(M, N, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randint(-3, 4, (M, N), device="cuda", generator=g).float()
    x += torch.randn(M, N, device="cuda", generator=g) * (torch.rand(M, N, device="cuda", generator=g) < 0.3)
    x[1::7, :] = float("-inf")
    x[2::7, torch.randint(0, N, (3,), device="cuda", generator=g)] = float("nan")
    x[3::7, :] = float("nan")
    x[4::7, :] = torch.where(torch.rand(N, device="cuda", generator=g) < 0.5, -0.0, 0.0)
    x[5::7, -1] = float("inf")  # the last column, in the masked tail's vector
    return x.to(TORCH[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M, N", SELECTION_GPU_SHAPES, ids=lambda v: str(v))
def test_argmax_and_argmin_against_torch(M, N, dtype):
    import tile_mlir.torch as tt

    x = rows(M, N, dtype, M + N)
    for ours, mine, theirs in ((K.argmax, tt.argmax, torch.argmax), (K.argmin, tt.argmin, torch.argmin)):
        want = theirs(x, dim=-1)
        got = ours(x)
        assert got.dtype == torch.int64 and got.device == x.device
        assert torch.equal(got, want), (got != want).nonzero()[:5]
        assert torch.equal(mine(x), want)
