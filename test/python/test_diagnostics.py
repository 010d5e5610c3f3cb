"""How several located diagnostics print, on every path that prints them.

Each diagnostic is its own lines: ``file:line:col: error: message``, the source line,
and a caret alone on the line below, under the column; the next diagnostic (or note,
or repro line) starts on a line of its own. This pins that on each path that prints
several: ``tile_mlir.compile``'s ``CompileError`` (parse, tile-verify, a failing
pipeline stage with its repro line), the interpreter's list of ops it cannot run,
tile-opt with ``--split-input-file``, ``--verify-diagnostics`` failures, notes,
``--tile-to-ptx``, and a source without a final newline, with CRLF newlines or with
non-ASCII text before the column.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import tile_mlir
from tile_mlir.diagnostics import Diag, Place, format_diag
from tile_mlir.errors import CompileError, InterpreterError
from tile_mlir.tools import tile_opt

REPO = Path(__file__).resolve().parents[2]
P = "#gpu.address_space<private>"
W = "#gpu.address_space<workgroup>"

HEADER = re.compile(r"(<[^>\n]+>|[\w./+-]+):(\d+):(\d+): (error|warning|note|remark): ")
CARET = re.compile(r"[ \t]*\^")


def assert_well_formed(text: str, source: list[str] | None = None, *, message: bool = False) -> int:
    """Every header starts a line; a caret is alone on its line, right after the source
    line (``source``, when given, is the text the diagnostics point into), under the
    column; returns how many headers there are. Printed text ends with a newline; an
    exception's ``message`` ends at its last line, as every exception's text does."""
    assert message or text.endswith("\n"), "the output does not end with a newline"
    lines = text.split("\n")
    headers = 0
    for i, line in enumerate(lines):
        for m in HEADER.finditer(line):
            assert m.start() == 0, f"a diagnostic in the middle of line {i}: {line!r}"
            headers += 1
            where = (int(m.group(2)), int(m.group(3)))
            if source is not None and 1 <= where[0] <= len(source) and i + 2 < len(lines):
                line_text = source[where[0] - 1].rstrip("\r")
                indent = len(line_text.encode()[: where[1] - 1].decode())  # columns count bytes
                assert lines[i + 1] == line_text, (lines[i + 1], where)
                assert lines[i + 2] == " " * indent + "^", (lines[i + 2], where)
        if "^" in line and CARET.match(line):
            assert CARET.fullmatch(line), f"text after the caret on line {i}: {line!r}"
            assert message or i + 1 < len(lines), "the caret line has no newline after it"
    return headers


def kernel(body: str, args: str = "%out: memref<4xf32>") -> str:
    return (
        "module attributes {gpu.container_module} {\n"
        "  gpu.module @m {\n"
        f"    gpu.func @k({args}) kernel {{\n"
        f"{body}\n"
        "      gpu.return\n"
        "    }\n"
        "  }\n"
        "}\n"
    )


def reduce(attrs: str, space: str = P) -> str:
    return (f'      "tile.reduce"(%d, %s) {{{attrs}}} : (memref<1xf32, {space}>, memref<4xf32, {space}>) -> ()')


BUFFERS = (f"      %d = memref.alloca() : memref<1xf32, {P}>\n"
           f"      %s = memref.alloca() : memref<4xf32, {P}>")
TWO_BAD_OPS = kernel("\n".join([
    BUFFERS,
    reduce('kind = "sum", exec_scope = "thread", accum = 3, dispatch = 1'),
    reduce('kind = "sum", exec_scope = "thread", axes = array<i64: 3>'),
]))


def _compile_error(text: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        tile_mlir.compile(text, backend="interpreter", cache=False)
    return info.value


def test_compile_tile_verify_errors():
    e = _compile_error(TWO_BAD_OPS)
    assert e.stage == "tile-verify"
    assert assert_well_formed(e.message, TWO_BAD_OPS.split("\n"), message=True) == 3
    assert assert_well_formed(str(e), TWO_BAD_OPS.split("\n"), message=True) == 3
    assert str(e).split("\n")[-1].startswith("reproduce with: tile-opt ")


def test_compile_parse_error_with_a_note():
    text = kernel("      %0 = arith.addi %x, %x : i64", "%x: i32")
    e = _compile_error(text)
    assert e.stage == "parse"
    assert assert_well_formed(e.message, text.split("\n"), message=True) == 2  # the error and its note
    assert re.search(r"\^\n<source>:3:\d+: note: prior use here\n", e.message)


def test_compile_pipeline_failure_and_its_repro():
    """Two ops no variant lowers (global operands): one multi-line dispatch error each,
    then the repro line."""
    buffers = ("      %d = memref.alloca() : memref<1xf32>\n"
               "      %s = memref.alloca() : memref<4xf32>")
    op = '      "tile.reduce"(%d, %s) {kind = "sum", exec_scope = "thread"} : (memref<1xf32>, memref<4xf32>) -> ()'
    text = kernel("\n".join([buffers, op, op]))
    e = _compile_error(text)
    assert e.stage == "tile-lower-reduction"
    assert assert_well_formed(str(e), message=True) == 2
    assert re.search(r"\n {6}\^\nreproduce with: tile-opt \S+ --pass-pipeline=", str(e))


def test_compile_without_a_final_newline_and_with_crlf():
    for text in (TWO_BAD_OPS.rstrip("\n"), TWO_BAD_OPS.replace("\n", "\r\n")):
        assert assert_well_formed(_compile_error(text).message, text.split("\n"), message=True) == 3


def test_compile_caret_after_non_ascii_text():
    """MLIR counts columns in UTF-8 bytes: the caret still goes under the name."""
    text = kernel("\n".join([BUFFERS, reduce(
        'note = "é…", kind = "sum", exec_scope = "thread", src_layout = #tile.layot<"S[4]">')]))
    message = _compile_error(text).message
    assert assert_well_formed(message, text.split("\n"), message=True) == 1
    source, caret = message.split("\n")[1:3]
    assert caret.index("^") == source.index("layot<")


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_compile_puts_a_layout_parse_error_at_its_column(newline):
    """A layout that does not parse: file:line:col and the caret point at the bad
    character inside the attribute (here ``lane``, after non-ASCII text, and on the
    attribute's own line when the op spans two), not at the op."""
    op = reduce('kind = "sum", exec_scope = "warp", axes = array<i64: 0>,\n'
                '          dispatch = "é…", src_layout = #tile.layout<"S[4 : 1@lane]">')
    text = kernel("\n".join([BUFFERS, op])).replace("\n", newline)
    message = _compile_error(text).message
    assert assert_well_formed(message, text.split("\n"), message=True) == 1
    line = next(n for n, code in enumerate(text.split("\n"), 1) if "src_layout" in code)
    source, caret = message.split("\n")[1:3]
    assert message.startswith(f"<source>:{line}:{len(source[:source.index('lane')].encode()) + 1}: error: ")
    assert caret.index("^") == source.index("lane") and 'cannot parse "S[4 : 1@lane]": at column 9' in message


def test_format_diag_puts_the_caret_under_the_byte_column():
    line = '  %x = "é" "tile.reduce"'
    col = len(line[: line.index('"tile')].encode()) + 1  # 13: "é" is two bytes
    text = format_diag(Diag("error", Place("f.mlir", 1, col), "m"), {"f.mlir": [line]})
    assert text == f"f.mlir:1:{col}: error: m\n{line}\n" + " " * line.index('"tile') + "^\n"


def test_interpreter_lists_each_op_it_cannot_run_on_its_own_line():
    text = kernel('      gpu.printf "a"\n      gpu.printf "b"')
    kernels = None
    with pytest.raises(InterpreterError) as info:
        kernels = tile_mlir.compile(text, backend="interpreter", cache=False)
        kernels.k.launch(1, 1, np.zeros(4, np.float32))
    lines = str(info.value).split("\n")
    assert lines[0] == "the interpreter cannot run 2 op(s) of this module:"
    assert [re.fullmatch(r"  gpu\.printf at \S+:\d+:7: .*", line) is not None for line in lines[1:]] == [True, True]


def _tile_opt(capsys, *args: str) -> tuple[int, str]:
    status = tile_opt.main(list(args))
    return status, capsys.readouterr().err


def test_tile_opt_split_input_file_with_several_failing_chunks(capsys):
    path = REPO / "test" / "tile-opt" / "several-diagnostics.mlir"
    status, err = _tile_opt(capsys, str(path), "--split-input-file")
    assert status == 1
    assert assert_well_formed(err, path.read_text().split("\n")) == 5  # 4 errors, 1 note
    assert err.endswith("^\n")


def test_tile_opt_lowering_failures_then_the_repro_line(capsys):
    path = REPO / "test" / "tile-opt" / "several-diagnostics.mlir"
    status, err = _tile_opt(capsys, str(path), "--split-input-file",
                            "--mlir-very-unsafe-disable-verifier-on-parsing", "--tile-lower-reduction")
    assert status == 1
    assert assert_well_formed(err) >= 3
    assert re.search(r"\n {2}\^\nnote: reproduce with: tile-opt ", err)


def test_tile_opt_verify_diagnostics_failures(capsys):
    path = REPO / "test" / "tile-opt" / "verify-diagnostics-failures.mlir"
    status, err = _tile_opt(capsys, str(path), "--split-input-file", "--verify-diagnostics")
    assert status == 1
    assert assert_well_formed(err, path.read_text().split("\n")) >= 6


def test_tile_opt_without_a_final_newline(tmp_path, capsys):
    path = tmp_path / "k.mlir"
    path.write_text(TWO_BAD_OPS.rstrip("\n"))
    status, err = _tile_opt(capsys, str(path))
    assert status == 1
    assert assert_well_formed(err, TWO_BAD_OPS.split("\n")) == 3
    assert err.endswith("^\n")


def test_tile_opt_to_ptx_failure(tmp_path, capsys):
    path = tmp_path / "k.mlir"
    path.write_text(TWO_BAD_OPS)
    status, err = _tile_opt(capsys, str(path), "--tile-to-ptx")
    assert status == 1
    assert assert_well_formed(err, TWO_BAD_OPS.split("\n")) == 3
    assert re.search(r"\^\nnote: tile-verify failed; reproduce with: tile-opt ", err)
