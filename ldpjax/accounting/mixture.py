"""Privacy of a mixture of Gaussian mechanisms whose component is revealed.

Used for privacy amplification by batching (paper 000, Lemma 2): a data point lands in a batch
of size B with probability p_B and is then released with (mu_B)-GDP, the batch size being
public. The privacy loss random variable is a p-mixture of the Gaussian ones, so (spec
``accounting.md``):

* delta(eps) = sum_B p_B [Phi(-eps/mu_B + mu_B/2) - e^eps Phi(-eps/mu_B - mu_B/2)];
* the tradeoff curve is traced by one log-likelihood-ratio threshold c shared by all
  components (Neyman-Pearson on the joint observation):
  alpha(c) = sum_B p_B [1 - Phi(c/mu_B + mu_B/2)],  beta(c) = sum_B p_B Phi(c/mu_B - mu_B/2).

``gdp_mixture_tradeoff(mus, weights, alpha)`` solves alpha(c) = alpha for c (in log space,
safeguarded Newton, implicit gradients) and returns beta(c). Components are along the last
axis of ``mus`` and ``weights``; leading axes broadcast with ``eps`` / ``alpha``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import log_ndtr, ndtr, ndtri

from ldpjax import _validation as v
from ldpjax.accounting.gdp import _float, _log_delta
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike


def _check_mixture(mus: ArrayLike, weights: ArrayLike) -> None:
    v.check_range("mus", mus, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_sums_to_one("weights", weights)
    if v.is_concrete((mus, weights)):
        ms, ws = np.shape(mus), np.shape(weights)
        if not ms or not ws or ms[-1] != ws[-1]:
            raise ValueError(
                "mus and weights must have the same (non-empty) last axis of mixture "
                f"components; got shapes {ms} and {ws}"
            )


def gdp_mixture_delta(mus: ArrayLike, weights: ArrayLike, eps: ArrayLike) -> Array:
    """delta(eps) of a revealed mixture of mu_B-GDP mechanisms with probabilities p_B.

    Args:
      mus: component GDP parameters, in (0, inf), last axis = components.
      weights: component probabilities p_B (non-negative, summing to 1 on the last axis).
      eps: in [0, inf], broadcast against the leading axes of ``mus``/``weights``.

    Example:
      >>> import jax.numpy as jnp
      >>> # a point in a batch of 1 (1-GDP) or of 4 (0.5-GDP) rounds, with probability 1/2 each
      >>> round(float(gdp_mixture_delta(jnp.array([1.0, 0.5]), jnp.array([0.5, 0.5]), 1.0)), 4)
      0.0669
    """
    _check_mixture(mus, weights)
    v.check_range("eps", eps, 0.0, jnp.inf)
    return _mixture_delta(*_float(mus, weights, eps))


@jax.jit
def _mixture_delta(mus: Array, weights: Array, eps: Array) -> Array:
    safe_mus = jnp.where(mus > 0, mus, 1.0)
    deltas = jnp.exp(_log_delta(safe_mus, eps[..., None]))
    out = jnp.sum(weights * deltas, axis=-1)
    return v.valid_or_nan(jnp.all(mus > 0, axis=-1) & (eps >= 0), out)


def _log_alpha_of_threshold(c: Array, mus: Array, weights: Array, log_alpha: Array) -> Array:
    # log sum_B p_B Phi(-c/mu_B - mu_B/2)  minus the target log alpha.
    terms = log_ndtr(-c[..., None] / mus - 0.5 * mus)
    return jax.nn.logsumexp(terms, axis=-1, b=weights) - log_alpha


def gdp_mixture_tradeoff(mus: ArrayLike, weights: ArrayLike, alpha: ArrayLike) -> Array:
    """Tradeoff function (type II error at type I error alpha) of a revealed GDP mixture.

    Finds the shared threshold c with alpha(c) = alpha; the bracket is
    [min_B c_B, max_B c_B] with c_B = mu_B (-Phi^{-1}(alpha) - mu_B/2), the threshold at
    which component B alone has type I error alpha. Gradients w.r.t. ``mus``, ``weights`` and
    ``alpha`` follow from the implicit function theorem.

    Args:
      mus: component GDP parameters, in (0, inf), last axis = components.
      weights: component probabilities (non-negative, summing to 1 on the last axis).
      alpha: type I error in [0, 1], broadcast against the leading axes.

    Returns:
      beta in [0, 1]; with a single component it equals ``gdp_tradeoff(mu, alpha)``.

    Example:
      >>> import jax.numpy as jnp
      >>> round(float(gdp_mixture_tradeoff(jnp.array([1.0, 0.5]), jnp.array([0.5, 0.5]), 0.05)), 4)
      0.7986
    """
    _check_mixture(mus, weights)
    v.check_range("alpha", alpha, 0.0, 1.0)
    return _mixture_tradeoff(*_float(mus, weights, alpha))


@jax.jit
def _mixture_tradeoff(mus: Array, weights: Array, alpha: Array) -> Array:
    batch = jnp.broadcast_shapes(mus.shape[:-1], weights.shape[:-1], alpha.shape)
    m = max(mus.shape[-1], weights.shape[-1])
    mus = jnp.broadcast_to(mus, batch + (m,))
    weights = jnp.broadcast_to(weights, batch + (m,))
    alpha = jnp.broadcast_to(alpha, batch)

    valid = jnp.all(mus > 0, axis=-1) & (alpha >= 0) & (alpha <= 1)
    interior = (alpha > 0) & (alpha < 1)
    safe_alpha = jnp.where(interior, alpha, 0.5)
    safe_mus = jnp.where(mus > 0, mus, 1.0)
    z = -ndtri(safe_alpha)[..., None]
    c_single = safe_mus * (z - 0.5 * safe_mus)
    used = weights > 0
    lo = jnp.min(jnp.where(used, c_single, jnp.inf), axis=-1) - 1.0
    hi = jnp.max(jnp.where(used, c_single, -jnp.inf), axis=-1) + 1.0
    c = bracketed_root(
        _log_alpha_of_threshold, lo, hi, safe_mus, weights, jnp.log(safe_alpha), num_iters=80
    )
    beta = jnp.sum(weights * ndtr(c[..., None] / safe_mus - 0.5 * safe_mus), axis=-1)
    beta = jnp.where(alpha <= 0, 1.0, jnp.where(alpha >= 1, 0.0, beta))
    return v.valid_or_nan(valid, beta)


__all__ = ["gdp_mixture_delta", "gdp_mixture_tradeoff"]
