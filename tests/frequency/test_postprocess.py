"""Norm-Sub and the iterative Bayesian update against independent references.

Norm-Sub against a NumPy bisection on delta (sum max(f + delta, 0) = total); the IBU against a
NumPy EM written from the per-report likelihoods (no shared code), against the maximum
likelihood estimate where it is known in closed form (GRR with the debiased estimate inside the
simplex: the MLE is that estimate), and against scipy's optimiser of the log-likelihood.
"""

from __future__ import annotations

import importlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize

from ldpjax import frequency as fq

# by module: the package exports a function of the same name
hr = importlib.import_module("ldpjax.mechanisms.hadamard_response")


def _norm_sub_reference(f: np.ndarray, total: float = 1.0) -> np.ndarray:
    lo, hi = -np.max(f) - total, total - np.min(f)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.maximum(f + mid, 0).sum() < total else (lo, mid)
    return np.maximum(f + (lo + hi) / 2, 0)


def test_norm_sub_is_the_projection(x64):
    rng = np.random.default_rng(0)
    batch = rng.normal(0.1, 0.4, (50, 9))
    out = np.asarray(jax.jit(fq.norm_sub)(jnp.asarray(batch)))
    for row, got in zip(batch, out, strict=True):
        np.testing.assert_allclose(got, _norm_sub_reference(row), atol=1e-12)
    assert np.all(out >= 0)
    np.testing.assert_allclose(out.sum(-1), 1.0, atol=1e-12)
    simplex = rng.dirichlet(np.ones(9))
    np.testing.assert_allclose(np.asarray(fq.norm_sub(jnp.asarray(simplex))), simplex, atol=1e-14)
    np.testing.assert_allclose(
        np.asarray(fq.norm_sub(jnp.asarray(batch[0]), 3.0)),
        _norm_sub_reference(batch[0], 3.0),
        atol=1e-12,
    )


def test_ibu_reaches_the_interior_mle_of_grr(x64):
    eps, d = 1.0, 4
    counts = np.array([330.0, 260.0, 230.0, 180.0])
    debiased = np.asarray(
        fq.estimate_frequencies(counts, counts.sum(), *fq.grr_probabilities(eps, d))
    )
    assert np.all(debiased > 0)  # inside the simplex: the MLE is the debiased estimate
    theta = np.asarray(fq.ibu(jnp.asarray(counts), fq.grr_channel(eps, d), 5000))
    np.testing.assert_allclose(theta, debiased, atol=1e-6)


def _loglik(theta, counts, channel):
    return float(counts @ np.log(channel @ theta))


def test_ibu_is_the_mle_on_the_boundary(x64):
    eps, d = 0.7, 5
    k = hr.hadamard_size(d)
    channel = np.asarray(fq.hadamard_channel(eps, d))
    counts = np.random.default_rng(2).integers(0, 40, k).astype(float)
    counts[:2] = [90.0, 5.0]
    theta = np.asarray(fq.ibu(jnp.asarray(counts), jnp.asarray(channel), 4000))
    best = optimize.minimize(
        lambda z: -_loglik(np.exp(z) / np.exp(z).sum(), counts, channel),
        np.zeros(d),
        method="Nelder-Mead",
        options=dict(maxiter=20000, xatol=1e-10, fatol=1e-12),
    )
    reference = np.exp(best.x) / np.exp(best.x).sum()
    assert _loglik(theta, counts, channel) >= _loglik(reference, counts, channel) - 1e-6
    np.testing.assert_allclose(theta.sum(), 1.0, atol=1e-12)


def _em_reference(supports: np.ndarray, rho: float, iterations: int) -> np.ndarray:
    """EM from the per-report likelihoods L_i(v) = rho^s_iv, written out in NumPy."""
    n, d = supports.shape
    theta = np.full(d, 1.0 / d)
    like = np.where(supports == 1, rho, 1.0)
    for _ in range(iterations):
        post = like * theta
        post /= post.sum(1, keepdims=True)
        theta = post.mean(0)
    return theta


def test_ibu_supports_matches_the_per_report_em(x64):
    rng = np.random.default_rng(4)
    supports = (rng.random((300, 6)) < np.array([0.6, 0.3, 0.3, 0.25, 0.3, 0.3])).astype(int)
    supports[5] = -1  # an invalid report is skipped
    got = np.asarray(fq.ibu_supports(jnp.asarray(supports), 2.5, 200))
    expected = _em_reference(np.delete(supports, 5, axis=0), 2.5, 200)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_ibu_supports_equals_the_channel_form_for_grr(x64):
    eps, d = 1.2, 5
    reports = np.random.default_rng(6).integers(0, d, 500)
    supports = np.eye(d, dtype=int)[reports]
    counts = np.bincount(reports, minlength=d).astype(float)
    a = np.asarray(fq.ibu_supports(jnp.asarray(supports), np.exp(eps), 300))
    b = np.asarray(fq.ibu(jnp.asarray(counts), fq.grr_channel(eps, d), 300))
    np.testing.assert_allclose(a, b, rtol=1e-10)


def test_channels_are_stochastic_and_ibu_jits_and_differentiates():
    for channel in (fq.grr_channel(1.0, 6), fq.hadamard_channel(1.0, 6)):
        np.testing.assert_allclose(np.asarray(channel).sum(0), 1.0, atol=1e-6)
    counts = jnp.array([5.0, 3.0, 2.0])
    run = jax.jit(lambda e: fq.ibu(counts, fq.grr_channel(e, 3), 50))
    assert np.isclose(float(run(1.0).sum()), 1.0, atol=1e-5)
    assert np.isfinite(float(jax.grad(lambda e: run(e)[0])(1.0)))


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_iterations"):
        fq.ibu(jnp.ones(3), jnp.eye(3), -1)
    with pytest.raises(ValueError, match="rho"):
        fq.ibu_supports(jnp.ones((2, 3), int), 1.0, 5)
    with pytest.raises(ValueError, match="total"):
        fq.norm_sub(jnp.ones(3), 0.0)
