"""Gaussian DP accounting: accuracy against independent references, gradients, edges, errors.

References: mpmath at 50 digits for the closed form delta(eps) (independent of our erfcx
rewriting), Google's dp-accounting `get_epsilon_gaussian` (its own bisection, tol 1e-15 here),
central finite differences in float64 for gradients.
"""

from __future__ import annotations

import itertools
import math

import dp_accounting
import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpjax.accounting import (
    gaussian_mu,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_log_delta,
    gdp_mu,
    gdp_tradeoff,
)

mp.mp.dps = 50
MUS = [0.05, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0]
EPSS = [0.0, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 35.0, 50.0]
DELTAS = [1e-12, 1e-10, 1e-8, 1e-6, 1e-5, 1e-3, 1e-2, 0.1, 0.3, 0.5]


def mp_log_delta(mu: float, eps: float) -> mp.mpf:
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    a = -eps / mu + mu / 2
    b = -eps / mu - mu / 2
    return mp.log(mp.ncdf(a) - mp.exp(eps) * mp.ncdf(b))


def test_gdp_delta_matches_closed_form_in_high_precision(x64):
    mus, epss = np.meshgrid(MUS, EPSS, indexing="ij")
    ours = np.asarray(gdp_log_delta(mus, epss))
    for i, j in itertools.product(range(len(MUS)), range(len(EPSS))):
        ref = float(mp_log_delta(MUS[i], EPSS[j]))
        delta_ref = math.exp(ref)
        # log delta to 1e-9 relative covers delta itself to ~1e-9 relative where it does not
        # underflow; where it underflows (e.g. mu=0.05, eps=50: log delta ~ -5e5) the log is
        # what stays meaningful.
        assert ours[i, j] == pytest.approx(ref, rel=1e-9, abs=1e-12), (MUS[i], EPSS[j])
        if delta_ref > 1e-300:
            assert float(gdp_delta(MUS[i], EPSS[j])) == pytest.approx(delta_ref, rel=1e-9)


def test_gdp_epsilon_matches_dp_accounting(x64):
    for mu, delta in itertools.product(MUS, DELTAS):
        ref = dp_accounting.get_epsilon_gaussian(1.0 / mu, delta, tol=1e-15)
        ours = float(gdp_epsilon(mu, delta))
        if ref == 0.0:
            assert ours == 0.0
        else:
            assert ours == pytest.approx(ref, rel=1e-9), (mu, delta)


def test_gdp_epsilon_inverts_delta_and_mu_inverts_both(x64):
    mus, deltas = np.meshgrid(MUS, DELTAS, indexing="ij")
    eps = gdp_epsilon(mus, deltas)
    positive = np.asarray(eps) > 0
    back = np.asarray(gdp_delta(mus, eps))
    np.testing.assert_allclose(back[positive], deltas[positive], rtol=1e-9)
    mu_back = np.asarray(gdp_mu(eps, deltas))
    np.testing.assert_allclose(mu_back[positive], mus[positive], rtol=1e-9)


def test_gdp_tradeoff_closed_form_and_float32():
    alphas = np.array([0.0, 1e-10, 1e-4, 0.05, 0.3, 0.5, 0.9, 1.0])
    from scipy.stats import norm

    for mu in [0.1, 1.0, 4.0]:
        ref = norm.cdf(norm.isf(alphas) - mu)
        got = np.asarray(gdp_tradeoff(np.float32(mu), alphas.astype(np.float32)))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref, rtol=2e-5, atol=1e-7)


def test_tradeoff_matches_privacy_profile_by_duality(x64):
    # delta(eps) = 1 + f*(-e^eps) with f* the convex conjugate (Dong et al. Prop. 2.12):
    # delta(eps) = max_alpha [1 - f(alpha) - e^eps alpha]; maximise on a fine grid.
    alphas = np.concatenate([np.logspace(-14, -1, 4000), np.linspace(0.1, 1, 4000)])
    for mu, eps in [(0.5, 0.3), (1.0, 1.0), (2.0, 3.0)]:
        f = np.asarray(gdp_tradeoff(mu, alphas))
        dual = np.max(1 - f - math.exp(eps) * alphas)
        assert dual == pytest.approx(float(gdp_delta(mu, eps)), rel=1e-5)


def test_compose_and_gaussian_mu():
    assert float(gdp_compose(jnp.array([3.0, 4.0]))) == pytest.approx(5.0)
    assert float(gdp_compose(jnp.zeros(3))) == 0.0
    np.testing.assert_allclose(gdp_compose(jnp.ones((2, 4)), axis=-1), [2.0, 2.0])
    assert float(gaussian_mu(2.0, 4.0)) == 0.5
    assert float(gaussian_mu(1.0, 0.0)) == math.inf
    # k-fold composition of mu-GDP equals one sqrt(k) mu-GDP release (Dong et al. Cor. 3.3).
    assert float(gdp_compose(jnp.full(16, 0.25))) == pytest.approx(1.0)


def _central_difference(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("mu,eps", [(0.3, 0.2), (1.0, 1.0), (2.0, 5.0), (5.0, 20.0), (0.1, 2.0)])
def test_gdp_delta_gradients(x64, mu, eps):
    g_mu, g_eps = jax.grad(gdp_delta, argnums=(0, 1))(mu, eps)
    h = 1e-6
    fd_mu = _central_difference(lambda m: float(gdp_delta(m, eps)), mu, h)
    fd_eps = _central_difference(lambda e: float(gdp_delta(mu, e)), eps, h)
    assert float(g_mu) == pytest.approx(fd_mu, rel=1e-7, abs=1e-10)
    assert float(g_eps) == pytest.approx(fd_eps, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("mu,delta", [(0.3, 1e-5), (1.0, 1e-5), (1.0, 1e-10), (5.0, 0.1), (20.0, 1e-12)])
def test_gdp_epsilon_gradients_implicit_function_theorem(x64, mu, delta):
    g_mu, g_delta = jax.grad(gdp_epsilon, argnums=(0, 1))(mu, delta)
    fd_mu = _central_difference(lambda m: float(gdp_epsilon(m, delta)), mu, 1e-6 * mu)
    fd_delta = _central_difference(lambda d: float(gdp_epsilon(mu, d)), delta, 1e-6 * delta)
    assert float(g_mu) == pytest.approx(fd_mu, rel=1e-7)
    assert float(g_delta) == pytest.approx(fd_delta, rel=1e-6)
    # and the closed form d eps/d mu = phi(a) / (e^eps Phi(b))
    eps = float(gdp_epsilon(mu, delta))
    a, b = -eps / mu + mu / 2, -eps / mu - mu / 2
    closed = float(mp.npdf(a) / (mp.e**eps * mp.ncdf(b)))
    assert float(g_mu) == pytest.approx(closed, rel=1e-9)


def test_gdp_mu_gradient(x64):
    g = jax.grad(gdp_mu)(1.5, 1e-5)
    fd = _central_difference(lambda e: float(gdp_mu(e, 1e-5)), 1.5, 1e-6)
    assert float(g) == pytest.approx(fd, rel=1e-7)


def test_edges():
    assert float(gdp_delta(math.inf, 1.0)) == 1.0
    assert float(gdp_delta(1.0, math.inf)) == 0.0
    assert float(gdp_epsilon(math.inf, 1e-5)) == math.inf
    # mu -> 0: eps -> 0 (delta(0) = 2 Phi(mu/2) - 1 falls below any fixed delta)
    assert float(gdp_epsilon(1e-8, 1e-5)) == 0.0
    small = np.asarray(gdp_epsilon(np.array([1e-3, 1e-2, 1e-1]), 1e-12))
    assert np.all(np.diff(small) > 0) and small[0] < 0.02
    # large eps / tiny delta: finite logs, no NaN, no overflow
    assert np.isfinite(float(gdp_log_delta(0.05, 50.0)))
    assert float(gdp_delta(0.05, 50.0)) == 0.0
    with jax.enable_x64(True):
        ref = float(gdp_epsilon(20.0, 1e-300))
    assert np.isfinite(ref)
    # in float32, 1e-300 would underflow to 0: the concrete delta is logged in float64 first,
    # so float32 gives the same finite eps (log 1e-300 = -690.8 is representable)
    assert float(gdp_epsilon(np.float32(20.0), 1e-300)) == pytest.approx(ref, rel=1e-5)
    # a budget below float32's normal range (flushed to 0 by XLA) counts as the smallest normal
    assert float(gdp_epsilon(1e-40, 1e-5)) == 0.0
    grads = jax.grad(gdp_delta, argnums=(0, 1))(0.05, 50.0)
    assert all(np.isfinite(float(g)) for g in grads)


def test_float32_jit_vmap_grad():
    mu = jnp.linspace(0.1, 5.0, 7, dtype=jnp.float32)
    eps = jax.jit(jax.vmap(gdp_epsilon, in_axes=(0, None)))(mu, jnp.float32(1e-5))
    assert eps.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(eps)))
    grads = jax.vmap(jax.grad(gdp_epsilon), in_axes=(0, None))(mu, jnp.float32(1e-5))
    assert bool(jnp.all(grads > 0))
    with jax.enable_x64(True):
        ref = np.asarray(gdp_epsilon(np.asarray(mu, np.float64), 1e-5))
    np.testing.assert_allclose(np.asarray(eps), ref, rtol=1e-4)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: gdp_delta(0.0, 1.0), "mu"),
        (lambda: gdp_delta(-1.0, 1.0), "mu"),
        (lambda: gdp_delta(1.0, -0.1), "eps"),
        (lambda: gdp_delta(math.nan, 1.0), "mu"),
        (lambda: gdp_epsilon(1.0, 0.0), "delta"),
        (lambda: gdp_epsilon(1.0, 1.0), "delta"),
        (lambda: gdp_epsilon(1.0, np.array([0.1, math.nan])), "delta"),
        (lambda: gdp_tradeoff(1.0, 1.5), "alpha"),
        (lambda: gdp_tradeoff(-2.0, 0.5), "mu"),
        (lambda: gdp_mu(-1.0, 0.1), "eps"),
        (lambda: gdp_compose(jnp.array([1.0, -1.0])), "mus"),
        (lambda: gaussian_mu(1.0, -1.0), "sigma"),
    ],
)
def test_bad_input_raises_value_error_naming_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        call()


def test_traced_out_of_domain_gives_nan():
    assert math.isnan(float(jax.jit(gdp_epsilon)(-1.0, 0.1)))
    assert math.isnan(float(jax.jit(gdp_delta)(1.0, -1.0)))
    assert math.isnan(float(jax.jit(gdp_tradeoff)(1.0, 2.0)))


# ---------------------------------------------------------------- properties (hypothesis)
mu_st = st.floats(0.05, 20.0)
eps_st = st.floats(0.0, 50.0)
delta_st = st.floats(1e-12, 0.5)
alpha_st = st.floats(0.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(mu=mu_st, e1=eps_st, e2=eps_st)
def test_delta_decreasing_in_eps_and_increasing_in_mu(mu, e1, e2):
    with jax.enable_x64(True):
        lo, hi = sorted((e1, e2))
        assert float(gdp_log_delta(mu, hi)) <= float(gdp_log_delta(mu, lo)) + 1e-12
        assert float(gdp_log_delta(mu * 1.1, lo)) >= float(gdp_log_delta(mu, lo)) - 1e-12


@settings(max_examples=60, deadline=None)
@given(mu=mu_st, delta=delta_st)
def test_epsilon_delta_round_trip(mu, delta):
    with jax.enable_x64(True):
        eps = float(gdp_epsilon(mu, delta))
        if eps > 0:
            assert float(gdp_delta(mu, eps)) == pytest.approx(delta, rel=1e-8)
        else:
            assert float(gdp_delta(mu, 0.0)) <= delta * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(mu=mu_st, a1=alpha_st, a2=alpha_st, lam=st.floats(0.0, 1.0))
def test_tradeoff_convex_nonincreasing_below_diagonal(mu, a1, a2, lam):
    with jax.enable_x64(True):
        f = lambda a: float(gdp_tradeoff(mu, a))  # noqa: E731
        lo, hi = sorted((a1, a2))
        assert f(hi) <= f(lo) + 1e-12
        assert f(lo) <= 1 - lo + 1e-12
        mid = lam * lo + (1 - lam) * hi
        assert f(mid) <= lam * f(lo) + (1 - lam) * f(hi) + 1e-10
