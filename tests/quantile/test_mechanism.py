"""The randomized-response step: distribution, privacy ratio, unbiasedness, variance, errors."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import ldpjax.quantile as Q
from ldpjax.accounting import rr_epsilon
from ldpjax.engine import make_key
from ldpjax.mechanisms import randomized_response


def test_spec_coefficients_exactly(x64):
    for tau in (0.1, 0.5, 0.8):
        for r in (0.25, 0.6, 1.0):
            up = float(Q.debiased_increment(True, tau, r))
            down = float(Q.debiased_increment(False, tau, r))
            assert up == pytest.approx((1 - r + 2 * tau * r) / (2 * r), abs=1e-14)
            assert down == pytest.approx(-(1 + r - 2 * tau * r) / (2 * r), abs=1e-14)


@pytest.mark.parametrize("r", [0.25, 0.6, 0.9])
def test_one_word_report_has_the_randomized_response_law(r):
    # P(report = 1 | bit) = r bit + (1 - r)/2; n = 200000 reports: sd <= sqrt(0.25/n) = 0.0011,
    # tolerance 5 sd = 0.0056. The foundation's two-coin mechanism is held to the same law.
    n = 200_000
    words = jax.random.bits(make_key(1), (2, n), jnp.uint32)
    ours = np.asarray(Q.report_from_bits(words, jnp.array([[True], [False]]), r)).mean(axis=1)
    reference = np.asarray(
        randomized_response(make_key(2), jnp.array([[1], [0]]) * jnp.ones((2, n), jnp.int32), r)
    ).mean(axis=1)
    expected = np.array([r + (1 - r) / 2, (1 - r) / 2])
    np.testing.assert_allclose(ours, expected, atol=0.0056)
    np.testing.assert_allclose(reference, expected, atol=0.0056)


def test_privacy_ratio_is_exp_eps():
    # Likelihood ratio of the two report laws = (1 + r)/(1 - r) = exp(eps), eps = rr_epsilon(r).
    for r in (0.25, 0.5, 0.9):
        p1 = r + (1 - r) / 2
        p0 = (1 - r) / 2
        assert max(p1 / p0, (1 - p0) / (1 - p1)) == pytest.approx(math.exp(float(rr_epsilon(r))), rel=1e-5)


@pytest.mark.parametrize("tau,r,q", [(0.3, 0.25, 0.4), (0.8, 0.9, -0.5), (0.5, 1.0, 0.0), (0.1, 0.5, 1.5)])
def test_privatized_step_is_unbiased_with_theorem_variance(tau, r, q):
    # x ~ N(0, 1); E[(q' - q) / lr] = tau - Phi(q); Var = [r^-2 - (2 Phi(q) - 1)^2] / 4 (per step).
    # Mean of n = 400000 increments: sd = sqrt(Var / n) <= sqrt(4.0 / 400000) = 0.0032 (r >= 0.25);
    # tolerance 5 sd. Sample variance: relative sd ~ sqrt(2/n) * kurtosis factor < 1%: 5%.
    n = 400_000
    lr = 0.1
    x = jax.random.normal(make_key(3), (n,))
    new = Q.privatized_step(q, x, make_key(4), tau, r, lr)
    increments = np.asarray(new - q, np.float64) / lr
    F = stats.norm.cdf(q)
    var = (1 / r**2 - (2 * F - 1) ** 2) / 4
    assert increments.mean() == pytest.approx(tau - F, abs=5 * math.sqrt(var / n))
    assert increments.var() == pytest.approx(var, rel=0.05)


def test_privatized_step_broadcasts_and_is_deterministic_in_the_key():
    q = jnp.zeros((3, 4))
    x = jnp.ones((4,))
    a = Q.privatized_step(q, x, make_key(5), 0.5, jnp.array([0.3, 0.5, 0.7, 1.0]), 0.2)
    b = Q.privatized_step(q, x, make_key(5), 0.5, jnp.array([0.3, 0.5, 0.7, 1.0]), 0.2)
    assert a.shape == (3, 4)
    np.testing.assert_array_equal(a, b)
    # r = 1 is the non-private check-loss step: x > q always, so q moves up by lr * tau
    np.testing.assert_allclose(a[:, 3], 0.2 * 0.5)


def test_privatized_step_validation_names_the_argument():
    key = make_key(0)
    for r in (0.0, -0.2, 1.5):
        with pytest.raises(ValueError, match=r"r must be in \(0, 1\]"):
            Q.privatized_step(0.0, 1.0, key, 0.5, r, 0.1)
    for tau in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"tau must be in \(0, 1\)"):
            Q.privatized_step(0.0, 1.0, key, tau, 0.5, 0.1)
    with pytest.raises(ValueError, match="lr must be in"):
        Q.privatized_step(0.0, 1.0, key, 0.5, 0.5, -1.0)
    traced = jax.jit(lambda r: Q.privatized_step(0.0, 1.0, key, 0.5, r, 0.1))
    assert np.isnan(traced(0.0)) and np.isfinite(traced(0.5))
