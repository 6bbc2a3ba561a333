"""The import graph of our packages: no cycles between modules, no upward imports across layers.

Every module of compute, tracking, skills, autoresearch and evals is parsed with `ast` (not
imported), and every import in it counts, those inside functions and `if TYPE_CHECKING:`
blocks too. An import names the module it reaches (`from a.b import c` reaches `a.b.c`
when that is a module, else `a.b`); a parent package's `__init__` run implicitly by Python
is not an edge. The layers, lowest first: compute <- tracking <- skills <- autoresearch <-
evals; a module may import its own layer and those below. `prompts` is text: autoresearch
and evals may import it. A package absent from this checkout (tracking, while it is being
added) is simply not in the graph.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["compute", "tracking", "skills", "autoresearch", "evals"]
"""Lowest first: each may import itself and the ones before it."""
TEXT = {"prompts": "autoresearch"}
"""Text packages -> the lowest layer that may import them."""
NOT_INSTALLED = ["benchmarks", "examples", "tests"]
"""Folders of the repository that are not installed packages: installed code must not import them."""
KNOWN_NOT_INSTALLED = {("evals.tasks", "examples.synthetic.functions")}
"""Known imports of a folder that is not installed, still to be untied (the test fails when one goes, too)."""


@dataclass(frozen=True)
class Edge:
    """One import statement: `source` (module) imports `target` (module) at `line`."""

    source: str
    target: str
    line: int

    def where(self) -> str:
        return f"{self.source} -> {self.target} ({_path(self.source)}:{self.line})"


def _modules() -> dict[str, Path]:
    """Module name -> file, for every .py file of our packages present in this checkout."""
    found: dict[str, Path] = {}
    for package in [*LAYERS, *TEXT]:
        base = ROOT / package
        if not (base / "__init__.py").is_file():
            continue
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _path(module: str) -> str:
    return str(MODULES[module].relative_to(ROOT)) if module in MODULES else module


def _imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """(absolute imported name, line) of every import in the file, names from `from` imports joined on."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                yield (f"{base}.{alias.name}" if alias.name != "*" else base), node.lineno


def _resolve(name: str) -> str | None:
    """The longest module of ours that `name` is or lies in; None for other imports."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def _edges() -> list[Edge]:
    edges = []
    for module, path in MODULES.items():
        for name, line in _imports(module, path):
            target = _resolve(name)
            if target is not None and target != module:
                edges.append(Edge(module, target, line))
    return edges


EDGES = _edges()


def _cycles(edges: list[Edge]) -> list[list[Edge]]:
    """One concrete cycle per strongly connected group of modules (Tarjan), as the edges around it."""
    graph: dict[str, list[Edge]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # recursion depth is bounded by the module count (a few hundred)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for edge in graph.get(node, []):
            if edge.target not in index:
                visit(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in on_stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(MODULES):
        if node not in index:
            visit(node)
    return [_cycle_in(group, graph) for group in groups]


def _cycle_in(group: set[str], graph: dict[str, list[Edge]]) -> list[Edge]:
    """A shortest cycle through the group's first module, by breadth-first search inside the group."""
    start = min(group)
    came: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in graph.get(node, []):
                if edge.target not in group:
                    continue
                if edge.target == start:
                    path = [edge]
                    while path[0].source != start:
                        path.insert(0, came[path[0].source])
                    return path
                if edge.target not in came:
                    came[edge.target] = edge
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"no cycle found in the group {sorted(group)}")


def _layer(module: str) -> int:
    top = module.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else LAYERS.index(TEXT[top])


def test_the_graph_is_built_from_our_packages():
    present = {m.split(".")[0] for m in MODULES}
    assert {"compute", "skills", "autoresearch", "evals"} <= present
    assert any(e.source == "compute.daemon" and e.target.startswith("compute.") for e in EDGES)
    assert any(e.source.startswith("skills.") and e.target.startswith("compute") for e in EDGES)


def test_no_import_cycles_between_modules():
    cycles = _cycles(EDGES)
    text = "\n\n".join(
        f"cycle {' -> '.join([c[0].source, *(e.target for e in c)])}:\n" + "\n".join(f"  {e.where()}" for e in c)
        for c in cycles
    )
    assert not cycles, f"{len(cycles)} import cycle(s); untie each (move the shared piece down, or the entry out):\n{text}"


def test_no_upward_imports_across_layers():
    upward = [e for e in EDGES if _layer(e.target) > _layer(e.source)
              and not (e.target.split(".")[0] in TEXT and _layer(e.source) >= _layer(e.target))]
    lines = "\n".join(
        f"  {e.where()}: {e.source.split('.')[0]} may not import {e.target.split('.')[0]}" for e in upward
    )
    assert not upward, f"upward imports (layers, lowest first: {' <- '.join(LAYERS)}; prompts from autoresearch):\n{lines}"


def test_installed_code_does_not_import_folders_that_are_not_installed():
    found = set()
    for module, path in MODULES.items():
        for name, line in _imports(module, path):
            if name.split(".")[0] in NOT_INSTALLED:
                known = [k for m, k in KNOWN_NOT_INSTALLED if m == module and (name == k or name.startswith(k + "."))]
                found.add((module, known[0] if known else name, line))
    new = sorted(f"  {_path(m)}:{line}: {m} imports {n}" for m, n, line in found if (m, n) not in KNOWN_NOT_INSTALLED)
    assert not new, "installed code imports a folder that is not installed (pyproject's packages):\n" + "\n".join(new)
    gone = KNOWN_NOT_INSTALLED - {(m, n) for m, n, _ in found}
    assert not gone, f"untied, so drop from KNOWN_NOT_INSTALLED: {sorted(gone)}"


def test_the_rules_catch_a_cycle_and_an_upward_import():
    made = [Edge("compute.a", "compute.b", 1), Edge("compute.b", "compute.c", 2), Edge("compute.c", "compute.a", 3)]
    saved = dict(MODULES)
    MODULES.update({name: ROOT / "compute" / f"{name[-1]}.py" for name in ("compute.a", "compute.b", "compute.c")})
    try:
        (cycle,) = _cycles(made)
        assert [e.source for e in cycle] == ["compute.a", "compute.b", "compute.c"]
    finally:
        MODULES.clear()
        MODULES.update(saved)
    assert _layer("skills.cluster") < _layer("autoresearch.cli") and _layer("compute.x") < _layer("tracking.y")
    assert _layer("prompts") == _layer("autoresearch")


NO_PACKAGE_IMPORTS = ["compute", "tracking", "skills", "autoresearch", "evals"]
"""Packages (with everything under them) whose modules import every name from the module that defines
it (issue 34, item 9)."""


def test_modules_do_not_import_through_an_ancestor_package():
    """`from compute import container_ops` inside `compute.backends.local` runs `compute/__init__`,
    which names `compute.backends.local`: a package-level cycle. Import from the defining module
    (`from compute.container_ops import ...`, `import compute.container_ops as container_ops`);
    no relative imports either."""
    found = []
    for module, path in MODULES.items():
        if not any(module == p or module.startswith(p + ".") for p in NO_PACKAGE_IMPORTS):
            continue
        if module.endswith(".__main__"):  # `python -m PACKAGE` runs it; the package's `__init__` never imports it
            continue
        parts = module.split(".")
        ancestors = {".".join(parts[:i]) for i in range(1, len(parts))}
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or node.module in ancestors):
                names = ", ".join(a.name for a in node.names)
                found.append(f"  {_path(module)}:{node.lineno}: from {'.' * node.level}{node.module or ''} import {names}")
    assert not found, "modules importing through their own package's __init__:\n" + "\n".join(found)
