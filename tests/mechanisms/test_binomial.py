"""ldpjax.mechanisms.binomial: the draws of jax.random.binomial bit for bit, the law of both
algorithms against scipy's pmf, the edges, dtypes.

Statistical checks: with a fixed key each test is deterministic. The chi-square statistic of a
correct sampler is ~ chi2(cells - 1) under the draw's randomness, so "p-value > 1e-6" fails for
one key in a million; a sampler off by 1 % in a cell of mass 0.05 at 20,000 draws moves the
statistic by ~ (0.0005 * 20000)^2 / (0.05 * 20000) = 0.1 only, so the tests aim at the errors
that matter (a wrong branch, a wrong recursion or acceptance bound shifts cells by whole
percent of the mass: statistic in the hundreds).
"""

from __future__ import annotations

import importlib
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import special, stats

from ldpjax.mechanisms.binomial import INVERSION_MAX_MEAN, binomial, stirling_tail

binomial_module = importlib.import_module("ldpjax.mechanisms.binomial")

REPS = 20_000
KEY = jax.random.key(20261202)


def _merged_cells(pmf: np.ndarray, reps: int, min_expected: float = 20.0):
    """Consecutive support points merged until each cell expects >= min_expected draws
    (the leftover tail joins the last cell); returns the cell index of every support point."""
    index, cell, acc = np.zeros(len(pmf), int), 0, 0.0
    for i, mass in enumerate(pmf):
        index[i] = cell
        acc += mass * reps
        if acc >= min_expected:
            cell, acc = cell + 1, 0.0
    if acc < min_expected and cell > 0:  # short last cell: merge into the previous one
        index[index == cell] = cell - 1
    return index


def _chi_square_p(draws: np.ndarray, n: int, p: float) -> float:
    support = np.arange(n + 1)
    pmf = stats.binom.pmf(support, n, p)
    index = _merged_cells(pmf, len(draws))
    expected = np.bincount(index, weights=pmf * len(draws))
    observed = np.bincount(index[draws.astype(int)], minlength=len(expected))
    statistic = np.sum((observed - expected) ** 2 / expected)
    return float(stats.chi2.sf(statistic, len(expected) - 1))


_draws = jax.jit(jax.vmap(lambda key, n, p: binomial(key, n, p), in_axes=(0, None, None)))

# both algorithms (mean n min(p, 1-p) at or below INVERSION_MAX_MEAN: inversion; above: BTRS),
# the mirror p > 1/2, a mean right at the switch and a large n with a tiny p
CASES = [
    (1, 0.5),
    (5, 0.3),
    (40, 0.2),
    (50, 0.2),
    (100, 0.3),
    (100, 0.9),
    (2_000, 0.5),
    (10_000, 0.0003),
    (37, 0.73),
]


@pytest.mark.parametrize("n, p", CASES)
def test_law_matches_the_binomial_pmf(n, p):
    draws = np.asarray(_draws(jax.random.split(KEY, REPS), float(n), p))
    assert np.all((draws >= 0) & (draws <= n) & (draws == np.round(draws)))
    assert _chi_square_p(draws, n, p) > 1e-6


def test_large_count_moments_and_law_in_float32():
    # n = 10^6 (float32 holds it exactly): mean within 5 SE (SE = sd / sqrt(REPS)), variance
    # within 5 SE of the sample variance (SE ~ var sqrt(2 / REPS)), and the chi-square law.
    n, p = 1_000_000, 0.3
    draws = np.asarray(_draws(jax.random.split(KEY, REPS), float(n), p))
    sd = math.sqrt(n * p * (1 - p))
    assert abs(draws.mean() - n * p) < 5 * sd / math.sqrt(REPS)
    assert abs(draws.var() - sd**2) < 5 * sd**2 * math.sqrt(2 / REPS)
    assert _chi_square_p(draws, n, p) > 1e-6


def test_mixed_batch_each_element_keeps_its_law():
    # one call holds elements for both loops: each column keeps its own law
    counts = jnp.asarray([3.0, 400.0, 25.0, 0.0], jnp.float32)
    probs = jnp.asarray([0.4, 0.45, 0.9, 0.5], jnp.float32)
    draws = np.asarray(
        jax.jit(jax.vmap(lambda k: binomial(k, counts, probs)))(jax.random.split(KEY, REPS))
    )
    for j in range(3):
        assert _chi_square_p(draws[:, j], int(counts[j]), float(probs[j])) > 1e-6
    assert np.all(draws[:, 3] == 0)


def test_edges_and_invalid_inputs():
    key = jax.random.key(1)
    counts = jnp.asarray([0.0, 7.0, 7.0, 7.9, 12.0, -1.0, jnp.nan, 5.0, 5.0, 3.0, jnp.inf])
    probs = jnp.asarray([0.3, 0.0, 1.0, 1.0, 0.5, 0.5, 0.5, 1.5, jnp.nan, -0.2, 0.5])
    draws = np.asarray(binomial(key, counts, probs))
    np.testing.assert_array_equal(draws[:4], [0.0, 0.0, 7.0, 7.0])  # fractions are floored
    assert 0 <= draws[4] <= 12
    assert np.all(np.isnan(draws[5:10]))
    assert draws[10] == np.inf


@pytest.mark.parametrize("impl", ["philox4x32", "threefry2x32"])
def test_draws_equal_jax_random_binomial(impl):
    # the reference is JAX's own sampler: counts over 0..10^6 and p over [0, 1] (both loops,
    # the mirror p > 1/2, p = 0 and 1) under vmap, bit for bit, in float32 and in float64
    rng = np.random.default_rng(3)
    shape = (500, 6)
    counts = np.floor(10 ** rng.uniform(0, 6, shape))
    probs = rng.uniform(0, 1, shape)
    probs[0, :2] = [0.0, 1.0]
    keys = jax.random.split(jax.random.key(11, impl=impl), shape[0])

    def both(dtype):
        n, p = jnp.asarray(counts, dtype), jnp.asarray(probs, dtype)
        ours = jax.jit(jax.vmap(lambda k, n, p: binomial(k, n, p)))(keys, n, p)
        theirs = jax.jit(jax.vmap(lambda k, n, p: jax.random.binomial(k, n, p)))(keys, n, p)
        return np.asarray(ours), np.asarray(theirs)

    np.testing.assert_array_equal(*both(jnp.float32))
    with jax.enable_x64(True):
        ours, theirs = both(jnp.float64)
        assert ours.dtype == np.float64
        np.testing.assert_array_equal(ours, theirs)


def test_stirling_tail_against_gammaln():
    # f_c(k) = log k! - log(sqrt(2 pi) (k+1)^(k+1/2) e^-(k+1)) from scipy's gammaln: the table
    # (k <= 9) and the series above it agree to 1e-9 at k = 0..200 (float64)
    k = np.arange(0, 201, dtype=np.float64)
    exact = special.gammaln(k + 1) - ((k + 0.5) * np.log(k + 1) - (k + 1) + 0.5 * np.log(2 * np.pi))
    with jax.enable_x64(True):
        got = np.asarray(stirling_tail(jnp.asarray(k)))
        bound = np.asarray(binomial_module._bound_tail(jnp.asarray(k)))
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-9)
    # the bound's simplification: equal to f_c up to 9, its series at 9 above
    np.testing.assert_allclose(bound[:10], exact[:10], rtol=0, atol=1e-12)
    np.testing.assert_allclose(bound[10:], exact[9], rtol=1e-6)


def test_dtype_follows_prob_and_switch_constant():
    assert INVERSION_MAX_MEAN == 10.0  # BTRS's constants are tuned for n q >= 10 (Hoermann 1993)
    assert binomial(jax.random.key(0), 10.0, jnp.float32(0.5)).dtype == jnp.float32
    with jax.enable_x64(True):
        out64 = binomial(jax.random.key(0), 1e7, jnp.float64(0.25))
        assert out64.dtype == jnp.float64
        assert abs(float(out64) - 2.5e6) < 6 * math.sqrt(1e7 * 0.25 * 0.75)
