"""Golden tests of the ``demo`` report on tiny studies built by hand.

Every expected number is worked out in a comment from the study's literal numbers (the closed
form sqrt(t)/mu, the chi-square interval sqrt(1 -+ 1.96 sqrt(2/n)) and the Bonferroni band
z sqrt(1/(2n)) with z from scipy), never from the report itself.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from scipy.stats import norm

from ldpjax_experiments.demo import DemoStudy, report

N = 200  # seeds: sqrt(2 / n) = 0.1 and sqrt(1 / (2 n)) = 0.05


def _study(rmse, mus=(1.0, 4.0), checkpoints=(1, 4), **kw) -> DemoStudy:
    return DemoStudy(mus=mus, horizon=4, rate=0.5, checkpoints=checkpoints, num_seeds=N,
                     rmse=np.asarray(rmse, np.float64), chunks_computed=1, chunks_loaded=0, **kw)


# ratios to sqrt(t)/mu: mu = 1: 1.02 / 1 = 1.02, 2.0 / 2 = 1.0; mu = 4: 0.25 / 0.25 = 1.0,
# 0.48 / 0.5 = 0.96 (the worst cell, |0.96 - 1| = 0.04)
GOOD = [[1.02, 2.0], [0.25, 0.48]]
# simultaneous band over 4 cells: Phi^-1(1 - 0.025 / 4) * sqrt(1 / 400) = 2.4977 * 0.05 = 0.1249
BAND = norm.ppf(1 - 0.025 / 4) * 0.05


def test_rows_are_the_closed_form_and_the_ratio():
    rows = report(_study(GOOD)).tables["rmse"]
    assert [(r["mu"], r["t"]) for r in rows] == [(1.0, 1), (1.0, 4), (4.0, 1), (4.0, 4)]
    # sqrt(t) / mu: 1/1, 2/1, 1/4, 2/4
    assert [r["rmse_theory"] for r in rows] == pytest.approx([1.0, 2.0, 0.25, 0.5])
    assert [r["rmse"] for r in rows] == pytest.approx([1.02, 2.0, 0.25, 0.48])
    assert [r["ratio"] for r in rows] == pytest.approx([1.02, 1.0, 1.0, 0.96])
    # pointwise 95%: 1.96 sqrt(2 / 200) = 0.196; sqrt(1 - 0.196) = sqrt(0.804) = 0.89666,
    # sqrt(1.196) = 1.09362
    for r in rows:
        assert r["ratio_lo95"] == pytest.approx(0.896660, abs=1e-6)
        assert r["ratio_hi95"] == pytest.approx(1.093618, abs=1e-6)


@pytest.mark.parametrize("worst, status", [
    (0.48, "reproduced"),  # ratio 0.96: |0.96 - 1| = 0.04 <= 0.1249
    (0.60, "partly"),  # ratio 1.2: 0.1249 < 0.2 <= 3 * 0.1249 = 0.3747
    (0.75, "not"),  # ratio 1.5: 0.5 > 0.3747
])
def test_the_worst_cell_decides_the_verdict(worst, status):
    (v,) = report(_study([[1.02, 2.0], [0.25, worst]])).verdicts
    assert v.status == status and v.kind == "demo" and v.data == "synthetic"
    assert v.ours == pytest.approx(worst / 0.5)  # the cell mu = 4, t = 4: sqrt(4) / 4 = 0.5
    assert v.paper == 1.0
    assert v.tolerance == pytest.approx(BAND, rel=1e-9)
    assert "mu = 4, t = 4" in v.measure


def test_mu_inf_must_release_the_exact_count():
    # mu = inf: sqrt(t)/mu = 0, so an RMSE of 0 has ratio 1 and any other RMSE ratio inf
    exact = report(_study([[1.0, 2.0], [0.0, 0.0]], mus=(1.0, math.inf)))
    rows = exact.tables["rmse"]
    assert [r["ratio"] for r in rows] == [1.0, 1.0, 1.0, 1.0]
    finite, inf = exact.verdicts
    assert finite.status == "reproduced" and finite.ours == pytest.approx(1.0)
    assert inf.status == "reproduced" and inf.ours == 0.0 and inf.tolerance == 0.0
    noisy = report(_study([[1.0, 2.0], [0.0, 0.1]], mus=(1.0, math.inf)))
    assert noisy.tables["rmse"][3]["ratio"] == math.inf
    assert noisy.verdicts[1].status == "not" and noisy.verdicts[1].ours == pytest.approx(0.1)


def test_summary_and_data_label():
    res = report(_study(GOOD))
    assert res.data == "synthetic Bernoulli bits (no data files)"
    assert "T=4 steps, mu in [1.0, 4.0], 200 seeds per mu" in res.summary
    assert "(1 chunk(s) computed, 0 loaded)" in res.summary
    assert "demo checks: 1 of 1 hold" in res.summary
    # the label the study carries is the one the verdicts say
    relabelled = report(_study(GOOD, data_label="synthetic stand-in"))
    assert relabelled.verdicts[0].data == "synthetic stand-in"


def test_figure_draws_each_mu_and_its_legend_names_the_drawn_lines():
    fig = report(_study(GOOD)).figures["rmse"]
    ax, bx = fig.axes[:2]
    theory = {ln.get_label(): ln for ln in ax.lines if "sqrt(t)/mu" in ln.get_label()}
    assert set(theory) == {"mu = 1: sqrt(t)/mu", "mu = 4: sqrt(t)/mu"}
    # the closed-form line at t = 1, 4: sqrt(t) / 4 = 0.25, 0.5
    assert np.asarray(theory["mu = 4: sqrt(t)/mu"].get_ydata()) == pytest.approx([0.25, 0.5])
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    drawn = {h.get_label() for a in (ax, bx) for h in a.get_legend_handles_labels()[0]}
    assert legend == drawn and "mu = 1: simulated (+-2 SE bars)" in legend
    fig.savefig(io.BytesIO(), format="png")
