"""Local randomizers: pure functions of an explicit key, ``jit``/``vmap``-able.

* :func:`gaussian_mechanism` adds N(0, (sensitivity / mu)^2) noise: mu-GDP for data with the
  given l2 sensitivity (Dong, Roth & Su 2019, Thm 2.7). mu = inf adds no noise.
* :func:`randomized_response` reports a bit truthfully with probability r and a fair coin
  otherwise: eps-LDP with eps = log((1 + r) / (1 - r)) (paper 001, Sec. 2).
* :func:`kary_randomized_response` keeps a category with probability e^xi / (K - 1 + e^xi) and
  shows each other with probability 1 / (K - 1 + e^xi): xi-LDP (paper 002, Sec. 3). It is
  sampled as "explore uniformly over all K with probability K / (K + e^xi - 1)".

Accounting for each lives in :mod:`ldpjax.accounting`; the parameters here (mu, r, xi) are
arrays so that a sweep over privacy levels ``vmap``-s and compiles once.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting import krr_explore_prob
from ldpjax.types import Array, ArrayLike, PRNGKey


def gaussian_noise_scale(sensitivity: ArrayLike, mu: ArrayLike) -> Array:
    """Noise standard deviation sensitivity / mu of the mu-GDP Gaussian mechanism (0 if mu = inf)."""
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, high_open=True)
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    sensitivity = jnp.asarray(sensitivity, jnp.result_type(sensitivity, mu, float))
    mu = jnp.asarray(mu, sensitivity.dtype)
    finite = jnp.isfinite(mu)
    return jnp.where(finite, sensitivity / jnp.where(finite, mu, 1.0), 0.0)


def gaussian_mechanism(
    key: PRNGKey, value: ArrayLike, sensitivity: ArrayLike, mu: ArrayLike
) -> Array:
    """Release ``value + N(0, (sensitivity / mu)^2 I)``: mu-GDP for l2 ``sensitivity``.

    Args:
      key: PRNG key.
      value: the true value (any shape, floating).
      sensitivity: l2 sensitivity of ``value`` between neighbouring inputs, in [0, inf).
      mu: GDP parameter, in (0, inf]; ``inf`` releases ``value`` unchanged (no privacy).

    Returns:
      The noisy value, same shape and dtype as ``value``.
    """
    value = jnp.asarray(value)
    if not jnp.issubdtype(value.dtype, jnp.floating):
        value = value.astype(jnp.result_type(float))
    scale = gaussian_noise_scale(sensitivity, mu).astype(value.dtype)
    return value + scale * jax.random.normal(key, value.shape, value.dtype)


def randomized_response(key: PRNGKey, bit: ArrayLike, r: ArrayLike) -> Array:
    """Binary randomized response: the true bit with probability r, else a fair coin.

    Args:
      key: PRNG key.
      bit: true bits (bool or 0/1 integers), any shape.
      r: truthful-response rate, in (0, 1] (broadcast against ``bit``).

    Returns:
      Reported bits, same shape and dtype as ``bit``.
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    bit = jnp.asarray(bit)
    truthful_key, coin_key = jax.random.split(key)
    shape = jnp.broadcast_shapes(bit.shape, jnp.shape(r))
    truthful = jax.random.bernoulli(truthful_key, jnp.asarray(r, float), shape)
    coin = jax.random.bernoulli(coin_key, 0.5, shape)
    report = jnp.where(truthful, bit.astype(bool), coin)
    return report.astype(bit.dtype)


def debias_randomized_response(report: ArrayLike, r: ArrayLike) -> Array:
    """Unbiased estimate (report - (1 - r)/2) / r of the true bit from a randomized report."""
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    report = jnp.asarray(report, jnp.result_type(float))
    r = jnp.asarray(r, report.dtype)
    return (report - 0.5 * (1.0 - r)) / r


def kary_randomized_response(
    key: PRNGKey, category: ArrayLike, xi: ArrayLike, k: ArrayLike
) -> Array:
    """K-ary randomized response with budget xi (xi-LDP for the category).

    Args:
      key: PRNG key.
      category: true categories, integers in [0, k).
      xi: budget in [0, inf] (0: uniform output; inf: always the true category).
      k: number of categories, integer >= 2 (may be an array, so it vmaps).

    Returns:
      Reported categories (int32), same shape as ``category``.
    """
    v.check_integer("category", category, 0)
    explore_prob = krr_explore_prob(xi, k)
    category = jnp.asarray(category, jnp.int32)
    explore_key, arm_key = jax.random.split(key)
    shape = jnp.broadcast_shapes(category.shape, jnp.shape(explore_prob))
    explore = jax.random.uniform(explore_key, shape, explore_prob.dtype) < explore_prob
    uniform = jax.random.randint(arm_key, shape, 0, jnp.asarray(k, jnp.int32))
    return jnp.where(explore, uniform, category)


__all__ = [
    "debias_randomized_response",
    "gaussian_mechanism",
    "gaussian_noise_scale",
    "kary_randomized_response",
    "randomized_response",
]
