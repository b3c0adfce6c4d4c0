"""Agarwal & Singh (2017) baseline: the tree mechanism's noise (Monte Carlo variance of every
released prefix sum vs popcount(t) sigma^2, which is <= L sigma^2, the accounting's claim), the
exact prefix sums without noise, Hedge against a NumPy reference, the accounting of both
settings, and the Min Regret optimisation against an independent grid search."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize, stats

from ldpjax.accounting import gdp_delta
from ldpjax.engine import make_key, record, simulate
from ldpjax.experts import EXPERTS_HINTS
from ldpjax.experts import agarwal_singh as A


def test_tree_levels_and_popcount():
    assert [A.tree_levels(T) for T in (1, 2, 3, 4, 7, 8, 148, 256)] == [1, 2, 2, 3, 3, 4, 8, 9]
    t = np.arange(300)
    np.testing.assert_array_equal(A.popcount(t), [bin(x).count("1") for x in t])


# Min Noise settings, grid entries 2 and 3 of tree_runs: budgets large enough that the worst-case
# bound is below T (12.6 and about 8 at n = 3, T = 23), so exceeding it is possible
BOUND_MUS = np.array([8.0, 16.0])


@pytest.fixture(scope="module")
def tree_runs():
    # n = 3 experts, T = 23 rounds (L = 5), 6000 runs; one simulation (one compilation) for
    # sigma = 0.7 and sigma = 0 (exactness) at lambda = 0.5, then Min Noise at mu = 8, 16.
    T, n = 23, 3
    # expert 0 always gains 1, the others U(0, 0.1): playing without learning (uniformly) has
    # regret about 23 - 23 (1 + 0.05 + 0.05) / 3 = 14.6, above both Min Noise bounds tested
    # below (12.6, 8.1), so test_bound_is_respected_by_simulation can fail
    gains = np.random.default_rng(0).uniform(0.0, 0.1, size=(T, n))
    gains[:, 0] = 1.0
    gains = gains.astype(np.float32)
    alg = A.tree_hedge(A.TreeHedgeConfig(n, T))
    # Min Noise in closed form (NumPy, no extra compilations): sigma = sqrt(n L) / mu and
    # Hedge's standard rate; test_bound_is_respected_by_simulation checks them against
    # min_noise_setting.
    mn_sd = np.sqrt(n * A.tree_levels(T)) / BOUND_MUS
    mn_rate = np.full(2, A.standard_learning_rate(n, T))
    params = A.TreeHedgeParams(
        np.concatenate([[0.7, 0.0], mn_sd]).astype(np.float32),
        np.concatenate([[0.5, 0.5], mn_rate]).astype(np.float32),
    )
    res = simulate(
        alg,
        A.TreeHedgeParams(jnp.asarray(params.node_sd), jnp.asarray(params.learning_rate)),
        make_key(3),
        inputs=jnp.asarray(gains),
        num_seeds=6000,
        hints=EXPERTS_HINTS,
        grid_ndim=1,
        record=record.combine(
            error=record.every_step(lambda o: o.prefix_error),
            gain=record.every_step(lambda o: o.gain),
        ),
    )
    # records on the host: the tests index them without eager (compiled) slicing
    return gains, jax.tree_util.tree_map(np.asarray, res.record), params


def test_prefix_noise_variance_is_popcount_times_node_variance(tree_runs):
    # Var(G^_t - G_t) per coordinate = popcount(t) sigma^2 <= L sigma^2. With N = 6000 runs and
    # 3 coordinates (18000 normal draws), the sample variance / true variance ~ chi2_N / N with
    # sd sqrt(2/N) = 0.0105; 5 sd -> 5.3% relative (23 rounds tested).
    gains, rec, _ = tree_runs
    errors = rec["error"][0]  # (seeds, T, n)
    T = errors.shape[1]
    levels = A.tree_levels(T)
    for t in range(1, T + 1):
        var = np.mean(errors[:, t - 1, :] ** 2)
        claim = bin(t).count("1") * 0.7**2
        assert var == pytest.approx(claim, rel=5 * math.sqrt(2 / errors[:, t - 1, :].size))
        assert claim <= levels * 0.7**2
    # every coordinate of a prefix sum is Gaussian (KS on t = 23 = 10111b, 4 nodes)
    z = errors[:, -1, 0] / (0.7 * 2.0)
    assert stats.kstest(z, "norm").pvalue > 1e-3


def test_without_noise_the_tree_releases_exact_prefix_sums(tree_runs):
    _, rec, _ = tree_runs
    assert np.abs(rec["error"][1]).max() < 1e-5


def test_hedge_matches_numpy_reference(tree_runs):
    gains, rec, _ = tree_runs
    g = np.asarray(gains, np.float64)
    prefix = np.vstack([np.zeros(g.shape[1]), np.cumsum(g, 0)[:-1]])
    w = np.exp(0.5 * prefix - (0.5 * prefix).max(1, keepdims=True))
    w /= w.sum(1, keepdims=True)
    np.testing.assert_allclose(rec["gain"][1, 0], (w * g).sum(1), rtol=1e-5)


def test_each_gain_enters_L_nodes_and_the_release_is_mu_gdp():
    # Sensitivity of the whole release: changing g_t changes exactly one node per level
    # (L nodes) by up to sqrt(n) each -> sqrt(n L); Min Noise is mu-GDP exactly.
    T, n = 148, 24
    L = A.tree_levels(T)
    covering = [
        sum(1 for i in range(L) for k in range(1, T // 2**i + 1) if (k - 1) * 2**i < t <= k * 2**i)
        for t in range(1, T + 1)
    ]
    # nodes that are ever completed (k 2^i <= T) and contain t: at most L, exactly L for most t
    assert max(covering) == L
    for mu in (0.25, 1.0, 3.0):
        sd = float(A.min_noise_node_sd(mu, n, T))
        assert sd == pytest.approx(math.sqrt(n * L) / mu)
        assert float(A.central_mu(sd, n, T)) == pytest.approx(mu)
    assert float(A.min_noise_node_sd(np.inf, n, T)) == 0.0


@pytest.fixture(scope="module")
def min_regret():
    mus = np.array([np.inf, 1.0, 0.5, 0.25])
    return mus, A.min_regret_setting(mus, 24, 148)


def test_min_regret_matches_grid_search_and_keeps_the_guarantee(min_regret):
    mus, s = min_regret
    n, T = 24, 148
    L = A.tree_levels(T)
    assert float(s.node_sd[0]) == 0.0 and float(s.learning_rate[0]) == pytest.approx(
        math.sqrt(8 * math.log(n) / T)
    )
    noise_sum = sum(math.sqrt(bin(t).count("1")) for t in range(T))
    for i, mu in enumerate(mus[1:], start=1):
        # independent reference: scipy bounded minimisation of the classical-calibration sigma
        # over eps in (0, 1) with delta = delta_mu(eps) (scipy's normal cdf), then the
        # closed-form optimal lambda for that sigma.
        def sigma(eps, mu=mu):
            delta = stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(
                -eps / mu - mu / 2
            )
            return math.sqrt(n * L) * math.sqrt(2 * math.log(1.25 / delta)) / eps

        opt = optimize.minimize_scalar(sigma, bounds=(1e-3, 1 - 1e-9), method="bounded")
        ref_sd = sigma(opt.x)
        slope = T / 8 + 0.5 * ref_sd * math.sqrt(2 * math.log(2 * n)) * noise_sum
        ref_lam = math.sqrt(math.log(n) / slope)
        assert float(s.node_sd[i]) == pytest.approx(ref_sd, rel=2e-3)
        assert float(s.learning_rate[i]) == pytest.approx(ref_lam, rel=2e-3)
        assert float(s.bound[i]) == pytest.approx(2 * math.sqrt(math.log(n) * slope), rel=1e-3)
        assert float(s.delta[i]) == pytest.approx(
            float(gdp_delta(mu, float(s.epsilon[i]))), rel=1e-4
        )
        # never claims more privacy than mu-GDP: the delivered central mu is <= mu
        assert float(s.central_mu[i]) <= mu * (1 + 1e-6)
        assert float(s.node_sd[i]) >= float(A.min_noise_node_sd(mu, n, T))
    # Min Regret's rate is tiny: it plays close to uniformly (the paper's sanity check)
    assert np.all(np.asarray(s.learning_rate[1:]) < 0.05)


def test_bound_is_respected_by_simulation(tree_runs):
    # Average regret over the 6000 runs of tree_runs at the Min Noise settings (mu = 8, 16)
    # <= the worst-case bound (+ 3 SE); the bound holds for every gain sequence. The bound is
    # below T there (checked), so a regret above it is possible: the test can fail.
    gains, rec, params = tree_runs
    g = np.asarray(gains)
    T, n = g.shape

    @jax.jit  # traced whole: one compilation instead of the eager ops of both functions
    def setting_and_bound(mu):
        mn = A.min_noise_setting(mu, n, T)
        return mn, A.hedge_tree_regret_bound(mn.learning_rate, mn.node_sd, n, T)

    mn, bounds = setting_and_bound(BOUND_MUS)  # the settings simulated (entries 2 and 3)
    np.testing.assert_allclose(params.node_sd[2:], mn.node_sd, rtol=1e-6)
    np.testing.assert_allclose(params.learning_rate[2:], mn.learning_rate, rtol=1e-6)
    regret = g.sum(0).max() - rec["gain"][2:].sum(-1)  # (2, seeds)
    bounds = np.asarray(bounds)
    assert np.all(bounds < T), bounds  # informative: regret <= T holds for any algorithm
    for i in range(2):
        se = regret[i].std() / math.sqrt(regret.shape[1])
        assert regret[i].mean() <= bounds[i] + 3 * se


def test_bad_inputs():
    with pytest.raises(ValueError, match="mu"):
        A.min_noise_node_sd(-1.0, 5, 10)
    with pytest.raises(ValueError, match="num_experts"):
        A.TreeHedgeConfig(1, 10)
    with pytest.raises(ValueError, match="learning_rate"):
        A.tree_hedge_params(1.0, 0.0)
    with pytest.raises(ValueError, match="epsilon"):
        A.classical_gaussian_sd(1.5, 1e-5, 1.0)
    with pytest.raises(ValueError, match="mu"):
        A.min_regret_setting(0.0, 5, 10)


def test_sensitivity_settings_and_central_claim(min_regret):
    """R2: sensitivity Delta of a gain vector inside one node. Min Noise sd = sqrt(L) Delta / mu;
    Min Regret: same eps, sd scaled by Delta / sqrt(n), lambda = optimal_learning_rate(sd); the
    algorithm's privacy_event composes L node releases of mu_node = Delta / sd to the central mu."""
    from ldpjax.accounting import ComposedEvent, epsilon

    T, n, mu = 64, 9, 1.0
    L = A.tree_levels(T)
    mn = A.min_noise_setting(mu, n, T, sensitivity=1.0)
    assert float(mn.node_sd) == pytest.approx(math.sqrt(L) / mu)
    assert float(A.central_mu(mn.node_sd, n, T, sensitivity=1.0)) == pytest.approx(mu)
    alg = A.tree_hedge(A.TreeHedgeConfig(n, T))
    event = alg.privacy_event(mn)
    assert isinstance(event, ComposedEvent) and len(event.events) == L
    ref = alg.privacy_event(A.min_noise_setting(mu, n, T))  # default sqrt(n): same central mu
    assert float(epsilon(event, 1e-5)) == pytest.approx(float(epsilon(ref, 1e-5)), rel=1e-5)
    # Min Regret: the module's fixture (mus, n = 24, T = 148) against the same call with
    # Delta = 1 (the same compiled optimisation: only the sensitivity differs).
    mus, default = min_regret
    n, T = 24, 148
    host = lambda setting: jax.tree_util.tree_map(np.asarray, setting)  # index on the host
    default, scaled = host(default), host(A.min_regret_setting(mus, n, T, sensitivity=1.0))
    np.testing.assert_allclose(scaled.epsilon[1:], default.epsilon[1:], rtol=1e-6)
    np.testing.assert_allclose(
        scaled.node_sd[1:], default.node_sd[1:] / math.sqrt(n), rtol=1e-5
    )
    lam = np.asarray(A.optimal_learning_rate(scaled.node_sd[1:], n, T))
    np.testing.assert_allclose(scaled.learning_rate[1:], lam, rtol=1e-6)
    # lambda* minimises the bound: a 1% step either way does not lower it
    best = np.asarray(A.hedge_tree_regret_bound(lam, scaled.node_sd[1:], n, T))
    for f in (0.99, 1.01):
        assert np.all(
            np.asarray(A.hedge_tree_regret_bound(lam * f, scaled.node_sd[1:], n, T)) >= best
        )


def test_tree_fails_closed():
    """Concrete invalid params / gains: validate raises naming the leaf; traced ones: NaN."""
    import jax

    T, n = 8, 3
    alg = A.tree_hedge(A.TreeHedgeConfig(n, T))
    params = A.min_noise_setting(1.0, n, T)
    good = jnp.full((T, n), 0.5)
    alg.validate(params, good)
    with pytest.raises(ValueError, match="inputs"):
        alg.validate(params, good.at[3, 1].set(1.5))
    for sd in (np.nan, -1.0, -0.0, np.inf):
        with pytest.raises(ValueError, match="node_sd"):
            alg.validate(params._replace(node_sd=jnp.asarray(sd)), good)
    state = alg.init(params, jax.random.key(0))
    step = jax.jit(alg.step)
    new_state, _ = step(params, state, jnp.asarray([0.5, 2.0, 0.5]), jax.random.key(1))
    assert np.all(np.isnan(new_state.noisy_nodes[0]))
    for mu in (np.nan, -1.0, 0.0, -np.inf):
        traced = jax.jit(lambda m: A.min_noise_setting(m, n, T))(jnp.asarray(mu, jnp.float32))
        new_state, _ = step(traced, state, good[0], jax.random.key(1))
        assert np.all(np.isnan(new_state.noisy_nodes[0])), mu
