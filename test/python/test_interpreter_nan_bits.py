"""NaN bits through constants and moves: what the GPU gives, bit for bit.

A constant's bits are what PTX moves (``mov.b16 %rs, 0x7FC1``), and an op that only
moves a value (a store, a select, a vector broadcast or extract, an ``scf.if`` yield, a
copy through memory) keeps them: the payload, the sign, and a signaling NaN stays
signaling. Only arithmetic gives the canonical NaN (docs/interpreter.md, Numbers). Each
float type is checked with several NaN payloads of both signs, quiet and signaling, with
the infinities and -0.0 beside them.
"""

import numpy as np
import pytest
import tile_mlir
from test_interpreter import kernel
from test_runtime import BF16_SCALARS
from tile_mlir.testing.copies import CopyCase

UINT = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
STORAGE = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64}
BITS = {  # quiet with payloads, signaling, both signs; then +inf, -inf, -0.0
    "bf16": [0x7FC1, 0xFFC0, 0x7FFF, 0xFFA5, 0x7F81, 0xFF80 | 0x7F, 0x7F80, 0xFF80, 0x8000],
    "f16": [0x7E01, 0xFE00, 0x7FFF, 0xFD55, 0x7C01, 0xFDFF, 0x7C00, 0xFC00, 0x8000],
    "f32": [0x7FC00001, 0xFFC00000, 0x7FFFFFFF, 0xFFC12345, 0x7F800001, 0xFFBFFFFF, 0x7F800000, 0xFF800000,
            0x80000000],
    "f64": [0x7FF8000000000001, 0xFFF8000000000000, 0x7FFFFFFFFFFFFFFF, 0xFFF8DEADBEEF0000,
            0x7FF0000000000001, 0xFFF7FFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
            0x8000000000000000],
}
WAYS = ["constant", "splat", "dense", "select", "broadcast", "extract", "yield", "memref_copy", "vector_copy"]


def _hex(bits: int, t: str) -> str:
    return f"0x{bits:0{np.dtype(UINT[t]).itemsize * 2}X}"


def _body(t: str) -> str:
    """Thread 0 writes each constant of BITS[t] to O, one block of n per way of WAYS;
    the copies read the same bits from X."""
    n, mem = len(BITS[t]), f"memref<{len(BITS[t]) * len(WAYS)}x{t}>"
    lines = ["%tid = gpu.thread_id x", "%c0 = arith.constant 0 : index", "%zero = arith.constant 0 : index",
             "%first = arith.cmpi eq, %tid, %zero : index",  # per thread, true on thread 0
             f"%all = arith.constant dense<[{', '.join(_hex(b, t) for b in BITS[t])}]> : vector<{n}x{t}>",
             f"%other = arith.constant 1.0 : {t}"]
    for k, b in enumerate(BITS[t]):
        h = _hex(b, t)
        at = [f"%at{w}_{k}" for w in range(len(WAYS))]
        lines += [f"{a} = arith.constant {w * n + k} : index" for w, a in enumerate(at)]
        lines += [
            f"%k{k} = arith.constant {k} : index",
            f"%s{k} = arith.constant {h} : {t}",
            f"memref.store %s{k}, %O[{at[0]}] : {mem}",
            f"%v{k} = arith.constant dense<{h}> : vector<1x{t}>",
            f"vector.store %v{k}, %O[{at[1]}] : {mem}, vector<1x{t}>",
            f"%d{k} = vector.extract %all[{k}] : {t} from vector<{n}x{t}>",
            f"memref.store %d{k}, %O[{at[2]}] : {mem}",
            f"%sel{k} = arith.select %first, %s{k}, %other : {t}",
            f"memref.store %sel{k}, %O[{at[3]}] : {mem}",
            f"%b{k} = vector.broadcast %sel{k} : {t} to vector<3x{t}>",
            f"%e{k} = vector.extract %b{k}[2] : {t} from vector<3x{t}>",
            f"memref.store %e{k}, %O[{at[4]}] : {mem}",
            f"%x{k} = vector.extract %all[%k{k}] : {t} from vector<{n}x{t}>",
            f"memref.store %x{k}, %O[{at[5]}] : {mem}",
            f"%y{k} = scf.if %first -> {t} {{ scf.yield %s{k} : {t} }} else {{ scf.yield %other : {t} }}",
            f"memref.store %y{k}, %O[{at[6]}] : {mem}",
            f"%m{k} = memref.load %X[%k{k}] : memref<{n}x{t}>",
            f"memref.store %m{k}, %O[{at[7]}] : {mem}",
            f"%w{k} = vector.load %X[%k{k}] : memref<{n}x{t}>, vector<1x{t}>",
            f"vector.store %w{k}, %O[{at[8]}] : {mem}, vector<1x{t}>",
        ]
    return "\n      ".join(lines)


@pytest.mark.parametrize("t", sorted(BITS))
def test_constants_and_moves_keep_every_bit(t):
    n = len(BITS[t])
    x = np.array(BITS[t], UINT[t]).view(STORAGE[t])
    out = np.zeros(n * len(WAYS), STORAGE[t])
    kernel(f"%X: memref<{n}x{t}>, %O: memref<{n * len(WAYS)}x{t}>", _body(t)).launch(1, 1, x, out)
    got = out.view(UINT[t]).reshape(len(WAYS), n)
    for way, row in zip(WAYS, got):
        assert [_hex(int(b), t) for b in row] == [_hex(b, t) for b in BITS[t]], f"{t} {way}"


@pytest.mark.parametrize("t", ["f16", "f32"])
def test_arithmetic_on_a_nan_gives_the_canonical_nan(t):
    """The other side of the rule: an add of a payload NaN is the canonical NaN."""
    canonical = {"f16": 0x7FFF, "f32": 0x7FFFFFFF}[t]
    body = f"""%c0 = arith.constant 0 : index
      %a = arith.constant {_hex(BITS[t][0], t)} : {t}
      %b = arith.constant 1.0 : {t}
      %s = arith.addf %a, %b : {t}
      memref.store %s, %O[%c0] : memref<1x{t}>"""
    out = np.zeros(1, STORAGE[t])
    kernel(f"%O: memref<1x{t}>", body).launch(1, 1, out)
    assert out.view(UINT[t])[0] == canonical


def test_bf16_arithmetic_on_a_nan_gives_the_canonical_nan():
    body = """%c0 = arith.constant 0 : index
      %a = arith.constant 0x7FC1 : bf16
      %b = arith.constant 0xFFC0 : bf16
      %s = arith.mulf %a, %b : bf16
      memref.store %s, %O[%c0] : memref<1xbf16>"""
    out = np.zeros(1, np.uint16)
    kernel("%O: memref<1xbf16>", body).launch(1, 1, out)
    assert out[0] == 0x7FFF


@pytest.mark.parametrize(("value", "bits"), BF16_SCALARS)
def test_a_bf16_scalar_argument_has_the_bits_the_runtime_packs(value, bits):
    out = np.zeros(1, np.uint16)
    body = """%c0 = arith.constant 0 : index
      memref.store %v, %O[%c0] : memref<1xbf16>"""
    kernel("%O: memref<1xbf16>, %v: bf16", body).launch(1, 1, out, value)
    assert _hex(int(out[0]), "bf16") == _hex(bits, "bf16")


@pytest.mark.parametrize("padding", [0x7FC1, 0xFFC0, 0x7F81, 0xFFFF])
def test_a_tile_copy_pads_with_the_padding_bits(padding):
    """A bf16 tile.copy past the end of its memory puts the padding's exact bits in the
    registers (the fuzz campaign's wrong bits: 0x7FFF)."""
    case = CopyCase("nan_padding", "load", "S[(1, (32, 8)) : (1, (1@laneid, 1))]", (2, 200), (1, 128),
                    "bf16", mults=(1, 128))
    text = case.kernel_text().replace("padding = 0xFF80 : bf16", f"padding = 0x{padding:04X} : bf16")
    assert f"padding = 0x{padding:04X}" in text
    mem = np.random.default_rng(padding).integers(1, 0x7F7F, (2, 200)).astype(np.uint16)
    dump = np.zeros((32, 8), np.uint16)
    tile_mlir.compile(text, backend="interpreter").k.launch(1, 32, mem, dump, 1, 1)
    want = np.full(256, padding, np.uint16)
    want[:72] = mem[1, 128:]
    np.testing.assert_array_equal(dump.reshape(-1), want)


@pytest.mark.parametrize("t", sorted(BITS))
def test_a_large_dense_constant_keeps_its_bits(t):
    """256 random bit patterns (NaNs among them) in one dense vector constant, which
    MLIR prints as a hex blob; each element keeps its bits."""
    rng = np.random.default_rng(7)
    width = np.dtype(UINT[t]).itemsize * 8
    bits = rng.integers(0, 2**63, 256, dtype=np.uint64) >> np.uint64(64 - width)
    bits[::5] = np.array(BITS[t] * 6, np.uint64)[: len(bits[::5])]
    body = f"""%c0 = arith.constant 0 : index
      %v = arith.constant dense<[{", ".join(_hex(int(b), t) for b in bits)}]> : vector<256x{t}>
      vector.store %v, %O[%c0] : memref<256x{t}>, vector<256x{t}>"""
    out = np.zeros(256, STORAGE[t])
    kernel(f"%O: memref<256x{t}>", body).launch(1, 1, out)
    np.testing.assert_array_equal(out.view(UINT[t]), bits.astype(UINT[t]))
