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


# Cost (fast suite): XLA compiles one kernel per function, dtype and shape. The concrete float64
# evaluations of the 4-component mixture MIX_MUS / MIX_W therefore go through ``_mix64``, which
# pads every batch (of mus, weights and alpha or eps rows) to one length: one kernel per function
# for the module instead of one per test. ``_gdp64`` does the same for the single-GDP references.
_ROWS = 6000


def _mix64(fn, values, mus=None, weights=None):
    """``fn(mus, weights, values)`` in float64 on rows padded to _ROWS; mus, weights default to
    MIX_MUS, MIX_W (broadcast to one row per value)."""
    values = np.asarray(values, np.float64)
    n = values.size
    assert n <= _ROWS
    rows_mu = np.tile(MIX_MUS, (_ROWS, 1))
    rows_w = np.tile(MIX_W, (_ROWS, 1))
    if mus is not None:
        rows_mu[:n] = np.broadcast_to(mus, (n, 4))
    if weights is not None:
        rows_w[:n] = np.broadcast_to(weights, (n, 4))
    padded = np.full(_ROWS, 0.5)
    padded[:n] = values.ravel()
    with jax.enable_x64(True):
        out = np.asarray(fn(rows_mu, rows_w, padded))
    assert out.dtype == np.float64
    return out[:n].reshape(values.shape)


_GDP_N = 32
_JITTED = {gdp_delta: jax.jit(gdp_delta), gdp_tradeoff: jax.jit(gdp_tradeoff)}


def _gdp64(fn, mu, values):
    """Reference ``fn(mu, values)`` (gdp_delta or gdp_tradeoff, jitted: one kernel, not one per
    eager primitive; their eager paths are tested in test_accounting_gdp) for a float mu, in
    float64, values padded to _GDP_N."""
    values = np.asarray(values, np.float64)
    padded = np.full(_GDP_N, 0.5)
    padded[: values.size] = values.ravel()
    with jax.enable_x64(True):
        out = np.asarray(_JITTED[fn](float(mu), padded))
    assert out.dtype == np.float64
    return out[: values.size].reshape(values.shape)


def test_single_component_mixture_is_gdp(x64):
    # all three mus in one call per function (a batch of one-component mixtures)
    alphas = np.array([0.0, 1e-8, 0.01, 0.2, 0.7, 1.0])
    eps = np.array([0.0, 1.0, 5.0])
    mus = np.array([0.1, 1.0, 3.0])
    tradeoffs = np.asarray(gdp_mixture_tradeoff(mus[:, None, None], [1.0], alphas))
    deltas = np.asarray(gdp_mixture_delta(mus[:, None, None], [1.0], eps))
    assert tradeoffs.shape == (3, 6) and deltas.shape == (3, 3)
    for i, mu in enumerate(mus):
        np.testing.assert_allclose(tradeoffs[i], _gdp64(gdp_tradeoff, mu, alphas), rtol=1e-10,
                                   atol=1e-14)
        np.testing.assert_allclose(deltas[i], _gdp64(gdp_delta, mu, eps), rtol=1e-12)


def test_mixture_tradeoff_against_parametric_curve():
    # Independent reference: trace (alpha(c), beta(c)) with SciPy and look our beta up at alpha(c).
    cs = np.array([-3.0, -1.0, 0.0, 0.5, 2.0, 6.0])
    alpha = np.sum(MIX_W * norm.sf(cs[:, None] / MIX_MUS + MIX_MUS / 2), axis=-1)
    beta = np.sum(MIX_W * norm.cdf(cs[:, None] / MIX_MUS - MIX_MUS / 2), axis=-1)
    np.testing.assert_allclose(_mix64(gdp_mixture_tradeoff, alpha), beta, rtol=1e-9)


def test_mixture_delta_is_weighted_sum_and_matches_tradeoff_duality():
    eps = np.array([0.0, 0.3, 1.0, 3.0])
    expected = sum(w * _gdp64(gdp_delta, m, eps) for m, w in zip(MIX_MUS, MIX_W, strict=True))
    ours = _mix64(gdp_mixture_delta, eps)
    np.testing.assert_allclose(ours, expected, rtol=1e-12)
    # delta(eps) = max_alpha 1 - f(alpha) - e^eps alpha  (Dong et al. Prop 2.12)
    alphas = np.concatenate([np.logspace(-12, -1, 3000), np.linspace(0.1, 1, 3000)])
    f = _mix64(gdp_mixture_tradeoff, alphas)
    for i in (1, 2):  # eps = 0.3, 1.0
        dual = np.max(1 - f - math.exp(eps[i]) * alphas)
        assert dual == pytest.approx(ours[i], rel=1e-4)


def test_mixture_is_between_its_components():
    alphas = np.linspace(0.01, 0.99, 21)
    mix = _mix64(gdp_mixture_tradeoff, alphas)
    worst = _gdp64(gdp_tradeoff, MIX_MUS.max(), alphas)
    best = _gdp64(gdp_tradeoff, MIX_MUS.min(), alphas)
    assert np.all(mix >= worst - 1e-12) and np.all(mix <= best + 1e-12)
    assert np.all(np.diff(mix) <= 1e-12)


def test_mixture_gradients_vs_finite_differences(x64):
    def f(mus, w, a):
        return gdp_mixture_tradeoff(mus, w, a)

    # gradients under jit: one kernel each instead of one per eager primitive
    g_mus, g_w, g_a = jax.jit(jax.grad(f, argnums=(0, 1, 2)))(
        jnp.asarray(MIX_MUS), jnp.asarray(MIX_W), 0.05
    )
    h = 1e-6
    # central differences in one padded call: rows 0-7 perturb mu_i by +-h, rows 8-15 weight
    # w_i by +-h (off the simplex: through the unchecked kernel), rows 16-17 alpha by +-h
    steps = np.concatenate([np.eye(4) * h, -np.eye(4) * h])
    mus = np.concatenate([MIX_MUS + steps, np.tile(MIX_MUS, (10, 1))])
    ws = np.concatenate([np.tile(MIX_W, (8, 1)), MIX_W + steps, np.tile(MIX_W, (2, 1))])
    alphas = np.concatenate([np.full(16, 0.05), [0.05 + h, 0.05 - h]])
    fd = _mix64(_raw_tradeoff, alphas, mus, ws)
    for i in range(4):
        fd_mu, fd_w = (fd[i] - fd[4 + i]) / (2 * h), (fd[8 + i] - fd[12 + i]) / (2 * h)
        assert float(g_mus[i]) == pytest.approx(fd_mu, rel=1e-6, abs=1e-10)
        assert float(g_w[i]) == pytest.approx(fd_w, rel=1e-6, abs=1e-10)
    assert float(g_a) == pytest.approx((fd[16] - fd[17]) / (2 * h), rel=1e-6)
    # d delta / d mu_B = p_B phi(-eps/mu_B + mu_B/2) in closed form (a central difference of a
    # delta near 1e-4 is only good to ~1e-7 relative, too coarse to pin this)
    g_delta = jax.jit(jax.grad(lambda m: gdp_mixture_delta(m, MIX_W, 1.0)))(jnp.asarray(MIX_MUS))
    closed = MIX_W * norm.pdf(-1.0 / MIX_MUS + 0.5 * MIX_MUS)
    np.testing.assert_allclose(np.asarray(g_delta), closed, rtol=1e-10)


def _raw_tradeoff(mus, w, a):
    # weights perturbed off the simplex: bypass the public check to difference the formula
    # (the same jitted kernel the public function calls after its checks)
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
    eps = np.asarray(rr_epsilon(rs))
    np.testing.assert_allclose(eps, np.log((1 + rs) / (1 - rs)), rtol=1e-12)
    np.testing.assert_allclose(rr_rate(eps), rs, rtol=1e-12)
    for r, eps_r in zip(rs[1:4], eps[1:4], strict=True):  # r = 0.25, 0.5, 0.9
        # dp-accounting's PLD accountant with a fine grid; its discretisation error is below
        # the value_discretization_interval (1e-6 here).
        acc = pld.PLDAccountant(
            dp_accounting.NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-6
        )
        acc.compose(dp_accounting.RandomizedResponseDpEvent(noise_parameter=1 - r, num_buckets=2))
        assert acc.get_epsilon(0.0) == pytest.approx(float(eps_r), abs=2e-6)


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
    # one shape for every call (one set of eager kernels)
    a = np.linspace(0, 1, 11)
    np.testing.assert_allclose(pure_dp_tradeoff(0.0, a), 1.0 - a, atol=1e-6)  # 0-DP: f = 1 - alpha
    assert float(pure_dp_tradeoff(0.0, a)[3]) == pytest.approx(0.7)
    np.testing.assert_allclose(np.asarray(pure_dp_tradeoff(math.inf, a))[1:], 0.0)
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
    # gradients under jit: one kernel each instead of one per eager primitive
    h = 1e-6
    g = float(jax.jit(jax.grad(rr_epsilon))(0.7))
    assert g == pytest.approx(2 / (1 - 0.49), rel=1e-9)
    gk = float(jax.jit(jax.grad(krr_explore_prob))(1.3, 4.0))
    fd = (float(krr_explore_prob(1.3 + h, 4)) - float(krr_explore_prob(1.3 - h, 4))) / (2 * h)
    assert gk == pytest.approx(fd, rel=1e-7)
    gb = float(jax.jit(jax.grad(krr_budget))(0.3, 4.0))
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
