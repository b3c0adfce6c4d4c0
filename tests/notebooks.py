"""Execute a notebook top to bottom (used by the notebook tests).

Notebooks keep their size knobs in a cell tagged ``parameters`` (papermill convention). The
test injects overrides as a new cell right after it, then runs every cell in a fresh kernel
with the current Python (cwd = the notebook's folder) and fails on the first error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


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
    os.environ.setdefault("MPLBACKEND", "Agg")
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
