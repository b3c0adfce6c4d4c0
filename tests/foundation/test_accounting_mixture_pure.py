"""Mixture (amplification) accounting and pure-DP (randomized response) accounting."""

from __future__ import annotations

import math

import dp_accounting
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dp_accounting import pld
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from ldpjax.accounting import (
    compose_parallel,
    compose_sequential,
    gdp_delta,
    gdp_mixture_delta,
    gdp_mixture_tradeoff,
    gdp_tradeoff,
    krr_budget,
    krr_explore_prob,
    pure_dp_tradeoff,
    rr_epsilon,
    rr_rate,
)

MIX_MUS = np.array([2.0, 1.0, 0.5, 0.25])
MIX_W = np.array([0.1, 0.2, 0.3, 0.4])


def test_single_component_mixture_is_gdp(x64):
    alphas = np.array([0.0, 1e-8, 0.01, 0.2, 0.7, 1.0])
    for mu in [0.1, 1.0, 3.0]:
        np.testing.assert_allclose(
            gdp_mixture_tradeoff([mu], [1.0], alphas), gdp_tradeoff(mu, alphas), rtol=1e-10,
            atol=1e-14,
        )
        np.testing.assert_allclose(
            gdp_mixture_delta([mu], [1.0], np.array([0.0, 1.0, 5.0])),
            gdp_delta(mu, np.array([0.0, 1.0, 5.0])), rtol=1e-12,
        )


def test_mixture_tradeoff_against_parametric_curve(x64):
    # Independent reference: trace (alpha(c), beta(c)) with SciPy and look our beta up at alpha(c).
    for c in [-3.0, -1.0, 0.0, 0.5, 2.0, 6.0]:
        alpha = np.sum(MIX_W * norm.sf(c / MIX_MUS + MIX_MUS / 2))
        beta = np.sum(MIX_W * norm.cdf(c / MIX_MUS - MIX_MUS / 2))
        assert float(gdp_mixture_tradeoff(MIX_MUS, MIX_W, alpha)) == pytest.approx(beta, rel=1e-9)


def test_mixture_delta_is_weighted_sum_and_matches_tradeoff_duality(x64):
    eps = np.array([0.0, 0.3, 1.0, 3.0])
    expected = sum(w * np.asarray(gdp_delta(m, eps)) for m, w in zip(MIX_MUS, MIX_W, strict=True))
    np.testing.assert_allclose(gdp_mixture_delta(MIX_MUS, MIX_W, eps), expected, rtol=1e-12)
    # delta(eps) = max_alpha 1 - f(alpha) - e^eps alpha  (Dong et al. Prop 2.12)
    alphas = np.concatenate([np.logspace(-12, -1, 3000), np.linspace(0.1, 1, 3000)])
    f = np.asarray(gdp_mixture_tradeoff(MIX_MUS, MIX_W, alphas))
    for e in [0.3, 1.0]:
        dual = np.max(1 - f - math.exp(e) * alphas)
        assert dual == pytest.approx(float(gdp_mixture_delta(MIX_MUS, MIX_W, e)), rel=1e-4)


def test_mixture_is_between_its_components(x64):
    alphas = np.linspace(0.01, 0.99, 21)
    mix = np.asarray(gdp_mixture_tradeoff(MIX_MUS, MIX_W, alphas))
    worst = np.asarray(gdp_tradeoff(MIX_MUS.max(), alphas))
    best = np.asarray(gdp_tradeoff(MIX_MUS.min(), alphas))
    assert np.all(mix >= worst - 1e-12) and np.all(mix <= best + 1e-12)
    assert np.all(np.diff(mix) <= 1e-12)


def test_mixture_gradients_vs_finite_differences(x64):
    def f(mus, w, a):
        return gdp_mixture_tradeoff(mus, w, a)

    g_mus, g_w, g_a = jax.grad(f, argnums=(0, 1, 2))(jnp.asarray(MIX_MUS), jnp.asarray(MIX_W), 0.05)
    h = 1e-6
    for i in range(4):
        e = np.eye(4)[i] * h
        fd = (float(f(MIX_MUS + e, MIX_W, 0.05)) - float(f(MIX_MUS - e, MIX_W, 0.05))) / (2 * h)
        assert float(g_mus[i]) == pytest.approx(fd, rel=1e-6, abs=1e-10)
        fdw = (float(_raw_tradeoff(MIX_MUS, MIX_W + e, 0.05)) - float(_raw_tradeoff(MIX_MUS, MIX_W - e, 0.05))) / (2 * h)
        assert float(g_w[i]) == pytest.approx(fdw, rel=1e-6, abs=1e-10)
    fda = (float(f(MIX_MUS, MIX_W, 0.05 + h)) - float(f(MIX_MUS, MIX_W, 0.05 - h))) / (2 * h)
    assert float(g_a) == pytest.approx(fda, rel=1e-6)
    # d delta / d mu_B = p_B phi(-eps/mu_B + mu_B/2) in closed form (a central difference of a
    # delta near 1e-4 is only good to ~1e-7 relative, too coarse to pin this)
    g_delta = jax.grad(lambda m: gdp_mixture_delta(m, MIX_W, 1.0))(jnp.asarray(MIX_MUS))
    closed = MIX_W * norm.pdf(-1.0 / MIX_MUS + 0.5 * MIX_MUS)
    np.testing.assert_allclose(np.asarray(g_delta), closed, rtol=1e-10)


def _raw_tradeoff(mus, w, a):
    # weights perturbed off the simplex: bypass the public check to difference the formula
    from ldpjax.accounting.mixture import _mixture_tradeoff

    return _mixture_tradeoff(jnp.asarray(mus), jnp.asarray(w), jnp.asarray(a, jnp.float64))


def test_mixture_vmaps_over_rounds_and_float32():
    mus = jnp.asarray(np.stack([MIX_MUS, MIX_MUS * 2]), jnp.float32)
    out = jax.jit(jax.vmap(gdp_mixture_tradeoff, in_axes=(0, None, None)))(
        mus, jnp.asarray(MIX_W, jnp.float32), jnp.float32(0.1)
    )
    assert out.dtype == jnp.float32 and out.shape == (2,) and bool(out[0] > out[1])


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gdp_mixture_tradeoff([1.0, 0.5], [0.5, 0.6], 0.1), "weights"),
        (lambda: gdp_mixture_tradeoff([1.0, -0.5], [0.5, 0.5], 0.1), "mus"),
        (lambda: gdp_mixture_tradeoff([1.0, 0.5], [0.5, 0.5], 1.1), "alpha"),
        (lambda: gdp_mixture_delta([1.0, 0.5], [0.5, 0.5], -1.0), "eps"),
        (lambda: gdp_mixture_delta([1.0, 0.5], [1.0], 1.0), "mus and weights"),
    ],
)
def test_mixture_bad_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


# ---------------------------------------------------------------- randomized response
def test_rr_epsilon_closed_form_and_dp_accounting(x64):
    rs = np.array([0.05, 0.25, 0.5, 0.9, 0.999])
    np.testing.assert_allclose(rr_epsilon(rs), np.log((1 + rs) / (1 - rs)), rtol=1e-12)
    np.testing.assert_allclose(rr_rate(rr_epsilon(rs)), rs, rtol=1e-12)
    for r in [0.25, 0.5, 0.9]:
        # dp-accounting's PLD accountant with a fine grid; its discretisation error is below
        # the value_discretization_interval (1e-6 here).
        acc = pld.PLDAccountant(
            dp_accounting.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-6
        )
        acc.compose(dp_accounting.RandomizedResponseDpEvent(noise_parameter=1 - r, num_buckets=2))
        assert acc.get_epsilon(0.0) == pytest.approx(float(rr_epsilon(r)), abs=2e-6)


@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_krr_budget_matches_dp_accounting(x64, k):
    for xi in [0.1, 1.0, 3.0]:
        p = float(krr_explore_prob(xi, k))
        assert p == pytest.approx(k / (k + math.exp(xi) - 1), rel=1e-12)
        assert float(krr_budget(p, k)) == pytest.approx(xi, rel=1e-12)
        acc = pld.PLDAccountant(
            dp_accounting.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-6
        )
        acc.compose(dp_accounting.RandomizedResponseDpEvent(noise_parameter=p, num_buckets=k))
        assert acc.get_epsilon(0.0) == pytest.approx(xi, abs=2e-6)


def test_krr_composition_with_dp_accounting(x64):
    # the PLD accountant ignores `count` for RR, so compose explicitly (spec accounting.md)
    xi, k, uses = 0.5, 3, 4
    acc = pld.PLDAccountant(
        dp_accounting.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-6
    )
    event = dp_accounting.RandomizedResponseDpEvent(noise_parameter=float(krr_explore_prob(xi, k)), num_buckets=k)
    acc.compose(dp_accounting.ComposedDpEvent([event] * uses))
    assert acc.get_epsilon(0.0) == pytest.approx(float(compose_sequential(jnp.full(uses, xi))), abs=1e-5)


def test_krr_edges_and_large_budgets(x64):
    assert float(krr_explore_prob(0.0, 4)) == 1.0
    assert float(krr_explore_prob(math.inf, 4)) == 0.0
    assert float(krr_budget(0.0, 4)) == math.inf
    assert float(krr_budget(1.0, 4)) == 0.0
    assert float(krr_explore_prob(700.0, 3)) > 0  # no overflow in e^xi: uses K e^-xi
    assert float(rr_epsilon(1.0)) == math.inf
    assert float(rr_rate(math.inf)) == 1.0


def test_pure_dp_tradeoff_is_binary_rr_tradeoff(x64):
    # Neyman-Pearson for binary RR: outputs {0,1}, P0 = ((1+r)/2, (1-r)/2), P1 reversed.
    # Randomised tests trace the segments through (0,1), (q, 1-q... ) -> piecewise linear curve.
    r = 0.6
    q, p = (1 - r) / 2, (1 + r) / 2  # P0(out=1) = q, P1(out=1) = p
    alphas = np.linspace(0, 1, 101)
    # reject H0 when out=1 with prob min(1, a/q), and also when out=0 beyond that
    beta = np.where(alphas <= q, 1 - p * alphas / q, (1 - p) * (1 - (alphas - q) / (1 - q)))
    np.testing.assert_allclose(pure_dp_tradeoff(rr_epsilon(r), alphas), beta, atol=1e-12)


def test_pure_dp_tradeoff_shape():
    a = np.linspace(0, 1, 11)
    assert float(pure_dp_tradeoff(0.0, 0.3)) == pytest.approx(0.7)
    np.testing.assert_allclose(pure_dp_tradeoff(math.inf, a[1:]), 0.0)
    assert np.all(np.diff(np.asarray(pure_dp_tradeoff(1.0, a))) <= 0)


def test_composition_helpers():
    budgets = jnp.array([[0.5, 1.0, 0.2], [0.1, 0.1, 0.1]])
    np.testing.assert_allclose(compose_parallel(budgets), [1.0, 0.1])
    np.testing.assert_allclose(compose_sequential(budgets), [1.7, 0.3], rtol=1e-6)
    assert float(compose_sequential(budgets, axis=None)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="^budgets must"):
        compose_parallel(jnp.array([1.0, -1.0]))


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: rr_epsilon(0.0), "r"),
        (lambda: rr_epsilon(1.5), "r"),
        (lambda: rr_rate(-1.0), "eps"),
        (lambda: krr_explore_prob(1.0, 1), "k"),
        (lambda: krr_explore_prob(1.0, 2.5), "k"),
        (lambda: krr_explore_prob(-1.0, 3), "xi"),
        (lambda: krr_budget(1.2, 3), "explore_prob"),
        (lambda: pure_dp_tradeoff(1.0, -0.1), "alpha"),
        (lambda: pure_dp_tradeoff(math.nan, 0.1), "eps"),
    ],
)
def test_pure_bad_input(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


def test_pure_gradients(x64):
    h = 1e-6
    g = float(jax.grad(rr_epsilon)(0.7))
    assert g == pytest.approx(2 / (1 - 0.49), rel=1e-9)
    gk = float(jax.grad(krr_explore_prob)(1.3, 4.0))
    fd = (float(krr_explore_prob(1.3 + h, 4)) - float(krr_explore_prob(1.3 - h, 4))) / (2 * h)
    assert gk == pytest.approx(fd, rel=1e-7)
    gb = float(jax.grad(krr_budget)(0.3, 4.0))
    fd = (float(krr_budget(0.3 + h, 4)) - float(krr_budget(0.3 - h, 4))) / (2 * h)
    assert gb == pytest.approx(fd, rel=1e-7)


@settings(max_examples=50, deadline=None)
@given(r=st.floats(1e-4, 0.9999), k=st.integers(2, 50), xi=st.floats(0.0, 30.0))
def test_round_trips_and_monotonicity(r, k, xi):
    with jax.enable_x64(True):
        assert float(rr_rate(rr_epsilon(r))) == pytest.approx(r, rel=1e-9)
        p = float(krr_explore_prob(xi, k))
        if p < 1:
            assert float(krr_budget(p, k)) == pytest.approx(xi, rel=1e-9, abs=1e-12)
        assert float(krr_explore_prob(xi + 0.1, k)) <= p
        assert float(rr_epsilon(min(r * 1.01, 0.99999))) >= float(rr_epsilon(r))
