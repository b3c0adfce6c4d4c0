"""Calibration of any privacy event: the parameter at which a privacy measure meets a target.

:func:`calibrate` solves, for a scalar parameter theta in a bracket [lo, hi],

    epsilon(event_of(theta, *args), delta) = target_epsilon      (or)
    delta(event_of(theta, *args), epsilon) = target_delta,

for any event the accountants (:mod:`ldpjax.accounting.accountant`) take: a single release, a
composition, a revealed mixture, a shuffled release. It is the design of Google's
``dp_accounting.mechanism_calibration.calibrate_dp_mechanism`` (a function from the parameter
to an event, a target, a bracket; the result on the private side of the target) made a JAX
function: ``jit``-able, ``vmap``-able over targets, and differentiable.

Monotonicity. The measure m(theta) must be monotone on the bracket, in either direction: a
budget (mu, r, xi: m increases) or a noise parameter (sigma, an exploration probability: m
decreases). The direction needs no flag: the solver keeps one *feasible* end (m <= target) and
one infeasible end, and returns the feasible one. So the result always satisfies
m(theta) <= target as evaluated in floating point (the accountants are upper bounds, so the
claim holds): for a budget it lies at or below the exact root, for a noise parameter at or
above it, within a few ulps.

Solver. The Illinois variant of regula falsi on r(theta) = m(theta) - target (one evaluation
of the accountant a step, superlinear; bisection while an end's r is infinite or NaN, and a NaN
counts as infeasible), until the two ends are a few ulps apart; with ``log_scale=True`` it works
in log theta (for brackets spanning decades; both ends must be > 0).

Gradients, by the implicit function theorem at the root: with m(theta, args),

    d theta / d target = 1 / (dm/dtheta),   d theta / d args = -(dm/dargs) / (dm/dtheta),

through ``event_of``'s own arguments ``args`` (arrays; differentiable) and anything it closes
over that is traced.

Validation. Concrete inputs: ``ValueError`` for a bracket that is not two finite numbers, a
target that is not attained on the bracket (naming the target, the bracket and the measure at
both ends), or a target outside its range. Traced targets that the bracket does not attain give
NaN (value and gradient).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import accountant as acc
from ldpjax.types import Array, ArrayLike

_MAX_STEPS = 400


def _measure(event_of: Callable, delta: Any, epsilon: Any) -> Callable:
    """m(theta, *args): epsilon at ``delta`` (when ``delta`` is given) or delta at ``epsilon``."""
    if delta is not None:
        return lambda theta, *args: acc.epsilon(event_of(theta, *args), delta)
    return lambda theta, *args: acc.delta(event_of(theta, *args), epsilon)


def _illinois(measure: Callable, log_scale: bool, lo: Array, hi: Array, target: Array,
              args: tuple) -> tuple[Array, Array]:
    """(feasible end, its measure) once the bracket is a few ulps wide (module doc)."""
    to_x = jnp.exp if log_scale else (lambda u: u)
    u_lo, u_hi = (jnp.log(lo), jnp.log(hi)) if log_scale else (lo, hi)
    r_lo = measure(to_x(u_lo), *args) - target
    r_hi = measure(to_x(u_hi), *args) - target
    feasible_lo = r_lo <= 0
    # (feasible end, its residual), (infeasible end, its residual)
    uf, rf = jnp.where(feasible_lo, u_lo, u_hi), jnp.where(feasible_lo, r_lo, r_hi)
    ui, ri = jnp.where(feasible_lo, u_hi, u_lo), jnp.where(feasible_lo, r_hi, r_lo)
    dtype = uf.dtype
    tol = 4.0 * float(jnp.finfo(dtype).eps)
    tiny = float(jnp.finfo(dtype).tiny)

    def open_(uf, ui):
        return jnp.abs(ui - uf) > tol * jnp.maximum(jnp.abs(uf), jnp.abs(ui)) + tiny

    def cond(state):
        count, uf, _, ui = state[:4]
        return (count < _MAX_STEPS) & jnp.any(open_(uf, ui))

    def body(state):
        count, uf, rf, ui, ri, last = state
        live = open_(uf, ui)
        finite = jnp.isfinite(rf) & jnp.isfinite(ri) & (ri > rf)
        secant = uf - rf * (ui - uf) / jnp.where(finite, ri - rf, 1.0)
        inside = finite & ((secant - uf) * (secant - ui) < 0)
        u = jnp.where(inside, secant, 0.5 * (uf + ui))
        r = measure(to_x(u), *args) - target
        ok = r <= 0  # NaN: infeasible
        moved = jnp.where(ok, 1, -1)
        uf, rf = jnp.where(live & ok, u, uf), jnp.where(live & ok, r, rf)
        ui, ri = jnp.where(live & ~ok, u, ui), jnp.where(live & ~ok, r, ri)
        # Illinois: the end kept twice in a row has its residual halved
        ri = jnp.where(live & ok & (last == 1), 0.5 * ri, ri)
        rf = jnp.where(live & ~ok & (last == -1), 0.5 * rf, rf)
        return count + 1, uf, rf, ui, ri, jnp.where(live, moved, last)

    start = (jnp.zeros((), jnp.int32), uf, rf, ui, ri, jnp.zeros(uf.shape, jnp.int32))
    _, uf, rf, _, _, _ = jax.lax.while_loop(cond, body, start)
    return to_x(uf), rf + target


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1))
def _root(measure: Callable, log_scale: bool, lo: Array, hi: Array, target: Array,
          args: tuple) -> Array:
    theta, _ = _illinois(measure, log_scale, lo, hi, target, args)
    return theta


@_root.defjvp
def _root_jvp(measure, log_scale, primals, tangents):
    lo, hi, target, args = primals
    _, _, target_dot, args_dot = tangents
    theta = _root(measure, log_scale, lo, hi, target, args)
    x = jax.lax.stop_gradient(theta)
    _, slope = jax.jvp(lambda z: measure(z, *args), (x,), (jnp.ones_like(x),))
    _, moved = jax.jvp(lambda *a: measure(x, *a), args, args_dot)
    ok = jnp.isfinite(slope) & (slope != 0)
    dot = (target_dot - moved) / jnp.where(ok, slope, 1.0)
    return theta, jnp.where(ok, dot, jnp.nan).astype(theta.dtype)


def _check_targets(target_epsilon, delta, target_delta, epsilon) -> None:
    by_eps = target_epsilon is not None or delta is not None
    by_delta = target_delta is not None or epsilon is not None
    if by_eps == by_delta or (by_eps and (target_epsilon is None or delta is None)) or (
            by_delta and (target_delta is None or epsilon is None)):
        raise ValueError("give either target_epsilon with delta, or target_delta with epsilon")
    if by_eps:
        v.check_range("target_epsilon", target_epsilon, 0.0, math.inf)
        v.check_range("delta", delta, 0.0, 1.0, high_open=True)
    else:
        v.check_range("target_delta", target_delta, 0.0, 1.0)
        v.check_range("epsilon", epsilon, 0.0, math.inf)


def _check_bracket(bracket: Any, log_scale: bool) -> tuple[Any, Any]:
    if not isinstance(bracket, (tuple, list)) or len(bracket) != 2:
        raise ValueError(f"bracket must be a pair (lo, hi); got {bracket!r}")
    lo, hi = bracket
    for name, end in (("bracket[0]", lo), ("bracket[1]", hi)):
        low = 0.0 if log_scale else -math.inf
        v.check_range(name, end, low, math.inf, low_open=True, high_open=True)
    if v.is_concrete((lo, hi)) and np.any(np.asarray(lo) == np.asarray(hi)):
        raise ValueError(f"bracket must have two different ends; got {bracket!r}")
    return lo, hi


def _check_attained(name: str, target: Any, bracket: tuple, at_ends: tuple) -> None:
    """A concrete target outside [min, max] of the measure at the bracket ends: ValueError."""
    if not v.is_concrete((target, *at_ends)):
        return
    t = np.asarray(target, np.float64)
    a, b = (np.asarray(x, np.float64) for x in at_ends)
    bad = ~((t >= np.minimum(a, b)) & (t <= np.maximum(a, b)))
    if np.any(bad):
        measure = name.removeprefix("target_")
        first = np.argwhere(np.broadcast_to(bad, np.broadcast_shapes(t.shape, a.shape, b.shape)))
        where = tuple(first[0]) if first.size else ()

        def pick(x):
            return np.broadcast_to(x, bad.shape)[where].item()

        raise ValueError(
            f"{name}={pick(t):.6g} is not attained in bracket ({pick(np.asarray(bracket[0])):.6g}, "
            f"{pick(np.asarray(bracket[1])):.6g}): {measure} is {pick(a):.6g} at "
            f"{pick(np.asarray(bracket[0])):.6g} and {pick(b):.6g} at "
            f"{pick(np.asarray(bracket[1])):.6g}")


def calibrate(event_of: Callable[..., Any], *args: ArrayLike, bracket: tuple[ArrayLike,
              ArrayLike], target_epsilon: ArrayLike | None = None,
              delta: ArrayLike | None = None, target_delta: ArrayLike | None = None,
              epsilon: ArrayLike | None = None, log_scale: bool = False) -> Array:
    """The parameter theta in ``bracket`` at which ``event_of(theta, *args)`` meets a privacy
    target, on its private side (module doc).

    Args:
      event_of: ``event_of(theta, *args) -> event``, any event the accountants take; the
        measure must be monotone in theta on the bracket (either direction).
      *args: further arguments of ``event_of`` (arrays); derivatives reach them.
      bracket: ``(lo, hi)``, two finite numbers (> 0 with ``log_scale``); broadcast with the
        target.
      target_epsilon, delta: solve epsilon(event, delta) = target_epsilon (target >= 0,
        delta in [0, 1)); or
      target_delta, epsilon: solve delta(event, epsilon) = target_delta (in [0, 1]).
      log_scale: search in log theta (static).

    Returns:
      theta with the measure at most the target (the bracket end on the private side, a few
      ulps from the exact root), shaped as the target broadcast with the bracket.

    Example:
      >>> from ldpjax.accounting import GaussianEvent, SelfComposedEvent, gdp_mu
      >>> # the noise sd of 10 Gaussian releases of sensitivity 1 for (1, 1e-5)-DP in all
      >>> sigma = calibrate(lambda s: SelfComposedEvent(GaussianEvent(1.0 / s), 10),
      ...                   bracket=(0.1, 100.0), target_epsilon=1.0, delta=1e-5)
      >>> round(float(sigma), 3), round(float(10 ** 0.5 / gdp_mu(1.0, 1e-5)), 3)
      (11.797, 11.797)
    """
    _check_targets(target_epsilon, delta, target_delta, epsilon)
    lo, hi = _check_bracket(bracket, log_scale)
    name = "target_epsilon" if delta is not None else "target_delta"
    target = target_epsilon if delta is not None else target_delta
    measure = _measure(event_of, delta, epsilon)
    dtype = jnp.result_type(lo, hi, target, float)
    lo, hi, target = (jnp.asarray(np.asarray(x) if isinstance(x, (list, tuple)) else x, dtype)
                      for x in (lo, hi, target))
    shape = jnp.broadcast_shapes(lo.shape, hi.shape, target.shape)
    lo, hi, target = (jnp.broadcast_to(x, shape) for x in (lo, hi, target))
    args = tuple(jnp.asarray(a) for a in args)
    at_lo, at_hi = measure(lo, *args), measure(hi, *args)
    _check_attained(name, target, (lo, hi), (at_lo, at_hi))
    theta = _root(measure, log_scale, lo, hi, target, args)
    attained = (target >= jnp.minimum(at_lo, at_hi)) & (target <= jnp.maximum(at_lo, at_hi))
    return v.valid_or_nan(attained, theta, target, *args)


__all__ = ["calibrate"]
