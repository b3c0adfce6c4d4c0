"""The PLD accountant of an event: epsilon(delta) and delta(eps) of any composition, by FFT.

For an event whose parts all have a privacy loss distribution (:mod:`ldpjax.accounting.pld_events`;
sequential compositions flattened into (part, uses)), :func:`pld_event_epsilon` and
:func:`pld_event_delta` compose the parts' PLDs on a grid (:mod:`ldpjax.accounting.pld`) and
read the target off the composition; the pessimistic result is an upper bound, the optimistic
one its error bar.

Tilt. The composition keeps its relative precision around the losses its tilt favours, so the
tilt follows the target: for epsilon at delta, the lam whose Chernoff exponent
K(lam) - lam K'(lam) equals log delta (K = sum_i k_i K_i, the cumulant generating function of
the composed loss; the tilted law is then centred on the Chernoff epsilon); for delta at eps,
the lam with K'(lam) = eps. Both are solved on the PLDs summed in blocks of the grid (at most
1024 blocks) and carry no gradient; any tilt gives a valid bound.

The grid. ``grid=None`` with concrete arguments: :func:`choose_grid` sizes it from the event
(its parts' PLDs on a coarse probe grid give K, and the grid's top is set where the Chernoff
bound of the mass beyond it falls below 1e-3 times the target delta); interval 2^-13 in float64
and 2^-8 in float32 (where a coarser grid keeps the FFT's rounding floor small next to the
masses of lattice-like compositions, such as many randomized responses), coarsened by powers
of two so that the grid holds at most 2^22 losses. Its size is a power of two and its lower
end a power-of-two fraction of its length, so sweeps reuse few compiled grids. Traced
arguments (under ``jit``/``vmap``/``grad``): ``grid`` if given, else :data:`DEFAULT_GRID`.

The grid holds the composition when the Chernoff bound of its mass above the grid's top is at
most 1% of the target delta (epsilon) or of the delta found (delta); otherwise a concrete call
raises ``ValueError`` naming the grid and the needed upper end, and a traced one gives NaN.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import composition as C
from ldpjax.accounting import events as E
from ldpjax.accounting import protocol as p
from ldpjax.accounting.gdp import log_probability
from ldpjax.accounting.pld import (
    DELTA_SLACK,
    PldGrid,
    cumlogsumexp,
    epsilon_at,
    grid_losses,
    log_delta_at,
    logsumexp,
    safe_log,
    widen,
)
from ldpjax.accounting.pld_events import has_release_pld, release_pld, sequential_items
from ldpjax.accounting.pld_fft import cumulant, tilted_compose, tilted_epsilon, tilted_log_delta
from ldpjax.types import Array, ArrayLike

#: The grid used when the arguments are traced and no grid is given: losses in [-16, 112)
#: at interval 2^-10 (2^17 of them).
DEFAULT_GRID = PldGrid(2.0**-10, -16.0, 112.0 - 2.0**-10)
#: Share of the target delta the mass above the grid may reach.
TAIL_SHARE = 0.01
_BLOCKS = 256
_MAX_AUTO_SIZE = 2**22
_PROBE = PldGrid(2.0**-5, -512.0, 2048.0)


def _merged_parts(event: Any, dtype) -> list[tuple[Any, Any]]:
    """The (release, uses) of a sequential composition with every Gaussian part (``gdp_mu``)
    merged into one ``GaussianEvent(sqrt(sum_i k_i mu_i^2))``: mu-GDP composes exactly (Dong,
    Roth & Su 2019, Cor. 3.3), so one discretisation replaces many."""
    gauss, rest = [], []
    for part, count in sequential_items(event):
        mu = None if hasattr(part, "privacy_loss") else p.view(part, "gdp_mu", dtype)
        if mu is None:
            rest.append((part, count))
        else:
            gauss.append((jnp.asarray(mu, dtype), count))
    if len(gauss) == 1 and gauss[0][1] is None:
        return [(E.GaussianEvent(gauss[0][0]), None), *rest]
    if gauss:
        top = jax.lax.stop_gradient(functools.reduce(jnp.maximum, [m for m, _ in gauss]))
        scale = jnp.where(jnp.isfinite(top) & (top > 0), top, 1.0)
        total = sum((1.0 if c is None else jnp.asarray(c, dtype)) * jnp.square(m / scale)
                    for m, c in gauss)
        mu = jnp.where(jnp.isinf(top), jnp.inf, jnp.sqrt(total) * scale)
        rest = [(E.GaussianEvent(mu), None), *rest]
    return rest


def _items(event: Any, grid: PldGrid, pessimistic: bool, dtype) -> list[list[tuple]]:
    """Per direction (one or two), the list of (log_mass, log_inf, count) of the parts (the
    Gaussian parts merged, :func:`_merged_parts`)."""
    parts = []
    for part, count in _merged_parts(event, dtype):
        pld = release_pld(part, grid, pessimistic, dtype)
        if pld is None:
            raise NotImplementedError(f"no privacy loss distribution for {p.name_of(part)}")
        parts.append((pld, count))
    n_dirs = 1 if all(pld.symmetric for pld, _ in parts) else 2
    out = []
    for which in range(n_dirs):
        row = []
        for pld, count in parts:
            d = pld.directions()[min(which, len(pld.directions()) - 1)]
            row.append((d.log_mass, d.log_inf, count))
        out.append(row)
    return out


def _block_layout(grid: PldGrid) -> tuple[int, int, np.ndarray, np.ndarray]:
    """(width, blocks, midpoints, right ends) of the coarse blocks of ``grid`` (float64)."""
    n = grid.size
    width = -(-n // _BLOCKS)
    blocks = -(-n // width)
    x = grid.interval * np.arange(grid.first, grid.first + blocks * width, dtype=np.float64)
    x = np.minimum(x, grid.interval * grid.last).reshape(blocks, width)
    return width, blocks, x.mean(-1), x.max(-1)


def _coarse(log_mass: Array, grid: PldGrid) -> tuple[Array, Array, Array]:
    """The PLD in at most _BLOCKS blocks: (log mass, mean loss, loss variance) of each (batch
    axes lead), so that a block's cumulant generating function is log m + t mean + t^2 var / 2
    to second order (exact for the narrow PLD of one release that falls in one block)."""
    width, blocks, mids, _ = _block_layout(grid)
    n = log_mass.shape[-1]
    lm = jnp.pad(log_mass, [(0, 0)] * (log_mass.ndim - 1) + [(0, blocks * width - n)],
                 constant_values=-jnp.inf)
    lm = lm.reshape(*lm.shape[:-1], blocks, width)
    offsets = grid.interval * np.arange(grid.first, grid.first + blocks * width, dtype=np.float64)
    offsets = (offsets.reshape(blocks, width) - mids[:, None]).astype(log_mass.dtype)
    top = jnp.max(lm, -1, keepdims=True)
    top = jnp.where(jnp.isfinite(top), top, 0.0)
    w = jnp.exp(lm - top)
    s0 = jnp.sum(w, -1)
    safe = jnp.where(s0 > 0, s0, 1.0)
    mean = jnp.sum(w * offsets, -1) / safe
    var = jnp.maximum(jnp.sum(w * offsets * offsets, -1) / safe - mean * mean, 0.0)
    return safe_log(s0) + top[..., 0], mean + jnp.asarray(mids, log_mass.dtype), var


def _cgf(coarse: list[tuple[Array, Array, Array, Any]], lam: Array
         ) -> tuple[Array, Array, Array]:
    """(K(lam), K'(lam), K''(lam)) of the composition from its parts' coarse PLDs."""
    k_total = slope = curve = 0.0
    for lm, mean, var, count in coarse:
        lam_b = lam[..., None]
        z = lm + lam_b * mean + 0.5 * lam_b * lam_b * var
        kk = logsumexp(z)
        weights = jnp.exp(z - jnp.where(jnp.isfinite(kk), kk, 0.0)[..., None])
        c = jnp.asarray(1 if count is None else count, lm.dtype)
        local = mean + lam_b * var
        m1 = jnp.sum(weights * local, axis=-1)
        k_total = k_total + c * kk
        slope = slope + c * m1
        curve = curve + c * jnp.sum(weights * (var + jnp.square(local - m1[..., None])), axis=-1)
    return k_total, slope, curve


def _cgf_many(coarse: list[tuple[Array, Array, Any]], thetas: Array) -> Array:
    """K(theta) for a last axis of thetas (batch axes lead)."""
    total = 0.0
    for lm, xc, count in coarse:
        c = jnp.asarray(1 if count is None else count, lm.dtype)
        total = total + c[..., None] * logsumexp(lm[..., None, :] + thetas[..., None] * xc)
    return total


def _solve(fun, target: Array, increasing: bool, lo: float = 1e-3, hi: float = 1e4,
           steps: int = 20) -> Array:
    """lam in [lo, hi] with fun(lam) = target by bisection in log lam (monotone fun; 20 steps
    leave a relative width of 1e7^(2^-20): the tilt needs no precision, any tilt is valid)."""
    a = jnp.full_like(target, math.log(lo))
    b = jnp.full_like(target, math.log(hi))

    def body(_, ab):
        a, b = ab
        mid = 0.5 * (a + b)
        below = (fun(jnp.exp(mid)) < target) == increasing
        return jnp.where(below, mid, a), jnp.where(below, b, mid)

    a, b = jax.lax.fori_loop(0, steps, body, (a, b))
    return jnp.exp(0.5 * (a + b))


def _tilts(items: list[tuple], grid: PldGrid, dtype, log_target=None, eps=None):
    """(tilt, theta) for one direction, solved on the parts summed in blocks (at their
    midpoints); no gradient. The tilt follows the target (module docstring); theta is the
    Chernoff exponent of the grid's top, K'(theta) = top, at which the accountant bounds the
    composed mass above the grid (:func:`_composed`)."""
    coarse = [(*_coarse(jax.lax.stop_gradient(lm), grid), c) for lm, _, c in items]
    goal = log_target if log_target is not None else eps
    batch = jnp.broadcast_shapes(jnp.shape(goal), *[lm.shape[:-1] for lm, _, _ in items])
    goal = jnp.broadcast_to(jax.lax.stop_gradient(jnp.asarray(goal, dtype)), batch)
    if log_target is not None:
        def chernoff(lam):
            k, slope, _ = _cgf(coarse, lam)
            return k - lam * slope

        tilt = _solve(chernoff, goal, increasing=False)
        # a lattice-like composition near its largest loss would take the Chernoff tilt to its
        # limit, where the FFT's rounding floor, untilted, swamps the losses just below the
        # tilted mass: stop where the tilted law still spreads over 8 grid intervals
        spread = (8.0 * grid.interval) ** 2
        cap = _solve(lambda lam: _cgf(coarse, lam)[2], jnp.full_like(goal, spread),
                     increasing=False)
        tilt = jnp.minimum(tilt, cap)
    else:
        tilt = _solve(lambda lam: _cgf(coarse, lam)[1], goal, increasing=True)
        tilt = jnp.where(_cgf(coarse, jnp.zeros_like(goal))[1] >= goal, 0.0, tilt)
    top = float(grid.losses(np.dtype(dtype))[-1])
    theta = _solve(lambda lam: _cgf(coarse, lam)[1], jnp.full_like(goal, top), increasing=True)
    return tilt, theta


def _needed_upper(cgf, log_tail: Array) -> Array:
    """The top at which the Chernoff bound of the mass above it is e^log_tail, from the
    cumulant generating function ``cgf(theta)`` (vectorised over a last axis of thetas;
    minimised over 55 thetas in [2^-10, 2^8])."""
    thetas = jnp.asarray(np.geomspace(2.0**-10, 2.0**8, 55), log_tail.dtype)
    k = cgf(jnp.broadcast_to(thetas, jnp.shape(log_tail) + thetas.shape))
    return jnp.min((k - log_tail[..., None]) / thetas, axis=-1)


def _single(items: list[tuple]) -> bool:
    return len(items) == 1 and items[0][2] is None


def _composed(items, grid, pessimistic, dtype, log_target=None, eps=None):
    """(tilted composition, log of the bound on its mass above the grid) of one direction.

    The bound is Chernoff's, sum_(l > top) omega(l) <= e^(K(t) - t top) with K = sum_i k_i K_i,
    at t = theta (:func:`_tilts`; each K_i(theta) summed over the whole grid, losses rounded
    up) and at t = tilt, where K(tilt) is the composition's own normaliser (plus its slack)."""
    items = [(lm, li, 1 if c is None else c) for lm, li, c in items]
    tilt, theta = _tilts(items, grid, dtype, log_target, eps)
    comp = tilted_compose(items, grid, tilt, pessimistic)
    if not pessimistic:
        return comp, jnp.full(jnp.broadcast_shapes(comp.log_inf.shape, jnp.shape(tilt)),
                              -jnp.inf, comp.log_inf.dtype)
    x = grid_losses(grid, dtype)
    top = float(grid.losses(np.dtype(dtype))[-1])
    k_theta = sum(jnp.asarray(c, dtype) * cumulant(jax.lax.stop_gradient(lm), x, theta)
                  for lm, _, c in items)
    eps_d = float(jnp.finfo(dtype).eps)
    at_theta = k_theta * (1.0 + 4.0 * eps_d) + 4.0 * eps_d * theta * abs(top) - theta * top
    at_tilt = jax.lax.stop_gradient(comp.log_scale + comp.slack) - comp.tilt * top
    log_tail = jnp.minimum(jnp.where(jnp.isnan(at_theta), jnp.inf, at_theta), at_tilt)
    # the tilt (hence the tail) carries the target's batch axes, the parts' masses their own
    shape = jnp.broadcast_shapes(comp.log_inf.shape, jnp.shape(log_tail))
    return comp, jax.lax.stop_gradient(jnp.broadcast_to(log_tail, shape))


def epsilon_bound(event: Any, log_target: Array, grid: PldGrid, pessimistic: bool = True,
                  ) -> tuple[Array, Array]:
    """(eps, holds) at delta = e^log_target (no checks; ``jit``-able)."""
    dtype = p.dtype_of(event, log_target)
    log_target = jnp.asarray(log_target, dtype)
    x = grid_losses(grid, dtype, pessimistic)
    goal = widen(log_target, not pessimistic, DELTA_SLACK)
    eps_all, holds = [], jnp.asarray(True)
    for items in _items(event, grid, pessimistic, dtype):
        if _single(items):
            log_mass, log_inf, _ = items[0]
            eps_all.append(epsilon_at(log_mass, log_inf, x, goal))
            continue
        comp, log_tail = _composed(items, grid, pessimistic, dtype, log_target=log_target)
        holds = holds & (log_tail <= log_target + math.log(TAIL_SHARE))
        eps_all.append(tilted_epsilon(comp, grid, log_tail, jnp.broadcast_to(
            goal, log_tail.shape), pessimistic))
    eps = eps_all[0] if len(eps_all) == 1 else jnp.maximum(*eps_all)
    return eps, holds


def log_delta_bound(event: Any, eps: Array, grid: PldGrid, pessimistic: bool = True,
                    ) -> tuple[Array, Array]:
    """(log delta, holds) at ``eps`` (no checks; ``jit``-able)."""
    dtype = p.dtype_of(event, eps)
    eps = jnp.asarray(eps, dtype)
    x = grid_losses(grid, dtype, pessimistic)
    out, holds = [], jnp.asarray(True)
    for items in _items(event, grid, pessimistic, dtype):
        if _single(items):
            log_mass, log_inf, _ = items[0]
            out.append(log_delta_at(log_mass, log_inf, x, eps))
            continue
        comp, log_tail = _composed(items, grid, pessimistic, dtype, eps=eps)
        log_delta = tilted_log_delta(comp, grid, log_tail, jnp.broadcast_to(
            eps, log_tail.shape), pessimistic)
        holds = holds & ((log_tail <= log_delta + math.log(TAIL_SHARE))
                         | (log_tail == -jnp.inf))
        out.append(log_delta)
    log_delta = out[0] if len(out) == 1 else jnp.maximum(*out)
    return widen(log_delta, pessimistic, DELTA_SLACK), holds


def needed_upper(event: Any, log_tail: Array, grid: PldGrid) -> Array:
    """The upper end at which the Chernoff bound of the composed mass above it is e^log_tail
    (from the parts' PLDs summed in blocks of ``grid``; for messages)."""
    dtype = p.dtype_of(event, log_tail)
    _, _, _, rights = _block_layout(grid)
    right = jnp.asarray(rights, dtype)
    need = jnp.asarray(-jnp.inf, dtype)
    for items in _items(event, grid, True, dtype):
        coarse = [(_coarse(lm, grid)[0], right, c) for lm, _, c in items]
        need = jnp.maximum(need, _needed_upper(lambda t, c=coarse: _cgf_many(c, t), log_tail))
    return need


_epsilon_jit = jax.jit(epsilon_bound, static_argnums=(2, 3))
_log_delta_jit = jax.jit(log_delta_bound, static_argnums=(2, 3))
_needed_jit = jax.jit(needed_upper, static_argnums=2)


# --------------------------------------------------------------------------- grid choice
_THETAS = np.geomspace(2.0**-10, 2.0**8, 64)


def _probe(event: Any, dtype) -> tuple[Array, Array]:
    """On the probe grid: K(theta) of the composition at _THETAS (per direction, batch axes,
    theta last) and each part's lowest loss below which its mass is under 1e-15."""
    x = grid_losses(_PROBE, dtype)
    cgfs, lows = [], []
    for items in _items(event, _PROBE, True, dtype):
        total = 0.0
        for lm, _, c in items:
            k = jnp.stack([cumulant(lm, x, float(t)) for t in _THETAS], -1)
            total = total + jnp.asarray(1 if c is None else c, dtype)[..., None] * k
            cum = cumlogsumexp(lm, axis=-1)
            lows.append(jnp.min(x[jnp.argmax(cum > math.log(1e-15), axis=-1)]))
        cgfs.append(jnp.max(jnp.broadcast_to(total, jnp.shape(total)).reshape(-1, len(_THETAS)),
                            axis=0))
    return jnp.max(jnp.stack(cgfs), axis=0), jnp.min(jnp.stack(lows))


_probe_jit = jax.jit(_probe, static_argnums=1)


def _atoms(losses, masses) -> tuple[np.ndarray, float]:
    """(K(theta) at _THETAS, lowest loss) of finite point masses (batch axes lead; the
    largest K over the batch)."""
    losses, masses = np.broadcast_arrays(np.asarray(losses, np.float64),
                                         np.asarray(masses, np.float64))
    ok = np.isfinite(losses) & (masses > 0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        terms = np.where(ok[..., None], np.log(np.where(ok, masses, 1.0))[..., None]
                         + _THETAS * np.where(ok, losses, 0.0)[..., None], -np.inf)
        top = np.max(terms, axis=-2, keepdims=True)
        top = np.where(np.isfinite(top), top, 0.0)
        k = np.log(np.sum(np.exp(terms - top), axis=-2)) + top[..., 0, :]
    lowest = float(np.min(np.where(ok, losses, np.inf))) if np.any(ok) else 0.0
    return np.max(k.reshape(-1, len(_THETAS)), axis=0), lowest


def _analytic(part: Any) -> tuple[np.ndarray, float] | None:
    """K(theta) of a shipped release's PLD in closed form (None: use the probe grid)."""
    f = lambda x: np.asarray(x, np.float64)  # noqa: E731
    if isinstance(part, E.GaussianEvent):
        mu = np.atleast_1d(f(part.mu))
        mu = mu[np.isfinite(mu)]
        if mu.size == 0:
            return np.full(len(_THETAS), -np.inf), 0.0
        top = float(np.max(mu))
        return _THETAS * (_THETAS + 1) * top**2 / 2, float(np.min(mu**2 / 2 - 9 * mu))
    if isinstance(part, E.LaplaceEvent):
        eps = np.atleast_1d(f(part.eps))
        eps = eps[np.isfinite(eps)]
        if eps.size == 0:
            return np.full(len(_THETAS), -np.inf), 0.0
        return _laplace_cgf(eps), float(-np.max(eps))
    if isinstance(part, (E.PureDpEvent, E.RandomizedResponseEvent)):
        if isinstance(part, E.RandomizedResponseEvent):
            r = f(part.r)
            with np.errstate(divide="ignore"):
                eps = np.log1p(r) - np.log1p(-r)
        else:
            eps = f(part.eps)
        with np.errstate(over="ignore"):
            up = 1 / (1 + np.exp(-eps))
        return _atoms(np.stack([eps, -eps], -1), np.stack([up, 1 - up], -1))
    if isinstance(part, E.KaryRandomizedResponseEvent):
        xi, k = np.broadcast_arrays(f(part.xi), f(part.k))
        with np.errstate(over="ignore"):
            q = 1 / (k - 1 + np.exp(xi))
        return _atoms(np.stack([xi, -xi, 0 * xi], -1), np.stack([1 - (k - 1) * q, q, (k - 2) * q], -1))
    if isinstance(part, E.ApproxDpEvent):
        eps, delta = np.broadcast_arrays(f(part.eps), f(part.delta))
        up = (1 - delta) / (1 + np.exp(-eps))
        return _atoms(np.stack([eps, -eps], -1), np.stack([up, 1 - delta - up], -1))
    if isinstance(part, E.DiscreteGaussianEvent) and part.dim == 1:
        sigma, shift = (np.atleast_1d(a).ravel() for a in np.broadcast_arrays(
            f(part.sigma), f(part.shift)))
        out = [_dg_atoms(s, d) for s, d in zip(sigma, shift, strict=True)]
        return np.max([k for k, _ in out], axis=0), min(lo for _, lo in out)
    if isinstance(part, E.GaussianMixtureEvent):
        mus, weights = np.broadcast_arrays(f(part.mus), f(part.weights))
        # log sum_b w_b e^(theta (theta + 1) mu_b^2 / 2): a mixture of Gaussian laws
        return _mixture_cgf(mus, weights), float(np.min(mus**2 / 2 - 9 * mus))
    return None


def _laplace_cgf(eps: np.ndarray) -> np.ndarray:
    """K(theta) of the Laplace PLD (largest over ``eps``): log of e^(theta eps) / 2 +
    e^(-(1 + theta) eps) / 2 + e^(-eps/2) (e^(s eps) - e^(-s eps)) / (4 s), s = theta + 1/2."""
    e = eps.reshape(-1)[:, None]
    s = _THETAS + 0.5
    with np.errstate(over="ignore"):
        terms = np.stack([_THETAS * e - math.log(2.0), -(1.0 + _THETAS) * e - math.log(2.0),
                          (s - 0.5) * e + np.log(-np.expm1(-2.0 * s * e)) - np.log(4.0 * s)])
    top = np.max(terms, axis=0)
    return np.max(top + np.log(np.sum(np.exp(terms - top), axis=0)), axis=0)


def _mixture_cgf(mus: np.ndarray, weights: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", over="ignore"):
        terms = np.log(weights)[..., None] + _THETAS * (_THETAS + 1) * mus[..., None] ** 2 / 2
    top = np.max(terms, axis=-2, keepdims=True)
    k = np.log(np.sum(np.exp(terms - top), axis=-2)) + top[..., 0, :]
    return np.max(k.reshape(-1, len(_THETAS)), axis=0)


def _dg_atoms(sigma: float, shift: float) -> tuple[np.ndarray, float]:
    if sigma == 0:
        return (np.zeros(len(_THETAS)), 0.0) if shift == 0 else (
            np.full(len(_THETAS), -np.inf), 0.0)
    width = int(min(12 * sigma + shift + 10, 8192))
    y = np.arange(-width, width + 1, dtype=np.float64)
    w = np.exp(-0.5 * (y / sigma) ** 2)
    return _atoms((shift**2 - 2 * y * shift) / (2 * sigma**2), w / w.sum())


def choose_grid(event: Any, delta: ArrayLike | None = None, eps: ArrayLike | None = None,
                dtype=None) -> PldGrid:
    """A grid for ``event`` at the target ``delta`` (for epsilon) or ``eps`` (for delta), from
    concrete parameters (module docstring).

    Example:
      >>> from ldpjax.accounting.events import RandomizedResponseEvent
      >>> from ldpjax.accounting.composition import SelfComposedEvent
      >>> grid = choose_grid(SelfComposedEvent(RandomizedResponseEvent(0.5), 10), delta=1e-6)
      >>> grid.lower <= -1.0 and grid.upper >= 10.0
      True
    """
    if not v.is_concrete(event):
        return DEFAULT_GRID
    p.check(event)
    event = p.prepared(event)
    dtype = jnp.dtype(dtype or p.dtype_of(event))
    known = [(_analytic(part), count) for part, count in sequential_items(event)]
    if all(k is not None for k, _ in known):
        counts = [float(np.max(np.atleast_1d(np.asarray(1 if c is None else c, np.float64))))
                  for _, c in known]
        cgf = sum(c * k[0] for (k, _), c in zip(known, counts, strict=True))
        # the composed loss's lowest value: the FFT is circular, so a grid shorter than the
        # composed support wraps its low losses onto high ones (still an upper bound, but a loose
        # one where the tilt is small, i.e. at large targets). Gaussian uses merge first (mu^2
        # add), so their lowest is that of the merged mu; the others' lowest values add
        parts = list(sequential_items(event))
        mu2 = sum(c * float(np.max(np.asarray(part.mu, np.float64)))**2
                  for (part, _), c in zip(parts, counts, strict=True)
                  if isinstance(part, E.GaussianEvent)
                  and np.all(np.isfinite(np.asarray(part.mu, np.float64))))
        lowest = sum(c * k[1] for (k, _), c, (part, _) in zip(known, counts, parts, strict=True)
                     if not isinstance(part, E.GaussianEvent))
        if mu2 > 0:
            lowest += mu2 / 2 - 9 * math.sqrt(mu2)
    else:
        cgf, lowest = (np.asarray(a, np.float64) for a in _probe_jit(event, dtype))
    need_low = min(-1.0, float(np.min(lowest)))
    if delta is not None:
        # the smallest target delta needs the widest grid
        log_tail = float(np.min(np.log(np.maximum(np.asarray(delta, np.float64), 1e-300))))
        need_up = 1.0
    else:
        e = float(np.max(np.asarray(eps, np.float64)))
        log_tail = float(np.min(cgf - _THETAS * e)) + math.log(1e-3)
        need_up = e + 1.0
    log_tail += math.log(1e-3)
    with np.errstate(invalid="ignore"):
        tops = np.min((cgf - log_tail) / _THETAS, axis=-1)
    tops = tops[~np.isnan(tops)]  # no finite mass at all (no privacy): nothing to hold
    if tops.size:
        need_up = min(max(need_up, float(np.max(tops))), _PROBE.upper)
    interval = 2.0**-13 if dtype == jnp.float64 else 2.0**-8
    while (need_up - need_low) / interval > _MAX_AUTO_SIZE / 2:
        interval *= 2.0
    size = 1 << max(10, math.ceil(math.log2((need_up - need_low) / interval + 2)))
    while True:
        length = size * interval
        fits = [-length / 2**j for j in range(1, 7)
                if length / 2**j >= -need_low and length * (1 - 2.0**-j) - interval >= need_up]
        if fits:
            lower = max(fits)
            return PldGrid(interval, lower, lower + length - interval)
        size *= 2


# --------------------------------------------------------------------------- public
def _raise_if_short(grid: PldGrid, event: Any, holds: Array, log_delta: Array) -> None:
    """``ValueError`` for a concrete composition the grid cannot hold (module docstring)."""
    if v.is_concrete((holds, log_delta)) and not bool(np.all(np.asarray(holds))):
        share = jnp.asarray(log_delta) + math.log(TAIL_SHARE)
        needed = float(np.max(np.asarray(_needed_jit(event, share, grid))))
        raise ValueError(
            f"the PLD grid {grid} cannot hold {p.name_of(event)}: the bound on its mass above the "
            f"grid's upper end {grid.upper:g} exceeds {TAIL_SHARE:.0%} of delta; it needs "
            f"losses up to about {needed:.4g} (pass grid=PldGrid(interval, lower, upper) with a "
            f"larger upper end, or grid=None to size it from the event)")


def pld_event_epsilon(event: Any, delta: ArrayLike, grid: PldGrid | None = None,
                      pessimistic: bool = True) -> Array:
    """The smallest eps with delta(eps) <= ``delta`` from the PLD of ``event`` (any sequential
    composition of events with a PLD; module docstring).

    Args:
      event: a privacy event.
      delta: in [0, 1); a concrete delta is logged in float64 (1e-300 works in float32).
      grid: a :class:`~ldpjax.accounting.pld.PldGrid`; ``None`` chooses one from concrete
        arguments (:func:`choose_grid`), else :data:`DEFAULT_GRID`.
      pessimistic: True for the upper bound, False for the optimistic estimate.

    Example:
      >>> from ldpjax.accounting.events import RandomizedResponseEvent
      >>> from ldpjax.accounting.composition import SelfComposedEvent
      >>> event = SelfComposedEvent(RandomizedResponseEvent(0.2), 100)  # basic: 100 log 1.5
      >>> round(float(pld_event_epsilon(event, 1e-5, PldGrid(2.0**-6, -4.0, 36.0))), 1)
      23.7
    """
    v.check_range("delta", delta, 0.0, 1.0, high_open=True)
    p.check(event)
    event = p.prepared(event)
    if grid is None:
        grid = choose_grid(event, delta=delta) if v.is_concrete((event, delta)) else DEFAULT_GRID
    dtype = p.dtype_of(event, delta)
    log_target = jnp.asarray(log_probability(delta, dtype), dtype)
    eps, holds = _epsilon_jit(event, log_target, grid, pessimistic)
    _raise_if_short(grid, event, holds, log_target)
    valid = p.valid(event) & holds & (log_target < 0)
    return v.valid_or_nan(valid, eps, *p.ties(event), log_target)


def pld_event_delta(event: Any, eps: ArrayLike, grid: PldGrid | None = None,
                    pessimistic: bool = True) -> Array:
    """delta(eps) from the PLD of ``event`` (see :func:`pld_event_epsilon`).

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent
      >>> from ldpjax.accounting.composition import ComposedEvent
      >>> event = ComposedEvent((GaussianEvent(0.6), GaussianEvent(0.8)))  # 1-GDP
      >>> round(float(pld_event_delta(event, 1.0, PldGrid(2.0**-8, -8.0, 24.0))), 3)  # 0.1269
      0.127
    """
    v.check_range("eps", eps, 0.0, math.inf)
    p.check(event)
    event = p.prepared(event)
    if grid is None:
        grid = choose_grid(event, eps=eps) if v.is_concrete((event, eps)) else DEFAULT_GRID
    dtype = p.dtype_of(event, eps)
    eps = jnp.asarray(eps, dtype)
    log_delta, holds = _log_delta_jit(event, eps, grid, pessimistic)
    _raise_if_short(grid, event, holds, log_delta)
    valid = p.valid(event) & holds & (eps >= 0)
    return v.valid_or_nan(valid, jnp.minimum(jnp.exp(log_delta), 1.0), *p.ties(event), eps)


# --------------------------------------------------------------------------- the accountants' hook
_GRID: contextvars.ContextVar[PldGrid | None] = contextvars.ContextVar("pld_grid", default=None)


@contextlib.contextmanager
def pld_grid(grid: PldGrid | None):
    """Within this context the accountants' PLD bounds use ``grid`` (``None``: chosen per event
    from concrete arguments, :data:`DEFAULT_GRID` when traced).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> from ldpjax.accounting.events import RandomizedResponseEvent
      >>> from ldpjax.accounting.composition import SelfComposedEvent
      >>> with pld_grid(PldGrid(2.0**-6, -4.0, 36.0)):  # basic composition: 40.5
      ...     round(float(epsilon(SelfComposedEvent(RandomizedResponseEvent(0.2), 100), 1e-5)), 1)
      23.7
    """
    token = _GRID.set(grid)
    try:
        yield
    finally:
        _GRID.reset(token)


def _has_pld(event: Any) -> bool:
    if isinstance(event, (C.ParallelEvent,)) or hasattr(event, "sequential_parts"):
        return False
    return has_release_pld(event)


def uses_pld(event: Any) -> bool:
    """Whether the accountants bound ``event`` with its PLD: it offers ``privacy_loss``, or it is
    a sequential composition of more than one use of releases that all have a PLD."""
    if hasattr(event, "privacy_loss"):
        return True
    if not hasattr(event, "sequential_parts"):
        return False
    items = sequential_items(event)
    many = len(items) > 1 or items[0][1] is not None
    return many and all(_has_pld(part) for part, _ in items)


def _grid_for(event: Any, **target: Any) -> PldGrid:
    grid = _GRID.get()
    if grid is not None:
        return grid
    values = list(target.values())
    return choose_grid(event, **target) if v.is_concrete((event, *values)) else DEFAULT_GRID


def hook_log_delta(event: Any, eps: Array) -> Array:
    """log delta(eps) of the PLD bound for the accountants (NaN where the grid cannot hold the
    composition under ``jit``; ``ValueError`` for concrete arguments)."""
    grid = _grid_for(event, eps=eps)
    log_delta, holds = _log_delta_jit(event, eps, grid, True)
    _raise_if_short(grid, event, holds, log_delta)
    return jnp.where(holds, log_delta, jnp.nan)


def hook_epsilon(event: Any, log_target: Array) -> Array:
    """eps(delta) of the PLD bound for the accountants (see :func:`hook_log_delta`)."""
    delta = np.exp(np.asarray(log_target)) if v.is_concrete(log_target) else log_target
    grid = _grid_for(event, delta=delta)
    eps, holds = _epsilon_jit(event, log_target, grid, True)
    _raise_if_short(grid, event, holds, log_target)
    return jnp.where(holds, eps, jnp.nan)


p.register_pld(uses_pld, hook_log_delta, hook_epsilon)

__all__ = [
    "DEFAULT_GRID",
    "TAIL_SHARE",
    "choose_grid",
    "epsilon_bound",
    "log_delta_bound",
    "pld_event_delta",
    "pld_grid",
    "uses_pld",
    "pld_event_epsilon",
]
