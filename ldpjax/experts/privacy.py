"""The local randomizer shared by every expert algorithm: Gaussian noise on the gain vector.

Each round the data holder releases g~_t = g_t + z_t with z_t ~ N(0, eta^2 I_n). The l2
sensitivity of g_t in [0, 1]^n is sqrt(n), so the release is mu-GDP with mu = sqrt(n) / eta
(paper 000, Sec. 3; spec ``experts.md``). Everything an algorithm does afterwards reads only
g~ and is post-processing, so the whole run is mu-GLDP.

``mu = inf`` means "no privacy requirement": RW-FTPL then uses its utility-optimal random-walk
scale eta = sqrt(2) (the noise remains, as the algorithm's own perturbation).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.types import Array, ArrayLike, PRNGKey

NONPRIVATE_ETA = math.sqrt(2.0)


def noise_scale(mu: ArrayLike, n: int, sensitivity: ArrayLike | None = None) -> Array:
    """eta = sensitivity / mu (sensitivity defaults to sqrt(n)); eta = sqrt(2) when mu = inf.

    Args:
      mu: GDP parameter per round, in (0, inf].
      n: number of experts (static int >= 2).
      sensitivity: l2 sensitivity of one gain vector, > 0 (default sqrt(n)).
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_integer("n", n, 2)
    if sensitivity is None:
        sensitivity = math.sqrt(n)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    mu = jnp.asarray(mu, jnp.result_type(mu, float))
    finite = jnp.isfinite(mu)
    eta = jnp.where(finite, sensitivity / jnp.where(finite, mu, 1.0), NONPRIVATE_ETA)
    return v.valid_or_nan(mu > 0, eta)


def privatize_gains(key: PRNGKey, gains: ArrayLike, eta: ArrayLike) -> Array:
    """The one release per round: g~ = g + N(0, eta^2 I). The only access to the data."""
    gains = jnp.asarray(gains)
    eta = jnp.asarray(eta, gains.dtype)
    return gains + eta * jax.random.normal(key, gains.shape, gains.dtype)
