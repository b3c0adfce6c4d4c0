"""Empirical privacy audits: a Clopper-Pearson lower bound on epsilon never exceeds the claim.

For each mechanism: draw N releases on two neighbouring inputs, and for each of a few events E
(thresholds, histogram bins, the low-order-bit pattern of the float attack) bound
P0(E) from below and P1(E) from above with Clopper-Pearson intervals at joint confidence
1 - 1e-6 (Bonferroni over the events and both directions). Then
eps_lower = log((P0_low - delta) / P1_high) is a valid lower bound on the true epsilon with
probability >= 1 - 1e-6 (spec ``privacy-layer.md``, Sec. 5); the claim (the event's accountant)
must be at least eps_lower. Each audit also checks it has power (eps_lower is a good fraction of
the claim), so the test can fail if a mechanism adds too *little* noise.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import ldpjax.accounting as acc
from ldpjax import mechanisms as M

N = 100_000
CONFIDENCE_FAILURE = 1e-6


def _cp_low(k: int, n: int, a: float) -> float:
    return 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))


def _cp_high(k: int, n: int, a: float) -> float:
    return 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))


def audit_epsilon(hits0: list[int], hits1: list[int], n: int, delta: float) -> float:
    """Largest Clopper-Pearson lower bound on eps over the events (both directions)."""
    a = CONFIDENCE_FAILURE / (4 * len(hits0))
    best = 0.0
    for k0, k1 in zip(hits0, hits1, strict=True):
        for ka, kb in ((k0, k1), (k1, k0)):
            low, high = _cp_low(ka, n, a) - delta, _cp_high(kb, n, a)
            if low > 0:
                best = max(best, float(np.log(low / high)))
    return best


def _bit_pattern(out: np.ndarray) -> np.ndarray:
    scaled = out.astype(np.float64) * 2.0**24
    return (np.abs(out) < 0.5) & (scaled != np.round(scaled))


def _threshold_events(out: np.ndarray, cuts) -> list[int]:
    return [int(np.sum(out > c)) for c in cuts]


@pytest.mark.slow
def test_audit_granular_gaussian():
    mu, g, delta = 1.0, 2.0**-8, 1e-3
    # N independent scalar releases (one record each; domain endpoints on the grid, so the
    # rounded sensitivity stays 1).
    release = jax.jit(
        jax.vmap(
            lambda k, v: M.gaussian_mechanism(k, v, 1.0, mu, domain=(0.0, 1.0), granularity=g),
            in_axes=(0, None),
        )
    )
    event = M.granular_claim(1.0, mu, g, 1, (0.0, 1.0))
    k0, k1 = jax.random.split(jax.random.key(5))
    out0 = np.asarray(release(jax.random.split(k0, N), jnp.float32(0.0)))
    out1 = np.asarray(release(jax.random.split(k1, N), jnp.float32(1.0)))
    cuts = np.linspace(-1.0, 2.0, 13)
    hits0 = _threshold_events(out0, cuts) + [int(_bit_pattern(out0).sum())]
    hits1 = _threshold_events(out1, cuts) + [int(_bit_pattern(out1).sum())]
    eps_low = audit_epsilon(hits0, hits1, N, delta)
    claim = float(acc.epsilon(event, delta))
    assert eps_low <= claim
    assert eps_low > 0.5 * claim  # the audit has power


def test_audit_float_gaussian_is_refuted_by_bits():
    """Known property (README): the float path's claim fails a bit-pattern audit."""
    mu, delta = 1.0, 1e-3
    release = jax.jit(lambda k, v: M.gaussian_mechanism(k, jnp.full((N,), v, jnp.float32), 1.0, mu))
    k0, k1 = jax.random.split(jax.random.key(6))
    out0, out1 = np.asarray(release(k0, 0.0)), np.asarray(release(k1, 1.0))
    cuts = np.linspace(-1.0, 2.0, 13)
    threshold_only = audit_epsilon(
        _threshold_events(out0, cuts), _threshold_events(out1, cuts), N, delta
    )
    claim = float(acc.epsilon(acc.GaussianEvent(mu), delta))
    assert threshold_only <= claim  # thresholds alone cannot see the leak
    with_bits = audit_epsilon(
        [int(_bit_pattern(out0).sum())], [int(_bit_pattern(out1).sum())], N, delta
    )
    assert with_bits > 0  # the bit pattern alone already distinguishes the inputs


@pytest.mark.parametrize("r", [0.3, 0.8])
def test_audit_randomized_response(r):
    rr = jax.jit(M.randomized_response)
    k0, k1 = jax.random.split(jax.random.key(int(r * 10)))
    out0 = np.asarray(rr(k0, jnp.zeros(N, jnp.int32), r))
    out1 = np.asarray(rr(k1, jnp.ones(N, jnp.int32), r))
    eps_low = audit_epsilon([int(out0.sum())], [int(out1.sum())], N, 0.0)
    claim = float(acc.epsilon(acc.RandomizedResponseEvent(r), 0.0))
    assert eps_low <= claim
    assert eps_low > 0.8 * claim


@pytest.mark.parametrize("xi,k", [(1.0, 3), (2.5, 6)])
def test_audit_kary_randomized_response(xi, k):
    krr = jax.jit(M.kary_randomized_response)
    k0, k1 = jax.random.split(jax.random.key(k))
    out0 = np.asarray(krr(k0, jnp.zeros(N, jnp.int32), xi, k))
    out1 = np.asarray(krr(k1, jnp.ones(N, jnp.int32), xi, k))
    hits0 = [int(np.sum(out0 == c)) for c in range(k)]
    hits1 = [int(np.sum(out1 == c)) for c in range(k)]
    eps_low = audit_epsilon(hits0, hits1, N, 0.0)
    claim = float(acc.epsilon(acc.KaryRandomizedResponseEvent(xi, k), 0.0))
    assert eps_low <= claim
    assert eps_low > 0.8 * claim
