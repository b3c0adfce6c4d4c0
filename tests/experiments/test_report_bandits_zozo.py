"""Golden tests of the ``bandits-zozo`` report on tiny studies built by hand, labelled as run on
the real Open Bandit Dataset sample and as run on the synthetic stand-in.

Budgets gamma = 0.5 and 3 (3 is the grid's top, the one the verdicts judge), two runs per
policy, one horizon T = 100, K = 2 (and K = 3 where the verdict on K needs two). Every expected
number is worked out in a comment from the literal arrays; none comes from the report. With two
runs a and b: mean (a + b) / 2, sd (ddof 0) |a - b| / 2, SE = sd (ddof 1) / sqrt 2 = |a - b| / 2;
a paired difference d = (d1, d2) has mean (d1 + d2) / 2 and SE |d1 - d2| / 2.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ldpjax_experiments.bandits_simulation import PolicyRuns  # noqa: E402
from ldpjax_experiments.bandits_zozo import ZozoStudy, report  # noqa: E402

INF = math.inf
REAL_TEXT = "Open Bandit Dataset sample (hand-made test study)."
STAND_IN_TEXT = "Synthetic stand-in for the Open Bandit Dataset (hand-made test study)."


def _cell(K, policy, gamma, regret, clicks=(1.0, 1.0), spend=(0.0, 0.0), locked=(0.0, 0.0),
          bound=math.nan, simulation="per-visitor"):
    a = lambda x: np.asarray(x, np.float64)  # noqa: E731
    return PolicyRuns(K, 100, policy, gamma, a(regret), a(clicks), a(spend), a(locked),
                      simulation, bound)


def _k2(dyn_regret=(4.0, 6.0), const3_regret=(14.0, 18.0), dyn_spend=(2.0, 3.0)):
    return [
        _cell(2, "constant", 0.5, (10.0, 12.0), clicks=(1.0, 3.0), spend=(0.5, 0.5),
              locked=(0.0, 1.0), bound=40.0),
        _cell(2, "constant", 3.0, const3_regret, spend=(3.0, 3.0), locked=(1.0, 1.0),
              bound=32.0),
        _cell(2, "dynamic", 3.0, dyn_regret, spend=dyn_spend, bound=20.0),
        _cell(2, "nonprivate", INF, (4.0, 6.0)),
        _cell(2, "random", 0.0, (20.0, 24.0)),
        _cell(2, "oracle", INF, (0.0, 0.0), simulation="exact binomial"),
    ]


def _k3(const3_regret=(10.0, 13.0)):
    return [
        _cell(3, "constant", 0.5, (10.0, 12.0), spend=(0.5, 0.5), bound=40.0),
        _cell(3, "constant", 3.0, const3_regret, spend=(3.0, 3.0), bound=40.0),
        _cell(3, "dynamic", 3.0, (4.0, 6.0), spend=(3.0, 3.0), bound=40.0),
        _cell(3, "nonprivate", INF, (4.0, 6.0)),
        _cell(3, "random", 0.0, (30.0, 34.0)),
    ]


def _study(cells, real=True, arm_counts=(2,)) -> ZozoStudy:
    ctr = {2: (0.0078, 0.0012), 3: (0.0078, 0.004, 0.0012)}
    return ZozoStudy(
        cells=tuple(cells), ctr={k: ctr[k] for k in arm_counts}, arm_counts=arm_counts,
        horizons=(100,), gammas=(0.5, 3.0), init_visits=None, seeds=2,
        data_label="real extract" if real else "synthetic stand-in",
        data_text=REAL_TEXT if real else STAND_IN_TEXT)


def _figure_text(fig):
    return " ".join(f"{fig.get_suptitle()} {' '.join(t.get_text() for t in fig.texts)}".split())


def test_tables_from_the_per_run_arrays():
    res = report(_study(_k2()))
    plt.close(res.figures["zozo_clicks"])
    rows = res.tables["zozo"]
    assert [(r["K"], r["T"], r["policy"], r["gamma"]) for r in rows] == [
        (2, 100, "constant", 0.5), (2, 100, "constant", 3.0), (2, 100, "dynamic", 3.0),
        (2, 100, "nonprivate", INF), (2, 100, "random", 0.0), (2, 100, "oracle", INF)]
    r = rows[0]  # regret (10, 12), clicks (1, 3), locked (0, 1), spend (0.5, 0.5)
    assert (r["regret_mean"], r["regret_sd"]) == (11.0, 1.0)  # (10 + 12) / 2, |10 - 12| / 2
    assert r["regret_se"] == pytest.approx(1.0)
    assert (r["clicks_mean"], r["clicks_sd"]) == (2.0, 1.0)
    assert (r["locked_in"], r["spend_max"], r["simulation"]) == (0.5, 0.5, "per-visitor")
    # expected gain over random play, paired: random - policy regret per run
    gains = [v for r in rows for v in (r["expected_gain_over_random"], r["expected_gain_se"])]
    assert gains == pytest.approx([
        11.0, 1.0,  # (20 - 10, 24 - 12) = (10, 12)
        6.0, 0.0,  # (20 - 14, 24 - 18) = (6, 6)
        17.0, 1.0,  # (20 - 4, 24 - 6) = (16, 18)
        17.0, 1.0,  # nonprivate: same regrets as dynamic
        0.0, 0.0,  # random against itself
        22.0, 2.0])  # oracle, regret 0: (20, 24)
    assert rows[-1]["simulation"] == "exact binomial"
    bounds = res.tables["zozo_bounds"]
    assert [(b["policy"], b["gamma"], b["bound"]) for b in bounds] == [
        ("constant", 0.5, 40.0), ("constant", 3.0, 32.0), ("dynamic", 3.0, 20.0)]
    # 11 / 40, 16 / 32, 5 / 20
    assert [b["regret_over_bound"] for b in bounds] == pytest.approx([0.275, 0.5, 0.25])
    assert res.tables["zozo_ctr"] == [{"K": 2, "arm": 0, "ctr": 0.0078},
                                      {"K": 2, "arm": 1, "ctr": 0.0012}]
    paired = res.tables["zozo_paired"]
    assert [p["comparison"] for p in paired] == [
        "dynamic - nonprivate regret at gamma=3",
        "constant regret at gamma=3 - at its best gamma=0.5 (the drop in clicks past the peak)"]
    got = [v for p in paired for v in (p["mean_difference"], p["paired_se"], p["runs"])]
    # (4 - 4, 6 - 6) = (0, 0); (14 - 10, 18 - 12) = (4, 6): 5, SE 1
    assert got == pytest.approx([0.0, 0.0, 2, 5.0, 1.0, 2])


def test_real_extract_study_reproduces_and_says_real():
    res = report(_study(_k2()))
    fig = res.figures["zozo_clicks"]
    approach, peak, budget = res.verdicts  # one K: no verdict on the trend in K
    assert (approach.status, approach.ours) == ("reproduced", 1.0)  # paired (0, 0)
    assert (peak.status, peak.ours) == ("reproduced", 1.0)  # drop 5 > 2 x SE 1
    assert (budget.status, budget.ours, budget.kind) == ("reproduced", 1.0, "self-check")  # 3/3
    assert {v.data for v in res.verdicts} == {"real extract"}
    assert res.data == REAL_TEXT and res.extra == {"real_data": True, "init_visits": "K"}
    assert f"Data: {REAL_TEXT}" in res.summary
    assert "2 runs per policy, K in [2], T in [100]" in res.summary
    # locked in at gamma = 3: constant (1, 1) -> 100%, dynamic (0, 0) -> 0%
    assert "K=2: constant 100%, dynamic 0%." in res.summary
    assert ("Verdicts: 2 reproduced, 0 partly, 0 not (of 2 paper claims); self-checks: 1 of 1 "
            "hold.") in res.summary
    text = _figure_text(fig)
    assert "REAL Open Bandit Dataset sample" in text and "on ZOZOTOWN top-K items" in text
    assert "SYNTHETIC" not in text
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(labels) == ["constant", "dynamic", "nonprivate (no budget)",
                              "oracle (no budget)"]
    # the benchmarks' lines stand at their expected gains: nonprivate 17, oracle 22
    lines = {ln.get_label(): ln.get_ydata()[0] for ln in fig.axes[0].lines
             if ln.get_label().endswith("(no budget)")}
    assert lines == {"nonprivate (no budget)": 17.0, "oracle (no budget)": 22.0}
    plt.close(fig)


def test_stand_in_study_fails_and_says_synthetic():
    res = report(_study(_k2(dyn_regret=(10.0, 12.0), const3_regret=(11.0, 12.0),
                            dyn_spend=(2.0, 3.3)), real=False))
    fig = res.figures["zozo_clicks"]
    approach, peak, budget = res.verdicts
    # dynamic - nonprivate = (10 - 4, 12 - 6) = (6, 6): mean 6, SE 0 -> beyond 2 SE
    assert (approach.status, approach.ours) == ("not", 0.0)
    stand_in = "Synthetic stand-in CTRs, not the paper's items. "
    assert approach.reason.startswith(stand_in)
    assert approach.reason.endswith("K=2, T=1e2 the regrets differ by 6 (2 paired SE = 0).")
    # drop (11 - 10, 12 - 12) = (1, 0): 0.5, SE 0.5, within 2 SE; the best gamma is inside
    assert (peak.status, peak.ours) == ("partly", 0.0)
    assert peak.reason.startswith(stand_in)
    assert peak.reason.endswith("T=1e2 the drop from gamma=0.5 to 3 is 0.5 clicks, within 2 "
                                "paired SE (1) of 2 runs.")
    assert (budget.status, budget.ours) == ("not", pytest.approx(1.1))  # 3.3 / 3
    assert {v.data for v in res.verdicts} == {"synthetic stand-in"}
    assert res.data == STAND_IN_TEXT and res.extra["real_data"] is False
    assert f"Data: {STAND_IN_TEXT}" in res.summary
    assert ("Verdicts: 0 reproduced, 1 partly, 1 not (of 2 paper claims); self-checks: 0 of 1 "
            "hold.") in res.summary
    text = _figure_text(fig)
    assert "SYNTHETIC stand-in for the Open Bandit Dataset" in text
    assert "on synthetic top-K items (Open Bandit stand-in)" in text and "REAL" not in text
    plt.close(fig)


def test_drop_past_the_peak_shrinks_with_k():
    res = report(_study(_k2() + _k3(), arm_counts=(2, 3)))
    plt.close(res.figures["zozo_clicks"])
    approach, peak, drop, budget = res.verdicts
    # drop at K=2: 5, SE 1; at K=3: (10 - 10, 13 - 12) = (0, 1): 0.5, SE 0.5 (unresolved, but
    # inside the grid: it counts). 0.5 - 5 = -4.5 < -2 hypot(1, 0.5) = -2.24 -> shrinks
    assert (drop.status, drop.ours) == ("reproduced", 1.0)
    assert "T=1e2: K=2 5, K=3 0.5" in drop.measure
    assert (peak.status, approach.status, budget.status) == ("reproduced",) * 3
    assert len(res.tables["zozo_ctr"]) == 5  # 2 + 3 arms
    assert "K=2: constant 100%, dynamic 0%; K=3: constant 0%, dynamic 0%." in res.summary


def test_drop_that_does_not_shrink_is_not_reproduced():
    res = report(_study(_k2() + _k3(const3_regret=(14.0, 18.0)), arm_counts=(2, 3)))
    plt.close(res.figures["zozo_clicks"])
    drop = res.verdicts[2]
    # drop 5 (SE 1) at both K: the change 0 is within 2 hypot(1, 1) = 2.83; no point decrease
    assert (drop.status, drop.ours) == ("not", 0.0)
    assert drop.reason == ("At T=1e2 the drop goes from 5 (K=2) to 5 (K=3), within 2 SE "
                           "(2.83).")


def test_report_computes_no_bound(monkeypatch):
    """The report reads the bounds from the study: it calls no JAX bound."""
    from ldpjax import bandits

    def boom(*args, **kwargs):
        raise AssertionError("report() computed a bound")

    for name in ("regret_bound_constant", "regret_bound_dynamic"):
        monkeypatch.setattr(bandits, name, boom)
    res = report(_study(_k2()))
    plt.close(res.figures["zozo_clicks"])
    assert res.tables["zozo_bounds"][0]["bound"] == 40.0
