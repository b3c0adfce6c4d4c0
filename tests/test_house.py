"""The house rules, read from the source (no imports of ldpjax needed, so this is fast).

- no module of ``ldpjax`` or of the application ``ldpjax_experiments`` over 700 lines and no function over 100;
- the core (families, mechanisms, accounting, engine, datasets, testing) never imports the
  application (``ldpjax_experiments``: the paper studies, bench, CLI, launcher, cluster
  runtime, checkpointing, plotting, progress), neither by an import statement nor by a string (``importlib.import_module``,
  ``__import__``, a module ``__getattr__`` that loads modules);
- no module imports another in a loop (lazy imports included; ``ldpjax`` modules only);
- docstrings carry no issue numbers, and no module cites a paper by file number ("paper 000")
  or by "the spec" (the notes that restate the papers): papers are cited by title and venue.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The two import packages of the distribution: the library and the application that runs the
#: paper studies, the bench and the command line (experiments/ldpjax_experiments)
PACKAGES = (REPO / "ldpjax", REPO / "experiments" / "ldpjax_experiments")
MAX_MODULE_LINES = 700
MAX_FUNCTION_LINES = 100
CORE = ("ldpjax.experts", "ldpjax.quantile", "ldpjax.bandits", "ldpjax.demo",
        "ldpjax.mechanisms", "ldpjax.accounting", "ldpjax.engine", "ldpjax.datasets",
        "ldpjax._validation", "ldpjax.validation", "ldpjax.types", "ldpjax.roots",
        "ldpjax.testing")
APPLICATION = ("ldpjax_experiments",)
ISSUE_NUMBER = re.compile(r"\bissues? \d+", re.IGNORECASE)


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            parts = path.relative_to(package.parent).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


@functools.cache
def _trees() -> dict[str, ast.Module]:
    """Each module's syntax tree, parsed on first use (collection stays cheap on the worker
    that does not run this module)."""
    return {name: ast.parse(path.read_text(), str(path)) for name, path in MODULES.items()}


def _is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def _imports(name: str, *, top_level_only: bool) -> set[str]:
    """The ldpjax modules that module ``name`` imports (relative imports resolved)."""
    tree = _trees()[name]
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
    for name, tree in _trees().items():
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


#: Calls that load a module named by a string.
IMPORTERS = {"import_module", "__import__", "find_spec", "find_module", "load_module"}
APPLICATION_NAME = re.compile(r"\bldpjax_experiments\b")


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _loads_by_string(tree: ast.Module) -> list[str]:
    """Where a module loads an application module by a string, or has a module ``__getattr__``
    that loads modules (a lazy path whose target a regex cannot follow)."""
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node) in IMPORTERS:
            texts = [n.value for arg in [*node.args, *(k.value for k in node.keywords)]
                     for n in ast.walk(arg)
                     if isinstance(n, ast.Constant) and isinstance(n.value, str)]
            hits += [f"{node.lineno}: {t}" for t in texts if APPLICATION_NAME.search(t)]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            loads = [n for n in ast.walk(node)
                     if isinstance(n, ast.Call) and _call_name(n) in IMPORTERS]
            if loads:
                hits.append(f"{node.lineno}: module __getattr__ loads modules by name")
    return hits


@pytest.mark.parametrize("core", CORE)
def test_the_core_never_loads_the_application_by_string(core):
    bad = {name: hits for name in MODULES
           if name == core or name.startswith(core + ".")
           for hits in [_loads_by_string(_trees()[name])] if hits}
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
    for name, tree in _trees().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                if ISSUE_NUMBER.search(doc):
                    hits.append(f"{name}:{getattr(node, 'name', '<module>')}")
    assert hits == []


def _names_an_event_class(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and isinstance(n.value, str)
               and re.fullmatch(r"\w*Event", n.value) for n in ast.walk(node))


def test_no_event_class_is_compared_by_its_name():
    """The engine and the accountants ask an event through the event protocol's views (the
    no-noise view ``grants_no_privacy`` included), never by comparing ``type(e).__name__`` with
    an event class name: a third party's event or a renamed class would silently miss."""
    hits = []
    for name, tree in _trees().items():
        if not name.startswith(("ldpjax.engine", "ldpjax.accounting")):
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            by_name = any(isinstance(n, ast.Attribute) and n.attr == "__name__"
                          for op in operands for n in ast.walk(op))
            if by_name and any(_names_an_event_class(op) for op in operands):
                hits.append(f"{name}:{node.lineno}")
    assert hits == []


#: How a library module must not cite a paper or its restatement: by the mission's file numbers
#: ("paper 000") or by the notes that restate the papers ("the spec", "spec's", ``shared/specs``,
#: "spec ``x.md``"); docstrings cite each paper by title and venue (docs/pages/references.md).
PRIVATE_CITATION = re.compile(
    r"\bpapers? ?0\d\d\b|\bthe spec\b|\bspec's\b|\bspecs?/|\bspecs? ``\w+\.md``", re.IGNORECASE)


def test_papers_are_cited_by_title_not_by_file_number():
    hits = [f"{name}:{number}: {line.strip()}" for name, path in MODULES.items()
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if PRIVATE_CITATION.search(line)]
    assert hits == []


def test_the_library_draws_no_figures_and_parses_no_command_lines():
    """Plotting and the command line belong to the application: no module of ``ldpjax``
    imports matplotlib or argparse (the library installs and runs without them)."""
    hits = sorted(name for name in MODULES if name.split(".")[0] == "ldpjax"
                  for mod in _imported_names(_trees()[name])
                  if mod.split(".")[0] in ("matplotlib", "argparse"))
    assert hits == []


def _imported_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
    return names
