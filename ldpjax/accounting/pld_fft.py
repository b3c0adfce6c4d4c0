"""Composition of privacy loss distributions by an exponentially tilted FFT, in JAX.

The PLDs and grids are those of :mod:`ldpjax.accounting.pld` (discretisation there); the
PLD of a sequential composition is the convolution of the parts' PLDs (Koskela, Jalko &
Honkela, "Computing Tight Differential Privacy Guarantees Using FFT", AISTATS 2020).

Composition. The finite parts are exponentially tilted, u(l) = omega(l) e^(lam l - c) with
c = log sum omega e^(lam l), so that the tilted law is centred near the losses that decide the
target delta (:mod:`ldpjax.accounting.pld_accountant` picks lam); tilting commutes with
convolution, so the composition is U = IFFT(prod_i FFT(u_i)^(k_i)) (the powers taken as
exp(k log|Y|) e^(i k arg Y): any integer count, traced ones included) and omega(l) =
U(l) e^(sum_i k_i c_i - lam l), undone in log space. Index 0 of the FFT is the loss 0, so a
composed mass lands at its loss modulo the FFT length; the read window is the grid.

Error budget (what makes the pessimistic result an upper bound in float32 and float64):

* FFT rounding is bounded per entry: a length-M FFT of x has error at most
  ``FFT_ERROR_CONSTANT`` log2(M) eps ||x||_1 in every output (the radix-2 bound of Higham,
  "Accuracy and Stability of Numerical Algorithms", Sec. 24.1, summed stage by stage; XLA's
  FFTs measured at most 0.17 log2(M) eps ||x||_1 on CPU, float32 and float64, M up to 2^21).
  With |Y_i| <= a_i = min(|Y_i^| + e_i, ||u_i||_1), the product's error at each frequency is
  at most (prod_i a_i^(k_i)) sum_i k_i e_i / a_i, plus the rounding of the powers
  (4 eps (sum_i k_i (|log|Y_i|| + |arg Y_i|) + m + 8) |Y|); the inverse FFT adds its own bound.
  Their sum E bounds every entry of U, and U is replaced by max(U, 0) + E (optimistic:
  max(U - E, 0)), so every composed mass is an upper (lower) bound. Tilting is what makes E
  small where it matters: relative to the masses near the target it is of order m * eps.
* Mass of the composition above the grid's top is bounded by Chernoff,
  sum_{l > top} omega(l) <= exp(sum_i k_i K_i(theta) - theta top) with
  K_i(theta) = log sum omega_i e^(theta l), and added at +inf; mass below the bottom only
  matters for eps below it, which never happens (the bottom is <= 0), and when a composed PLD
  is returned for later use its Chernoff bound e^bottom is added to the bottom mass.
* The tilted inputs, the normalisers and the final exponent carry relative rounding of a few
  eps each; the result is widened by 4 eps (|sum k c| + |lam l| + |log U|) + m log(1 + 4 eps)
  in log space. Discretised single releases are built in log space and widened by
  ``MASS_SLACK`` eps (relative) per mass.
* A final relative safety factor 1 + 1024 eps on delta covers the summations.

Everything here is pure JAX: ``jit``, ``vmap`` (leading batch axes broadcast) and ``grad``
(the error terms carry no gradient).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting.pld import (
    FFT_ERROR_CONSTANT,
    PldGrid,
    PrivacyLossDistribution,
    cumlogsumexp,
    grid_losses,
    log1mexp,
    logaddexp,
    logsumexp,
    pld_delta,  # noqa: F401 (the doctests read their compositions with it)
    safe_log,
)
from ldpjax.types import Array, ArrayLike

# --------------------------------------------------------------------------- composition
#: Mass of a tilted input entry below e^-T (relative to its largest) is charged to the error
#: floor instead of the relative widening (T per dtype; see :func:`tilted_compose`).
_SMALL_LOG = {4: 40.0, 8: 60.0}


class TiltedComposition(NamedTuple):
    """One direction of a composed PLD, tilted: omega(x_j) = values_j e^(log_scale - tilt x_j)
    up to the relative widening e^(+-slack) (pessimistic: upper bounds, optimistic: lower).

    Attributes:
      values: (..., n) tilted masses W_j >= 0 on the grid (the FFT error floor included).
      log_scale: (...) log of the tilt's normaliser, sum_i k_i (m_i + log r_i).
      tilt: (...) the tilt lam (no gradient).
      log_inf: (...) log of the composed mass at +inf (the parts' own; not the tail above the
        grid).
      slack: (...) >= 0: the rounding of the inputs, the normalisers and the un-tilting, in
        log space.
      floor: (...) the error bound added to (pessimistic) or taken from (optimistic) every
        tilted mass.
    """

    values: Array
    log_scale: Array
    tilt: Array
    log_inf: Array
    slack: Array
    floor: Array


def _into_fft(u: Array, first: int, size: int) -> Array:
    """Grid order (losses h (first + j)) to FFT order (index m = loss m h modulo ``size``)."""
    zeros = jnp.zeros(u.shape[:-1] + (size - u.shape[-1],), u.dtype)
    return jnp.concatenate([u[..., -first:], zeros, u[..., :-first]], -1) if first < 0 else \
        jnp.concatenate([u, zeros], -1)


def _out_of_fft(v: Array, first: int, n: int) -> Array:
    """The inverse of :func:`_into_fft` on the grid's window."""
    size = v.shape[-1]
    return jnp.concatenate([v[..., size + first:], v[..., :n + first]], -1) if first < 0 else \
        v[..., :n]


def _full_sum(half: Array, size: int) -> Array:
    """sum over the whole (Hermitian) spectrum of a nonnegative function of |Y|, from the half
    an rfft returns (``size`` even)."""
    return 2.0 * jnp.sum(half, -1) - half[..., 0] - half[..., -1]


def tilted_compose(items: Sequence[tuple[Array, Array, Any]], grid: PldGrid, tilt: ArrayLike,
                   pessimistic: bool = True) -> TiltedComposition:
    """Compose one direction: ``items`` = [(log_mass, log_inf, count)], batch axes broadcast.

    Each part is tilted, u_i = omega_i e^(lam x - m_i) with m_i its largest exponent, r_i =
    sum u_i, transformed by a real FFT of the grid's FFT length and raised to its count in
    polar form (exp(k log|Y|), k arg Y: a traced count works); one inverse FFT gives the
    composition (module docstring). Error bounds: the FFT's and the powers' (as in the module
    docstring) make the floor E, with the mass of input entries below e^-T of their largest
    (T = 40 in float32, 60 in float64; at most n e^-T each) charged to it; the relative
    rounding of every other input entry, eps (3 lam X + |m_i| + 2 T + 2) with X the grid's
    largest |loss|, counted once per use, and of the normaliser and the un-tilting make the
    slack. The mass above the grid is not included (see :func:`upper_tail_bound`).
    """
    dtype = jnp.result_type(*[it[0] for it in items])
    x = grid_losses(grid, dtype, pessimistic)
    n, size, first = grid.size, grid.fft_size, grid.first
    eps = float(jnp.finfo(dtype).eps)
    kappa = FFT_ERROR_CONSTANT * math.log2(size) * eps
    small = _SMALL_LOG[jnp.dtype(dtype).itemsize]
    reach = float(max(abs(grid.lower), abs(grid.upper)) + grid.interval)
    tilt = jax.lax.stop_gradient(jnp.asarray(tilt, dtype))
    sg = jax.lax.stop_gradient
    log_mag = phase = log_bound = spread = rounding = 0.0
    log_scale = uses = log_finite = input_rel = scale_err = 0.0
    for log_mass, log_inf, count in items:
        k = jnp.asarray(count, dtype)
        z = log_mass + tilt[..., None] * x
        top = sg(jnp.max(z, axis=-1))
        top = jnp.where(jnp.isfinite(top), top, 0.0)
        u = jnp.exp(z - top[..., None])
        r = jnp.sum(u, axis=-1)
        has = r > 0
        safe_r = jnp.where(has, r, 1.0)
        y = jnp.fft.rfft(_into_fft(u, first, size), axis=-1)
        mag = jnp.abs(y)
        positive = mag > 0
        lm = jnp.where(positive, jnp.log(jnp.where(positive, mag, 1.0)), -jnp.inf)
        lm = lm - jnp.log(safe_r)[..., None]
        ph = jnp.angle(jnp.where(positive, y, 1.0))
        a = sg(jnp.minimum(mag / safe_r[..., None] + kappa, 1.0))
        kk = k[..., None]
        log_mag = log_mag + kk * lm
        phase = phase + kk * ph
        log_bound = log_bound + kk * jnp.log(a)
        spread = spread + kk * kappa / a
        rounding = rounding + kk * (jnp.where(positive, jnp.abs(lm), 0.0) + jnp.abs(ph))
        log_r = jnp.where(has, jnp.log(safe_r), 0.0)
        log_scale = log_scale + k * (top + log_r)
        scale_err = scale_err + k * (jnp.abs(top) + jnp.abs(log_r))
        input_rel = input_rel + k * jnp.log1p(
            eps * (3.0 * tilt * reach + jnp.abs(top) + 2.0 * small + 2.0))
        uses = uses + k
        log_finite = log_finite + k * log1mexp(log_inf)
    spectrum = jnp.exp(log_mag) * jnp.exp(1j * phase.astype(dtype))
    composed = _out_of_fft(jnp.fft.irfft(spectrum, n=size, axis=-1), first, n)
    size_y = sg(jnp.exp(log_mag))
    d_y = (jnp.exp(sg(log_bound)) * sg(spread)
           + size_y * 4.0 * eps * (sg(rounding) + len(items) + 8.0))
    err = (_full_sum(d_y, size) + kappa * _full_sum(size_y, size)) / size
    # entries below e^-T of their part's largest: at most n e^-T of each use's mass
    err = sg(err + jnp.asarray(uses, dtype) * n * math.exp(-small))
    kept = jnp.maximum(composed, 0.0) + err[..., None] if pessimistic else \
        jnp.maximum(composed - err[..., None], 0.0)
    log_floor = jnp.log(jnp.maximum(err, float(jnp.finfo(dtype).tiny)))
    slack = sg(input_rel + 4.0 * eps * (scale_err + jnp.abs(log_scale) + tilt * reach
                                        + jnp.abs(log_floor) + 8.0))
    log_inf = log1mexp(log_finite)
    return TiltedComposition(kept, log_scale, tilt, log_inf, jnp.broadcast_to(slack, err.shape),
                             err)


def fft_compose(items: Sequence[tuple[Array, Array, Any]], grid: PldGrid, tilt: ArrayLike,
                pessimistic: bool = True) -> tuple[Array, Array]:
    """Compose one direction (:func:`tilted_compose`) and return (log_mass, log_inf) on the
    grid: pessimistic masses are upper bounds entrywise and optimistic ones lower bounds."""
    out = tilted_compose(items, grid, tilt, pessimistic)
    x = grid_losses(grid, out.values.dtype, pessimistic)
    sign = 1.0 if pessimistic else -1.0
    log_mass = (safe_log(out.values) + out.log_scale[..., None] - out.tilt[..., None] * x
                + sign * out.slack[..., None])
    return log_mass, out.log_inf


def cumulant(log_mass: Array, x: Array, theta: Array) -> Array:
    """K(theta) = log sum omega(l) e^(theta l) over the grid (batch axes lead; theta broadcast)."""
    return logsumexp(log_mass + jnp.asarray(theta)[..., None] * x)


def upper_tail_bound(items: Sequence[tuple[Array, Array, Any]], grid: PldGrid,
                     thetas: Array) -> Array:
    """log of a bound on the composed finite mass above the grid's top:
    min over ``thetas`` (last axis, >= 0) of sum_i k_i K_i(theta) - theta top (Chernoff)."""
    dtype = jnp.result_type(*[it[0] for it in items])
    x = grid_losses(grid, dtype)
    top = float(grid.losses(np.dtype(dtype))[-1])
    thetas = jax.lax.stop_gradient(jnp.maximum(jnp.asarray(thetas, dtype), 0.0))
    best = None
    for i in range(thetas.shape[-1]):
        theta = thetas[..., i]
        total = sum(jnp.asarray(count, dtype) * cumulant(log_mass, x, theta)
                    for log_mass, _, count in items)
        bound = total - theta * top
        best = bound if best is None else jnp.minimum(best, bound)
    return best


def lower_tail_bound(items: Sequence[tuple[Array, Array, Any]], grid: PldGrid) -> Array:
    """log of a bound on the composed finite mass below the grid's bottom:
    sum_i k_i K_i(-1) + bottom (Chernoff at theta = -1; K_i(-1) = log Q_i(finite loss) <= 0)."""
    dtype = jnp.result_type(*[it[0] for it in items])
    x = grid_losses(grid, dtype)
    return sum(jnp.asarray(count, dtype) * cumulant(log_mass, x, -1.0)
               for log_mass, _, count in items) + float(grid.losses(np.dtype(dtype))[0])


# --------------------------------------------------------------------------- reading a tilted composition
#: Points per block of the reader of a tilted composition.
READ_BLOCK = 16


class _Tails(NamedTuple):
    """Block-level tails of a tilted composition (log space; the block axis last)."""

    log_ts: Array  # log sum_{j >= b0} W_j rho^(j - b0)
    log_th: Array  # log sum_{j >= b0} W_j (rho sigma)^(j - b0)
    log_d0: Array  # log sum_{j > b0} W_j rho^(j - b0) (1 - sigma^(j - b0))
    blocks: Array  # W reshaped (..., nb, READ_BLOCK), zero-padded


def _block_tails(values: Array, tilt: Array, h: float) -> _Tails:
    """With rho = e^-(tilt h) and sigma = e^-h, the tails of the tilted masses W at every block
    start b0, from per-block weighted sums and reverse cumulative log-sum-exps over the blocks
    (every term nonnegative: no cancellation)."""
    n = values.shape[-1]
    nb = -(-n // READ_BLOCK)
    w = jnp.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, nb * READ_BLOCK - n)])
    w = w.reshape(*values.shape[:-1], nb, READ_BLOCK)
    k = np.arange(READ_BLOCK)
    lam = tilt[..., None]
    log_rho = -lam * (h * k)
    w_s = jnp.exp(log_rho)
    w_h = jnp.exp(log_rho - h * k)
    w_v = w_s * jnp.asarray(-np.expm1(-h * k), values.dtype)
    s = jnp.einsum("...bk,...k->...b", w, w_s)
    hh = jnp.einsum("...bk,...k->...b", w, w_h)
    vv = jnp.einsum("...bk,...k->...b", w, w_v)
    step = READ_BLOCK * h
    b = jnp.arange(nb, dtype=values.dtype)
    decay = tilt[..., None] * step * b
    decay1 = (tilt[..., None] + 1.0) * step * b
    axis = s.ndim - 1
    log_ts = cumlogsumexp(safe_log(s) - decay, axis=axis, reverse=True) + decay
    log_th = cumlogsumexp(safe_log(hh) - decay1, axis=axis, reverse=True) + decay1
    none = jnp.full(s.shape[:-1] + (1,), -jnp.inf, s.dtype)
    ts_next = jnp.concatenate([log_ts[..., 1:], none], -1)
    log_q = logaddexp(safe_log(vv), -tilt[..., None] * step + math.log(-math.expm1(-step))
                          + ts_next)
    log_d0 = cumlogsumexp(log_q - decay1, axis=axis, reverse=True) + decay1
    return _Tails(log_ts, log_th, log_d0, w)


def _block_points(tails: _Tails, tilt: Array, h: float, block: Array
                  ) -> tuple[Array, Array, Array]:
    """At the READ_BLOCK + 1 points b0 + k (k = 0..READ_BLOCK) of block ``block`` (an index per
    batch entry): log of D_k = sum_{j > i} W_j rho^(j - i) (1 - sigma^(j - i)),
    A_k = sum_{j >= i} W_j rho^(j - i) and B_k = sum_{j >= i} W_j (rho sigma)^(j - i)."""
    nb = tails.log_ts.shape[-1]
    idx = block[..., None]
    w = jnp.take_along_axis(tails.blocks, idx[..., None], -2)[..., 0, :]  # (..., READ_BLOCK)
    nxt = jnp.minimum(idx + 1, nb - 1)
    last = idx + 1 >= nb

    def after(log_x):
        return jnp.where(last, -jnp.inf, jnp.take_along_axis(log_x, nxt, -1))[..., 0]

    ts_next, th_next, d0_next = after(tails.log_ts), after(tails.log_th), after(tails.log_d0)
    k = np.arange(READ_BLOCK + 1)[:, None]
    m = np.arange(READ_BLOCK)[None, :]
    gap = np.maximum(m - k, 0)
    lam = tilt[..., None, None]
    log_rho = -lam * (h * gap)
    rho = jnp.where(m >= k, jnp.exp(log_rho), 0.0)
    rho_sigma = jnp.where(m >= k, jnp.exp(log_rho - h * gap), 0.0)
    v_w = jnp.where(m > k, jnp.exp(log_rho) * np.asarray(-np.expm1(-h * gap)), 0.0)
    ww = w[..., None, :]
    d = (READ_BLOCK - np.arange(READ_BLOCK + 1)).astype(np.float64)  # points to the next block
    lam1 = tilt[..., None]
    with np.errstate(divide="ignore"):
        log_one_minus = np.log(-np.expm1(-h * d))
    log_d = logaddexp(
        safe_log(jnp.sum(ww * v_w, -1)),
        logaddexp(-lam1 * h * d + log_one_minus + ts_next[..., None],
                      -(lam1 + 1.0) * h * d + d0_next[..., None]))
    log_a = logaddexp(safe_log(jnp.sum(ww * rho, -1)), -lam1 * h * d + ts_next[..., None])
    log_b = logaddexp(safe_log(jnp.sum(ww * rho_sigma, -1)),
                          -(lam1 + 1.0) * h * d + th_next[..., None])
    return log_d, log_a, log_b


def _read_slack(comp: TiltedComposition, grid: PldGrid) -> Array:
    """The composition's slack plus the reader's rounding (log-space sums over blocks whose
    exponents reach (tilt + 1) times the grid's span)."""
    eps = float(jnp.finfo(comp.values.dtype).eps)
    span = float(grid.upper - grid.lower + abs(grid.lower) + abs(grid.upper))
    return comp.slack + jax.lax.stop_gradient(
        8.0 * eps * ((comp.tilt + 1.0) * span + jnp.abs(comp.log_scale) + 4.0 * READ_BLOCK))


def tilted_epsilon(comp: TiltedComposition, grid: PldGrid, log_tail: Array, log_target: Array,
                   pessimistic: bool = True) -> Array:
    """The smallest eps >= 0 with delta(eps) <= e^log_target for a tilted composition plus the
    mass e^log_tail at +inf (inf when the grid's last loss still has delta above it).

    delta(x_i) = omega(inf) + e^(log_scale - tilt x_i) D_i, D_i = sum_{j > i} W_j
    rho^(j - i) (1 - sigma^(j - i)) (rho = e^-(tilt h), sigma = e^-h), is read at every block
    start (:func:`_block_tails`), then at the points of the block where it crosses the target;
    in the cell (x_j, x_(j+1)] below the last point above the target delta(eps) = A - e^eps B
    and the root is eps = log(A - delta) - log B, moved by a bound on its own rounding
    (towards the pessimistic side) and kept in the cell.
    """
    dtype = comp.values.dtype
    eps = float(jnp.finfo(dtype).eps)
    h, n = grid.interval, grid.size
    x = grid_losses(grid, dtype, pessimistic)
    sign = 1.0 if pessimistic else -1.0
    slack = sign * _read_slack(comp, grid)
    log_inf = logaddexp(comp.log_inf, log_tail) if pessimistic else comp.log_inf
    tilt, scale = comp.tilt, comp.log_scale
    tails = _block_tails(comp.values, tilt, h)
    nb = tails.log_ts.shape[-1]
    starts = x[np.arange(nb) * READ_BLOCK]
    at_starts = logaddexp(log_inf[..., None], scale[..., None] - tilt[..., None] * starts
                              + tails.log_d0 + slack[..., None])
    goal = log_target[..., None]
    above = jax.lax.stop_gradient(at_starts > goal)
    some = jnp.any(above, -1)
    block = jnp.where(some, nb - 1 - jnp.argmax(jnp.flip(above, -1), -1), 0)
    log_d, log_a, log_b = _block_points(tails, tilt, h, block)
    point = block[..., None] * READ_BLOCK + np.arange(READ_BLOCK + 1)
    inside = point <= n - 1
    xp = x[jnp.minimum(point, n - 1)]
    at_points = logaddexp(log_inf[..., None], scale[..., None] - tilt[..., None] * xp + log_d
                              + slack[..., None])
    above_p = jax.lax.stop_gradient((at_points > goal) & inside)  # k = 0: the block start
    k = READ_BLOCK + 1 - jnp.argmax(jnp.flip(above_p, -1), -1)  # the last point above, plus one
    j1 = block * READ_BLOCK + k  # the cell (x_(j1 - 1), x_j1]
    beyond = j1 > n - 1
    kk = jnp.minimum(k, READ_BLOCK)[..., None]
    x_hi = x[jnp.minimum(j1, n - 1)]
    x_lo = x[jnp.clip(j1 - 1, 0, n - 1)]
    la = logaddexp(log_inf, scale - tilt * x_hi + jnp.take_along_axis(log_a, kk, -1)[..., 0]
                       + slack)
    lb = scale - (tilt + 1.0) * x_hi + jnp.take_along_axis(log_b, kk, -1)[..., 0] + slack
    gap = jnp.minimum(log_target - la, 0.0)
    log_room = la + log1mexp(gap)  # log(A - delta)
    finite_b = jnp.isfinite(lb)
    root = log_room - jnp.where(finite_b, lb, 0.0)
    amplify = jnp.exp(jnp.minimum(la - log_room, 60.0))
    nudge = jax.lax.stop_gradient(eps * (
        8.0 * (jnp.abs(la) + jnp.abs(jnp.where(finite_b, lb, 0.0)) + jnp.abs(log_target)
               + jnp.abs(x_hi)) + 4.0 * amplify))
    root = jnp.where(finite_b & jnp.isfinite(log_room), root + sign * nudge, x_hi)
    root = jnp.clip(root, x_lo, x_hi)
    out = jnp.where(some, jnp.maximum(root, 0.0), 0.0)
    return jnp.where(some & beyond, jnp.inf, out)


def tilted_log_delta(comp: TiltedComposition, grid: PldGrid, log_tail: Array, eps: Array,
                     pessimistic: bool = True) -> Array:
    """log delta(eps) of a tilted composition plus the mass e^log_tail at +inf (no widening).

    With x' the first grid loss >= eps: delta(eps) = omega(inf) + e^(log_scale - tilt x')
    ((1 - e^(eps - x')) A' + e^(eps - x') D') (A', D' as in :func:`_block_points`), a sum of
    nonnegative terms."""
    dtype = comp.values.dtype
    h, n = grid.interval, grid.size
    x = grid_losses(grid, dtype, pessimistic)
    sign = 1.0 if pessimistic else -1.0
    slack = sign * _read_slack(comp, grid)
    log_inf = logaddexp(comp.log_inf, log_tail) if pessimistic else comp.log_inf
    tilt, scale = comp.tilt, comp.log_scale
    tails = _block_tails(comp.values, tilt, h)
    eps = jnp.asarray(eps, dtype)
    pos = jnp.ceil((eps - x[0]) / h)
    j = jnp.clip(jnp.where(jnp.isfinite(pos), pos, n), 0, n).astype(jnp.int32)
    # rounding of the index: the first loss >= eps
    j = jnp.where((j < n) & (x[jnp.minimum(j, n - 1)] < eps), j + 1, j)
    j = jnp.where((j > 0) & (j <= n) & (x[jnp.clip(j - 1, 0, n - 1)] >= eps), j - 1, j)
    beyond = j > n - 1
    jj = jnp.minimum(j, n - 1)
    block = jj // READ_BLOCK
    k = (jj % READ_BLOCK)[..., None]
    log_d, log_a, _ = _block_points(tails, tilt, h, block)
    ld = jnp.take_along_axis(log_d, k, -1)[..., 0]
    la = jnp.take_along_axis(log_a, k, -1)[..., 0]
    xp = x[jj]
    step = jnp.minimum(jnp.where(jnp.isfinite(eps), eps, 0.0) - xp, 0.0)  # <= 0
    inner = logaddexp(log1mexp(step) + la, step + ld)
    out = logaddexp(log_inf, scale - tilt * xp + inner + slack)
    return jnp.where(beyond, log_inf, out)


# --------------------------------------------------------------------------- public
def _same(plds: Sequence[PrivacyLossDistribution]) -> tuple[PldGrid, bool]:
    grids = {p.grid for p in plds}
    kinds = {p.pessimistic for p in plds}
    if len(grids) != 1:
        raise ValueError(f"PLDs on different grids cannot be composed: {sorted(map(repr, grids))}")
    if len(kinds) != 1:
        raise ValueError("pessimistic and optimistic PLDs cannot be composed together")
    return grids.pop(), kinds.pop()


def _direction(pld: PrivacyLossDistribution, which: int) -> PrivacyLossDistribution:
    dirs = pld.directions()
    return dirs[min(which, len(dirs) - 1)]


def compose(plds: Sequence[PrivacyLossDistribution], counts: Sequence[ArrayLike] | None = None,
            tilt: ArrayLike = 0.0) -> PrivacyLossDistribution:
    """The PLD of the sequential composition: ``counts[i]`` uses of ``plds[i]`` (default 1).

    Computed by FFT in one pass (module docstring). ``tilt`` (>= 0) sets where the result keeps
    its relative precision: around the losses whose tilted weight e^(tilt l) omega(l) is
    largest (0: the bulk; the accountants pick it from the target). Any tilt gives a valid
    bound. Mass above the grid goes to +inf (a Chernoff bound), the bound e^lower on the mass
    below it to the lowest loss.

    Example:
      >>> from ldpjax.accounting.pld_events import randomized_response_pld
      >>> grid = PldGrid(2.0**-6, -4.0, 4.0)
      >>> two = compose([randomized_response_pld(0.5, grid)], [2], tilt=2.0)
      >>> round(float(pld_delta(two, 1.0)), 2)  # 0.75^2 (1 - e^(1 - 2 log 3)) = 0.3926
      0.39
    """
    if not plds:
        raise ValueError("compose needs at least one PLD")
    grid, pessimistic = _same(plds)
    counts = [1] * len(plds) if counts is None else list(counts)
    if len(counts) != len(plds):
        raise ValueError(f"counts has {len(counts)} entries for {len(plds)} PLDs")
    for i, count in enumerate(counts):
        v.check_integer(f"counts[{i}]", count, 1)
    counts = [jnp.asarray(c) if v.is_concrete(c) else c for c in counts]
    return _compose_jit(list(plds), counts, tilt)


def _compose(plds: list[PrivacyLossDistribution], counts: list[Any], tilt: ArrayLike
             ) -> PrivacyLossDistribution:
    grid, pessimistic = plds[0].grid, plds[0].pessimistic
    n_dirs = 1 if all(p.symmetric for p in plds) else 2
    out = []
    for which in range(n_dirs):
        parts = [_direction(p, which) for p in plds]
        items = [(p.log_mass, p.log_inf, c) for p, c in zip(parts, counts, strict=True)]
        log_mass, log_inf = fft_compose(items, grid, tilt, pessimistic)
        if pessimistic:
            thetas = jnp.asarray(tilt, log_mass.dtype)[..., None] + jnp.asarray(
                [0.5, 1.0, 2.0, 4.0, 8.0, 16.0], log_mass.dtype)
            log_inf = logaddexp(log_inf, upper_tail_bound(items, grid, thetas))
            low = lower_tail_bound(items, grid)[..., None]
            first_point = jnp.arange(grid.size) == 0
            log_mass = jnp.where(first_point, logaddexp(log_mass, low), log_mass)
        log_void = log1mexp(sum(jnp.asarray(c, log_mass.dtype) * log1mexp(p.log_void)
                                for p, c in zip(parts, counts, strict=True)))
        out.append(PrivacyLossDistribution(log_mass, log_inf, log_void, grid, pessimistic))
    return out[0] if n_dirs == 1 else dataclasses.replace(out[0], add=out[1])


_compose_jit = jax.jit(_compose)


def self_compose(pld: PrivacyLossDistribution, count: ArrayLike,
                 tilt: ArrayLike = 0.0) -> PrivacyLossDistribution:
    """``count`` uses of ``pld`` (the count's FFT power; a traced count works).

    Example:
      >>> from ldpjax.accounting.pld_events import pure_dp_pld
      >>> grid = PldGrid(2.0**-6, -8.0, 8.0)
      >>> three = self_compose(pure_dp_pld(1.0, grid), 3, tilt=2.0)
      >>> round(float(pld_delta(three, 1.0)), 2)  # sigmoid(1)^3 (1 - e^-2) = 0.338
      0.34
    """
    return compose([pld], [count], tilt)


__all__ = [
    "READ_BLOCK",
    "TiltedComposition",
    "compose",
    "cumulant",
    "fft_compose",
    "lower_tail_bound",
    "self_compose",
    "tilted_compose",
    "tilted_epsilon",
    "tilted_log_delta",
    "upper_tail_bound",
]
