"""The house rules, read from the source (no imports of ldpjax needed, so this is fast).

- no module of ``ldpjax`` over 700 lines and no function over 100;
- the core (families, mechanisms, accounting, engine, datasets) never imports the application
  (experiments, bench, CLI, launcher, plotting, progress);
- no module imports another in a loop (lazy imports included; ``ldpjax`` modules only);
- docstrings carry no issue numbers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ldpjax"
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 100
CORE = ("ldpjax.experts", "ldpjax.quantile", "ldpjax.bandits", "ldpjax.demo",
        "ldpjax.mechanisms", "ldpjax.accounting", "ldpjax.engine", "ldpjax.datasets",
        "ldpjax._validation", "ldpjax.validation", "ldpjax.types", "ldpjax.roots")
APPLICATION = ("ldpjax.experiments", "ldpjax.bench", "ldpjax.cli", "ldpjax.launch",
               "ldpjax.cluster", "ldpjax.plotting", "ldpjax.progress")
ISSUE_NUMBER = re.compile(r"\bissues? \d+", re.IGNORECASE)


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in MODULES.items()}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str, *, top_level_only: bool) -> set[str]:
    """The ldpjax modules that module ``name`` imports (relative imports resolved)."""
    tree = TREES[name]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    package = name if _is_package(name) else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in found if m in MODULES and m != name}


def test_no_module_over_the_line_limit():
    long = {n: len(p.read_text().splitlines()) for n, p in MODULES.items()}
    assert {n: k for n, k in long.items() if k > MAX_MODULE_LINES} == {}


def test_no_function_over_the_line_limit():
    long = {}
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = lines
    assert long == {}


@pytest.mark.parametrize("core", CORE)
def test_the_core_never_imports_the_application(core):
    bad = {}
    for name in MODULES:
        if name == core or name.startswith(core + "."):
            hits = {m for m in _imports(name, top_level_only=False)
                    if any(m == a or m.startswith(a + ".") for a in APPLICATION)}
            if hits:
                bad[name] = sorted(hits)
    assert bad == {}


def test_no_import_cycle():
    # Function-level imports count too: a lazy import hides a loop from Python, not from a reader.
    graph = {n: _imports(n, top_level_only=False) for n in MODULES}
    # A package's __init__ re-exporting its submodules is not a cycle of design: drop the edge
    # from a submodule to its own package (Python resolves it from the partially built package).
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not (_is_package(d) and name.startswith(d + "."))}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycles.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert cycles == []


def test_no_issue_numbers_in_docstrings():
    hits = []
    for name, tree in TREES.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                if ISSUE_NUMBER.search(doc):
                    hits.append(f"{name}:{getattr(node, 'name', '<module>')}")
    assert hits == []
