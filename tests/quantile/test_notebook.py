"""Execute colab/02_federated_quantiles.ipynb at its tiny test size (``slow``: a Jupyter kernel
and the notebook's experiments); the fast suite checks its cells and the ldpjax names they use."""

from __future__ import annotations

import pytest

from tests.conftest import REPO
from tests.notebooks import assert_figures_displayed, check_notebook_statically, run_notebook

NOTEBOOK = REPO / "colab" / "02_federated_quantiles.ipynb"


def test_notebook_cells_parse_and_their_ldpjax_names_exist():
    assert check_notebook_statically(NOTEBOOK) >= 5


@pytest.mark.slow
def test_federated_quantiles_notebook_runs():
    nb = run_notebook(NOTEBOOK, {"SIZE": "test"})
    outputs = "".join(
        o.get("text", "") for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    )
    assert "devices:" in outputs
    assert "width (hetero r):" in outputs
    # inline backend: the coverage figure(s), the income figure (when the census data is
    # installed) and the CI-width panel
    assert_figures_displayed(nb, minimum=2)
