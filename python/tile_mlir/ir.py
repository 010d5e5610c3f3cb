"""The MLIR side of tile-mlir: version check, dialect loading, context set-up.

Every module that touches MLIR imports it through here, so the version check
runs once, on first use, and fails with a message that names LLVM 22.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import BindingsTooOld

REQUIRED = "MLIR Python bindings from LLVM 22 or newer (pip install xtc-mlir-python-bindings==22.1.8.4)"


def _check_bindings():
    try:
        from mlir import ir, passmanager, rewrite  # noqa: F401
        from mlir.dialects import irdl
    except ImportError as e:  # pragma: no cover - exercised only without the wheel
        raise BindingsTooOld(f"tile-mlir needs the {REQUIRED}: {e}") from e
    missing = []
    if not hasattr(irdl, "load_dialects"):
        missing.append("irdl.load_dialects")
    if not hasattr(getattr(rewrite, "RewritePatternSet", None), "add"):
        missing.append("RewritePatternSet.add")
    doc = getattr(passmanager.PassManager.add, "__doc__", "") or ""
    if "Callable" not in doc:
        missing.append("callable PassManager.add")
    if missing:
        raise BindingsTooOld(
            f"tile-mlir needs the {REQUIRED}; these bindings lack: {', '.join(missing)}"
        )


_check_bindings()

import sys  # noqa: E402
import types  # noqa: E402

from mlir import ir  # noqa: E402
from mlir.dialects import irdl  # noqa: E402

# The bindings look for Python classes of a dialect's ops and attributes by importing
# ``mlir.dialects.<name>`` each time one is wrapped, and a failed import is slow
# (~0.1 ms, twice per tile.reduce). IRDL dialects have no such classes: an empty
# module answers the lookup at once.
sys.modules.setdefault(
    "mlir.dialects.tile", types.ModuleType("mlir.dialects.tile", "tile ops are IRDL-defined: generic OpViews")
)

DIALECT_FILE = Path(__file__).resolve().parent / "dialect" / "tile.irdl.mlir"

PRIVATE = "#gpu.address_space<private>"


def load_tile_dialect(context: ir.Context | None = None) -> None:
    """Load the `tile` dialect (from ``dialect/tile.irdl.mlir``) into a context."""
    ctx = context or ir.Context.current
    if getattr(ctx, "_tile_loaded", False):
        return
    irdl.load_dialects(ir.Module.parse(DIALECT_FILE.read_text(), ctx))
    try:
        ctx._tile_loaded = True
    except AttributeError:  # nanobind objects may refuse new attributes
        pass


def make_context() -> ir.Context:
    """A fresh context with the upstream dialects and `tile` loaded."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = False
    load_tile_dialect(ctx)
    return ctx


_STRING_PARAM = re.compile(r'^#tile\.layout<"((?:[^"\\]|\\.)*)">$')


def layout_text(attr: ir.Attribute) -> str | None:
    """The layout string inside a ``#tile.layout<"...">`` attribute, or None."""
    m = _STRING_PARAM.match(str(attr))
    return m.group(1) if m else None


def layout_attr(text: str, context: ir.Context | None = None) -> ir.Attribute:
    return ir.Attribute.parse(f'#tile.layout<"{text}">', context)


def find_ops(root, name: str) -> list:
    """Every op called ``name`` under ``root`` (an ir.Operation, itself included), in
    program order."""
    found = []

    def visit(op):
        if op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found


def tool_path(package: str, name: str) -> str:
    """Path of a binary shipped in an installed wheel (``llvm`` or ``mlir`` package)."""
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {package!r} package is not installed")
    for loc in spec.submodule_search_locations:
        p = Path(loc) / "bin" / name
        if p.exists():
            return str(p)
    raise FileNotFoundError(f"{name} not found in the installed {package!r} package")


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "False")
