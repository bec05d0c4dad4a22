"""No import circle among the modules of `model_utils` and `components`, counting every import statement in a file:
at the top, inside a function, under `if TYPE_CHECKING:`. import-linter's `acyclic_siblings` compares the
siblings of one package at a time; this reads the source itself into one graph of every module of both packages,
so a circle between any two modules fails, spelled out with the line of each import that closes it.

An edge A -> B means A's source names module B: `import B`, `from B import name`, or `from P import b` where P.b
is the module B (relative imports resolved against A's package; a package is its `__init__.py`). The implicit import
of the packages around B is not an edge: a package whose `__init__` imports its own modules is no circle."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model_utils", "components")


@dataclass(frozen=True, kw_only=True)
class Edge:
    """One import statement from a module to a module of the graph."""

    source: str
    target: str
    where: str  # path:line of the statement


def module_files(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Module name -> file, for every .py file under each package folder in `root` (a package is its __init__)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _base(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a `from ... import` statement names, its relative dots resolved against `module`'s package."""
    if not node.level:
        return node.module
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    anchor = package[: len(package) - (node.level - 1)]
    return ".".join([*anchor, node.module] if node.module else anchor)


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom, modules: dict) -> list[str]:
    """The graph's modules one import statement names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in modules]
    base = _base(module, path, node)
    named = [f"{base}.{alias.name}" for alias in node.names]
    found = [name for name in named if name in modules]
    if base in modules and len(found) < len(named):  # some names are attributes of the base module
        found.append(base)
    return found


def import_edges(modules: dict[str, Path], root: Path) -> list[Edge]:
    """Every edge between the graph's modules, from every import statement anywhere in each file."""
    edges = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                where = f"{path.relative_to(root)}:{node.lineno}"
                edges += [Edge(source=module, target=target, where=where)
                          for target in _targets(module, path, node, modules) if target != module]
    return edges


def circles(edges: list[Edge]) -> list[list[Edge]]:
    """One circle per strongly connected group of modules (Tarjan), as the edges that go round it."""
    graph: dict[str, list[Edge]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge)
        graph.setdefault(edge.target, [])
    return [_circle_through(group, graph) for group in _strong_groups(graph) if len(group) > 1]


def _strong_groups(graph: dict[str, list[Edge]]) -> list[set[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit on a deep chain)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            edge = next(pending, None)
            if edge is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    groups.append(_pop_group(stack, on_stack, node))
            elif edge.target not in index:
                index[edge.target] = low[edge.target] = len(index)
                stack.append(edge.target)
                on_stack.add(edge.target)
                work.append((edge.target, iter(graph[edge.target])))
            elif edge.target in on_stack:
                low[node] = min(low[node], index[edge.target])
    return groups


def _pop_group(stack: list[str], on_stack: set[str], root: str) -> set[str]:
    """Tarjan's step: the modules above `root` on the stack, `root` included, are one group."""
    group = set()
    while root not in group:
        group.add(stack.pop())
    on_stack -= group
    return group


def _circle_through(group: set[str], graph: dict[str, list[Edge]]) -> list[Edge]:
    """A shortest circle from the group's first module back to itself, staying inside the group (breadth first)."""
    start = min(group)
    came_by: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in graph[node]:
                if edge.target == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came_by[path[0].source])
                    return path
                if edge.target in group and edge.target not in came_by:
                    came_by[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"no circle through {start} in its own strongly connected group")


def spelled_out(circle: list[Edge]) -> str:
    """'a -> b -> a' and, under it, where each import is written."""
    names = " -> ".join([circle[0].source, *(edge.target for edge in circle)])
    return "\n".join([names, *(f"    {edge.source} -> {edge.target}  ({edge.where})" for edge in circle)])


def circles_in(root: Path, packages: tuple[str, ...]) -> list[str]:
    """Every import circle among the packages' modules under `root`, spelled out."""
    return [spelled_out(circle) for circle in circles(import_edges(module_files(root, packages), root))]


def test_no_import_circle_in_model_utils_or_components():
    found = circles_in(ROOT, PACKAGES)
    if found:
        pytest.fail(f"{len(found)} import circle(s):\n" + "\n".join(found), pytrace=False)


def test_the_graph_sees_the_product_imports_it_must_see():
    """The walk finds imports of each kind, so an empty graph cannot pass the test above."""
    modules = module_files(ROOT, PACKAGES)
    edges = {(edge.source, edge.target) for edge in import_edges(modules, ROOT)}
    assert len(modules) > 50
    assert ("model_utils.engine.analyze", "model_utils.core.errors") in edges  # absolute, top level
    assert ("model_utils.engine.kernel", "model_utils.engine.kernel.library") in edges  # from a package __init__
    assert ("components.serving.cache", "model_utils") in edges  # a name of the lazy public API


def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_planted_circle_through_a_function_import_is_found(tmp_path):
    _plant(tmp_path, {"planted/__init__.py": "", "planted/a.py": "import planted.b\n",
                      "planted/b.py": "def later():\n    from . import a\n    return a\n"})
    [found] = circles_in(tmp_path, ("planted",))
    assert found.startswith("planted.a -> planted.b -> planted.a\n")
    assert "planted/b.py:2" in found


def test_a_planted_circle_through_a_type_checking_import_and_a_package_is_found(tmp_path):
    _plant(tmp_path, {"planted/__init__.py": "from planted.inner.c import C\n",
                      "planted/inner/__init__.py": "",
                      "planted/inner/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                            "    from .. import C\nclass C: ...\n"})
    [found] = circles_in(tmp_path, ("planted",))
    assert found.startswith("planted -> planted.inner.c -> planted\n")


def test_a_package_importing_its_own_modules_is_no_circle(tmp_path):
    _plant(tmp_path, {"planted/__init__.py": "from .a import A\nfrom . import b\n",
                      "planted/a.py": "from planted.b import B\nA = B\n", "planted/b.py": "B = 1\n"})
    assert circles_in(tmp_path, ("planted",)) == []
