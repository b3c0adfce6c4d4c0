"""The Laplace mechanism's exact privacy profile, epsilon and tradeoff curve.

The Laplace mechanism releases ``value + b L`` with L ~ Laplace(0, 1) (density e^-|x| / 2) and
b = Delta / eps0 for a scalar value of sensitivity Delta (Dwork, McSherry, Nissim & Smith,
"Calibrating Noise to Sensitivity in Private Data Analysis", TCC 2006). Its worst pair of
neighbouring output laws is P = Lap(0, b), Q = Lap(Delta, b) (any shift of at most Delta is a
post-processing of it), with privacy loss l(x) = log P(x)/Q(x) = (|x - Delta| - |x|) / b:

* l = eps0 for x <= 0 (P-mass 1/2), l = -eps0 for x >= Delta (P-mass e^-eps0 / 2);
* l = eps0 - 2 x / b in between: a density e^((l - eps0)/2) / 4 on (-eps0, eps0).

Summing (1 - e^(eps - l)) over the losses above eps gives the exact profile

    delta(eps) = 1 - e^((eps - eps0)/2)   for 0 <= eps < eps0,   0 from eps0 on,

so epsilon(delta) = max(0, eps0 + 2 log(1 - delta)). (The pair is symmetric: (Q, P) has the same
privacy loss distribution.) Every eps0-DP mechanism has delta(eps) <= (e^eps0 - e^eps) /
(1 + e^eps0), the worst case being binary randomized response; the Laplace mechanism's own
profile is below it (at eps = 0: 1 - e^-eps0/2 against tanh(eps0/2)).

The tradeoff curve of Lap(0, 1) against Lap(mu, 1) (Dong, Roth & Su, "Gaussian Differential
Privacy", J. R. Stat. Soc. B 2022, their Laplace example) follows from the Neyman-Pearson
lemma: the likelihood ratio is monotone in x, constant (e^mu, e^-mu) outside [0, mu], so the
optimal tests reject for x > t and

    f(alpha) = 1 - e^mu alpha                 for alpha < e^-mu / 2,
               e^-mu / (4 alpha)              for e^-mu / 2 <= alpha <= 1/2,
               e^-mu (1 - alpha)              for alpha > 1/2,

with mu = eps0 (thresholds t >= mu, 0 <= t <= mu and t <= 0 in turn). It lies above the pure
eps0-DP curve max(0, 1 - e^eps0 alpha, e^-eps0 (1 - alpha)), touching it on the two linear
pieces. The profile is its convex conjugate: delta(eps) = max_alpha (1 - e^eps alpha -
f(alpha)) (tested).

Rounding. The profile and epsilon are evaluated with expm1 / log1p (e - eps0 is exact where
it matters: floats within a factor two subtract exactly) and raised by
:data:`LAPLACE_ROUND_UP` units of the dtype's epsilon, relatively, so they are never below
the exact value for the float arguments; epsilon at delta = 0 is eps0 itself.

Domains: eps0 in [0, inf] (0: delta = 0; inf: no noise, delta = 1), eps >= 0, delta in [0, 1),
alpha in [0, 1]. Concrete values outside raise ``ValueError`` naming the argument; traced ones
give NaN, in the gradient too. A vector release with l1 sensitivity Delta is eps0-DP but not
claimed here (:func:`ldpjax.mechanisms.laplace_claim` claims ``PureDpEvent(eps0)`` for it).
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting.gdp import _float as _f
from ldpjax.accounting.gdp import log_probability, round_up_tiny
from ldpjax.types import Array, ArrayLike

#: Units of the dtype's epsilon by which the profile and epsilon are raised, relatively.
LAPLACE_ROUND_UP = 8


def _tol(x: Array) -> float:
    return float(jnp.finfo(x.dtype).eps)


def laplace_delta_unchecked(eps0: Array, eps: Array) -> Array:
    """delta(eps) = -expm1(min(eps - eps0, 0) / 2), rounded up (no checks; NaN for eps0 < 0,
    eps < 0 or NaN)."""
    eps0, eps = jnp.broadcast_arrays(*_f(eps0, eps))
    valid = (eps0 >= 0) & (eps >= 0)
    finite = jnp.isfinite(eps0)
    inside = valid & finite & (eps < eps0)
    gap = jnp.where(inside, eps - jnp.where(finite, eps0, 0.0), -1.0)
    out = -jnp.expm1(0.5 * gap) * (1.0 + LAPLACE_ROUND_UP * _tol(eps0))
    out = jnp.where(inside, jnp.minimum(out, 1.0), 0.0)
    out = jnp.where(valid & ~finite & (eps < jnp.inf), 1.0, out)
    return v.valid_or_nan(valid, out, eps0, eps)


def laplace_epsilon_unchecked(eps0: Array, log_delta: Array) -> Array:
    """epsilon(delta) = max(0, eps0 + 2 log1p(-delta)) from log delta, rounded up (no checks;
    NaN for eps0 < 0, log delta >= 0 or NaN)."""
    eps0, log_delta = jnp.broadcast_arrays(*_f(eps0, log_delta))
    tol = _tol(eps0)
    valid = (eps0 >= 0) & (log_delta < 0)
    finite = jnp.isfinite(eps0)
    safe0 = jnp.where(finite, eps0, 0.0)
    safe_log = jnp.where(valid, log_delta, -1.0)
    # delta rounded down (its log lowered by its own rounding): the result rounds up
    delta = jnp.exp(safe_log - 2.0 * tol * jnp.abs(safe_log)) * (1.0 - 4.0 * tol)
    drop = -2.0 * jnp.log1p(-delta)  # >= 0
    raw = safe0 - drop
    slack = LAPLACE_ROUND_UP * tol * (safe0 + drop)
    out = jnp.where(delta > 0, jnp.minimum(raw + slack, safe0), safe0)
    out = jnp.maximum(out, 0.0)
    out = jnp.where(finite, out, jnp.inf)
    return v.valid_or_nan(valid, out, eps0, log_delta)


def laplace_tradeoff_unchecked(eps0: Array, alpha: Array) -> Array:
    """The Laplace mechanism's tradeoff curve (module docstring; no checks)."""
    eps0, alpha = jnp.broadcast_arrays(*_f(eps0, alpha))
    valid = (eps0 >= 0) & (alpha >= 0) & (alpha <= 1)
    finite = jnp.isfinite(eps0)
    mu = jnp.where(finite, eps0, 0.0)
    low = jnp.exp(-mu)
    first = 1.0 - jnp.exp(mu) * alpha
    middle = low / (4.0 * jnp.where(alpha > 0, alpha, 1.0))
    last = low * (1.0 - alpha)
    out = jnp.where(alpha < 0.5 * low, first, jnp.where(alpha <= 0.5, middle, last))
    out = jnp.where(finite, jnp.clip(out, 0.0, 1.0), 0.0)
    return v.valid_or_nan(valid, out, eps0, alpha)


def laplace_delta(eps0: ArrayLike, eps: ArrayLike) -> Array:
    """delta(eps) of the Laplace mechanism at budget eps0: 1 - e^((eps - eps0)/2) below eps0.

    Args:
      eps0: the budget Delta / b, in [0, inf] (inf: no noise).
      eps: in [0, inf].

    Example:
      >>> round(float(laplace_delta(1.0, 0.0)), 4)  # 1 - e^-1/2
      0.3935
    """
    v.check_range("eps0", eps0, 0.0, jnp.inf)
    v.check_range("eps", eps, 0.0, jnp.inf)
    eps0, eps = _f(eps0, eps)
    return laplace_delta_unchecked(round_up_tiny(eps0, eps0.dtype), eps)


def laplace_epsilon(eps0: ArrayLike, delta: ArrayLike) -> Array:
    """The smallest eps with (eps, delta)-DP: max(0, eps0 + 2 log(1 - delta)).

    Args:
      eps0: the budget, in [0, inf].
      delta: in [0, 1); a concrete delta is logged in float64 (1e-300 works in float32).

    Example:
      >>> round(float(laplace_epsilon(1.0, 0.1)), 4)  # 1 + 2 log 0.9
      0.7893
    """
    v.check_range("eps0", eps0, 0.0, jnp.inf)
    v.check_range("delta", delta, 0.0, 1.0, high_open=True)
    (eps0,) = _f(eps0)
    dtype = jnp.result_type(eps0, delta, float)
    eps0 = round_up_tiny(eps0, dtype)
    return laplace_epsilon_unchecked(eps0, jnp.asarray(log_probability(delta, dtype), dtype))


def laplace_tradeoff(eps0: ArrayLike, alpha: ArrayLike) -> Array:
    """The tradeoff curve of the Laplace mechanism at budget eps0 (module docstring).

    Args:
      eps0: in [0, inf].
      alpha: type I error, in [0, 1].

    Example:
      >>> round(float(laplace_tradeoff(1.0, 0.25)), 4)  # e^-1 / (4 * 0.25)
      0.3679
    """
    v.check_range("eps0", eps0, 0.0, jnp.inf)
    v.check_range("alpha", alpha, 0.0, 1.0)
    return laplace_tradeoff_unchecked(*_f(eps0, alpha))


__all__ = [
    "LAPLACE_ROUND_UP",
    "laplace_delta",
    "laplace_delta_unchecked",
    "laplace_epsilon",
    "laplace_epsilon_unchecked",
    "laplace_tradeoff",
    "laplace_tradeoff_unchecked",
]
