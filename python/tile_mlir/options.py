"""The lowering options: one frozen dataclass, from the command line to the plan.

``tile-opt --tile-lower-reduction='chip=sm_80 fold=tree'``, ``tile-opt --tile-to-ptx
--chip=... --fold=...``, ``tile_mlir.compile(..., options=Options(fold="tree"))`` and
``add_pass(pm, "tile-lower-reduction", fold="tree")`` all build an ``Options``; the
pipeline, the pass, the dispatch context and the lowering's plan read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

from .errors import OptionError
from .vocab import DEFAULT_FOLD, FOLDS, Chip

# Option name -> its help text (tile-opt --list-passes and --help print these).
HELP = {
    "chip": "the sm_XX to compile for, where no enclosing gpu.module's #nvvm.target names one",
    "fold": "the in-thread fold order: linear (default) or tree",
}


@dataclass(frozen=True)
class Options:
    """How to lower: the ``chip`` (None: the gpu.module's #nvvm.target decides) and the
    in-thread ``fold`` order (``linear`` or ``tree``). Checked on construction."""

    chip: str | None = None
    fold: str = DEFAULT_FOLD

    def __post_init__(self):
        if self.chip is not None:
            Chip.parse(self.chip)
        if self.fold not in FOLDS:
            raise OptionError(f"fold must be {' or '.join(FOLDS)}, got {self.fold!r}")

    @classmethod
    def from_mapping(cls, options: "Options | Mapping | None") -> "Options":
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
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise OptionError(
                f"unknown option(s) {', '.join(unknown)}; the options are: {', '.join(sorted(known))}"
            )
        return cls(**{k: (None if v in (None, "") else str(v)) for k, v in options.items()})

    def replace(self, **changes) -> "Options":
        return Options(**{**asdict(self), **changes})

    def as_dict(self) -> dict:
        """Every option, as a plain dict (a cache key, a repro line)."""
        return asdict(self)

    def spelled(self, names=None) -> str:
        """The non-default options as pass-option text, ``chip=sm_80 fold=tree``; only
        those in ``names``, where given (the options one pass takes)."""
        default = Options()
        return " ".join(
            f"{f.name}={getattr(self, f.name)}"
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name) and (names is None or f.name in names)
        )
