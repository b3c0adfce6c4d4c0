"""Zero-concentrated DP and the discrete Gaussian mechanism's privacy profile.

* rho-zCDP (Bun & Steinke 2016): Renyi divergence D_alpha <= alpha rho for every alpha > 1.
  mu-GDP implies (mu^2 / 2)-zCDP; the discrete Gaussian with integer l2 shift D and scale s
  (in grid units) is (D^2 / (2 s^2))-zCDP in any dimension (Canonne, Kamath & Steinke 2020,
  Thm 14); rho adds under composition.
* Conversion to (eps, delta) (CKS 2020, Cor. 13): rho-zCDP implies (eps, delta)-DP with

      delta(eps) = inf_{alpha > 1} exp((alpha - 1)(alpha rho - eps)) / alpha * (1 - 1/alpha)^(alpha - 1),

  and, inverting each alpha's term (each is decreasing in eps),

      eps(delta) = inf_{alpha > 1} alpha rho + log(1 - 1/alpha) + (log(1/delta) - log alpha) / (alpha - 1).

  Both infima are taken over 1024 orders, alpha - 1 log-spaced in [1e-6, 1e8], refined by 65
  orders between the neighbours of the best one: a minimum over a subset of the orders, so
  both are valid upper bounds (within about 1e-6 relative of the infimum). Everything is in log space (delta = 1e-300 works in
  float32 as log delta = -690.8).
* The scalar discrete Gaussian's exact profile (CKS 2020, Thm 7): with P = N_Z(0, s^2) and
  privacy loss L(y) = (D^2 - 2 y D) / (2 s^2),
  delta(eps) = sum_y P(y) max(0, 1 - e^(eps - L(y))). It is summed over the window
  |y| <= 4096 (12 s + D <= 4096), plus a bound on the terms beyond it: each is at most P(y),
  and P(Y < -W) <= s sqrt(2 pi) Phi(-W / s) / Z_W (Z_W the window's normaliser, no larger than
  the full one) — so the result is an upper bound (the window alone could fall below the true
  delta for deltas under about 1e-30). The profile reported is the minimum of that and the zCDP
  bound (both valid).

Conventions: rho = 0 gives delta = 0 (eps = 0); rho = inf gives delta = 1 (eps = inf); a
discrete Gaussian with s = 0 and D > 0 (no noise) has rho = inf, and D = 0 has rho = 0.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax._special import log_ndtr
from ldpjax.accounting.gdp import _float, log_probability, round_up_tiny
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike

#: Half-width of the summation window of the scalar discrete Gaussian's exact profile.
DELTA_WINDOW = 4096
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


_COARSE = 1024
_FINE = 65


def _order_terms(am1: Array) -> tuple[Array, Array]:
    """(log alpha, log(1 - 1/alpha)) of orders alpha = 1 + am1."""
    log_alpha = jnp.log1p(am1)
    return log_alpha, jnp.log(am1) - log_alpha


def _min_over_orders(term, rho: Array, other: Array) -> Array:
    """min over orders of ``term(alpha - 1, log alpha, log(1 - 1/alpha), rho, other)``.

    Two stages, both minima over a fixed subset of the orders (so an upper bound of the
    infimum): 1024 orders with log(alpha - 1) evenly spaced on [log 1e-6, log 1e8], then 65
    evenly spaced between the neighbours of the best one. Batch axes lead; orders last.
    """
    lo, hi = np.log(1e-6), np.log(1e8)
    t = jnp.linspace(lo, hi, _COARSE, dtype=rho.dtype)
    am1 = jnp.exp(t)
    coarse = term(am1, *_order_terms(am1), rho[..., None], other[..., None])
    best = jax.lax.stop_gradient(jnp.argmin(coarse, axis=-1))
    step = (hi - lo) / (_COARSE - 1)
    centre = lo + step * jnp.clip(best, 1, _COARSE - 2).astype(rho.dtype)
    fine_t = centre[..., None] + step * jnp.linspace(-1.0, 1.0, _FINE, dtype=rho.dtype)
    fine_am1 = jnp.exp(fine_t)
    fine = term(fine_am1, *_order_terms(fine_am1), rho[..., None], other[..., None])
    return jnp.minimum(jnp.min(coarse, axis=-1), jnp.min(fine, axis=-1))


def _log_delta_term(am1, log_alpha, log_frac, rho, eps):
    return am1 * ((1.0 + am1) * rho - eps) - log_alpha + am1 * log_frac


def _epsilon_term(am1, log_alpha, log_frac, rho, log_delta):
    return (1.0 + am1) * rho + log_frac - (log_delta + log_alpha) / am1


# --------------------------------------------------------------------------- zCDP -> (eps, delta)
def zcdp_log_delta_unchecked(rho: Array, eps: Array) -> Array:
    """log delta(eps) of rho-zCDP (CKS 2020, Cor. 13); NaN (also in the gradient) outside
    rho in [0, inf], eps in [0, inf]."""
    rho, eps = jnp.broadcast_arrays(*_float(rho, eps))
    valid = (rho >= 0) & (eps >= 0)
    finite = valid & (rho > 0) & (rho < jnp.inf) & (eps < jnp.inf)
    safe_rho = jnp.where(finite, rho, 1.0)
    safe_eps = jnp.where(finite, eps, 0.0)
    out = jnp.minimum(_min_over_orders(_log_delta_term, safe_rho, safe_eps), 0.0)
    out = jnp.where(finite, out, jnp.where((rho == 0) | (eps == jnp.inf), -jnp.inf, 0.0))
    return v.valid_or_nan(valid, out, rho, eps)


def zcdp_epsilon_unchecked(rho: Array, log_delta: Array) -> Array:
    """eps(delta) of rho-zCDP from log delta in [-inf, 0) (CKS 2020, Cor. 13, inverted per
    order); NaN (also in the gradient) outside the domain."""
    rho, log_delta = jnp.broadcast_arrays(*_float(rho, log_delta))
    valid = (rho >= 0) & (log_delta < 0)
    finite = valid & (rho > 0) & (rho < jnp.inf) & (log_delta > -jnp.inf)
    safe_rho = jnp.where(finite, rho, 1.0)
    safe_log = jnp.where(finite, log_delta, -1.0)
    out = jnp.maximum(_min_over_orders(_epsilon_term, safe_rho, safe_log), 0.0)
    out = jnp.where(finite, out, jnp.where(rho == 0, 0.0, jnp.inf))
    return v.valid_or_nan(valid, out, rho, log_delta)


def zcdp_delta(rho: ArrayLike, eps: ArrayLike) -> Array:
    """delta(eps) implied by rho-zCDP (Canonne, Kamath & Steinke 2020, Cor. 13).

    Args:
      rho: zCDP parameter, in [0, inf]; rho = 0 gives 0, rho = inf gives 1.
      eps: in [0, inf].

    Example:
      >>> round(float(zcdp_delta(0.5, 2.0)), 4)  # 1-GDP has rho = 0.5; gdp_delta(1, 2) = 0.0209
      0.0543
    """
    v.check_range("rho", rho, 0.0, jnp.inf)
    v.check_range("eps", eps, 0.0, jnp.inf)
    rho, eps = _float(rho, eps)
    return jnp.exp(_zcdp_log_delta_jit(round_up_tiny(rho, rho.dtype), eps))


def zcdp_epsilon(rho: ArrayLike, delta: ArrayLike) -> Array:
    """Smallest eps of the (eps, delta) guarantee implied by rho-zCDP (CKS 2020, Cor. 13).

    Closed form per order (no root finding); a concrete delta is logged in float64, so
    delta = 1e-300 gives a finite eps in float32 too.

    Args:
      rho: zCDP parameter, in [0, inf].
      delta: in [0, 1); delta = 0 gives inf (0 when rho = 0).

    Example:
      >>> round(float(zcdp_epsilon(0.5, 1e-5)), 3)  # a 1-GDP mechanism's rho; gdp_epsilon: 4.377
      4.728
    """
    v.check_range("rho", rho, 0.0, jnp.inf)
    v.check_range("delta", delta, 0.0, 1.0, high_open=True)
    (rho,) = _float(rho, delta)[:1]
    rho = round_up_tiny(rho, rho.dtype)
    return _zcdp_epsilon_jit(rho, log_probability(delta, rho.dtype))


_zcdp_log_delta_jit = jax.jit(zcdp_log_delta_unchecked)
_zcdp_epsilon_jit = jax.jit(zcdp_epsilon_unchecked)


# --------------------------------------------------------------------------- discrete Gaussian
def discrete_gaussian_rho(sigma: Array, shift: Array) -> Array:
    """D^2 / (2 s^2), with s = 0 giving inf (D > 0) or 0 (D = 0). No validation."""
    sigma, shift = jnp.broadcast_arrays(*_float(sigma, shift))
    positive = sigma > 0
    rho = shift * shift / (2.0 * jnp.square(jnp.where(positive, sigma, 1.0)))
    no_noise = jnp.where(shift > 0, jnp.inf, 0.0)
    return jnp.where(positive, rho, jnp.where(sigma == 0, no_noise, jnp.nan))


def in_window(sigma: Array, shift: Array) -> Array:
    """Whether the exact scalar profile applies: s > 0 and 12 s + D <= DELTA_WINDOW."""
    return (sigma > 0) & (12.0 * sigma + shift <= DELTA_WINDOW)


def _window_log_delta(sigma: Array, shift: Array, eps: Array) -> Array:
    """log of the window sum plus the tail bound (for s > 0 in the window; any eps >= 0)."""
    grid = jnp.arange(-DELTA_WINDOW, DELTA_WINDOW + 1, dtype=sigma.dtype)
    s, d, e = sigma[..., None], shift[..., None], eps[..., None]
    log_w = -0.5 * jnp.square(grid / s)
    log_z = jax.nn.logsumexp(log_w, axis=-1, keepdims=True)
    loss = (d * d - 2.0 * grid * d) / (2.0 * s * s)
    contrib = loss > e
    gap = jnp.where(contrib, e - loss, -1.0)  # double where: no NaN gradients from log(0)
    terms = jnp.where(contrib, log_w - log_z + jnp.log(-jnp.expm1(gap)), -jnp.inf)
    top = jax.lax.stop_gradient(jnp.max(terms, axis=-1, keepdims=True))
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    total = jnp.sum(jnp.where(contrib, jnp.exp(terms - top), 0.0), axis=-1)
    some = total > 0
    log_window = jnp.where(some, jnp.log(jnp.where(some, total, 1.0)) + top[..., 0], -jnp.inf)
    # P(Y < -W) <= s sqrt(2 pi) Phi(-W/s) / Z_W bounds every term beyond the window
    log_tail = jnp.log(sigma) + _LOG_SQRT_2PI + log_ndtr(-DELTA_WINDOW / sigma) - log_z[..., 0]
    out = jnp.logaddexp(log_window, log_tail)
    return jnp.where(eps == jnp.inf, -jnp.inf, out)


def discrete_gaussian_log_delta(sigma: Array, shift: Array, eps: Array, dim: int = 1) -> Array:
    """log delta(eps) of the discrete Gaussian mechanism (no concrete checks).

    ``dim = 1`` in the window: min(exact profile with tail bound, zCDP bound); otherwise the
    zCDP bound with rho = D^2 / (2 s^2). NaN (also in the gradient) for s < 0, s = inf, a
    negative or non-integer D, eps < 0.
    """
    sigma, shift, eps = jnp.broadcast_arrays(*_float(sigma, shift, eps))
    valid = _dg_valid(sigma, shift) & (eps >= 0)
    rho = discrete_gaussian_rho(jnp.where(valid, sigma, 1.0), jnp.where(valid, shift, 1.0))
    bound = zcdp_log_delta_unchecked(rho, jnp.where(valid, eps, 0.0))
    if dim == 1:
        exact_ok = valid & in_window(sigma, shift)
        safe_sigma = jnp.where(exact_ok, sigma, 1.0)
        safe_shift = jnp.where(exact_ok, shift, 1.0)
        exact = _window_log_delta(safe_sigma, safe_shift, jnp.where(valid, eps, 0.0))
        bound = jnp.where(exact_ok, jnp.minimum(exact, bound), bound)
    return v.valid_or_nan(valid, bound, sigma, shift, eps)


def _dg_valid(sigma: Array, shift: Array) -> Array:
    return (
        (sigma >= 0) & (sigma < jnp.inf) & (shift >= 0) & (shift < jnp.inf)
        & (shift == jnp.round(shift))
    )


def _window_residual(eps: Array, sigma: Array, shift: Array, log_target: Array) -> Array:
    return _window_log_delta(sigma, shift, eps) - log_target


def discrete_gaussian_epsilon(sigma: Array, shift: Array, log_delta: Array, dim: int = 1) -> Array:
    """eps(delta) of the discrete Gaussian mechanism from log delta (no concrete checks).

    The profile is min(exact, zCDP), so eps = min(eps_exact, eps_zCDP): eps_zCDP in closed form,
    eps_exact (scalar, in the window) as the root of the exact log profile on
    [0, 1.001 eps_zCDP + 0.001] — beyond that bracket the zCDP epsilon is the smaller one.
    Implicit gradients.
    """
    sigma, shift, log_delta = jnp.broadcast_arrays(*_float(sigma, shift, log_delta))
    valid = _dg_valid(sigma, shift) & (log_delta < 0)
    rho = discrete_gaussian_rho(jnp.where(valid, sigma, 1.0), jnp.where(valid, shift, 1.0))
    bound = zcdp_epsilon_unchecked(rho, jnp.where(valid, log_delta, -1.0))
    if dim == 1:
        solve = valid & in_window(sigma, shift) & jnp.isfinite(bound) & (bound > 0)
        s = jnp.where(solve, sigma, 1.0)
        d = jnp.where(solve, shift, 1.0)
        target = jnp.where(solve, log_delta, -1.0)
        hi = jnp.where(solve, 1.001 * bound + 1e-3, 1.0)
        lo = jnp.zeros_like(hi)
        root = bracketed_root(_window_residual, lo, hi, s, d, target, num_iters=80)
        at_zero = _window_residual(lo, s, d, target) <= 0
        at_hi = _window_residual(hi, s, d, target) <= 0
        exact = jnp.where(at_zero, 0.0, jnp.where(at_hi, root, bound))
        bound = jnp.where(solve, jnp.minimum(exact, bound), bound)
    return v.valid_or_nan(valid, bound, sigma, shift, log_delta)


discrete_gaussian_log_delta_jit = jax.jit(discrete_gaussian_log_delta, static_argnums=3)
discrete_gaussian_epsilon_jit = jax.jit(discrete_gaussian_epsilon, static_argnums=3)


__all__ = [
    "DELTA_WINDOW",
    "discrete_gaussian_epsilon",
    "discrete_gaussian_log_delta",
    "discrete_gaussian_rho",
    "zcdp_delta",
    "zcdp_epsilon",
]
