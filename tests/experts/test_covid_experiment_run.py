"""``experts-covid`` end to end on the real 5-week extract (tiny size): tables, labels, figures,
and the consistency of the reported numbers. The synthetic path runs in the notebook test."""

from __future__ import annotations

import math

import pytest

from ldpjax.experiments.base import get_experiment
from ldpjax.experiments.runner import run_experiment

EXTRACT = "covid/hhs_facility_NM_PA_CA_2022-09-23_to_2022-10-21.csv"


def test_experts_covid_on_the_real_extract(shared_data, tmp_path):
    result, out = run_experiment(
        get_experiment("experts-covid"),
        seeds=3,
        out_dir=tmp_path,
        overrides={
            "data": str(shared_data / EXTRACT),
            "states": ("NM",),
            "mu": (math.inf, 1.0),
            "central_sensitivity": "1",
        },
        show_progress=False,
        quiet=True,
    )
    rows = result.tables["covid_summary"]
    assert [(r["state"], r["mu"]) for r in rows] == [("NM", math.inf), ("NM", 1.0)]
    for r in rows:
        assert "real HHS facility data" in r["data"] and "10 hospitals" in r["data"]
        assert (r["n"], r["T"]) == (10, 5)
        assert r["uniform"] <= r["best_fixed_hospital"] + 1e-9
        for name in ("rw_meta", "rw_ftpl", "as_min_noise", "as_min_regret", "best_learner_in_run"):
            assert 0 <= r[name] <= 5  # 5 weeks of densities in [0, 1]
        assert r["best_learner_in_run"] >= r["rw_meta"] - 5  # per run max over learners
        assert r["central_sensitivity"] == "1" and r["ldp_sensitivity"].startswith("sqrt(n)")
    assert rows[1]["paper_rw_meta"] == pytest.approx(36.87)
    assert rows[0]["paper_rw_meta"] is None
    settings = result.tables["agarwal_singh_settings"]
    # per-node sensitivity 1 -> Min Noise sigma = sqrt(L) / mu with L = 3 levels for T = 5
    assert settings[1]["min_noise_node_sd"] == pytest.approx(math.sqrt(3), rel=1e-5)
    assert "real HHS" in result.data
    for name in (
        "covid_summary.csv",
        "covid_gains.csv",
        "covid_learners.csv",
        "covid_cumulative_gain.png",
        "covid_data.png",
    ):
        assert (out / name).exists()
    assert len(result.tables["covid_learners"]) == 2 * 13


def test_experts_covid_rejects_bad_options(tmp_path):
    experiment = get_experiment("experts-covid")
    with pytest.raises(ValueError, match="sensitivity"):
        run_experiment(
            experiment,
            seeds=1,
            out_dir=tmp_path,
            overrides={"ldp_sensitivity": "huge", "states": ("NM",), "weeks": 5},
            show_progress=False,
            quiet=True,
        )
    with pytest.raises(ValueError, match="states"):
        run_experiment(
            experiment,
            seeds=1,
            out_dir=tmp_path,
            overrides={"states": ("TX",)},
            show_progress=False,
            quiet=True,
        )
    with pytest.raises(ValueError, match="mu"):
        run_experiment(
            experiment,
            seeds=1,
            out_dir=tmp_path,
            overrides={"mu": (0.0,), "states": ("NM",)},
            show_progress=False,
            quiet=True,
        )
