"""Gaussian differential privacy (Dong, Roth & Su 2019, "Gaussian Differential Privacy").

A mechanism is mu-GDP when telling neighbouring datasets apart is no easier than telling
N(0, 1) from N(mu, 1). Facts used here:

* tradeoff function  G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu)  (Dong et al., Def. 2.7);
* privacy profile    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
  (Dong et al., Cor. 2.13);
* Gaussian mechanism with l2 sensitivity D and noise sd s is (D / s)-GDP (Thm. 2.7);
* composition of mu_1..mu_k-GDP mechanisms is sqrt(sum mu_i^2)-GDP (Cor. 3.3).

Numerics. With a = -eps/mu + mu/2 and b = a - mu one has e^eps phi(b) = phi(a) exactly, hence

    delta = Phi(a) - e^eps Phi(b) = exp(-a^2/2) / 2 * [erfcx(-a/sqrt2) - erfcx(-b/sqrt2)],

which is evaluated in log space for a < 0 (no overflow for large eps, no underflow before the
final exponent) and directly for a >= 0 (where Phi(a) >= 1/2). ``gdp_log_delta`` exposes the log.
Derivatives are closed form: d delta / d mu = phi(a), d delta / d eps = -e^eps Phi(b).
``gdp_epsilon`` and ``gdp_mu`` invert delta by a safeguarded Newton method with gradients from
the implicit function theorem (``ldpjax.roots``).

Traced inputs. Argument checks (``ValueError``) run on concrete values only. Under ``jit`` the
functions return NaN for out-of-domain entries (mu <= 0, eps < 0, delta outside (0, 1), NaN).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import erf, ndtr, ndtri
from jax.scipy.special import erfcx as _jax_erfcx

from ldpjax import _validation as v
from ldpjax._special import log_ndtr
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike

_SQRT2 = math.sqrt(2.0)
_SQRT_PI = math.sqrt(math.pi)
_LOG_HALF = math.log(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _float(*xs: ArrayLike) -> tuple[Array, ...]:
    """Arrays of one common floating dtype (lists and tuples accepted)."""
    xs = tuple(np.asarray(x) if isinstance(x, (list, tuple)) else x for x in xs)
    dtype = jnp.result_type(*xs, float)
    return tuple(jnp.asarray(x, dtype) for x in xs)


def round_up_tiny(value: ArrayLike, dtype) -> Array:
    """``value`` in ``dtype``, a concrete positive entry below its normal range raised to it.

    A budget such as mu = 1e-40 is valid, but float32 (whose normal numbers end near 1.2e-38)
    holds it as a subnormal that XLA flushes to 0, an invalid budget. Raising it to the
    smallest normal number makes the claim one for a (negligibly) larger budget, which is
    conservative for every budget whose privacy loss grows with it (mu, r, xi, rho). Traced
    values are cast unchanged.
    """
    if not v.is_concrete(value):
        return jnp.asarray(value, dtype)
    arr = np.asarray(value, np.float64)
    tiny = float(jnp.finfo(dtype).tiny)
    arr = np.where((arr > 0) & (arr < tiny), tiny, arr)
    return jnp.asarray(arr, dtype)


def log_probability(p: ArrayLike, dtype) -> Array:
    """log p in ``dtype``; a concrete p is logged in float64 first.

    So a valid delta far below the dtype's range (1e-300 in float32, where it would round to 0)
    keeps its value as a logarithm (-690.8, representable in float32). Traced p: ``log(p)`` in
    its own dtype. p = 0 gives -inf; a negative or NaN p gives NaN.
    """
    if v.is_concrete(p):
        with np.errstate(divide="ignore", invalid="ignore"):
            return jnp.asarray(np.log(np.asarray(p, np.float64)), dtype)
    return jnp.log(jnp.asarray(p, dtype))


def erfcx(x: Array) -> Array:
    """exp(x^2) erfc(x), also where ``jax.scipy.special.erfcx`` has holes.

    JAX's erfcx returns 0 (or garbage) where erfc(x) underflows before the rescaling: in
    float32 for x in about [9.19, 9.42], in float64 near x = 26.5. Beyond x0 = 9 (float32) or
    25 (float64) this uses the asymptotic series
    erfcx(x) = 1 / (x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2 x^2)^k with 8 terms, whose
    truncation error (the 9th term: below 5e-12 at x = 9, 4e-19 at x = 25) is below the dtype's
    precision.
    """
    x = jnp.asarray(x)
    x0 = 25.0 if x.dtype == jnp.float64 else 9.0
    large = x >= x0
    safe = jnp.where(large, x, x0)
    z = 0.5 / (safe * safe)
    series = jnp.zeros_like(z)
    for coefficient in (-135135.0, 10395.0, -945.0, 105.0, -15.0, 3.0, -1.0, 1.0):
        series = series * z + coefficient
    asymptotic = series / (safe * _SQRT_PI)
    return jnp.where(large, asymptotic, _jax_erfcx(jnp.where(large, 0.0, x)))


# --------------------------------------------------------------------------- privacy profile
@jax.custom_jvp
def _log_delta_finite(mu: Array, eps: Array) -> Array:
    """log delta(eps) for finite mu > 0 and finite eps >= 0 (no validation)."""
    a = -eps / mu + 0.5 * mu
    nonneg = a >= 0
    # Branch a >= 0: Phi(a) >= 1/2, subtract directly.
    eps_pos = jnp.where(nonneg, eps, 0.0)
    a_pos = -eps_pos / mu + 0.5 * mu
    direct = jnp.log(ndtr(a_pos) - jnp.exp(eps_pos + log_ndtr(a_pos - mu)))
    # Branch a < 0: erfcx form, u = -a/sqrt2 > 0, v = u + mu/sqrt2.
    eps_neg = jnp.where(nonneg, mu * mu, eps)
    a_neg = -eps_neg / mu + 0.5 * mu
    u = -a_neg / _SQRT2
    w = u + mu / _SQRT2
    # Clamp: when erfcx(u) - erfcx(w) cancels to <= 0 (mu^2 / eps below machine precision)
    # the true delta has underflowed anyway; log(0) = -inf gives delta = 0, not NaN.
    scaled = _LOG_HALF - 0.5 * a_neg * a_neg + jnp.log(jnp.maximum(erfcx(u) - erfcx(w), 0.0))
    return jnp.where(nonneg, direct, scaled)


def _log_delta_partials(mu: Array, eps: Array, log_delta: Array) -> tuple[Array, Array]:
    """(d log delta / d mu, d log delta / d eps) from phi(a) and -e^eps Phi(b), in log space."""
    a = -eps / mu + 0.5 * mu
    log_gauss = -0.5 * a * a - log_delta
    d_mu = jnp.exp(log_gauss - _LOG_SQRT_2PI)
    d_eps = -jnp.exp(log_gauss + _LOG_HALF) * erfcx((eps / mu + 0.5 * mu) / _SQRT2)
    return d_mu, d_eps


@_log_delta_finite.defjvp
def _log_delta_finite_jvp(primals, tangents):
    mu, eps = primals
    mu_dot, eps_dot = tangents
    log_delta = _log_delta_finite(mu, eps)
    d_mu, d_eps = _log_delta_partials(mu, eps, log_delta)
    return log_delta, d_mu * mu_dot + d_eps * eps_dot


#: Bound on the relative error of ``erfcx``, ``ndtr`` and ``exp`` here, in eps: twice the
#: largest measured against mpmath (3.9 for erfcx over [0, 1e4], float32 and float64).
_FN_ULPS = 8.0


def _rounding(mu: Array, eps: Array, log_delta: Array) -> Array:
    """A bound on the error of the computed log delta (no gradient), in eps units of:

    * a >= 0 (log(Phi(a) - e^(eps + log Phi(b))), b = a - mu): each term's own error (the
      functions, the exponent eps + log Phi(b) and the rounding of b, about b^2), amplified by
      the subtraction, (first + second) / delta;
    * a < 0 (log(1/2) - a^2/2 + log(erfcx(u) - erfcx(w))): the rounding of a in a^2/2 (at most
      4 |log delta|, as |log delta| >= a^2/2), and the functions' errors amplified by
      (erfcx(u) + erfcx(w)) / their difference;

    plus the final logarithm's rounding. Where the subtraction cancels completely the bound
    is large, and :func:`_log_delta` keeps the upper bound delta <= Phi(a) instead."""
    d = float(jnp.finfo(mu.dtype).eps)
    a = -eps / mu + 0.5 * mu
    b = a - mu
    log_phi_b = log_ndtr(b)
    second = jnp.exp(jnp.minimum(eps + log_phi_b - log_delta, 80.0))
    direct = (1.0 + 2.0 * second) * (_FN_ULPS + 10.0 + 2.0 * jnp.abs(eps)
                                     + 10.0 * jnp.abs(log_phi_b) + 2.0 * b * b)
    u = -a / _SQRT2
    w = u + mu / _SQRT2
    eu, ew = erfcx(jnp.maximum(u, 0.0)), erfcx(jnp.maximum(w, 0.0))
    amp = (eu + ew) / jnp.maximum(eu - ew, jnp.finfo(mu.dtype).tiny)
    scaled = (_FN_ULPS + 4.0) * amp + 4.0 * jnp.abs(log_delta)
    err = d * (jnp.where(a >= 0, direct, scaled) + 4.0 * jnp.abs(log_delta) + 4.0)
    return jax.lax.stop_gradient(jnp.where(jnp.isnan(err), jnp.inf, err))


def _upper_bound(mu: Array, eps: Array) -> Array:
    """log Phi(a) (a = -eps/mu + mu/2) raised by its rounding: delta <= Phi(a) always."""
    d = float(jnp.finfo(mu.dtype).eps)
    log_phi_a = log_ndtr(-eps / mu + 0.5 * mu)
    finite = jnp.isfinite(log_phi_a)
    raised = log_phi_a + d * (16.0 * jnp.abs(jnp.where(finite, log_phi_a, 0.0)) + 16.0)
    return jax.lax.stop_gradient(jnp.where(finite, raised, log_phi_a))


def _log_delta(mu: Array, eps: Array) -> Array:
    """log delta(eps) on the whole closed domain, with inf handling and NaN outside it; a
    finite value is raised by a bound on its rounding (:func:`_rounding`), so that delta is
    never below the exact profile."""
    mu, eps = jnp.broadcast_arrays(mu, eps)
    finite = jnp.isfinite(mu) & jnp.isfinite(eps)
    safe_mu = jnp.where(finite, mu, 1.0)
    safe_eps = jnp.where(finite, eps, 1.0)
    core = _log_delta_finite(safe_mu, safe_eps)
    err = _rounding(safe_mu, safe_eps, core)
    raised = jnp.where(core == -jnp.inf, -jnp.inf, core + err)  # exactly 0 stays 0
    core = jnp.minimum(jnp.minimum(raised, _upper_bound(safe_mu, safe_eps)), 0.0)
    out = jnp.where(
        finite,
        core,
        jnp.where(jnp.isinf(eps), -jnp.inf, 0.0),  # eps = inf -> delta = 0; mu = inf -> 1
    )
    valid = (mu > 0) & (eps >= 0)
    return v.valid_or_nan(valid, out, mu, eps)


_log_delta_jit = jax.jit(_log_delta)


def gdp_log_delta(mu: ArrayLike, eps: ArrayLike) -> Array:
    """Natural log of :func:`gdp_delta`; accurate where delta underflows (large eps, small mu).

    Args:
      mu: GDP parameter, in (0, inf]. ``mu = inf`` (no privacy) gives log delta = 0.
      eps: epsilon, in [0, inf]. ``eps = inf`` gives -inf.

    Example:
      >>> round(float(gdp_log_delta(1.0, 1.0)), 4)  # log of gdp_delta(1, 1) = 0.1269
      -2.0641
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("eps", eps, 0.0, jnp.inf)
    mu, eps = _float(mu, eps)
    return _log_delta_jit(round_up_tiny(mu, mu.dtype), eps)


def gdp_delta(mu: ArrayLike, eps: ArrayLike) -> Array:
    """delta(eps) of a mu-GDP mechanism (Dong, Roth & Su 2019, Corollary 2.13).

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Args:
      mu: GDP parameter, in (0, inf]; ``mu = inf`` gives delta = 1 for every finite eps.
      eps: epsilon, in [0, inf]; ``eps = inf`` gives delta = 0.

    Returns:
      delta in [0, 1], broadcast over ``mu`` and ``eps``. Differentiable in both arguments
      (closed-form derivatives phi(a) and -e^eps Phi(b)).

    Example:
      >>> float(gdp_delta(1.0, 1.0))  # doctest: +ELLIPSIS
      0.1269...
    """
    return jnp.exp(gdp_log_delta(mu, eps))


# --------------------------------------------------------------------------- inversions
def _eps_residual(eps: Array, mu: Array, log_delta_target: Array) -> Array:
    return _log_delta_finite(mu, eps) - log_delta_target


def gdp_epsilon(mu: ArrayLike, delta: ArrayLike) -> Array:
    """Smallest eps >= 0 such that a mu-GDP mechanism is (eps, delta)-DP.

    Solves ``log gdp_delta(mu, eps) = log delta`` by a safeguarded Newton method over the bracket
    [0, mu (mu/2 + sqrt(-2 log delta))] (at the right end Phi(a) <= delta / 2, with
    a = -eps/mu + mu/2, so delta(eps) < delta). Working with log delta keeps every valid delta
    usable: a concrete delta = 1e-300 is logged in float64 before the cast, so float32 gives
    a finite eps too. The gradient is exact, by the implicit function theorem:
    d eps / d mu = phi(a) / (e^eps Phi(b)), d eps / d delta = -1 / (e^eps Phi(b)).

    Args:
      mu: GDP parameter, in (0, inf]; ``mu = inf`` gives eps = inf; mu -> 0 gives eps -> 0
        (a concrete mu below the dtype's normal range counts as its smallest normal number).
      delta: in (0, 1). When delta >= delta(0) = 2 Phi(mu/2) - 1 the answer is eps = 0.

    Example:
      >>> round(float(gdp_epsilon(1.0, 1e-5)), 4)
      4.3772
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    dtype = jnp.result_type(*_float(mu, delta))
    mu = round_up_tiny(mu, dtype)
    log_delta = log_probability(delta, dtype)
    eps = epsilon_at_log_delta(mu, log_delta)
    return v.valid_or_nan(log_delta > -jnp.inf, eps, mu, delta)  # delta = 0: not in (0, 1)


@jax.jit
def epsilon_at_log_delta(mu: Array, log_delta: Array) -> Array:
    """eps(delta) of mu-GDP from L = log delta in [-inf, 0) (no concrete checks).

    L = -inf (delta = 0) gives eps = inf; NaN (value and gradient) outside the domain.
    """
    mu, log_delta = jnp.broadcast_arrays(*_float(mu, log_delta))
    valid = (mu > 0) & (log_delta < 0)
    finite = valid & jnp.isfinite(mu) & (log_delta > -jnp.inf)
    safe_mu = jnp.where(finite, mu, 1.0)
    safe_log = jnp.where(finite, log_delta, -1.0)
    # delta(0) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)); eps = 0 when delta >= delta(0)
    zero = safe_log >= jnp.log(erf(safe_mu / (2.0 * _SQRT2)))
    hi = safe_mu * (0.5 * safe_mu + jnp.sqrt(-2.0 * safe_log))
    root = bracketed_root(_eps_residual, jnp.zeros_like(hi), hi, safe_mu, safe_log, num_iters=64)
    eps = jnp.where(zero, 0.0, root)
    eps = jnp.where(finite, eps, jnp.inf)  # mu = inf or delta = 0
    return v.valid_or_nan(valid, eps, mu, log_delta)


def _mu_residual(log_mu: Array, eps: Array, log_delta_target: Array) -> Array:
    return _log_delta_finite(jnp.exp(log_mu), eps) - log_delta_target


def gdp_mu(eps: ArrayLike, delta: ArrayLike) -> Array:
    """The mu whose GDP curve passes through (eps, delta): inverse of :func:`gdp_delta` in mu.

    Useful to calibrate a Gaussian mechanism to a target (eps, delta). Solved in log mu over
    [1e-8, 1e4] (delta is increasing in mu) with implicit gradients.

    Args:
      eps: in [0, 1e3].
      delta: in (0, 1).

    Example:
      >>> round(float(gdp_mu(4.3772, 1e-5)), 3)  # inverts gdp_epsilon(1.0, 1e-5)
      1.0
    """
    v.check_range("eps", eps, 0.0, 1e3)
    v.check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    (eps,) = _float(eps, delta)[:1]
    return _gdp_mu(eps, log_probability(delta, eps.dtype))


@jax.jit
def _gdp_mu(eps: Array, log_delta: Array) -> Array:
    eps, log_delta = jnp.broadcast_arrays(eps, log_delta)
    valid = (eps >= 0) & (eps <= 1e3) & (log_delta < 0) & (log_delta > -jnp.inf)
    safe_eps = jnp.where(valid, eps, 1.0)
    safe_log = jnp.where(valid, log_delta, math.log(0.5))
    lo = jnp.full_like(safe_eps, math.log(1e-8))
    hi = jnp.full_like(safe_eps, math.log(1e4))
    log_mu = bracketed_root(_mu_residual, lo, hi, safe_eps, safe_log, num_iters=96)
    return v.valid_or_nan(valid, jnp.exp(log_mu), eps, log_delta)


# --------------------------------------------------------------------------- curves and algebra
def gdp_tradeoff(mu: ArrayLike, alpha: ArrayLike) -> Array:
    """Tradeoff function G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) (type II error at level alpha).

    Computed as Phi(-Phi^{-1}(alpha) - mu) to stay accurate for tiny alpha.

    Args:
      mu: in (0, inf]; ``mu = inf`` gives 0 for every alpha > 0.
      alpha: type I error, in [0, 1].

    Example:
      >>> round(float(gdp_tradeoff(1.0, 0.05)), 4)  # a 5%-level test of 1-GDP misses 74%
      0.7405
    """
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    v.check_range("alpha", alpha, 0.0, 1.0)
    mu, alpha = _float(mu, alpha)
    mu = round_up_tiny(mu, mu.dtype)
    valid = (mu > 0) & (alpha >= 0) & (alpha <= 1)
    out = ndtr(-ndtri(alpha) - mu)
    out = jnp.where(jnp.isinf(mu) & (alpha > 0), 0.0, out)
    return v.valid_or_nan(valid, out, mu, alpha)


def gdp_compose(mus: ArrayLike, axis: int = -1) -> Array:
    """Composition of GDP mechanisms: sqrt(sum_i mu_i^2)-GDP (Dong et al., Corollary 3.3).

    Args:
      mus: GDP parameters in [0, inf], reduced along ``axis`` (0 means a mechanism that
        reveals nothing, so it adds nothing).
      axis: the axis holding the composed mechanisms.

    Example:
      >>> import jax.numpy as jnp
      >>> round(float(gdp_compose(jnp.array([0.6, 0.8]))), 4)
      1.0
    """
    v.check_range("mus", mus, 0.0, jnp.inf)
    (mus,) = _float(mus)
    squares = jnp.sum(mus * mus, axis=axis)
    positive = squares > 0
    out = jnp.where(positive, jnp.sqrt(jnp.where(positive, squares, 1.0)), 0.0)
    return v.valid_or_nan(jnp.all(mus >= 0, axis=axis), out, jnp.sum(mus, axis=axis))


def gaussian_mu(sensitivity: ArrayLike, sigma: ArrayLike) -> Array:
    """GDP parameter of the Gaussian mechanism: mu = sensitivity / sigma (Dong et al., Thm 2.7).

    Args:
      sensitivity: l2 sensitivity, in [0, inf).
      sigma: noise standard deviation, in [0, inf); sigma = 0 means no noise (mu = inf).

    Example:
      >>> float(gaussian_mu(1.0, 2.0))  # sensitivity 1, noise sd 2
      0.5
    """
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, high_open=True)
    v.check_range("sigma", sigma, 0.0, jnp.inf, high_open=True)
    sensitivity, sigma = _float(sensitivity, sigma)
    valid = (sensitivity >= 0) & (sigma >= 0)
    out = jnp.where(sigma > 0, sensitivity / jnp.where(sigma > 0, sigma, 1.0), jnp.inf)
    out = jnp.where(sensitivity == 0, 0.0, out)
    return v.valid_or_nan(valid, out, sensitivity, sigma)


__all__ = [
    "gaussian_mu",
    "gdp_compose",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_log_delta",
    "gdp_mu",
    "gdp_tradeoff",
]
