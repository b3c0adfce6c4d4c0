"""Connect-the-dots shares of the grid cells of mu-GDP's privacy loss, l ~ N(mu^2/2, mu^2)
under P and N(-mu^2/2, mu^2) under Q (:func:`ldpjax.accounting.pld_events.gaussian_pld`).

A cell [x, x + h] gives its P-mass to its two ends, left + right = P and left + right e^-h =
e^x Q (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, "Connect the Dots", PETS 2022). Three
ways to compute the shares, each an upper bound (pessimistic) or lower bound (optimistic):

* narrow cells (h <= mu / 20): Gauss-Legendre quadrature of the density times each end's
  share (6 nodes in float64, 3 in float32), relative to the cell's middle density: no
  cancellation;
* wide cells near the loss 0 (mu < 20 h puts all but 6.4 sd of the mass within
  ``EXACT_HALF_WINDOW`` cells of it): differences of normal CDFs, one ``log_ndtr`` per cell end,
  with a bound on their rounding as the subtractions amplify it, added (pessimistic) or taken
  off (optimistic);
* wide cells further out: the whole cell's P-mass, bounded by Mills' ratio, rounded up to the
  cell's right end (pessimistic), or nothing (optimistic).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax._special import LOG_NDTR_ULPS, log_ndtr
from ldpjax.accounting.pld import log1mexp, logaddexp, safe_log
from ldpjax.types import Array

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(6)
#: 6-point Gauss-Legendre nodes and weights on [0, 1].
NODES, NODE_WEIGHTS = 0.5 * (_GL_X + 1.0), 0.5 * _GL_W
# float32: 3 nodes (their error on a narrow cell, h <= mu / 20, is below 1e-9 of its mass)
_GL3_X, _GL3_W = np.polynomial.legendre.leggauss(3)
_QUAD = {4: (0.5 * (_GL3_X + 1.0), 0.5 * _GL3_W), 8: (NODES, NODE_WEIGHTS)}


def _cancellation(d: Array, err_d: Array) -> Array:
    """A bound on the error of log1mexp(d) (d <= 0) when d carries the error err_d: its
    derivative e^d / (1 - e^d) times err_d, plus its own rounding; capped (a cell whose d is
    that uncertain holds a mass below its neighbours' rounding)."""
    amplify = jnp.exp(d) / -jnp.expm1(jnp.minimum(d, -1e-30))
    return jnp.minimum(err_d * amplify, 8.0)


def _log_cell_masses(t: Array) -> tuple[Array, Array]:
    """(log(Phi(t_(j+1)) - Phi(t_j)), a bound on its error) of the cells between consecutive
    ``t`` (last axis, increasing), through the tail that keeps its digits, one ``log_ndtr``
    per end shared by the two cells that meet there: L_j = log Phi(-|t_j|); a cell above 0 is
    Phi(-a) - Phi(-b), one below Phi(b) - Phi(a), one across 0 is 1 - Phi(a) - Phi(-b)."""
    eps = float(jnp.finfo(t.dtype).eps)
    ends = log_ndtr(-jnp.abs(t))
    err_ends = jax.lax.stop_gradient(LOG_NDTR_ULPS * eps * (jnp.abs(ends) + 1.0))
    la, lb = ends[..., :-1], ends[..., 1:]
    ea, eb = err_ends[..., :-1], err_ends[..., 1:]
    a, b = t[..., :-1], t[..., 1:]
    d_above, d_below = jnp.minimum(lb - la, 0.0), jnp.minimum(la - lb, 0.0)
    both = logaddexp(la, lb)
    above = la + log1mexp(d_above)
    below = lb + log1mexp(d_below)
    across = log1mexp(both)
    sg = jax.lax.stop_gradient
    err = jnp.where(
        a > 0, ea + _cancellation(sg(d_above), ea + eb),
        jnp.where(b <= 0, eb + _cancellation(sg(d_below), ea + eb),
                  _cancellation(sg(both), ea + eb + 2.0 * eps)))
    value = jnp.where(a > 0, above, jnp.where(b <= 0, below, across))
    return value, err + 4.0 * eps * (jnp.abs(sg(value)) + 1.0)


def exact_cells(mu: Array, ends_x: Array, h: float, pessimistic: bool
                          ) -> tuple[Array, Array]:
    """Connect-the-dots shares (left, right) of mu-GDP's mass in the cells between the
    consecutive losses ``ends_x`` (spaced h; the cells on the last axis) from normal CDFs: P
    and Q masses of each cell, the shares solving left + right = P, left + right e^-h =
    e^left_x Q; each widened (pessimistic) or narrowed by a bound on its rounding, which
    the subtractions amplify where the shares are small next to the masses."""
    eps = float(jnp.finfo(mu.dtype).eps)
    sg = jax.lax.stop_gradient
    m = (0.5 * mu * mu)[..., None]
    s = mu[..., None]
    z_err = 4.0 * eps * (jnp.abs(ends_x) + sg(m)) / sg(s)  # rounding of the z's
    log_p, err_p = _log_cell_masses((ends_x - m) / s)
    err_p = err_p + 2.0 * (1.0 + jnp.abs(sg((ends_x[:-1] - m) / s))) * z_err[..., :-1]
    if not pessimistic:
        return log_p - err_p, jnp.full_like(log_p, -jnp.inf)
    log_q, err_q = _log_cell_masses((ends_x + m) / s)
    err_q = err_q + 2.0 * (1.0 + jnp.abs(sg((ends_x[:-1] + m) / s))) * z_err[..., :-1]
    norm = math.log(-math.expm1(-h))
    shifted = ends_x[:-1] + log_q
    err_s = err_q + 2.0 * eps * jnp.abs(sg(shifted))
    d_right = jnp.minimum(shifted - log_p, 0.0)
    d_left = jnp.minimum(log_p - h - shifted, 0.0)
    right = log_p + log1mexp(d_right) - norm
    left = shifted + log1mexp(d_left) - norm
    err_right = err_p + _cancellation(sg(d_right), err_p + err_s + 2.0 * eps * abs(h))
    err_left = err_s + _cancellation(sg(d_left), err_p + err_s + 2.0 * eps * abs(h))
    return left + err_left, right + err_right


def quadrature_cells(mu: Array, left_x: Array, h: float, pessimistic: bool
                         ) -> tuple[Array, Array]:
    """The same shares by Gauss-Legendre quadrature of the density times the shares (6 nodes
    in float64, 3 in float32; accurate where the cells are narrow, h <= mu / 20: no
    cancellation, float32 keeps its digits), as sums of e^(log f(node) - log f(mid)) =
    e^(-u z_mid / s - u^2 / (2 s^2)), u = node - mid."""
    m = (0.5 * mu * mu)[..., None]
    s = mu[..., None]
    nodes, weights = _QUAD[jnp.dtype(mu.dtype).itemsize]
    t_nodes = h * nodes
    if pessimistic:
        left_w = weights * (np.exp(-t_nodes) - math.exp(-h)) / -math.expm1(-h)
        right_w = weights * -np.expm1(-t_nodes) / -math.expm1(-h)
    else:
        left_w, right_w = weights, np.zeros_like(weights)
    z_mid = (left_x + 0.5 * h - m) / s
    sum_left = sum_right = 0.0
    for u, wl, wr in zip(t_nodes - 0.5 * h, left_w, right_w, strict=True):
        e = jnp.exp(-float(u) * z_mid / s - float(u * u) / (2.0 * s * s))
        sum_left = sum_left + float(wl) * e
        sum_right = sum_right + float(wr) * e
    log_mid = -0.5 * z_mid * z_mid - jnp.log(s) - LOG_SQRT_2PI + math.log(h)
    left = log_mid + safe_log(sum_left)
    right = log_mid + safe_log(sum_right) if pessimistic else jnp.full_like(left, -jnp.inf)
    return left, right


#: Cells on each side of the loss 0 where a wide-cell Gaussian (h > mu / 20) takes its exact
#: shares; beyond them its masses lie more than 6.4 sd from their means.
EXACT_HALF_WINDOW = 128


def far_cells(mu: Array, left_x: Array, h: float, pessimistic: bool
                        ) -> tuple[Array, Array]:
    """Shares (left, right) of mu-GDP's cells [left_x, left_x + h] that bound them from above
    (pessimistic: the whole cell's P-mass rounded up to its right end, that mass bounded by
    Phi(-z) <= phi(z) / z (Mills' ratio) at the cell's end nearest the mean, z >= 1 standard
    deviations away, or 1 for a cell closer than that) or from below (optimistic: nothing)."""
    nothing = jnp.full(jnp.broadcast_shapes(mu[..., None].shape, left_x.shape), -jnp.inf,
                       mu.dtype)
    if not pessimistic:
        return nothing, nothing
    m = (0.5 * mu * mu)[..., None]
    s = mu[..., None]
    z = jnp.maximum(jnp.maximum((left_x - m) / s, (m - left_x - h) / s), 1.0)
    return nothing, -0.5 * z * z - jnp.log(z) - LOG_SQRT_2PI


__all__ = ["EXACT_HALF_WINDOW", "LOG_SQRT_2PI", "NODES", "NODE_WEIGHTS", "exact_cells",
           "far_cells", "quadrature_cells"]
