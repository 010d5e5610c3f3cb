"""tile.copy in the CPU interpreter, against a numpy model of its meaning.

Every case of ``tile_mlir.testing.copies.CASES`` (the GPU suite runs the same ones on
the GPU: test/gpu/test_copy_gpu.py) is compiled with ``tile_mlir.compile(...,
backend="interpreter")``, so that the whole tile lowering runs, launched on random
memory and compared bit for bit with the reference; its lowered IR must also show what
the case expects of the variant (vector widths, masks, memref.dim). Then: the
interpreter catches a broken alignment assertion, the example row sum matches the
documented fold order, and a cta copy fixes its kernel's block.
"""

from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from tile_mlir.compiler import lower_tile_ops
from tile_mlir.errors import InterpreterError, LaunchError
from tile_mlir.testing.copies import (
    CASES,
    CTA_ROWS,
    CopyCase,
    TransposeCase,
    memory,
    row_sum_reference,
)


@pytest.fixture
def rng():
    return np.random.default_rng(20260115)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_copy_case(case, rng):
    text = case.kernel_text()
    case.check(tile_mlir.compile(text, backend="interpreter"), rng)
    if case.expect:
        lowered, _ = lower_tile_ops(text)
        missing = [needle for needle in case.expect if needle not in lowered]
        assert not missing, f"{case.name}: the lowered IR has no {missing}"


def test_a_broken_alignment_assertion_is_an_interpreter_error(rng):
    """An origin that breaks the asserted alignment is a misaligned vector access."""
    case = CopyCase("misaligned", "load", "S[((32, 8)) : ((1@laneid, 1))]", (1002,), (770,),
                    attrs=", alignment = 16")
    with pytest.raises(InterpreterError, match="not aligned to 16 bytes"):
        case.check(tile_mlir.compile(case.kernel_text(), backend="interpreter"), rng)


def test_row_sum_example(rng):
    """examples/row_sum_copy.mlir (a warp per row, tile.copy chunks with zero padding,
    tile.reduce into a running sum), bit for bit against its documented fold order."""
    text = (Path(__file__).resolve().parents[2] / "examples" / "row_sum_copy.mlir").read_text()
    kernels = tile_mlir.compile(text, backend="interpreter")
    x = memory(rng, (4096, 1000), "f32")
    x[~np.isfinite(x)] = 1.0
    y = np.zeros(4096, np.float32)
    kernels.row_sum.launch(3, 128, x, y)  # rows 0..11
    np.testing.assert_array_equal(y[:12], row_sum_reference(x[:12]))
    assert not y[12:].any()
    np.testing.assert_allclose(y[:12], x[:12].astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-3)


def test_a_cta_copy_needs_its_warps():
    """A cta-scope copy over 4 warps: the kernel's signature asks for exactly 128
    threads, and a launch on 64 is refused before anything runs."""
    case = CopyCase("cta", "load", CTA_ROWS, (9, 512), (0, 0), scope="cta", threads=128)
    kernels = tile_mlir.compile(case.kernel_text(), backend="interpreter")
    assert kernels.k.signature.block_threads == 128
    with pytest.raises(LaunchError, match="128"):
        kernels.k.launch(1, 64, np.ones((9, 512), np.float32), np.zeros((64, 4), np.float32), 0, 0)


def test_a_copy_orders_nothing(rng):
    """The transpose through workgroup memory without its barrier: the interpreter
    reports the race between the copy that writes the tile and the one that reads it."""
    case = TransposeCase()
    text = case.kernel_text().replace("gpu.barrier", "")
    with pytest.raises(InterpreterError, match="a race on workgroup memory"):
        case.check(tile_mlir.compile(text, backend="interpreter"), rng)
