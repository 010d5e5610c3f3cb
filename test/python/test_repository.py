"""The repository's own promises, checked on every CI run: its docs cite only files a
clone contains, the package's modules stay small enough to read, and every error the
package raises on purpose is a TileError exported from tile_mlir."""

import importlib
import re
from pathlib import Path

import tile_mlir
from tile_mlir import errors

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "tile_mlir"
MAX_MODULE_LINES = 600

# References to material outside the repository (the project's inputs), which a clone
# does not contain.
OUTSIDE = re.compile(r"shared/reference|SPEC §|SPEC section|FIELD\.md")


def _texts():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(PACKAGE.rglob("*.py"))]:
        yield path, path.read_text(encoding="utf-8")


def test_docs_and_code_cite_only_what_a_clone_contains():
    found = [f"{path.relative_to(ROOT)}:{n}" for path, text in _texts()
             for n, line in enumerate(text.splitlines(), 1) if OUTSIDE.search(line)]
    assert found == []


def test_relative_links_in_the_docs_resolve():
    missing = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            if not (path.parent / target).exists():
                missing.append(f"{path.relative_to(ROOT)} -> {target}")
    assert missing == []


def test_every_module_is_under_the_size_limit():
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n >= MAX_MODULE_LINES} == {}


def test_every_error_class_derives_from_tile_error_and_is_exported():
    exported = [getattr(errors, name) for name in errors.__all__]
    assert all(issubclass(c, errors.TileError) for c in exported)
    assert set(errors.__all__) <= set(tile_mlir.__all__)
    outside = []
    for path in PACKAGE.rglob("*.py"):
        name = "tile_mlir." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:  # tile_mlir.torch, without the optional torch
            if e.name != "torch":
                raise
            continue
        outside += [f"{name}.{k}" for k, v in vars(module).items()
                    if isinstance(v, type) and issubclass(v, BaseException) and v.__module__ == name
                    and not issubclass(v, errors.TileError)]
    assert outside == [], "every error tile-mlir raises is a TileError"


def test_the_default_chip_is_named_only_in_the_vocabulary():
    """One vocabulary: the package names its default chip once (``vocab.DEFAULT_CHIP``)."""
    chip = tile_mlir.vocab.DEFAULT_CHIP
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted(PACKAGE.rglob("*.py")) if path.name != "vocab.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if f'"{chip}"' in line]
    assert found == []


def test_ci_runs_the_readme_test_command_and_fails_when_it_fails(tmp_path):
    """.ci/run holds the README's test command as written, and a failure inside that &&
    list fails the script (set -e alone lets an && list fail and carries on)."""
    import subprocess

    readme = (ROOT / "README.md").read_text()
    command = re.search(r"```sh\n(python3 -m venv .venv && .*lit -sv test.*)\n```", readme).group(1)
    script = (ROOT / ".ci" / "run").read_text()
    line = next(ln for ln in script.splitlines() if ln.startswith(command))
    assert line.removeprefix(command).strip() == "|| exit 1"
    # the same shape of script, with the command's steps replaced by ones that fail or pass
    fake = script.replace(line, "true && false && true || exit 1").replace(".venv/bin/pytest -q -n auto --dist loadfile -m sweep", "true")
    (tmp_path / "run").write_text(fake)
    assert subprocess.run(["bash", str(tmp_path / "run")], cwd=tmp_path).returncode == 1
    (tmp_path / "run").write_text(fake.replace("false", "true"))
    assert subprocess.run(["bash", str(tmp_path / "run")], cwd=tmp_path).returncode == 0
