"""The lowering options: one frozen dataclass, read from text once, typed from there on.

``tile_mlir.compile(..., options=Options(fold="tree"))`` (or ``{"fold": "tree"}``) and
``tile-opt --tile-to-ptx --chip=... --fold=...`` make an ``Options``; the compiler hands
its typed fields to the tile passes it builds (``TileLowerReduction(chip=..., fold=...)``,
whose fields are these same two options, declared by ``chip_option``/``fold_option``),
and the lowering's plan reads them from the pass. Nothing prints them to text on the way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from .errors import OptionError
from .option_fields import coerce, from_strings, option, plain, spelled
from .vocab import DEFAULT_FOLD, FOLDS, Chip, Fold


def chip_option():
    """The ``chip`` option (``Options.chip``, and the lowering passes')."""
    return option(None, Chip, Chip.parse, metavar="sm_XX",
                  help="the chip to compile for, where no enclosing gpu.module's #nvvm.target names one")


def fold_option():
    """The ``fold`` option (``Options.fold``, and tile-lower-reduction's)."""
    return option(DEFAULT_FOLD, Fold, Fold.parse, metavar="|".join(FOLDS),
                  help="the in-thread fold order")


@dataclass(frozen=True)
class Options:
    """How to lower: the ``chip`` (None: the gpu.module's #nvvm.target decides) and the
    in-thread ``fold`` order. Strings (``Options(chip="sm_80", fold="tree")``) are parsed
    on construction, once; the fields hold a ``Chip`` and a ``Fold``."""

    chip: Chip | None = chip_option()
    fold: Fold = fold_option()

    def __post_init__(self):
        coerce(self)

    @classmethod
    def from_mapping(cls, options: Options | Mapping | None) -> Options:
        """An ``Options`` from itself, None (the defaults), or a dict of option strings;
        an unknown name is an OptionError that lists the known ones."""
        if options is None:
            return cls()
        if isinstance(options, cls):
            return options
        if not isinstance(options, Mapping):
            raise OptionError(
                f"options must be a tile_mlir.Options or a dict, got {type(options).__name__} {options!r}"
            )
        return from_strings(cls, options, "tile_mlir.Options")

    def replace(self, **changes) -> Options:
        return replace(self, **changes)

    def as_dict(self) -> dict:
        """Every option as plain text or None (``option_fields.plain``)."""
        return plain(self)

    def spelled(self) -> str:
        """The non-default options, ``chip=sm_80 fold=tree``, for a message."""
        return spelled(self)
