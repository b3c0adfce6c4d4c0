"""Firm-level privacy budgeting: allocate Gamma across experiments (*A Privacy Budgeting
Framework for Online Experimentation*, eqs. 19-21).

Given experiments e = 1..E with (K_e, T_e) and a firm budget Gamma (sequential composition:
sum_e gamma_e <= Gamma), choose one strategy s_e in {constant, dynamic} and a budget gamma_e
per experiment to

    minimise   sum_e R_{e, s_e}(gamma_e)
    subject to sum_e gamma_e <= Gamma,   0 <= gamma_e <= gamma*_{e, s_e},

with R the regret bounds of :mod:`ldpjax.bandits.bounds` (eq. 15 for constant, eq. 18 for the
capped dynamic strategy) and gamma* their unconstrained minimisers (:func:`gamma_star_constant`,
:func:`gamma_star_dynamic`). The bounds ignore CTRs, so experiments enter only through
(K_e, T_e).

Two solvers (they must agree; the tests check it):

* ``method="waterfill"`` (exact, the default): Lagrangian water-filling on marginal gains
  G = -dR/dgamma. At a shadow price lambda every experiment takes
  argmin_{s, 0 <= g <= gamma*} R_s(g) + lambda g (global argmin on a 512-point grid per
  experiment and strategy, then polished to the exact stationary point G_s(g) = lambda with
  :func:`ldpjax.roots.bracketed_root`); the total spend S(lambda) is non-increasing in lambda for
  any R (monotone comparative statics) and lambda is found by bisection so that
  S(lambda) = Gamma (lambda = 0 when sum gamma* <= Gamma). A budget-feasible allocation that
  minimises the Lagrangian is globally optimal. The bounds are not convex everywhere (the
  dynamic bound has a concave kink at gamma*_dyn, the constant one is concave near 0 for
  K >= 3), so S may jump at the optimal price; then the experiments that jump share the
  leftover budget (optimal up to that single jump, at most one experiment in practice).
  The price is bracketed by bisection on the grid spend, then on the exact (polished) spend;
  the residual budget between the two sides of the final bracket goes to the experiments that
  move between them, in proportion to how far they move. When S is continuous that is
  d gamma_e / d lambda, so ``gamma`` is differentiable in Gamma with the implicit-function
  gradient, and ``price`` = -d(sum of bounds)/dGamma (envelope theorem).
* ``method="optax"``: gradient descent (Adam) on a smooth reparametrisation of the feasible
  set: u_e = 1.1 max_s gamma*_{e,s} sigmoid(theta_e) and gamma = u min(1, Gamma / sum_e u_e)
  (so sum gamma <= Gamma always), objective sum_e min_s R_{e,s}(min(gamma_e, gamma*_{e,s}))
  / sum_e T_e (a strategy never spends beyond its gamma*: budget above it is wasted, which the
  optimiser learns to avoid). Adam runs from three starts (every experiment at 5%, 50% and 99%
  of its gamma*) and keeps the best: a local method on a non-convex problem otherwise stalls in
  front of the concave stretch below gamma*_dyn. The step size decays (cosine, to 1%) so that
  optima on the kink at gamma*_dyn are reached instead of circled. The strategy is the argmin at the end and
  gamma_e is clipped to its gamma*.

Benchmarks: :func:`unconstrained_allocation` (each experiment at its gamma*, ignoring Gamma),
:func:`equal_split` (Gamma / E each) and Gamma = 0 (uniform random play).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ldpjax import _validation as v
from ldpjax.bandits import budgets as budgets_lib
from ldpjax.bandits.bounds import (
    _form_constants,
    gamma_star_constant,
    gamma_star_dynamic,
    regret_bound_constant,
    regret_bound_dynamic,
)
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike

PORTFOLIO_STRATEGIES = ("constant", "dynamic")
# Codes used by the policies: the portfolio's "dynamic" is the capped dynamic strategy.
_POLICY_CODE = {"constant": budgets_lib.CONSTANT, "dynamic": budgets_lib.CAPPED}


class Allocation(NamedTuple):
    """A budget allocation.

    Attributes:
      gamma: per-experiment budgets gamma_e, shape (E,).
      strategy: per-experiment policy codes (:data:`ldpjax.bandits.budgets.STRATEGIES`:
        0 = constant, 2 = dynamic, capped at gamma), usable directly as
        ``EpsilonGreedyParams.strategy``; :func:`strategy_names` names them so that
        ``epsilon_greedy_params(env, name, gamma)`` selects the same code.
      bound: per-experiment regret bound at the allocation, shape (E,).
      total_bound: sum of ``bound``.
      spent: sum of ``gamma`` (sequential composition; <= Gamma).
      price: the shadow price lambda = marginal gain of budget (0 when Gamma is not binding).
    """

    gamma: Array
    strategy: Array
    bound: Array
    total_bound: Array
    spent: Array
    price: Array


def strategy_names(codes: ArrayLike) -> list[str]:
    """Canonical names of policy strategy codes; they map back to the same codes.

    ``strategy_code(name)`` (and so ``epsilon_greedy_params(env, name, gamma)``) selects the
    same strategy: 0 -> "constant", 1 -> "uncapped", 2 -> "dynamic" (capped at gamma, the
    portfolio's dynamic strategy), 3 -> "arm_specific".

    Example:
      >>> strategy_names([0, 2])
      ['constant', 'dynamic']
    """
    if isinstance(codes, (str, bytes)):
        raise ValueError(f"codes must be integer strategy codes 0..3; got {codes!r}")
    arr = np.asarray(codes)
    v.check_integer("codes", arr, 0, 3)
    return [budgets_lib.STRATEGY_NAMES[int(c)] for c in arr.ravel()]


def _validate(K, T, Gamma=None, strategies=PORTFOLIO_STRATEGIES):
    v.check_integer("K", K, 2)
    v.check_range("T", T, 1.0, jnp.inf, high_open=True)
    if Gamma is not None:
        v.check_range("Gamma", Gamma, 0.0, jnp.inf, high_open=True)
    strategies = tuple(strategies)
    if not strategies or any(s not in PORTFOLIO_STRATEGIES for s in strategies):
        raise ValueError(
            f"strategies must be a non-empty subset of {PORTFOLIO_STRATEGIES}; got {strategies!r}"
        )
    if len(set(strategies)) != len(strategies):
        raise ValueError(f"strategies must not repeat; got {strategies!r}")
    if v.is_concrete(K) and v.is_concrete(T):
        k_shape, t_shape = np.shape(K), np.shape(T)
        if len(k_shape) != 1 or k_shape != t_shape:
            raise ValueError(
                f"K and T must be 1-d arrays of the same length (one entry per experiment); "
                f"got shapes {k_shape} and {t_shape}"
            )
    return strategies


def _bound(strategy: str, gamma, K, T, form):
    if strategy == "constant":
        return regret_bound_constant(gamma, K, T, form=form)
    return regret_bound_dynamic(gamma, K, T, form=form)


def _caps(strategies, K, T, form):
    caps = []
    for s in strategies:
        caps.append(gamma_star_constant(K, T, form=form) if s == "constant"
                    else gamma_star_dynamic(K, T))
    return jnp.stack(caps, axis=-1)  # (E, S)


def _gain(strategy, gamma, K, T, form):
    """Marginal gain G = -dR/dgamma, elementwise."""
    return -jax.grad(lambda g: jnp.sum(_bound(strategy, g, K, T, form)))(gamma)


def unconstrained_allocation(
    K: ArrayLike, T: ArrayLike, *, strategies=PORTFOLIO_STRATEGIES, form: str = "appendix"
) -> Allocation:
    """Each experiment at the gamma* of its best strategy (ignores any firm budget).

    Example:
      >>> a = unconstrained_allocation([2], [1e4], strategies=("constant",))
      >>> round(float(a.gamma[0]), 2)  # gamma*_const for K = 2, T = 1e4 (spec: about 1.97)
      1.97
    """
    strategies = _validate(K, T, None, strategies)
    _form_constants(form)
    K, T = (jnp.asarray(x, jnp.result_type(float)) for x in (K, T))
    caps = _caps(strategies, K, T, form)
    bounds = jnp.stack([_bound(s, caps[:, i], K, T, form) for i, s in enumerate(strategies)], -1)
    best = jnp.argmin(bounds, axis=-1)
    gamma = jnp.take_along_axis(caps, best[:, None], -1)[:, 0]
    bound = jnp.take_along_axis(bounds, best[:, None], -1)[:, 0]
    codes = jnp.asarray([_POLICY_CODE[s] for s in strategies], jnp.int32)[best]
    return Allocation(gamma, codes, bound, jnp.sum(bound), jnp.sum(gamma),
                      jnp.zeros((), gamma.dtype))


def equal_split(
    K: ArrayLike, T: ArrayLike, Gamma: ArrayLike, *, strategy: str = "dynamic",
    form: str = "appendix",
) -> Allocation:
    """Gamma / E to every experiment, all with the same strategy (the paper's benchmark).

    Example:
      >>> e = equal_split([2, 3], [1e4, 1e5], 2.0)
      >>> e.gamma.tolist(), strategy_names(e.strategy)
      ([1.0, 1.0], ['dynamic', 'dynamic'])
    """
    _validate(K, T, Gamma, (strategy,))
    K, T = (jnp.asarray(x, jnp.result_type(float)) for x in (K, T))
    gamma = jnp.full(K.shape, jnp.asarray(Gamma, K.dtype) / K.shape[0])
    bound = _bound(strategy, gamma, K, T, form)
    codes = jnp.full(K.shape, _POLICY_CODE[strategy], jnp.int32)
    return Allocation(gamma, codes, bound, jnp.sum(bound), jnp.sum(gamma),
                      jnp.zeros((), gamma.dtype))


# ----------------------------------------------------------------------------- water-filling
class _Landscape(NamedTuple):
    """The bounds and marginal gains of every experiment and strategy on a grid of budgets
    (arrays (E, S, M); the search runs on stopped gradients)."""

    K: jax.Array
    T: jax.Array
    budget: jax.Array  # Gamma, gradient stopped
    caps: jax.Array  # (E, S): gamma* per experiment and strategy
    grid: jax.Array  # (E, S, M): caps * linspace(0, 1, M)
    values: jax.Array  # bounds on the grid
    gains: jax.Array  # marginal gains on the grid (0 where not finite)
    cell: jax.Array  # (E, S): grid spacing
    price_max: jax.Array  # above every marginal gain
    strategies: tuple
    form: str


def _landscape(K, T, Gamma, strategies, form, grid_size) -> _Landscape:
    dtype = K.dtype
    caps = _caps(strategies, K, T, form)  # (E, S)
    frac = jnp.linspace(0.0, 1.0, grid_size, dtype=dtype)
    grid = caps[..., None] * frac  # (E, S, M)
    values = jnp.stack(
        [_bound(s, grid[:, i], K[:, None], T[:, None], form) for i, s in enumerate(strategies)],
        axis=1,
    )  # (E, S, M)
    gains = jnp.stack(
        [_gain(s, grid[:, i], K[:, None], T[:, None], form) for i, s in enumerate(strategies)],
        axis=1,
    )
    gains = jnp.where(jnp.isfinite(gains), gains, 0.0)
    return _Landscape(K, T, jnp.asarray(Gamma, dtype), caps, grid, values, gains,
                      caps / (grid_size - 1), jnp.max(gains) * 1.01 + 1e-12, strategies, form)


def _on_grid(land: _Landscape, price, allowed):
    """Grid argmin of R + price g per (e, s) over the allowed points, best strategy per e."""
    lagr = jnp.where(allowed, land.values + price * land.grid, jnp.inf)
    i = jnp.argmin(lagr, axis=-1)  # (E, S)
    s = jnp.argmin(jnp.min(lagr, axis=-1), axis=-1)  # (E,)
    gi = jnp.take_along_axis(land.grid, i[..., None], -1)[..., 0]
    return jnp.take_along_axis(gi, s[:, None], -1)[:, 0]


def _grid_bracket(land: _Landscape, allowed, bisection_steps):
    """Log-price bracket on the grid spend: spend(lo) >= budget >= spend(hi); ``ample`` when
    the budget covers every gamma* (price 0)."""
    def bisect(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        over = jnp.sum(_on_grid(land, jnp.exp(mid), allowed)) > land.budget
        return jnp.where(over, mid, lo), jnp.where(over, hi, mid)

    log_top = jnp.log(land.price_max)
    log_lo, log_hi = jax.lax.fori_loop(0, bisection_steps, bisect, (log_top - 60.0, log_top))
    ample = jnp.sum(_on_grid(land, jnp.zeros((), land.K.dtype), allowed)) <= land.budget
    return ample, log_lo, log_hi


def _exact_allocation(land: _Landscape, price, allowed):
    """Exact allocation at a price: the stationary point G_s(g) = price inside the grid cell of
    the global grid argmin, for every strategy; then the strategy with the smaller Lagrangian
    R_s(g) + price g. Returns (gamma, strategy index)."""
    K, T, form, caps, grid = land.K, land.T, land.form, land.caps, land.grid
    index = jnp.argmin(jnp.where(allowed, land.values + price * grid, jnp.inf), axis=-1)
    lo_cell = jnp.clip((index - 1) * land.cell, 0.0, caps)
    hi_cell = jnp.clip((index + 1) * land.cell, 0.0, caps)
    out, lagr = [], []
    for i, s in enumerate(land.strategies):
        g0 = jnp.take_along_axis(grid[:, i], index[:, i : i + 1], -1)[:, 0]

        def foc(g, p, k, t, s=s):
            return _gain(s, g, k, t, form) - p

        f_lo = foc(lo_cell[:, i], price, K, T)
        f_hi = foc(hi_cell[:, i], price, K, T)
        interior = (f_lo > 0) & (f_hi < 0)
        root = bracketed_root(foc, lo_cell[:, i], hi_cell[:, i], price, K, T, num_iters=30)
        g = jnp.where(interior, root, g0)
        out.append(g)
        feasible = jnp.any(allowed[:, i], axis=-1)
        lagr.append(jnp.where(feasible, _bound(s, g, K, T, form) + price * g, jnp.inf))
    # int32 explicitly: argmin returns the default int (int64 under x64), and the choice
    # rides in the refinement loop's carry, which starts as int32
    choice = jnp.argmin(jnp.stack(lagr, -1), axis=-1).astype(jnp.int32)
    gamma = jnp.take_along_axis(jnp.stack(out, -1), choice[:, None], -1)[:, 0]
    return gamma, choice


def _exact_bracket(land: _Landscape, allowed, ample, log_lo, log_hi, refine_steps):
    """Refine the price by bisection on the exact spend, from the (widened) grid bracket. One
    loop (a single trace of the costly exact allocation): step 0 evaluates the low end, step 1
    the high end, then bisection keeps the allocations at both ends. Returns (log price at the
    high end, gamma at the low end, gamma and strategy index at the high end)."""
    dtype = land.K.dtype

    def exact_bisect(i, carry):
        lo, hi, g_lo, g_hi, c_hi = carry
        mid = jnp.where(i == 0, lo, jnp.where(i == 1, hi, 0.5 * (lo + hi)))
        price = jnp.where(ample, 0.0, jnp.exp(mid))
        g, c = _exact_allocation(land, price, allowed)
        over = jnp.where(i == 0, True, jnp.where(i == 1, False, jnp.sum(g) > land.budget))
        set_lo = over & (i != 1)
        set_hi = ~over & (i != 0)
        return (jnp.where(set_lo & (i > 1), mid, lo), jnp.where(set_hi & (i > 1), mid, hi),
                jnp.where(set_lo, g, g_lo), jnp.where(set_hi, g, g_hi),
                jnp.where(set_hi, c, c_hi))

    start = (log_lo - 0.5, jnp.minimum(log_hi + 0.5, jnp.log(land.price_max)),
             jnp.zeros(land.K.shape, dtype), jnp.zeros(land.K.shape, dtype),
             jnp.zeros(land.K.shape, jnp.int32))
    _, log_hi, gamma_lo, gamma_hi, choice = jax.lax.fori_loop(
        0, refine_steps + 2, exact_bisect, start)
    return log_hi, gamma_lo, gamma_hi, choice


def _hand_out_residual(gamma_lo, gamma_hi, residual):
    """The residual budget to the experiments that move between the two prices, in proportion
    to how far they move: when S is continuous that is d gamma_e / d lambda (implicit function
    theorem), at a jump it is the jumping experiment."""
    room = jnp.maximum(gamma_lo - gamma_hi, 0.0)
    total_room = jnp.sum(room)
    share = jnp.where(total_room > 0, room / jnp.where(total_room > 0, total_room, 1.0), 0.0)
    return gamma_hi + jnp.clip(residual, 0.0, total_room) * share


def _solve_restricted(land: _Landscape, allowed, budget_in, bisection_steps, refine_steps):
    """The allocation over the ``allowed`` grid points: (gamma, strategy index, price, summed
    bound, inf where over budget). Only the residual hand-out is differentiable in Gamma."""
    ample, log_lo, log_hi = _grid_bracket(land, allowed, bisection_steps)
    log_hi, gamma_lo, gamma_hi, choice = _exact_bracket(land, allowed, ample, log_lo, log_hi,
                                                        refine_steps)
    price_hi = jnp.where(ample, 0.0, jnp.exp(log_hi))
    residual = jnp.where(ample, 0.0, budget_in - jnp.sum(gamma_hi))
    gamma = _hand_out_residual(gamma_lo, gamma_hi, residual)
    caps_chosen = jnp.take_along_axis(land.caps, choice[:, None], -1)[:, 0]
    gamma = jnp.clip(gamma, 0.0, caps_chosen)
    total = jnp.sum(_bounds_for(gamma, choice, land.strategies, land.K, land.T, land.form))
    feasible = jnp.sum(jax.lax.stop_gradient(gamma)) <= land.budget * (1 + 1e-5) + 1e-7
    return gamma, choice, price_hi, jnp.where(feasible, total, jnp.inf)


def _waterfill(K, T, Gamma, strategies, form, grid_size, bisection_steps, refine_steps):
    # Only the residual hand-out depends differentiably on Gamma (see the module doc): the
    # search itself runs on stopped gradients (cheaper to compile and to differentiate).
    budget_in = jnp.asarray(Gamma, K.dtype)
    K, T, Gamma = (jax.lax.stop_gradient(x) for x in (K, T, Gamma))
    land = _landscape(K, T, Gamma, strategies, form, grid_size)
    everywhere = jnp.ones(land.values.shape, bool)
    # Non-convexity: experiments whose grid allocation jumps at the price ("jumpers") are
    # re-solved twice, restricted to the branch below and to the branch above the jump; the
    # best of the unrestricted and the two restricted solutions is kept.
    ample, log_lo, log_hi = _grid_bracket(land, everywhere, bisection_steps)
    g_below = _on_grid(land, jnp.exp(log_hi), everywhere)  # higher price: the lower branch
    g_above = _on_grid(land, jnp.exp(log_lo), everywhere)
    step = jnp.max(land.cell, axis=-1)
    jumpers = ((g_above - g_below) > 1.5 * step) & ~ample
    lower = jumpers[:, None, None] & (land.grid > (g_below + step)[:, None, None])
    upper = jumpers[:, None, None] & (land.grid < (g_above - step)[:, None, None])
    allowed = jnp.stack([everywhere, ~lower, ~upper])
    gammas, choices, prices, totals = jax.vmap(
        lambda a: _solve_restricted(land, a, budget_in, bisection_steps, refine_steps))(allowed)
    best = jnp.argmin(totals)
    choice = choices[best]
    codes = jnp.asarray([_POLICY_CODE[s] for s in strategies], jnp.int32)[choice]
    return gammas[best], codes, choice, prices[best]


def _bounds_for(gamma, choice, strategies, K, T, form):
    per = jnp.stack([_bound(s, gamma, K, T, form) for s in strategies], -1)
    return jnp.take_along_axis(per, choice[:, None], -1)[:, 0]


# ----------------------------------------------------------------------------- optax
def _optax(K, T, Gamma, strategies, form, steps, learning_rate):
    dtype = K.dtype
    caps = _caps(strategies, K, T, form)  # (E, S)
    # 10% headroom above the largest gamma* so that a corner at gamma* is reached at finite
    # theta (budget above a strategy's gamma* is wasted, so the optimiser does not keep it).
    upper = 1.1 * jnp.max(caps, axis=-1)
    budget = jnp.asarray(Gamma, dtype)
    scale_T = jnp.sum(T)

    def allocation(theta):
        raw = upper * jax.nn.sigmoid(theta)
        factor = jnp.where(budget > 0, budget / jnp.maximum(jnp.sum(raw), budget), 0.0)
        return raw * factor

    def per_strategy(gamma):
        # strategy s never spends beyond its gamma*: R_s(min(gamma, gamma*_s))
        return jnp.stack(
            [_bound(s, jnp.minimum(gamma, caps[:, i]), K, T, form)
             for i, s in enumerate(strategies)], -1,
        )

    def loss(theta):
        return jnp.sum(jnp.min(per_strategy(allocation(theta)), axis=-1)) / scale_T

    # cosine decay to 1% of the rate: the optimum often sits on a kink (at gamma*_dyn), where a
    # constant step would keep oscillating around it
    schedule = optax.cosine_decay_schedule(learning_rate, steps, alpha=0.01)
    optimizer = optax.adam(schedule)

    def descend(theta):
        def body(_, carry):
            theta, state = carry
            updates, state = optimizer.update(jax.grad(loss)(theta), state, theta)
            return optax.apply_updates(theta, updates), state

        return jax.lax.fori_loop(0, steps, body, (theta, optimizer.init(theta)))[0]

    # Multi-start (the bounds are not convex: an experiment's optimum may sit at gamma* behind a
    # concave stretch): start every experiment at 5%, 50% and 99% of gamma* of its best strategy,
    # run Adam from each, keep the best.
    starts = jnp.asarray([0.05, 0.5, 0.99], dtype)
    best_cap = jnp.max(caps, axis=-1) / upper
    inits = jax.scipy.special.logit(jnp.clip(starts[:, None] * best_cap, 1e-4, 1 - 1e-4))
    thetas = jax.vmap(descend)(inits)
    losses = jax.vmap(loss)(thetas)
    theta = thetas[jnp.argmin(losses)]
    gamma_all = allocation(theta)
    choice = jnp.argmin(per_strategy(gamma_all), axis=-1)
    caps_chosen = jnp.take_along_axis(caps, choice[:, None], -1)[:, 0]
    gamma = jnp.minimum(gamma_all, caps_chosen)
    # shadow price: median marginal gain of the interior experiments (for reporting)
    gains = jnp.stack([_gain(s, gamma, K, T, form) for s in strategies], -1)
    gain = jnp.take_along_axis(gains, choice[:, None], -1)[:, 0]
    interior = (gamma > 1e-3 * caps_chosen) & (gamma < caps_chosen * (1 - 1e-3))
    price = jnp.nanmedian(jnp.where(interior, gain, jnp.nan))
    price = jnp.where(jnp.any(interior) & (jnp.sum(gamma) >= budget * (1 - 1e-4)), price, 0.0)
    codes = jnp.asarray([_POLICY_CODE[s] for s in strategies], jnp.int32)[choice]
    return gamma, codes, choice, price


@functools.partial(jax.jit, static_argnames=(
    "strategies", "method", "form", "grid_size", "bisection_steps", "refine_steps", "steps",
    "learning_rate"))
def _solve(K, T, Gamma, *, strategies, method, form, grid_size, bisection_steps, refine_steps,
           steps, learning_rate):
    if method == "waterfill":
        gamma, codes, choice, price = _waterfill(K, T, Gamma, strategies, form, grid_size,
                                                 bisection_steps, refine_steps)
    else:
        gamma, codes, choice, price = _optax(K, T, Gamma, strategies, form, steps,
                                             learning_rate)
    bound = _bounds_for(gamma, choice, strategies, K, T, form)
    return Allocation(gamma, codes, bound, jnp.sum(bound), jnp.sum(gamma), price)


def allocate_budget(
    K: ArrayLike,
    T: ArrayLike,
    Gamma: ArrayLike,
    *,
    strategies=PORTFOLIO_STRATEGIES,
    method: str = "waterfill",
    form: str = "appendix",
    grid_size: int = 512,
    bisection_steps: int = 100,
    refine_steps: int = 40,
    steps: int = 3000,
    learning_rate: float = 0.2,
) -> Allocation:
    """Bound-optimal per-experiment budgets and strategies under a firm budget (eqs. 19-21).

    Args:
      K: arms per experiment, integers >= 2, shape (E,).
      T: visitors per experiment, in [1, inf), shape (E,).
      Gamma: firm budget (sum of experiment budgets), in [0, inf).
      strategies: allowed strategies, a subset of ("constant", "dynamic").
      method: ``"waterfill"`` (exact Lagrangian water-filling, default) or ``"optax"``.
      form: bound constants, ``"appendix"`` (default) or ``"simple"``.
      grid_size, bisection_steps, refine_steps: water-filling resolution (static): grid per
        experiment, bisection steps on the grid spend, then on the exact (polished) spend.
      steps, learning_rate: Adam settings for ``method="optax"`` (static).

    Returns:
      An :class:`Allocation`. ``jit``/``vmap``-able over Gamma (pass ``strategies``/``method``
      as static); with ``"waterfill"``, ``gamma`` and the bounds are differentiable in Gamma.

    Example:
      >>> alloc = allocate_budget([2, 2], [1e4, 1e6], 1.0)
      >>> bool(float(alloc.spent) <= 1.0 + 1e-6), strategy_names(alloc.strategy)[0] in (
      ...     "constant", "dynamic")
      (True, True)
    """
    strategies = _validate(K, T, Gamma, strategies)
    _form_constants(form)
    if method not in ("waterfill", "optax"):
        raise ValueError(f"method must be 'waterfill' or 'optax'; got {method!r}")
    dtype = jnp.result_type(float)
    K, T = (jnp.asarray(x, dtype) for x in (K, T))
    return _solve(K, T, jnp.asarray(Gamma, dtype), strategies=strategies, method=method,
                  form=form, grid_size=int(grid_size), bisection_steps=int(bisection_steps),
                  refine_steps=int(refine_steps), steps=int(steps),
                  learning_rate=float(learning_rate))


__all__ = [
    "PORTFOLIO_STRATEGIES",
    "Allocation",
    "allocate_budget",
    "equal_split",
    "strategy_names",
    "unconstrained_allocation",
]
