"""Exact discrete Gaussian noise on the integers (Canonne, Kamath & Steinke, NeurIPS 2020).

:func:`discrete_gaussian` draws Y with P[Y = y] proportional to exp(-y^2 / (2 s^2)), y in Z, by
the paper's rejection sampler (their Algorithms 1-3), vectorised for JAX:

1. discrete Laplace with integer scale t = floor(s) + 1 (Algorithm 2): U uniform on
   {0, ..., t - 1} accepted with probability exp(-U / t); V ~ Geometric with success
   probability 1 - e^-1 (the number of Bernoulli(e^-1) successes before the first failure);
   X = U + t V; a fair sign B, rejecting (B = 1, X = 0); Y = (1 - 2B) X;
2. accept Y with probability exp(-(|Y| - s^2 / t)^2 / (2 s^2)) (Algorithm 3).

Every candidate is an exact integer (int32 arithmetic). The acceptance probabilities are
computed in floating point (the paper uses rational arithmetic), and V is drawn by inverting
its CDF, floor(-log u); this changes the *law* by a relative amount of the order of the float
epsilon (about 1e-7 in float32), and never the support: every output is an integer, so a
release ``x + g * Y`` on the grid ``g Z`` carries nothing in its low-order bits. Rounds of
candidates run in a ``lax.while_loop`` until every entry is accepted (about two rounds per
entry on average), so the sampler is ``jit``/``vmap``-able. The loop is bounded: after
:data:`MAX_ROUNDS` rounds (each entry is accepted in a round with probability above 0.3, so an
entry is unfinished with probability below 0.7^MAX_ROUNDS < 1e-19) unfinished entries are
returned as :data:`DG_INVALID`, which every caller turns into a NaN release. No input can make
it loop forever; float16 / bfloat16 scales are refused.

:func:`discrete_gaussian_delta` is the exact privacy profile of the scalar mechanism with an
integer shift D (spec Sec. 3): delta(eps) = sum_y P[Y = y] max(0, 1 - e^(eps - L(y))), with
privacy loss L(y) = (D^2 - 2 y D) / (2 s^2), summed over a static window |y| <= 4096.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.types import Array, ArrayLike, PRNGKey

#: Largest noise scale (in grid units) the sampler accepts: keeps t V and the release exact in
#: int32 / float32 (2^24 / 40).
MAX_GRID_SIGMA = float(2**24 // 40)
#: Smallest positive noise scale (in grid units) the sampler accepts, 2^-60: s^2 stays a normal
#: float32 number, so the acceptance exponent (|y| - s^2/t)^2 / (2 s^2) is defined (at this
#: scale P[Y != 0] < e^(-2^119): the law is Y = 0, which is what the sampler returns).
MIN_GRID_SIGMA = 2.0**-60
#: Most rounds of candidates the sampler draws before it gives up (fail closed).
MAX_ROUNDS = 128
#: The sampler's "no valid draw" sentinel (invalid sigma, or out of rounds): the int32 minimum.
DG_INVALID = -(2**31)
#: Half-width of the summation window of :func:`discrete_gaussian_delta`.
DELTA_WINDOW = 4096


def _one_round(key: PRNGKey, s: Array, t: Array, shape) -> tuple[Array, Array]:
    """One candidate per entry: (candidate integer, accepted?)."""
    k_u, k_acc_u, k_v, k_sign, k_acc_g = jax.random.split(key, 5)
    dtype = s.dtype
    # Algorithm 2 (discrete Laplace with scale t): U uniform on {0..t-1}, accept w.p. e^{-U/t}.
    u_int = jax.random.randint(k_u, shape, 0, t, dtype=jnp.int32)
    accept_u = jax.random.uniform(k_acc_u, shape, dtype) < jnp.exp(-u_int.astype(dtype) / t)
    # V ~ number of Bernoulli(e^-1) successes before the first failure: P(V >= j) = e^-j.
    uniform_v = 1.0 - jax.random.uniform(k_v, shape, dtype)  # in (0, 1]
    geo = jnp.floor(-jnp.log(uniform_v))
    geo = jnp.minimum(geo, 64.0).astype(jnp.int32)
    x = u_int + t * geo
    negative = jax.random.bernoulli(k_sign, 0.5, shape)
    accept_sign = ~(negative & (x == 0))
    y = jnp.where(negative, -x, x)
    # Algorithm 3: accept with probability exp(-(|y| - s^2/t)^2 / (2 s^2)).
    excess = jnp.abs(y).astype(dtype) - s * s / t.astype(dtype)
    accept_g = jax.random.uniform(k_acc_g, shape, dtype) < jnp.exp(-excess * excess / (2 * s * s))
    return y, accept_u & accept_sign & accept_g


def discrete_gaussian(key: PRNGKey, sigma: ArrayLike, shape=(), dtype=None) -> Array:
    """Integers Y ~ N_Z(0, sigma^2), i.e. P[Y = y] proportional to exp(-y^2 / (2 sigma^2)).

    Args:
      key: PRNG key.
      sigma: scale s, 0 or in [MIN_GRID_SIGMA, MAX_GRID_SIGMA] (broadcast against ``shape``);
        s = 0 gives Y = 0.
      shape: output shape.
      dtype: float dtype of the acceptance computations (default: float of ``sigma``).

    Returns:
      int32 array of ``shape``. Under ``jit`` an invalid (NaN, negative or too large) sigma, and
      an entry not accepted within :data:`MAX_ROUNDS` rounds, give :data:`DG_INVALID`
      (-2^31): the caller must turn that release into NaN (as
      :func:`ldpjax.mechanisms.gaussian_mechanism` does).

    Example:
      >>> import jax
      >>> y = discrete_gaussian(jax.random.key(0), 2.0, (4,))
      >>> y.dtype, y.shape
      (dtype('int32'), (4,))
    """
    v.check_range("sigma", sigma, 0.0, MAX_GRID_SIGMA)
    v.check("sigma", sigma, lambda s: (s == 0) | (s >= MIN_GRID_SIGMA),
            f"0 or in [2^-60, {MAX_GRID_SIGMA:.0f}] (below 2^-60 the sampler's arithmetic underflows)")
    from ldpjax.mechanisms import _domain as dom

    dom.check_precision("sigma", sigma)
    shape = tuple(shape)
    dtype = dom.release_dtype(sigma) if dtype is None else dom.release_dtype(jnp.zeros((), dtype))
    s = jnp.broadcast_to(jnp.asarray(sigma, dtype), shape)
    valid = discrete_gaussian_valid(s)
    safe_s = jnp.where(valid & (s > 0), s, 1.0)
    t = (jnp.floor(safe_s) + 1.0).astype(jnp.int32)

    def cond(carry):
        _, done, i = carry
        return ~jnp.all(done) & (i < MAX_ROUNDS)

    def body(carry):
        out, done, i = carry
        y, ok = _one_round(jax.random.fold_in(key, i), safe_s, t, shape)
        take = ok & ~done
        return jnp.where(take, y, out), done | ok, i + 1

    init = (jnp.zeros(shape, jnp.int32), ~(valid & (s > 0)), jnp.asarray(0, jnp.int32))
    out, done, _ = jax.lax.while_loop(cond, body, init)
    out = jnp.where(valid & (s > 0), out, 0)
    return jnp.where(valid & done, out, DG_INVALID)


def discrete_gaussian_valid(sigma: ArrayLike) -> Array:
    """sigma = 0 or in [MIN_GRID_SIGMA, MAX_GRID_SIGMA] (NaN fails)."""
    s = jnp.asarray(sigma)
    return (s == 0) | ((s >= MIN_GRID_SIGMA) & (s <= MAX_GRID_SIGMA))


def discrete_gaussian_log_pmf(y: ArrayLike, sigma: ArrayLike) -> Array:
    """log P[Y = y] for Y ~ N_Z(0, sigma^2), normalised over the window |y| <= DELTA_WINDOW."""
    sigma = jnp.asarray(sigma, jnp.result_type(sigma, float))
    grid = jnp.arange(-DELTA_WINDOW, DELTA_WINDOW + 1, dtype=sigma.dtype)
    log_norm = jax.scipy.special.logsumexp(-0.5 * (grid / sigma[..., None]) ** 2, axis=-1)
    y = jnp.asarray(y, sigma.dtype)
    return -0.5 * (y / sigma) ** 2 - log_norm


def discrete_gaussian_delta(sigma: ArrayLike, shift: ArrayLike, eps: ArrayLike) -> Array:
    """Exact delta(eps) of the scalar discrete Gaussian mechanism with integer shift D.

    delta(eps) = sum_y P[Y = y] max(0, 1 - exp(eps - L(y))), L(y) = (D^2 - 2 y D) / (2 s^2):
    the hockey-stick divergence between N_Z(0, s^2) and N_Z(D, s^2) (CKS 2020, Thm 7).
    Differentiable in ``sigma`` and ``eps``. Requires 12 s + D <= 4096 (a static window);
    outside it (or for invalid arguments) the result is NaN under ``jit`` and a ``ValueError``
    for concrete values.

    Args:
      sigma: s > 0 (grid units).
      shift: D, the sensitivity in grid units, an integer >= 0.
      eps: in [0, inf).

    Example:
      >>> round(float(discrete_gaussian_delta(8.0, 8, 1.0)), 3)  # gdp_delta(1, 1) = 0.127
      0.126
    """
    v.check_range("sigma", sigma, 0.0, (DELTA_WINDOW - 1) / 12.0, low_open=True)
    v.check_integer("shift", shift, 0, DELTA_WINDOW // 2)
    v.check_range("eps", eps, 0.0, jnp.inf, high_open=True)
    if v.is_concrete((sigma, shift)):
        import numpy as np

        if np.any(12 * np.asarray(sigma, float) + np.asarray(shift, float) > DELTA_WINDOW):
            raise ValueError(
                f"12 * sigma + shift must be <= {DELTA_WINDOW} for the exact sum; got "
                f"sigma={sigma!r}, shift={shift!r}"
            )
    return discrete_gaussian_delta_in_window(sigma, shift, eps)


def discrete_gaussian_delta_in_window(sigma: ArrayLike, shift: ArrayLike, eps: ArrayLike) -> Array:
    """:func:`discrete_gaussian_delta` without the concrete checks: NaN outside the window."""
    dtype = jnp.result_type(sigma, eps, float)
    sigma, shift, eps = (jnp.asarray(a, dtype) for a in (sigma, shift, eps))
    sigma, shift, eps = jnp.broadcast_arrays(sigma, shift, eps)
    grid = jnp.arange(-DELTA_WINDOW, DELTA_WINDOW + 1, dtype=dtype)
    s = sigma[..., None]
    log_p = -0.5 * (grid / s) ** 2
    log_p = log_p - jax.scipy.special.logsumexp(log_p, axis=-1, keepdims=True)
    loss = (shift[..., None] ** 2 - 2.0 * grid * shift[..., None]) / (2.0 * s * s)
    gap = jnp.minimum(eps[..., None] - loss, 0.0)  # 1 - e^{gap} >= 0 where loss > eps
    out = jnp.sum(jnp.exp(log_p) * -jnp.expm1(gap), axis=-1)
    valid = (
        (sigma > 0) & (shift >= 0) & (eps >= 0) & jnp.isfinite(eps)
        & (12.0 * sigma + shift <= DELTA_WINDOW)
    )
    return v.valid_or_nan(valid, out)


def zcdp_delta(rho: ArrayLike, eps: ArrayLike) -> Array:
    """delta(eps) implied by rho-zCDP (Canonne, Kamath & Steinke 2020, Cor. 13).

    delta = min over alpha > 1 of exp((alpha - 1)(alpha rho - eps)) / alpha * (1 - 1/alpha)^(alpha - 1),
    minimised over a fixed log-spaced grid of 512 orders in (1, 1e6] (a valid upper bound;
    differentiable almost everywhere). Used for the multivariate discrete Gaussian, which is
    (D^2 / (2 s^2))-zCDP (CKS 2020, Thm 14).

    Example:
      >>> 0 < float(zcdp_delta(0.5, 2.0)) < 0.1
      True
    """
    v.check_range("rho", rho, 0.0, jnp.inf, high_open=True)
    v.check_range("eps", eps, 0.0, jnp.inf, high_open=True)
    dtype = jnp.result_type(rho, eps, float)
    rho, eps = jnp.broadcast_arrays(jnp.asarray(rho, dtype), jnp.asarray(eps, dtype))
    alpha = 1.0 + jnp.logspace(-4.0, 6.0, 512, dtype=dtype)
    a = alpha.reshape((1,) * rho.ndim + (-1,))
    log_bound = (
        (a - 1.0) * (a * rho[..., None] - eps[..., None]) - jnp.log(a)
        + (a - 1.0) * jnp.log1p(-1.0 / a)
    )
    out = jnp.minimum(jnp.exp(jnp.min(log_bound, axis=-1)), 1.0)
    out = jnp.where(rho == 0, 0.0, out)
    return v.valid_or_nan((rho >= 0) & (eps >= 0) & jnp.isfinite(eps), out)


__all__ = [
    "DELTA_WINDOW",
    "DG_INVALID",
    "MAX_ROUNDS",
    "MAX_GRID_SIGMA",
    "MIN_GRID_SIGMA",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_gaussian_delta_in_window",
    "discrete_gaussian_log_pmf",
    "discrete_gaussian_valid",
    "zcdp_delta",
]
_ = math
