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


def memref_shape(t) -> tuple[int | None, ...]:
    """The shape of a memref type, None for each dynamic dim (``ArgSpec.shape``)."""
    return tuple(None if t.is_dynamic_dim(i) else d for i, d in enumerate(t.shape))


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


def name_source(root, name: str) -> None:
    """Give the text that ``root`` (an ir.Operation) was parsed from the file name
    ``name`` in its locations: ``ir.Module.parse`` calls every string ``-``. Op and
    block-argument locations change, through name and call-site locations; fused
    locations (whose metadata the bindings cannot read) stay as they are."""

    def renamed(loc):
        if loc.is_a_file() and loc.filename == "-":
            return ir.Location.file(name, loc.start_line, loc.start_col, loc.end_line, loc.end_col)
        if loc.is_a_name():
            return ir.Location.name(loc.name_str, renamed(loc.child_loc))
        if loc.is_a_callsite():
            return ir.Location.callsite(renamed(loc.callee), [renamed(loc.caller)])
        return loc

    def visit(op):
        op.location = renamed(op.location)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    arg.set_location(renamed(arg.location))
        return ir.WalkResult.ADVANCE

    root.walk(visit)


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


def available_dialects(extra: list[str]) -> list[str]:
    """The dialects registered in the bindings' context that tile-opt can name, and
    ``extra`` (tile, and those of --irdl-file). The bindings cannot list their registry:
    the candidates are the dialects with Python op classes, and those that the
    ``mlir-opt`` of the MLIR tools wheel lists, where it is installed."""
    import importlib
    import pkgutil
    import subprocess

    import mlir.dialects

    candidates = set(extra)
    for module in pkgutil.iter_modules(mlir.dialects.__path__):
        if module.name.startswith("_") and module.name.endswith("_ops_gen"):
            dialect = getattr(importlib.import_module(f"mlir.dialects.{module.name}"), "_Dialect", None)
            candidates.add(getattr(dialect, "DIALECT_NAMESPACE", ""))
    try:
        listed = subprocess.run([tool_path("mlir", "mlir-opt"), "--show-dialects"],
                                capture_output=True, text=True, timeout=60, check=False).stdout
        candidates.update(listed.partition(":")[2].strip().split(","))
    except (OSError, FileNotFoundError, subprocess.SubprocessError):
        pass
    ctx = ir.Context()
    known = set(extra)
    for name in candidates - known - {""}:
        try:
            ctx.get_dialect_descriptor(name)
            known.add(name)
        except (ValueError, RuntimeError):
            pass
    return sorted(known)


def env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0", "false", "False")
