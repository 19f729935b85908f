"""The layer contract: imports point one way, no cycles, and deferred imports say why.

Bottom to top: ``engine.core`` (records, IO, registry, tree utilities; with the bundled
``data``) imports no other brittle package; ``scorers`` imports only ``engine.core``;
``search`` imports ``engine.core`` and ``scorers``; the runs in ``engine`` (outside
``core``) import anything but ``cli``; the Python API (``brittle.api``, at the root)
imports what the runs may; ``cli`` is on top. Every import counts: module
level, inside functions and under ``TYPE_CHECKING``. A brittle import inside a function
is allowed only to defer a heavy library, and then says so in a comment containing
"defer". Inside ``engine``, each job is a package with a docstring in its ``__init__``;
only a few single-module jobs sit flat in ``engine/``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "scorers", "search", "cli", "data")

#: Which layers each layer may import (itself included).
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset({"core"}),
    "scorers": frozenset({"core", "scorers"}),
    "search": frozenset({"core", "scorers", "search"}),
    "engine": frozenset({"core", "scorers", "search", "engine"}),
    "api": frozenset({"core", "scorers", "search", "engine", "api"}),
    "cli": frozenset({"core", "scorers", "search", "engine", "cli"}),
    "root": frozenset(),
}


@dataclass(frozen=True)
class Import:
    """One import of a brittle module by another."""

    source: str
    target: str
    line: int
    in_function: bool
    reason: bool


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("brittle", *parts))


def modules() -> dict[str, Path]:
    found = {"brittle": ROOT / "__init__.py"}
    for path in sorted(ROOT.glob("*.py")):  # modules at the root: the Python API
        if path.name != "setup.py":  # builds the package, is not part of it
            found[module_name(path)] = path
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


MODULES = modules()


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    if parts[1] == "api":
        return "api"
    if parts[1] == "data":
        return "core"  # the bundled data files: no code, at the bottom
    if parts[1] == "engine" and len(parts) > 2 and parts[2] == "core":
        return "core"
    return parts[1]


def _resolve(source: str, is_package: bool, node: ast.ImportFrom | ast.Import) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = source.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]


def _known(target: str) -> str | None:
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def imports_of(source: str, path: Path) -> list[Import]:
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import | ast.ImportFrom):
                nearby = " ".join(
                    lines[max(0, child.lineno - 3) : child.end_lineno or child.lineno]
                )
                for raw in _resolve(source, path.name == "__init__.py", child):
                    target = _known(raw) if raw.startswith("brittle") else None
                    if target is not None and target != source:
                        found.append(
                            Import(
                                source, target, child.lineno, in_function, "defer" in nearby.lower()
                            )
                        )
            visit(child, inside)

    visit(tree, False)
    return found


IMPORTS = [i for name, path in MODULES.items() for i in imports_of(name, path)]


def test_the_scan_sees_the_library() -> None:
    assert "brittle.engine.core.sentence" in MODULES
    assert "brittle.engine.attack.run" in MODULES
    assert "brittle.engine.runs.shards" in MODULES
    assert "brittle.engine.probes.probe_jobs" in MODULES
    assert len(IMPORTS) > 200


#: The most modules ``engine/`` may hold beside its packages (``__init__.py`` apart).
MAX_FLAT_ENGINE_MODULES = 4


def test_engine_keeps_its_jobs_in_packages() -> None:
    """``engine/`` is one package per job; only a few single-module jobs sit flat in it."""
    flat = sorted(p.name for p in (ROOT / "engine").glob("*.py") if p.name != "__init__.py")
    assert len(flat) <= MAX_FLAT_ENGINE_MODULES, flat
    for folder in sorted((ROOT / "engine").iterdir()):
        if folder.is_dir() and any(folder.glob("*.py")):
            init = folder / "__init__.py"
            assert init.is_file(), f"{folder.name}/ has modules but no __init__.py"
            assert ast.get_docstring(ast.parse(init.read_text())), f"{init} says nothing"


@pytest.mark.parametrize("lower", ["core", "scorers", "search", "engine", "api"])
def test_layers_import_only_downwards(lower: str) -> None:
    wrong = [
        f"{i.source}:{i.line} imports {i.target}"
        for i in IMPORTS
        if layer(i.source) == lower and layer(i.target) not in ALLOWED[lower]
    ]
    assert wrong == []


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for i in IMPORTS:
        graph[i.source].add(i.target)
    # A package's __init__ re-exporting its modules is not a cycle with them.
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    cycles = strongly_connected(graph)
    assert [sorted(c) for c in cycles if len(c) > 1] == []


def test_brittle_imports_inside_functions_defer_a_heavy_library() -> None:
    unexplained = [
        f"{i.source}:{i.line} imports {i.target}" for i in IMPORTS if i.in_function and not i.reason
    ]
    assert unexplained == []


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == node:
                        break
                out.append(component)
    return out
