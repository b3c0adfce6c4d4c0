"""Closed-form variances of the frequency and mean oracles, differentiable in eps, d and n.

**Frequency oracles.** For a pure protocol with support probabilities (p*, q*) (see
:mod:`ldpjax.frequency.estimators`) the unbiased count c~(v) from n independent reports, n_v = n
f_v of which hold v, has (Wang, Blocki, Li & Jha, "Locally Differentially Private Protocols
for Frequency Estimation", USENIX Security 2017, Thm. 2)

    Var[c~(v)] = n q* (1 - q*) / (p* - q*)^2 + n f_v (1 - p* - q*) / (p* - q*)

(the support indicators are independent Bernoulli(p*) for the n_v holders and Bernoulli(q*)
for the others). :func:`count_variance` is that formula; the per-oracle functions plug in their
(p*, q*), with d, k, g and n real numbers (so ``jax.grad`` reaches them: e.g. the OLH optimum
g = e^eps + 1). Divide by n^2 for the variance of the frequency f~(v) = c~(v) / n.

**Mean oracles** (per release, for a value x in [-1, 1]):

* Duchi, Jordan & Wainwright (JASA 2018): B^2 - x^2, B = (e^eps + 1) / (e^eps - 1);
* piecewise mechanism (Wang et al., ICDE 2019, Lemma 2): x^2 / (s - 1) + (s + 3) /
  (3 (s - 1)^2), s = e^(eps/2) (the continuous mechanism);
  :func:`piecewise_discrete_variance` is the exact variance of the discretised release of
  :func:`~ldpjax.mechanisms.piecewise.piecewise_mechanism` (from its integer parameters);
* hybrid: beta Var_PM + (1 - beta) Var_Duchi (both branches are unbiased), beta = 1 - e^(-eps/2)
  above eps = 0.61, else 0.

Concrete arguments outside their domains raise ``ValueError``; traced ones give NaN (value and
gradient).
"""

from __future__ import annotations

import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax.mechanisms.hybrid import hybrid_weight
from ldpjax.mechanisms.piecewise import piecewise_parameters
from ldpjax.types import Array, ArrayLike


def _float(*xs: ArrayLike) -> tuple[Array, ...]:
    dtype = jnp.result_type(*xs, float)
    return tuple(jnp.asarray(x, dtype) for x in xs)


def count_variance(n: ArrayLike, f: ArrayLike, p_star: ArrayLike, q_star: ArrayLike) -> Array:
    """Var[c~(v)] = n q* (1 - q*) / (p* - q*)^2 + n f (1 - p* - q*) / (p* - q*).

    Example:
      >>> round(float(count_variance(1000.0, 0.0, 0.75, 0.25)), 1)  # 1000 (3/16) / (1/4)
      750.0
    """
    v.check_range("n", n, 0.0, jnp.inf)
    v.check_range("f", f, 0.0, 1.0)
    n, f, p, q = _float(n, f, p_star, q_star)
    ok = (q >= 0) & (p > q) & (p <= 1) & (n >= 0) & (f >= 0) & (f <= 1)
    gap = jnp.where(ok, p - q, 1.0)
    out = n * q * (1.0 - q) / (gap * gap) + n * f * (1.0 - p - q) / gap
    return v.valid_or_nan(ok, out, n, f, p, q)


def _eps(eps: ArrayLike) -> None:
    v.check_range("eps", eps, 0.0, jnp.inf, low_open=True)


def grr_variance(eps: ArrayLike, d: ArrayLike, n: ArrayLike, f: ArrayLike = 0.0) -> Array:
    """Var[c~(v)] of generalized randomized response over d items (d real, >= 2).

    Example:
      >>> round(float(grr_variance(1.0, 4, 1000.0)))  # n (d - 2 + e) / (e - 1)^2
      1598
    """
    _eps(eps)
    v.check_range("d", d, 2.0, jnp.inf, high_open=True)
    eps, d = _float(eps, d)
    q = 1.0 / (jnp.exp(eps) + d - 1.0)
    p = 1.0 / (1.0 + (d - 1.0) * jnp.exp(-eps))
    return count_variance(n, f, p, q)


def unary_variance(p: ArrayLike, q: ArrayLike, n: ArrayLike, f: ArrayLike = 0.0) -> Array:
    """Var[c~(v)] of unary encoding with probabilities (p, q).

    Example:
      >>> round(float(unary_variance(0.5, 0.25, 1000.0)), 1)  # 1000 (3/16) / (1/16)
      3000.0
    """
    return count_variance(n, f, p, q)


def sue_variance(eps: ArrayLike, n: ArrayLike, f: ArrayLike = 0.0) -> Array:
    """Var[c~(v)] of SUE: n e^(eps/2) / (e^(eps/2) - 1)^2 at f = 0.

    Example:
      >>> round(float(sue_variance(2.0, 1000.0)), 1)  # 1000 e / (e - 1)^2
      920.7
    """
    _eps(eps)
    (eps,) = _float(eps)
    return count_variance(n, f, 1.0 / (1.0 + jnp.exp(-0.5 * eps)),
                          1.0 / (1.0 + jnp.exp(0.5 * eps)))


def oue_variance(eps: ArrayLike, n: ArrayLike, f: ArrayLike = 0.0) -> Array:
    """Var[c~(v)] of OUE: 4 n e^eps / (e^eps - 1)^2 at f = 0.

    Example:
      >>> round(float(oue_variance(1.0, 1000.0)), 1)  # 4000 e / (e - 1)^2
      3682.7
    """
    _eps(eps)
    (eps,) = _float(eps)
    return count_variance(n, f, jnp.full_like(eps, 0.5), 1.0 / (1.0 + jnp.exp(eps)))


def olh_variance(eps: ArrayLike, g: ArrayLike, n: ArrayLike, f: ArrayLike = 0.0) -> Array:
    """Var[c~(v)] of local hashing with g buckets (g real, >= 2: minimised at g = e^eps + 1,
    where it equals OUE's at f = 0).

    Example:
      >>> import math
      >>> round(float(olh_variance(1.0, math.e + 1, 1000.0)), 1)  # = oue_variance(1, 1000)
      3682.7
    """
    _eps(eps)
    v.check_range("g", g, 2.0, jnp.inf, high_open=True)
    eps, g = _float(eps, g)
    return count_variance(n, f, 1.0 / (1.0 + (g - 1.0) * jnp.exp(-eps)), 1.0 / g)


def hadamard_variance(eps: ArrayLike, n: ArrayLike, f: ArrayLike = 0.0) -> Array:
    """Var[c~(v)] of Hadamard response: n ((e^eps + 1) / (e^eps - 1))^2 at f = 0.

    Example:
      >>> round(float(hadamard_variance(1.0, 1000.0)))  # 1000 ((e + 1) / (e - 1))^2
      4683
    """
    _eps(eps)
    (eps,) = _float(eps)
    return count_variance(n, f, 1.0 / (1.0 + jnp.exp(-eps)), jnp.full_like(eps, 0.5))


def subset_variance(eps: ArrayLike, d: ArrayLike, k: ArrayLike, n: ArrayLike,
                    f: ArrayLike = 0.0) -> Array:
    """Var[c~(v)] of k-subset selection over d items (d, k real, 1 <= k < d).

    Example:
      >>> round(float(subset_variance(1.0, 10, 3, 1000.0)))
      2839
    """
    _eps(eps)
    v.check_range("d", d, 2.0, jnp.inf, high_open=True)
    v.check_range("k", k, 1.0, jnp.inf, high_open=True)
    eps, d, k = _float(eps, d, k)
    e = jnp.exp(eps)
    den = k * e + d - k
    p = k * e / den
    q = (k * (k - 1.0) * e + k * (d - k)) / ((d - 1.0) * den)
    return count_variance(n, f, jnp.where(k < d, p, jnp.nan), q)


def _value(x: ArrayLike) -> None:
    v.check_range("x", x, -1.0, 1.0)


def duchi_variance(eps: ArrayLike, x: ArrayLike = 0.0) -> Array:
    """Var of one release of Duchi et al.'s one-bit mechanism: B^2 - x^2.

    Example:
      >>> round(float(duchi_variance(1.0, 0.5)), 4)  # ((e + 1) / (e - 1))^2 - 1/4
      4.4327
    """
    _eps(eps)
    _value(x)
    eps, x = _float(eps, x)
    ok = (eps > 0) & (x >= -1) & (x <= 1)
    scale = 1.0 / jnp.tanh(0.5 * jnp.where(ok, eps, 1.0))  # (e^eps + 1) / (e^eps - 1)
    return v.valid_or_nan(ok, scale * scale - x * x, eps, x)


def piecewise_variance(eps: ArrayLike, x: ArrayLike = 0.0) -> Array:
    """Var of one release of the (continuous) piecewise mechanism: x^2 / (s - 1) + (s + 3) /
    (3 (s - 1)^2), s = e^(eps/2).

    Example:
      >>> round(float(piecewise_variance(2.0, 0.0)), 4)  # (e + 3) / (3 (e - 1)^2)
      0.6456
    """
    _eps(eps)
    _value(x)
    eps, x = _float(eps, x)
    ok = (eps > 0) & (x >= -1) & (x <= 1)
    sm1 = jnp.expm1(0.5 * jnp.where(ok, eps, 1.0))  # s - 1
    out = x * x / sm1 + (sm1 + 4.0) / (3.0 * sm1 * sm1)
    return v.valid_or_nan(ok, out, eps, x)


def hybrid_variance(eps: ArrayLike, x: ArrayLike = 0.0) -> Array:
    """Var of one release of the hybrid mechanism: beta Var_PM + (1 - beta) Var_Duchi.

    Example:
      >>> round(float(hybrid_variance(2.0, 0.0)), 3)  # 0.632 * 0.6456 + 0.368 * 1.7241
      1.042
    """
    beta = hybrid_weight(eps)
    return beta * piecewise_variance(eps, x) + (1.0 - beta) * duchi_variance(eps, x)


def piecewise_discrete_variance(eps: ArrayLike, x: ArrayLike, granularity: float) -> Array:
    """The exact variance of one release of the discretised piecewise mechanism at (eps, g).

    From its integers (``piecewise_parameters``: A, B, T, w, M, K): conditional on a valid
    release every point has probability A / T (window) or B / T, the window starts at
    floor(sigma) + U with P[U = 1] = floor(frac(sigma) 2^32) / 2^32, sigma = K x - (w - 1) / 2,
    so with a = A / T, b = B / T and S2(s) = sum_{j < w} (s + j)^2,

        E[m^2] = b M (M + 1)(2M + 1) / 3 + (a - b) E[S2(start)],
        E[m] = (a - b) w (E[start] + (w - 1) / 2),   Var = g^2 (E[m^2] - E[m]^2).

    Not differentiable in eps (the integers are piecewise constant in it).

    Example:
      >>> round(float(piecewise_discrete_variance(2.0, 0.0, 2**-8)), 3)  # continuous: 0.6456
      0.653
    """
    _value(x)
    prm = piecewise_parameters(eps, granularity)
    dtype = jnp.result_type(eps, x, float)
    x = jnp.asarray(x, dtype)
    total = prm.total.astype(dtype)
    a = prm.high.astype(dtype) / total
    b = prm.low.astype(dtype) / total
    w, m = prm.width.astype(dtype), prm.half.astype(dtype)
    sigma = prm.center_scale.astype(dtype) * x - 0.5 * (w - 1.0)
    low = jnp.floor(sigma)
    up = jnp.floor((sigma - low) * 2.0**32) * 2.0**-32
    start1 = low + up
    start2 = low * low + (2.0 * low + 1.0) * up
    s2 = w * start2 + w * (w - 1.0) * start1 + (w - 1.0) * w * (2.0 * w - 1.0) / 6.0
    second = b * m * (m + 1.0) * (2.0 * m + 1.0) / 3.0 + (a - b) * s2
    first = (a - b) * w * (start1 + 0.5 * (w - 1.0))
    out = granularity**2 * (second - first * first)
    return v.valid_or_nan(prm.valid & (x >= -1) & (x <= 1), out, x)


__all__ = [
    "count_variance",
    "duchi_variance",
    "grr_variance",
    "hadamard_variance",
    "hybrid_variance",
    "olh_variance",
    "oue_variance",
    "piecewise_discrete_variance",
    "piecewise_variance",
    "subset_variance",
    "sue_variance",
    "unary_variance",
]
