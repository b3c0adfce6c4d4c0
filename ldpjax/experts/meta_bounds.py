"""RW-Meta's expected regret against the best learner (Theorem 3 of "Prediction with Expert
Advice under Local Differential Privacy", ICLR 2026).

    E[max_j G^(m)_{T,j} - sum_t <x_{t,j_t}, g_t>]
        <= [max(sqrt 2, eta * lambda_max(Sigma*_T / (eta^2 T))^{1/2}) + sqrt 2] sqrt(2 T log m)

with eta = sensitivity / mu (sensitivity sqrt(n) by default, eta = sqrt 2 at mu = inf) and the
data-dependent term lambda_ratio = lambda_max(Sigma*_T / (eta^2 T)), which
:func:`ldpjax.experts.rw_meta.lambda_max_ratio` computes from a run's final Sigma_T. Since
Sigma* <= Sigma (a PSD matrix is subtracted) and every row of X_t has l2 norm <= 1,
0 <= lambda_ratio <= m; it is 1 when all learners always play different one-hot actions and
0 when they always agree. eta sqrt(lambda_ratio) = sqrt(lambda_max(Sigma*_T) / T), so the first
term is sqrt(c_T / T) with RW-Meta's c_T.

:func:`regret_bound_meta` is a pure JAX function: ``jit``/``vmap``/``grad`` w.r.t. mu, T, m and
lambda_ratio (a subgradient at the kink of the max). Concrete inputs are validated
(``ValueError``); under ``jit`` out-of-domain entries give NaN.
"""

from __future__ import annotations

import math

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.experts.privacy import NONPRIVATE_ETA
from ldpjax.types import Array, ArrayLike

_SQRT2 = math.sqrt(2.0)


def regret_bound_meta(
    mu: ArrayLike,
    num_rounds: ArrayLike,
    num_learners: ArrayLike,
    num_experts: ArrayLike,
    lambda_ratio: ArrayLike,
    sensitivity: ArrayLike | None = None,
) -> Array:
    """Theorem 3's bound on RW-Meta's expected regret against the best learner.

    Args:
      mu: per-round GDP parameter, in (0, inf] (inf: eta = sqrt 2).
      num_rounds: T >= 1 (may be fractional for differentiation).
      num_learners: m >= 2 (enters through log m).
      num_experts: n >= 1, used for the default sensitivity sqrt(n).
      lambda_ratio: lambda_max(Sigma*_T / (eta^2 T)), in [0, inf) (<= m for valid actions).
      sensitivity: l2 sensitivity of a gain vector, > 0 (default sqrt(n)).

    Returns:
      The bound, broadcast over the inputs.

    Example:
      >>> bool(regret_bound_meta(1.0, 100, 13, 24, 0.5) > 0)
      True
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("num_rounds", num_rounds, 1.0, jnp.inf, high_open=True)
    v.check_range("num_learners", num_learners, 2.0, jnp.inf, high_open=True)
    v.check_range("num_experts", num_experts, 1.0, jnp.inf, high_open=True)
    v.check_range("lambda_ratio", lambda_ratio, 0.0, jnp.inf, high_open=True)
    if sensitivity is not None:
        v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    dtype = jnp.result_type(mu, num_rounds, num_learners, lambda_ratio, float)
    mu = jnp.asarray(mu, dtype)
    T = jnp.asarray(num_rounds, dtype)
    m = jnp.asarray(num_learners, dtype)
    n = jnp.asarray(num_experts, dtype)
    ratio = jnp.asarray(lambda_ratio, dtype)
    sens = jnp.sqrt(n) if sensitivity is None else jnp.asarray(sensitivity, dtype)
    finite = jnp.isfinite(mu)
    eta = jnp.where(finite, sens / jnp.where(finite, mu, 1.0), NONPRIVATE_ETA)
    safe_ratio = jnp.where(ratio > 0, ratio, 1.0)
    spread = jnp.where(ratio > 0, eta * jnp.sqrt(safe_ratio), 0.0)
    bound = (jnp.maximum(_SQRT2, spread) + _SQRT2) * jnp.sqrt(2.0 * T * jnp.log(m))
    valid = (mu > 0) & (T >= 1) & (m >= 2) & (n >= 1) & (ratio >= 0) & (sens > 0)
    return v.valid_or_nan(valid, bound)


__all__ = ["regret_bound_meta"]
