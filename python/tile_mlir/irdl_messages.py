"""IRDL's and the parser's terse messages, in words that say what to change.

IRDL verifies ops and attributes generically, so its messages name neither the
attribute nor what it may be: ``'"prod"' does not satisfy the constraint``, ``expected
dynamic attribute``, ``expected base type 'builtin.memref' but got 'builtin.tensor'``.
``rephrase`` turns each such diagnostic into one that says which attribute, operand or
parameter is wrong, what it must be, and the closest known name. It reads what is
allowed from the dialects' IRDL (``irdl_dialects``), so it cannot drift from what the
verifier checks, and what was written from two places:

* the verifier's "see current operation" note, which prints the op in generic form
  (its name, attributes and operand types);
* the source line at the diagnostic's place, for names the parser rejects before any
  op exists (``#tile.layot<...>``, ``#tiles.layout<...>``, a stray character).

It works on ``tile_mlir.diagnostics.Diag`` values (``message``, ``where``, ``notes``)
and imports nothing from that module; ``to_diag`` there applies it to every
diagnostic that tile-opt prints and that ``CompileError`` carries.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, replace

from .ir import ir
from .vocab import INT64_MAX, REDUCE_ATTRIBUTES, REDUCE_OPS, reduce_operand_roles

# The note the verifier adds to its errors: the op, printed in generic form.
CURRENT_OP_NOTE = "see current operation: "

# Attributes an op takes that IRDL cannot declare (it has no optional attributes), so
# that a misspelling of a required one is not taken for one of them.
OPTIONAL_ATTRIBUTES = {name: REDUCE_ATTRIBUTES for name in REDUCE_OPS}


def _roles(op: str, count: int, names: list[str]) -> list[str]:
    """What each of ``count`` operands of ``op`` is, in words: the IRDL names, but for a
    tile.reduce (whose IRDL names cannot say that a third operand is an argmax's src)."""
    return list(reduce_operand_roles(count)) if op in REDUCE_OPS else names

Constraints = tuple[tuple[str, str | None], ...]  # (name, base such as "!builtin.memref")


@dataclass(frozen=True)
class DialectNames:
    """What one IRDL dialect defines, by full name (``tile.reduce``, ``tile.layout``):

    * ``enums``: the values that each ``irdl.is``/``irdl.any_of``-constrained op
      attribute may take, as MLIR prints them (``("tile.reduce", "kind") ->
      ('"sum"', ...)``);
    * ``operands``: each op's operands, by name, with the base their constraint
      requires (``irdl.base``), or None;
    * ``parameters``: the same for each attribute's and type's parameters.
    """

    name: str
    operations: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    enums: tuple[tuple[tuple[str, str], tuple[str, ...]], ...] = ()
    operands: tuple[tuple[str, Constraints], ...] = ()
    parameters: tuple[tuple[str, Constraints], ...] = ()

    def allowed(self, op: str) -> dict[str, tuple[str, ...]]:
        """The enum-constrained attributes of ``op``, in the order IRDL checks them."""
        return {attr: values for (name, attr), values in self.enums if name == op}

    def operands_of(self, op: str) -> Constraints | None:
        return dict(self.operands).get(op)

    def parameters_of(self, name: str) -> Constraints | None:
        return dict(self.parameters).get(name)


@functools.cache
def irdl_dialects(text: str) -> dict[str, DialectNames]:
    """The dialects an IRDL file defines, by name. Text that does not parse defines none."""
    try:
        module = ir.Module.parse(text, ir.Context())
    except ir.MLIRError:
        return {}
    found = {}
    for dialect in module.body.operations:
        if dialect.operation.name != "irdl.dialect":
            continue
        name = _symbol(dialect.operation)
        kinds: dict[str, list[str]] = {"irdl.operation": [], "irdl.attribute": [], "irdl.type": []}
        enums, operands, parameters = [], [], []
        for op in dialect.operation.regions[0].blocks[0].operations:
            op = op.operation
            if op.name not in kinds:
                continue
            full = f"{name}.{_symbol(op)}"
            kinds[op.name].append(full)
            if op.name == "irdl.operation":
                enums += _enums(full, op)
                operands += [(full, c) for c in _constraints(op, "irdl.operands", "names")]
            else:
                parameters += [(full, c) for c in _constraints(op, "irdl.parameters", "names")]
        found[name] = DialectNames(name, *map(tuple, kinds.values()), tuple(enums),
                                   tuple(operands), tuple(parameters))
    return found


def tile_dialects() -> dict[str, DialectNames]:
    """The tile dialect's names, read from ``dialect/tile.irdl.mlir``."""
    from .ir import DIALECT_FILE

    return irdl_dialects(DIALECT_FILE.read_text())


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _body(op):
    return (inner.operation for inner in op.regions[0].blocks[0].operations)


def _enums(op_name: str, op) -> list:
    """((op, attribute), values) for each attribute of an irdl.operation whose
    constraint is an irdl.is or an irdl.any_of of irdl.is."""
    enums = []
    for inner in _body(op):
        if inner.name != "irdl.attributes":
            continue
        names = [ir.StringAttr(a).value for a in inner.attributes["attributeValueNames"]]
        for attr, value in zip(names, inner.operands):
            owner = value.owner
            choices = list(owner.operands) if owner.name == "irdl.any_of" else [value]
            if all(c.owner.name == "irdl.is" for c in choices):
                enums.append(((op_name, attr), tuple(str(c.owner.attributes["expected"]) for c in choices)))
    return enums


def _constraints(op, list_op: str, names_attr: str) -> list[Constraints]:
    """The (name, base) pairs of ``op``'s ``irdl.operands`` or ``irdl.parameters``."""
    found = []
    for inner in _body(op):
        if inner.name == list_op and names_attr in inner.attributes:
            names = [ir.StringAttr(a).value for a in inner.attributes[names_attr]]
            bases = [ir.StringAttr(v.owner.attributes["base_name"]).value
                     if v.owner.name == "irdl.base" and "base_name" in v.owner.attributes else None
                     for v in inner.operands]
            found.append(tuple(zip(names, bases)))
    return found


# ----------------------------------------------------------------------------------
# rephrase
# ----------------------------------------------------------------------------------

_NOT_SATISFIED = re.compile(r"'(.*)' does not satisfy the constraint")
_UNKNOWN_OP = re.compile(r"unregistered operation '([\w.$-]+)' found in dialect \('([\w$]+)'\)")
_OP_NAME = re.compile(r'"([\w$]+\.[\w.$-]+)"\s*\(')
_MISSING = re.compile(r"'([\w.$-]+)' op attribute \"([\w$]+)\" is expected but not provided")
_COUNT = re.compile(r"op expects (exactly|at least|at most) (\d+) (operands|results), but got (\d+)")
_REGIONS = re.compile(r"'([\w.$-]+)' op unexpected number of regions: expected (\d+) but got (\d+)")
_BASE_TYPE = re.compile(r"expected base type '[\w.$-]+' but got '[\w.$-]+'")
_BASE_ATTRIBUTE = re.compile(r"expected base attribute '([\w.$-]+)' but got '([\w.$-]+)'")
_PARAMETER_COUNT = re.compile(r"expected (\d+) type arguments, but had (\d+)")
_DUPLICATE = re.compile(r"duplicate key '([^']*)' in dictionary attribute")
_UNKNOWN_DIALECT = "operation being parsed with an unregistered dialect"
_UNREGISTERED_NAME = "created with unregistered dialect"


def rephrase(diag, files: dict[str, list[str]], dialects: dict[str, DialectNames]):
    """``diag`` in words that say what to change, where MLIR's own are IRDL's or the
    parser's terse ones.

    * ``'"prod"' does not satisfy the constraint``: ``'tile.reduce' op kind must be one
      of "sum", ...; got "prod"``.
    * ``attribute "kind" is expected but not provided``: ``'tile.reduce' op missing
      attribute 'kind' (one of "sum", ...); 'ind' looks like a misspelling of it``.
    * ``op expects exactly 2 operands, but got 1``: ``'tile.reduce' op takes 2 operands
      (dst, src), got 1``; the same for results.
    * ``expected base type 'builtin.memref' but got 'builtin.tensor'``: ``'tile.reduce'
      op src must be a memref, got tensor<4xf32>``.
    * ``expected dynamic attribute`` at ``#tile.layot<...>`` (the name is read from the
      source): ``unknown attribute '#tile.layot' (did you mean '#tile.layout'?); ...``;
      the same for types, and for ``#tiles.layout`` (an unknown dialect).
    * ``expected base attribute 'builtin.string' ...`` and ``expected 1 type
      arguments, but had 0`` at ``#tile.layout<4>``: which parameter, and what it must be.
    * ``unregistered operation 'tile.reduc' ...``: ``unknown operation 'tile.reduc' (did
      you mean 'tile.reduce'?); ...``.
    * ``unexpected character`` and ``invalid dimension``: which character, which number;
      ``duplicate key 'kind' ...``: that an attribute is given twice; ``use of
      undeclared SSA value name``: which name; a parser's ``expected ...`` where the
      input ends, or before a stray ``}``: that it may be cut short, or have one too many.

    Other diagnostics come back as they are. So does one that the source or the
    dialects cannot explain.
    """
    message = None
    text = diag.message
    if m := _NOT_SATISFIED.fullmatch(text):
        message = _enum_message(m.group(1), diag, dialects)
    elif text in ("expected dynamic attribute", "expected dynamic type") or _UNREGISTERED_NAME in text:
        message = _unknown_name(diag, files, dialects)
    elif (m := _UNKNOWN_OP.match(text)) and m.group(2) in dialects:
        known = dialects[m.group(2)].operations
        message = f"unknown operation '{m.group(1)}'{_did_you_mean(m.group(1), known)}; " \
                  f"the {m.group(2)} dialect's operations are: {', '.join(known) or 'none'}"
    elif m := _MISSING.fullmatch(text):
        message = _missing_message(m.group(1), m.group(2), diag, dialects)
    elif m := _COUNT.fullmatch(text):
        message = _count_message(m.group(1), int(m.group(2)), m.group(3), int(m.group(4)), diag, dialects)
    elif m := _REGIONS.fullmatch(text):
        want = "no regions" if m.group(2) == "0" else f"{m.group(2)} region(s)"
        message = f"'{m.group(1)}' op takes {want}, got {m.group(3)}"
    elif _BASE_TYPE.fullmatch(text):
        message = _operand_message(diag, dialects)
    elif m := _BASE_ATTRIBUTE.fullmatch(text):
        message = _parameter_message(diag, files, dialects, got=m.group(2))
    elif m := _PARAMETER_COUNT.fullmatch(text):
        message = _parameter_message(diag, files, dialects, count=int(m.group(2)))
    elif text.startswith(_UNKNOWN_DIALECT):
        message = _unknown_dialect(diag, files, dialects)
    elif m := _DUPLICATE.fullmatch(text):
        message = f"attribute '{m.group(1)}' is given twice: give each attribute once"
    elif text == "unexpected character":
        message = _unexpected_character(diag, files)
    elif text == "invalid dimension":
        message = _invalid_dimension(diag, files)
    elif text == "use of undeclared SSA value name":
        message = _undeclared_value(diag, files)
    if message is None and text.startswith("expected "):
        following = _following(diag, files)
        if following == "":
            message = f"{text}, but the input ends here: is it cut short, or is a closing '}}' missing?"
        elif following is not None and following.startswith("}") and "operation name" in text:
            message = f"{text}, but found a '}}' that closes nothing: is there one too many?"
    if message is None:
        return diag
    return replace(diag, message=message,
                   notes=tuple(n for n in diag.notes if not n.message.startswith(CURRENT_OP_NOTE)))


_CUSTOM_FORM = re.compile(r"^(\s*(?:%[^=\"]*=\s*)?)([A-Za-z_][\w$]*\.[\w$.]+)(?=[\s(%{<:]|$)")


def silent_parse_failure(text: str, dialects: dict[str, DialectNames]) -> tuple[int, int, str]:
    """(line, column, message) for a parse that failed without a diagnostic.

    MLIR's parser fails silently on an op of an IRDL dialect written in custom form
    (``tile.reduce %d, %s ...``): IRDL ops have no custom parser. Point at the first
    such op; failing that, at the start of the text."""
    known = {op for d in dialects.values() for op in d.operations}
    for number, line in enumerate(text.split("\n"), start=1):
        m = _CUSTOM_FORM.match(line)
        if m and m.group(2) in known:
            name = m.group(2)
            message = (f"'{name}' has no custom form (ops defined in IRDL have only the generic one): "
                       f'write "{name}"(operands) {{attributes}} : (operand types) -> ()')
            return number, len(m.group(1).encode()) + 1, message
    return 1, 1, "the input does not parse, and MLIR's parser gave no reason"


def _op_text(diag) -> str | None:
    """The op as the "see current operation" note prints it, or None."""
    return next((n.message[len(CURRENT_OP_NOTE):].strip() for n in diag.notes
                 if n.message.startswith(CURRENT_OP_NOTE)), None)


def _op_of(diag, dialects: dict[str, DialectNames]) -> tuple[str, str, DialectNames] | None:
    """(op name, op text, its dialect) from the note, for an op of a known dialect."""
    text = _op_text(diag)
    m = _OP_NAME.search(text or "")
    if m is None or m.group(1).split(".")[0] not in dialects:
        return None
    return m.group(1), text, dialects[m.group(1).split(".")[0]]


def _enum_message(value: str, diag, dialects: dict[str, DialectNames]) -> str | None:
    """Which attribute holds ``value`` and may not."""
    found = _op_of(diag, dialects)
    if found is None:
        return None
    op, text, dialect = found
    for attr, allowed in dialect.allowed(op).items():
        if value not in allowed and re.search(rf"(?:\{{|, ){re.escape(attr)} = {re.escape(value)}(?:,|\}})", text):
            return f"'{op}' op {attr} must be one of {', '.join(allowed)}; got {value}"
    return None


def _missing_message(op: str, attr: str, diag, dialects: dict[str, DialectNames]) -> str:
    """A required attribute that is absent, with the values it takes, and the
    attribute written instead when one looks like a misspelling of it."""
    dialect = dialects.get(op.split(".")[0], DialectNames(""))
    allowed = dialect.allowed(op).get(attr)
    message = f"'{op}' op missing attribute '{attr}'" + (f" (one of {', '.join(allowed)})" if allowed else "")
    found = _op_of(diag, dialects)
    if found is None:
        return message
    required = [a for (name, a), _ in dialect.enums if name == op]
    known = [*dict.fromkeys([*required, *OPTIONAL_ATTRIBUTES.get(op, ())])]
    for name in _attribute_names(found[1]):
        if name not in known and difflib.get_close_matches(name, known, n=1, cutoff=0.5) == [attr]:
            return f"{message}; '{name}' looks like a misspelling of it"
    return message


def _attribute_names(op_text: str) -> list[str]:
    """The names in the attribute dictionary of an op printed in generic form (on the
    op's last line, after its regions)."""
    last = op_text.splitlines()[-1] if op_text else ""
    return [name.strip('"') for name in re.findall(r'(?:\{|, )([A-Za-z_][\w$.]*|"[^"]*") = ', last)]


def _count_message(bound: str, want: int, what: str, got: int, diag, dialects: dict[str, DialectNames]) -> str | None:
    found = _op_of(diag, dialects)
    if found is None:
        return None
    op, _, dialect = found
    if op == "tile.reduce" and what == "operands":  # 2 operands, or 3 for argmax/argmin
        hint = ""
        if got > 3:
            hint = (f"; 3 with kind argmax or argmin (value dst, index dst, src); {got // 2} operand pairs "
                    f"with a combiner are tile.reduce{got // 2}" if got % 2 == 0 else
                    "; 3 with kind argmax or argmin (value dst, index dst, src)")
        return f"'{op}' op takes 2 operands (dst, src), got {got}{hint}"
    if bound != "exactly":
        return f"'{op}' op takes {bound} {want} {what}, got {got}"
    if what == "results":
        if want == 0:
            return (f"'{op}' op has no results, got {got}: write it without '%name =' in front, "
                    "and with '-> ()' as its result type")
        return f"'{op}' op has {want} result(s), got {got}"
    names = _roles(op, want, [name for name, _ in dialect.operands_of(op) or ()])
    listing = f" ({', '.join(names)})" if len(names) == want else ""
    return f"'{op}' op takes {want} operand{'' if want == 1 else 's'}{listing}, got {got}"


def _operand_message(diag, dialects: dict[str, DialectNames]) -> str | None:
    """Every operand whose type is not of the base its constraint requires."""
    found = _op_of(diag, dialects)
    if found is None:
        return None
    op, text, dialect = found
    specs, types = dialect.operands_of(op), _operand_types(text)
    if specs is None or types is None or len(specs) < len(types):
        return None
    names = _roles(op, len(types), [name for name, _ in specs])
    wrong = [f"{name} must be {_describe(base)}, got {t}" for name, (_, base), t in zip(names, specs, types)
             if base is not None and _type_base(t) != base.lstrip("!")]
    return f"'{op}' op {'; '.join(wrong)}" if wrong else None


def _operand_types(op_text: str) -> list[str] | None:
    """The operand types of an op printed in generic form: ``(A, B)`` in the
    ``: (A, B) -> R`` at the end of its last line."""
    last = op_text.splitlines()[-1]
    colon = next((i for i, depth in _depths(last) if depth == 0 and last.startswith(" : (", i)), None)
    if colon is None:
        return None
    inside = last[colon + 4:]
    close = next((i for i, depth in _depths(inside) if depth < 0), None)
    if close is None:
        return None
    inside = inside[:close]
    cuts = [i for i, depth in _depths(inside) if depth == 0 and inside[i] == ","]
    parts = [inside[a + 1:b].strip() for a, b in zip([-1, *cuts], [*cuts, len(inside)])]
    return [] if parts == [""] else parts


def _depths(text: str):
    """(index, nesting depth) for each character outside string literals: a closing
    bracket has the depth it closes to, so the one that closes the text has -1;
    ``->`` does not close a ``<``."""
    depth, quoted, i = 0, False, 0
    while i < len(text):
        c = text[i]
        if quoted:
            quoted = not (c == '"' and text[i - 1] != "\\")
        elif text.startswith("->", i):
            i += 2
            continue
        elif c == '"':
            quoted = True
        else:
            if c in ")]}>":
                depth -= 1
            yield i, depth
            if c in "([{<":
                depth += 1
        i += 1


def _type_base(type_text: str) -> str:
    """The IRDL base name of a type, from its text: ``memref<4xf32>`` ->
    ``builtin.memref``, ``!llvm.ptr`` -> ``llvm.ptr``."""
    if type_text.startswith("!"):
        m = re.match(r"!([\w$]+\.[\w$]+)", type_text)
        return m.group(1) if m else type_text[1:]
    m = re.match(r"[A-Za-z_]+", type_text)
    return f"builtin.{m.group(0) if m else type_text}"


_BUILTIN_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "float": "a float",
    "array": "an array",
    "dense_array": "a dense array",
    "dictionary": "a dictionary",
    "unit": "a unit attribute",
    "type": "a type",
}


def _describe(base: str) -> str:
    """A base name in words: ``!builtin.memref`` -> ``a memref``, ``#builtin.string`` ->
    ``a string``; another dialect's name stays as it is."""
    name = base.lstrip("!#")
    if not name.startswith("builtin."):
        return name
    word = name.removeprefix("builtin.")
    return _BUILTIN_WORDS.get(word, f"a {word}")


def _name_at(diag, files: dict[str, list[str]]) -> tuple[str, str, str] | None:
    """(sigil, dialect, name) of the ``#dialect.name`` or ``!dialect.name`` that the
    diagnostic points into: MLIR points at the part after ``#dialect.``."""
    line = _source_line(diag, files)
    if line is None:
        return None
    before, after = _split_at(line, diag.where.col)
    prefix = re.search(r"([#!])([\w$]+)\.$", before)
    word = re.match(r"[\w$.]+", after)
    if prefix is None or word is None:
        return None
    return prefix.group(1), prefix.group(2), word.group(0)


def _unknown_name(diag, files: dict[str, list[str]], dialects: dict[str, DialectNames]) -> str | None:
    """The attribute or type name at the diagnostic's place, checked against what its
    dialect defines; or its dialect, when that does not exist."""
    found = _name_at(diag, files)
    if found is None:
        return None
    sigil, dialect, word = found
    name = f"{sigil}{dialect}.{word}"
    what = "attribute" if sigil == "#" else "type"
    if dialect not in dialects:
        known = [sigil + k for d in dialects.values() for k in (d.attributes if sigil == "#" else d.types)]
        return f"unknown dialect '{dialect}' in {what} '{name}'{_did_you_mean(name, known)}"
    known = dialects[dialect].attributes if sigil == "#" else dialects[dialect].types
    spelled = [sigil + k for k in known]
    listing = f"the {dialect} dialect's {what}s are: {', '.join(spelled)}" if spelled else \
              f"the {dialect} dialect defines no {what}s"
    return f"unknown {what} '{name}'{_did_you_mean(name, spelled)}; {listing}"


def _parameter_message(diag, files: dict[str, list[str]], dialects: dict[str, DialectNames], *,
                       got: str | None = None, count: int | None = None) -> str | None:
    """A dialect attribute (or type) with a parameter of the wrong kind, or the wrong
    number of parameters: what it takes, with an example."""
    found = _name_at(diag, files)
    if found is None or found[1] not in dialects:
        return None
    sigil, dialect, word = found
    params = dialects[dialect].parameters_of(f"{dialect}.{word}")
    if params is None:
        return None
    name = f"{sigil}{dialect}.{word}"
    listing = "; ".join(f"{p}, {_describe(base) if base else 'any attribute'}" for p, base in params)
    example = f'{name}<"...">' if [b for _, b in params] == ["#builtin.string"] else ""
    if count is not None:
        plural = "" if len(params) == 1 else "s"
        return f"{name} takes {len(params)} parameter{plural} ({listing}{': ' + example if example else ''}), got {count}"
    if len(params) == 1:
        return (f"{name}'s parameter {params[0][0]} must be {_describe(params[0][1])}"
                f"{' (' + example + ')' if example else ''}, got {_describe(got)}")
    return f"{name}'s parameters are ({listing}); one is {_describe(got)}"


def _unknown_dialect(diag, files: dict[str, list[str]], dialects: dict[str, DialectNames]) -> str | None:
    """An op in a dialect that does not exist, ``"tiel.reduce"(...)``: MLIR points just
    after the quoted name. Say which known op it is close to, if any."""
    line = _source_line(diag, files)
    m = re.search(r'"([\w$]+)\.([\w.$-]+)"$', _split_at(line, diag.where.col)[0]) if line else None
    known = [op for d in dialects.values() for op in d.operations]
    suggestion = _did_you_mean(m.group(0).strip('"'), known) if m else ""
    if not suggestion:
        return None
    return (f"unknown dialect '{m.group(1)}' in operation '{m.group(0).strip(chr(34))}'{suggestion}; "
            "--allow-unregistered-dialect accepts ops of unknown dialects")


def _unexpected_character(diag, files: dict[str, list[str]]) -> str | None:
    line = _source_line(diag, files)
    after = _split_at(line, diag.where.col)[1] if line is not None else ""
    if not after:
        return None
    c = after[0]
    if c == "\ufeff":
        return "unexpected byte-order mark (U+FEFF): save the file as UTF-8 without a BOM"
    shown = f"'{c}'" if c.isprintable() and not c.isspace() else f"U+{ord(c):04X}"
    return f"unexpected character {shown}: it starts no MLIR token here"


def _invalid_dimension(diag, files: dict[str, list[str]]) -> str | None:
    line = _source_line(diag, files)
    m = re.match(r"\d+", _split_at(line, diag.where.col)[1]) if line is not None else None
    if m is None or int(m.group(0)) <= INT64_MAX:
        return None
    return f"dimension {m.group(0)} does not fit in 64 bits"


def _following(diag, files: dict[str, list[str]]) -> str | None:
    """The text after the diagnostic's place, from its first character that is not a
    blank or in a comment, up to the end of the text or of its ``// -----`` chunk:
    "" at the end, None when the source is unknown. (MLIR places an error about a
    missing token at the end of the token before it.)"""
    line = _source_line(diag, files)
    if line is None:
        return None
    rest = _split_at(line, diag.where.col)[1].split("//")[0].strip()
    if rest:
        return rest
    for rest in files[diag.where.file][diag.where.line:]:
        rest = rest.strip()
        if rest.startswith("// -----"):
            return ""
        if rest and not rest.startswith("//"):
            return rest
    return ""


def _undeclared_value(diag, files: dict[str, list[str]]) -> str | None:
    line = _source_line(diag, files)
    m = re.match(r"%[\w$.-]+", _split_at(line, diag.where.col)[1]) if line is not None else None
    if m is None:
        return None
    return f"use of undefined value '{m.group(0)}': no op result or block argument before it has that name"


def _source_line(diag, files: dict[str, list[str]]) -> str | None:
    """The source line that ``diag`` points into, or None."""
    where = diag.where
    if isinstance(where, str):
        return None
    lines = files.get(where.file, [])
    return lines[where.line - 1] if 1 <= where.line <= len(lines) else None


def _split_at(line: str, col: int) -> tuple[str, str]:
    """``line`` before and from MLIR's column ``col``, which counts UTF-8 bytes from 1."""
    data = line.encode()
    return data[:col - 1].decode(errors="replace"), data[col - 1:].decode(errors="replace")


def _did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
