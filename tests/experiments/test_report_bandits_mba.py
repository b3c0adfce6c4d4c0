"""Golden tests of the ``bandits-mba`` report on tiny studies built by hand.

Two arms (CTRs 0.3 / 0.2), budgets gamma = 0.5 and 3 (3 is the grid's top, the one the verdicts
judge), two runs per policy, horizons T = 100 (and T = 1000 where a verdict needs two). Every
expected number is worked out in a comment from the literal arrays; none comes from the report.
With two runs a and b: mean (a + b) / 2, sd (ddof 0) |a - b| / 2, SE = sd (ddof 1) / sqrt 2
= |a - b| / 2; a paired difference d = (d1, d2) has mean (d1 + d2) / 2 and SE |d1 - d2| / 2.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from ldpjax_experiments.bandits_mba import MbaStudy, report  # noqa: E402
from ldpjax_experiments.bandits_simulation import PolicyRuns  # noqa: E402

INF = math.inf
DATA_TEXT = ("MBA website RCT CTRs (0.3, 0.2) (Liberali & Ferecatu 2022, as reported in the "
             "paper); no data file needed")


def _cell(T, policy, gamma, regret, clicks=(40.0, 44.0), spend=(0.0, 0.0), locked=(0.0, 0.0),
          bound=math.nan, bound_simple=math.nan):
    a = lambda x: np.asarray(x, np.float64)  # noqa: E731
    return PolicyRuns(2, T, policy, gamma, a(regret), a(clicks), a(spend), a(locked),
                      "per-visitor", bound, bound_simple)


def _t100(dyn_regret=(4.0, 6.0), const3_regret=(14.0, 18.0), const3_bound=32.0,
          dyn_spend=(2.0, 3.0)):
    return [
        _cell(100, "constant", 0.5, (10.0, 12.0), clicks=(20.0, 24.0), spend=(0.5, 0.5),
              locked=(0.0, 1.0), bound=100.0, bound_simple=25.0),
        _cell(100, "constant", 3.0, const3_regret, clicks=(30.0, 30.0), spend=(3.0, 3.0),
              locked=(1.0, 1.0), bound=const3_bound, bound_simple=8.0),
        _cell(100, "dynamic", 3.0, dyn_regret, spend=dyn_spend, bound=50.0, bound_simple=12.5),
        _cell(100, "nonprivate", INF, (4.0, 6.0)),
    ]


def _study(cells, horizons=(100,), diagnostics=None) -> MbaStudy:
    return MbaStudy(
        cells=tuple(cells), ctr=(0.3, 0.2), gammas=(0.5, 3.0), horizons=horizons,
        runs_per={h: 2 for h in horizons},
        diagnostics=diagnostics or {h: () for h in horizons}, diagnostic_min_horizon=1000,
        t_gamma=5000.0, init_visits=None, block_growth=0.01, exact_max_horizon=100_000, seeds=2,
        data_label="real extract", data_text=DATA_TEXT)


def _close(fig):
    plt.close(fig)


def test_tables_from_the_per_run_arrays():
    res = report(_study(_t100()))
    _close(res.figures["mba_regret_clicks"])
    rows = res.tables["mba"]
    assert [(r["policy"], r["gamma"], r["grid"]) for r in rows] == [
        ("constant", 0.5, "paper"), ("constant", 3.0, "paper"), ("dynamic", 3.0, "paper"),
        ("nonprivate", INF, "paper")]
    r = rows[0]  # regret (10, 12), clicks (20, 24), locked (0, 1), spend (0.5, 0.5)
    assert (r["T"], r["runs"], r["simulation"]) == (100, 2, "per-visitor")
    assert r["regret_mean"] == 11.0  # (10 + 12) / 2
    assert r["regret_sd"] == 1.0  # |10 - 12| / 2
    assert r["regret_se"] == pytest.approx(1.0)  # sd(ddof 1) sqrt(2) / sqrt(2)
    assert (r["clicks_mean"], r["clicks_sd"]) == (22.0, 2.0)
    assert r["clicks_se"] == pytest.approx(2.0)
    assert r["clicks_q25"] == 21.0 and r["clicks_q75"] == 23.0  # 20 + 0.25 * 4, 20 + 0.75 * 4
    assert r["locked_in"] == 0.5 and r["spend_max"] == 0.5
    assert rows[1]["regret_mean"] == 16.0 and rows[1]["locked_in"] == 1.0  # (14 + 18) / 2
    bounds = res.tables["mba_bounds"]  # constant and dynamic only: no row for nonprivate
    assert [(b["policy"], b["gamma"]) for b in bounds] == [
        ("constant", 0.5), ("constant", 3.0), ("dynamic", 3.0)]
    # 11 / 100, 16 / 32, 5 / 50
    assert [b["regret_over_bound"] for b in bounds] == pytest.approx([0.11, 0.5, 0.1])
    assert [b["bound_simple"] for b in bounds] == [25.0, 8.0, 12.5]
    paired = res.tables["mba_paired"]
    assert [p["comparison"] for p in paired] == [
        "dynamic - nonprivate at gamma=3", "constant at gamma=3 - constant at its best "
        "gamma=0.5", "constant - dynamic at gamma=3"]
    got = [v for p in paired for v in (p["mean_difference"], p["paired_se"])]
    # (4 - 4, 6 - 6) = (0, 0); (14 - 10, 18 - 12) = (4, 6): 5, SE 1; (14 - 4, 18 - 6) = (10, 12)
    assert got == pytest.approx([0.0, 0.0, 5.0, 1.0, 11.0, 1.0])
    assert all(p["runs"] == 2 for p in paired)


def test_verdicts_hold_on_a_consistent_study():
    res = report(_study(_t100()))
    _close(res.figures["mba_regret_clicks"])
    approach, peak, bound, budget = res.verdicts  # one horizon: no advantage verdict
    assert (approach.status, approach.ours) == ("reproduced", 1.0)  # paired (0, 0): within 2 SE
    # t_gamma = 5000 >= every horizon (100)
    assert "t_gamma = 5e+03 on, after every horizon" in approach.measure
    assert (peak.status, peak.ours) == ("reproduced", 1.0)  # rise 5 > 2 x SE 1
    assert (bound.status, bound.ours) == ("reproduced", 0.5)  # worst 16 / 32
    assert (budget.status, budget.ours, budget.kind) == ("reproduced", 1.0, "self-check")  # 3 / 3
    assert {v.data for v in res.verdicts} == {"real extract"}
    assert res.data == DATA_TEXT
    assert "runs per policy 2 at T=100" in res.summary
    # locked in at gamma = 3: constant (1, 1) -> 100%, dynamic (0, 0) -> 0%
    assert "constant 100.0% (T=1e2); dynamic 0.0% (T=1e2)" in res.summary
    assert ("Verdicts: 3 reproduced, 0 partly, 0 not (of 3 paper claims); self-checks: 1 of 1 "
            "hold.") in res.summary
    assert "(+ diagnostic" not in res.summary
    assert res.extra == {"block_growth": 0.01, "exact_max_horizon": 100_000,
                         "runs_per_horizon": {"100": 2}, "init_visits": "K"}


def test_verdicts_fail_on_an_inconsistent_study():
    res = report(_study(_t100(dyn_regret=(10.0, 12.0), const3_regret=(11.0, 12.0),
                              const3_bound=8.0, dyn_spend=(2.0, 3.3))))
    _close(res.figures["mba_regret_clicks"])
    approach, peak, bound, budget = res.verdicts
    # dynamic - nonprivate = (10 - 4, 12 - 6) = (6, 6): mean 6, SE 0 -> beyond 2 SE
    assert (approach.status, approach.ours) == ("not", 0.0)
    assert "differs from the non-private one by 6 (2 paired SE = 0)" in approach.reason
    # rise = (11 - 10, 12 - 12) = (1, 0): mean 0.5, SE 0.5, within 2 SE -> unresolved; the best
    # gamma is inside the grid -> partly
    assert (peak.status, peak.ours) == ("partly", 0.0)
    assert "within 2 paired SE (1) of 2 runs" in peak.reason
    assert (bound.status, bound.ours) == ("not", pytest.approx(1.4375))  # 11.5 / 8
    assert (budget.status, budget.ours) == ("not", pytest.approx(1.1))  # 3.3 / 3
    assert ("Verdicts: 0 reproduced, 1 partly, 2 not (of 3 paper claims); self-checks: 0 of 1 "
            "hold.") in res.summary


def _t1000(const3_regret=(40.0, 44.0)):
    return [
        _cell(1000, "constant", 0.5, (50.0, 54.0), spend=(0.5, 0.5), bound=1000.0),
        _cell(1000, "constant", 3.0, const3_regret, spend=(3.0, 3.0), bound=1000.0),
        _cell(1000, "dynamic", 3.0, (2.0, 4.0), spend=(3.0, 3.0), bound=1000.0),
        _cell(1000, "nonprivate", INF, (2.0, 4.0)),
        _cell(1000, "constant", 6.0, (60.0, 62.0), spend=(6.0, 6.0), bound=1000.0),
    ]


def test_advantage_grows_and_the_diagnostic_budget_is_quoted():
    res = report(_study(_t100() + _t1000(), horizons=(100, 1000),
                        diagnostics={100: (), 1000: (6.0,)}))
    fig = res.figures["mba_regret_clicks"]
    assert res.tables["mba"][-1]["grid"] == "diagnostic"  # constant at gamma = 6 (not in grid)
    approach, peak, advantage, bound, budget = res.verdicts
    # constant - dynamic at gamma = 3: T=100 (10, 12) -> 11, SE 1; T=1000 (38, 40) -> 39, SE 1;
    # 39 - 11 = 28 > 2 hypot(1, 1) = 2.83 -> grows
    assert (advantage.status, advantage.ours) == ("reproduced", 1.0)
    # T=100 peaks; at T=1000 the means are 52 (gamma 0.5) > 42 (gamma 3): still falling at the
    # top (edge), and the diagnostic gamma = 6 (mean 61) lies above 42
    assert (peak.status, peak.ours) == ("partly", 0.5)
    assert ("regret still falls at the grid's top gamma=3 (42; 52 at 0.5), and rises beyond it "
            "(diagnostic: 61 at 6), so its minimum is at the top of the paper's grid"
            ) in peak.reason
    edge_row = res.tables["mba_paired"][4]  # T=1000: the last step 40 - 50, 44 - 54 = (-10, -10)
    assert edge_row["comparison"] == ("constant at gamma=3 - constant at gamma=0.5 (best gamma "
                                      "at the top of the grid)")
    assert (edge_row["mean_difference"], edge_row["paired_se"]) == (-10.0, 0.0)
    assert "(+ diagnostic constant gamma [6.0] at T >= 1,000)" in res.summary
    assert (bound.status, budget.status) == ("reproduced", "reproduced")
    # legend: one entry per drawn series, the bounds' lines carry the bounds
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert sorted(labels) == sorted([
        "constant", "dynamic", "constant, gamma beyond the paper's grid (diagnostic)",
        "nonprivate (no budget)", "constant bound (eq. 15)", "dynamic bound (eq. 18)"])
    bound_axes = fig.axes[2 * 2]  # row 3 (bounds), column 1 (T = 100)
    lines = {ln.get_label(): list(ln.get_ydata()) for ln in bound_axes.lines}
    assert lines == {"constant bound (eq. 15)": [100.0, 32.0], "dynamic bound (eq. 18)": [50.0]}
    _close(fig)


def test_advantage_that_falls_is_not_reproduced():
    res = report(_study(_t100() + _t1000(const3_regret=(10.0, 12.0)), horizons=(100, 1000)))
    _close(res.figures["mba_regret_clicks"])
    advantage = res.verdicts[2]
    # T=1000: (10 - 2, 12 - 4) = (8, 8) -> 8, SE 0; 8 - 11 = -3 < -2 hypot(1, 0) = -2 -> falls
    assert (advantage.status, advantage.ours) == ("not", 0.0)
    # eps_gamma = 2 / (2 + e^3 - 1) = 2 / 21.0855 = 0.0949; eps_dyn(T=1e3) = (2 ln 1000 /
    # 1000)^(1/3) = 0.0138155^(1/3) = 0.23996 (0.24^3 = 0.013824) > eps_gamma
    assert ("The advantage falls from 11 at T=1e2 to 8 at T=1e3: the constant strategy's fixed "
            "eps = 0.0949 explores less than the dynamic decay still does at T=1e3 (eps = "
            "0.2400)") in advantage.reason


def test_report_computes_no_bound(monkeypatch):
    """The report reads the bounds and t_gamma from the study: it calls no JAX bound."""
    from ldpjax import bandits

    def boom(*args, **kwargs):
        raise AssertionError("report() computed a bound")

    for name in ("regret_bound_constant", "regret_bound_dynamic", "budget_exhaustion_time"):
        monkeypatch.setattr(bandits, name, boom)
    res = report(_study(_t100()))
    _close(res.figures["mba_regret_clicks"])
    assert res.tables["mba_bounds"][0]["bound"] == 100.0
