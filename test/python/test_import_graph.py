"""The package's import graph has no cycle, counting every ``import`` and ``from ...
import`` statement, function-local ones included (a cycle hidden in a function is still
a cycle: the two modules cannot be read, tested or moved apart)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "tile_mlir"


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(("tile_mlir", *parts)).removesuffix(".__init__")
        found[name] = path
    return found


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in ``importer``."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports, anywhere in its body."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(name, is_package, node.level, node.module)
                submodules = [f"{source}.{alias.name}" for alias in node.names
                              if f"{source}.{alias.name}" in modules]
                targets = submodules
                if len(submodules) < len(node.names):  # some names are the module's own
                    targets.append(source)
            for target in targets:
                # `import tile_mlir.a.b` (or a name inside it): the closest module
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_local_and_relative_imports():
    graph = import_graph()
    assert "tile_mlir.errors" in graph["tile_mlir.vocab"]  # a module-level relative import
    # api imports the compiler only inside _build (a function-local import)
    assert "tile_mlir.compiler" in graph["tile_mlir.api"]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_no_pass_imports_another():
    """What passes share lives in passes/common.py; the registry (passes/__init__.py)
    imports the passes, and no pass imports the registry or another pass."""
    graph = import_graph()
    passes = {m for m in graph if m.startswith("tile_mlir.passes.") and m != "tile_mlir.passes.common"}
    assert len(passes) >= 5
    assert {m: sorted(graph[m] & (passes | {"tile_mlir.passes"})) for m in passes} == {m: [] for m in passes}
