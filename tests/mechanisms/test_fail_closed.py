"""Fail closed: no input, concrete or traced, turns privacy noise off or weakens it silently.

Concrete out-of-domain budgets, sensitivities, values, bits and categories raise ``ValueError``
naming the argument; the same values traced under ``jit`` give a NaN release (real values) or
the most private outcome (fair coin, uniform category) — never the unperturbed input.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import mechanisms as M

KEY = jax.random.key(7)
BAD_MU = [np.nan, -np.inf, -1.0, 0.0]
BAD_R = [np.nan, -0.5, 0.0, 1.5]
BAD_XI = [np.nan, -1.0, -np.inf]

# Cost (fast suite): the traced checks call module-level jitted functions, so each compiles once
# for all its parametrised cases (a lambda jitted inside the test compiles anew for every case).
_GAUSSIAN_TRACED_MU = {
    g: jax.jit(lambda k, x, m, g=g: M.gaussian_mechanism(k, x, 1.0, m, granularity=g))
    for g in (None, 2.0**-8)
}
_GAUSSIAN_TRACED_SENSITIVITY = jax.jit(lambda s: M.gaussian_mechanism(KEY, jnp.zeros(3), s, 1.0))


@pytest.mark.parametrize("mu", BAD_MU)
def test_gaussian_bad_mu_concrete_raises(mu):
    with pytest.raises(ValueError, match="mu"):
        M.gaussian_mechanism(KEY, jnp.zeros(3), 1.0, mu)


@pytest.mark.parametrize("mu", BAD_MU)
@pytest.mark.parametrize("granularity", [None, 2.0**-8])
def test_gaussian_bad_mu_traced_is_nan(mu, granularity):
    release = _GAUSSIAN_TRACED_MU[granularity](KEY, jnp.zeros(3), mu)
    assert np.all(np.isnan(np.asarray(release)))


@pytest.mark.parametrize("sensitivity", [np.nan, -1.0, np.inf])
def test_gaussian_bad_sensitivity(sensitivity):
    with pytest.raises(ValueError, match="sensitivity"):
        M.gaussian_mechanism(KEY, jnp.zeros(3), sensitivity, 1.0)
    release = _GAUSSIAN_TRACED_SENSITIVITY(sensitivity)
    assert np.all(np.isnan(np.asarray(release)))


def test_gaussian_value_outside_domain():
    with pytest.raises(ValueError, match="value"):
        M.gaussian_mechanism(KEY, 5.0 * jnp.ones(3), 1.0, 1.0, domain=(0.0, 1.0))
    release = jax.jit(lambda x: M.gaussian_mechanism(KEY, x, 1.0, 1.0, domain=(0.0, 1.0)))(
        5.0 * jnp.ones(3)
    )
    assert np.all(np.isnan(np.asarray(release)))


def test_mu_inf_is_explicit_no_noise():
    x = jnp.array([0.25, 0.5])
    np.testing.assert_array_equal(M.gaussian_mechanism(KEY, x, 1.0, jnp.inf), x)
    assert float(M.gaussian_noise_scale(1.0, jnp.inf)) == 0.0


def test_noise_scale_one_function():
    assert float(M.gaussian_noise_scale(3.0, 2.0)) == 1.5
    assert np.isnan(float(jax.jit(M.gaussian_noise_scale)(1.0, jnp.nan)))
    assert np.isnan(float(jax.jit(M.gaussian_noise_scale)(1.0, -jnp.inf)))


@pytest.mark.parametrize("r", BAD_R)
def test_randomized_response_bad_rate(r):
    bits = jnp.ones(4000, jnp.int32)
    with pytest.raises(ValueError, match="r"):
        M.randomized_response(KEY, bits, r)
    report = jax.jit(M.randomized_response)(KEY, bits, r)
    # fails closed to a fair coin: 4000 reports, mean 1/2 +- 6 SE (SE = 0.5 / sqrt(4000) = 0.0079)
    assert abs(float(jnp.mean(report)) - 0.5) < 6 * 0.5 / np.sqrt(4000)
    assert np.isnan(float(jax.jit(M.debias_randomized_response)(1.0, r)))


def test_randomized_response_bad_bits():
    with pytest.raises(ValueError, match="bit"):
        M.randomized_response(KEY, jnp.array([0, 2]), 0.5)
    with pytest.raises(TypeError, match="bit"):
        M.randomized_response(KEY, "1", 0.5)


@pytest.mark.parametrize("xi", BAD_XI)
def test_kary_bad_budget(xi):
    cats = jnp.zeros(6000, jnp.int32)
    with pytest.raises(ValueError, match="xi"):
        M.kary_randomized_response(KEY, cats, xi, 4)
    report = jax.jit(M.kary_randomized_response)(KEY, cats, xi, 4)
    # fails closed: every report is the invalid category -1 (never the truth, never biased)
    assert np.all(np.asarray(report) == -1)


def test_kary_bad_k_and_category():
    with pytest.raises(ValueError, match="k"):
        M.kary_randomized_response(KEY, jnp.zeros(3, jnp.int32), 1.0, 1)
    with pytest.raises(ValueError, match="category"):
        M.kary_randomized_response(KEY, jnp.array([0, 4]), 1.0, 4)
    # traced category >= k or k = 1: never passes through unchanged (6000 reports: the shape of
    # test_kary_bad_budget, so the jitted kernel is shared)
    report = jax.jit(M.kary_randomized_response)(KEY, jnp.full(6000, 7, jnp.int32), 1.0, 4)
    assert np.all(np.asarray(report) == -1)
    report = jax.jit(M.kary_randomized_response)(KEY, jnp.zeros(6000, jnp.int32), 1.0, 1)
    assert np.all(np.asarray(report) == -1)  # k = 1 is invalid: an invalid release


def test_granularity_must_be_power_of_two():
    for g in (0.3, -0.25, 0.0, float("nan")):
        with pytest.raises(ValueError, match="granularity"):
            M.gaussian_mechanism(KEY, jnp.zeros(2), 1.0, 1.0, granularity=g)
    with pytest.raises(TypeError, match="granularity"):
        M.gaussian_mechanism(KEY, jnp.zeros(2), 1.0, 1.0, granularity="fine")


def test_granularity_too_fine_is_refused():
    with pytest.raises(ValueError, match="granularity"):
        M.gaussian_mechanism(KEY, jnp.zeros(2), 1.0, 1e-3, granularity=2.0**-20)


def test_value_and_grad_at_bad_budget_is_nan_loss():
    # An optimiser stepping to an invalid budget sees a NaN loss (never a noiseless release).
    # jitted (as in an optimiser step): one kernel for both calls
    loss = jax.jit(
        jax.value_and_grad(lambda m: jnp.sum(M.gaussian_mechanism(KEY, jnp.zeros(3), 1.0, m)))
    )
    value, _ = loss(jnp.nan)
    assert np.isnan(float(value))
    value, grad = loss(1.0)
    assert np.isfinite(float(value)) and np.isfinite(float(grad))
