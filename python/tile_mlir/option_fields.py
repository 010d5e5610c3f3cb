"""Typed option fields: how a frozen dataclass declares options, and the one place their
text is read.

``tile_mlir.Options`` and every tile pass (``tile_mlir.passes``) are frozen dataclasses
whose fields are their options, as xDSL's passes are. A field made with ``option``
carries its type, the parser of its text, a metavar and a help line, so the command
line (``tile-opt --chip``, ``--list-passes``, ``--help``) is generated from the fields,
never written by hand. Text becomes typed values once, where a person typed it
(``from_strings``: a command line, a pass pipeline, a dict of strings); inside, a pass
carries a ``Chip`` and a ``Fold``, and no stage prints them to text for the next to parse.

Pure Python: the launch half imports it through ``tile_mlir.options``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, field, fields
from typing import Any

from .errors import OptionError


def option(default: Any, kind: type, parse: Callable[[Any], Any], help: str, metavar: str) -> Field:
    """A dataclass field that is an option: values of type ``kind`` (or None where the
    default is None), read from text by ``parse``, shown as ``metavar`` with ``help``."""
    return field(default=default, metadata={"kind": kind, "parse": parse, "help": help, "metavar": metavar})


def option_fields(cls_or_obj) -> tuple[Field, ...]:
    """The option fields of an options dataclass (a class or an instance)."""
    return tuple(f for f in fields(cls_or_obj) if "parse" in f.metadata)


def coerce(obj) -> None:
    """In ``__post_init__``: give each option field that holds something other than its
    type (a string from Python code) its parsed value. A typed value is left alone."""
    for f in option_fields(obj):
        value = getattr(obj, f.name)
        if value is not None and not isinstance(value, f.metadata["kind"]):
            object.__setattr__(obj, f.name, f.metadata["parse"](value))


def from_strings(cls, values: Mapping[str, Any], what: str):
    """``cls`` built from option strings, where a person typed them: each value parsed by
    its field; None or "" leaves an option at its default. An unknown name is an
    OptionError that lists ``what`` takes."""
    known = {f.name: f for f in option_fields(cls)}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise OptionError(f"{what} has no option(s) {', '.join(unknown)}; "
                          f"the options are: {', '.join(sorted(known)) or 'none'}")
    return cls(**{name: known[name].metadata["parse"](value)
                  for name, value in values.items() if value not in (None, "")})


def plain(obj) -> dict:
    """Every option of ``obj`` as its text, or None: ``{"chip": "sm_80", "fold": "tree"}``
    (a cache key)."""
    return {f.name: None if getattr(obj, f.name) is None else str(getattr(obj, f.name))
            for f in option_fields(obj)}


def spelled(obj) -> str:
    """The options of ``obj`` that differ from their defaults, as ``chip=sm_80 fold=tree``:
    for people (a repro line, ``--dump-pass-pipeline``), never for another stage to parse."""
    return " ".join(f"{f.name}={getattr(obj, f.name)}" for f in option_fields(obj)
                    if getattr(obj, f.name) != f.default)


def describe(f: Field) -> str:
    """A field's help line with its default, for ``--help`` and ``--list-passes``."""
    default = "none" if f.default in (None, MISSING) else str(f.default)
    return f"{f.metadata['help']} (default: {default})"
