"""Accountants at the edges: float32 at extreme arguments, NaN under ``jit`` for every one, and
a NaN gradient at every invalid budget.

Closes gaps found by mutation testing: a float32-only overflow in ``gdp_delta`` at large mu (no
float32 test at extreme arguments), NaN-under-``jit`` removed from the pure-DP accountants (only
the GDP ones were tested for it), zero gradients at invalid budgets (``jnp.where`` masks the
cotangent), and holes in ``jax.scipy.special.erfcx`` (0 in float32 for x in [9.19, 9.42]) that
made ``gdp_log_delta`` -inf, so eps(delta) stalled for deltas near 1e-39.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import accounting as acc
from ldpjax.accounting.gdp import erfcx


def test_gdp_delta_float32_matches_float64_at_extremes():
    mus = np.array([0.05, 1.0, 5.0, 20.0, 50.0, 200.0])
    eps = np.array([0.0, 1.0, 10.0, 50.0, 100.0, 200.0, 500.0])
    grid_mu, grid_eps = np.meshgrid(mus, eps)
    f32 = np.asarray(acc.gdp_delta(jnp.asarray(grid_mu, jnp.float32), jnp.asarray(grid_eps, jnp.float32)))
    with jax.enable_x64(True):
        f64 = np.asarray(acc.gdp_delta(grid_mu, grid_eps))
    assert np.all(np.isfinite(f32)) and np.all((f32 >= 0) & (f32 <= 1))
    representable = f64 > 1e-30  # float32's normal range ends near 1e-38
    rel = np.abs(f32 - f64)[representable] / f64[representable]
    assert np.max(rel) < 1e-4
    assert np.all(f32[~representable] < 1e-29)


def test_gdp_epsilon_and_tradeoff_float32_at_extremes():
    mus = jnp.asarray([0.05, 1.0, 20.0, 80.0], jnp.float32)
    for delta in (1e-12, 1e-6, 0.3):
        eps = np.asarray(acc.gdp_epsilon(mus, jnp.float32(delta)))
        assert np.all(np.isfinite(eps)) and np.all(eps >= 0)
        with jax.enable_x64(True):
            ref = np.asarray(acc.gdp_epsilon(np.asarray(mus, np.float64), delta))
        np.testing.assert_allclose(eps, ref, rtol=1e-4, atol=1e-5)
    tr = np.asarray(acc.gdp_tradeoff(mus, jnp.float32(1e-30)))
    assert np.all(np.isfinite(tr)) and np.all((tr >= 0) & (tr <= 1))


NAN_UNDER_JIT = [
    ("rr_epsilon", lambda x: acc.rr_epsilon(x), [jnp.nan, -0.1, 0.0, 1.5]),
    ("rr_rate", lambda x: acc.rr_rate(x), [jnp.nan, -1.0]),
    ("krr_explore_prob", lambda x: acc.krr_explore_prob(x, 3), [jnp.nan, -1.0]),
    ("krr_explore_prob(k)", lambda x: acc.krr_explore_prob(1.0, x), [jnp.nan, 1.0, -2.0]),
    ("krr_budget", lambda x: acc.krr_budget(x, 3), [jnp.nan, -0.1, 1.5]),
    ("pure_dp_tradeoff", lambda x: acc.pure_dp_tradeoff(x, 0.3), [jnp.nan, -1.0]),
    ("pure_dp_tradeoff(alpha)", lambda x: acc.pure_dp_tradeoff(1.0, x), [jnp.nan, -0.1, 1.1]),
    ("compose_parallel", lambda x: acc.compose_parallel(jnp.stack([1.0, x])), [jnp.nan, -1.0]),
    ("compose_sequential", lambda x: acc.compose_sequential(jnp.stack([1.0, x])), [jnp.nan, -1.0]),
    ("gdp_delta", lambda x: acc.gdp_delta(x, 1.0), [jnp.nan, -1.0, 0.0]),
    ("gdp_epsilon", lambda x: acc.gdp_epsilon(1.0, x), [jnp.nan, 0.0, 1.0]),
    ("gdp_mu", lambda x: acc.gdp_mu(x, 1e-5), [jnp.nan, -1.0]),
    ("gdp_tradeoff", lambda x: acc.gdp_tradeoff(x, 0.1), [jnp.nan, -1.0]),
    ("gdp_log_delta(eps)", lambda x: acc.gdp_log_delta(1.0, x), [jnp.nan, -1.0]),
    ("gdp_compose", lambda x: acc.gdp_compose(jnp.stack([1.0, x])), [jnp.nan, -1.0]),
    ("gaussian_mu", lambda x: acc.gaussian_mu(1.0, x), [jnp.nan, -1.0]),
    ("gdp_mixture_delta", lambda x: acc.gdp_mixture_delta(jnp.stack([x, 1.0]), jnp.array([0.5, 0.5]), 1.0),
     [jnp.nan, -1.0, 0.0]),
    ("gdp_mixture_delta(weights)", lambda x: acc.gdp_mixture_delta(jnp.array([1.0, 2.0]), jnp.stack([x, 1.0 - x]), 1.0),
     [jnp.nan, -0.5]),
    ("gdp_mixture_tradeoff", lambda x: acc.gdp_mixture_tradeoff(jnp.stack([x, 1.0]), jnp.array([0.5, 0.5]), 0.1),
     [jnp.nan, -1.0]),
    ("zcdp_delta", lambda x: acc.zcdp_delta(x, 1.0), [jnp.nan, -1.0]),
    ("zcdp_epsilon", lambda x: acc.zcdp_epsilon(0.5, x), [jnp.nan, -0.1, 1.0]),
]


@pytest.mark.parametrize("name,fn,bad", NAN_UNDER_JIT, ids=[n for n, _, _ in NAN_UNDER_JIT])
def test_every_accountant_is_nan_under_jit(name, fn, bad):
    out = np.asarray(jax.jit(jax.vmap(fn))(jnp.asarray(bad, jnp.float32)))
    assert np.all(np.isnan(out)), (name, out)
    for value in bad:
        with pytest.raises(ValueError):
            fn(float(value))


@pytest.mark.parametrize("name,fn,bad", NAN_UNDER_JIT, ids=[n for n, _, _ in NAN_UNDER_JIT])
def test_every_accountant_has_a_nan_gradient_at_an_invalid_budget(name, fn, bad):
    grads = np.asarray(jax.jit(jax.vmap(jax.grad(fn)))(jnp.asarray(bad, jnp.float32)))
    assert np.all(np.isnan(grads)), (name, grads)


def test_booleans_are_not_budgets():
    for call in (lambda: acc.rr_epsilon(True), lambda: acc.gdp_delta(True, 1.0),
                 lambda: acc.krr_explore_prob(1.0, np.array([True])),
                 lambda: acc.gdp_epsilon(1.0, jnp.asarray(False))):
        with pytest.raises(ValueError, match="not a boolean"):
            call()
    with pytest.raises(ValueError, match="^r must be a number"):
        jax.jit(acc.rr_epsilon)(jnp.asarray(True))  # the dtype is static: also when traced


def test_erfcx_has_no_holes():
    from scipy.special import erfcx as reference

    x32 = np.linspace(0.0, 60.0, 60001, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(erfcx(jnp.asarray(x32))), reference(x32.astype(float)),
                               rtol=2e-6)
    with jax.enable_x64(True):
        x64 = np.concatenate([np.linspace(0.0, 60.0, 60001), np.geomspace(60.0, 1e12, 200)])
        np.testing.assert_allclose(np.asarray(erfcx(jnp.asarray(x64))), reference(x64), rtol=1e-13)


def test_log_delta_float32_where_delta_underflows():
    # log delta of 5-GDP for eps in [70, 90] spans -72 .. -115: float32 must follow float64
    eps = np.linspace(70.0, 90.0, 41)
    f32 = np.asarray(acc.gdp_log_delta(jnp.float32(5.0), jnp.asarray(eps, jnp.float32)))
    with jax.enable_x64(True):
        f64 = np.asarray(acc.gdp_log_delta(5.0, eps))
    assert np.all(np.isfinite(f32))
    np.testing.assert_allclose(f32, f64, rtol=2e-6)
    eps_at = np.asarray(acc.gdp_epsilon(jnp.float32(5.0), np.array([1e-38, 1e-39, 5e-40, 1e-45])))
    with jax.enable_x64(True):
        ref = np.asarray(acc.gdp_epsilon(5.0, np.array([1e-38, 1e-39, 5e-40, 1e-45])))
    np.testing.assert_allclose(eps_at, ref, rtol=1e-5)
