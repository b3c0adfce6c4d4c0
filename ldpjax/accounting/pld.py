"""Privacy loss distributions (PLDs) on a fixed grid, composed by FFT, in JAX.

A pair of output distributions (P, Q) of a mechanism on two neighbouring inputs has the
privacy loss L = log(P(o) / Q(o)) of an outcome o ~ P; its distribution omega (the PLD) gives the
tight profile (Meiser & Mohammadi, "Tight on Budget? Tight Bounds for r-Fold Approximate
Differential Privacy", CCS 2018)

    delta(eps) = omega(+inf) + sum_{l > eps} (1 - e^(eps - l)) omega(l),

and the PLD of a composition is the convolution of the parts' PLDs (Koskela, Jalko & Honkela,
"Computing Tight Differential Privacy Guarantees Using FFT", AISTATS 2020). Here a PLD is a
:class:`PrivacyLossDistribution`: the log masses at the losses of a static :class:`PldGrid`
(h (first + j), j = 0..n-1; the grid's lower end <= 0 < its upper end), the log mass at +inf,
and the log mass of the lower distribution where the upper one is 0 (loss -inf, needed by
subsampling). An asymmetric PLD (a subsampled release) carries its second direction in ``add``;
delta is the maximum over the directions (dp_accounting's convention).

Discretisation (the constructors are in :mod:`ldpjax.accounting.pld_events`). *Pessimistic*:
the mass at a loss l between grid points x_j < l <= x_(j+1) is split between them so that
both the P-mass and the Q-mass (= P-mass times e^-l) are kept — Doroshenko, Ghazi, Kamath, Kumar
& Manurangsi, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss
Distributions", PETS 2022 — splitting an outcome in two can only make a pair easier to tell
apart, so every hockey-stick divergence grows; mass above the top splits between the top and
+inf the same way; mass below the bottom moves up to it. *Optimistic* (the error bar): mass is
rounded down to x_j; mass above the top is put on it; mass below the bottom is dropped.

Composition by FFT (exponential tilting, the error bound added to the masses, Chernoff
tails) is in :mod:`ldpjax.accounting.pld_fft`; this module holds the grid, the record, the
discretisation helpers and the reading of delta and epsilon off a PLD's masses. A
discretised single release is built in log space and widened by ``MASS_SLACK`` eps
(relative) per mass; a final relative safety factor 1 + 1024 eps (``DELTA_SLACK``) on delta
covers the summations.

Everything here is pure JAX: ``jit``, ``vmap`` (leading batch axes broadcast) and ``grad``
(masses on a fixed grid are smooth in the parameters; the error terms carry no gradient).
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting.gdp import log_probability
from ldpjax.types import Array, ArrayLike

#: Per-output FFT error, in units of log2(M) eps ||x||_1 (measured: at most 0.17).
FFT_ERROR_CONSTANT = 4.0
#: Relative widening of every discretised mass, in units of the dtype's eps.
MASS_SLACK = 64.0
#: Relative widening of delta, in units of the dtype's eps.
DELTA_SLACK = 1024.0
#: The largest grid (number of losses) accepted.
MAX_GRID_SIZE = 2**24


def fft_length(n: int) -> int:
    """The smallest even 2^a 3^b 5^c >= n (a fast length for XLA's FFTs).

    Example:
      >>> fft_length(49), fft_length(1000), fft_length(1025)
      (50, 1000, 1080)
    """
    best = 1 << max(int(n) - 1, 1).bit_length()
    p3 = 1
    while p3 < best:
        p35 = p3
        while p35 < best:
            m = p35 * 2
            while m < n:
                m *= 2
            best = min(best, m)
            p35 *= 5
        p3 *= 3
    return best


@dataclasses.dataclass(frozen=True)
class PldGrid:
    """The losses a PLD lives on: h (first + j), j = 0..size-1, from ``lower`` <= 0 up to
    ``upper`` > 0 (``lower`` rounded down, ``upper`` up, to multiples of ``interval`` h).

    Static (hashable): a sweep over budgets on one grid compiles once. A power-of-two interval
    (2^-13 is about 1.2e-4) keeps every loss exact in binary floating point; a size that is an
    even 2^a 3^b 5^c (:func:`fft_length`) is the FFT's own length.

    Example:
      >>> g = PldGrid(interval=2.0**-4, lower=-1.0, upper=2.0)
      >>> g.first, g.size, g.fft_size
      (-16, 49, 50)
    """

    interval: float = 2.0**-13
    lower: float = -8.0
    upper: float = 64.0

    def __post_init__(self) -> None:
        h, lo, hi = self.interval, self.lower, self.upper
        for name, x in (("interval", h), ("lower", lo), ("upper", hi)):
            if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)):
                raise ValueError(f"PldGrid.{name} must be a Python number; got {x!r}")
        if not (math.isfinite(h) and h > 0):
            raise ValueError(f"PldGrid.interval must be in (0, inf); got {h!r}")
        if not (math.isfinite(lo) and lo <= 0):
            raise ValueError(f"PldGrid.lower must be in (-inf, 0]; got {lo!r}")
        if not (math.isfinite(hi) and hi > 0):
            raise ValueError(f"PldGrid.upper must be in (0, inf); got {hi!r}")
        for name, x in (("interval", h), ("lower", lo), ("upper", hi)):
            object.__setattr__(self, name, float(x))
        if self.size > MAX_GRID_SIZE:
            raise ValueError(
                f"PldGrid holds {self.size} losses ([{lo}, {hi}] at interval {h}); at most "
                f"{MAX_GRID_SIZE}: use a larger interval or a shorter range")

    @property
    def first(self) -> int:
        """Index of the lowest loss (lower / interval, rounded down)."""
        return int(math.floor(self.lower / self.interval + 1e-9))

    @property
    def last(self) -> int:
        return int(math.ceil(self.upper / self.interval - 1e-9))

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    @property
    def fft_size(self) -> int:
        """The FFT length: the smallest even 2^a 3^b 5^c >= ``size`` (the composition wraps
        around it: see :func:`tilted_compose`)."""
        return fft_length(self.size)

    def losses(self, dtype, up: bool = True) -> np.ndarray:
        """The grid's losses in ``dtype``, each rounded up (``up``) or down to it."""
        exact = self.interval * np.arange(self.first, self.last + 1, dtype=np.float64)
        out = exact.astype(dtype)
        wrong = out < exact if up else out > exact
        return np.where(wrong, np.nextafter(out, np.inf if up else -np.inf, dtype=out.dtype), out)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class PrivacyLossDistribution:
    """A discretised privacy loss distribution (a pytree; ``grid`` and ``pessimistic`` static).

    Attributes:
      log_mass: log masses at the grid's losses, shape (..., grid.size).
      log_inf: log of the mass at loss +inf (outcomes only the upper distribution has).
      log_void: log of the lower distribution's mass where the upper one is 0 (loss -inf; an
        upper bound).
      grid: the :class:`PldGrid`.
      pessimistic: True for an upper bound on every hockey-stick divergence, False for the
        optimistic (lower) estimate.
      add: the second direction of an asymmetric PLD (``None``: symmetric).

    Example:
      >>> from ldpjax.accounting.pld_events import randomized_response_pld
      >>> pld = randomized_response_pld(0.5, PldGrid(2.0**-6, -2.0, 2.0))
      >>> round(float(pld_delta(pld, 0.0)), 3)  # total variation r of RR at rate r = 0.5
      0.5
    """

    log_mass: Array
    log_inf: Array
    log_void: Array
    grid: PldGrid = dataclasses.field(metadata=dict(static=True))
    pessimistic: bool = dataclasses.field(default=True, metadata=dict(static=True))
    add: PrivacyLossDistribution | None = None

    @property
    def symmetric(self) -> bool:
        return self.add is None

    def directions(self) -> list[PrivacyLossDistribution]:
        """[remove, add] (one entry for a symmetric PLD), each a symmetric PLD."""
        own = dataclasses.replace(self, add=None)
        return [own] if self.add is None else [own, self.add]


# --------------------------------------------------------------------------- helpers
def log1mexp(x: Array) -> Array:
    """log(1 - e^x) for x <= 0 (-inf at 0, 0 at -inf), accurate at both ends; no NaN gradient."""
    x = jnp.minimum(x, 0.0)
    near = x > -0.6931471805599453
    safe_near = jnp.where(near & (x < 0), x, -1.0)
    safe_far = jnp.where(near, -1.0, x)
    out = jnp.where(near, jnp.log(-jnp.expm1(safe_near)), jnp.log1p(-jnp.exp(safe_far)))
    return jnp.where(x == 0, -jnp.inf, out)


def logaddexp(a: Array, b: Array) -> Array:
    """log(e^a + e^b), with a zero (not NaN) gradient where both are -inf (``jnp.logaddexp``'s
    gradient is NaN there, and empty grid cells are -inf)."""
    top = jnp.maximum(a, b)
    finite = jnp.isfinite(top)
    shift = jax.lax.stop_gradient(jnp.where(finite, top, 0.0))
    a_safe, b_safe = jnp.where(finite, a, 0.0), jnp.where(finite, b, 0.0)
    out = shift + jnp.log(jnp.exp(a_safe - shift) + jnp.exp(b_safe - shift))
    return jnp.where(finite, out, top)


def cumlogsumexp(x: Array, axis: int = -1, reverse: bool = False) -> Array:
    """log of the cumulative sums of e^x along ``axis`` (``reverse``: from the end), as a
    tree of :func:`logaddexp` (``jax.lax.associative_scan``): no NaN gradient at -inf, and on
    CPU an O(n log n) program where ``jax.lax.cumlogsumexp`` lowers to an O(n^2) window."""
    return jax.lax.associative_scan(logaddexp, x, axis=axis % x.ndim, reverse=reverse)


def safe_log(x: Array) -> Array:
    """log x for x >= 0 (-inf at 0), with a zero (not NaN) gradient at 0."""
    positive = x > 0
    return jnp.where(positive, jnp.log(jnp.where(positive, x, 1.0)), -jnp.inf)


def logsumexp(x: Array, axis: int = -1) -> Array:
    """log sum e^x along ``axis``: -inf for an all -inf slice, no NaN gradient there."""
    top = jax.lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    total = jnp.sum(jnp.exp(x - top), axis=axis)
    return safe_log(total) + jnp.squeeze(top, axis)


def log_scatter(index: Array, log_value: Array, size: int) -> Array:
    """log of the sums of e^log_value by target ``index`` (last axis), each target's sum
    normalised by its own largest term (no cross-target underflow). Batch axes lead."""

    def one(idx, val):
        idx = idx.astype(jnp.int32)
        top = jax.ops.segment_max(val, idx, num_segments=size)
        top = jax.lax.stop_gradient(jnp.where(jnp.isfinite(top), top, 0.0))
        total = jax.ops.segment_sum(jnp.exp(val - top[idx]), idx, num_segments=size)
        return safe_log(total) + top

    index, log_value = jnp.broadcast_arrays(index, log_value)
    batch = index.shape[:-1]
    flat = jax.vmap(one)(index.reshape(-1, index.shape[-1]),
                         log_value.reshape(-1, index.shape[-1]))
    return flat.reshape(*batch, size)


def grid_losses(grid: PldGrid, dtype, pessimistic: bool = True) -> Array:
    """The grid's losses (an in-graph iota, not a constant), rounded towards the pessimistic
    side: exact for a power-of-two interval, one ulp up (down) otherwise."""
    dtype = jnp.dtype(dtype)
    x = jnp.arange(grid.first, grid.last + 1, dtype=dtype) * jnp.asarray(grid.interval, dtype)
    if math.frexp(grid.interval)[0] != 0.5:
        x = jnp.nextafter(x, jnp.asarray(jnp.inf if pessimistic else -jnp.inf, dtype))
    return x


def widen(log_mass: Array, pessimistic: bool, units: float = MASS_SLACK) -> Array:
    """Masses widened (pessimistic) or narrowed by ``units`` eps, relative."""
    eps = float(jnp.finfo(log_mass.dtype).eps)
    return log_mass + (1.0 if pessimistic else -1.0) * math.log1p(units * eps)


# --------------------------------------------------------------------------- discretisation
def _weights(t: Array, h: float) -> tuple[Array, Array]:
    """log of the connect-the-dots shares of a loss at x_j + t (0 <= t <= h): (left, right).

    left = (e^-t - e^-h) / (1 - e^-h), right = (1 - e^-t) / (1 - e^-h): they sum to 1 and keep
    the Q-mass (left e^-x_j + right e^-x_(j+1) = e^-(x_j + t)).
    """
    norm = math.log(-math.expm1(-h))
    rest = h - t
    pos_t, pos_rest = t > 0, rest > 0
    left = -t + jnp.where(pos_rest, jnp.log(-jnp.expm1(-jnp.where(pos_rest, rest, h))), -jnp.inf)
    right = jnp.where(pos_t, jnp.log(-jnp.expm1(-jnp.where(pos_t, t, h))), -jnp.inf)
    return left - norm, right - norm


def discretise_atoms(grid: PldGrid, losses: Array, log_p: Array, pessimistic: bool = True,
                     ) -> tuple[Array, Array, Array]:
    """Point masses e^log_p at ``losses`` (last axis; +inf allowed) on the grid.

    Returns (log_mass (..., size), log_inf (...), log_void (...)): pessimistic by connect the
    dots (module docstring), optimistic by rounding down. A computed loss is first moved up
    (down) by 4 eps of its size, so its own rounding can only make the result more pessimistic
    (optimistic).
    """
    losses, log_p = jnp.broadcast_arrays(losses, log_p)
    dtype = losses.dtype
    x = grid_losses(grid, dtype, pessimistic)
    h, n = grid.interval, grid.size
    eps = float(jnp.finfo(dtype).eps)
    finite = jnp.isfinite(losses)
    log_p = jnp.where(losses == -jnp.inf, -jnp.inf, log_p)  # loss -inf: no upper mass
    loss = jnp.where(finite, losses, 0.0)
    loss = loss + (1.0 if pessimistic else -1.0) * 4.0 * eps * jnp.abs(loss)
    top, bottom = x[-1], x[0]
    above = (losses == jnp.inf) | (finite & (loss > top))
    below = finite & (loss < bottom)
    cell = jnp.floor((loss - bottom) / h)
    j = jnp.clip(jnp.where(jnp.isnan(cell), 0.0, cell), 0, n - 2).astype(jnp.int32)
    t = jnp.clip(loss - x[j], 0.0, h)
    nothing = jnp.full_like(log_p, -jnp.inf)
    if pessimistic:
        left, right = _weights(t, h)
        over = jnp.where(finite, top - loss, -jnp.inf)  # share kept at the top: e^(top - l)
        first_idx = jnp.where(above, n - 1, jnp.where(below, 0, j))
        first_val = log_p + jnp.where(above, over, jnp.where(below, 0.0, left))
        second_val = jnp.where(above | below, nothing, log_p + right)
        inf_val = jnp.where(above, log_p + log1mexp(jnp.minimum(over, 0.0)), nothing)
        void_val = jnp.where(below, log_p - loss + log1mexp(loss - bottom), nothing)
    else:
        first_idx = jnp.where(above, n - 1, j)
        first_val = jnp.where(below | (above & ~finite), nothing, log_p)
        second_val = nothing
        inf_val = jnp.where(losses == jnp.inf, log_p, nothing)
        void_val = nothing
    index = jnp.concatenate([first_idx, jnp.minimum(j + 1, n - 1)], axis=-1)
    value = jnp.concatenate([first_val, second_val], axis=-1)
    log_mass = widen(log_scatter(index, value, n), pessimistic)
    return log_mass, logsumexp(inf_val), logsumexp(void_val)


def cells_to_points(left: Array, right: Array) -> Array:
    """Point masses from per-cell shares: point j gets cell j's left share and cell j-1's
    right share (cells on the last axis, one fewer than points)."""
    pad = jnp.full(left.shape[:-1] + (1,), -jnp.inf, left.dtype)
    return logaddexp(jnp.concatenate([left, pad], -1), jnp.concatenate([pad, right], -1))



# --------------------------------------------------------------------------- profile
_TAIL_BLOCK = 256


def tail_logsumexp(x: Array) -> Array:
    """log sum_{j >= i} e^x_j for every i (last axis): linear sums within blocks of 256, each
    scaled by its own largest term, joined by a log-space scan over the blocks. (A term below
    the float range next to its block's largest, 1e-38 of it in float32, is left out: far
    below the declared widening.)"""
    n = x.shape[-1]
    pad = -n % _TAIL_BLOCK
    xb = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)], constant_values=-jnp.inf)
    xb = xb.reshape(*x.shape[:-1], -1, _TAIL_BLOCK)
    top = jax.lax.stop_gradient(jnp.max(xb, axis=-1, keepdims=True))
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    within = jax.lax.cumsum(jnp.exp(xb - top), axis=xb.ndim - 1, reverse=True)
    log_within = safe_log(within) + top
    totals = log_within[..., 0]  # each block's own sum
    after = cumlogsumexp(totals, axis=-1, reverse=True)
    after = jnp.concatenate([after[..., 1:], jnp.full_like(after[..., :1], -jnp.inf)], -1)
    out = logaddexp(log_within, after[..., None])
    return out.reshape(*x.shape[:-1], -1)[..., :n]


def log_delta_at(log_mass: Array, log_inf: Array, x: Array, eps: Array) -> Array:
    """log delta(eps) = log(omega(inf) + sum_{l > eps} (1 - e^(eps - l)) omega(l))."""
    gap = jnp.asarray(eps)[..., None] - x
    weight = jnp.where(gap < 0, log1mexp(jnp.minimum(gap, 0.0)), -jnp.inf)
    return logaddexp(log_inf, logsumexp(log_mass + weight))


def epsilon_at(log_mass: Array, log_inf: Array, x: Array, log_target: Array) -> Array:
    """The smallest eps >= 0 with delta(eps) <= e^log_target (inf when omega(inf) exceeds it).

    delta is A_(j+1) - e^eps B_(j+1) on (x_j, x_(j+1)], with A_i = omega(inf) + sum_{l >= x_i}
    omega(l) and B_i = sum_{l >= x_i} e^-l omega(l): the root is eps = log(A - delta) - log B in
    the last cell whose left end still has delta > target (found in closed form; its gradient
    is the implicit-function one, d eps = (dA - d delta - e^eps dB) / (A - delta)).
    """
    log_target = jnp.asarray(log_target)
    batch = jnp.broadcast_shapes(log_mass.shape[:-1], jnp.shape(log_inf), log_target.shape)
    log_mass = jnp.broadcast_to(log_mass, batch + log_mass.shape[-1:])
    log_inf = jnp.broadcast_to(log_inf, batch)
    log_target = jnp.broadcast_to(log_target, batch)
    n = log_mass.shape[-1]
    tail_a = tail_logsumexp(log_mass)
    tail_b = tail_logsumexp(log_mass - x)
    none = jnp.full(batch + (1,), -jnp.inf, log_mass.dtype)
    log_a = logaddexp(log_inf[..., None], jnp.concatenate([tail_a[..., 1:], none], -1))
    log_b = jnp.concatenate([tail_b[..., 1:], none], -1)
    at_points = log_a + log1mexp(jnp.minimum(x + log_b - log_a, 0.0))  # delta(x_j)
    above = jax.lax.stop_gradient(at_points > log_target[..., None])
    last = n - 1 - jnp.argmax(jnp.flip(above, -1), axis=-1)  # last j with delta(x_j) > target
    some = jnp.any(above, axis=-1)
    j = jnp.where(some, last, 0)[..., None]
    la = jnp.take_along_axis(log_a, j, -1)[..., 0]
    lb = jnp.take_along_axis(log_b, j, -1)[..., 0]
    lo = x[jnp.minimum(j[..., 0], n - 1)]
    hi = x[jnp.minimum(j[..., 0] + 1, n - 1)]
    gap = jnp.minimum(log_target - la, 0.0)
    root = la + log1mexp(gap) - jnp.where(jnp.isfinite(lb), lb, 0.0)
    root = jnp.clip(jnp.where(jnp.isfinite(lb), root, hi), lo, hi)
    out = jnp.where(some, jnp.maximum(root, 0.0), 0.0)
    return jnp.where(some & (last == n - 1), jnp.inf, out)


def pld_delta(pld: PrivacyLossDistribution, eps: ArrayLike) -> Array:
    """delta(eps) of a PLD: the maximum over its directions of
    omega(inf) + sum_{l > eps} (1 - e^(eps - l)) omega(l), widened by 1 + 1024 eps.

    Example:
      >>> from ldpjax.accounting.pld_events import pure_dp_pld
      >>> pld = pure_dp_pld(1.0, PldGrid(2.0**-6, -2.0, 2.0))
      >>> round(float(pld_delta(pld, 0.5)), 3)  # (e - e^0.5) / (1 + e)
      0.288
    """
    v.check_range("eps", eps, 0.0, math.inf)
    return _pld_delta_jit(pld, jnp.asarray(eps, jnp.result_type(pld.log_mass, eps)))


@jax.jit
def _pld_delta_jit(pld: PrivacyLossDistribution, eps: Array) -> Array:
    x = grid_losses(pld.grid, eps.dtype, pld.pessimistic)
    out = [log_delta_at(d.log_mass, d.log_inf, x, eps) for d in pld.directions()]
    log_delta = widen(jnp.maximum(*out) if len(out) > 1 else out[0], pld.pessimistic, DELTA_SLACK)
    return v.valid_or_nan(eps >= 0, jnp.minimum(jnp.exp(log_delta), 1.0), eps)


def pld_epsilon(pld: PrivacyLossDistribution, delta: ArrayLike) -> Array:
    """The smallest eps >= 0 with pld_delta(pld, eps) <= delta (the maximum over directions).

    A concrete delta is logged in float64, so delta = 1e-300 works in float32.

    Example:
      >>> from ldpjax.accounting.pld_events import pure_dp_pld
      >>> pld = pure_dp_pld(1.0, PldGrid(2.0**-6, -2.0, 2.0))
      >>> round(float(pld_epsilon(pld, 0.288)), 2)
      0.5
    """
    v.check_range("delta", delta, 0.0, 1.0, high_open=True)
    dtype = jnp.result_type(pld.log_mass, float)
    return _pld_epsilon_jit(pld, jnp.asarray(log_probability(delta, dtype), dtype))


@jax.jit
def _pld_epsilon_jit(pld: PrivacyLossDistribution, log_target: Array) -> Array:
    dtype = log_target.dtype
    log_target = widen(log_target, not pld.pessimistic, DELTA_SLACK)
    x = grid_losses(pld.grid, dtype, pld.pessimistic)
    out = [epsilon_at(d.log_mass, d.log_inf, x, log_target) for d in pld.directions()]
    eps = jnp.maximum(*out) if len(out) > 1 else out[0]
    return v.valid_or_nan(log_target < 0, eps, log_target)

