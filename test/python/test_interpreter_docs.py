"""docs/interpreter.md lists exactly the ops the interpreter runs, and its ULP table says
what ``tile_mlir.interpreter.math.GPU_ULPS`` says.

The two sections between ``<!-- generated: ... -->`` markers are made from the registry;
``python test/python/test_interpreter_docs.py`` rewrites them after an op is added.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from tile_mlir.interpreter import SUPPORTED_OPS
from tile_mlir.interpreter.math import GPU_ULPS, gpu_ulps

DOC = Path(__file__).resolve().parents[2] / "docs" / "interpreter.md"


def ops_section() -> str:
    by_dialect: dict[str, list[str]] = {}
    for op in sorted(SUPPORTED_OPS):
        by_dialect.setdefault(op.split(".")[0], []).append(op)
    lines = [f"{len(SUPPORTED_OPS)} ops:", ""]
    for dialect, ops in sorted(by_dialect.items()):
        lines.append(f"- **{dialect}** ({len(ops)}): " + ", ".join(f"`{op}`" for op in ops))
    return "\n".join(lines)


def ulps_section() -> str:
    lines = [
        "| op | libdevice (f32 / f64) | f32 | f64 | f16, bf16 |",
        "|---|---|---|---|---|",
    ]
    for op, (name, _, _) in GPU_ULPS.items():
        call = f"`__nv_{name}f` / `__nv_{name}`" if name else "none (MLIR 22 cannot lower it)"
        lines.append(
            f"| `math.{op}` | {call} | {gpu_ulps(op, 'f32')} | {gpu_ulps(op, 'f64')} | {gpu_ulps(op, 'f16')} |"
        )
    return "\n".join(lines)


SECTIONS = {"ops": ops_section, "ulps": ulps_section}


def _pattern(name: str):
    return re.compile(rf"(<!-- generated: {name} -->\n)(.*?)(\n<!-- end: {name} -->)", re.DOTALL)


def test_the_doc_lists_exactly_the_registered_ops():
    text = DOC.read_text()
    section = _pattern("ops").search(text)
    assert section, "docs/interpreter.md has no generated ops section"
    listed = set(re.findall(r"`(\w+(?:\.\w+)+)`", section.group(2)))
    assert listed == set(SUPPORTED_OPS), (
        f"missing from the doc: {sorted(set(SUPPORTED_OPS) - listed)}; "
        f"not registered: {sorted(listed - set(SUPPORTED_OPS))} (run python {__file__})"
    )
    assert section.group(2) == ops_section()


def test_the_doc_states_the_bounds_the_code_has():
    section = _pattern("ulps").search(DOC.read_text())
    assert section and section.group(2) == ulps_section(), f"run python {__file__}"


if __name__ == "__main__":
    text = DOC.read_text()
    for name, make in SECTIONS.items():
        text, count = _pattern(name).subn(lambda m, make=make: m.group(1) + make() + m.group(3), text)
        assert count == 1, f"no generated {name} section in {DOC}"
    DOC.write_text(text)
    print(f"rewrote the generated sections of {DOC}")
