"""Memory ops under divergence: inside an ``scf.if`` that only some lanes take, at a
per-thread index that is out of bounds on the lanes that do not take it.

The lanes that skip the branch must neither fault nor change anything; the lanes that
take it must see exactly their elements. Each memory op of the interpreter (memref and
vector, plain, masked and transfers) is checked so, against numpy, on fresh random data,
and so are a vector yielded by a divergent scf.if, workgroup memory and dynamic vector
positions; then a ``tile.copy`` whose layout leaves lanes idle, loaded and stored back.
"""

import numpy as np
import pytest
import tile_mlir
from test_interpreter import kernel
from tile_mlir.errors import InterpreterError

LIVE = 3  # lanes 0..LIVE-1 take the branch; lane t works at index 2t of a memref<6xf32>
THREADS = 32
ARGS = "%X: memref<6xf32>, %O: memref<32x2xf32>"


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


def _branch(ops: str) -> str:
    """``ops`` inside ``scf.if lane < LIVE``, with %i = 2 * lane (past the end of %X for
    every lane that skips it), %t the lane, %c0 and %pad defined."""
    return f"""
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %live = arith.constant {LIVE} : index
      %pad = arith.constant -3.5 : f32
      %i = arith.muli %t, %c2 : index
      %on = arith.cmpi ult, %t, %live : index
      scf.if %on {{
        {ops}
      }}"""


def _data(rng, n):
    x = (rng.uniform(0.25, 4.0, n) * rng.choice([-1.0, 1.0], n)).astype(np.float32)
    x[rng.integers(n)] = -0.0
    return x


def _launch(ops, rng):
    """Run ``ops`` in the branch; returns (X before, X after, O before, O after)."""
    x, out = _data(rng, 6), _data(rng, THREADS * 2).reshape(THREADS, 2)
    x0, out0 = x.copy(), out.copy()
    kernel(ARGS, _branch(ops)).launch(1, THREADS, x, out)
    return x0, x, out0, out


def _assert_bits(got, want):
    np.testing.assert_array_equal(got.view(np.uint32), np.asarray(want, np.float32).view(np.uint32))


def _loaded(out0, x0):
    """O after each live lane t wrote X[2t], X[2t+1] to row t."""
    want = out0.copy()
    want[:LIVE] = x0.reshape(LIVE, 2)
    return want


# Each load op reads the 2 elements of lane t at X[2t] into a vector, which a vector.store
# (the op that crashed) puts into a private buffer, then into row t of O.
_THROUGH_PRIVATE = """
        %p = memref.alloca() : memref<2xf32, #gpu.address_space<private>>
        vector.store %v, %p[%c0] : memref<2xf32, #gpu.address_space<private>>, vector<2xf32>
        %w = vector.load %p[%c0] : memref<2xf32, #gpu.address_space<private>>, vector<2xf32>
        vector.store %w, %O[%t, %c0] : memref<32x2xf32>, vector<2xf32>"""

LOADS = {
    "vector.load": "%v = vector.load %X[%i] : memref<6xf32>, vector<2xf32>",
    "vector.maskedload": """%m = arith.constant dense<true> : vector<2xi1>
        %fill = arith.constant dense<9.0> : vector<2xf32>
        %v = vector.maskedload %X[%i], %m, %fill : memref<6xf32>, vector<2xi1>, vector<2xf32> into vector<2xf32>""",
    "vector.transfer_read": "%v = vector.transfer_read %X[%i], %pad {in_bounds = [true]} : memref<6xf32>, vector<2xf32>",
    "memref.load": """%c1 = arith.constant 1 : index
        %j = arith.addi %i, %c1 : index
        %a = memref.load %X[%i] : memref<6xf32>
        %b = memref.load %X[%j] : memref<6xf32>
        %v = vector.from_elements %a, %b : vector<2xf32>""",
}


@pytest.mark.parametrize("op", sorted(LOADS))
def test_a_load_under_divergence(op, rng):
    x0, x, out0, out = _launch(LOADS[op] + _THROUGH_PRIVATE, rng)
    _assert_bits(out, _loaded(out0, x0))
    _assert_bits(x, x0)


# Each store op writes row t of O (read as a vector) to X[2t], X[2t+1].
STORES = {
    "vector.store": "vector.store %v, %X[%i] : memref<6xf32>, vector<2xf32>",
    "vector.maskedstore": """%m = arith.constant dense<true> : vector<2xi1>
        vector.maskedstore %X[%i], %m, %v : memref<6xf32>, vector<2xi1>, vector<2xf32>""",
    "vector.transfer_write": "vector.transfer_write %v, %X[%i] {in_bounds = [true]} : vector<2xf32>, memref<6xf32>",
    "memref.store": """%c1 = arith.constant 1 : index
        %j = arith.addi %i, %c1 : index
        %a = vector.extract %v[0] : f32 from vector<2xf32>
        %b = vector.extract %v[1] : f32 from vector<2xf32>
        memref.store %a, %X[%i] : memref<6xf32>
        memref.store %b, %X[%j] : memref<6xf32>""",
}


@pytest.mark.parametrize("op", sorted(STORES))
def test_a_store_under_divergence(op, rng):
    read = """%r = vector.load %O[%t, %c0] : memref<32x2xf32>, vector<2xf32>
        %p = memref.alloca() : memref<2xf32, #gpu.address_space<private>>
        vector.store %r, %p[%c0] : memref<2xf32, #gpu.address_space<private>>, vector<2xf32>
        %v = vector.load %p[%c0] : memref<2xf32, #gpu.address_space<private>>, vector<2xf32>
        """
    x0, x, out0, out = _launch(read + STORES[op], rng)
    _assert_bits(x, out0[:LIVE].reshape(-1))
    _assert_bits(out, out0)


def test_a_vector_yielded_from_a_divergent_load(rng):
    """scf.if yields the vector the live lanes load, and a constant on the others."""
    x, out = _data(rng, 6), np.zeros((THREADS, 2), np.float32)
    body = _branch("").replace("scf.if %on {", """%v = scf.if %on -> vector<2xf32> {
        %a = vector.load %X[%i] : memref<6xf32>, vector<2xf32>
        scf.yield %a : vector<2xf32>
      } else {
        %b = arith.constant dense<[5.0, -6.0]> : vector<2xf32>
        scf.yield %b : vector<2xf32>""") + """
      vector.store %v, %O[%t, %c0] : memref<32x2xf32>, vector<2xf32>"""
    kernel(ARGS, body).launch(1, THREADS, x, out)
    want = np.tile(np.float32([5.0, -6.0]), (THREADS, 1))
    want[:LIVE] = x.reshape(LIVE, 2)
    _assert_bits(out, want)


def test_workgroup_memory_under_divergence(rng):
    """The live lanes store to workgroup memory, and after a barrier read it back with
    a mask; the others would be past its end."""
    x, out = _data(rng, 6), _data(rng, THREADS * 2).reshape(THREADS, 2)
    out0 = out.copy()
    shared = "memref<6xf32, #gpu.address_space<workgroup>>"
    body = _branch(f"""%a = vector.load %X[%i] : memref<6xf32>, vector<2xf32>
        vector.store %a, %S[%i] : {shared}, vector<2xf32>""") + f"""
      gpu.barrier
      scf.if %on {{
        %m = arith.constant dense<[false, true]> : vector<2xi1>
        %f = arith.constant dense<7.0> : vector<2xf32>
        %b = vector.maskedload %S[%i], %m, %f : {shared}, vector<2xi1>, vector<2xf32> into vector<2xf32>
        vector.store %b, %O[%t, %c0] : memref<32x2xf32>, vector<2xf32>
      }}"""
    kernel(ARGS, body, attributions=f"workgroup(%S: {shared})").launch(1, THREADS, x, out)
    want = out0.copy()
    want[:LIVE, 0], want[:LIVE, 1] = 7.0, x[1::2]
    _assert_bits(out, want)


@pytest.mark.parametrize("op", ["extract", "insert"])
def test_a_dynamic_vector_position_under_divergence(op, rng):
    """vector.extract / vector.insert at position t of a vector<4xf32>: lanes 4.. skip it."""
    x, out = _data(rng, 6), _data(rng, THREADS * 2).reshape(THREADS, 2)
    out0 = out.copy()
    ops = {"extract": """%e = vector.extract %v[%t] : f32 from vector<4xf32>
        memref.store %e, %O[%t, %c0] : memref<32x2xf32>""",
           "insert": """%z = arith.constant 0.5 : f32
        %w = vector.insert %z, %v[%t] : f32 into vector<4xf32>
        %e = vector.extract %w[3] : f32 from vector<4xf32>
        memref.store %e, %O[%t, %c0] : memref<32x2xf32>"""}[op]
    body = _branch("%v = vector.load %X[%c0] : memref<6xf32>, vector<4xf32>\n        " + ops).replace(
        f"arith.constant {LIVE} : index", "arith.constant 4 : index")
    kernel(ARGS, body).launch(1, THREADS, x, out)
    want = out0.copy()
    want[:4, 0] = x[:4] if op == "extract" else [x[3], x[3], x[3], 0.5]
    _assert_bits(out, want)


def test_a_dynamic_vector_position_out_of_bounds_names_the_thread():
    body = _branch("""%v = vector.load %X[%c0] : memref<6xf32>, vector<4xf32>
        %e = vector.extract %v[%i] : f32 from vector<4xf32>""")
    with pytest.raises(InterpreterError, match=r"vector.extract at .*position 4 is out of bounds for dim 0 "
                                               r"of \(4,\) in thread \(2, 0, 0\)"):
        kernel(ARGS, body).launch(1, THREADS, np.ones(6, np.float32), np.ones((THREADS, 2), np.float32))


# tile.copy of a layout that leaves lanes idle: lanes 0-1 hold 2 elements each of a
# memref<Nxf32> at origin o, lanes 2-31 nothing. The load is a vector.load at a
# per-lane index inside an scf.if the idle lanes skip, then a vector.store into the
# registers; the store writes them back.
IDLE = "S[((2, 2)) : ((1@laneid, 1))]"
SENTINEL = 12345.0
PAD = "0xFF800000"  # -inf


def _round_trip_module(n: int, attrs: str) -> str:
    regs = "memref<2xf32, #gpu.address_space<private>>"
    copy = ('"tile.copy"({dst}, {src}, %o) {{exec_scope = "warp", layout = #tile.layout<"' + IDLE
            + '">{pad}' + attrs + "}} : ({dt}, {st}, index) -> ()")
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @m [#nvvm.target<chip = "sm_90a">] {{
    gpu.func @k(%X: memref<{n}xf32>, %Y: memref<{n}xf32>, %R: memref<32x2xf32>, %o: index) kernel {{
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %tid = gpu.thread_id x
      %sent = arith.constant {SENTINEL} : f32
      %t = memref.alloca() : {regs}
      scf.for %s = %c0 to %c2 step %c1 {{
        memref.store %sent, %t[%s] : {regs}
      }}
      {copy.format(dst="%t", src="%X", pad=f", padding = {PAD} : f32", dt=regs, st=f"memref<{n}xf32>")}
      scf.for %s = %c0 to %c2 step %c1 {{
        %v = memref.load %t[%s] : {regs}
        memref.store %v, %R[%tid, %s] : memref<32x2xf32>
      }}
      {copy.format(dst="%Y", src="%t", pad="", dt=f"memref<{n}xf32>", st=regs)}
      gpu.return
    }}
  }}
}}
"""


@pytest.mark.parametrize("attrs", [", alignment = 8", ""], ids=["vector", "proved_or_scalar"])
@pytest.mark.parametrize(("n", "origin"), [(4, 0), (6, 2), (6, 4), (6, -2)])
def test_a_copy_that_leaves_lanes_idle_round_trips(n, origin, attrs, rng):
    """Registers after the load: lane l slot j holds X[o + 2l + j] (the padding outside X),
    the idle lanes keep the sentinel; Y after the store: X wherever the tile covers it."""
    kernels = tile_mlir.compile(_round_trip_module(n, attrs), backend="interpreter")
    x, y = _data(rng, n), _data(rng, n)
    y0 = y.copy()
    regs = np.zeros((32, 2), np.float32)
    kernels.k.launch(1, 32, x, y, regs, origin)
    want_regs = np.full((32, 2), SENTINEL, np.float32)
    want_y = y0.copy()
    for lane in range(2):
        for j in range(2):
            at = origin + 2 * lane + j
            inside = 0 <= at < n
            want_regs[lane, j] = x[at] if inside else -np.inf
            if inside:
                want_y[at] = x[at]
    _assert_bits(regs, want_regs)
    _assert_bits(y, want_y)
