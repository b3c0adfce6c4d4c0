"""Privacy events: small frozen pytrees that describe what a release costs one record.

The design of Google's ``dp_accounting`` (``dp_event.py``): an algorithm *describes* its
releases with events; accountants *compute* with them. Never change what an event means — add a
new one. Ours are JAX pytrees, so the accountants :func:`delta`, :func:`epsilon` and
:func:`tradeoff` are ``jit``/``vmap``/``grad``-able in the event's numbers (budgets optimised
with ``jax.grad`` and optax).

Events:

* :class:`GaussianEvent` ``(mu)`` — a mu-GDP release (continuous Gaussian mechanism);
* :class:`DiscreteGaussianEvent` ``(sigma, shift, dim)`` — the granular release: discrete
  Gaussian of scale ``sigma`` (grid units), integer l2 shift ``shift``, ``dim`` coordinates;
* :class:`RandomizedResponseEvent` ``(r)`` — binary randomized response at truthful rate r;
* :class:`KaryRandomizedResponseEvent` ``(xi, k)`` — K-ary randomized response at budget xi;
* :class:`ComposedEvent` ``(events)`` — sequential composition: the same record in every part;
* :class:`ParallelEvent` ``(events)`` — each record in exactly one part (the worst part counts);
* :class:`GaussianMixtureEvent` ``(mus, weights)`` — a revealed mixture of Gaussian releases
  (RW-AdaBatch's batch law, paper 000 Lemma 2: the record's batch has component B with
  probability ``weights[B]`` and the batch size is public);
* :class:`NoPrivacyEvent` — a release without noise (mu = inf written explicitly).

Accountants (exact unless stated):

* Gaussian: ``accounting.gdp_delta`` / ``gdp_epsilon`` / ``gdp_tradeoff``;
* randomized response (binary and K-ary): delta(eps) = max(0, p - e^eps q) with p (q) the
  probability of reporting the true (a given other) value; epsilon(delta) = log((p - delta)/q);
  the tradeoff is the pure-DP curve f_{eps0, 0} (exact for binary RR, a valid lower bound for
  K-ary);
* discrete Gaussian: scalar (dim = 1) with 12 sigma + shift <= 4096: the exact profile
  (:func:`~ldpjax.mechanisms.discrete_gaussian.discrete_gaussian_delta`); otherwise (vectors,
  or very fine grids) the (shift^2 / (2 sigma^2))-zCDP bound (CKS 2020, Thm 14) converted to
  (eps, delta) — an upper bound; tradeoff: not available (``NotImplementedError``);
* composition: all-Gaussian parts compose exactly (mu^2 add); Gaussian and discrete-Gaussian
  parts through zCDP (rho adds, then converted to (eps, delta): an upper bound); all pure parts
  (RR, K-RR) by basic composition (eps add; an upper bound); other mixes raise
  ``NotImplementedError``;
* parallel: delta = max over parts, epsilon = max, tradeoff = min (exact worst case);
* Gaussian mixture: ``accounting.gdp_mixture_delta`` / ``gdp_mixture_tradeoff``.

``epsilon`` without a closed form solves ``delta(event, eps) = delta`` on [0, 64] with the
implicitly-differentiated root finder of :mod:`ldpjax.roots`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ldpjax import _validation as v
from ldpjax import accounting as acc
from ldpjax.mechanisms.discrete_gaussian import (
    DELTA_WINDOW,
    discrete_gaussian_delta_in_window,
    zcdp_delta,
)
from ldpjax.roots import bracketed_root
from ldpjax.types import Array, ArrayLike

_EPS_MAX = 64.0


class GaussianEvent(NamedTuple):
    """A mu-GDP Gaussian release (Dong, Roth & Su 2019). ``mu = inf``: no noise."""

    mu: ArrayLike


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class DiscreteGaussianEvent:
    """A discrete Gaussian release on a grid: scale ``sigma`` and integer l2 ``shift`` in grid
    units, ``dim`` coordinates (static)."""

    sigma: ArrayLike
    shift: ArrayLike
    dim: int = dataclasses.field(default=1, metadata=dict(static=True))


class RandomizedResponseEvent(NamedTuple):
    """Binary randomized response with truthful rate r in (0, 1]."""

    r: ArrayLike


class KaryRandomizedResponseEvent(NamedTuple):
    """K-ary randomized response with budget xi in [0, inf] over k >= 2 categories."""

    xi: ArrayLike
    k: ArrayLike


class ComposedEvent(NamedTuple):
    """Sequential composition: one record takes part in every event of ``events``."""

    events: tuple


class ParallelEvent(NamedTuple):
    """Parallel composition: each record takes part in exactly one event of ``events``."""

    events: tuple


class GaussianMixtureEvent(NamedTuple):
    """A revealed mixture: component b (public) is a ``mus[b]``-GDP release, with probability
    ``weights[b]`` (paper 000, Lemma 2: amplification by batching). Components on the last axis."""

    mus: ArrayLike
    weights: ArrayLike


class NoPrivacyEvent(NamedTuple):
    """A release without privacy noise (only ever from an explicit ``mu = inf``)."""


PURE_EVENTS = (RandomizedResponseEvent, KaryRandomizedResponseEvent)


# --------------------------------------------------------------------------- pure-DP helpers
def _pure_pq(event) -> tuple[Array, Array]:
    """(p, q): P(report the true value), P(report one given other value)."""
    if isinstance(event, RandomizedResponseEvent):
        v.check_range("r", event.r, 0.0, 1.0, low_open=True)
        r = jnp.asarray(event.r, jnp.result_type(event.r, float))
        valid = (r > 0) & (r <= 1)
        p, q = 0.5 * (1.0 + r), 0.5 * (1.0 - r)
        return v.valid_or_nan(valid, p), v.valid_or_nan(valid, q)
    explore = acc.krr_explore_prob(event.xi, event.k)
    k = jnp.asarray(event.k, explore.dtype)
    q = explore / k
    return 1.0 - explore + q, q


def pure_epsilon(event) -> Array:
    """eps0 of a pure event: rr_epsilon(r), xi, or the basic-composition sum."""
    if isinstance(event, RandomizedResponseEvent):
        return acc.rr_epsilon(event.r)
    if isinstance(event, KaryRandomizedResponseEvent):
        v.check_range("xi", event.xi, 0.0, jnp.inf)
        v.check_integer("k", event.k, 2)
        xi = jnp.asarray(event.xi, jnp.result_type(event.xi, float))
        return v.valid_or_nan((xi >= 0) & (jnp.asarray(event.k) >= 2), xi)
    if isinstance(event, ComposedEvent) and _all_pure(event):
        return sum(pure_epsilon(e) for e in event.events)
    raise NotImplementedError(f"{type(event).__name__} is not a pure-DP event")


def _all_pure(event) -> bool:
    if isinstance(event, PURE_EVENTS):
        return True
    if isinstance(event, ComposedEvent):
        return all(_all_pure(e) for e in event.events)
    return False


def _all_gaussian(event) -> bool:
    if isinstance(event, GaussianEvent):
        return True
    if isinstance(event, ComposedEvent):
        return all(_all_gaussian(e) for e in event.events)
    return False


def _all_gaussian_like(event) -> bool:
    if isinstance(event, (GaussianEvent, DiscreteGaussianEvent)):
        return True
    if isinstance(event, ComposedEvent):
        return all(_all_gaussian_like(e) for e in event.events)
    return False


def composed_rho(event) -> Array:
    """zCDP parameter of a (composed) Gaussian / discrete-Gaussian event: the sum of
    mu^2 / 2 (continuous, Bun & Steinke 2016) and shift^2 / (2 sigma^2) (discrete, CKS 2020
    Thm 14) over the parts."""
    if isinstance(event, GaussianEvent):
        mu = jnp.asarray(event.mu, jnp.result_type(event.mu, float))
        return 0.5 * mu * mu
    if isinstance(event, DiscreteGaussianEvent):
        sigma = jnp.asarray(event.sigma, jnp.result_type(event.sigma, float))
        return jnp.asarray(event.shift, sigma.dtype) ** 2 / (2.0 * sigma * sigma)
    return sum(composed_rho(e) for e in event.events)


def composed_mu(event) -> Array:
    """mu of an all-Gaussian (possibly composed) event: sqrt(sum mu_i^2)."""
    if isinstance(event, GaussianEvent):
        return jnp.asarray(event.mu, jnp.result_type(event.mu, float))
    mus = [composed_mu(e) for e in event.events]
    return jnp.sqrt(sum(m * m for m in mus))


# --------------------------------------------------------------------------- accountants
def delta(event: Any, eps: ArrayLike) -> Array:
    """delta(eps): the smallest delta such that ``event`` is (eps, delta)-DP for one record.

    Example:
      >>> round(float(delta(GaussianEvent(1.0), 1.0)), 4)
      0.1269
    """
    v.check_range("eps", eps, 0.0, jnp.inf)
    if isinstance(event, NoPrivacyEvent):
        return jnp.ones_like(jnp.asarray(eps, jnp.result_type(eps, float)))
    if _all_gaussian(event):
        return acc.gdp_delta(composed_mu(event), eps)
    if isinstance(event, PURE_EVENTS):
        p, q = _pure_pq(event)
        eps = jnp.asarray(eps, p.dtype)
        return jnp.maximum(0.0, p - jnp.exp(eps) * q)
    if _all_pure(event):
        eps0 = pure_epsilon(event)
        eps = jnp.asarray(eps, eps0.dtype)
        # The eps0-DP profile (tight for binary RR): (e^eps0 - e^eps) / (1 + e^eps0), >= 0.
        out = (1.0 - jnp.exp(eps - eps0)) / (1.0 + jnp.exp(-eps0))
        return jnp.maximum(0.0, out)
    if isinstance(event, ParallelEvent):
        return _reduce(jnp.maximum, [delta(e, eps) for e in event.events])
    if isinstance(event, GaussianMixtureEvent):
        return acc.gdp_mixture_delta(event.mus, event.weights, eps)
    if isinstance(event, ComposedEvent) and _all_gaussian_like(event):
        # Gaussian (mu-GDP is mu^2/2-zCDP) and discrete Gaussian parts: zCDP adds (CKS 2020)
        return zcdp_delta(composed_rho(event), eps)
    if isinstance(event, DiscreteGaussianEvent):
        sigma = jnp.asarray(event.sigma, jnp.result_type(event.sigma, float))
        shift = jnp.asarray(event.shift, sigma.dtype)
        v.check_range("sigma", sigma, 0.0, jnp.inf, low_open=True, high_open=True)
        v.check_integer("shift", shift, 0)
        rho = shift**2 / (2.0 * jnp.where(sigma > 0, sigma, 1.0) ** 2)
        bound = v.valid_or_nan(sigma > 0, zcdp_delta(rho, eps))
        if event.dim > 1:
            return bound
        # scalar: the exact profile inside the summation window, the zCDP bound beyond it
        in_window = 12.0 * sigma + shift <= DELTA_WINDOW
        exact = discrete_gaussian_delta_in_window(jnp.where(in_window, sigma, 1.0), shift, eps)
        return jnp.where(in_window, exact, bound)
    raise NotImplementedError(f"delta is not available for {_describe(event)}")


def epsilon(event: Any, delta_target: ArrayLike) -> Array:
    """The smallest eps >= 0 such that ``event`` is (eps, delta_target)-DP for one record.

    Example:
      >>> round(float(epsilon(RandomizedResponseEvent(0.5), 0.0)), 4)
      1.0986
    """
    v.check_range("delta", delta_target, 0.0, 1.0, high_open=True)
    if isinstance(event, NoPrivacyEvent):
        return jnp.full_like(jnp.asarray(delta_target, jnp.result_type(delta_target, float)), jnp.inf)
    if _all_gaussian(event):
        v.check_range("delta", delta_target, 0.0, 1.0, low_open=True, high_open=True)
        return acc.gdp_epsilon(composed_mu(event), delta_target)
    if isinstance(event, PURE_EVENTS):
        p, q = _pure_pq(event)
        d = jnp.asarray(delta_target, p.dtype)
        out = jnp.log(jnp.maximum(p - d, 0.0)) - jnp.log(q)
        out = jnp.where(q == 0, jnp.inf, out)
        return jnp.maximum(out, 0.0)
    if _all_pure(event):
        eps0 = pure_epsilon(event)
        d = jnp.asarray(delta_target, eps0.dtype)
        # invert (1 - e^(eps - eps0)) / (1 + e^-eps0) = d
        out = eps0 + jnp.log1p(-d * (1.0 + jnp.exp(-eps0)))
        return jnp.maximum(out, 0.0)
    if isinstance(event, ParallelEvent):
        return _reduce(jnp.maximum, [epsilon(e, delta_target) for e in event.events])
    if isinstance(event, (GaussianMixtureEvent, DiscreteGaussianEvent)) or (
        isinstance(event, ComposedEvent) and _all_gaussian_like(event)
    ):
        return _epsilon_by_root(event, delta_target)
    raise NotImplementedError(f"epsilon is not available for {_describe(event)}")


def tradeoff(event: Any, alpha: ArrayLike) -> Array:
    """The tradeoff function f(alpha): the smallest type II error of a level-alpha test telling
    two neighbouring records apart from the release.

    Example:
      >>> round(float(tradeoff(GaussianEvent(1.0), 0.05)), 4)
      0.7405
    """
    v.check_range("alpha", alpha, 0.0, 1.0)
    if isinstance(event, NoPrivacyEvent):
        return jnp.zeros_like(jnp.asarray(alpha, jnp.result_type(alpha, float)))
    if _all_gaussian(event):
        return acc.gdp_tradeoff(composed_mu(event), alpha)
    if _all_pure(event):
        return acc.pure_dp_tradeoff(pure_epsilon(event), alpha)
    if isinstance(event, ParallelEvent):
        return _reduce(jnp.minimum, [tradeoff(e, alpha) for e in event.events])
    if isinstance(event, GaussianMixtureEvent):
        return acc.gdp_mixture_tradeoff(event.mus, event.weights, alpha)
    raise NotImplementedError(f"tradeoff is not available for {_describe(event)}")


def _reduce(op, values):
    out = values[0]
    for value in values[1:]:
        out = op(out, value)
    return out


def _describe(event) -> str:
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        inner = ", ".join(_describe(e) for e in event.events)
        return f"{type(event).__name__}({inner})"
    return type(event).__name__


def describe(event: Any) -> dict[str, Any]:
    """A JSON-able description of ``event`` (type and numbers; arrays as nested lists).

    Example:
      >>> describe(GaussianEvent(1.0))
      {'type': 'GaussianEvent', 'mu': 1.0}
    """
    import numpy as np

    def number(x):
        arr = np.asarray(x)
        if arr.ndim == 0:
            value = arr.item()
            return value if not isinstance(value, float) or np.isfinite(value) else repr(value)
        return [number(a) for a in arr]

    if isinstance(event, (ComposedEvent, ParallelEvent)):
        return {"type": type(event).__name__, "events": [describe(e) for e in event.events]}
    if isinstance(event, DiscreteGaussianEvent):
        return {"type": "DiscreteGaussianEvent", "sigma": number(event.sigma),
                "shift": number(event.shift), "dim": int(event.dim)}
    if isinstance(event, tuple) and hasattr(event, "_fields"):
        return {"type": type(event).__name__, **{f: number(getattr(event, f)) for f in event._fields}}
    raise TypeError(f"not a privacy event: {event!r}")


def _delta_residual(eps: Array, event: Any, target: Array) -> Array:
    return delta(event, eps) - target


@jax.jit
def _epsilon_by_root(event: Any, delta_target: ArrayLike) -> Array:
    d0 = delta(event, 0.0)
    target = jnp.asarray(delta_target, jnp.result_type(d0, float))
    target = jnp.broadcast_to(target, jnp.broadcast_shapes(target.shape, d0.shape))
    at_max = delta(event, _EPS_MAX)
    lo = jnp.zeros_like(target)
    hi = jnp.full_like(target, _EPS_MAX)
    root = bracketed_root(_delta_residual, lo, hi, event, target, num_iters=80)
    out = jnp.where(d0 <= target, 0.0, root)
    out = jnp.where(at_max > target, jnp.inf, out)
    return v.valid_or_nan(~jnp.isnan(d0) & (target >= 0), out)


__all__ = [
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "GaussianMixtureEvent",
    "KaryRandomizedResponseEvent",
    "NoPrivacyEvent",
    "ParallelEvent",
    "RandomizedResponseEvent",
    "composed_mu",
    "composed_rho",
    "delta",
    "describe",
    "epsilon",
    "pure_epsilon",
    "tradeoff",
]
