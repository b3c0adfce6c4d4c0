"""Golden tests of ``experts-amplification``'s report on a tiny study built by hand.

Every expected number is worked out on paper in a comment from the literal study below; the
report is a pure function of the study (no keys, no simulation), so these tests take no JAX
compilation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from ldpjax_experiments.experts_amplification.report import report
from ldpjax_experiments.experts_amplification.study import (
    ANALYTIC_ENV,
    AmplificationStudy,
    BatchStudy,
    PrivacyPanel,
    PrivacyStudy,
    RegretStudy,
)


def _study(**changes) -> AmplificationStudy:
    """One mu, two checkpoints, two seeds; two environments; one (n, t) privacy panel."""
    regret = RegretStudy(
        checkpoints=(10, 20),
        # (mu, seed, checkpoint)
        regret_ftpl=np.array([[[1.0, 2.0], [3.0, 6.0]]]),
        regret_adabatch=np.array([[[1.0, 4.0], [3.0, 8.0]]]),
        batches=np.array([[[5, 4], [5, 6]]]),
        bound_ftpl=np.array([[10.0, 20.0]]),
        bound_adabatch=np.array([[10.05, 20.1]]),
    )
    batches = BatchStudy(
        rounds=(10, 100),
        environments=("tied (worst case)", "gap 0.2"),
        gaps=(0.0, 0.2),
        sizes=(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[4.0, 10.0], [6.0, 20.0]])),
        analytic_sizes=np.array([1.0, 2.0, 4.0]),
        analytic_weights=np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]]),
    )
    panel = PrivacyPanel(
        n=10, t=1000, simulated=np.array([2.0, 4.0]), sizes=np.array([1.0, 2.0, 4.0]),
        weights=np.array([0.25, 0.25, 0.5]),
        delta_analytic=np.array([[0.4, 0.05, 1e-4, 1e-6, 1e-8]]),
        delta_mc=np.array([[0.4, 0.05, 2e-4, 2e-6, 1e-8]]),
        delta_se=np.array([[0.01, 0.01, 1e-4, 1e-6, 0.0]]),
        tradeoff_analytic=np.array([0.6, 0.35, 0.0]),
        tradeoff_mc=np.array([0.6, 0.36, 0.0]),
        tradeoff_se=np.array([0.01, 0.01, 0.0]),
    )
    privacy = PrivacyStudy(
        eps_grid=np.array([0.0, 0.5, 1.0, 1.5, 2.0]), eps_step=0.5, eps_show=(0.5, 1.0, 2.0),
        fpr=np.array([0.1, 0.5, 1.0]),
        delta_plain=np.array([[0.5, 0.1, 1e-3, 1e-4, 1e-6]]),
        tradeoff_plain=np.array([0.5, 0.3, 0.0]), eps_plain=(1.9,), panels=(panel,),
    )
    s = AmplificationStudy(
        mus=(1.0,), experts=10, horizon=20, gap=0.1, alpha=0.01, batch_horizon=100,
        batch_runs=2, privacy_experts=(10,), privacy_rounds=(1000,), privacy_mu=1.0,
        mc_runs=2, seeds=2, data_label="synthetic", data_text="synthetic gains (tiny)",
        regret=regret, batches=batches, privacy=privacy,
    )
    return s._replace(**changes)


def _by_claim(result, words: str):
    (v,) = [v for v in result.verdicts if words in v.claim]
    return v


@pytest.fixture(scope="module")
def passing():
    return report(_study())


def test_regret_table_by_hand(passing):
    rows = passing.tables["regret"]
    assert [(r["mu"], r["T"]) for r in rows] == [(1.0, 10), (1.0, 20)]
    first, second = rows
    # T = 10: FTPL runs 1, 3 -> mean 2, sd sqrt(2), SE sqrt(2)/sqrt(2) = 1; AdaBatch the same.
    assert first["regret_ftpl"] == pytest.approx(2.0)
    assert first["se_ftpl"] == pytest.approx(1.0)
    assert first["regret_adabatch"] == pytest.approx(2.0)
    assert first["ratio_adabatch_ftpl"] == pytest.approx(1.0)
    # ratio SE: sd(ra - 1 * rf) = sd(0, 0) = 0
    assert first["ratio_se"] == pytest.approx(0.0)
    # 10 rounds / mean(5, 5) batches = 2
    assert first["mean_batch_length"] == pytest.approx(2.0)
    # T = 20: FTPL 2, 6 -> mean 4, SE sqrt(8)/sqrt(2) = 2; AdaBatch 4, 8 -> mean 6, SE 2.
    assert second["regret_ftpl"] == pytest.approx(4.0)
    assert second["se_ftpl"] == pytest.approx(2.0)
    assert second["regret_adabatch"] == pytest.approx(6.0)
    assert second["se_adabatch"] == pytest.approx(2.0)
    assert second["ratio_adabatch_ftpl"] == pytest.approx(1.5)  # 6 / 4
    # ra - 1.5 rf = (4 - 3, 8 - 9) = (1, -1): sd sqrt(2); / (sqrt(2) * 4) = 0.25
    assert second["ratio_se"] == pytest.approx(0.25)
    assert second["mean_batch_length"] == pytest.approx(4.0)  # 20 / mean(4, 6)
    assert second["bound_adabatch"] == pytest.approx(20.1)
    # within bound: 6 <= 20.1 + 3 * 2
    assert second["adabatch_within_bound"] is True
    # paired excess ra - 1.005 rf = (1.99, 1.97): mean 1.98 > 3 SE = 3 * 0.01
    assert second["adabatch_within_factor"] is False
    assert passing.extra["adabatch_within_bound"] is True
    assert passing.extra["adabatch_within_factor"] is False


def test_batch_table_by_hand(passing):
    rows = passing.tables["batch_sizes"]
    assert [(r["environment"], r["t"]) for r in rows] == [
        ("tied (worst case)", 10), ("tied (worst case)", 100), ("gap 0.2", 10), ("gap 0.2", 100),
        (ANALYTIC_ENV, 10), (ANALYTIC_ENV, 100)]
    tied10 = rows[0]
    # runs (1, 3): mean 2, median 2, linear quantiles 1 + 0.1 * 2 = 1.2 and 1 + 0.9 * 2 = 2.8,
    # SE sqrt(2) / sqrt(2) = 1
    assert (tied10["mean_batch"], tied10["median_batch"]) == pytest.approx((2.0, 2.0))
    assert (tied10["q10"], tied10["q90"]) == pytest.approx((1.2, 2.8))
    assert tied10["se_mean_batch"] == pytest.approx(1.0)
    assert tied10["source"] == "simulated (2 runs)" and tied10["mu"] == 1.0
    gap100 = rows[3]
    assert gap100["mean_batch"] == pytest.approx(15.0)  # (10 + 20) / 2
    assert gap100["gap"] == 0.2
    a10, a100 = rows[4], rows[5]
    # law at t = 10: sizes (1, 2, 4) with weights (0.5, 0.5, 0): mean 1.5, CDF (0.5, 1, 1):
    # median = first size with CDF >= 0.5 = 1, q10 = 1, q90 = 2
    assert a10["mean_batch"] == pytest.approx(1.5)
    assert (a10["median_batch"], a10["q10"], a10["q90"]) == (1.0, 1.0, 2.0)
    # t = 100: weights (0.25, 0.25, 0.5): mean 0.25 + 0.5 + 2 = 2.75; CDF (0.25, 0.5, 1):
    # median 2, q10 1, q90 4
    assert a100["mean_batch"] == pytest.approx(2.75)
    assert (a100["median_batch"], a100["q10"], a100["q90"]) == (2.0, 1.0, 4.0)
    assert a100["se_mean_batch"] == 0.0


def test_privacy_table_by_hand(passing):
    (row,) = passing.tables["privacy"]
    assert (row["n"], row["t"], row["mu"], row["mc_runs"]) == (10, 1000, 1.0, 2)
    assert row["mean_batch_mc"] == pytest.approx(3.0)  # (2 + 4) / 2
    assert row["mean_batch_analytic"] == pytest.approx(2.75)  # 0.25 + 0.5 + 2
    # eps = 0.5, 1, 2 sit at grid indices 1, 2, 4 (step 0.5)
    assert row["delta_plain@eps=0.5"] == pytest.approx(0.1)
    assert row["delta_analytic@eps=1"] == pytest.approx(1e-4)
    assert row["delta_mc@eps=2"] == pytest.approx(1e-8)
    assert row["se_mc@eps=1"] == pytest.approx(1e-4)
    assert row["eps_plain@delta=1e-5"] == 1.9
    # first grid eps with delta <= 1e-5: analytic 1e-6 at index 3 -> 1.5; Monte Carlo 2e-6 -> 1.5
    assert row["eps_analytic@delta=1e-5"] == 1.5
    assert row["eps_mc@delta=1e-5"] == 1.5
    # MC - 2 SE = (0.38, 0.03, 0, 0, 1e-8): first <= 1e-5 at index 2 -> 1.0;
    # MC + 2 SE = (0.42, 0.07, 4e-4, 4e-6, 1e-8): index 3 -> 1.5
    assert row["eps_mc_lo@delta=1e-5"] == 1.0
    assert row["eps_mc_hi@delta=1e-5"] == 1.5
    # (MC - analytic) / SE = (0, 0, 1, 1, 0 where SE = 0): max 1
    assert row["max_mc_excess_in_se"] == pytest.approx(1.0)
    assert passing.extra["max_mc_excess_in_se"] == pytest.approx(1.0)


def test_verdicts_pass_on_the_passing_study(passing):
    assert len(passing.verdicts) == 6
    ftpl = _by_claim(passing, "RW-FTPL regret")
    # max(2 / 10, 4 / 20) = 0.2; 2 <= 10 + 2 * 1 and 4 <= 20 + 2 * 2
    assert ftpl.status == "reproduced" and ftpl.ours == pytest.approx(0.2)
    ada = _by_claim(passing, "RW-AdaBatch regret")
    assert ada.status == "reproduced" and ada.ours == pytest.approx(6 / 20.1)  # max(2/10.05, 6/20.1)
    grows = _by_claim(passing, "batches grow with the gap")
    assert grows.status == "reproduced" and grows.ours == pytest.approx(5.0)  # 15 / 3
    assert "t=100" in grows.measure
    bound = _by_claim(passing, "never below the Monte Carlo one")
    assert bound.status == "reproduced" and bound.ours == pytest.approx(1.0)  # 1 SE <= 3 SE
    amp = _by_claim(passing, "amplifies privacy")
    # analytic 1.5 < un-amplified 1.9
    assert amp.status == "reproduced" and (amp.ours, amp.paper) == (1.5, 1.9)
    tight = _by_claim(passing, "tight at small delta")
    # 1.0 - 0.5 <= 1.5 <= 1.5 + 0.5; |1.5 - 1.5| = 0
    assert tight.status == "reproduced" and tight.ours == 0.0
    assert passing.extra["batches_grow_with_gap"] is True


def test_verdicts_fail_on_a_failing_study():
    s = _study()
    regret = s.regret._replace(
        regret_ftpl=np.array([[[2.0, 4.0], [2.0, 4.0]]]),  # no spread: SE 0
        bound_ftpl=np.array([[1.0, 1.0]]),
    )
    batches = s.batches._replace(sizes=(s.batches.sizes[0], np.array([[1.0, 1.0], [1.0, 1.0]])))
    panel = s.privacy.panels[0]._replace(delta_mc=np.array([[0.4, 0.05, 6e-4, 2e-6, 1e-8]]))
    privacy = s.privacy._replace(panels=(panel,), eps_plain=(1.0,))
    bad = report(_study(regret=regret, batches=batches, privacy=privacy))
    ftpl = _by_claim(bad, "RW-FTPL regret")
    assert ftpl.status == "not" and ftpl.ours == pytest.approx(4.0)  # max(2 / 1, 4 / 1)
    grows = _by_claim(bad, "batches grow with the gap")
    # final means: tied 3, gap 1: not growing, and 1 < 3 so not even partly; 1 / 3
    assert grows.status == "not" and grows.ours == pytest.approx(1 / 3)
    bound = _by_claim(bad, "never below the Monte Carlo one")
    # (6e-4 - 1e-4) / 1e-4 = 5 SE > 3 SE
    assert bound.status == "not" and bound.ours == pytest.approx(5.0)
    amp = _by_claim(bad, "amplifies privacy")
    assert amp.status == "not"  # 1.5 is not below 1.0
    assert bad.extra["batches_grow_with_gap"] is False


def test_summary_data_and_labels():
    s = _study(data_label="synthetic stand-in", data_text="a stand-in")
    result = report(s)
    assert result.data == "a stand-in"
    assert {v.data for v in result.verdicts} == {"synthetic stand-in"}
    assert result.summary.startswith(
        "Regret: n=10, static Bernoulli gap 0.1, T=20, 2 seeds, alpha=0.01, mu in [1.0]. "
        "Batch sizes: t up to 100, 2 runs, mu=1.0. Privacy of round t: n in [10], t in [1000], "
        "2 Monte Carlo runs.\nVerdicts: 6 reproduced, 0 partly, 0 not (of 6 paper claims).")
    for fig in result.figures.values():
        FigureCanvasAgg(fig).draw()
    assert set(result.figures) == {"regret", "batch_sizes", "privacy_tradeoff", "privacy_delta"}
    ax = result.figures["batch_sizes"].axes[0]
    _, labels = ax.get_legend_handles_labels()
    assert labels == ["tied (worst case): mean", "gap 0.2: mean",
                      "analytic worst case (Thm 2): mean"]
    # one drawn line per legend entry, in the same order
    assert [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")
            ] == labels
    assert math.isfinite(result.extra["max_mc_excess_in_se"])
