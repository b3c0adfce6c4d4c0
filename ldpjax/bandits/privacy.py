"""What a third party can learn about a visitor's segment from the arm it sees (Ponte & Ferecatu,
"A Privacy Budgeting Framework for Online Experimentation", 2026, Sec. 3.2).

The shown arm is K-ary randomized response of the segment's greedy arm, so for any two segments
s, s' and any arm a, P(A_t = a | s) <= e^{xi_t} P(A_t = a | s'). By Bayes' rule the posterior
odds of any segment rise by at most a factor e^{xi}: posterior odds <= prior odds x e^{xi}
(:func:`posterior_odds_bound`), equivalently the posterior probability is at most
p e^xi / (p e^xi + 1 - p) (:func:`posterior_probability_bound`).

:func:`mechanism_epsilon` is the exact worst-case log likelihood ratio of a show-probability
rule (used to check that the accounted spend is what the mechanism really leaks);
:func:`empirical_epsilon` estimates it from observed shows (the audit).
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.types import Array, ArrayLike


def posterior_odds_bound(prior_odds: ArrayLike, xi: ArrayLike) -> Array:
    """Largest posterior odds of a segment after one shown arm: prior_odds x e^xi.

    Args:
      prior_odds: P(s) / P(not s) before the visit, in [0, inf].
      xi: the visitor budget, in [0, inf].

    Example:
      >>> import math
      >>> round(float(posterior_odds_bound(0.25, math.log(3))), 4)
      0.75
    """
    v.check_range("prior_odds", prior_odds, 0.0, jnp.inf)
    v.check_range("xi", xi, 0.0, jnp.inf)
    odds = jnp.asarray(prior_odds, jnp.result_type(prior_odds, xi, float))
    xi = jnp.asarray(xi, odds.dtype)
    out = jnp.where(odds > 0, odds * jnp.exp(xi), 0.0)
    return v.valid_or_nan((odds >= 0) & (xi >= 0), out)


def posterior_probability_bound(prior: ArrayLike, xi: ArrayLike) -> Array:
    """Largest posterior probability of a segment: p e^xi / (p e^xi + 1 - p).

    Args:
      prior: P(s) before the visit, in [0, 1].
      xi: the visitor budget, in [0, inf].

    Example:
      >>> float(posterior_probability_bound(0.5, 0.0))  # xi = 0: nothing learned
      0.5
    """
    v.check_range("prior", prior, 0.0, 1.0)
    v.check_range("xi", xi, 0.0, jnp.inf)
    p = jnp.asarray(prior, jnp.result_type(prior, xi, float))
    xi = jnp.asarray(xi, p.dtype)
    # p e^xi / (p e^xi + 1 - p) = 1 / (1 + (1 - p) / p e^-xi)
    out = jnp.where(p > 0, 1.0 / (1.0 + (1.0 - p) / jnp.where(p > 0, p, 1.0) * jnp.exp(-xi)), 0.0)
    return v.valid_or_nan((p >= 0) & (p <= 1) & (xi >= 0), out)


def mechanism_epsilon(explore_prob: ArrayLike, weights: ArrayLike) -> Array:
    """Exact privacy of "greedy with prob. 1 - eps + eps w_g, else arm j w.p. eps w_j".

    The worst case over arms j and pairs of greedy arms is
    max_j log((1 - eps + eps w_j) / (eps w_j)) (greedy = j versus greedy != j); arms with
    w_j = 0 give inf unless eps = 1.

    Args:
      explore_prob: eps in [0, 1].
      weights: exploration weights, non-negative, summing to 1 on the last axis.

    Example:
      >>> import math
      >>> eps = 3 / (3 + math.e - 1)  # K-RR with xi = 1, K = 3
      >>> round(float(mechanism_epsilon(eps, [1 / 3, 1 / 3, 1 / 3])), 4)
      1.0
    """
    v.check_range("explore_prob", explore_prob, 0.0, 1.0)
    v.check_sums_to_one("weights", weights)
    eps = jnp.asarray(explore_prob, jnp.result_type(explore_prob, float))[..., None]
    w = jnp.asarray(weights, eps.dtype)
    ratio = jnp.log1p((1.0 - eps) / (eps * w))
    return jnp.max(jnp.where(eps >= 1, 0.0, ratio), axis=-1)


def empirical_epsilon(shows_a: ArrayLike, shows_b: ArrayLike) -> Array:
    """max_j |log(p_a(j) / p_b(j))| from show counts of the same arms in two conditions.

    ``shows_a`` and ``shows_b`` count how often each arm was shown (last axis) to visitors of
    two segments (or under two greedy arms); frequencies are used as plug-in probabilities
    (an arm never shown in one condition but shown in the other gives inf).

    Args:
      shows_a, shows_b: non-negative counts with the same shape.

    Example:
      >>> round(float(empirical_epsilon([20, 10], [10, 20])), 4)  # log 2
      0.6931
    """
    v.check_range("shows_a", shows_a, 0.0, jnp.inf, high_open=True)
    v.check_range("shows_b", shows_b, 0.0, jnp.inf, high_open=True)
    a = jnp.asarray(shows_a, jnp.result_type(float))
    b = jnp.asarray(shows_b, a.dtype)
    pa = a / jnp.sum(a, axis=-1, keepdims=True)
    pb = b / jnp.sum(b, axis=-1, keepdims=True)
    return jnp.max(jnp.abs(jnp.log(pa) - jnp.log(pb)), axis=-1)


__all__ = [
    "empirical_epsilon",
    "mechanism_epsilon",
    "posterior_odds_bound",
    "posterior_probability_bound",
]
