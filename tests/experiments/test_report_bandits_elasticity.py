"""Golden tests of the ``bandits-elasticity`` report on a tiny study built by hand.

One K = 2, one T = 1e4, four budgets gamma = 0.5, 1, 2, 4 (a grid step of log 2 = 0.693).
Expected numbers are worked out in comments from the literal arrays and the closed form
log(1 - K + (K^2 T / (8 log T))^(1/3)); none comes from the report itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpjax_experiments.bandits_elasticity import ElasticityStudy, report

GAMMAS = [0.5, 1.0, 2.0, 4.0]
# closed form at K = 2, T = 1e4: 8 log T = 73.6827, K^2 T / 73.6827 = 542.87, cube root 8.1577,
# 1 - 2 + 8.1577 = 7.1577, log 7.1577 = 1.96818
CLOSED = 1.96818


def _grid(values):  # (gamma,) -> (gamma, K, T)
    return np.asarray(values, np.float64).reshape(-1, 1, 1)


def _study(star_c=1.9682, const=(-0.6, -0.3, 0.01, 0.2), dyn=(-0.5, -0.2, 0.0, 0.0),
           star_d=1.5) -> ElasticityStudy:
    one = lambda x: np.full((1, 1), x, np.float64)  # noqa: E731 - (K, T)
    return ElasticityStudy(
        arm_counts=(2,), horizons=(10_000.0,), gammas=np.asarray(GAMMAS),
        const=_grid(const), dyn=_grid(dyn),
        bound_c=_grid([8000.0, 5000.0, 4000.0, 4500.0]),
        bound_d=_grid([9000.0, 6000.0, 3000.0, 3000.0]),
        star_c=one(star_c), star_d=one(star_d), t_gamma_at_star_d=one(10_000.0),
        bound_c_at_star=one(3990.0), bound_d_at_star=one(3500.0), dyn_left_limit=one(-0.15))


def test_tables_carry_the_grid_and_the_closed_form():
    res = report(_study())
    rows, (star,) = res.tables["elasticity"], res.tables["optimal_budgets"]
    assert [(r["K"], r["T"], r["gamma"]) for r in rows] == [(2, 10_000.0, g) for g in GAMMAS]
    assert [r["elasticity_constant"] for r in rows] == pytest.approx([-0.6, -0.3, 0.01, 0.2])
    assert [r["bound_dynamic"] for r in rows] == pytest.approx([9000, 6000, 3000, 3000])
    assert star["gamma_star_constant"] == pytest.approx(1.9682)
    assert star["gamma_star_constant_closed_form"] == pytest.approx(CLOSED, abs=1e-5)
    assert star["t_gamma_at_gamma_star_dynamic"] == 10_000.0
    assert star["bound_constant_at_star"] == 3990.0 and star["bound_dynamic_at_star"] == 3500.0


def _statuses(study):
    return [(v.status, v.ours) for v in report(study).verdicts]


def test_all_four_verdicts_hold_on_a_consistent_study():
    (paper, closed, sign, dyn) = _statuses(_study())
    assert paper[0] == "reproduced" and paper[1] == pytest.approx(1.9682)  # |1.9682 - 1.97| <= 0.005
    # |1.9682 - 1.96818| = 2e-5 <= 1e-4
    assert closed[0] == "reproduced" and closed[1] == pytest.approx(2e-5, abs=1e-5)
    # signs checked at gamma = 0.5 (|log(0.5 / 1.9682)| = 1.37 > 0.693: < 0, is -0.6) and 4
    # (log(4 / 1.9682) = 0.709 > 0.693: > 0, is 0.2); gamma = 1 (0.677) and 2 (0.016) skipped
    assert sign == ("reproduced", 0.0)
    # dynamic: max over all = 0.0 <= 1e-6; beyond gamma*_dyn = 1.5 (gamma = 2, 4): |0| <= 1e-6
    assert dyn == ("reproduced", 0.0)


def test_paper_value_verdict_grades_the_distance():
    assert _statuses(_study(star_c=1.98))[0][0] == "partly"  # 0.005 < 0.01 <= 0.015
    assert _statuses(_study(star_c=1.99))[0][0] == "not"  # 0.02 > 0.015


def test_autodiff_against_closed_form_fails_beyond_1e_4():
    (paper, closed, _, _) = _statuses(_study(star_c=1.969))
    assert paper[0] == "reproduced"  # |1.969 - 1.97| = 0.001 <= 0.005
    # |1.969 - 1.96818| = 8.2e-4 > 3 x 1e-4
    assert closed[0] == "not" and closed[1] == pytest.approx(8.2e-4, abs=1e-5)


def test_a_wrong_sign_is_counted():
    # gamma = 4 lies above gamma*_const by more than one grid step but has elasticity -0.1
    sign = report(_study(const=(-0.6, -0.3, 0.01, -0.1))).verdicts[2]
    assert sign.status == "not" and sign.ours == 1.0
    # gamma = 1 is within one grid step (0.677 <= 0.693): its wrong sign is not counted
    assert report(_study(const=(-0.6, 0.3, 0.01, 0.2))).verdicts[2].status == "reproduced"


def test_dynamic_elasticity_must_vanish_beyond_gamma_star_dyn():
    v = report(_study(dyn=(-0.5, -0.2, 0.0, -0.01))).verdicts[3]
    assert v.status == "not" and v.ours == pytest.approx(0.01)  # |-0.01| beyond gamma = 1.5
    v = report(_study(dyn=(-0.5, 0.002, 0.0, 0.0))).verdicts[3]
    assert v.status == "not" and v.ours == pytest.approx(0.002)  # a positive elasticity


def test_summary_and_data_label():
    res = report(_study())
    assert res.data == "none (regret bounds only)"
    assert {v.data for v in res.verdicts} == {"none"}
    assert "K in [2], T in ['10000'], 4 gammas in [0.5, 4]" in res.summary
    assert "3 reproduced, 0 partly, 0 not (of 3 paper claims); self-checks: 1 of 1 hold" in (
        res.summary)


def test_figure_legend_and_the_kink():
    fig = report(_study()).figures["elasticity"]
    ax, bx = fig.axes[:2]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["constant (eq. 15), T=1e4", "capped dynamic (eq. 18), T=1e4",
                      "gamma*_const (the bound's minimum)", "gamma*_dyn (t_gamma = T: the kink)",
                      "bound / T > 1: vacuous"]
    drawn = {ln.get_label() for ln in (*ax.lines, *bx.lines, *bx.patches)}
    assert set(legend) <= drawn
    # the dynamic curve's left piece: gamma < 1.5, then the left limit at gamma*_dyn = 1.5
    (left,) = [ln for ln in ax.lines if ln.get_label().startswith("capped")]
    assert list(left.get_xdata()) == [0.5, 1.0, 1.5]
    assert list(left.get_ydata()) == pytest.approx([-0.5, -0.2, -0.15])
    # the gamma* markers sit on the bound curves / T: 3990 / 1e4 and 3500 / 1e4
    marks = {ln.get_label(): (ln.get_xdata()[0], ln.get_ydata()[0]) for ln in bx.lines
             if ln.get_label().startswith("gamma*")}
    assert marks["gamma*_const (the bound's minimum)"] == pytest.approx((1.9682, 0.399))
    assert marks["gamma*_dyn (t_gamma = T: the kink)"] == pytest.approx((1.5, 0.35))
