"""Golden tests of ``quantile-income``'s report on a tiny study built by hand.

Two states, four replications, two runs (each record once; records reused, whose composed
claim is vacuous). Every expected number is worked out in a comment from the literals below.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from ldpjax_experiments.quantile_income import IncomeStudy, Run, report

LOG4, LOG9 = math.log(4.0), math.log(9.0)  # eps of r = 0.6: log(1.6/0.4); r = 0.8: log(1.8/0.2)
T, F = True, False


def _run(key, label, budget, uses, estimate, width, covered, pure, at_delta, state_at_delta,
         state_pure) -> Run:
    return Run(key=key, label=label, budget=budget, lr_scale=100.0, uses=np.array(uses),
               estimate=np.array(estimate), width=np.array(width), covered=np.array(covered),
               ci_low=float(np.array(estimate)[0, 0]) - 0.2,
               ci_high=float(np.array(estimate)[0, 0]) + 0.2, pure=np.array(pure),
               at_delta=at_delta, state_at_delta=np.array(state_at_delta),
               state_pure=np.array(state_pure))


ONCE = _run(
    "once", "each record once, t_T = 2", 2, [1, 1],
    # (setting, seed): states' r_k, then common r = 0.5 and r = 1
    estimate=[[6.1, 5.9, 6.2, 6.0], [6.0] * 4, [6.0] * 4],
    width=[[0.4] * 4, [0.8] * 4, [0.2] * 4],  # narrows as r grows: 0.8 -> 0.2
    covered=[[T, T, T, T], [T] * 4, [T] * 4],
    pure=[LOG9, LOG9, LOG9], at_delta=LOG9, state_at_delta=[LOG4, LOG9], state_pure=[LOG4, LOG9])
REUSE = _run(
    "reuse", "records reused, t_T = 12", 12, [6, 2],
    estimate=[[6.0, 6.4, 6.4, 6.4], [6.0] * 4, [6.0] * 4],
    width=[[0.5] * 4, [0.1] * 4, [0.3] * 4],  # widens as r grows: 0.1 -> 0.3
    covered=[[T, F, F, F], [T] * 4, [T] * 4],
    pure=[6 * LOG4, 6 * LOG4, 6 * LOG4], at_delta=20.0, state_at_delta=[20.0, 4.0],
    state_pure=[6 * LOG4, 2 * LOG9])


def _study(**changes) -> IncomeStudy:
    s = IncomeStudy(
        states=("A", "B"), counts=np.array([2.0, 6.0]), weights=np.array([0.25, 0.75]),
        rates=np.array([0.6, 0.8]), epsilons=np.array([LOG4, LOG9]), min_eps=LOG4,
        per_report=LOG9, local_medians=np.array([5.0, 6.0]), truth=6.0, numpy_median=6.0,
        sweep=(0.5, 1.0), runs=(ONCE, REUSE), schedule="C1", rate_low=0.6, rate_high=0.9,
        level=0.95, delta=1e-6, seeds=4, critical_value=2.0, data_label="real",
        data_text="tiny real table", data_caption="REAL tiny table",
    )
    return s.__class__(**{**s.__dict__, **changes})


@pytest.fixture(scope="module")
def result():
    return report(_study())


def test_estimate_table_by_hand(result):
    once, reuse = result.tables["estimate"]
    assert (once["run"], reuse["run"]) == ("once", "reuse")
    assert (once["states"], once["records"], once["replications"]) == (2, 8, 4)
    assert once["estimate"] == 6.1 and once["ci_low"] == pytest.approx(5.9)
    assert once["estimate_dollars_per_week"] == pytest.approx(math.exp(6.1))
    assert once["true_median_dollars_per_week"] == pytest.approx(403.428793)  # e^6
    assert once["ecp"] == 1.0  # 4 of 4 cover
    assert once["mae"] == pytest.approx(0.1)  # (0.1 + 0.1 + 0.2 + 0) / 4
    assert once["mean_ci_width"] == pytest.approx(0.4)
    assert (once["min_eps"], once["max_eps"]) == pytest.approx((1.386294, 2.197225))
    assert (once["min_uses"], once["max_uses"], once["min_records"]) == (1, 1, 2)
    assert once["claimed_epsilon"] == pytest.approx(LOG9)
    # log((1 - 1e-6) / 1e-6) = 13.8155...
    assert once["vacuous_epsilon"] == pytest.approx(13.815509557963773)
    assert once["vacuous"] is False  # 2.197 < 13.8
    assert reuse["ecp"] == 0.25  # 1 of 4
    assert reuse["mae"] == pytest.approx(0.3)  # (0 + 0.4 * 3) / 4
    assert (reuse["min_uses"], reuse["max_uses"]) == (2, 6)
    assert reuse["claimed_epsilon"] == pytest.approx(8.317766)  # 6 log 4
    assert reuse["epsilon_at_delta"] == 20.0
    assert reuse["vacuous"] is True  # 20 >= 13.8


def test_width_and_state_tables_by_hand(result):
    rows = result.tables["ci_width_vs_r"]
    assert [(r["run"], r["r"]) for r in rows] == [
        ("once", "states' r_k"), ("once", "0.5"), ("once", "1"),
        ("reuse", "states' r_k"), ("reuse", "0.5"), ("reuse", "1")]
    assert [r["mean_r"] for r in rows[:3]] == pytest.approx([0.7, 0.5, 1.0])  # (0.6 + 0.8) / 2
    assert [r["mean_ci_width"] for r in rows] == pytest.approx([0.4, 0.8, 0.2, 0.5, 0.1, 0.3])
    assert rows[0]["se_ci_width"] == pytest.approx(0.0)  # constant widths
    # reuse, r_k: coverage 1/4, binomial SE sqrt(0.25 * 0.75 / 4) = 0.216506
    assert rows[3]["ecp_se"] == pytest.approx(0.216506, abs=1e-6)
    assert rows[3]["mae"] == pytest.approx(0.3)
    states = result.tables["states"]  # from the last (reuse) run
    assert [s["state"] for s in states] == ["A", "B"]
    a = states[0]
    assert (a["records"], a["weight"], a["r"], a["uses"]) == (2, 0.25, 0.6, 6)
    assert a["epsilon"] == pytest.approx(1.386294)
    assert a["composed_epsilon"] == pytest.approx(8.317766)  # 6 * log 4
    assert a["composed_epsilon_at_delta"] == 20.0 and a["local_median"] == 5.0
    assert states[1]["composed_epsilon"] == pytest.approx(4.394449)  # 2 * log 9


def test_verdicts_pass_and_fail(result):
    once = [v for v in result.verdicts if v.claim.startswith("[each record once")]
    reuse = [v for v in result.verdicts if v.claim.startswith("[records reused")]
    assert len(once) == len(reuse) == 3
    cover, narrows, privacy = once
    # tolerance 2 sqrt(0.95 * 0.05 / 4) = 0.217945; |1.0 - 0.95| = 0.05 <= it
    assert cover.status == "reproduced" and cover.ours == 1.0
    assert cover.tolerance == pytest.approx(0.217945, abs=1e-6)
    assert narrows.status == "reproduced" and narrows.ours == pytest.approx(0.25)  # 0.2 / 0.8
    assert privacy.status == "reproduced" and privacy.kind == "self-check"  # 2.197 <= 2.197
    cover, narrows, privacy = reuse
    # |0.25 - 0.95| = 0.70 > 3 * 0.217945 = 0.6538: not
    assert cover.status == "not" and cover.ours == 0.25
    # widths 0.1 -> 0.3: neither narrowing nor narrower at the end; 0.3 / 0.1 = 3
    assert narrows.status == "not" and narrows.ours == pytest.approx(3.0)
    # the composed claim eps = 20 at delta 1e-6 is vacuous (>= 13.8): not, and said so
    assert privacy.status == "not" and privacy.ours == 20.0
    assert privacy.reason.startswith("VACUOUS")


def test_privacy_verdict_partly_when_composed_but_not_vacuous():
    reuse = Run(**{**REUSE.__dict__, "at_delta": 5.0})
    r = report(_study(runs=(ONCE, reuse)))
    privacy = r.verdicts[-1]
    # 2.197 < 5.0 < 13.8: above the per-report eps but not vacuous
    assert privacy.status == "partly" and "not vacuous" in privacy.reason
    assert r.tables["estimate"][1]["vacuous"] is False
    assert "not vacuous." in r.summary


def test_summary_labels_and_figure(result):
    assert result.summary.startswith(
        "National median of log weekly income from 2 state clients (8 records, r_k ~ U[0.6, "
        "0.9], eps_k in [1.39, 2.20]), C1 Local SGD; true pooled median 6.0000 ($403/week). ")
    assert "each record is reported once" in result.summary
    assert "VACUOUS (eps >= log((1 - delta)/delta) = 13.8)" in result.summary
    # paper claims: once covers, once narrows (reproduced); reuse covers, reuse narrows (not)
    assert "2 reproduced, 0 partly, 2 not (of 4 paper claims); self-checks: 1 of 2 hold" \
        in result.summary
    assert result.data == "tiny real table"
    assert {v.data for v in result.verdicts} == {"real"}
    assert result.extra == {"critical_value": 2.0}
    stand_in = report(_study(data_label="synthetic stand-in", data_text="SYNTHETIC stand-in",
                             data_caption="SYNTHETIC stand-in table"))
    assert stand_in.data == "SYNTHETIC stand-in"
    assert {v.data for v in stand_in.verdicts} == {"synthetic stand-in"}
    fig = stand_in.figures["income"]
    assert "Data: SYNTHETIC stand-in table." in fig.get_suptitle()
    FigureCanvasAgg(fig).draw()
    FigureCanvasAgg(result.figures["income"]).draw()
    ax = result.figures["income"].axes[0]
    _, labels = ax.get_legend_handles_labels()
    assert labels == ["each record once, t_T = 2: common r", "each record once, t_T = 2: states' r_k",
                      "records reused, t_T = 12: common r", "records reused, t_T = 12: states' r_k"]
