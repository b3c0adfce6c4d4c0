"""Golden tests of the ``frequency-oracles`` report on a tiny study built by hand.

Four oracles (GRR, SUE, OUE, OLH), one budget eps = 1 and two domain sizes d = 2 and 64, so
that 3 e^eps + 2 = 10.15 separates them (GRR should be best at d = 2 and not at d = 64).
S = 50 seeds, every standard error 0.1: the sampling band of a cell is
max(0.1, closed form x sqrt(2 / (d S))), sqrt(2 / 100) = 0.1414 at d = 2 and
sqrt(2 / 3200) = 0.025 at d = 64. Expected values are worked out in the comments; the
Bonferroni z comes from scipy, never from the report.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from ldpjax_experiments.frequency_oracles import FrequencyStudy, report

ORACLES = ("grr", "sue", "oue", "olh")
#            d = 2       d = 64
CLOSED = {"grr": (1.0, 8.0), "sue": (2.0, 4.0), "oue": (2.0, 2.0), "olh": (2.0, 2.0)}
Z8 = norm.ppf(1 - 0.025 / 8)  # 8 cells: 2.734


def _study(**variance) -> FrequencyStudy:
    """The study whose empirical variances equal the closed forms, except those given
    (``grr=(1.1, 8.0)``: GRR's variance at d = 2 and d = 64)."""
    var = {o: variance.get(o, CLOSED[o]) for o in ORACLES}
    arr = lambda table: np.asarray([[table[o]] for o in ORACLES], np.float64)  # noqa: E731
    return FrequencyStudy(oracles=ORACLES, eps_grid=(1.0,), domains=(2, 64), users=100,
                          seeds=50, path="counts", variance=arr(var),
                          se=np.full((4, 1, 2), 0.1), closed_form=arr(CLOSED))


def test_rows_carry_the_band_ratio_and_z():
    rows = report(_study(grr=(1.1, 8.0))).tables["variance"]
    assert [(r["oracle"], r["d"], r["eps"]) for r in rows] == [
        (o, d, 1.0) for o in ORACLES for d in (2, 64)]
    grr2, grr64, sue2, sue64 = rows[0], rows[1], rows[2], rows[3]
    # GRR, d = 2: band max(0.1, 1.0 x 0.1414) = 0.1414; ratio 1.1 / 1.0; z = 0.1 / 0.1414
    assert grr2["se_band"] == pytest.approx(0.141421, abs=1e-6)
    assert grr2["ratio"] == pytest.approx(1.1)
    assert grr2["z"] == pytest.approx(0.707107, abs=1e-6)
    # GRR, d = 64: band max(0.1, 8 x 0.025) = 0.2; z = 0
    assert grr64["se_band"] == pytest.approx(0.2) and grr64["z"] == 0.0
    # SUE: d = 2: max(0.1, 2 x 0.1414) = 0.2828; d = 64: max(0.1, 4 x 0.025 = 0.1) = 0.1
    assert sue2["se_band"] == pytest.approx(0.282843, abs=1e-6)
    assert sue64["se_band"] == pytest.approx(0.1)
    assert {(r["users"], r["seeds"]) for r in rows} == {(100, 50)}


def test_every_claim_holds_on_a_consistent_study():
    verdicts = report(_study(grr=(1.1, 8.0))).verdicts
    assert [v.status for v in verdicts] == ["reproduced"] * 6
    grr = verdicts[0]
    # worst GRR cell d = 2: ours = ratio 1.1; tolerance = z8 x 0.1414 / 1.0 = 0.3867
    assert grr.ours == pytest.approx(1.1) and grr.paper == 1.0
    assert grr.tolerance == pytest.approx(Z8 * 0.141421, rel=1e-5)
    assert "d = 2, eps = 1" in grr.claim
    assert verdicts[4].ours == 1.0 and verdicts[5].ours == 1.0  # shares of cells


def test_a_variance_off_its_closed_form_fails_and_grr_loses_its_cell():
    verdicts = report(_study(grr=(2.5, 8.0))).verdicts
    grr, grr_best = verdicts[0], verdicts[5]
    # ratio 2.5: |2.5 - 1| = 1.5 > 3 x 0.3867 = 1.16 -> not
    assert grr.status == "not" and grr.ours == pytest.approx(2.5)
    # d = 2: GRR 2.5 > best(OUE, OLH) 2.0 + 2 x hypot(0.1, 0.1) = 2.283 -> 1 of 2 cells
    assert grr_best.status == "partly" and grr_best.ours == pytest.approx(0.5)
    # ratio 2.0: 0.3867 < 1.0 <= 1.16 -> partly
    assert report(_study(grr=(2.0, 8.0))).verdicts[0].status == "partly"


def test_ordering_at_the_largest_d():
    # OUE at d = 64: 3.8 + 2 x 0.1414 = 4.08 is not below SUE's 4.0 (closed forms 2 vs 4
    # differ by 2 > 4 x 0.1414, so significance is required) -> 0 of 1 eps cells
    ordering = report(_study(oue=(2.0, 3.8))).verdicts[4]
    assert ordering.status == "not" and ordering.ours == 0.0
    # GRR better than OUE / OLH at d = 64 (above the threshold): 1.5 < 2.0 - 0.283
    grr_best = report(_study(grr=(1.0, 1.5))).verdicts[5]
    assert grr_best.status == "partly" and grr_best.ours == pytest.approx(0.5)


def test_summary_and_data_label():
    res = report(_study())
    assert res.data == "synthetic: users' items uniform over d (no data files)"
    assert {v.data for v in res.verdicts} == {"synthetic"}
    assert ("4 oracles x d in [2, 64] x eps in [1.0], 100 users, 50 seeds, path 'counts'"
            in res.summary)
    assert "6 reproduced, 0 partly, 0 not (of 6 paper claims)" in res.summary


def test_figure_panels_and_legend():
    fig = report(_study()).figures["variance"]
    assert [ax.get_title() for ax in fig.axes] == ["d = 2", "d = 64"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["GRR", "SUE (RAPPOR)", "OUE", "OLH", "markers: empirical (+-2 SE)",
                      "lines: closed form (Wang et al.)"]
    ax64 = fig.axes[1]
    lines = {ln.get_label(): list(ln.get_ydata()) for ln in ax64.lines
             if ln.get_label().endswith("closed form")}
    assert lines == {"GRR closed form": [8.0], "SUE (RAPPOR) closed form": [4.0],
                     "OUE closed form": [2.0], "OLH closed form": [2.0]}
    assert fig.get_suptitle().count("50 seeds per (oracle, d, eps)") == 1
