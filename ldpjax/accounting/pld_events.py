"""The privacy loss distribution of every shipped privacy event, discretised on a grid.

Each constructor gives the PLD of the event's worst pair of neighbouring output laws (upper P,
lower Q; loss l = log P/Q under P), discretised pessimistically by connect the dots (Doroshenko,
Ghazi, Kamath, Kumar & Manurangsi, "Connect the Dots: Tighter Discrete Approximations of Privacy
Loss Distributions", PETS 2022) or optimistically by rounding down (Meiser & Mohammadi's privacy
buckets, "Tight on Budget?", CCS 2018); see :mod:`ldpjax.accounting.pld`.

* :func:`gaussian_pld` (mu-GDP, ``GaussianEvent``): l ~ N(mu^2/2, mu^2) under P and
  N(-mu^2/2, mu^2) under Q. Each grid cell's connect-the-dots shares are integrals of the
  density: Gauss-Legendre quadrature (6 nodes in float64, 3 in float32) when every cell is
  narrow (h <= mu / 20: no cancellation, float32 keeps its digits; the nodes' densities
  relative to the cell's middle one), the exact normal-CDF differences otherwise; mass
  below the grid moves up to it, mass above splits between the top and +inf (+inf gets exactly
  the GDP delta at the top).
* :func:`pure_dp_pld` (``PureDpEvent``): the worst eps-DP pair is binary randomized response,
  losses +-eps with P-masses e^eps / (1 + e^eps) and 1 / (1 + e^eps) (Kairouz, Oh & Viswanath,
  "The Composition Theorem for Differential Privacy", ICML 2015). The granular (discrete)
  Laplace release claims this pair (:func:`ldpjax.mechanisms.laplace_claim`).
* :func:`laplace_pld` (``LaplaceEvent(eps)``, the continuous Laplace mechanism of scale
  sensitivity / eps): atoms at +eps (P-mass 1/2) and -eps (P-mass e^-eps / 2) and between
  them the loss l = eps (1 - 2x) of x in (0, 1) (unit sensitivity), of density
  e^((l - eps)/2) / 4 under P; its profile is 1 - e^((e - eps)/2) on [0, eps] (the same law
  as dp_accounting's ``from_laplace_mechanism``). Connect-the-dots shares in closed form on
  whole cells, by 6-point Gauss-Legendre quadrature on the two cells that hold the ends.
* :func:`randomized_response_pld` (``RandomizedResponseEvent(r)``): losses +-log((1+r)/(1-r))
  with P-masses (1 +- r) / 2.
* :func:`kary_randomized_response_pld` (``KaryRandomizedResponseEvent(xi, k)``): losses xi, -xi
  and 0 with P-masses p, q and (k - 2) q, p = e^xi / (k - 1 + e^xi), q = 1 / (k - 1 + e^xi).
* ``WeightedRandomizedResponseEvent(p, q)`` (a channel by its worst pair): losses log(p/q),
  -log(p/q) and 0 with P-masses p, q and 1 - p - q.
* :func:`approx_dp_pld` (``ApproxDpEvent(eps, delta)``): delta at +inf, (1 - delta) times the
  eps-DP pair (Kairouz, Oh & Viswanath 2015).
* :func:`discrete_gaussian_pld` (``DiscreteGaussianEvent``): for one coordinate the exact law
  (Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020):
  losses (D^2 - 2 y D) / (2 s^2) with mass N_Z(0, s^2)(y) over |y| <= ``DG_WINDOW`` (masses
  normalised on the window: upper bounds), the tail mass beyond it bounded as in
  :mod:`ldpjax.accounting.zcdp` and put at +inf (high losses) or on the window's lowest loss.
  Vectors (``dim > 1``): through a valid upper bound, the (eps0, delta0)-DP pair implied by
  their zCDP (Canonne, Kamath & Steinke 2020, Cor. 13) at delta0 = ``DG_VECTOR_DELTA``.
* :func:`gaussian_mixture_pld` (``GaussianMixtureEvent``): the component is revealed, so the PLD
  is the weighted mixture of the components' PLDs.
* :func:`no_privacy_pld` (``NoPrivacyEvent``): all mass at +inf.

:func:`event_pld` dispatches on the event: the shipped ones above, compositions
(``ComposedEvent``, ``SelfComposedEvent``: :func:`ldpjax.accounting.pld_fft.compose`), an event's
own ``privacy_loss(grid, pessimistic)`` view, else its ``gdp_mu``, ``pure_eps`` or ``approx_dp``
view. Parameters are arrays (leading batch axes broadcast); every mass is smooth in them.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax._special import log_ndtr
from ldpjax.accounting import events as E
from ldpjax.accounting import gdp as _gdp
from ldpjax.accounting import pld_gaussian_cells as _cells
from ldpjax.accounting import protocol as p
from ldpjax.accounting import zcdp as _zcdp
from ldpjax.accounting.pld import (
    MASS_SLACK,
    PldGrid,
    PrivacyLossDistribution,
    _weights,
    cells_to_points,
    discretise_atoms,
    grid_losses,
    log1mexp,
    logaddexp,
    logsumexp,
    safe_log,
    widen,
)
from ldpjax.accounting.pld_fft import compose
from ldpjax.types import Array, ArrayLike

#: Half-width of the discrete Gaussian's exact window (atoms y in [-DG_WINDOW, DG_WINDOW]).
DG_WINDOW = 8192
#: delta0 of the (eps0, delta0) pair that bounds a vector discrete Gaussian.
DG_VECTOR_DELTA = 1e-12


def _dtype(*xs: ArrayLike):
    return jnp.result_type(*[np.asarray(x) if isinstance(x, (list, tuple)) else x for x in xs],
                           float)


def _pld(parts: tuple[Array, Array, Array], grid: PldGrid, pessimistic: bool):
    return PrivacyLossDistribution(*parts, grid=grid, pessimistic=pessimistic)


def _built(parts, *args: Array, grid: PldGrid, pessimistic: bool):
    """The PLD of ``parts(*args, grid, pessimistic)``, compiled once per grid (public
    constructors; inside a caller's ``jit`` it is inlined)."""
    return _pld(_JITTED[parts](*args, grid, pessimistic), grid, pessimistic)




def _gaussian_parts(mu: Array, grid: PldGrid, pessimistic: bool) -> tuple[Array, Array, Array]:
    """(log_mass, log_inf, log_void) of mu-GDP, mu in (0, inf] (no validation)."""
    finite = jnp.isfinite(mu)
    safe = jnp.where(finite & (mu > 0), mu, 1.0)
    x = grid_losses(grid, mu.dtype, pessimistic)
    h = grid.interval
    # each cell's shares once, then point j takes the left share of the cell above it and the
    # right share of the one below. Where every cell is narrow (h <= mu / 20) by quadrature;
    # else (mu < 20 h: the masses sit within a few cells of the loss 0) from the normal CDFs
    # on the cells within _cells.EXACT_HALF_WINDOW of the loss 0 and, beyond them (more than 6.4 sd
    # from both means), rounded up and bounded by Mills' ratio (pessimistic) or dropped
    # (optimistic). A cond, so that only the quadrature runs outside vmap where every cell is
    # narrow; under vmap both branches run, and the second is cheap
    cells = x[:-1]
    narrow = h <= 0.05 * safe
    zero = -grid.first
    lo = max(0, zero - _cells.EXACT_HALF_WINDOW)
    hi = min(cells.shape[0], zero + _cells.EXACT_HALF_WINDOW)

    quad = _cells.quadrature_cells(safe, cells, h, pessimistic)

    def mixed():
        far = _cells.far_cells(safe, cells, h, pessimistic)
        near = _cells.exact_cells(safe, x[lo:hi + 1], h, pessimistic)
        wide = tuple(f.at[..., lo:hi].set(e) for f, e in zip(far, near, strict=True))
        pick = narrow[..., None]
        return tuple(jnp.where(pick, q, w) for q, w in zip(quad, wide, strict=True))

    left, right = jax.lax.cond(jnp.all(narrow), lambda: quad, mixed)
    log_mass = cells_to_points(left, right)
    index = jnp.arange(grid.size)
    m = 0.5 * safe * safe
    bottom, top = x[0], x[-1]
    below_p = log_ndtr((bottom - m) / safe)  # P(l < bottom)
    if pessimistic:
        log_mass = jnp.where(index == 0, logaddexp(log_mass, below_p[..., None]), log_mass)
        kept = top + log_ndtr(-(top + m) / safe)  # e^top Q(l > top)
        log_inf = _gdp._log_delta(safe, jnp.broadcast_to(top, safe.shape))
        log_void = log_ndtr((bottom + m) / safe)  # Q(l < bottom) bounds the Q-mass moved away
    else:
        kept = log_ndtr(-(top - m) / safe)  # P(l > top), rounded down to the top
        log_inf = log_void = jnp.full_like(safe, -jnp.inf)
    last = index == grid.size - 1
    log_mass = jnp.where(last, logaddexp(log_mass, kept[..., None]), log_mass)
    log_mass = widen(log_mass, pessimistic)
    nothing = jnp.full_like(log_mass, -jnp.inf)
    log_mass = jnp.where(finite[..., None], log_mass, nothing)
    log_inf = jnp.where(finite, log_inf, 0.0)
    log_void = jnp.where(finite, log_void, 0.0)
    return log_mass, log_inf, log_void


def gaussian_pld(mu: ArrayLike, grid: PldGrid, pessimistic: bool = True
                 ) -> PrivacyLossDistribution:
    """The PLD of a mu-GDP Gaussian release, mu in (0, inf] (inf: all mass at +inf).

    Example:
      >>> from ldpjax.accounting.pld import pld_delta
      >>> pld = gaussian_pld(1.0, PldGrid(2.0**-8, -8.0, 8.0))
      >>> round(float(pld_delta(pld, 1.0)), 3)  # gdp_delta(1, 1) = 0.1269
      0.127
    """
    v.check_range("mu", mu, 0.0, math.inf, low_open=True)
    mu = _gdp.round_up_tiny(mu, _dtype(mu))
    return _built(_gaussian_parts, mu, grid=grid, pessimistic=pessimistic)


# --------------------------------------------------------------------------- atoms
def _pure_parts(eps: Array, grid: PldGrid, pessimistic: bool):
    losses = jnp.stack([eps, -eps], -1)
    log_p = jnp.stack([-jax.nn.softplus(-eps), -jax.nn.softplus(eps)], -1)
    return discretise_atoms(grid, losses, log_p, pessimistic)


def pure_dp_pld(eps: ArrayLike, grid: PldGrid, pessimistic: bool = True
                ) -> PrivacyLossDistribution:
    """The PLD of the worst eps-DP pair (binary randomized response at eps), eps in [0, inf].

    Example:
      >>> from ldpjax.accounting.pld import pld_delta
      >>> round(float(pld_delta(pure_dp_pld(1.0, PldGrid(2.0**-6, -2.0, 2.0)), 0.0)), 3)
      0.462
    """
    v.check_range("eps", eps, 0.0, math.inf)
    eps = jnp.asarray(eps, _dtype(eps))
    return _built(_pure_parts, eps, grid=grid, pessimistic=pessimistic)


def _laplace_boundary(eps: Array, x_cell: Array, lo: Array, hi: Array, h: float,
                      pessimistic: bool) -> tuple[Array, Array]:
    """(left, right) log shares of the Laplace loss density e^((l - eps)/2) / 4 on the part
    [lo, hi] of the cell [x_cell, x_cell + h] (6-point Gauss-Legendre quadrature: relative error
    below 1e-12 for h <= 4; optimistic: all of it on the left)."""
    t0 = jnp.clip(lo - x_cell, 0.0, h)
    t1 = jnp.clip(hi - x_cell, 0.0, h)
    width = t1 - t0
    nodes = t0[..., None] + width[..., None] * jnp.asarray(_cells.NODES, eps.dtype)
    log_f = 0.5 * (x_cell[..., None] + nodes - eps[..., None]) - math.log(4.0)
    log_w = jnp.log(jnp.asarray(_cells.NODE_WEIGHTS, eps.dtype))
    if pessimistic:
        left_s, right_s = _weights(nodes, h)
    else:
        left_s, right_s = jnp.zeros_like(nodes), jnp.full_like(nodes, -jnp.inf)
    scale = safe_log(width)
    return (scale + logsumexp(log_w + log_f + left_s), scale + logsumexp(log_w + log_f + right_s))


def _laplace_parts(eps: Array, grid: PldGrid, pessimistic: bool):
    """(log_mass, log_inf, log_void) of the Laplace mechanism at eps in [0, inf] (no checks):
    atoms at +-eps (P-masses 1/2, e^-eps / 2) and the density e^((l - eps)/2) / 4 on
    (-eps, eps), split by connect the dots (pessimistic: in closed form on whole cells,
    2 tanh(h/4) e^((x_j - eps)/2) / 4 to the left point and e^(h/2) times that to the right;
    by quadrature on the two cells that hold its ends) or rounded down (optimistic)."""
    finite = jnp.isfinite(eps)
    safe = jnp.where(finite, eps, 0.0)
    dtype = safe.dtype
    tol = float(jnp.finfo(dtype).eps)
    x = grid_losses(grid, dtype, pessimistic)
    h, n = grid.interval, grid.size
    bottom, top = x[0], x[-1]
    # the density's ends, moved out (pessimistic: more mass) or in by 4 eps
    hi = safe * (1.0 + (4.0 if pessimistic else -4.0) * tol)
    lo = -hi
    e = safe[..., None]
    cells = x[:-1]
    log_a = 0.5 * (cells - e) - math.log(4.0)  # log of the density at each cell's left end
    whole = (cells >= -hi[..., None]) & (cells + h <= hi[..., None])
    lo_c, hi_c = jnp.maximum(lo, bottom), jnp.minimum(hi, top)
    j_lo = jnp.clip(jnp.floor((lo_c - bottom) / h), 0, n - 2).astype(jnp.int32)
    j_hi = jnp.clip(jnp.floor((hi_c - bottom) / h), 0, n - 2).astype(jnp.int32)
    index = jnp.arange(n - 1)
    ends = (index == j_lo[..., None]) | (index == j_hi[..., None])
    whole = whole & ~ends
    nothing = jnp.full(jnp.shape(whole), -jnp.inf, dtype)
    if pessimistic:
        share = math.log(2.0 * math.tanh(h / 4.0))
        left = jnp.where(whole, log_a + share, nothing)
        right = jnp.where(whole, log_a + 0.5 * h + share, nothing)
    else:
        left = jnp.where(whole, log_a + math.log(2.0 * math.expm1(h / 2.0)), nothing)
        right = nothing
    for j, other in ((j_lo, None), (j_hi, j_lo)):
        b_left, b_right = _laplace_boundary(safe, x[j], lo, hi, h, pessimistic)
        if other is not None:  # one cell holds both ends: counted once
            b_left = jnp.where(j == other, -jnp.inf, b_left)
            b_right = jnp.where(j == other, -jnp.inf, b_right)
        at = index == j[..., None]
        left = jnp.where(at, logaddexp(left, b_left[..., None]), left)
        right = jnp.where(at, logaddexp(right, b_right[..., None]), right)
    pad = jnp.full(jnp.shape(safe) + (1,), -jnp.inf, dtype)
    cont = logaddexp(jnp.concatenate([left, pad], -1), jnp.concatenate([pad, right], -1))
    # the density's mass beyond the grid: P-mass above the top, P- and Q-mass below the bottom
    above = hi > top
    log_above = jnp.where(above, math.log(0.5) + 0.5 * (hi - safe)
                          + log1mexp(0.5 * jnp.minimum(top - hi, 0.0)), -jnp.inf)
    below = lo < bottom
    cut = log1mexp(0.5 * jnp.minimum(lo - bottom, 0.0))
    log_below_p = jnp.where(below, math.log(0.5) + 0.5 * (bottom - safe) + cut, -jnp.inf)
    log_below_q = jnp.where(below, math.log(0.5) + 0.5 * (-lo - safe) + cut, -jnp.inf)
    first, last = jnp.arange(n) == 0, jnp.arange(n) == n - 1
    if pessimistic:  # above: to +inf; below: up to the bottom, its Q-mass to the void
        cont = jnp.where(first, logaddexp(cont, log_below_p[..., None]), cont)
        cont_inf, cont_void = log_above, log_below_q
    else:  # above: rounded down to the top; below: dropped
        cont = jnp.where(last, logaddexp(cont, log_above[..., None]), cont)
        cont_inf = cont_void = jnp.full_like(safe, -jnp.inf)
    # rounding of the exponents (x - eps) / 2: relative error below 2 (|x| + eps) tol
    span = max(abs(float(grid.lower)), abs(float(grid.upper)))
    slack = (MASS_SLACK + 2.0 * (safe + span)) * tol * (1.0 if pessimistic else -1.0)
    cont = cont + slack[..., None]
    cont_inf, cont_void = cont_inf + slack, cont_void + slack
    atoms = discretise_atoms(grid, jnp.stack([safe, -safe], -1),
                             jnp.stack([jnp.full_like(safe, math.log(0.5)),
                                        math.log(0.5) - safe], -1), pessimistic)
    log_mass = logaddexp(atoms[0], cont)
    log_inf = logaddexp(atoms[1], cont_inf)
    log_void = logaddexp(atoms[2], cont_void)
    log_mass = jnp.where(finite[..., None], log_mass, -jnp.inf)
    return log_mass, jnp.where(finite, log_inf, 0.0), jnp.where(finite, log_void, 0.0)


def laplace_pld(eps: ArrayLike, grid: PldGrid, pessimistic: bool = True
                ) -> PrivacyLossDistribution:
    """The PLD of the Laplace mechanism at budget eps in [0, inf] (``LaplaceEvent``): atoms at
    +-eps and a continuous part between them (:mod:`ldpjax.accounting.laplace`).

    Example:
      >>> from ldpjax.accounting.pld import pld_delta
      >>> pld = laplace_pld(1.0, PldGrid(2.0**-6, -2.0, 2.0))
      >>> round(float(pld_delta(pld, 0.5)), 4)  # 1 - e^((0.5 - 1)/2) = 0.2212
      0.2212
    """
    v.check_range("eps", eps, 0.0, math.inf)
    eps = jnp.asarray(eps, _dtype(eps))
    return _built(_laplace_parts, eps, grid=grid, pessimistic=pessimistic)


def _rr_parts(r: Array, grid: PldGrid, pessimistic: bool):
    eps = jnp.where(r < 1, jnp.log1p(r) - jnp.log1p(-jnp.where(r < 1, r, 0.0)), jnp.inf)
    losses = jnp.stack([eps, -eps], -1)
    low = jnp.where(r < 1, jnp.log1p(-jnp.where(r < 1, r, 0.0)), -jnp.inf)
    log_p = jnp.stack([jnp.log1p(r), low], -1) - math.log(2.0)
    return discretise_atoms(grid, losses, log_p, pessimistic)


def randomized_response_pld(r: ArrayLike, grid: PldGrid, pessimistic: bool = True
                            ) -> PrivacyLossDistribution:
    """The PLD of binary randomized response at truthful rate r in (0, 1].

    Example:
      >>> from ldpjax.accounting.pld import pld_epsilon
      >>> pld = randomized_response_pld(0.5, PldGrid(2.0**-10, -2.0, 2.0))
      >>> round(float(pld_epsilon(pld, 0.0)), 3)  # log 3 = 1.0986, up to the grid
      1.099
    """
    v.check_range("r", r, 0.0, 1.0, low_open=True)
    r = _gdp.round_up_tiny(r, _dtype(r))
    return _built(_rr_parts, r, grid=grid, pessimistic=pessimistic)


def _krr_parts(xi: Array, k: Array, grid: PldGrid, pessimistic: bool):
    finite = xi < jnp.inf
    decay = jnp.exp(-jnp.where(finite, xi, 0.0))
    lp = jnp.where(finite, -jnp.log1p((k - 1.0) * decay), 0.0)
    lq = jnp.where(finite, lp - jnp.where(finite, xi, 0.0), -jnp.inf)
    rest = jnp.where(k > 2, jnp.log(jnp.maximum(k - 2.0, 1.0)) + lq, -jnp.inf)
    losses = jnp.stack([xi, -xi, jnp.zeros_like(xi)], -1)
    return discretise_atoms(grid, losses, jnp.stack([lp, lq, rest], -1), pessimistic)


def kary_randomized_response_pld(xi: ArrayLike, k: ArrayLike, grid: PldGrid,
                                 pessimistic: bool = True) -> PrivacyLossDistribution:
    """The PLD of K-ary randomized response with budget xi in [0, inf] over k >= 2 categories.

    Example:
      >>> from ldpjax.accounting.pld import pld_delta
      >>> pld = kary_randomized_response_pld(1.0, 4, PldGrid(2.0**-6, -2.0, 2.0))
      >>> round(float(pld_delta(pld, 0.0)), 4)  # p - q = (e - 1) / (3 + e)
      0.3005
    """
    v.check_range("xi", xi, 0.0, math.inf)
    v.check_integer("k", k, 2)
    dtype = _dtype(xi, k)
    xi, k = _gdp.round_up_tiny(xi, dtype), jnp.asarray(k, dtype)
    return _built(_krr_parts, xi, k, grid=grid, pessimistic=pessimistic)


def _pair_parts(prob: Array, q: Array, grid: PldGrid, pessimistic: bool):
    """A channel by its worst pair (one outcome at p vs q <= p): losses log(p/q), -log(p/q), 0
    with P-masses p, q and 1 - p - q (the symmetric PLD of delta(eps) = max(0, p - e^eps q))."""
    lp = jnp.log(prob)
    lq = jnp.where(q > 0, jnp.log(jnp.where(q > 0, q, 1.0)), -jnp.inf)
    loss = jnp.where(q > 0, lp - lq, jnp.inf)
    rest = jnp.log(jnp.maximum(1.0 - prob - q, 0.0))
    losses = jnp.stack([loss, -loss, jnp.zeros_like(loss)], -1)
    return discretise_atoms(grid, losses, jnp.stack([lp, lq, rest], -1), pessimistic)


def _approx_parts(eps: Array, delta: Array, grid: PldGrid, pessimistic: bool):
    log_mass, log_inf, log_void = _pure_parts(eps, grid, pessimistic)
    keep = log1mexp(jnp.log(jnp.minimum(delta, 1.0)))
    log_d = jnp.log(delta)
    return (log_mass + keep[..., None], logaddexp(log_inf + keep, log_d),
            logaddexp(log_void + keep, log_d))


def approx_dp_pld(eps: ArrayLike, delta: ArrayLike, grid: PldGrid, pessimistic: bool = True
                  ) -> PrivacyLossDistribution:
    """The PLD of the worst (eps, delta)-DP pair: delta at +inf, (1 - delta) times the eps-DP
    pair.

    Example:
      >>> from ldpjax.accounting.pld import pld_delta
      >>> pld = approx_dp_pld(1.0, 1e-3, PldGrid(2.0**-6, -2.0, 2.0))
      >>> round(float(pld_delta(pld, 1.0)), 6)
      0.001
    """
    v.check_range("eps", eps, 0.0, math.inf)
    v.check_range("delta", delta, 0.0, 1.0)
    dtype = _dtype(eps, delta)
    eps, delta = jnp.asarray(eps, dtype), jnp.asarray(delta, dtype)
    return _built(_approx_parts, eps, delta, grid=grid, pessimistic=pessimistic)


# --------------------------------------------------------------------------- discrete Gaussian
def _dg_parts(sigma: Array, shift: Array, grid: PldGrid, pessimistic: bool):
    """The scalar discrete Gaussian on the window |y| <= DG_WINDOW (module docstring)."""
    noisy = sigma > 0
    s = jnp.where(noisy, sigma, 1.0)[..., None]
    d = shift[..., None]
    y = jnp.arange(-DG_WINDOW, DG_WINDOW + 1, dtype=sigma.dtype)
    log_w = -0.5 * jnp.square(y / s)
    log_z = logsumexp(log_w)[..., None]
    losses = (d * d - 2.0 * y * d) / (2.0 * s * s)
    log_p = log_w - log_z
    log_tail = (jnp.log(s) + _cells.LOG_SQRT_2PI + log_ndtr(-DG_WINDOW / s) - log_z)[..., 0]
    # the tail beyond y = DG_WINDOW (lowest losses) joins the window's lowest-loss atom
    log_p = log_p.at[..., -1].set(logaddexp(log_p[..., -1], log_tail))
    high = jnp.where(shift > 0, jnp.inf, 0.0)  # the tail below -DG_WINDOW: highest losses
    if pessimistic:
        losses = jnp.concatenate([losses, high[..., None]], -1)
        log_p = jnp.concatenate([log_p, log_tail[..., None]], -1)
    log_mass, log_inf, log_void = discretise_atoms(grid, losses, log_p, pessimistic)
    if pessimistic:
        q_tail = (jnp.log(s) + _cells.LOG_SQRT_2PI + log_ndtr(-(DG_WINDOW - d) / s) - log_z)[..., 0]
        log_void = logaddexp(log_void, q_tail)
    # sigma = 0: no noise (all mass at +inf for a shift > 0, at loss 0 for shift 0)
    x = grid_losses(grid, sigma.dtype, pessimistic)
    at_zero = jnp.where(x == 0, 0.0, -jnp.inf)
    none_mass = jnp.where((shift > 0)[..., None], -jnp.inf, at_zero)
    none_inf = jnp.where(shift > 0, 0.0, -jnp.inf)
    return (jnp.where(noisy[..., None], log_mass, none_mass), jnp.where(noisy, log_inf, none_inf),
            jnp.where(noisy, log_void, none_inf))


def _dg_vector_parts(sigma: Array, shift: Array, grid: PldGrid, pessimistic: bool):
    rho = _zcdp.discrete_gaussian_rho(sigma, shift)
    log_delta = jnp.full_like(rho, math.log(DG_VECTOR_DELTA))
    eps = _zcdp.zcdp_epsilon_unchecked(rho, log_delta)
    return _approx_parts(eps, jnp.exp(log_delta), grid, pessimistic)


def discrete_gaussian_pld(sigma: ArrayLike, shift: ArrayLike, grid: PldGrid, dim: int = 1,
                          pessimistic: bool = True) -> PrivacyLossDistribution:
    """The PLD of the discrete Gaussian release of scale sigma and integer l2 shift (grid units).

    Example:
      >>> from ldpjax.accounting.pld import pld_delta
      >>> pld = discrete_gaussian_pld(8.0, 8, PldGrid(2.0**-8, -8.0, 8.0))
      >>> round(float(pld_delta(pld, 1.0)), 2)  # close to gdp_delta(1, 1) = 0.127
      0.13
    """
    E.DiscreteGaussianEvent(sigma, shift, dim).check("")
    dtype = _dtype(sigma, shift)
    sigma, shift = jnp.asarray(sigma, dtype), jnp.asarray(shift, dtype)
    parts = _dg_parts if dim == 1 else _dg_vector_parts
    return _built(parts, sigma, shift, grid=grid, pessimistic=pessimistic)


# --------------------------------------------------------------------------- mixture, none
def _mixture_parts(mus: Array, weights: Array, grid: PldGrid, pessimistic: bool):
    log_w = jnp.where(weights > 0, jnp.log(jnp.where(weights > 0, weights, 1.0)), -jnp.inf)
    log_mass, log_inf, log_void = _gaussian_parts(mus, grid, pessimistic)
    return (logsumexp(jnp.swapaxes(log_mass + log_w[..., None], -1, -2)),
            logsumexp(log_inf + log_w), logsumexp(log_void + log_w))


def gaussian_mixture_pld(mus: ArrayLike, weights: ArrayLike, grid: PldGrid,
                         pessimistic: bool = True) -> PrivacyLossDistribution:
    """The PLD of a revealed mixture of mu_b-GDP releases (components on the last axis).

    Example:
      >>> from ldpjax.accounting.pld import pld_delta
      >>> pld = gaussian_mixture_pld([1.0, 0.5], [0.5, 0.5], PldGrid(2.0**-8, -8.0, 8.0))
      >>> round(float(pld_delta(pld, 1.0)), 4)  # gdp_mixture_delta: 0.0669
      0.0669
    """
    E.GaussianMixtureEvent(mus, weights).check("")
    dtype = _dtype(mus, weights)
    mus = _gdp.round_up_tiny(np.asarray(mus) if isinstance(mus, (list, tuple)) else mus, dtype)
    weights = jnp.asarray(np.asarray(weights) if isinstance(weights, (list, tuple)) else weights,
                          dtype)
    return _built(_mixture_parts, mus, weights, grid=grid, pessimistic=pessimistic)


def no_privacy_pld(grid: PldGrid, dtype=None, pessimistic: bool = True
                   ) -> PrivacyLossDistribution:
    """All mass at +inf (a release without noise).

    Example:
      >>> from ldpjax.accounting.pld import pld_epsilon
      >>> float(pld_epsilon(no_privacy_pld(PldGrid(0.5, -1.0, 1.0)), 0.5))
      inf
    """
    dtype = jnp.dtype(dtype or jnp.result_type(float))
    zero = jnp.zeros((), dtype)
    return _pld((jnp.full((grid.size,), -jnp.inf, dtype), zero, zero), grid, pessimistic)


_JITTED = {fn: jax.jit(fn, static_argnums=(n, n + 1)) for fn, n in (
    (_gaussian_parts, 1), (_pure_parts, 1), (_laplace_parts, 1), (_rr_parts, 1), (_krr_parts, 2), (_approx_parts, 2),
    (_dg_parts, 2), (_dg_vector_parts, 2), (_mixture_parts, 2))}


# --------------------------------------------------------------------------- dispatch
def _arr(x: ArrayLike, dtype) -> Array:
    return jnp.asarray(np.asarray(x) if isinstance(x, (list, tuple)) else x, dtype)


def _shipped(event: Any, grid: PldGrid, pessimistic: bool, dtype):
    """(log_mass, log_inf, log_void) of a shipped single release, or None."""
    if isinstance(event, E.GaussianEvent):
        return _gaussian_parts(_arr(event.mu, dtype), grid, pessimistic)
    if isinstance(event, E.RandomizedResponseEvent):
        return _rr_parts(_arr(event.r, dtype), grid, pessimistic)
    if isinstance(event, E.KaryRandomizedResponseEvent):
        return _krr_parts(_arr(event.xi, dtype), _arr(event.k, dtype), grid, pessimistic)
    if isinstance(event, E.LaplaceEvent):
        return _laplace_parts(_arr(event.eps, dtype), grid, pessimistic)
    if isinstance(event, E.PureDpEvent):
        return _pure_parts(_arr(event.eps, dtype), grid, pessimistic)
    if isinstance(event, E.ApproxDpEvent):
        return _approx_parts(_arr(event.eps, dtype), _arr(event.delta, dtype), grid, pessimistic)
    if isinstance(event, E.DiscreteGaussianEvent):
        parts = _dg_parts if event.dim == 1 else _dg_vector_parts
        return parts(_arr(event.sigma, dtype), _arr(event.shift, dtype), grid, pessimistic)
    if isinstance(event, E.GaussianMixtureEvent):
        return _mixture_parts(_arr(event.mus, dtype), _arr(event.weights, dtype), grid,
                              pessimistic)
    if isinstance(event, E.NoPrivacyEvent):
        return no_privacy_pld(grid, dtype, pessimistic)
    weighted = getattr(E, "WeightedRandomizedResponseEvent", None)
    if weighted is not None and isinstance(event, weighted):
        return _pair_parts(_arr(event.p, dtype), _arr(event.q, dtype), grid, pessimistic)
    return None


def _from_views(event: Any, grid: PldGrid, pessimistic: bool, dtype):
    own = p.view(event, "privacy_loss", grid, pessimistic)
    if own is not None:
        return own
    mu = p.view(event, "gdp_mu", dtype)
    if mu is not None:
        return _gaussian_parts(jnp.asarray(mu, dtype), grid, pessimistic)
    eps = p.view(event, "pure_eps", dtype)
    if eps is not None:
        return _pure_parts(jnp.asarray(eps, dtype), grid, pessimistic)
    pair = p.view(event, "approx_dp", dtype)
    if pair is not None:
        return _approx_parts(*(jnp.asarray(x, dtype) for x in pair), grid, pessimistic)
    return None


_SHIPPED = (E.GaussianEvent, E.RandomizedResponseEvent, E.KaryRandomizedResponseEvent,
            E.LaplaceEvent, E.PureDpEvent, E.ApproxDpEvent, E.DiscreteGaussianEvent,
            E.GaussianMixtureEvent, E.NoPrivacyEvent)


def has_release_pld(event: Any) -> bool:
    """Whether :func:`release_pld` can give ``event`` a PLD (by its type or its views)."""
    weighted = getattr(E, "WeightedRandomizedResponseEvent", ())
    return isinstance(event, _SHIPPED) or isinstance(event, weighted) or any(
        hasattr(event, name) for name in ("privacy_loss", "gdp_mu", "pure_eps", "approx_dp"))


def release_pld(event: Any, grid: PldGrid, pessimistic: bool = True, dtype=None
                ) -> PrivacyLossDistribution | None:
    """The PLD of one release (not a composition), or None when the event offers none."""
    dtype = dtype or p.dtype_of(event)
    out = _shipped(event, grid, pessimistic, dtype)
    if out is None:
        out = _from_views(event, grid, pessimistic, dtype)
    if out is None:
        return None
    # computed once: without the barrier XLA may fuse (recompute) a release's whole
    # discretisation into each of the composition's many readers of its masses
    out = jax.lax.optimization_barrier(out)
    return out if isinstance(out, PrivacyLossDistribution) else _pld(out, grid, pessimistic)


def sequential_items(event: Any) -> list[tuple[Any, Any]]:
    """(release, number of uses or None) of a sequential composition, flattened."""
    parts = getattr(event, "sequential_parts", None)
    return parts() if parts is not None else [(event, None)]


def event_pld(event: Any, grid: PldGrid, pessimistic: bool = True, tilt: ArrayLike = 0.0
              ) -> PrivacyLossDistribution:
    """The PLD of ``event`` on ``grid``: a release's own, or the FFT composition of a
    ``ComposedEvent`` / ``SelfComposedEvent`` (``tilt``: see :func:`~ldpjax.accounting.pld_fft.compose`).

    ``NotImplementedError`` names a part without a PLD.

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent, RandomizedResponseEvent
      >>> from ldpjax.accounting.composition import ComposedEvent
      >>> from ldpjax.accounting.pld import pld_epsilon
      >>> event = ComposedEvent((GaussianEvent(0.5), RandomizedResponseEvent(0.5)))
      >>> pld = event_pld(event, PldGrid(2.0**-8, -8.0, 24.0), tilt=3.0)  # tilt: see compose
      >>> round(float(pld_epsilon(pld, 1e-5)), 1)
      3.1
    """
    p.check(event)
    return _event_pld_jit(p.prepared(event), grid, pessimistic, tilt)


def _event_pld(event: Any, grid: PldGrid, pessimistic: bool, tilt: ArrayLike
               ) -> PrivacyLossDistribution:
    dtype = p.dtype_of(event)
    items = sequential_items(event)
    plds, counts = [], []
    for part, count in items:
        pld = release_pld(part, grid, pessimistic, dtype)
        if pld is None:
            raise NotImplementedError(f"no privacy loss distribution for {p.name_of(part)}")
        plds.append(pld)
        counts.append(1 if count is None else count)
    if len(plds) == 1 and isinstance(counts[0], int):
        return plds[0]
    return compose(plds, counts, tilt)


_event_pld_jit = jax.jit(_event_pld, static_argnums=(1, 2))


__all__ = [
    "DG_VECTOR_DELTA",
    "DG_WINDOW",
    "approx_dp_pld",
    "discrete_gaussian_pld",
    "event_pld",
    "gaussian_mixture_pld",
    "gaussian_pld",
    "has_release_pld",
    "kary_randomized_response_pld",
    "laplace_pld",
    "no_privacy_pld",
    "pure_dp_pld",
    "randomized_response_pld",
    "release_pld",
    "sequential_items",
]
