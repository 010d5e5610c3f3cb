"""The pass registry: the one place that names tile-mlir's passes.

``tile-opt`` (its ``--<pass>`` flags, ``--pass-pipeline`` and ``--list-passes``),
the Python scripting API and the docs all read ``REGISTRY``. A pass
``tile-<verb>[-<object>]`` is the class of the same words in CamelCase, in the module
of the same words in snake_case, and is tested by ``test/Transforms/<name>.mlir``.

A pass is a frozen dataclass whose fields are its options (``passes.common.TilePass``).
Add one to an upstream ``PassManager`` as an object, ``add_pass(pm,
TileLowerReduction(fold=Fold.TREE))``, or by name with options as strings, ``add_pass(pm,
"tile-lower-reduction", fold="tree")``; either way it runs as a Python pass
(``PassManager.add(fn, ...)``).
"""

from __future__ import annotations

from .. import ir as _tile_ir  # noqa: F401  (the version check, on first use)
from ..errors import OptionError, UnknownPass
from .common import TilePass
from .tile_align_shared_globals import TileAlignSharedGlobals
from .tile_cache_hints import TileCacheHints
from .tile_check_target import TileCheckTarget
from .tile_externalize_dynamic_shared import TileExternalizeDynamicShared
from .tile_forward_loop_annotations import TileForwardLoopAnnotations
from .tile_lower_copy import TileLowerCopy
from .tile_lower_reduction import TileLowerReduction
from .tile_verify import TileVerify

__all__ = ["REGISTRY", "TilePass", "TileAlignSharedGlobals", "TileCacheHints", "TileCheckTarget",
           "TileExternalizeDynamicShared", "TileForwardLoopAnnotations", "TileLowerCopy",
           "TileLowerReduction", "TileVerify", "add_pass", "make_pass", "pass_class"]

REGISTRY: dict[str, type[TilePass]] = {
    cls.argument: cls
    for cls in (TileVerify, TileLowerCopy, TileLowerReduction, TileCacheHints, TileForwardLoopAnnotations,
                TileExternalizeDynamicShared, TileAlignSharedGlobals, TileCheckTarget)
}


def pass_class(argument: str) -> type[TilePass]:
    """The registered pass ``argument``; ``UnknownPass`` (a KeyError) lists the others."""
    try:
        return REGISTRY[argument]
    except KeyError:
        raise UnknownPass(f"no tile pass is named {argument!r}; the tile passes are: "
                          f"{', '.join(sorted(REGISTRY))}") from None


def make_pass(argument: str, **options) -> TilePass:
    """The registered pass ``argument``, its options given as strings (where a person
    typed them); an unknown option or a bad value is an OptionError."""
    return pass_class(argument).from_strings(options)


def add_pass(pm, pass_or_argument: TilePass | str, **options) -> None:
    """Add a tile pass to an upstream PassManager: a pass object, or a registered name
    with options as strings (``add_pass(pm, "tile-lower-reduction", fold="tree")``)."""
    if isinstance(pass_or_argument, str):
        pass_or_argument = make_pass(pass_or_argument, **options)
    elif options:
        raise OptionError("add_pass takes options only with a pass name; a pass object has its own")
    pass_or_argument.add_to(pm)
