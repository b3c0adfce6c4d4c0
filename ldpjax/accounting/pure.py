"""Pure epsilon-DP mechanisms: binary and K-ary randomized response, and their curves.

* Binary randomized response with truthful rate r (report the true bit with probability r,
  otherwise a fair coin) is eps-LDP with eps = log((1 + r) / (1 - r)) (paper 001, Sec. 2);
  inverse r = tanh(eps / 2).
* K-ary randomized response with parameter xi keeps the true category with probability
  e^xi / (K - 1 + e^xi) and shows each other one with probability 1 / (K - 1 + e^xi); it is
  xi-LDP. Read as epsilon-greedy exploration (paper 002, Sec. 3) the exploration probability
  is eps_explore = K / (K + e^xi - 1), inverse xi = log(1 - K + K / eps_explore).
* An eps-DP mechanism has tradeoff f(alpha) = max(0, 1 - e^eps alpha, e^-eps (1 - alpha))
  (Dong, Roth & Su 2019, Prop. 2.5 with delta = 0).
* Composition of budgets: parallel (each person's data used once) is the max, sequential (the
  same person in several analyses) is the sum.

Traced inputs: argument checks run on concrete values only; under ``jit`` out-of-domain entries
give NaN, in the gradient too. Booleans are refused (``r=True`` is not a rate).
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting.gdp import _float as _f
from ldpjax.accounting.gdp import round_up_tiny
from ldpjax.types import Array, ArrayLike


def rr_epsilon(r: ArrayLike) -> Array:
    """eps of binary randomized response with truthful rate r: log((1 + r) / (1 - r)).

    Args:
      r: truthful-response rate, in (0, 1]; r = 1 (always truthful) gives eps = inf.

    Example:
      >>> round(float(rr_epsilon(0.5)), 4)  # log 3
      1.0986
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    (r,) = _f(r)
    r = round_up_tiny(r, r.dtype)  # r = 1e-40 is valid: not a float32 0
    valid = (r > 0) & (r <= 1)
    below_one = r < 1
    safe = jnp.where(below_one, r, 0.5)
    out = jnp.where(below_one, jnp.log1p(safe) - jnp.log1p(-safe), jnp.inf)
    return v.valid_or_nan(valid, out, r)


def rr_rate(eps: ArrayLike) -> Array:
    """Truthful rate r = tanh(eps / 2) of binary randomized response that is eps-LDP.

    Args:
      eps: in [0, inf]; eps = 0 gives r = 0 (pure coin flips), eps = inf gives r = 1.

    Example:
      >>> round(float(rr_rate(1.0986)), 4)
      0.5
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    (eps,) = _f(eps)
    return v.valid_or_nan(eps >= 0, jnp.tanh(0.5 * eps), eps)


def krr_explore_prob(xi: ArrayLike, k: ArrayLike) -> Array:
    """Exploration probability K / (K + e^xi - 1) of K-ary randomized response with budget xi.

    Computed as K e^-xi / (1 + (K - 1) e^-xi) so that large xi neither overflows nor loses
    precision.

    Args:
      xi: visitor-level budget, in [0, inf]; xi = 0 is uniform play (probability 1),
        xi = inf pure greed (probability 0).
      k: number of categories (arms), an integer >= 2.

    Example:
      >>> round(float(krr_explore_prob(1.0, 2)), 4)  # 2 / (1 + e)
      0.5379
    """
    v.check_range("xi", xi, 0.0, jnp.inf)
    v.check_integer("k", k, 2)
    xi, k = _f(xi, k)
    xi = round_up_tiny(xi, xi.dtype)
    decay = jnp.exp(-xi)
    out = k * decay / (1.0 + (k - 1.0) * decay)
    return v.valid_or_nan((xi >= 0) & (k >= 2), out, xi, k)


def krr_budget(explore_prob: ArrayLike, k: ArrayLike) -> Array:
    """Budget xi = log(1 - K + K / p) of epsilon-greedy with exploration probability p.

    The inverse of :func:`krr_explore_prob`, computed as log1p(K (1 - p) / p).

    Args:
      explore_prob: p in [0, 1]; p = 1 gives xi = 0, p = 0 gives xi = inf.
      k: number of arms, an integer >= 2.

    Example:
      >>> round(float(krr_budget(0.5379, 2)), 3)
      1.0
    """
    v.check_range("explore_prob", explore_prob, 0.0, 1.0)
    v.check_integer("k", k, 2)
    p, k = _f(explore_prob, k)
    positive = p > 0
    safe = jnp.where(positive, p, 1.0)
    out = jnp.where(positive, jnp.log1p(k * (1.0 - safe) / safe), jnp.inf)
    return v.valid_or_nan((p >= 0) & (p <= 1) & (k >= 2), out, p, k)


def pure_dp_tradeoff(eps: ArrayLike, alpha: ArrayLike) -> Array:
    """Tradeoff function of an eps-DP mechanism: max(0, 1 - e^eps alpha, e^-eps (1 - alpha)).

    Args:
      eps: in [0, inf].
      alpha: type I error, in [0, 1].

    Example:
      >>> round(float(pure_dp_tradeoff(1.0, 0.05)), 4)  # 1 - e * 0.05
      0.8641
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    v.check_range("alpha", alpha, 0.0, 1.0)
    eps, alpha = _f(eps, alpha)
    finite = jnp.isfinite(eps)
    safe = jnp.where(finite, eps, 0.0)
    out = jnp.maximum(
        jnp.maximum(0.0, 1.0 - jnp.exp(safe) * alpha), jnp.exp(-safe) * (1.0 - alpha)
    )
    out = jnp.where(finite, out, 0.0)
    return v.valid_or_nan((eps >= 0) & (alpha >= 0) & (alpha <= 1), out, eps, alpha)


def compose_parallel(budgets: ArrayLike, axis: int | None = -1) -> Array:
    """Parallel composition: each person's data is used once, so the budget is the max.

    Example: the experiment budget gamma = max_t xi_t of visitor-level budgets (paper 002).

    Args:
      budgets: pure-DP budgets in [0, inf].
      axis: axis (or ``None`` for all) over which the uses are composed.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(compose_parallel(jnp.array([0.5, 1.0, 0.25])))
      1.0
    """
    v.check_range("budgets", budgets, 0.0, jnp.inf)
    (b,) = _f(budgets)
    return v.valid_or_nan(jnp.all(b >= 0, axis=axis), jnp.max(b, axis=axis), jnp.sum(b, axis=axis))


def compose_sequential(budgets: ArrayLike, axis: int | None = -1) -> Array:
    """Sequential composition: the same person in several analyses, so budgets add.

    Example: the firm budget Gamma = sum_e gamma_e over experiments (paper 002).

    Args:
      budgets: pure-DP budgets in [0, inf].
      axis: axis (or ``None`` for all) over which the analyses are composed.

    Examples:
      >>> import jax.numpy as jnp
      >>> float(compose_sequential(jnp.array([0.5, 1.0, 0.25])))
      1.75
    """
    v.check_range("budgets", budgets, 0.0, jnp.inf)
    (b,) = _f(budgets)
    return v.valid_or_nan(jnp.all(b >= 0, axis=axis), jnp.sum(b, axis=axis), jnp.sum(b, axis=axis))


__all__ = [
    "compose_parallel",
    "compose_sequential",
    "krr_budget",
    "krr_explore_prob",
    "pure_dp_tradeoff",
    "rr_epsilon",
    "rr_rate",
]
