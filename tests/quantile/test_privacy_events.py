"""The per-record privacy claims (``privacy_event``) of the quantile algorithms, and the
granular (float-safe) DP-SGD release."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest

import ldpjax.accounting as acc
import ldpjax.quantile as Q
from ldpjax.engine import make_key, rollout

CLIENTS = Q.make_clients("normal", loc=[0.0, 0.5, 1.0])
RATES = np.array([0.25, 0.6, 0.9])
PARAMS = Q.quantile_params(0.5, RATES, CLIENTS)
CONFIG = Q.LocalSGDConfig(10, Q.C1)
RR_ALGORITHMS = {
    "local_sgd": Q.local_sgd(CONFIG),
    "divide_and_conquer": Q.divide_and_conquer(Q.DivideAndConquerConfig(10)),
    "single": Q.single(Q.SingleConfig(10)),
}


@pytest.mark.parametrize("name", sorted(RR_ALGORITHMS))
def test_randomized_response_claim_is_the_worst_client(name, x64):
    # Parallel composition over clients: pure eps = max_k log((1 + r_k) / (1 - r_k)).
    event = RR_ALGORITHMS[name].privacy_event(PARAMS)
    assert isinstance(event, acc.ParallelEvent) and len(event.events) == 3
    assert all(isinstance(e, acc.RandomizedResponseEvent) for e in event.events)
    worst = max(math.log((1 + r) / (1 - r)) for r in RATES)
    assert float(acc.epsilon(event, 0.0)) == pytest.approx(worst, rel=1e-6)


def test_dp_sgd_claim_meets_the_randomized_response_epsilon_at_delta(x64):
    # Calibration: mu_k-GDP is (eps_k, delta)-DP with eps_k = rr_epsilon(r_k); the worst client
    # (smallest r) sets the run's epsilon at delta.
    event = Q.dp_sgd(CONFIG, calibration="gaussian").privacy_event(PARAMS)
    assert all(isinstance(e, acc.GaussianEvent) for e in event.events)
    worst = max(math.log((1 + r) / (1 - r)) for r in RATES)
    assert float(acc.epsilon(event, 1e-5)) == pytest.approx(worst, rel=1e-5)
    sigma = np.asarray(Q.gaussian_noise_scales(RATES, 1e-5))
    np.testing.assert_allclose(1.0 / sigma, [float(e.mu) for e in event.events], rtol=1e-6)


def test_dp_sgd_no_privacy_only_at_r_one():
    # r_k = 1 is the explicit "no privacy" rate (as for randomized response): mu_k = inf, noise 0.
    mu = np.asarray(Q.dp_sgd_mu(np.array([0.5, 1.0]), 1e-5))
    assert np.isfinite(mu[0]) and mu[1] == np.inf
    assert float(Q.gaussian_noise_scales(np.array([1.0]), 1e-5)[0]) == 0.0


def test_granular_dp_sgd_release_and_claim(x64):
    # g = 2^-5: the exact discrete-Gaussian accountant handles up to ~341 grid units of noise,
    # and sigma_k <= 6.9 here (r = 0.25), i.e. <= 228 grid units.
    g = 2.0**-5
    algorithm = Q.dp_sgd(CONFIG, granularity=g, calibration="gaussian")
    _, out = rollout(algorithm, PARAMS, make_key(0), CONFIG.num_rounds)
    assert np.isfinite(float(out.estimate))
    event = algorithm.privacy_event(PARAMS)
    assert all(isinstance(e, acc.DiscreteGaussianEvent) for e in event.events)
    # The noise is calibrated to the rounded sensitivity 1 + g, so the discrete Gaussian's exact
    # profile is within a whisker of the mu-GDP claim of the float path (measured: 1e-5 relative).
    float_eps = float(acc.epsilon(Q.dp_sgd(CONFIG, calibration="gaussian").privacy_event(PARAMS), 1e-5))
    granular_eps = float(acc.epsilon(event, 1e-5))
    assert granular_eps == pytest.approx(float_eps, rel=1e-3)


def test_dp_sgd_granular_and_float_paths_differ_only_in_the_release():
    # Same data path; both estimates finite; the granular one is a distinct compiled algorithm.
    assert Q.dp_sgd(CONFIG, granularity=2.0**-8) is Q.dp_sgd(CONFIG, granularity=2.0**-8)
    assert Q.dp_sgd(CONFIG, granularity=2.0**-8) is not Q.dp_sgd(CONFIG)


def test_claim_accepts_a_stacked_grid():
    grid = PARAMS._replace(r=jnp.stack([jnp.full(3, 0.5), jnp.full(3, 0.9)]))
    event = Q.local_sgd(CONFIG).privacy_event(grid)
    eps = np.asarray(acc.epsilon(event, 0.0))
    np.testing.assert_allclose(eps, [math.log(3.0), math.log(19.0)], rtol=1e-5)
