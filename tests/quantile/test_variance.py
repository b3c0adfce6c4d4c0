"""Theorem 3.1 asymptotic variance: closed forms, gradients, and agreement with simulation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import ldpjax.quantile as Q


def test_classical_limit_tau_one_minus_tau_over_density_squared(x64):
    for tau in (0.1, 0.5, 0.9):
        q = stats.norm.ppf(tau)
        out = Q.asymptotic_variance([1.0], [1.0], [tau], [stats.norm.pdf(q)])
        assert float(out) == pytest.approx(tau * (1 - tau) / stats.norm.pdf(q) ** 2, rel=1e-12)


def test_formula_against_direct_numpy(x64):
    rng = np.random.default_rng(0)
    r = rng.uniform(0.2, 1.0, 7)
    p = rng.dirichlet(np.ones(7))
    levels = rng.uniform(0.05, 0.95, 7)
    dens = rng.uniform(0.1, 0.5, 7)
    ref = np.sum(p**2 * (r**-2 - (2 * levels - 1) ** 2)) / (4 * np.sum(p * dens) ** 2)
    assert float(Q.asymptotic_variance(r, p, levels, dens)) == pytest.approx(ref, rel=1e-12)
    assert float(Q.asymptotic_variance(r, p, levels, dens, nu=2.0)) == pytest.approx(2 * ref, rel=1e-12)


def test_gradient_in_r_matches_closed_form_and_finite_differences(x64):
    # d sigma^2 / d r_k = -2 p_k^2 r_k^-3 / (4 (sum p f)^2)
    r = jnp.array([0.25, 0.5, 0.9])
    p = jnp.array([0.2, 0.3, 0.5])
    levels = jnp.array([0.2, 0.5, 0.7])
    dens = jnp.array([0.3, 0.4, 0.2])
    grad = jax.grad(lambda rr: Q.asymptotic_variance(rr, p, levels, dens))(r)
    closed = -2 * p**2 * r**-3 / (4 * jnp.sum(p * dens) ** 2)
    np.testing.assert_allclose(grad, closed, rtol=1e-12)
    # end to end: CI length for parametric clients (Q* and F_k, f_k at Q* depend on nothing in
    # r, so the chain rule must give the closed form scaled by d length / d sigma^2)
    clients = Q.make_clients("normal", loc=[-1.0, 0.0, 1.5])
    length = lambda rr: Q.asymptotic_ci_length(Q.clients_asymptotic_variance(0.3, rr, clients, p), 10_000)
    g = jax.grad(length)(r)
    h = 1e-6
    for k in range(3):
        e = jnp.zeros(3).at[k].set(h)
        fd = (length(r + e) - length(r - e)) / (2 * h)
        assert float(g[k]) == pytest.approx(float(fd), rel=1e-6)
    assert np.all(np.asarray(g) < 0)  # more truthful answers -> shorter intervals
    assert abs(float(g[0])) > abs(float(g[2]))  # the most private client matters most


def test_gradient_in_locations_is_finite(x64):
    loc = jnp.array([-1.0, 0.0, 1.5])
    f = lambda m: Q.clients_asymptotic_variance(0.3, 0.5, Q.Clients(m, jnp.ones(3), ("normal",) * 3))
    g = jax.grad(f)(loc)
    h = 1e-6
    fd = [(f(loc.at[k].add(h)) - f(loc.at[k].add(-h))) / (2 * h) for k in range(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_variance_matches_monte_carlo_of_the_aggregated_increment():
    # The numerator is 4 x Var(sum_k p_k g_k) at Q*, g_k the debiased increment of client k.
    clients = Q.make_clients("normal", loc=[-0.5, 0.5])
    p = np.array([0.4, 0.6])
    r = np.array([0.3, 0.8])
    tau = 0.6
    q_star = float(Q.global_quantile(tau, clients, p))
    n = 400_000
    key = jax.random.key(1)
    x = Q.sample(key, clients, (n,))
    inc = jnp.stack(
        [
            (Q.privatized_step(q_star, x[:, k], jax.random.fold_in(key, k + 1), tau, r[k], 1.0) - q_star)
            for k in range(2)
        ],
        axis=1,
    )
    aggregated = np.asarray(inc @ p, np.float64)
    dens = stats.norm.pdf(q_star, [-0.5, 0.5], 1.0)
    levels = stats.norm.cdf(q_star, [-0.5, 0.5], 1.0)
    sigma2 = float(Q.asymptotic_variance(r, p, levels, dens))
    # Var estimate from n draws: relative sd ~ sqrt(2/n) * (kurtosis factor <= 2) = 0.45%; 3%.
    assert aggregated.var() / (np.sum(p * dens) ** 2) == pytest.approx(sigma2, rel=0.03)
    assert aggregated.mean() == pytest.approx(0.0, abs=5 * aggregated.std() / np.sqrt(n))


def test_validation():
    with pytest.raises(ValueError, match=r"r must be in \(0, 1\]"):
        Q.asymptotic_variance([0.0], [1.0], [0.5], [0.4])
    with pytest.raises(ValueError, match="weights"):
        Q.asymptotic_variance([0.5, 0.5], [0.5, 0.6], [0.5, 0.5], [0.4, 0.4])
    with pytest.raises(ValueError, match="levels"):
        Q.asymptotic_variance([0.5], [1.0], [1.5], [0.4])
    with pytest.raises(ValueError, match="level"):
        Q.asymptotic_ci_length(1.0, 100, level=1.0)
    out = jax.jit(Q.asymptotic_variance)(jnp.array([0.5]), jnp.array([1.0]), jnp.array([0.5]), jnp.array([0.0]))
    assert np.isnan(out)
