"""Privacy of a mixture of Gaussian mechanisms whose component is revealed.

Used for privacy amplification by batching ("Prediction with Expert Advice under Local Differential
Privacy", ICLR 2026, Lemma 2): a data point lands in a batch of size B with probability p_B and is
then released with (mu_B)-GDP, the batch size being public. The privacy loss random variable is a
p-mixture of the Gaussian ones, so:

* delta(eps) = sum_B p_B [Phi(-eps/mu_B + mu_B/2) - e^eps Phi(-eps/mu_B - mu_B/2)];
* the tradeoff curve is traced by one log-likelihood-ratio threshold c shared by all
  components (Neyman-Pearson on the joint observation):
  alpha(c) = sum_B p_B [1 - Phi(c/mu_B + mu_B/2)],  beta(c) = sum_B p_B Phi(c/mu_B - mu_B/2).

``gdp_mixture_tradeoff(mus, weights, alpha)`` solves alpha(c) = alpha for c (in log space,
safeguarded Newton, implicit gradients) and returns beta(c); ``mixture_epsilon_at_log_delta``
solves log delta(eps) = log delta the same way. Components are along the last axis of ``mus``
and ``weights``; leading axes broadcast with ``eps`` / ``alpha``. Traced arguments outside the
domain (a mu <= 0, a negative weight, weights not summing to 1) give NaN, in the gradient too.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import ndtr, ndtri

from ldpjax import _validation as v
from ldpjax._special import log_ndtr
from ldpjax.accounting.gdp import _float, _log_delta, round_up_tiny
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike


def check_mixture(mus: ArrayLike, weights: ArrayLike, prefix: str = "") -> None:
    """Concrete checks of a mixture's arguments (names prefixed by ``prefix``)."""
    v.check_range(f"{prefix}mus", mus, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_not_bool(f"{prefix}weights", weights, "in [0, 1]")
    v.check_sums_to_one(f"{prefix}weights", weights)
    ms, ws = np.shape(mus), np.shape(weights)
    if not ms or not ws or ms[-1] != ws[-1]:
        raise ValueError(
            f"{prefix}mus and {prefix}weights must have the same (non-empty) last axis of "
            f"mixture components; got shapes {ms} and {ws}"
        )


def gdp_mixture_delta(mus: ArrayLike, weights: ArrayLike, eps: ArrayLike) -> Array:
    """delta(eps) of a revealed mixture of mu_B-GDP mechanisms with probabilities p_B.

    Args:
      mus: component GDP parameters, in (0, inf), last axis = components.
      weights: component probabilities p_B (non-negative, summing to 1 on the last axis;
        traced weights that do not give NaN).
      eps: in [0, inf], broadcast against the leading axes of ``mus``/``weights``.

    Example:
      >>> import jax.numpy as jnp
      >>> # a point in a batch of 1 (1-GDP) or of 4 (0.5-GDP) rounds, with probability 1/2 each
      >>> round(float(gdp_mixture_delta(jnp.array([1.0, 0.5]), jnp.array([0.5, 0.5]), 1.0)), 4)
      0.0669
    """
    check_mixture(mus, weights)
    v.check_range("eps", eps, 0.0, jnp.inf)
    mus, weights, eps = _float(mus, weights, eps)
    return jnp.exp(mixture_log_delta(round_up_tiny(mus, mus.dtype), weights, eps))


def mixture_valid(mus: Array, weights: Array) -> Array:
    """Traced domain of a mixture: mus in (0, inf), weights >= 0 summing to 1 (last axis).

    The sum is allowed a rounding slack of 1e-5 plus 4 ulps per component.
    """
    mus, weights = _float(mus, weights)
    slack = 1e-5 + 4.0 * weights.shape[-1] * float(jnp.finfo(weights.dtype).eps)
    total = jnp.sum(weights, axis=-1)
    ok_w = jnp.all(weights >= 0, axis=-1) & (jnp.abs(total - 1.0) <= slack)
    ok_mu = jnp.all((mus > 0) & (mus < jnp.inf), axis=-1)
    return ok_mu & ok_w


@jax.jit
def mixture_log_delta(mus: Array, weights: Array, eps: Array) -> Array:
    """log delta(eps) of the mixture (no concrete checks; NaN, in the gradient too, outside the
    domain of :func:`mixture_valid` or for eps < 0)."""
    mus, weights, eps = _float(mus, weights, eps)
    valid = mixture_valid(mus, weights) & (eps >= 0)
    safe_mus = jnp.where((mus > 0) & (mus < jnp.inf), mus, 1.0)
    safe_w = jnp.where(weights >= 0, weights, 0.0)
    safe_eps = jnp.where(eps >= 0, eps, 0.0)
    log_deltas = _log_delta(safe_mus, safe_eps[..., None])
    # log sum_B p_B delta_B: components with p_B = 0 drop out (b = 0 in logsumexp)
    out = jax.nn.logsumexp(log_deltas, axis=-1, b=safe_w)
    return v.valid_or_nan(valid, out, jnp.sum(mus, -1), jnp.sum(weights, -1), eps)


def _mixture_residual(eps: Array, mus: Array, weights: Array, log_target: Array) -> Array:
    return mixture_log_delta(mus, weights, eps) - log_target


@jax.jit
def mixture_epsilon_at_log_delta(mus: Array, weights: Array, log_delta: Array) -> Array:
    """eps(delta) of the mixture from L = log delta in [-inf, 0) (no concrete checks).

    Solves ``mixture_log_delta(eps) = L`` on [0, max_B mu_B (mu_B / 2 + sqrt(-2 L))]: at the
    right end every component has delta_B < e^L (see :func:`~ldpjax.accounting.gdp_epsilon`),
    so the mixture does too. Implicit gradients in ``mus``, ``weights`` and L; L = -inf gives
    inf; NaN (also in the gradient) outside the domain.
    """
    mus, weights, log_delta = _float(mus, weights, log_delta)
    batch = jnp.broadcast_shapes(mus.shape[:-1], weights.shape[:-1], log_delta.shape)
    m = max(mus.shape[-1], weights.shape[-1])
    mus = jnp.broadcast_to(mus, batch + (m,))
    weights = jnp.broadcast_to(weights, batch + (m,))
    log_delta = jnp.broadcast_to(log_delta, batch)
    valid = mixture_valid(mus, weights) & (log_delta < 0)
    finite = valid & (log_delta > -jnp.inf)
    safe_mus = jnp.where(finite[..., None], mus, 1.0)
    safe_w = jnp.where(finite[..., None], weights, 1.0 / m)
    safe_log = jnp.where(finite, log_delta, -1.0)
    hi = jnp.max(safe_mus * (0.5 * safe_mus + jnp.sqrt(-2.0 * safe_log)[..., None]), axis=-1)
    lo = jnp.zeros_like(hi)
    root = bracketed_root(_mixture_residual, lo, hi, safe_mus, safe_w, safe_log, num_iters=80)
    at_zero = _mixture_residual(lo, safe_mus, safe_w, safe_log) <= 0
    eps = jnp.where(finite, jnp.where(at_zero, 0.0, root), jnp.inf)
    return v.valid_or_nan(valid, eps, jnp.sum(mus, -1), jnp.sum(weights, -1), log_delta)


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
    check_mixture(mus, weights)
    v.check_range("alpha", alpha, 0.0, 1.0)
    mus, weights, alpha = _float(mus, weights, alpha)
    return _mixture_tradeoff(round_up_tiny(mus, mus.dtype), weights, alpha)


@jax.jit
def _mixture_tradeoff(mus: Array, weights: Array, alpha: Array) -> Array:
    batch = jnp.broadcast_shapes(mus.shape[:-1], weights.shape[:-1], alpha.shape)
    m = max(mus.shape[-1], weights.shape[-1])
    mus = jnp.broadcast_to(mus, batch + (m,))
    weights = jnp.broadcast_to(weights, batch + (m,))
    alpha = jnp.broadcast_to(alpha, batch)

    valid = mixture_valid(mus, weights) & (alpha >= 0) & (alpha <= 1)
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
    return v.valid_or_nan(valid, beta, jnp.sum(mus, -1), jnp.sum(weights, -1), alpha)


__all__ = ["gdp_mixture_delta", "gdp_mixture_tradeoff"]
