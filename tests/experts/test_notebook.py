"""The experts notebook (regret, batching and amplification; then the COVID task)
runs top to bottom at its test size (``slow``: a Jupyter kernel and every experiment of the
notebook); the fast suite checks its cells and the ldpjax names they use."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO
from tests.notebooks import assert_figures_displayed, check_notebook_statically, run_notebook

NOTEBOOK = REPO / "colab" / "01_experts_under_ldp.ipynb"


def test_notebook_has_one_parameters_cell_and_no_outputs():
    nb = json.loads(NOTEBOOK.read_text())
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1 and "SIZE" in "".join(tagged[0]["source"])
    assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")


def test_notebook_cells_parse_and_their_ldpjax_names_exist():
    assert check_notebook_statically(NOTEBOOK) >= 10


@pytest.mark.slow
def test_notebook_runs_at_test_size():
    nb = run_notebook(NOTEBOOK, {"SIZE": "test"})
    text = "\n".join(
        out.get("text", "") or str(out.get("data", {}).get("text/markdown", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )
    # RW-FTPL / RW-AdaBatch and amplification
    assert "JAX devices" in text and "regret at T=300" in text and "mu_B = 0.100" in text
    # the COVID task: every output says which data it used
    assert "SYNTHETIC stand-in" in text
    assert "| NM | inf |" in text and "| NM | 1 |" in text
    # inline backend: regret, batch sizes, amplification curves, cumulative gain, the data
    assert_figures_displayed(nb, minimum=5)
