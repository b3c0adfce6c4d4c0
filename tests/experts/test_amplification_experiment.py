"""The ``experts-amplification`` experiment runs end to end at a tiny size and writes what it
promises (tables, figures, summary), with its checks passing."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ldpjax_experiments import get_experiment, run_experiment

TINY = dict(
    mu=(0.5, 1.0),
    horizon=300,
    batch_horizon=300,
    batch_runs=4,
    easy_gaps=(0.2,),
    experts=4,
    privacy_experts=(4,),
    privacy_rounds=(100, 300),
    mc_runs=60,
)


def test_experiment_is_registered_with_small_and_paper_sizes():
    experiment = get_experiment("experts-amplification")
    assert experiment.config_for("paper")["privacy_rounds"] == (1000, 10000, 100000)
    assert experiment.config_for("small")["privacy_experts"] == (10, 100)
    assert experiment.seeds_for("paper") > experiment.seeds_for("small")


@pytest.mark.slow  # ~25-45 s of compilation on 2 CPU cores; the notebook test covers the API
def test_experiment_runs_at_a_tiny_size(tmp_path):
    result, out = run_experiment(
        get_experiment("experts-amplification"),
        seeds=12,
        out_dir=tmp_path,
        overrides=TINY,
        show_progress=False,
        quiet=True,
    )
    for name in ("regret", "batch_sizes", "privacy"):
        assert (out / f"{name}.csv").exists()
        assert result.tables[name]
    for name in ("regret", "batch_sizes", "privacy_tradeoff", "privacy_delta"):
        assert (out / f"{name}.png").exists()
    run = json.loads((out / "run.json").read_text())
    assert run["extra"]["adabatch_within_bound"] is True
    assert run["extra"]["adabatch_within_factor"] is True
    for row in result.tables["privacy"]:
        # amplification never makes things worse than plain mu-GDP
        assert row["delta_analytic@eps=1"] <= row["delta_plain@eps=1"] + 1e-7
    # NaN would mean a failed computation: "not applicable" is None or no row at all
    nan_cells = [(name, key) for name, rows in result.tables.items() for row in rows
                 for key, value in row.items()
                 if isinstance(value, (float, np.floating)) and math.isnan(value)]
    assert nan_cells == []
    regret = result.tables["regret"]
    assert all(1.0 <= r["mean_batch_length"] <= r["T"] for r in regret)  # at every checkpoint
    batches = result.tables["batch_sizes"]
    assert all("analytic_worst_case_median" not in r for r in batches)
    analytic = [r for r in batches if r["source"].startswith("analytic")]
    assert [r["t"] for r in analytic] == sorted({r["t"] for r in batches})
    assert all(r["q10"] <= r["median_batch"] <= r["q90"] for r in analytic)
    # the privacy figures carry a Monte Carlo / analytic panel under each curve panel
    delta = result.figures["privacy_delta"]
    assert len(delta.axes) == 2 * len(TINY["privacy_experts"]) * len(TINY["privacy_rounds"])
    assert any(ax.get_ylabel() == "MC / analytic delta" for ax in delta.axes)
    for fig in result.figures.values():
        text = " ".join(t.get_text() for t in fig.texts)
        assert "paper 000" not in text.lower()
    verdicts = {v["claim"]: v for v in run["extra"]["verdicts"]}
    bound = next(v for c, v in verdicts.items() if c.startswith("RW-AdaBatch regret <="))
    assert bound["status"] == "reproduced" and bound["ours"] <= 1.0
    assert "Verdicts:" in result.summary and bound["claim"] in result.summary


def test_privacy_mu_must_be_one_of_the_mus(tmp_path):
    with pytest.raises(ValueError, match="privacy_mu"):
        run_experiment(
            get_experiment("experts-amplification"),
            seeds=2,
            out_dir=tmp_path,
            overrides={**TINY, "privacy_mu": 3.0},
            show_progress=False,
            quiet=True,
        )
