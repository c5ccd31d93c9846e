"""The import graph is the drawing in docs/architecture.md: dependencies point down.

Each sub-package (and each top-level module) sits in one layer of ``LAYERS``, lowest first. A
module may import from a lower layer only: an import into its own layer's other members is
sideways, into a higher layer upward, and both fail, whether the import runs at module level,
inside a function, or only for the type checker. Within a sub-package anything goes, except an
import cycle that runs when the modules load. Nothing outside ``jupyter/`` imports IPython.

The checker reads source with ``ast`` (nothing is imported), so it runs on the real package and,
to show that it bites, on small planted trees.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import agent_ext

#: Lowest first. The same order, with what each layer is for, is in docs/architecture.md.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core", "settings", "_version"),   # the tool framework and host interfaces; leaf modules
    ("fs",),                            # files: read cache, text I/O, matching, selectors
    ("urls", "permissions"),            # the URL router and path parser; permission decisions
    ("notebook",),                      # notebook documents and their nb/cell/out schemes
    ("tools", "trust", "models"),       # the built-in tools; project trust; model adapters
    ("mcp",),                           # MCP servers' tools and resources
    ("agent",),                         # the session, the scheduler, approval
    ("jupyter",),                       # the kernel host: magics, widgets, bridge, headless
    ("agent_ext",),                     # the package's own __init__: the public names
    ("demo",),                          # the tour run by ``python -m agent_ext``
    ("__main__",),
)
KERNEL_ONLY = ("IPython", "ipywidgets", "ipykernel")
HOST = "jupyter"


@dataclass(frozen=True)
class Import:
    source: str      # importing module, dotted
    target: str      # imported module, dotted (``from m import sub`` resolved to ``m.sub``)
    line: int
    runtime: bool    # runs when ``source`` loads: module level, outside ``if TYPE_CHECKING``
    file: str


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package at ``root`` by dotted name (a package by its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _walk(node: ast.AST, *, runtime: bool) -> Iterator[tuple[ast.AST, bool]]:
    """Every node below ``node``, with whether it runs when its module loads."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for stmt in child.body:
                yield stmt, False
                yield from _walk(stmt, runtime=False)
            for stmt in child.orelse:
                yield stmt, runtime
                yield from _walk(stmt, runtime=runtime)
            continue
        deferred = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield child, runtime
        yield from _walk(child, runtime=runtime and not deferred)


def imports(root: Path, package: str) -> list[Import]:
    """Every import of the package's own modules, resolved to absolute names."""
    known = modules(root, package)
    found: list[Import] = []
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        for node, runtime in _walk(ast.parse(path.read_text()), runtime=True):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(here.split(".")[: len(here.split(".")) - node.level + 1])
                    module = f"{base}.{node.module}" if node.module else base
                else:
                    module = node.module or ""
                targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known
                           else module for alias in node.names]
            for target in dict.fromkeys(targets):
                top = target.split(".")[0]
                if top == package or top in KERNEL_ONLY:
                    found.append(Import(name, target, node.lineno, runtime, str(path)))
    return found


def unit_of(module: str) -> str:
    """The layered unit a module belongs to: its sub-package, top-level module, or the package."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_problems(root: Path, package: str = "agent_ext") -> list[str]:
    """Upward and sideways imports between units, units in no layer, and IPython below the host."""
    rank = {unit: i for i, layer in enumerate(LAYERS) for unit in layer}
    problems: list[str] = []
    for unit in sorted({unit_of(m) for m in modules(root, package)} - set(rank)):
        problems.append(f"{package}.{unit} is in no layer: add it to LAYERS and the drawing")
    for imp in imports(root, package):
        where = f"{imp.file}:{imp.line}"
        source = unit_of(imp.source)
        if imp.target.split(".")[0] in KERNEL_ONLY:
            if source != HOST:
                problems.append(f"{where}: {imp.source} imports {imp.target}; only {HOST}/ may")
            continue
        target = unit_of(imp.target)
        if source == target or source not in rank or target not in rank:
            continue
        if rank[target] > rank[source]:
            problems.append(f"{where}: {imp.source} imports {imp.target}, a layer above it")
        elif rank[target] == rank[source]:
            problems.append(f"{where}: {imp.source} imports {imp.target}, beside it in its layer")
    return problems


def runtime_cycles(root: Path, package: str = "agent_ext") -> list[list[str]]:
    """Import cycles among the modules that run when they load (Tarjan's components)."""
    graph: dict[str, set[str]] = {m: set() for m in modules(root, package)}
    for imp in imports(root, package):
        if imp.runtime and imp.target in graph and imp.target != imp.source:
            graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


ROOT = Path(agent_ext.__file__).parent


def test_every_import_points_down() -> None:
    assert layer_problems(ROOT) == []


def test_no_import_cycle_runs_at_load() -> None:
    assert runtime_cycles(ROOT) == []


def test_core_imports_nothing_of_ours() -> None:
    ours = [imp for imp in imports(ROOT, "agent_ext")
            if unit_of(imp.source) == "core" and unit_of(imp.target) != "core"]
    assert ours == []


def test_every_unit_of_the_package_is_placed() -> None:
    placed = {unit for layer in LAYERS for unit in layer}
    assert {unit_of(m) for m in modules(ROOT, "agent_ext")} <= placed


def test_the_layer_order_is_the_documented_one() -> None:
    docs = (ROOT.parent / "docs" / "architecture.md").read_text()
    for i, layer in enumerate(LAYERS):
        row = f"| {i} | " + ", ".join(f"`{unit}`" for unit in layer) + " |"
        assert row in docs, f"docs/architecture.md lacks the layer row {row!r}"


# -- the checker bites: planted trees -------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "agent_ext"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            (root / parent / "__init__.py").touch()
        path.write_text(text)
    return root


def test_a_planted_upward_import_fails(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"core/tool.py": "from agent_ext.tools.edit import EditTool\n",
                            "tools/edit.py": "from agent_ext.core.tool import Tool\n"})
    problems = layer_problems(root)
    assert len(problems) == 1
    assert "core/tool.py:1: agent_ext.core.tool imports agent_ext.tools.edit, a layer above it" \
        in problems[0]


def test_a_lazy_or_type_only_upward_import_fails_too(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "fs/cache.py": ("from typing import TYPE_CHECKING\n"
                        "if TYPE_CHECKING:\n    from agent_ext.agent import Agent\n"
                        "def f():\n    from agent_ext.jupyter import magics\n"),
        "agent/__init__.py": "Agent = 1\n",
        "jupyter/magics.py": "",
    })
    problems = layer_problems(root)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "agent_ext.fs.cache imports agent_ext.agent, a layer above it",
        "agent_ext.fs.cache imports agent_ext.jupyter.magics, a layer above it",
    ]


def test_a_planted_sideways_import_fails(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"urls/router.py": "from ..permissions import decide\n",
                            "permissions/decide.py": ""})
    problems = layer_problems(root)
    assert len(problems) == 1 and "beside it in its layer" in problems[0]
    assert "agent_ext.urls.router imports agent_ext.permissions.decide" in problems[0]


def test_a_downward_import_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"notebook/schemes/cell.py": ("from agent_ext.urls.router import R\n"
                                                         "from ...fs import cache\n"),
                            "urls/router.py": "R = 1\n", "fs/cache.py": ""})
    assert layer_problems(root) == []


def test_a_new_sub_package_must_be_placed(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"extras/x.py": ""})
    assert layer_problems(root) == [
        "agent_ext.extras is in no layer: add it to LAYERS and the drawing"]


def test_ipython_below_the_host_fails(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"tools/run.py": "def f():\n    import IPython\n",
                            "jupyter/magics.py": "from IPython.core.magic import Magics\n"})
    problems = layer_problems(root)
    assert len(problems) == 1 and "agent_ext.tools.run imports IPython; only jupyter/" in problems[0]


def test_a_cycle_that_runs_at_load_fails_and_a_deferred_one_does_not(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "fs/a.py": "from .b import B\nA = 1\n",
        "fs/b.py": "from agent_ext.fs import a\nB = 1\n",
        "fs/c.py": "from .d import D\n",
        "fs/d.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import C\n"
                    "def f():\n    from agent_ext.fs.c import C\nD = 1\n"),
    })
    assert runtime_cycles(root) == [["agent_ext.fs.a", "agent_ext.fs.b"]]
    assert layer_problems(root) == []
