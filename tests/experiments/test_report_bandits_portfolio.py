"""Golden tests of the ``bandits-portfolio`` report on tiny studies built by hand, labelled as run
on the real ASOS file and as run on the synthetic stand-in.

Two experiments, two firm budgets Gamma = 1 and 10, two simulations per allocation; the
unconstrained gamma* allocation spends 5, so only Gamma = 1 is "moderate" (< sum gamma*) unless
a test says otherwise. Every expected number is worked out in a comment from the literal rows;
none comes from the report.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from ldpjax_experiments.bandits_portfolio import PortfolioStudy, report  # noqa: E402

REAL_TEXT = "ASOS Digital Experiments Dataset (hand-made test study)"
STAND_IN_TEXT = "synthetic ASOS stand-in (hand-made test study; NOT the real data)"


def _row(gamma, allocation, median, q25, q75, budget, realised, bound):
    return {"Gamma": gamma, "allocation": allocation, "median_gain": median, "gain_q25": q25,
            "gain_q75": q75, "budget_spent": budget, "realised_spend_max": realised,
            "summed_bound": bound}


def _rows(opt10_bound=50.0, eq1_realised=1.0):
    return [
        _row(1.0, "bound-optimal", 2000.0, 1000.0, 3000.0, 1.0, 0.9, 100.0),
        _row(1.0, "equal split", 1000.0, 500.0, 1500.0, 1.0, eq1_realised, 120.0),
        _row(1.0, "gamma*", 4500.0, 4000.0, 5000.0, 5.0, 4.0, 40.0),
        _row(10.0, "bound-optimal", 4000.0, 3000.0, 5000.0, 5.0, 5.0, opt10_bound),
        _row(10.0, "equal split", 4000.0, 3000.0, 5000.0, 10.0, 9.0, 50.0),
        _row(10.0, "gamma*", 4500.0, 4000.0, 5000.0, 5.0, 4.0, 40.0),
        _row(0.0, "random (Gamma = 0)", 0.0, -100.0, 100.0, 0.0, 0.0, 400.0),
    ]


def _study(rows, paired, real=True, free_spent=5.0) -> PortfolioStudy:
    experiments = [{"experiment": "a", "K": 2, "T": 1e4, "gamma_Gamma1": 0.6,
                    "gamma_Gamma10": 2.5, "gamma_star": 2.5},
                   {"experiment": "b", "K": 3, "T": 1e5, "gamma_Gamma1": 0.4,
                    "gamma_Gamma10": 2.5, "gamma_star": 2.5}]
    return PortfolioStudy(
        rows=rows, paired=paired, experiments=experiments, budgets=(1.0, 10.0),
        free_spent=free_spent, num_experiments=2, num_blocks=7, real=real,
        data_text=REAL_TEXT if real else STAND_IN_TEXT, seeds=2, block_growth=0.05,
        init_visits=None)


def _figure_text(fig):
    return " ".join(f"{fig.get_suptitle()} {' '.join(t.get_text() for t in fig.texts)}".split())


def test_real_study_reproduces_and_says_real():
    rows = _rows()
    res = report(_study(rows, {1.0: (30.0, 10.0), 10.0: (0.0, 0.0)}))
    fig = res.figures["portfolio_clicks"]
    assert res.tables["portfolio"] == rows
    assert res.tables["allocations"][1]["experiment"] == "b"
    assert res.tables["portfolio_paired"] == [
        {"Gamma": g, "comparison": "bound-optimal - equal split (expected clicks)",
         "mean_difference": m, "paired_se": s, "runs": 2}
        for g, m, s in ((1.0, 30.0, 10.0), (10.0, 0.0, 0.0))]
    wins, bound, spend = res.verdicts
    # moderate Gammas (< 5): [1]; 30 > 2 x 10 -> a win; no Gamma with mean < -2 SE
    assert (wins.status, wins.ours) == ("reproduced", 1.0) and wins.reason == ""
    # summed bound: 100 <= 120 at Gamma 1, 50 <= 50 at Gamma 10 -> 0 Gammas worse
    assert (bound.status, bound.ours, bound.kind) == ("reproduced", 0.0, "self-check")
    # realised - allocated: 0.9 - 1, 1 - 1, 4 - 5, 5 - 5, 9 - 10, 4 - 5, 0 - 0 -> max 0
    assert (spend.status, spend.ours, spend.kind) == ("reproduced", 0.0, "self-check")
    assert {v.data for v in res.verdicts} == {"real"}
    assert res.data == REAL_TEXT
    assert res.extra == {"block_growth": 0.05, "num_blocks": 7, "real_data": True}
    assert ("Firm budget allocation over 2 experiments, 2 simulations of each allocation (block "
            "policy, growth 0.05), Gamma in [1.0, 10.0]; the unconstrained gamma* allocation "
            f"spends 5.0. Data: {REAL_TEXT}; both strategies start with K uniform-play visits"
            ) in res.summary
    assert ("Verdicts: 1 reproduced, 0 partly, 0 not (of 1 paper claims); self-checks: 2 of 2 "
            "hold.") in res.summary
    text = _figure_text(fig)
    assert "REAL ASOS Digital Experiments Dataset (2 experiments)" in text
    assert "SYNTHETIC" not in text
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(labels) == sorted([
        "bound-optimal", "equal split", "gamma* allocation (spends 5.0): median",
        "gamma* allocation: IQR", "random play (Gamma = 0): 0 by definition",
        "random play: IQR of its clicks, about 0", "bound-optimal minus equal split (paired, "
        "mean)"])
    left, right = fig.axes[0], fig.axes[1]
    # medians in thousands of clicks: bound-optimal 2000, 4000 -> 2, 4; equal split 1, 4
    medians = {c.get_label(): list(c.lines[0].get_ydata()) for c in left.containers}
    assert medians == {"bound-optimal": pytest.approx([2.0, 4.0]),
                       "equal split": pytest.approx([1.0, 4.0])}
    (paired_bars,) = right.containers  # 30 and 0 clicks -> 0.03 and 0 thousand
    assert list(paired_bars.lines[0].get_ydata()) == pytest.approx([0.03, 0.0])
    plt.close(fig)


def test_stand_in_study_fails_and_says_synthetic():
    res = report(_study(_rows(opt10_bound=60.0, eq1_realised=1.5),
                        {1.0: (10.0, 10.0), 10.0: (-30.0, 10.0)}, real=False))
    fig = res.figures["portfolio_clicks"]
    wins, bound, spend = res.verdicts
    # Gamma 1: 10 <= 2 x 10, no win; Gamma 10: -30 < -2 x 10, a loss -> not
    assert (wins.status, wins.ours) == ("not", 0.0)
    assert wins.reason == "Synthetic stand-in portfolio, not the ASOS experiments."
    # summed bound at Gamma 10: 60 > 50 x (1 + 1e-6) -> 1 Gamma worse
    assert (bound.status, bound.ours) == ("not", 1.0)
    # equal split at Gamma 1: realised 1.5 - allocated 1 = 0.5 > 1e-6
    assert (spend.status, spend.ours) == ("not", 0.5)
    assert {v.data for v in res.verdicts} == {"synthetic stand-in"}
    assert res.data == STAND_IN_TEXT and res.extra["real_data"] is False
    assert f"Data: {STAND_IN_TEXT};" in res.summary
    assert ("Verdicts: 0 reproduced, 0 partly, 1 not (of 1 paper claims); self-checks: 0 of 2 "
            "hold.") in res.summary
    text = _figure_text(fig)
    assert ("SYNTHETIC stand-in for the ASOS dataset (file absent; 2 experiments with the "
            "published shape)") in text and "REAL" not in text
    plt.close(fig)


def test_a_win_at_some_moderate_gammas_is_partly():
    # gamma* spends 20: both Gammas are moderate; a win at 1 (30 > 20), none at 10 (0, 0)
    res = report(_study(_rows(), {1.0: (30.0, 10.0), 10.0: (0.0, 0.0)}, free_spent=20.0))
    plt.close(res.figures["portfolio_clicks"])
    assert (res.verdicts[0].status, res.verdicts[0].ours) == ("partly", 0.5)  # 1 of 2
    assert "the unconstrained gamma* allocation spends 20.0" in res.summary
