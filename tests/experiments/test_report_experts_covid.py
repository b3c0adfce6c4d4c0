"""Golden tests of ``experts-covid``'s report on a tiny study built by hand.

One state (CA, whose mu = 1 cell is in the paper's table: RW-Meta 55.62, A&S Min Noise 25.09,
Min Regret 16.91, best linear model 61.16), two hospitals, three weeks, two learners, two runs,
the vector reading at mu = 1. Every expected number is worked out in a comment.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from scipy.optimize import brentq
from scipy.stats import norm

from ldpjax.datasets.covid import CovidData
from ldpjax_experiments.experts_covid.readings import READINGS
from ldpjax_experiments.experts_covid.report import report
from ldpjax_experiments.experts_covid.study import Config, CovidStudy, StateStudy

VECTOR = READINGS["vector"]
SOURCE = "SYNTHETIC stand-in CA (tiny, by hand)"


def _state(meta=(50.0, 60.0)) -> StateStudy:
    data = CovidData(
        density=np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]]),
        weeks=("2020-08-02", "2020-08-09", "2020-08-16"), hospitals=("h1", "h2"),
        hospital_names=("one", "two"), state="CA", source=SOURCE, report={},
    )
    m0, m1 = meta
    return StateStudy(
        data=data, labels=("rw-ftpl", "static"), local_points=(("vector", 1.0),),
        central_points=(("vector", 1.0),),
        meta_gain=np.array([[m0, m1]]),  # (point, seed)
        meta_learners=np.array([[[58.0, 62.0], [60.0, 64.0]]]),  # (point, seed, learner)
        meta_curve=np.array([[[m0 / 3] * 3, [m1 / 3] * 3]]),  # (point, seed, week)
        meta_covariance=np.broadcast_to(0.1 * np.eye(2), (1, 2, 2, 2)).copy(),
        ftpl_gain=None,
        tree_gain=np.array([[[24.0, 26.0]], [[16.0, 18.0]]]),  # (setting, cpoint, seed)
        tree_curve=np.full((2, 1, 2, 3), 7.0),
        node_sd=np.array([[3.0], [4.0]]), rate=np.array([[0.1], [0.2]]),
        min_regret_epsilon=np.array([1.5]), min_regret_delta=np.array([1e-5]), levels=2,
        clean_totals=np.array([70.0, 65.0]), clean_curve=np.array([20.0, 45.0, 70.0]),
        best_static=40.0, best_static_curve=np.array([10.0, 25.0, 40.0]), uniform=30.0,
        uniform_curve=np.array([10.0, 20.0, 30.0]), advantage=1.75,
    )


def _study(meta=(50.0, 60.0), data_path="") -> CovidStudy:
    config = Config(
        mus=(1.0,), readings=(VECTOR,), states=("CA",), data_path=data_path, start="", end="",
        with_ftpl=False, weeks=3, data_seed=0, table_heterogeneity=1.0, sweep=(),
        sweep_state="NONE", data_dir="none", real_states=(), seeds=2,
    )
    return CovidStudy(config, 0.0, {"CA": _state(meta)}, (), None)


def _v(result, words):
    (v,) = [v for v in result.verdicts if words in v.claim]
    return v


@pytest.fixture(scope="module")
def result():
    return report(_study())


def test_summary_row_by_hand(result):
    (row,) = result.tables["covid_summary"]
    assert (row["state"], row["mu"], row["n"], row["T"]) == ("CA", 1.0, 2, 3)
    assert row["eta"] == pytest.approx(math.sqrt(2))  # vector sensitivity sqrt(2) / mu
    # RW-Meta (50, 60): mean 55, SE sqrt(50) / sqrt(2) = 5; Min Noise (24, 26): 25, SE 1;
    # Min Regret (16, 18): 17, SE 1; best learner in run max(58, 62), max(60, 64): 63, SE 1
    assert (row["rw_meta"], row["rw_meta_se"]) == pytest.approx((55.0, 5.0))
    assert (row["as_min_noise"], row["as_min_regret"]) == pytest.approx((25.0, 17.0))
    assert row["best_learner_in_run"] == pytest.approx(63.0)
    # 55 / 25 = 2.2, SE sqrt(5^2 + (2.2 * 1)^2) / 25 = sqrt(29.84) / 25 = 0.218504
    assert row["ratio_meta_best_as"] == pytest.approx(2.2)
    assert row["ratio_meta_best_as_se"] == pytest.approx(0.218504, rel=1e-5)
    # paired 55 / 63 = 0.873016; (a - R b) / 63 = (-0.0655077, 0.0655077): SE 0.0655077
    assert row["ratio_meta_best_learner"] == pytest.approx(55 / 63)
    assert row["ratio_meta_best_learner_se"] == pytest.approx(0.0655077, rel=1e-5)
    # 55 - 25 = 30 > 2 hypot(5, 1) = 10.198
    assert row["meta_minus_best_as"] == pytest.approx(30.0)
    assert row["meta_minus_best_as_se"] == pytest.approx(math.hypot(5, 1))
    assert row["meta_beats_both_as"] is True and row["as_beats_meta"] is False
    # static regret 40 - (50, 60) = (-10, -20): -15, SE 5; vs best learner (12, 4): 8, SE 4
    assert (row["meta_static_regret"], row["meta_static_regret_se"]) == pytest.approx((-15, 5))
    assert row["meta_regret_vs_best_learner"] == pytest.approx(8.0)
    assert row["meta_regret_vs_best_learner_se"] == pytest.approx(4.0)
    # learner "static" is best in both runs; "rw-ftpl" as a learner: (58, 60) -> 59, SE 1
    assert (row["best_learner_in_run_mode"], row["best_learner_in_run_share"]) == ("static", 1.0)
    assert row["rw_ftpl_learner_in_run"] == pytest.approx(59.0)
    assert row["rw_ftpl"] is None  # RW-FTPL over the hospitals not run: an empty cell
    assert (row["best_learner_clean"], row["best_learner_clean_label"]) == (70.0, "rw-ftpl")
    # the paper's CA, mu = 1 cell: 55.62 / max(25.09, 16.91) = 2.216820; 55.62 / 61.16
    assert row["paper_ratio_meta_best_as"] == pytest.approx(2.216820, rel=1e-6)
    assert row["paper_ratio_meta_best_learner"] == pytest.approx(0.909418, rel=1e-6)
    # whole run: mu sqrt(T) = sqrt(3); eps at delta 1e-5 of sqrt(3)-GDP (Dong, Roth & Su):
    # delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
    mu_t = math.sqrt(3)
    assert row["run_mu"] == pytest.approx(mu_t)
    eps = brentq(lambda e: norm.cdf(-e / mu_t + mu_t / 2)
                 - math.exp(e) * norm.cdf(-e / mu_t - mu_t / 2) - 1e-5, 0.0, 50.0)
    assert row["run_epsilon"] == pytest.approx(eps, rel=1e-3)
    assert row["data"] == SOURCE


def test_settings_and_gains_tables(result):
    (s,) = result.tables["agarwal_singh_settings"]
    assert (s["min_noise_node_sd"], s["min_regret_node_sd"]) == (3.0, 4.0)
    assert (s["min_regret_epsilon"], s["min_regret_delta"], s["tree_levels"]) == (1.5, 1e-5, 2)
    gains = {g["algorithm"]: g for g in result.tables["covid_gains"]}
    assert gains["RW-Meta"]["mean_total_gain"] == pytest.approx(55.0)
    learners = result.tables["covid_learners"]
    assert [row["gain_clean"] for row in learners] == [70.0, 65.0]


def test_verdicts_pass(result):
    assert len(result.verdicts) == 4
    beats = _v(result, "beats both A&S")
    assert beats.status == "reproduced" and beats.ours == 1.0  # 1 of 1 cell
    win = _v(result, "RW-Meta / best A&S")
    # tolerance 2 * 0.218504 + 0.005 * (1 + 2.216820) / 25.09 = 0.437008 + 0.000641 = 0.437649
    assert win.tolerance == pytest.approx(0.437649, rel=1e-5)
    assert win.status == "reproduced"  # |2.2 - 2.21682| = 0.0168
    near = _v(result, "about 90% of the best learner")
    # tolerance 2 * 0.0655077 + 0 (one cell: no spread) + 0.005 * 1.909418 / 61.16 = 0.131171
    assert near.tolerance == pytest.approx(0.131171, rel=1e-4)
    assert near.status == "reproduced"  # |0.873016 - 0.909418| = 0.0364
    static = _v(result, "negative static regret")
    assert static.status == "reproduced" and static.ours == 1.0  # -15 + 2 * 5 < 0


def test_verdicts_fail():
    bad = report(_study(meta=(20.0, 22.0)))
    (row,) = bad.tables["covid_summary"]
    # 21 - 25 = -4 < -2 hypot(1, 1) = -2.83: A&S ahead
    assert row["as_beats_meta"] is True and row["meta_beats_both_as"] is False
    assert _v(bad, "beats both A&S").status == "not"
    win = _v(bad, "RW-Meta / best A&S")
    # 21 / 25 = 0.84; SE sqrt(1 + 0.84^2) / 25 = 0.0522396; tol 0.104479 + 0.000641
    assert win.ours == pytest.approx(0.84)
    assert win.status == "not"  # |0.84 - 2.2168| = 1.377 > 3 * 0.1051
    # static regret 40 - (20, 22) = (20, 18): positive
    assert _v(bad, "negative static regret").status == "not"


def test_summary_labels_and_figures(result):
    assert result.summary.startswith(
        "COVID hospital task on the SYNTHETIC stand-in (not real data) (CA n=2; T = 3 weeks; "
        "2 runs per cell).")
    assert "Clean tracking advantage (best clean learner / best static hospital): CA 1.75." \
        in result.summary
    assert "vector/vector: RW-Meta / best A&S 2.20..2.20 over 1 finite-mu cells" in result.summary
    assert {v.data for v in result.verdicts} == {"synthetic stand-in"}
    assert result.data == SOURCE
    assert result.extra["data_kind"] == "SYNTHETIC stand-in (not real data)"
    real = report(_study(data_path="hhs.csv"))
    assert real.summary.startswith("COVID hospital task on the real HHS data")
    assert {v.data for v in real.verdicts} == {"real"}
    assert set(result.figures) == {"covid_readings", "covid_cumulative_gain", "covid_data"}
    for fig in result.figures.values():
        FigureCanvasAgg(fig).draw()
