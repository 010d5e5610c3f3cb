"""The pass registry: the one place that names tile-mlir's passes.

``tile-opt`` (its ``--<pass>`` flags, ``--pass-pipeline`` and ``--list-passes``),
the Python scripting API and the docs all read ``REGISTRY``. A pass
``tile-<verb>[-<object>]`` lives in the module of the same words in snake_case
and is tested by ``test/Transforms/<name>.mlir``.

A pass is added to an upstream ``PassManager`` with ``add_pass(pm, name, **options)``,
which wraps the pass's run function as a Python pass (``PassManager.add(fn, ...)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .. import ir as _tile_ir  # noqa: F401  (the version check, on first use)
from ..errors import OptionError, UnknownPass


@dataclass(frozen=True)
class PassInfo:
    argument: str  # the command-line name, e.g. "tile-lower-reduction"
    summary: str
    # make(**options) -> run(op: ir.Operation, pass_) ; options arrive as strings
    make: Callable[..., Callable]
    options: dict[str, str] = field(default_factory=dict)  # option -> help text

    @property
    def class_name(self) -> str:
        return "".join(w.capitalize() for w in self.argument.split("-"))


REGISTRY: dict[str, PassInfo] = {}


def register(info: PassInfo) -> PassInfo:
    REGISTRY[info.argument] = info
    return info


def pass_info(argument: str) -> PassInfo:
    """The registered pass ``argument``; ``UnknownPass`` (a KeyError) lists the others."""
    try:
        return REGISTRY[argument]
    except KeyError:
        raise UnknownPass(f"no tile pass is named {argument!r}; the tile passes are: "
                          f"{', '.join(sorted(REGISTRY))}") from None


def make_pass(argument: str, **options) -> Callable:
    info = pass_info(argument)
    unknown = set(options) - set(info.options)
    if unknown:
        raise OptionError(
            f"pass {argument} has no option(s) {', '.join(sorted(unknown))}; "
            f"it takes: {', '.join(sorted(info.options)) or 'none'}"
        )
    return info.make(**options)


def add_pass(pm, argument: str, **options) -> None:
    """Add a registered tile pass (with options) to an upstream PassManager."""
    info = pass_info(argument)
    pm.add(make_pass(argument, **options), name=info.class_name, argument=info.argument,
           description=info.summary)


# Importing the pass modules registers them.
from . import tile_verify  # noqa: E402,F401,I001
from . import tile_lower_reduction  # noqa: E402,F401
from . import tile_lower_copy  # noqa: E402,F401
from . import tile_forward_loop_annotations  # noqa: E402,F401
from . import tile_externalize_dynamic_shared  # noqa: E402,F401
