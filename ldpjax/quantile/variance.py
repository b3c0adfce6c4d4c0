"""Asymptotic variance of Theorem 3.1, differentiable in every input.

Theorem 3.1 of "Federated Learning of Quantile Inference under Local Differential Privacy"
(ICLR 2026).

    sqrt(t_T) (Q^_T - Q*) -> N(0, sigma^2),
    sigma^2 = nu * sum_k p_k^2 [r_k^-2 - (2 F_k(Q*) - 1)^2] / [4 (sum_k p_k f_k(Q*))^2].

Derivation of the terms (checked in the tests): the debiased randomized-response increment of
client k at Q* has variance P(1 - P) / r_k^2 with P = r_k (1 - F_k) + (1 - r_k) / 2, i.e.
[r_k^-2 - (2 F_k - 1)^2] / 4; the aggregated increment sum_k p_k g_k has variance
sum_k p_k^2 Var(g_k); the mean increment tau - sum_k p_k F_k(q) has slope -sum_k p_k f_k(Q*).
``nu`` is the schedule factor of the theorem; ``nu = 1`` (default) for the sample-weighted
Polyak-Ruppert average with the C1/C5/Log schedules (local steps that grow slower than any
power of m do not change the limit). With r_k = 1 and K = 1 this is the classical
tau (1 - tau) / f(Q*)^2. The rate is driven by the smallest r_k (the r_k^-2 term).

``jax.grad`` of :func:`asymptotic_ci_length` with respect to ``r`` tells how the CI width
responds to each client's privacy level (the notebook plots it).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.scipy.special import ndtri

from ldpjax import _validation as v
from ldpjax.quantile.clients import Clients, cdf, check_weights, global_quantile, pdf
from ldpjax.types import Array, ArrayLike


def asymptotic_variance(
    r: ArrayLike,
    weights: ArrayLike,
    levels: ArrayLike,
    densities: ArrayLike,
    nu: ArrayLike = 1.0,
) -> Array:
    """sigma^2 of Theorem 3.1 (clients on the last axis).

    Args:
      r: (..., K) truthful-response rates in (0, 1].
      weights: (..., K) client weights p_k (sum 1).
      levels: (..., K) local levels F_k(Q*) in [0, 1] (the paper's Q_k).
      densities: (..., K) densities f_k(Q*) >= 0 (not all zero).
      nu: schedule factor > 0 (default 1).

    Returns:
      sigma^2 (leading axes broadcast). NaN under ``jit`` for out-of-domain inputs.
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    v.check_sums_to_one("weights", weights, atol=1e-5)
    v.check_range("levels", levels, 0.0, 1.0)
    v.check_range("densities", densities, 0.0, jnp.inf, high_open=True)
    v.check_range("nu", nu, 0.0, jnp.inf, low_open=True, high_open=True)
    arrays = [jnp.asarray(a) for a in (r, weights, levels, densities, nu)]
    dtype = jnp.result_type(*arrays, float)
    r, weights, levels, densities, nu = (a.astype(dtype) for a in arrays)
    per_client = 1.0 / (r * r) - (2.0 * levels - 1.0) ** 2
    slope = jnp.sum(weights * densities, axis=-1)
    out = nu * jnp.sum(weights * weights * per_client, axis=-1) / (4.0 * slope * slope)
    valid = jnp.all((r > 0) & (r <= 1) & (levels >= 0) & (levels <= 1) & (densities >= 0), axis=-1)
    return v.valid_or_nan(valid & (slope > 0) & (nu > 0), out)


def clients_asymptotic_variance(
    tau: ArrayLike,
    r: ArrayLike,
    clients: Clients,
    weights: ArrayLike | None = None,
    nu: ArrayLike = 1.0,
) -> Array:
    """sigma^2 for parametric clients: Q* from :func:`global_quantile`, then F_k and f_k at Q*.

    Differentiable in ``tau``, ``r``, ``weights`` and the clients' ``loc``/``scale``.
    """
    weights = check_weights(weights, clients.num_clients)
    q_star = global_quantile(tau, clients, weights)
    r = jnp.broadcast_to(jnp.asarray(r, q_star.dtype), (clients.num_clients,))
    return asymptotic_variance(r, weights, cdf(clients, q_star), pdf(clients, q_star), nu)


def asymptotic_ci_length(variance: ArrayLike, budget: ArrayLike, level: float = 0.95) -> Array:
    """Length 2 z_{(1+level)/2} sqrt(sigma^2 / t_T) of the oracle (known-variance) normal CI.

    The self-normalised CI of the same level is longer on average (its critical value absorbs
    the randomness of V_T); both scale like sigma / sqrt(t_T), so their sensitivities to r_k
    are proportional.
    """
    v.check_range("level", level, 0.0, 1.0, low_open=True, high_open=True)
    v.check_range("budget", budget, 0.0, jnp.inf, low_open=True, high_open=True)
    variance = jnp.asarray(variance, jnp.result_type(variance, float))
    z = ndtri(0.5 * (1.0 + jnp.asarray(level, variance.dtype)))
    return 2.0 * z * jnp.sqrt(variance / jnp.asarray(budget, variance.dtype))


__all__ = ["asymptotic_ci_length", "asymptotic_variance", "clients_asymptotic_variance"]
