"""Pure epsilon-DP mechanisms: binary and K-ary randomized response, and their curves.

* Binary randomized response with truthful rate r (report the true bit with probability r,
  otherwise a fair coin) is eps-LDP with eps = log((1 + r) / (1 - r)) (Warner 1965;
  the report of "Federated Learning of Quantile Inference under Local Differential Privacy",
  ICLR 2026, Sec. 2);
  inverse r = tanh(eps / 2).
* K-ary randomized response with parameter xi keeps the true category with probability
  e^xi / (K - 1 + e^xi) and shows each other one with probability 1 / (K - 1 + e^xi); it is
  xi-LDP. Read as epsilon-greedy exploration (Ponte & Ferecatu, "A Privacy Budgeting Framework
  for Online Experimentation", Sec. 3) the exploration probability is
  eps_explore = K / (K + e^xi - 1), inverse xi = log(1 - K + K / eps_explore) (rounded up).
  A channel given by its worst pair of probabilities (p, q) has delta(eps) = max(0,
  p - e^eps q) and eps(delta) = log((p - delta) / q) (:func:`krr_pair_delta_unchecked`).
* An eps-DP mechanism has tradeoff f(alpha) = max(0, 1 - e^eps alpha, e^-eps (1 - alpha))
  (Dong, Roth & Su 2019, Prop. 2.5 with delta = 0).
* Composition of budgets: parallel (each person's data used once) is the max, sequential (the
  same person in several analyses) is the sum.

Traced inputs: argument checks run on concrete values only; under ``jit`` out-of-domain entries
give NaN, in the gradient too. Booleans are refused (``r=True`` is not a rate).

Directed rounding. The randomized-response claims are upper bounds in floating point too:
eps0 = log1p(2 r / (1 - r)) (= 2 atanh r, accurate in relative terms from r = 1e-38 to
r = 1 - 2^-24) and the profile below are evaluated with a relative error of a few units in the
last place and then raised by :data:`RR_ROUND_UP` ulps, so they are never below the exact value
for the float r (checked against 50-digit mpmath over r in (0, 1), r = 1 - k ulp included).
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.accounting.gdp import _float as _f
from ldpjax.accounting.gdp import round_up_tiny
from ldpjax.types import Array, ArrayLike

#: Units of the dtype's epsilon by which the randomized-response claims are raised, relatively
#: (their float evaluation is within 2 of the exact value, measured against mpmath; the margin
#: keeps them above it).
RR_ROUND_UP = 8


def _up(x: Array, ulps: float = RR_ROUND_UP) -> Array:
    """x >= 0 raised by ``ulps`` units of its dtype's epsilon, relatively (inf stays inf)."""
    return x * (1.0 + ulps * float(jnp.finfo(x.dtype).eps))


def rr_epsilon_unchecked(r: Array, log_delta: Array) -> Array:
    """Smallest eps of binary RR at rate r that is (eps, delta)-DP, from log delta, rounded up.

    With p = (1 + r)/2 and q = (1 - r)/2: eps = log((p - delta)/q) = log1p(2 (r - delta) /
    (1 - r)) for r > delta, else 0; r = 1 gives inf. delta is rounded *down* first (exp of
    log delta lowered by its own rounding), so the result is an upper bound. No checks; NaN
    (also in the gradient) for r outside (0, 1] or log delta >= 0 or NaN.
    """
    r, log_delta = jnp.broadcast_arrays(*_f(r, log_delta))
    tol = float(jnp.finfo(r.dtype).eps)
    valid = (r > 0) & (r <= 1) & (log_delta < 0)
    below_one = valid & (r < 1)
    safe_r = jnp.where(below_one, r, 0.5)
    safe_log = jnp.where(valid, log_delta, -1.0)
    delta = jnp.exp(safe_log - 2.0 * tol * jnp.abs(safe_log)) * (1.0 - 4.0 * tol)  # rounded down
    room = below_one & (safe_r > delta)
    x = 2.0 * jnp.where(room, safe_r - delta, 0.5) / (1.0 - safe_r)
    out = jnp.where(room, _up(jnp.log1p(x)), 0.0)
    out = jnp.where(below_one, out, jnp.inf)
    return v.valid_or_nan(valid, out, r, log_delta)


def rr_delta_unchecked(r: Array, eps: Array) -> Array:
    """delta(eps) = max(0, p - e^eps q) of binary RR at rate r, rounded up.

    Computed as r - q expm1(eps) (p - q = r), with q expm1(eps) rounded down and the difference
    rounded up: an absolute error of a few ulps of r, never below the exact value; exactly 0 from
    eps >= :func:`rr_epsilon` (an upper bound of eps0) on; r = 1 gives 1. No checks; NaN (also in
    the gradient) for r outside (0, 1] or eps < 0.
    """
    r, eps = jnp.broadcast_arrays(*_f(r, eps))
    tol = float(jnp.finfo(r.dtype).eps)
    valid = (r > 0) & (r <= 1) & (eps >= 0)
    below_one = valid & (r < 1)
    safe_r = jnp.where(below_one, r, 0.5)
    eps0 = rr_epsilon_unchecked(safe_r, jnp.full_like(safe_r, -jnp.inf))
    inside = below_one & (eps < eps0)
    safe_eps = jnp.where(inside, eps, 0.0)
    shown = 0.5 * (1.0 - safe_r) * jnp.expm1(safe_eps) * (1.0 - 4.0 * tol)  # rounded down
    out = _up(jnp.maximum(safe_r - shown, 0.0), 1)
    out = jnp.where(inside, jnp.minimum(out, 1.0), 0.0)
    out = jnp.where(valid & (r == 1), 1.0, out)
    return v.valid_or_nan(valid, out, r, eps)


def rr_epsilon(r: ArrayLike) -> Array:
    """eps of binary randomized response with truthful rate r: log((1 + r) / (1 - r)).

    Evaluated as log1p(2 r / (1 - r)) (accurate in relative terms for tiny r, where
    log(1 + r) - log(1 - r) cancels) and rounded up by :data:`RR_ROUND_UP` ulps, so it is never
    below the exact value for the float r.

    Args:
      r: truthful-response rate, in (0, 1]; r = 1 (always truthful) gives eps = inf.

    Example:
      >>> round(float(rr_epsilon(0.5)), 4)  # log 3
      1.0986
      >>> float(rr_epsilon(1e-9)) >= 2e-9  # 2 atanh(1e-9)
      True
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    (r,) = _f(r)
    r = round_up_tiny(r, r.dtype)  # r = 1e-40 is valid: not a float32 0
    return rr_epsilon_unchecked(r, jnp.full_like(r, -jnp.inf))


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


#: Units of the dtype's epsilon by which the K-ary claims are raised (their float evaluation
#: is within 4 of the exact value; checked against mpmath in tests/mechanisms/test_kary_*.py).
KRR_ROUND_UP = 8


def krr_budget(explore_prob: ArrayLike, k: ArrayLike) -> Array:
    """Budget xi = log(1 - K + K / p) of epsilon-greedy with exploration probability p.

    The inverse of :func:`krr_explore_prob`, computed as log1p(K (1 - p) / p) and raised by
    :data:`KRR_ROUND_UP` units of the dtype's epsilon: the claim of K-RR at the float p
    (:func:`ldpjax.mechanisms.kary_randomized_response_explore`), never below its realised
    epsilon log((2^32 - (K - 1) Q) / Q), Q = ceil(p 2^32 / K), nor the exact value for p.

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
    up = 1.0 + KRR_ROUND_UP * float(jnp.finfo(safe.dtype).eps)
    out = jnp.where(positive, jnp.log1p(k * (1.0 - safe) / safe) * up, jnp.inf)
    return v.valid_or_nan((p >= 0) & (p <= 1) & (k >= 2), out, p, k)


def krr_pair_epsilon_unchecked(p: Array, q: Array, log_delta: Array) -> Array:
    """Smallest eps with max(0, p - e^eps q) <= delta, from log delta, rounded up.

    The profile of a randomized-response channel given by its worst pair of probabilities
    (:class:`~ldpjax.accounting.events.WeightedRandomizedResponseEvent`): eps = log((p - delta)
    / q) = log1p((p - delta - q) / q) where p - delta > q, else 0; q = 0 gives inf. delta is
    lowered and the result raised by their rounding bounds, so it is never below the exact
    value for the floats p, q. No checks; NaN (also in the gradient) outside
    0 <= q <= p <= 1, p > 0, log delta < 0.

    Example:
      >>> import jax.numpy as jnp
      >>> round(float(krr_pair_epsilon_unchecked(jnp.float32(0.75), 0.25, -jnp.inf)), 4)  # log 3
      1.0986
    """
    p, q, log_delta = jnp.broadcast_arrays(*_f(p, q, log_delta))
    tol = float(jnp.finfo(p.dtype).eps)
    valid = (p > 0) & (p <= 1) & (q >= 0) & (q <= p) & (log_delta < 0)
    safe_q = jnp.where(valid & (q > 0), q, 1.0)
    safe_log = jnp.where(valid, log_delta, -1.0)
    delta = jnp.exp(safe_log - 2.0 * tol * jnp.abs(safe_log)) * (1.0 - 4.0 * tol)  # lowered
    x = (p - delta - q) / safe_q
    x = x + tol * (p / safe_q + jnp.abs(x))  # the rounding of p - delta - q and of the ratio
    out = jnp.log1p(jnp.maximum(x, 0.0)) * (1.0 + KRR_ROUND_UP * tol)
    out = jnp.where(q > 0, out, jnp.where(p > delta, jnp.inf, 0.0))
    return v.valid_or_nan(valid, out, p, q, log_delta)


def krr_pair_delta_unchecked(p: Array, q: Array, eps: Array) -> Array:
    """delta(eps) = max(0, p - e^eps q), rounded up (0 from the rounded-up eps0 on).

    Example:
      >>> import jax.numpy as jnp
      >>> d = float(krr_pair_delta_unchecked(jnp.float32(0.75), 0.25, 0.5))  # 0.75 - e^0.5 / 4
      >>> 0.3378 < d < 0.3379
      True
    """
    p, q, eps = jnp.broadcast_arrays(*_f(p, q, eps))
    tol = float(jnp.finfo(p.dtype).eps)
    valid = (p > 0) & (p <= 1) & (q >= 0) & (q <= p) & (eps >= 0)
    safe_eps = jnp.where(valid & (eps < jnp.inf), eps, 0.0)
    shown = jnp.where(q > 0, jnp.exp(safe_eps) * q, 0.0)
    d = p - shown
    d = d + tol * (2.0 * shown + jnp.abs(d))  # the rounding of exp, the product, the difference
    eps0 = krr_pair_epsilon_unchecked(p, q, jnp.full_like(p, -jnp.inf))
    out = jnp.where(eps >= eps0, 0.0, jnp.clip(d, 0.0, 1.0))
    out = jnp.where((eps == jnp.inf) & (q == 0), p, out)
    return v.valid_or_nan(valid, out, p, q, eps)


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

    Example: the experiment budget gamma = max_t xi_t of visitor-level budgets (Ponte &
    Ferecatu, "A Privacy Budgeting Framework for Online Experimentation", 2026).

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

    Example: the firm budget Gamma = sum_e gamma_e over experiments (Ponte & Ferecatu).

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
    "RR_ROUND_UP",
    "compose_parallel",
    "compose_sequential",
    "KRR_ROUND_UP",
    "krr_budget",
    "krr_explore_prob",
    "krr_pair_delta_unchecked",
    "krr_pair_epsilon_unchecked",
    "pure_dp_tradeoff",
    "rr_epsilon",
    "rr_rate",
]
