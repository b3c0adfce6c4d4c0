"""``ldpjax bench``: JSON records, agreement of the two sides, the NumPy references' closed forms.

Statistical tolerances: a mean of R iid values is checked within 3 standard errors (sd /
sqrt(R), with the theory sd where one exists), i.e. a false alarm probability of 0.27% per
check at the fixed seeds used here.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import softmax
from scipy.stats import norm

from ldpjax import bench
from ldpjax.bench import numpy_reference as ref
from ldpjax.bench import rng as rng_lib
from ldpjax.bench.workloads import DEFAULT_WORKLOADS, WORKLOADS


# --------------------------------------------------------------------------- CLI and records
def test_cli_writes_json_records_with_the_required_keys(tmp_path, capsys):
    path = tmp_path / "bench.json"
    code = bench.main(["--size", "tiny", "--only", "agarwal-singh", "--repeats", "1",
                       "--rng-sizes", "14", "--json", str(path)])
    records = json.loads(path.read_text())
    assert [r["workload"] for r in records] == ["agarwal-singh"]
    for r in records:
        assert set(bench.RECORD_KEYS) <= set(r)
        assert r["mode"] == "default"
        assert r["numpy_seconds"] > 0 and r["ldpjax_seconds"] > 0 and r["compile_seconds"] >= 0
        assert r["speedup"] == pytest.approx(r["numpy_seconds"] / r["ldpjax_seconds"])
        assert r["rng_floor_seconds"] == pytest.approx(
            r["random_words"] / r["rng_fastest_words_per_second"])
        assert r["agree"], r
    assert code == 0
    out = capsys.readouterr().out
    assert "RNG rates" in out and "agarwal-singh" in out and "agree" in out


def test_cli_rejects_unknown_workloads_and_rng(capsys):
    assert bench.main(["--only", "nope"]) == 2
    assert bench.main(["--rng", "not-a-generator"]) == 2
    assert bench.main(["--rng-sizes", "40"]) == 2
    err = capsys.readouterr().err
    assert "only must name workloads" in err and "rng must be" in err and "rng-sizes" in err


def test_resolve_names():
    assert bench.resolve_names(None) == list(DEFAULT_WORKLOADS)
    assert set(DEFAULT_WORKLOADS) == {
        "quantile", "bandits", "rw-ftpl", "rw-adabatch", "rw-meta", "agarwal-singh"}
    assert bench.resolve_names("bandits, quantile") == ["bandits", "quantile"]
    with pytest.raises(ValueError, match="only"):
        bench.resolve_names("bandits,zzz")


def test_rng_rates_are_measured_for_the_available_generators():
    impls = rng_lib.available_impls()
    assert "threefry2x32" in impls
    rates = rng_lib.measure_rates(["threefry2x32"], sizes=(2**14,), repeats=1)
    assert rates[0].error is None and rates[0].rate > 0
    assert rng_lib.fastest(rates).impl == "threefry2x32"


def test_sides_agree_tiny():
    record = bench.run_workload("quantile", "tiny", repeats=1, fastest_rate=1e8, fastest_impl="x")
    assert record["agree"], record
    assert record["random_words"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_every_workload_agrees_tiny(name):
    record = bench.run_workload(name, "tiny", repeats=1)
    assert record["agree"], record


# --------------------------------------------------------------------------- NumPy references
def test_local_sgd_reference_matches_theorem_3_1():
    """Hete-L (K = 10, r = 0.25..0.9, tau = 0.3): mean near Q*, sd near Theorem 3.1's."""
    k, tau, budget, reps = 10, 0.3, 2000, 400
    loc, r, w = np.linspace(-1, 1, k), np.linspace(0.25, 0.9, k), np.full(k, 1 / k)
    q_star = brentq(lambda q: np.sum(w * norm.cdf(q - loc)) - tau, -5, 5)
    f = np.sum(w * norm.pdf(q_star - loc))
    big_f = norm.cdf(q_star - loc)
    sd = math.sqrt(np.sum(w**2 * (1 / r**2 - (2 * big_f - 1) ** 2)) / (4 * f**2) / budget)
    est, var = ref.local_sgd(np.random.default_rng(0), tau, r, loc, w, (1,) * budget, reps)
    assert abs(est.mean() - q_star) <= 3 * sd / math.sqrt(reps)
    # sd of an sd estimate from R normal draws: sd / sqrt(2R) (3.5% here); 3 of those plus
    # 5% for the finite-t_T distance from the asymptotic law.
    assert abs(est.std() / sd - 1) <= 3 / math.sqrt(2 * reps) + 0.05
    assert np.all(var > 0)


def test_epsilon_greedy_reference_uniform_play_regret():
    """gamma = 0 (constant): eps = 1, uniform play: regret T * gap / 2, variance T gap^2 / 4."""
    ctr, horizon, runs = np.array([0.324, 0.295]), 500, 400
    regret = ref.epsilon_greedy(np.random.default_rng(1), ctr, np.zeros(runs, int),
                                np.zeros(runs), horizon)
    gap = ctr[0] - ctr[1]
    se = math.sqrt(horizon * gap**2 / 4 / runs)
    assert abs(regret.mean() - horizon * gap / 2) <= 3 * se
    assert regret.std() == pytest.approx(math.sqrt(horizon) * gap / 2, rel=0.15)


def test_rw_ftpl_reference_regret_within_bound_and_grows_with_noise():
    """E[regret] <= (eta + 2/eta) sqrt(2 T log n); more noise (smaller mu) -> more regret."""
    rng = np.random.default_rng(2)
    n, runs = 10, 200
    gains = (rng.random((400, n)) < np.where(np.arange(n) == 0, 0.6, 0.5)).astype(float)
    best = gains.sum(0).max()
    for horizon in (100, 400):
        g = gains[:horizon]
        for mu in (0.5, 2.0):
            eta = math.sqrt(n) / mu
            regret = g.sum(0).max() - ref.rw_ftpl(rng, g, np.full(runs, eta))
            bound = (eta + 2 / eta) * math.sqrt(2 * horizon * math.log(n))
            assert regret.mean() <= bound
    low = best - ref.rw_ftpl(rng, gains, np.full(runs, math.sqrt(n) / 0.25))
    high = best - ref.rw_ftpl(rng, gains, np.full(runs, math.sqrt(n) / 4.0))
    se = math.hypot(low.std(), high.std()) / math.sqrt(runs)
    assert low.mean() - high.mean() > 3 * se


def test_compute_delay_reference_is_the_largest_admissible_batch():
    rng = np.random.default_rng(3)
    n, alpha, eta = 10, 0.01, 3.0
    gaps = np.concatenate([[0.0], rng.exponential(20.0, 50), [500.0]])
    t = 50
    batch = ref.compute_delay(gaps, t, eta, n, alpha)

    def admissible(b):
        beta = gaps / (eta * np.sqrt(2 * b)) - math.sqrt(math.log(2 * n - 2))
        return ref.leader_change_bound(beta) <= alpha * np.sqrt(math.log(n) / (t + b))

    b = batch.astype(float)
    assert np.all(batch >= 1)
    assert np.all(admissible(b) | (batch == 1))
    assert not np.any(admissible(b + 1))
    assert batch[0] == 1 and batch[-1] > 100  # tied leaders never batch; a huge gap does


def test_tree_hedge_reference_without_noise_is_hedge():
    """node_sd = 0: the tree's prefix sums are exact, so the play is softmax(lambda G_{t-1})."""
    rng = np.random.default_rng(4)
    horizon, n, lam = 37, 5, 0.7
    gains = rng.random((horizon, n))
    earned = ref.tree_hedge(rng, gains, np.zeros(3), np.full(3, lam))
    prefix = np.vstack([np.zeros(n), np.cumsum(gains, 0)[:-1]])
    expected = np.sum(softmax(lam * prefix, axis=1) * gains)
    np.testing.assert_allclose(earned, expected, rtol=1e-10)


def test_tree_hedge_reference_zero_rate_plays_uniformly_whatever_the_noise():
    rng = np.random.default_rng(5)
    gains = rng.random((20, 4))
    earned = ref.tree_hedge(rng, gains, np.full(4, 3.0), np.full(4, 1e-12))
    np.testing.assert_allclose(earned, gains.mean(1).sum(), rtol=1e-9)
