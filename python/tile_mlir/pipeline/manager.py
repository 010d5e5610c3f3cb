"""From a pipeline to a running ``PassManager``, for tile-opt and the library alike.

A pipeline is an ``Anchor`` tree (``pipeline.text``) whose elements are upstream passes
(``PassElement``: a name and MLIR's own option text, which MLIR parses), nested anchors,
and tile passes as typed objects (``passes.TilePass``).

* ``typed`` turns each tile ``PassElement`` of a parsed pipeline into its pass object,
  reading its option text there, once (``TilePass.from_text``). ``parse_pipeline``
  (``--pass-pipeline``) and ``pipeline_from_flags`` (``--<pass>[=<options>]``) are the
  two places where a person's text becomes a pipeline.
* ``build_pass_manager`` makes an upstream ``PassManager`` from the tree. The tile
  passes are added as Python passes (``TilePass.add_to``); every other name goes
  verbatim to ``PassManager.add("...")``. The bindings cannot put a Python pass inside an
  op-anchored nested pass manager, so a tile pass under an anchor, as in
  ``gpu.module(tile-lower-reduction)``, is added at the top level, wrapped so that it runs
  on every op that the anchor path selects.
"""

from __future__ import annotations

import re

from mlir.passmanager import PassManager

from ..errors import OptionError, UsageError
from ..ir import ir
from ..passes import REGISTRY, TilePass
from . import text
from .text import ROOT_OP, Anchor, PassElement

# The bindings report pass-manager problems only as ValueError text. These two
# fragments are the only parts of MLIR's wording that tile-opt depends on.
_UNKNOWN_PASS = "does not refer to a registered pass or pass pipeline"
_RESTRICTED_TO = re.compile(r"restricted to '([^']+)'")

Element = PassElement | Anchor | TilePass


def typed(pipeline: Anchor) -> Anchor:
    """``pipeline`` with each tile pass as its pass object, its options read from their
    text here; an unknown option or a bad value is a UsageError."""
    def convert(element):
        if isinstance(element, Anchor):
            return Anchor(element.op_name, tuple(map(convert, element.elements)))
        if isinstance(element, PassElement) and element.name in REGISTRY:
            try:
                return REGISTRY[element.name].from_text(element.options)
            except OptionError as e:
                raise UsageError(str(e)) from None
        return element

    return convert(pipeline)


def parse_pipeline(pipeline_text: str) -> Anchor:
    """A ``--pass-pipeline``, e.g. ``builtin.module(tile-lower-reduction{fold=tree},cse)``,
    with its tile passes typed."""
    return typed(text.parse_pipeline(pipeline_text))


def upstream_anchor(name: str, root_op: str, ctx: ir.Context) -> str | None:
    """Check that `name` is an upstream pass or pipeline.

    Returns the op it must be nested under when it is added to a `root_op` pass
    manager. Returns None when it can run on `root_op` itself.
    """
    try:
        PassManager(root_op, ctx).add(name)
    except ValueError as e:
        if _UNKNOWN_PASS in str(e):
            raise UsageError(f"unknown pass '{name}'") from None
        restricted = _RESTRICTED_TO.search(str(e))
        if restricted is None:
            raise UsageError(str(e).strip()) from None
        return restricted.group(1)
    return None


def known_pass(name: str, ctx: ir.Context) -> bool:
    """Whether ``name`` is a tile pass or an upstream pass or pipeline."""
    if name in REGISTRY:
        return True
    try:
        PassManager("any", ctx).add(name)
    except ValueError as e:
        return _UNKNOWN_PASS not in str(e)
    return True


def pipeline_from_flags(flags: list[str], ctx: ir.Context) -> Anchor | None:
    """Turn ``--<pass>[=<options>]`` flags into a pipeline that keeps their order.

    Like mlir-opt's flags (which use implicit nesting), an upstream pass restricted to
    another op, e.g. ``--convert-gpu-to-nvvm``, is nested under that op.
    """
    elements: list[Element] = []
    for flag in flags:
        name, _, options = flag.lstrip("-").partition("=")
        element = PassElement(name, options.strip())
        anchor = None if name in REGISTRY else upstream_anchor(name, ROOT_OP, ctx)
        elements.append(Anchor(anchor, (element,)) if anchor else element)
    return typed(Anchor(ROOT_OP, tuple(elements))) if elements else None


def holds(pipeline: Anchor, names: frozenset[str]) -> bool:
    """Whether ``pipeline`` runs an upstream pass named in ``names``."""
    return any(holds(e, names) if isinstance(e, Anchor) else isinstance(e, PassElement) and e.name in names
               for e in pipeline.elements)


def build_pass_manager(pipeline: Anchor, ctx: ir.Context) -> PassManager:
    """A pass manager that runs `pipeline`, with the tile passes as Python passes.

    Each run of consecutive upstream elements goes verbatim into one
    ``pm.add("...")``, wrapped in the anchors it sits under. An anchor that holds a
    tile pass is split around that pass.
    """
    pm = PassManager(pipeline.op_name, ctx)
    add_elements(pm, ctx, typed(pipeline).elements)
    return pm


def _holds_tile_pass(element: Element) -> bool:
    return isinstance(element, TilePass) or (
        isinstance(element, Anchor) and any(map(_holds_tile_pass, element.elements)))


def add_elements(pm: PassManager, ctx: ir.Context, elements: tuple[Element, ...],
                 anchors: tuple[str, ...] = ()) -> None:
    """Add ``elements`` (typed: tile passes as objects) to ``pm``, under ``anchors``."""
    upstream: list[str] = []

    def flush() -> None:
        if upstream:
            _add_upstream(pm, _nest(anchors, ",".join(upstream)))
            upstream.clear()

    for element in elements:
        if isinstance(element, TilePass):
            flush()
            element.add_to(pm, anchors)
        elif isinstance(element, Anchor) and _holds_tile_pass(element):
            flush()
            add_elements(pm, ctx, element.elements, anchors + (element.op_name,))
        else:
            _check_upstream_names(element, ctx)
            upstream.append(str(element))
    flush()


def _nest(anchors: tuple[str, ...], pipeline: str) -> str:
    for op_name in reversed(anchors):
        pipeline = f"{op_name}({pipeline})"
    return pipeline


def _check_upstream_names(element: Element, ctx: ir.Context) -> None:
    """Report an unknown upstream pass by name, rather than with MLIR's parser error."""
    if isinstance(element, Anchor):
        for inner in element.elements:
            _check_upstream_names(inner, ctx)
    else:
        upstream_anchor(element.name, "any", ctx)


def _add_upstream(pm: PassManager, pipeline: str) -> None:
    try:
        pm.add(pipeline)
    except ValueError as e:
        raise UsageError(f"invalid pass pipeline: {str(e).strip()}") from None
