"""calibrate (ldpjax.accounting.calibration) against closed-form calibrations.

References, computed without calibrate: gdp_mu(eps, delta) (the mu-GDP curve through
(eps, delta), Dong, Roth & Su 2019), rr_rate(eps) = tanh(eps / 2), krr_explore_prob(xi, k) =
k / (k + e^xi - 1), composition of k mu-GDP releases = sqrt(k) mu (Dong, Roth & Su, Cor. 3.3),
gdp_delta, and central finite differences in float64 of those closed forms.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.accounting import accountant as A
from ldpjax.accounting import composition as C
from ldpjax.accounting import events as E
from ldpjax.accounting import gdp_delta, gdp_mu, krr_budget, krr_explore_prob, rr_rate
from ldpjax.accounting.calibration import calibrate
from ldpjax.accounting.shuffle import ShuffledEvent

DELTA = 1e-5
TARGETS = np.array([0.5, 1.0, 2.0, 4.0])


def test_budget_and_noise_round_trips():
    # a budget (epsilon increases in mu) and a noise sd (it decreases in sigma)
    mu = calibrate(E.GaussianEvent, bracket=(0.01, 20.0), target_epsilon=TARGETS, delta=DELTA)
    sigma = calibrate(lambda s: E.GaussianEvent(1.0 / s), bracket=(0.05, 100.0),
                      target_epsilon=TARGETS, delta=DELTA)
    exact = np.asarray(gdp_mu(TARGETS, DELTA))
    np.testing.assert_allclose(mu, exact, rtol=2e-6)
    np.testing.assert_allclose(sigma, 1.0 / exact, rtol=2e-6)
    # the private side: epsilon at the result is at most the target (in floating point)
    assert np.all(np.asarray(A.epsilon(E.GaussianEvent(mu), DELTA)) <= TARGETS)
    assert np.all(np.asarray(A.epsilon(E.GaussianEvent(1.0 / sigma), DELTA)) <= TARGETS)


def test_pure_round_trips():
    r = calibrate(E.RandomizedResponseEvent, bracket=(1e-3, 1 - 1e-6), target_epsilon=TARGETS,
                  delta=0.0)
    np.testing.assert_allclose(r, rr_rate(TARGETS), rtol=2e-6)
    # K-RR through its exploration probability p (epsilon decreases in p), k = 4
    p = calibrate(lambda q: E.KaryRandomizedResponseEvent(krr_budget(q, 4), 4),
                  bracket=(1e-4, 0.999), target_epsilon=TARGETS, delta=0.0)
    np.testing.assert_allclose(p, krr_explore_prob(TARGETS, 4), rtol=2e-5)


def test_compositions_and_target_delta():
    # 10 Gaussian releases: mu_total = sqrt(10) mu; by delta at eps = 1 as well
    ten = calibrate(lambda m: C.SelfComposedEvent(E.GaussianEvent(m), 10), bracket=(0.01, 10.0),
                    target_epsilon=TARGETS, delta=DELTA)
    np.testing.assert_allclose(ten * np.sqrt(10.0), gdp_mu(TARGETS, DELTA), rtol=2e-6)
    listed = calibrate(lambda m: C.ComposedEvent((E.GaussianEvent(m),) * 10), bracket=(0.01, 10.0),
                       target_epsilon=1.0, delta=DELTA)
    np.testing.assert_allclose(listed, ten[1], rtol=2e-6)
    mu = calibrate(E.GaussianEvent, bracket=(0.01, 20.0), target_delta=1e-3, epsilon=1.0)
    assert float(gdp_delta(mu, 1.0)) <= 1e-3
    np.testing.assert_allclose(gdp_delta(mu, 1.0), 1e-3, rtol=1e-5)


def test_shuffled_event():
    # the local budget whose shuffle over 1e4 reports is (0.5, 1e-6)-DP
    eps0 = calibrate(lambda e: ShuffledEvent(e, 10_000), bracket=(0.1, 5.0), target_epsilon=0.5,
                     delta=1e-6)
    central = float(A.epsilon(ShuffledEvent(eps0, 10_000), 1e-6))
    assert 0.5 * (1 - 1e-4) <= central <= 0.5 and 3.0 < float(eps0) < 4.0


def test_unattained_targets():
    with pytest.raises(ValueError, match=r"target_epsilon=10 is not attained in bracket "
                                         r"\(0.01, 1\): epsilon is 0.0272\d* at 0.01 and "
                                         r"4.377\d* at 1"):
        calibrate(E.GaussianEvent, bracket=(0.01, 1.0), target_epsilon=10.0, delta=DELTA)
    with pytest.raises(ValueError, match="either target_epsilon with delta"):
        calibrate(E.GaussianEvent, bracket=(0.01, 1.0), target_epsilon=1.0)
    solve = jax.jit(lambda t: calibrate(E.GaussianEvent, bracket=(0.01, 1.0), target_epsilon=t,
                                        delta=DELTA))
    out = np.asarray(solve(jnp.array([1.0, 10.0])))
    assert np.isnan(out[1]) and out[0] == pytest.approx(float(gdp_mu(1.0, DELTA)), rel=2e-6)


def test_vmap_over_64_targets_compiles_once():
    @chex.assert_max_traces(n=1)
    def solve(target):
        return calibrate(lambda s: E.GaussianEvent(1.0 / s), bracket=(0.05, 100.0),
                         target_epsilon=target, delta=DELTA)

    batch = jax.jit(jax.vmap(solve))
    first = np.linspace(0.2, 5.0, 64, dtype=np.float32)
    np.testing.assert_allclose(batch(first), 1.0 / np.asarray(gdp_mu(first, DELTA)), rtol=5e-6)
    second = first + 0.01
    np.testing.assert_allclose(batch(second), 1.0 / np.asarray(gdp_mu(second, DELTA)), rtol=5e-6)


def test_gradients_match_finite_differences(x64):
    # sigma(target, sensitivity) = sensitivity / gdp_mu(target, delta): d/d target through the
    # implicit function theorem, d/d sensitivity through event_of's own argument
    def sigma(target, sensitivity):
        return calibrate(lambda s, d: E.GaussianEvent(d / s), sensitivity, bracket=(0.05, 100.0),
                         target_epsilon=target, delta=DELTA)

    def exact(target, sensitivity):
        return sensitivity / float(gdp_mu(target, DELTA))

    grad = jax.jit(jax.grad(sigma, argnums=(0, 1)))(1.5, 2.0)
    h = 1e-6
    fd_target = (exact(1.5 + h, 2.0) - exact(1.5 - h, 2.0)) / (2 * h)
    fd_sens = (exact(1.5, 2.0 + h) - exact(1.5, 2.0 - h)) / (2 * h)
    # central differences: O(h^2) truncation, rounding ~1e-16 / h
    np.testing.assert_allclose(grad, (fd_target, fd_sens), rtol=1e-7)
