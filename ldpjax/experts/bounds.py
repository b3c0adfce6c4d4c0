"""Theorem 1's leader-change bound, ComputeDelay and the regret bounds of "Prediction with
Expert Advice under Local Differential Privacy" (ICLR 2026).

All functions here are pure JAX and vectorised (arguments broadcast against each other).

* :func:`leader_change_bound` (Theorem 1): started from a point whose top-two gap is
  k, a Gaussian random walk with N(0, eta^2 I_n) steps changes its leader (argmax) within B
  steps with probability at most

      p(k, B) = 2 Phi(-sqrt2 beta) + 2 sqrt(pi) phi(-beta) (Phi(beta) - Phi(-beta)),
      beta = k / (eta sqrt(2B)) - sqrt(log(2n - 2)).

  p is a decreasing function of beta (dp/dbeta = -2 sqrt(pi) beta phi(beta) erf(beta/sqrt2)
  <= 0: the derivatives of the two terms cancel except for this one), equal to 1 at beta = 0
  and tending to 2 as beta -> -inf, so it increases with B. Values above 1 are returned as
  they are (the formula, not min(1, .)), so that ComputeDelay's inequality is the paper's.
* :func:`compute_delay` (Corollary 1, ComputeDelay): the largest integer batch B >= 1 with
  p(k, B) <= alpha sqrt(log n / (t + B)); B = 1 when even B = 1 fails. The left side increases
  with B and the right side decreases, so the set of admissible B is an interval [1, B*]: an
  exact bisection on the integers (``lax.while_loop``, at most 30 steps, started from a
  provable upper bracket; it runs inside ``jit``/``vmap``) finds B*. B is capped at :data:`MAX_DELAY` = 2^30 (int32-safe).
* :func:`regret_bound_ftpl`: RW-FTPL's expected regret bound (eta + 2/eta) sqrt(2 T log n)
  (Devroye et al. 2013; the paper's Sec. 3), eta = sqrt(n) / mu (sqrt 2 when mu = inf).
* :func:`regret_bound_adabatch` (Corollary 2): (1 + alpha/2) times the RW-FTPL bound.

Traced inputs: argument checks run on concrete values only; under ``jit`` out-of-domain
entries give NaN (``compute_delay`` then returns 1, the always-valid batch, since an integer
cannot hold NaN).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax.scipy.special import erf, ndtr, ndtri

from ldpjax import _validation as v
from ldpjax.experts.privacy import noise_scale
from ldpjax.types import Array, ArrayLike

MAX_DELAY = 2**30
_SQRT2 = math.sqrt(2.0)
_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _floats(*xs: ArrayLike) -> tuple[Array, ...]:
    xs = tuple(x if isinstance(x, jax.Array) else jnp.asarray(x) for x in xs)
    dtype = jnp.result_type(*xs, float)
    return tuple(jnp.asarray(x, dtype) for x in xs)


def _check_n(n: ArrayLike) -> None:
    v.check_integer("n", n, 2)


def _p_of_beta(beta: Array) -> Array:
    """p as a function of beta: 2 Phi(-sqrt2 beta) + 2 sqrt(pi) phi(beta) erf(beta / sqrt2)."""
    phi = jnp.exp(-0.5 * beta * beta - _LOG_SQRT_2PI)
    return 2.0 * ndtr(-_SQRT2 * beta) + 2.0 * _SQRT_PI * phi * erf(beta / _SQRT2)


def _beta(gap: Array, batch: Array, eta: Array, n: Array) -> Array:
    return gap / (eta * jnp.sqrt(2.0 * batch)) - jnp.sqrt(jnp.log(2.0 * n - 2.0))


def leader_change_bound(gap: ArrayLike, batch: ArrayLike, eta: ArrayLike, n: ArrayLike) -> Array:
    """Theorem 1's bound p(k, B) on the probability that the leader changes within B steps.

    Args:
      gap: k, the top-two gap of the current noisy cumulative gain vector, in [0, inf].
      batch: B, the number of random-walk steps, in (0, inf) (real values allowed: the bound
        is a smooth function of B).
      eta: the walk's per-step noise standard deviation, in (0, inf).
      n: number of experts, an integer >= 2.

    Returns:
      p(k, B) = 2 Phi(-sqrt2 beta) + 2 sqrt(pi) phi(-beta) (Phi(beta) - Phi(-beta)) with
      beta = k / (eta sqrt(2B)) - sqrt(log(2n - 2)); in (0, 2) (a probability bound only
      where it is below 1). Differentiable in every argument.

    Example:
      >>> round(float(leader_change_bound(8.0, 4.0, 1.0, 10)), 4)
      0.6649
    """
    v.check_range("gap", gap, 0.0, jnp.inf)
    v.check_range("batch", batch, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_range("eta", eta, 0.0, jnp.inf, low_open=True, high_open=True)
    _check_n(n)
    return _leader_change_bound(*_floats(gap, batch, eta, n))


@jax.jit
def _leader_change_bound(gap, batch, eta, n):
    valid = (gap >= 0) & (batch > 0) & jnp.isfinite(batch) & (eta > 0) & jnp.isfinite(eta)
    valid = valid & (n >= 2)
    safe_gap = jnp.where(jnp.isfinite(gap), gap, 0.0)
    beta = _beta(
        safe_gap, jnp.where(valid, batch, 1.0), jnp.where(valid, eta, 1.0), jnp.where(valid, n, 2.0)
    )
    out = jnp.where(jnp.isinf(gap), 0.0, _p_of_beta(beta))
    return v.valid_or_nan(valid, out)


def compute_delay(
    gap: ArrayLike, t: ArrayLike, eta: ArrayLike, n: ArrayLike, alpha: ArrayLike
) -> Array:
    """ComputeDelay (Corollary 1): the batch length B_t of RW-AdaBatch.

    The largest integer B >= 1 with ``p(k, B) <= alpha sqrt(log n / (t + B))``, where p is
    :func:`leader_change_bound`; B = 1 when even B = 1 fails (then the algorithm is RW-FTPL
    for that round). Because p increases and the right side decreases in B, the admissible B
    form an interval [1, B*], and an exact integer bisection (``lax.while_loop``, at most
    30 steps, from a provable upper bracket) returns B* itself: ``B`` satisfies the inequality and ``B + 1`` does
    not (up to the floating-point evaluation of p). Capped at ``MAX_DELAY`` = 2^30.

    Args:
      gap: k, the top-two gap of the noisy cumulative gains when the batch starts, in [0, inf]
        (``inf`` gives the cap).
      t: the 1-based round at which the batch starts, >= 1 (real values allowed).
      eta: per-round noise standard deviation, in (0, inf).
      n: number of experts, an integer >= 2.
      alpha: the utility/privacy knob, in (0, inf) (the paper uses 0.01).

    Returns:
      int32 array of batch lengths in [1, 2^30] (broadcast shape of the inputs). Not
      differentiable (integer valued). Out-of-domain traced entries give 1.

    Example:
      >>> int(compute_delay(0.0, 10, 1.0, 4, 0.01))  # tied leaders: a batch of one round
      1
    """
    v.check_range("gap", gap, 0.0, jnp.inf)
    v.check_range("t", t, 1.0, jnp.inf, high_open=True)
    v.check_range("eta", eta, 0.0, jnp.inf, low_open=True, high_open=True)
    _check_n(n)
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)
    return _compute_delay_checked(*_floats(gap, t, eta, n, alpha))


@jax.jit
def _compute_delay_checked(gap, t, eta, n, alpha):
    gap, t, eta, n, alpha = jnp.broadcast_arrays(gap, t, eta, n, alpha)
    valid = (gap >= 0) & (t >= 1) & jnp.isfinite(t) & (eta > 0) & jnp.isfinite(eta)
    valid = valid & (n >= 2) & (alpha > 0) & jnp.isfinite(alpha)
    # Neutral values where invalid; the result there is forced to 1.
    gap = jnp.where(valid, gap, 0.0)
    t = jnp.where(valid, t, 1.0)
    eta = jnp.where(valid, eta, 1.0)
    n = jnp.where(valid, n, 2.0)
    alpha = jnp.where(valid, alpha, 1.0)
    return _compute_delay(gap, t, eta, n, alpha, valid)


def _delay_upper_bracket(scaled_gap, offset, t, log_n, alpha):
    """An integer that is provably not admissible (so bisection can start below it).

    Any admissible B has p(beta) <= alpha sqrt(log n / (t + B)) < r0 = alpha sqrt(log n / t).
    If r0 <= 1 this needs beta > 0 (p >= 1 for beta <= 0) and, as p > 2 Phi(-sqrt2 beta) for
    beta > 0, beta > beta_lb = -Phi^{-1}(r0 / 2) / sqrt2; with beta = scaled_gap / sqrt(B) - offset
    that means B < (scaled_gap / (beta_lb + offset))^2. A relative margin of 1e-4 plus 2 covers
    floating-point rounding. Otherwise (r0 > 1) the cap 2^30 + 1.
    """
    r0 = alpha * jnp.sqrt(log_n / t)
    informative = r0 <= 1.0
    beta_lb = -ndtri(0.5 * jnp.where(informative, r0, 0.5)) / _SQRT2
    bound = (scaled_gap / (beta_lb + offset)) ** 2 * 1.0001 + 2.0
    usable = informative & jnp.isfinite(bound) & (bound < MAX_DELAY)
    safe = jnp.where(usable, jnp.maximum(jnp.floor(bound), 2.0), 2.0).astype(jnp.int32)
    return jnp.where(usable, safe, jnp.int32(MAX_DELAY + 1))  # 2^30 + 1 in int32, exactly


def _compute_delay(gap, t, eta, n, alpha, valid):
    """Integer bisection with the invariant: ``lo`` is admissible (or 1) and ``hi`` is not.

    ``hi`` starts at :func:`_delay_upper_bracket` (usually about twice the answer), and a
    ``lax.while_loop`` stops as soon as every bracket has width 1, so small batches cost a few
    steps instead of 30 (at most 30: the bracket [1, 2^30 + 1] halves each step).
    """
    dtype = gap.dtype
    scaled_gap = gap / (eta * _SQRT2)  # beta = scaled_gap / sqrt(B) - offset
    offset = jnp.sqrt(jnp.log(2.0 * n - 2.0))
    log_n = jnp.log(n)
    lo = jnp.ones(gap.shape, jnp.int32)
    hi = _delay_upper_bracket(scaled_gap, offset, t, log_n, alpha)

    def body(bracket):
        lo, hi = bracket
        mid = lo + (hi - lo) // 2  # lo <= mid < hi, so B = 2^30 + 1 is never tested
        batch = mid.astype(dtype)
        beta = scaled_gap * jax.lax.rsqrt(batch) - offset
        ok = _p_of_beta(beta) <= alpha * jnp.sqrt(log_n / (t + batch))
        return jnp.where(ok, mid, lo), jnp.where(ok, hi, mid)

    lo, _ = jax.lax.while_loop(lambda b: jnp.any(b[1] - b[0] > 1), body, (lo, hi))
    return jnp.where(valid, lo, 1)


def regret_bound_ftpl(
    mu: ArrayLike, T: ArrayLike, n: ArrayLike, sensitivity: ArrayLike | None = None
) -> Array:
    """RW-FTPL's expected-regret bound (eta + 2/eta) sqrt(2 T log n), eta = sensitivity / mu.

    Args:
      mu: per-round GDP parameter, in (0, inf]; ``inf`` uses eta = sqrt 2 (the bound is then
        4 sqrt(T log n)).
      T: horizon, in [1, inf) (real values allowed).
      n: number of experts, an integer >= 2.
      sensitivity: l2 sensitivity of one gain vector (default sqrt(n)).

    Returns:
      The bound; differentiable in mu, T (and n, sensitivity). Example:

      >>> round(float(regret_bound_ftpl(1.0, 100, 2)), 2)  # eta = sqrt2: 2 sqrt2 sqrt(200 log 2)
      33.3
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("T", T, 1.0, jnp.inf, high_open=True)
    _check_n(n)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    mu, T, n = _floats(mu, T, n)
    scale = jnp.sqrt(n) if sensitivity is None else jnp.asarray(sensitivity, mu.dtype)
    return _regret_bound_ftpl(mu, T, n, scale)


@jax.jit
def _regret_bound_ftpl(mu, T, n, sensitivity):
    eta = noise_scale(mu, n, sensitivity=sensitivity)
    valid = (T >= 1) & jnp.isfinite(T) & (n >= 2)
    bound = (eta + 2.0 / eta) * jnp.sqrt(2.0 * T * jnp.log(jnp.where(valid, n, 2.0)))
    return v.valid_or_nan(valid, bound)


def regret_bound_adabatch(
    mu: ArrayLike,
    T: ArrayLike,
    n: ArrayLike,
    alpha: ArrayLike,
    sensitivity: ArrayLike | None = None,
) -> Array:
    """RW-AdaBatch's expected-regret bound (Corollary 2).

    (1 + alpha/2) (eta + 2/eta) sqrt(2 T log n), i.e. ``(1 + alpha/2) *
    regret_bound_ftpl(mu, T, n)``.

    Args:
      mu, T, n, sensitivity: as in :func:`regret_bound_ftpl`.
      alpha: ComputeDelay's knob, in (0, inf).

    Example:
      >>> bool(regret_bound_adabatch(1.0, 100, 4, 0.01) > regret_bound_ftpl(1.0, 100, 4))
      True
    """
    v.check_range("alpha", alpha, 0.0, jnp.inf, low_open=True, high_open=True)
    base = regret_bound_ftpl(mu, T, n, sensitivity)
    (alpha,) = _floats(alpha)
    alpha = alpha.astype(jnp.result_type(alpha, base))
    return v.valid_or_nan((alpha > 0) & jnp.isfinite(alpha), (1.0 + 0.5 * alpha) * base)


__all__ = [
    "MAX_DELAY",
    "compute_delay",
    "leader_change_bound",
    "regret_bound_adabatch",
    "regret_bound_ftpl",
]
