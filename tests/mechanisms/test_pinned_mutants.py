"""Tests that notice bugs the privacy-layer suite once let through (each was a surviving mutant).

* the randomized-response threshold without its ``r < 1`` guard (a traced r = 1 outside the
  no-privacy permit reported the true bit);
* the granular Laplace rounding slack g d replaced by g (a claim too small for d > 1);
* the exact discrete-Laplace sampler drawing U from {0..n-2} instead of {0..n-1};
* the granular Laplace grid scale rounded down instead of up;
* ``PureDpEvent.check`` removed (a concrete eps < 0 gave NaN instead of a ``ValueError``);
* the granular Gaussian (and Laplace) rounding down instead of half up.

Expected values come from exact integers or the exact pmf. Default precision and
``JAX_ENABLE_X64=1`` both.
"""

from __future__ import annotations

import importlib
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import ldpjax.accounting as acc
from ldpjax import mechanisms as M

L = importlib.import_module("ldpjax.mechanisms.laplace")
RR = importlib.import_module("ldpjax.mechanisms.randomized_response")
KEY = jax.random.key(23)


# --------------------------------------------------------------------------- RR guard
def test_traced_truthful_rate_outside_the_permit_is_a_fair_coin():
    # threshold 2^31 (flip iff word < 2^31: a fair coin), never 0 (never flip: the true bit)
    assert int(jax.jit(RR.flip_threshold)(1.0)) == 2**31
    words = jnp.array([0, 2**31 - 1, 2**31, 2**32 - 1], jnp.uint32)
    report = jax.jit(M.randomized_response_from_bits)(words, jnp.zeros(4, jnp.int32), 1.0)
    assert report.tolist() == [True, True, False, False]
    with M.no_privacy_permitted():  # checked concretely by the engine: no noise
        assert int(jax.jit(RR.flip_threshold)(1.0)) == 0


# --------------------------------------------------------------------------- granular Laplace
@pytest.mark.parametrize("dim", [2, 5])
@pytest.mark.parametrize("eps", [0.37, 1.3])
def test_granular_laplace_shift_counts_the_slack_of_every_coordinate(dim, eps):
    # l1 rounding slack g per coordinate: D = ceil((1 + g d) / g) = 1/g + d = 16 + d grid steps
    g = 2.0**-4
    shift, scale = L.granular_laplace_scale(1.0, eps, g, dim)
    assert float(shift) == 16 + dim
    n = math.ceil(64 * (16 + dim) / float(np.asarray(eps, jnp.result_type(float))))
    assert float(scale) * 64 == n  # rounded up: D / t <= eps


def test_discrete_laplace_candidates_have_the_exact_law():
    # One round of candidates at n = 33 (t = 33/64), the scale where U's support matters most:
    # without U = n - 1 some atoms lose 2.5% of their mass. Accepted candidates are i.i.d. from
    # P[Y = y] ~ exp(-|y| / t). 2e6 candidates (~7e5 accepted): the chi-square statistic of the
    # wrong support is ~150 above its degrees of freedom, the threshold (p = 1e-6) ~35.
    n, size = 33, 2_000_000
    y, ok, _ = jax.jit(
        lambda k: L._one_round(k, jnp.full((size,), n, jnp.int32), (size,), jnp.result_type(float))
    )(KEY)
    y = np.asarray(y)[np.asarray(ok)]
    _assert_discrete_laplace_law(y, n / 64)


def _assert_discrete_laplace_law(y: np.ndarray, t: float) -> None:
    width = int(12 * t) + 2
    support = np.arange(-width, width + 1)
    pmf = np.exp(-np.abs(support) / t)
    norm = (1 + math.exp(-1 / t)) / (1 - math.exp(-1 / t))  # sum over Z of exp(-|y| / t)
    pmf = pmf / norm
    observed = np.array([np.sum(y == v) for v in support] + [np.sum(np.abs(y) > width)])
    expected = np.append(pmf, 1 - pmf.sum()) * y.size
    keep = expected > 5
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    chi2 += (observed[~keep].sum() - expected[~keep].sum()) ** 2 / max(expected[~keep].sum(), 1)
    assert stats.chi2.sf(chi2, keep.sum()) > 1e-6, chi2


@pytest.mark.slow
def test_discrete_laplace_sampler_has_the_exact_law():
    # the whole sampler (rounds, rejection) at t = 33/64: 1e6 draws, same statistic
    y = np.asarray(jax.jit(lambda k: L.discrete_laplace(k, 33 / 64, (1_000_000,)))(KEY))
    assert not np.any(y == L.DL_INVALID)
    _assert_discrete_laplace_law(y, 33 / 64)


# --------------------------------------------------------------------------- events
@pytest.mark.parametrize("eps", [-1.0, float("nan")])
def test_pure_dp_event_checks_its_eps(eps):
    for accountant, x in ((acc.epsilon, 1e-5), (acc.delta, 1.0), (acc.tradeoff, 0.1)):
        with pytest.raises(ValueError, match="eps must be in"):
            accountant(acc.PureDpEvent(eps), x)


# --------------------------------------------------------------------------- round half up
@pytest.mark.parametrize("name", ["gaussian", "laplace"])
def test_granular_rounding_is_half_up(name):
    # values exactly halfway between grid points (k + 1/2) g go up to (k + 1) g; an explicit
    # inf budget adds no noise, so the release is the rounded value itself
    g = 2.0**-3
    k = np.arange(-4, 4)
    values = np.concatenate([(k + 0.5) * g, (k + 0.25) * g])  # halfway, then below halfway
    release = {"gaussian": M.gaussian_mechanism, "laplace": M.laplace_mechanism}[name]
    # jit with the literal inf (concrete at the call: no noise honoured); one compile
    out = np.asarray(jax.jit(lambda x: release(KEY, x, 1.0, math.inf, granularity=g))(values))
    np.testing.assert_array_equal(out, np.concatenate([k + 1, k]) * g)
