"""Interpreter errors name the file the module's locations name.

Each error is at ``file:line:col`` of the op's innermost file location: the name a
module parsed from text gives its locations (``loc("kernels/k.mlir":7:12)``, through
name, call-site and fused locations), and the source name of ``lower_tile_ops`` (and so
of ``tile_mlir.compile``) for text without locations, never MLIR's ``-``.
"""

import numpy as np
import pytest
from test_interpreter import signature
from tile_mlir.compiler import lower_tile_ops
from tile_mlir.errors import InterpreterError
from tile_mlir.interpreter import InterpretedKernel, interpreted_kernels

ARGS = "%X: memref<4xf32>"


def _text(load_loc: str) -> str:
    """Thread t loads X[t] (out of bounds from thread 4 on) at ``load_loc``."""
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @k {{
    gpu.func @f(%X: memref<4xf32>) kernel {{
      %t = gpu.thread_id x
      %v = memref.load %X[%t] : memref<4xf32> {load_loc}
      memref.store %v, %X[%t] : memref<4xf32>
      gpu.return
    }}
  }}
}}
"""


@pytest.mark.parametrize(
    "loc, where",
    [('loc("kernels/k.mlir":7:12)', "kernels/k.mlir:7:12"),
     ('loc("tile.copy.load"("kernels/k.mlir":8:3))', "kernels/k.mlir:8:3 (tile.copy.load)"),
     ('loc(callsite("inner.mlir":2:1 at "kernels/k.mlir":9:5))', "inner.mlir:2:1"),
     ('loc(fused[unknown, "kernels/k.mlir":5:1])', "kernels/k.mlir:5:1")],
)  # fmt: skip
def test_a_run_time_error_names_the_locations_file(loc, where):
    k = InterpretedKernel(_text(loc), "f", signature("f", ARGS))
    with pytest.raises(InterpreterError, match=rf"^memref\.load at {where.replace('(', '[(]').replace(')', '[)]')}: "
                                               r"index \[4\] is out of bounds"):
        k.launch(1, 8, np.ones(4, np.float32))


@pytest.mark.parametrize("name", ["kernels/softmax.mlir", "<source>"])
def test_lowered_text_names_its_source(name):
    """lower_tile_ops names the text's locations after ``source_name``, so the
    interpreter's errors do; a location the user wrote keeps its own file."""
    lowered, sigs = lower_tile_ops(_text(""), source_name=name)
    assert '"-"' not in lowered
    k = interpreted_kernels(lowered, sigs)["f"]
    with pytest.raises(InterpreterError, match=rf"^memref\.load at {name}:5:12: index \[4\]"):
        k.launch(1, 8, np.ones(4, np.float32))
    lowered, sigs = lower_tile_ops(_text('loc("mine.mlir":3:4)'), source_name=name)
    with pytest.raises(InterpreterError, match=r"^memref\.load at mine\.mlir:3:4: index \[4\]"):
        interpreted_kernels(lowered, sigs)["f"].launch(1, 8, np.ones(4, np.float32))
