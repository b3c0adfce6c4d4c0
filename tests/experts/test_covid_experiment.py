"""``experts-covid`` (issue 11): the three privacy-unit readings side by side with the paper's
values, the computed verdicts, the dynamics sweep, the real-data panel and the figures.

One tiny end-to-end run (stand-in NM, 20 weeks, mu in {inf, 1}, 3 runs) is shared by the
tests of this module; the statistical behaviour of the algorithms is tested in their own
modules. Pure helpers (readings, verdict logic, break-even, ratio SEs) are tested directly.
The end-to-end run on the real 5-week extract (moved here from ``test_covid_experiment_run.py``)
is sized to reuse the programs its real-data panel compiled (kernels are shared only within a
module).
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

from ldpjax.experts.learners import evaluate_learners, paper_learners
from ldpjax_experiments import experts_covid as E
from ldpjax_experiments.base import get_experiment
from ldpjax_experiments.runner import run_experiment
from tests.experiments.test_figures import _check_figure, strict_problems

EXTRACT = "covid/hhs_facility_NM_PA_CA_2022-09-23_to_2022-10-21.csv"
TINY = {
    "states": ("NM",),
    "weeks": 20,
    "mu": (math.inf, 1.0),
    "wave_heterogeneity": (0.35, 1.0),
    "sweep_state": "NM",
    "real_states": ("NM",),
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, request):
    from tests.conftest import SHARED_DATA

    overrides = dict(TINY, data_dir=str(SHARED_DATA) if SHARED_DATA.is_dir() else "none")
    result, out = run_experiment(
        get_experiment("experts-covid"),
        seeds=3,
        out_dir=tmp_path_factory.mktemp("covid"),
        overrides=overrides,
        show_progress=False,
        quiet=True,
    )
    return result, out, SHARED_DATA.is_dir()


# --------------------------------------------------------------------------- readings
def test_readings_and_privacy_unit_option():
    base = {
        "privacy_unit": "hospital",
        "readings": ("hospital", "vector", "mixed"),
        "ldp_sensitivity": "",
        "central_sensitivity": "",
    }
    names = [r.name for r in E._readings(base)]
    assert names == ["hospital", "vector", "mixed"]  # headline first
    assert [r.name for r in E._readings(dict(base, privacy_unit="vector"))][0] == "vector"
    mixed = E.READINGS["mixed"]
    assert (mixed.ldp, mixed.central) == ("hospital", "vector")
    assert "not a like-for-like comparison" in mixed.protects()
    for unit in ("hospital", "vector"):
        r = E.READINGS[unit]
        assert r.ldp == r.central == unit  # one relation for both models
    custom = E._readings(dict(base, central_sensitivity="1"))
    assert [(r.name, r.ldp, r.central) for r in custom] == [("custom", "vector", "hospital")]
    assert E._sensitivity("hospital", 100) == 1.0 and E._sensitivity("vector", 100) == 10.0
    with pytest.raises(ValueError, match="privacy_unit"):
        E._readings(dict(base, privacy_unit="state"))
    with pytest.raises(ValueError, match="readings"):
        E._readings(dict(base, readings=("hospital", "both")))
    with pytest.raises(ValueError, match="sensitivity"):
        E._readings(dict(base, ldp_sensitivity="-2"))


# --------------------------------------------------------------------------- pure helpers
def test_ratio_standard_errors():
    rng = np.random.default_rng(0)
    b = rng.uniform(10, 20, 50)
    r, se = E._ratio_paired(2 * b, b)
    assert r == pytest.approx(2.0) and se == pytest.approx(0.0, abs=1e-12)  # exact ratio
    a = rng.normal(30, 3, 400)
    c = rng.normal(15, 1.5, 400)
    r, se = E._ratio_independent(a, c)
    # delta method: var(a/c) ~ (var_a + R^2 var_c) / (n mean_c^2) ~ (9 + 4 * 2.25) / (400 * 225)
    assert se == pytest.approx(math.sqrt(18 / (400 * 225)), rel=0.15)


def test_break_even_interpolates_the_first_crossing():
    assert E._break_even(np.array([1.0, 2.0, 3.0]), np.array([0.5, 1.5, 2.0])) == pytest.approx(1.5)
    assert E._break_even(np.array([3.0, 1.0]), np.array([2.0, 0.0])) == pytest.approx(2.0)
    assert E._break_even(np.array([1.0, 2.0]), np.array([1.2, 1.4])) is None


def _row(reading, state, mu, meta, best_as, se=0.5, static=-1.0):
    paper = E.PAPER.get((state, mu))
    return {
        "reading": reading.title,
        "state": state,
        "mu": mu,
        "meta_beats_both_as": meta - best_as > 2 * se * math.sqrt(2),
        "as_beats_meta": best_as - meta > 2 * se * math.sqrt(2),
        "ratio_meta_best_as": meta / best_as,
        "ratio_meta_best_as_se": 0.01,
        "ratio_meta_best_learner": 0.9,
        "ratio_meta_best_learner_se": 0.01,
        "meta_static_regret": static,
        "meta_static_regret_se": 0.2,
        "paper_rw_meta": paper[0] if paper else None,
        "paper_as_min_noise": paper[1] if paper else None,
        "paper_as_min_regret": paper[2] if paper else None,
        "paper_best_linear_model": paper[3] if paper else None,
        "paper_ratio_meta_best_as": paper[0] / max(paper[1], paper[2]) if paper else None,
        "paper_ratio_meta_best_learner": paper[0] / paper[3] if paper else None,
    }


def test_verdicts_are_computed_from_the_rows():
    h, v = E.READINGS["hospital"], E.READINGS["vector"]
    rows = [
        _row(h, "CA", 1.0, 55.62, 25.09),  # the paper's own numbers: every claim holds
        _row(h, "CA", 0.25, 33.34, 17.93),
        _row(v, "CA", 1.0, 20.0, 30.0, static=5.0),  # A&S ahead, positive static regret
        _row(v, "CA", 0.25, 30.0, 20.0, static=5.0),
    ]
    out = {
        (vd.claim.split("]")[0] + "]", vd.claim.split("] ")[1][:12]): vd
        for vd in E._verdicts(rows, [h, v], runs=20)
    }
    assert out[("[hospital/hospital]", "RW-Meta beat")].status == "reproduced"
    assert out[("[hospital/hospital]", "RW-Meta / be")].status == "reproduced"
    assert out[("[hospital/hospital]", "RW-Meta reac")].status == "reproduced"
    assert out[("[hospital/hospital]", "RW-Meta has ")].status == "reproduced"
    assert out[("[vector/vector]", "RW-Meta beat")].status == "partly"  # 1 of 2 cells
    assert out[("[vector/vector]", "RW-Meta / be")].status == "not"
    assert out[("[vector/vector]", "RW-Meta has ")].status == "not"
    assert out[("[vector/vector]", "RW-Meta beat")].ours == pytest.approx(0.5)
    assert len(out) == 8


# --------------------------------------------------------------------------- end to end
def test_table_has_the_three_readings_side_by_side_with_the_paper(tiny):
    result, _, _ = tiny
    rows = result.tables["covid_summary"]
    titles = [r.title for r in E.READINGS.values()]
    assert [(r["reading"], r["mu"]) for r in rows] == [
        (t, mu) for t in titles for mu in (math.inf, 1.0)
    ]
    for r in rows:
        assert r["protects"]
        for key in (
            "rw_meta",
            "as_min_noise",
            "as_min_regret",
            "best_learner_in_run",
            "best_fixed_hospital",
            "uniform",
            "ratio_meta_best_as",
            "ratio_meta_best_learner",
        ):
            assert key in r and key + "_se" in r
            assert math.isfinite(r[key])
        assert 0 <= r["uniform"] <= r["best_fixed_hospital"] <= 20
    mu1 = {r["reading"]: r for r in rows if r["mu"] == 1.0}
    assert mu1[titles[0]]["paper_rw_meta"] == pytest.approx(36.87)
    assert mu1[titles[0]]["paper_ratio_meta_best_as"] == pytest.approx(36.87 / 22.83)
    assert "not a like-for-like comparison" in mu1[titles[2]]["protects"]
    # hospital unit: eta = 1 / mu; vector unit: eta = sqrt(n) / mu (n = 24).
    assert mu1[titles[0]]["eta"] == pytest.approx(1.0)
    assert mu1[titles[1]]["eta"] == pytest.approx(math.sqrt(24))
    # the mixed reading pairs the hospital LDP side with the vector A&S side, run for run.
    assert mu1[titles[2]]["rw_meta"] == mu1[titles[0]]["rw_meta"]
    assert mu1[titles[2]]["as_min_noise"] == mu1[titles[1]]["as_min_noise"]
    inf = [r for r in rows if r["mu"] == math.inf]
    assert all(r["eta"] == 0.0 and "clean gains" in r["protects"] for r in inf)


def test_mu_inf_learners_are_the_clean_learners(tiny):
    result, _, _ = tiny
    ctx_key = jax.random.fold_in(jax.random.key(0), sum(map(ord, "NM")))
    from ldpjax.experts import covid

    data = covid.synthetic_covid_data(ctx_key, "NM", 20)
    clean = np.asarray(evaluate_learners(paper_learners(), data.density)).sum(0)
    row = result.tables["covid_summary"][0]
    assert row["best_learner_clean"] == pytest.approx(clean.max(), rel=1e-5)
    # at mu = inf every run's best learner is the clean best learner (deterministic learners)
    assert row["best_learner_in_run"] == pytest.approx(clean.max(), rel=1e-5)


def test_verdicts_sweep_and_summary(tiny):
    result, out, _ = tiny
    verdicts = [v.as_dict() for v in result.verdicts]
    assert len(verdicts) == 3 * 4  # 4 claims x 3 readings (NM mu = 1 is a paper cell)
    for reading in E.READINGS.values():
        mine = [v for v in verdicts if v["claim"].startswith(f"[{reading.title}]")]
        assert len(mine) == 4
        assert all(v["status"] in ("reproduced", "partly", "not") for v in mine)
    assert "Verdicts:" in result.summary
    for v in verdicts:
        assert v["claim"] in result.summary
    dyn = result.tables["covid_dynamics"]
    assert {r["wave_heterogeneity"] for r in dyn} == {0.35, 1.0}
    assert len(dyn) == 2 * 3  # heterogeneity x reading (finite mu = 1 only)
    assert all(r["clean_tracking_advantage"] > 0 for r in dyn)
    assert (out / "covid_verdicts.csv").exists() and (out / "covid_dynamics.png").exists()


def test_figures_are_labelled_and_readable(tiny):
    result, _, has_real = tiny
    expected = {"covid_readings", "covid_cumulative_gain", "covid_data", "covid_dynamics"}
    assert expected <= set(result.figures)
    problems = []
    for name, fig in result.figures.items():
        problems += _check_figure("experts-covid", name, fig)
        problems += strict_problems(f"experts-covid/{name}", fig)  # legends, paper stars
        text = " ".join(t.get_text() for t in fig.texts)
        assert "Privacy unit:" in text
        assert "Prediction with expert advice under LDP" in text or name == "covid_real_extract"
        assert "paper 000" not in text.lower()  # the paper's title, not its number
    assert not problems, "\n".join(problems)
    ax = result.figures["covid_dynamics"].axes[0]
    assert any(abs(line.get_ydata()[0] - 1.0) < 1e-12 for line in ax.lines)  # break-even line


def test_dynamics_figure_is_drawn_against_the_swept_setting(tiny):
    """x = the wave heterogeneity (distinct by construction; two settings can give the same
    clean tracking advantage), the advantage under each tick; dodged error bars, no bands."""
    from matplotlib.collections import PolyCollection

    result, _, _ = tiny
    dyn = result.tables["covid_dynamics"]
    for ax in result.figures["covid_dynamics"].axes:
        hs = sorted({r["wave_heterogeneity"] for r in dyn})
        assert list(ax.get_xticks()) == pytest.approx(hs)
        labels = [t.get_text() for t in ax.get_xticklabels()]
        adv = {r["wave_heterogeneity"]: r["clean_tracking_advantage"] for r in dyn}
        assert labels == [f"{h:g}\n[{adv[h]:.2f}]" for h in hs]
        assert not any(isinstance(c, PolyCollection) for c in ax.collections)
        assert ax.containers  # error bars


def test_nan_only_where_a_computation_failed(tiny):
    """Not run / not applicable is None (an empty cell) or no row at all; NaN would mean a
    computation failed, and none does here."""
    result, _, has_real = tiny
    nan_cells = [
        (name, i, key)
        for name, rows in result.tables.items()
        for i, row in enumerate(rows)
        for key, value in row.items()
        if isinstance(value, (float, np.floating)) and math.isnan(value)
    ]
    assert nan_cells == []
    panels = ["covid_summary"] + (["covid_real_extract"] if has_real else [])
    for name in panels:
        for row in result.tables[name]:
            # RW-FTPL over the hospitals is not run on the stand-in by default (--ftpl auto)
            assert row["rw_ftpl"] is None and row["rw_ftpl_se"] is None
            # Theorem 3's bound exists at mu = inf too (the non-private one, lambda term 0)
            assert math.isfinite(row["theorem3_bound"]) and math.isfinite(row["lambda_ratio"])
            if row["mu"] == math.inf:
                assert row["lambda_ratio"] == 0.0
    assert "RW-FTPL" not in {r["algorithm"] for r in result.tables["covid_gains"]}


def test_real_data_panel_when_the_extract_exists(tiny):
    result, out, has_real = tiny
    if not has_real:
        pytest.skip("shared data folder not present")
    rows = result.tables["covid_real_extract"]
    assert {r["state"] for r in rows} == {"NM"}
    assert all("real HHS facility data" in r["data"] and r["T"] == 5 for r in rows)
    assert all(r["paper_rw_meta"] is None for r in rows)  # 5 weeks: not the paper's totals
    assert "covid_real_extract" in result.figures and "Real-data panel" in result.summary
    assert (out / "covid_real_extract.png").exists()


def test_no_real_panel_without_data(tmp_path):
    result, _ = run_experiment(
        get_experiment("experts-covid"),
        seeds=3,
        out_dir=tmp_path,
        overrides=dict(TINY, data_dir="none", sweep_state="none"),
        show_progress=False,
        quiet=True,
    )
    assert "covid_real_extract" not in result.tables and "covid_dynamics" not in result.tables
    assert result.extra["real_panel"] is None


# --------------------------------------------------------------------------- real extract
def test_experts_covid_on_the_real_extract(shared_data, tmp_path):
    """The table on the real extract with a custom central sensitivity (one "custom" reading).

    Three mu values make its grids 3 points wide (local: inf + vector x 2 finite mu; central:
    inf + hospital x 2), the width of the tiny run's real-data panel (inf + 2 units x mu = 1)
    on the same n = 10, T = 5: RW-Meta's and A&S's programs are that panel's, compiled once
    in this module."""
    result, out = run_experiment(
        get_experiment("experts-covid"),
        seeds=3,
        out_dir=tmp_path,
        overrides={
            "data": str(shared_data / EXTRACT),
            "states": ("NM",),
            "mu": (math.inf, 1.0, 0.5),
            "central_sensitivity": "1",
        },
        show_progress=False,
        quiet=True,
    )
    rows = result.tables["covid_summary"]
    assert [(r["state"], r["mu"]) for r in rows] == [("NM", math.inf), ("NM", 1.0), ("NM", 0.5)]
    for r in rows:
        assert "real HHS facility data" in r["data"] and "10 hospitals" in r["data"]
        assert (r["n"], r["T"]) == (10, 5)
        assert r["uniform"] <= r["best_fixed_hospital"] + 1e-9
        for name in ("rw_meta", "rw_ftpl", "as_min_noise", "as_min_regret", "best_learner_in_run"):
            assert 0 <= r[name] <= 5  # 5 weeks of densities in [0, 1]
        assert r["best_learner_in_run"] >= r["rw_meta"] - 5  # per run max over learners
        assert r["central_sensitivity"] == "1" and r["ldp_sensitivity"].startswith("sqrt(n)")
        # one unit over the T = 5 weekly releases: mu sqrt(T)-GDP
        assert r["run_mu"] == pytest.approx(r["mu"] * math.sqrt(5), rel=1e-5)
    assert rows[1]["paper_rw_meta"] == pytest.approx(36.87)
    assert rows[0]["paper_rw_meta"] is None
    settings = result.tables["agarwal_singh_settings"]
    # per-node sensitivity 1 -> Min Noise sigma = sqrt(L) / mu with L = 3 levels for T = 5
    assert settings[1]["min_noise_node_sd"] == pytest.approx(math.sqrt(3), rel=1e-5)
    assert settings[2]["min_noise_node_sd"] == pytest.approx(math.sqrt(3) / 0.5, rel=1e-5)
    assert "real HHS" in result.data
    for name in (
        "covid_summary.csv",
        "covid_gains.csv",
        "covid_learners.csv",
        "covid_cumulative_gain.png",
        "covid_data.png",
    ):
        assert (out / name).exists()
    assert len(result.tables["covid_learners"]) == 3 * 13  # mu values x learners


def test_whole_run_claim_matches_the_gaussian_dp_closed_form():
    """A unit in all T weekly releases: mu sqrt(T)-GDP, whose epsilon at delta solves
    Phi(-eps/m + m/2) - e^eps Phi(-eps/m - m/2) = delta (Dong, Roth & Su 2022, Cor. 2.13;
    scipy, float64, independent of ldpjax). At 148 weeks and mu = 1 the claim is vacuous."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    from ldpjax_experiments.experts_covid.rows import RUN_DELTA, whole_run_claim
    from ldpjax_experiments.kit import vacuous_epsilon

    def gdp_eps(m):
        return brentq(lambda e: norm.cdf(-e / m + m / 2) - math.exp(e) * norm.cdf(-e / m - m / 2)
                      - RUN_DELTA, 0.0, 500.0, xtol=1e-12)

    for mu, weeks in ((0.25, 148), (1.0, 5), (1.0, 148)):
        run_mu, run_eps = whole_run_claim(mu, weeks)
        assert run_mu == pytest.approx(mu * math.sqrt(weeks), rel=1e-5)
        assert run_eps == pytest.approx(gdp_eps(mu * math.sqrt(weeks)), rel=1e-3)
    assert whole_run_claim(1.0, 148)[1] > vacuous_epsilon(RUN_DELTA)
    assert whole_run_claim(math.inf, 148) == (math.inf, math.inf)
