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
