"""Each mechanism's output law against its closed form (fixed keys, derived tolerances)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from ldpjax import mechanisms as M

KEY = jax.random.key(2024)
N = 200_000


def _chi2_pvalue(counts: np.ndarray, probs: np.ndarray) -> float:
    """Pearson chi-square p-value of ``counts`` against ``probs`` (last cell collects the rest)."""
    expected = probs * counts.sum()
    return float(stats.chisquare(counts, expected).pvalue)


@pytest.mark.parametrize(
    "sigma",
    [2.5, pytest.param(0.6, marks=pytest.mark.slow), pytest.param(11.0, marks=pytest.mark.slow)],
)
def test_discrete_gaussian_pmf(sigma):
    y = np.asarray(jax.jit(lambda k: M.discrete_gaussian(k, sigma, (N // 4,)))(KEY))
    assert y.dtype == np.int32
    support = np.arange(-int(12 * sigma) - 2, int(12 * sigma) + 3)
    pmf = np.exp(-0.5 * (support / sigma) ** 2)
    pmf /= pmf.sum()
    # cells: |y| <= 3 sigma individually, the two tails pooled
    edge = max(1, int(3 * sigma))
    inner = (support >= -edge) & (support <= edge)
    probs = np.concatenate([pmf[inner], [pmf[support < -edge].sum() + pmf[support > edge].sum()]])
    counts = np.array([np.sum(y == s) for s in support[inner]] + [np.sum(np.abs(y) > edge)])
    # With a fixed key the test is deterministic; p > 1e-6 is the chi-square acceptance region at
    # level 1e-6 (a correct sampler fails it with probability 1e-6).
    assert _chi2_pvalue(counts, probs) > 1e-6


def test_discrete_gaussian_zero_sigma_and_vmap():
    assert np.all(np.asarray(M.discrete_gaussian(KEY, 0.0, (5,))) == 0)
    sig = jnp.array([0.5, 4.0])
    n = 5_000
    out = jax.vmap(lambda s, k: M.discrete_gaussian(k, s, (n,)))(sig, jax.random.split(KEY, 2))
    # variance of N_Z(0, s^2) is within 1% of s^2 for s >= 1 and below s^2 for s = 0.5;
    # sample-variance SE = s^2 sqrt(2 / n): allow 5 SE (+1% for the discreteness).
    var = np.var(np.asarray(out, float), axis=1)
    assert abs(var[1] - 16.0) < 5 * 16.0 * np.sqrt(2 / n) + 0.16
    assert var[0] < 0.5**2 + 5 * 0.25 * np.sqrt(2 / n)


def test_granular_release_on_grid_and_centred():
    g = 2.0**-6
    x = jnp.full((N // 8,), 0.3)
    out = np.asarray(jax.jit(lambda k: M.gaussian_mechanism(k, x, 1.0, 2.0, granularity=g))(KEY))
    assert np.all(out / g == np.round(out / g))
    # mean: round(0.3 / g) g = 0.296875; sd = (1 + g) / 2 per coordinate treated as one release
    # of dim N/4?  No: the whole array is one release, so sd = (1 + g sqrt(d)) / mu.
    sd = float(M.rounded_sensitivity(1.0, g, x.size)) / 2.0
    assert abs(out.mean() - np.floor(0.3 / g + 0.5) * g) < 6 * sd / np.sqrt(x.size)
    assert abs(out.std() / sd - 1.0) < 6 * np.sqrt(0.5 / x.size)


def test_rounded_sensitivity_domain_bound():
    # gains in [0, 1]^n with endpoints on the grid: rounding keeps sensitivity sqrt(n)
    assert float(M.rounded_sensitivity(np.sqrt(9.0), 2.0**-4, 9, (0.0, 1.0))) == 3.0
    assert float(M.rounded_sensitivity(1.0, 2.0**-4, 4)) == 1.0 + 2.0**-4 * 2


@pytest.mark.parametrize("r", [0.2, 0.9])
def test_randomized_response_law(r):
    bits = jnp.concatenate([jnp.zeros(N // 2, jnp.int32), jnp.ones(N // 2, jnp.int32)])
    rep = np.asarray(jax.jit(M.randomized_response)(KEY, bits, r))
    p_true = (1 + r) / 2
    se = np.sqrt(p_true * (1 - p_true) / (N // 2))
    assert abs(np.mean(rep[N // 2 :] == 1) - p_true) < 6 * se
    assert abs(np.mean(rep[: N // 2] == 0) - p_true) < 6 * se


def test_randomized_response_bernoulli_matches_sampling_path():
    # The reported-bit law: Bernoulli(r p + (1 - r) / 2) for a Bernoulli(p) true bit.
    r, p = 0.4, 0.7
    k1, k2, k3 = jax.random.split(KEY, 3)
    fast = np.asarray(jax.jit(M.randomized_response_bernoulli)(k1, jnp.full(N, p), r))
    bits = jax.random.bernoulli(k2, p, (N,)).astype(jnp.int32)
    slow = np.asarray(jax.jit(M.randomized_response)(k3, bits, r))
    target = r * p + (1 - r) / 2
    se = np.sqrt(target * (1 - target) / N)
    assert abs(fast.mean() - target) < 6 * se
    assert abs(slow.mean() - target) < 6 * se
    assert abs(fast.mean() - slow.mean()) < 6 * np.sqrt(2) * se


@pytest.mark.parametrize("xi,k", [(0.0, 3), (1.5, 4), (6.0, 5)])
def test_kary_law(xi, k):
    rep = np.asarray(jax.jit(M.kary_randomized_response)(KEY, jnp.ones(N, jnp.int32), xi, k))
    keep = np.exp(xi) / (k - 1 + np.exp(xi))
    other = 1 / (k - 1 + np.exp(xi))
    probs = np.array([keep if c == 1 else other for c in range(k)])
    counts = np.bincount(rep, minlength=k)
    assert _chi2_pvalue(counts, probs) > 1e-6


def test_kary_spare_uniform_is_independent():
    words = M.report_bits(KEY, (N, 2))
    report, explored, spare = M.kary_randomized_response_from_bits(
        words, jnp.zeros(N, jnp.int32), 0.6, 3
    )
    spare = np.asarray(spare)
    assert spare.min() >= 0 and spare.max() < 1
    # spare is uniform within each report value: means 1/2 +- 6 SE, SE = sqrt(1/12 / n_c)
    for c in range(3):
        sel = np.asarray(report) == c
        assert abs(spare[sel].mean() - 0.5) < 6 * np.sqrt(1 / 12 / sel.sum())
    explored = np.asarray(explored)
    assert abs(spare[explored].mean() - 0.5) < 6 * np.sqrt(1 / 12 / explored.sum())


def test_kary_counts_match_individual_reports():
    """The count form has the law of the counts of m independent K-RR reports."""
    m, p, k, reps = 400, 0.35, 3, 2000
    weights = jnp.ones(k) / k
    keys = jax.random.split(KEY, reps)
    counts = np.asarray(
        jax.jit(
            jax.vmap(lambda kk: M.kary_randomized_response_counts(kk, float(m), 2, p, weights))
        )(keys)
    )
    assert np.all(counts.sum(-1) == m)
    singles = np.asarray(
        jax.jit(jax.vmap(lambda kk: M.kary_randomized_response_explore(kk, jnp.full(m, 2), p, k)))(
            keys
        )
    )
    single_counts = np.stack([(singles == c).sum(-1) for c in range(k)], -1)
    # per category: mean m q_c, variance m q_c (1 - q_c); two-sample z with 6 SE
    q = np.array([p / k, p / k, 1 - p + p / k])
    se = np.sqrt(2 * m * q * (1 - q) / reps)
    assert np.all(np.abs(counts.mean(0) - single_counts.mean(0)) < 6 * se)
    assert np.all(np.abs(counts.mean(0) - m * q) < 6 * se)
    # variances agree within 20% (SE of a sample variance ~ sqrt(2 / reps) = 3%)
    np.testing.assert_allclose(counts.var(0), m * q * (1 - q), rtol=0.2)


def test_multinomial_counts_equal_sequential_conditional_binomials():
    # The scanned sampler draws the same numbers as the textbook loop it replaces: category j
    # ~ Binomial(remaining, p_j / mass left) with the j-th of K split keys, the last takes the rest.
    from ldpjax.mechanisms.binomial import binomial
    from ldpjax.mechanisms.kary import multinomial_counts

    probs = jnp.asarray([[0.1, 0.2, 0.3, 0.4], [0.5, 0.0, 0.25, 0.25]], jnp.float32)
    count = jnp.asarray([37.0, 1000.0], jnp.float32)
    key = jax.random.key(7)
    keys = jax.random.split(key, 4)
    remaining, mass, expected = count, jnp.ones(2, jnp.float32), []
    for j in range(3):
        cond = jnp.clip(probs[:, j] / mass, 0.0, 1.0)
        draw = jnp.minimum(jnp.round(binomial(keys[j], remaining, cond)), remaining)
        expected.append(draw)
        remaining, mass = remaining - draw, jnp.maximum(mass - probs[:, j], 0.0)
    expected = np.stack([*map(np.asarray, expected), np.asarray(remaining)], -1)
    np.testing.assert_array_equal(
        np.asarray(jax.jit(multinomial_counts)(key, count, probs)), expected
    )
    # K = 1: everything in the one category
    np.testing.assert_array_equal(np.asarray(multinomial_counts(key, 5.0, jnp.ones(1))), [5.0])


def test_multinomial_counts_law():
    # 20,000 draws of Multinomial(12, q): per-category means within 6 SE (SE = sqrt(12 q (1-q) /
    # 20000)), and the first count's Binomial(12, q_0) law by a chi-square over pooled cells.
    from ldpjax.mechanisms.kary import multinomial_counts

    reps, m = 20_000, 12
    q = np.array([0.5, 0.3, 0.15, 0.05])
    sample = jax.vmap(lambda k: multinomial_counts(k, float(m), jnp.asarray(q, jnp.float32)))
    draws = np.asarray(jax.jit(sample)(jax.random.split(KEY, reps)))
    assert np.all(draws.sum(-1) == m)
    se = np.sqrt(m * q * (1 - q) / reps)
    assert np.all(np.abs(draws.mean(0) - m * q) < 6 * se)
    # category 0 alone is Binomial(12, 0.5): chi-square over its 13 values, p > 1e-6 (see above)
    pmf = stats.binom.pmf(np.arange(m + 1), m, q[0])
    cells = np.bincount(draws[:, 0].astype(int), minlength=m + 1)
    keep = pmf * reps >= 5
    probs = np.concatenate([pmf[keep], [pmf[~keep].sum()]])
    counts = np.concatenate([cells[keep], [cells[~keep].sum()]])
    assert _chi2_pvalue(counts, probs) > 1e-6
