"""Execute colab/02_federated_quantiles.ipynb at its tiny test size."""

from __future__ import annotations

from tests.conftest import REPO
from tests.notebooks import assert_figures_displayed, run_notebook


def test_federated_quantiles_notebook_runs():
    nb = run_notebook(REPO / "colab" / "02_federated_quantiles.ipynb", {"SIZE": "test"})
    outputs = "".join(
        o.get("text", "") for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
    )
    assert "devices:" in outputs
    assert "width (hetero r):" in outputs
    # inline backend: the coverage figure(s), the income figure (when the census data is
    # installed) and the CI-width panel
    assert_figures_displayed(nb, minimum=2)
