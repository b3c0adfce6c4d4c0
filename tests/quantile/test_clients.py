"""Client samplers, CDFs and the global quantile Q* against closed forms and SciPy."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize, stats

import ldpjax.quantile as Q
from ldpjax.engine import make_key

SCIPY = {
    "normal": lambda loc, s: stats.norm(loc, s),
    "uniform": lambda loc, s: stats.uniform(loc - s, 2 * s),
    "cauchy": lambda loc, s: stats.cauchy(loc, s),
    "laplace": lambda loc, s: stats.laplace(loc, s),
}


@pytest.mark.parametrize("family", Q.clients.FAMILIES)
def test_single_client_quantile_matches_closed_form(family, x64):
    clients = Q.make_clients(family, loc=0.7, scale=1.3)
    for tau in (0.05, 0.3, 0.5, 0.8, 0.99):
        expected = SCIPY[family](0.7, 1.3).ppf(tau)
        assert float(Q.global_quantile(tau, clients)) == pytest.approx(expected, abs=1e-9)
        assert float(Q.local_quantiles(tau, clients)[0]) == pytest.approx(expected, abs=1e-9)


def test_identical_normal_clients_give_the_normal_quantile():
    clients = Q.make_clients("normal", loc=[1.0] * 5, scale=2.0)
    assert float(Q.global_quantile(0.975, clients)) == pytest.approx(1.0 + 2.0 * 1.959964, abs=1e-4)


def test_heterogeneous_mixture_matches_scipy_root(x64):
    rng = np.random.default_rng(3)
    families = ("normal", "uniform", "cauchy", "laplace", "normal", "cauchy")
    loc = rng.normal(size=6)
    scale = rng.uniform(0.5, 2.0, size=6)
    weights = rng.dirichlet(np.ones(6))
    clients = Q.make_clients(families, loc, scale)
    dists = [SCIPY[f](m, s) for f, m, s in zip(families, loc, scale, strict=True)]
    for tau in (0.1, 0.3, 0.5, 0.8):
        ref = optimize.brentq(
            lambda q, tau=tau: sum(w * d.cdf(q) for w, d in zip(weights, dists, strict=True)) - tau, -50, 50, xtol=1e-13
        )
        assert float(Q.global_quantile(tau, clients, weights)) == pytest.approx(ref, abs=1e-8)
        # cdf / pdf of each client against SciPy at that point
        np.testing.assert_allclose(Q.cdf(clients, ref), [d.cdf(ref) for d in dists], atol=1e-12)
        np.testing.assert_allclose(Q.pdf(clients, ref), [d.pdf(ref) for d in dists], atol=1e-12)


def test_global_quantile_vectorises_over_tau_and_differentiates(x64):
    loc = jnp.array([-1.0, 0.0, 2.0])
    clients = Q.make_clients("normal", loc)
    taus = jnp.array([0.2, 0.5, 0.9])
    roots = Q.global_quantile(taus, clients)
    assert roots.shape == (3,)

    # implicit function theorem: dQ*/dloc_k = p_k f_k(Q*) / sum_j p_j f_j(Q*)
    def q_of_loc(loc):
        return Q.global_quantile(0.3, Q.clients.Clients(loc, clients.scale, clients.families))

    grad = jax.grad(q_of_loc)(loc)
    q = float(q_of_loc(loc))
    dens = stats.norm.pdf(q, np.asarray(loc), 1.0)
    np.testing.assert_allclose(grad, dens / dens.sum(), rtol=1e-8)
    # central finite difference on one coordinate
    h = 1e-6
    step = jnp.array([0.0, h, 0.0])
    fd = (q_of_loc(loc + step) - q_of_loc(loc - step)) / (2 * h)
    assert float(grad[1]) == pytest.approx(float(fd), rel=1e-5)


def test_records_quantile_is_the_pooled_empirical_quantile():
    rng = np.random.default_rng(5)
    rows = [rng.normal(m, 1.0, size=n).round(2) for m, n in zip([0, 1, 3], [101, 250, 77], strict=True)]
    clients = Q.record_clients(rows)
    pooled = np.concatenate(rows)
    weights = np.array([r.size for r in rows]) / pooled.size
    for tau in (0.1, 0.5, 0.77):
        expected = np.quantile(pooled, tau, method="inverted_cdf")
        got = float(Q.global_quantile(tau, clients, weights))
        assert got == pytest.approx(expected, abs=1e-4)
    np.testing.assert_allclose(
        Q.local_quantiles(0.5, clients), [np.quantile(r, 0.5, method="inverted_cdf") for r in rows]
    )
    assert float(Q.cdf(clients, 1.0)[1]) == pytest.approx(np.mean(rows[1] <= 1.0))
    with pytest.raises(ValueError, match="clients must be parametric"):
        Q.pdf(clients, 0.0)


@pytest.mark.parametrize("family", Q.clients.FAMILIES)
def test_samplers_follow_their_cdf(family):
    # n = 40000 draws per client; the empirical CDF at a point has sd <= sqrt(0.25/n) = 0.0025,
    # so 5 sd = 0.0125 (plus float32 inverse-CDF error, far smaller).
    clients = Q.make_clients(family, loc=[-1.0, 2.0], scale=[0.5, 2.0])
    draws = np.asarray(Q.sample(make_key(11), clients, (40000,)))
    assert draws.shape == (40000, 2)
    assert np.all(np.isfinite(draws))
    for k, (m, s) in enumerate([(-1.0, 0.5), (2.0, 2.0)]):
        for point in (m - s, m, m + 0.5 * s, m + 2 * s):
            assert np.mean(draws[:, k] <= point) == pytest.approx(SCIPY[family](m, s).cdf(point), abs=0.0125)


def test_mixture_sampler_uses_each_clients_family():
    clients = Q.make_clients(("uniform", "cauchy"), loc=[0.0, 0.0], scale=[1.0, 1.0])
    draws = np.asarray(Q.sample(make_key(2), clients, (20000,)))
    assert np.abs(draws[:, 0]).max() <= 1.0
    assert np.abs(draws[:, 1]).max() > 50.0  # Cauchy tails: P(max of 20000 |x| < 50) ~ e^-254


def test_records_sampler_resamples_uniformly():
    rows = [np.array([1.0, 2.0, 3.0, 4.0]), np.array([10.0])]
    clients = Q.record_clients(rows)
    draws = np.asarray(Q.sample(make_key(4), clients, (40000,)))
    assert set(np.unique(draws[:, 0])) == {1.0, 2.0, 3.0, 4.0}
    assert np.all(draws[:, 1] == 10.0)
    # each of 4 values has frequency 1/4: sd sqrt(3/16/40000) = 0.0022, 5 sd = 0.011
    for value in (1.0, 2.0, 3.0, 4.0):
        assert np.mean(draws[:, 0] == value) == pytest.approx(0.25, abs=0.011)
    # pooled-stream sampling by client index
    x = Q.sample_from_uniform(clients, jnp.array([0.0, 0.99, 0.5]), client_index=jnp.array([0, 0, 1]))
    np.testing.assert_allclose(x, [1.0, 4.0, 10.0])


def test_clients_validation_names_the_argument():
    with pytest.raises(ValueError, match=r"num_clients \(K\) must be an integer >= 1"):
        Q.make_clients(())
    with pytest.raises(ValueError, match=r"num_clients \(K\) must be an integer >= 1"):
        Q.record_clients([])
    with pytest.raises(ValueError, match="families"):
        Q.make_clients("gamma")
    with pytest.raises(ValueError, match="scale"):
        Q.make_clients("normal", scale=[1.0, 0.0])
    with pytest.raises(ValueError, match="same number of clients"):
        Q.make_clients(("normal", "normal"), loc=[0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=r"records\[1\]"):
        Q.record_clients([[1.0], []])
    clients = Q.make_clients("normal", loc=[0.0, 1.0])
    for tau in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"tau must be in \(0, 1\)"):
            Q.global_quantile(tau, clients)
    with pytest.raises(ValueError, match="weights must be non-negative weights that sum to 1"):
        Q.global_quantile(0.5, clients, [0.3, 0.3])
    with pytest.raises(ValueError, match="weights must have one entry per client"):
        Q.global_quantile(0.5, clients, [0.2, 0.3, 0.5])


def test_global_quantile_is_nan_for_traced_invalid_tau():
    clients = Q.make_clients("normal", loc=[0.0, 1.0])
    out = jax.jit(lambda t: Q.global_quantile(t, clients))(jnp.array([0.5, 1.2]))
    assert np.isfinite(out[0]) and np.isnan(out[1])
