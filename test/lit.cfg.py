# lit configuration for tile-mlir: the policy.
#
# It is split as in LLVM's mlir/examples/standalone. The paths come from
# lit.site.cfg.py, which CMake generates from lit.site.cfg.py.in. When lit runs
# straight on the source tree (`.venv/bin/lit test/`), this file derives the same
# paths from the Python running lit.
#
# Tests are `.mlir` files, plus `.py` scripts (test/python-scripts) that a RUN line
# hands to `%python`. test/python and test/gpu hold pytest tests, not lit tests.

import os
import sys

import lit.formats
import lit.llvm
from lit.llvm.subst import FindTool, ToolSubst

if not hasattr(config, "tile_source_dir"):
    config.tile_source_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    config.python_executable = sys.executable
    sys.path.insert(0, os.path.join(config.tile_source_dir, "python"))
    from tile_mlir.ir import tool_path

    config.llvm_tools_dir = os.path.dirname(tool_path("llvm", "FileCheck"))
    config.mlir_tools_dir = os.path.dirname(tool_path("mlir", "mlir-opt"))
    lit.llvm.initialize(lit_config, config)

llvm_config = lit.llvm.llvm_config
source_dir = config.tile_source_dir


config.name = "tile-mlir"
config.test_format = lit.formats.ShTest()  # lit's internal shell
config.suffixes = [".mlir", ".py"]
# test/python and test/gpu are pytest's; the only other Python under test/ that is not
# a lit test is this file.
config.excludes = ["python", "gpu", "Inputs", "lit.cfg.py"]
config.test_source_root = os.path.join(source_dir, "test")
if hasattr(config, "tile_binary_dir"):
    config.test_exec_root = os.path.join(config.tile_binary_dir, "test")
else:
    config.test_exec_root = config.test_source_root  # Output/ dirs are git-ignored

# Substitutions. `tile-opt` runs the checkout's shim with the project's Python.
python = f'"{config.python_executable}"'
config.substitutions.append(("%python", python))
config.substitutions.append(
    ("%tile_dialect", os.path.join(source_dir, "dialect", "tile.irdl.mlir")))
llvm_config.add_tool_substitutions(
    [ToolSubst("tile-opt", command=f'{python} "{os.path.join(source_dir, "tools", "tile-opt")}"'),
     ToolSubst("mlir-opt", command=FindTool("mlir-opt"), unresolved="fatal")],
    config.mlir_tools_dir)
llvm_config.add_tool_substitutions(
    [ToolSubst(tool, unresolved="fatal") for tool in ("FileCheck", "not", "count")],
    config.llvm_tools_dir)

# Environment.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
llvm_config.with_system_environment(["PATH", "PYTHONPATH", "TILE_OPT_TRACEBACK"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PYTHONPATH", os.path.join(source_dir, "python"), append_path=True)
