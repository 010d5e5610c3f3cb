"""``tile_mlir.ops.reduce`` and ``ops.copy`` check each op as they build it, with the rules
and the words of tile-opt (tile_mlir.checks, tile_mlir.irdl_messages), and raise a
``BuildError`` located at the user's line of Python, with that line and a caret."""

import inspect

import pytest

import tile_mlir
from mlir import ir
from tile_mlir import build, ops
from tile_mlir.errors import BuildError, CompileError

LANES = dict(src_layout="S[32 : 1@laneid]", dst_layout="S[1 : 1] + R[32 : 1@laneid]")


def build_error(body, args=(("A", "memref<32xf32>"),), **frame):
    """The BuildError that ``body(k, src, dst)`` raises, and the line it was raised at."""
    with pytest.raises(BuildError) as info:
        with build.kernel("k", list(args), **frame) as k:
            src, dst = k.registers([1], "f32"), k.registers([1], "f32")
            body(k, src, dst)
    return str(info.value)


def tile_opt_errors(attributes: str, operands="(%d, %s)", types="(!r, !r)") -> str:
    """What tile_mlir.compile (tile-opt's parse, verify and tile-verify) says about the
    same op written as text."""
    text = f"""
!r = memref<1xf32, #gpu.address_space<private>>
module attributes {{gpu.container_module}} {{
  gpu.module @kernels [#nvvm.target<chip = "sm_90a">] {{
    gpu.func @k(%A: memref<32xf32>) kernel {{
      %c0 = arith.constant 0 : index
      %s = memref.alloca() : !r
      %d = memref.alloca() : !r
      "tile.{'copy' if '%A' in operands else 'reduce'}"{operands} {{{attributes}}} : {types} -> ()
      gpu.return
    }}
  }}
}}"""
    with pytest.raises(CompileError) as info:
        tile_mlir.compile(text, backend="interpreter")
    return str(info.value)


def messages(text: str) -> list[str]:
    return [line.split(": error: ", 1)[1] for line in text.splitlines() if ": error: " in line]


def test_an_unknown_kind_says_which_kinds_there_are_at_the_users_line():
    """Before: ``'"prod"' does not satisfy the constraint`` at a raw loc(...)."""
    line = inspect.currentframe().f_lineno + 1
    error = build_error(lambda k, s, d: ops.reduce(d, s, kind="prod", exec_scope="warp", axes=[0], **LANES))
    first = error.splitlines()
    col = inspect.getsource(test_an_unknown_kind_says_which_kinds_there_are_at_the_users_line).splitlines()[3].index(
        "ops.reduce") + 1
    assert first[0] == (f"{__file__}:{line}:{col}: error: 'tile.reduce' op kind must be one of "
                        '"sum", "max", "min", "maximum", "minimum", "argmax", "argmin"; got "prod"')
    assert first[1].lstrip().startswith("error = build_error(lambda k, s, d: ops.reduce(")
    assert first[2] == " " * (col - 1) + "^"
    assert messages(error) == messages(tile_opt_errors(
        'kind = "prod", exec_scope = "warp", axes = array<i64: 0>, '
        'src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">'))


def test_axes_given_as_an_int_is_a_located_build_error():
    """Before: a raw TypeError ('int' object is not iterable) from inside ops.py."""
    error = build_error(lambda k, s, d: ops.reduce(d, s, kind="sum", exec_scope="warp", axes=0, **LANES))
    assert messages(error) == ["'tile.reduce' op axes: expected array<i64: ...>, got 0 : i64"]
    assert messages(error) == messages(tile_opt_errors(
        'kind = "sum", exec_scope = "warp", axes = 0, '
        'src_layout = #tile.layout<"S[32 : 1@laneid]">, dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">'))
    assert error.startswith(f"{__file__}:")


@pytest.mark.parametrize("kwargs, text", [
    (dict(kind="sum", exec_scope="warp", axes=[1], **LANES),
     'kind = "sum", exec_scope = "warp", axes = array<i64: 1>, src_layout = #tile.layout<"S[32 : 1@laneid]">,'
     ' dst_layout = #tile.layout<"S[1 : 1] + R[32 : 1@laneid]">'),
    (dict(kind="sum", exec_scope="wrap", axes=[0]), 'kind = "sum", exec_scope = "wrap", axes = array<i64: 0>'),
    (dict(kind="sum", exec_scope="warp", axes=[0], src_layout="S[32 : 1@lane]"),
     'kind = "sum", exec_scope = "warp", axes = array<i64: 0>, src_layout = #tile.layout<"S[32 : 1@lane]">'),
    (dict(kind="sum", exec_scope="thread", axes=[0], accum=1), 'kind = "sum", exec_scope = "thread", axes = array<i64: 0>, accum = 1'),
    (dict(kind="sum", exec_scope="thread", dispatch="locl"), 'kind = "sum", exec_scope = "thread", dispatch = "locl"'),
], ids=["axis out of range", "scope", "layout", "accum", "variant"])
def test_reduce_says_what_tile_opt_says(kwargs, text):
    error = build_error(lambda k, s, d: ops.reduce(d, s, **kwargs))
    assert messages(error) and messages(error) == messages(tile_opt_errors(text))


@pytest.mark.parametrize("kwargs, text", [
    (dict(exec_scope="cluster"), 'exec_scope = "cluster"'),
    (dict(exec_scope="thread", padding=1.0), 'exec_scope = "thread", padding = 1.0 : f32'),
    (dict(exec_scope="thread", alignment=12), 'exec_scope = "thread", alignment = 12'),
    (dict(exec_scope="thread", layout="S[2 : 1]"), 'exec_scope = "thread", layout = #tile.layout<"S[2 : 1]">'),
    (dict(exec_scope="thread", cache="evict_first"), 'exec_scope = "thread", cache = "evict_first"'),
], ids=["scope", "padding on a store", "alignment", "layout", "cache"])
def test_copy_says_what_tile_opt_says(kwargs, text):
    error = build_error(lambda k, s, d: ops.copy(k.args["A"], s, [0], **kwargs))
    assert messages(error) and messages(error) == messages(tile_opt_errors(text, "(%A, %s, %c0)",
                                                                           "(memref<32xf32>, !r, index)"))


def test_a_value_that_is_no_attribute_is_a_build_error():
    error = build_error(lambda k, s, d: ops.reduce(d, s, kind="sum", exec_scope="thread", axes=[0.5]))
    assert messages(error) == ["'tile.reduce' op axes: cannot make an attribute of [0.5] (give a str, an int, "
                               "a bool or a list of ints)"]
    error = build_error(lambda k, s, d: ops.copy(d, k.args["A"], [0], exec_scope="thread", layout=7))
    assert messages(error) == ["'tile.copy' op layout: expected a layout (its text, or a TileLayout), got 7"]


def test_a_failed_op_leaves_nothing_behind():
    with build.kernel("k", [("A", "memref<32xf32>")]) as k:
        src, dst = k.registers([1], "f32"), k.registers([1], "f32")
        with pytest.raises(BuildError):
            ops.reduce(dst, src, kind="prod", exec_scope="thread")
    assert "tile.reduce" not in str(k.module)


def test_the_block_size_is_checked_against_known_block_size():
    """At cta scope the layout's warps are the block's: known_block_size fixes them."""
    error = build_error(lambda k, s, d: ops.reduce(
        d, s, kind="sum", exec_scope="cta", axes=[0], src_layout="S[((32, 2)) : ((1@laneid, 1@warpid))]",
        dst_layout="S[1 : 1] + R[(32, 2) : (1@laneid, 1@warpid)]"), known_block_size=128)
    assert messages(error) and messages(error)[0].startswith("'tile.reduce' op ")
    assert "128" in messages(error)[0]


def test_every_error_is_a_tile_error():
    assert issubclass(BuildError, tile_mlir.TileError) and issubclass(BuildError, ValueError)


def test_reduce_takes_lists_of_operands():
    """dst and src may be lists (operands in order): the dialect counts them."""
    error = build_error(lambda k, s, d: ops.reduce([d, d], [s, s], kind="sum", exec_scope="thread"))
    assert messages(error) == ["'tile.reduce' op takes 2 operands (dst, src), got 4; 3 with kind argmax or "
                               "argmin (value dst, index dst, src); 2 operand pairs with a combiner are tile.reduce2"]
    assert ir  # the bindings stay importable alongside
