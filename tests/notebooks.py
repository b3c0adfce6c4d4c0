"""Execute a notebook top to bottom (used by the notebook tests).

Notebooks keep their size knobs in a cell tagged ``parameters`` (papermill convention). The
test injects overrides as a new cell right after it, then runs every cell in a fresh kernel
with the current Python (cwd = the notebook's folder) and fails on the first error.

The kernel uses matplotlib's *inline* backend, as Colab and Jupyter do, so a figure that is
shown ends up as an ``image/png`` output; :func:`assert_figures_displayed` checks that every
cell that shows a figure did display one (a notebook whose plots stopped rendering fails).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
SHOWS_FIGURE = ("plt.show()", "display(fig", "display(result.figures", "display(income.figures",
                "display(coverage.figures")


def run_notebook(path: Path, overrides: dict[str, Any], timeout: int = 900) -> Any:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    index = next(
        (i for i, c in enumerate(nb.cells) if "parameters" in c.get("metadata", {}).get("tags", [])),
        None,
    )
    if index is None:
        raise AssertionError(f"{path.name} has no cell tagged 'parameters'")
    code = "\n".join(f"{k} = {v!r}" for k, v in overrides.items())
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(code))
    env_backup = dict(os.environ)
    os.environ["MPLBACKEND"] = INLINE_BACKEND
    try:
        client = nbclient.NotebookClient(
            nb, timeout=timeout, kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        client.execute()
    finally:
        os.environ.clear()
        os.environ.update(env_backup)
    return nb


def image_count(cell: Any) -> int:
    """Number of ``image/png`` outputs of an executed code cell."""
    return sum("image/png" in out.get("data", {}) for out in cell.get("outputs", []))


def assert_figures_displayed(nb: Any, minimum: int) -> int:
    """Every code cell that shows a figure displayed at least one PNG (cells that printed
    ``skipped`` are exempt), and the notebook displayed at least ``minimum`` in all; returns
    the total."""
    missing = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        text = "".join(out.get("text", "") for out in cell.get("outputs", []))
        if any(marker in cell.source for marker in SHOWS_FIGURE) and "skipped" not in text:
            if image_count(cell) == 0:
                missing.append(index)
    total = sum(image_count(c) for c in nb.cells if c.cell_type == "code")
    assert not missing, f"cells {missing} show a figure but displayed no image"
    assert total >= minimum, f"{total} figures displayed, expected at least {minimum}"
    return total


def _code_cells(nb: Any) -> list[str]:
    """The code cells' sources with IPython's ``%magic`` and ``!shell`` lines blanked."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            lines = cell.source.splitlines()
            cells.append("\n".join("" if line.lstrip().startswith(("%", "!")) else line
                                   for line in lines))
    return cells


def check_notebook_statically(path: Path) -> int:
    """The fast stand-in for running a notebook (the runs are ``slow``): one cell tagged
    ``parameters``; every code cell parses; every ``ldpjax`` module it imports exists and has
    every name it imports or reads off it (``from ldpjax.x import a``, ``import ldpjax.x as m;
    m.b``); every experiment it names in ``get_experiment("...")`` is registered. Returns the
    number of ``ldpjax`` names checked."""
    import ast
    import importlib

    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: {len(tagged)} cells tagged 'parameters'"
    from ldpjax_experiments import get_experiment

    aliases: dict[str, Any] = {}  # local name -> imported ldpjax module
    checked = 0
    trees = [ast.parse(source, f"{path.name}[cell {i}]") for i, source in enumerate(_code_cells(nb))]
    for tree in trees:  # imports first: a cell may use a name imported by a later-numbered one
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ldpjax"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    value = getattr(module, alias.name, None)
                    if value is None:  # a submodule imported by name
                        value = importlib.import_module(f"{node.module}.{alias.name}")
                    checked += 1
                    if hasattr(value, "__path__") or type(value).__name__ == "module":
                        aliases[alias.asname or alias.name] = value
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "ldpjax":
                        module = importlib.import_module(alias.name)
                        checked += 1
                        if alias.asname or alias.name == "ldpjax":
                            aliases[alias.asname or alias.name] = module
    for tree in trees:
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases):
                module = aliases[node.value.id]
                assert hasattr(module, node.attr), (
                    f"{path.name}: {node.value.id}.{node.attr}: {module.__name__} has no "
                    f"{node.attr!r}")
                checked += 1
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "get_experiment"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                get_experiment(node.args[0].value)  # raises on an unknown name
                checked += 1
    return checked
