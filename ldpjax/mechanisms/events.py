"""Privacy events: small frozen pytrees that describe what a release costs one record.

The design of Google's ``dp_accounting`` (``dp_event.py``): an algorithm *describes* its
releases with events; accountants *compute* with them. Never change what an event means — add a
new one. Ours are JAX pytrees, so the accountants :func:`delta`, :func:`epsilon` and
:func:`tradeoff` are ``jit``/``vmap``/``grad``-able in the event's numbers (budgets optimised
with ``jax.grad`` and optax).

Events (parameter domains in brackets):

* :class:`GaussianEvent` ``(mu)`` — a mu-GDP release, mu in (0, inf];
* :class:`DiscreteGaussianEvent` ``(sigma, shift, dim)`` — the granular release: discrete
  Gaussian of scale sigma in [0, inf) (grid units; 0 is no noise), integer l2 shift >= 0,
  ``dim`` coordinates (static);
* :class:`RandomizedResponseEvent` ``(r)`` — binary randomized response, truthful rate in (0, 1];
* :class:`KaryRandomizedResponseEvent` ``(xi, k)`` — K-ary RR, xi in [0, inf], integer k >= 2;
* :class:`ComposedEvent` ``(events)`` — sequential composition: the same record in every part;
* :class:`SelfComposedEvent` ``(event, count)`` — ``count`` (an integer >= 1) uses of one record
  by the same release (dp_accounting's ``SelfComposedDpEvent``), e.g. a record reused m times;
* :class:`ParallelEvent` ``(events)`` — each record in exactly one part (the worst part counts);
* :class:`GaussianMixtureEvent` ``(mus, weights)`` — a revealed mixture of Gaussian releases
  (RW-AdaBatch's batch law, paper 000 Lemma 2: the record's batch has component B with
  probability ``weights[B]`` and the batch size is public); mus in (0, inf), weights >= 0
  summing to 1;
* :class:`NoPrivacyEvent` — a release without noise (mu = inf written explicitly).

Validation. Every accountant checks the whole event (every part of a composition): a concrete
parameter outside its domain raises ``ValueError`` naming it (``events[1].mu must be in
(0, inf]; got -1``); a boolean raises too, even traced (its dtype is static); a traced one makes
the result NaN, and its gradient NaN. A composition with one invalid part is invalid, whatever
the other parts say. No privacy — ``NoPrivacyEvent``, mu = inf, sigma = 0 with shift > 0,
r = 1, xi = inf, or a composition containing one — gives epsilon = inf and delta = 1 (for
finite eps). A concrete budget below the computation dtype's normal range (mu = 1e-40 in
float32) is raised to its smallest normal number (a negligibly larger, conservative budget),
and a concrete delta is used through its float64 logarithm, so delta = 1e-300 gives a finite
epsilon in float32 too.

Accountants (exact unless stated):

* Gaussian: ``accounting.gdp_delta`` / ``gdp_epsilon`` / ``gdp_tradeoff``;
* randomized response (binary and K-ary): delta(eps) = max(0, p - e^eps q) with p (q) the
  probability of reporting the true (a given other) value; epsilon(delta) = log((p - delta)/q);
  the tradeoff is the pure-DP curve f_{eps0, 0} (exact for binary RR, a valid lower bound for
  K-ary);
* discrete Gaussian: scalar (dim = 1) with 12 sigma + shift <= 4096: the exact profile (window
  sum plus a tail bound, capped by the zCDP bound; :mod:`ldpjax.accounting.zcdp`); otherwise
  the (shift^2 / (2 sigma^2))-zCDP bound (CKS 2020, Thm 14) converted to (eps, delta) (CKS 2020,
  Cor. 13) — an upper bound; tradeoff: not available (``NotImplementedError``);
* sequential composition (``ComposedEvent``, ``SelfComposedEvent``): all-Gaussian parts compose
  exactly (mu^2 add, so ``count`` uses give mu sqrt(count)); Gaussian and discrete-Gaussian
  parts through zCDP (rho adds, mu-GDP being mu^2/2-zCDP; an upper bound); all pure parts (RR,
  K-RR) by basic composition (eps add; an upper bound); other mixes raise
  ``NotImplementedError``;
* parallel: delta = max over parts, epsilon = max, tradeoff = min (exact worst case);
* Gaussian mixture: ``accounting.gdp_mixture_delta`` / ``gdp_mixture_tradeoff``; epsilon by a
  root in log delta.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax import accounting as acc
from ldpjax.accounting import gdp as _gdp
from ldpjax.accounting import mixture as _mixture
from ldpjax.accounting import zcdp as _zcdp
from ldpjax.types import Array, ArrayLike


class GaussianEvent(NamedTuple):
    """A mu-GDP Gaussian release (Dong, Roth & Su 2019). ``mu = inf``: no noise."""

    mu: ArrayLike


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class DiscreteGaussianEvent:
    """A discrete Gaussian release on a grid: scale ``sigma`` and integer l2 ``shift`` in grid
    units, ``dim`` coordinates (static). ``sigma = 0`` (with ``shift > 0``): no noise."""

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


class SelfComposedEvent(NamedTuple):
    """``count`` identical uses of one record by ``event`` (an integer count >= 1): the
    sequential composition of ``count`` copies, dp_accounting's ``SelfComposedDpEvent``.

    Gaussian: mu sqrt(count) (exact); pure events: count * eps0 (basic composition); discrete
    Gaussian: count * rho (zCDP).

    Example:
      >>> round(float(composed_mu(SelfComposedEvent(GaussianEvent(1.0), 4))), 4)
      2.0
    """

    event: Any
    count: ArrayLike


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
_SEQUENTIAL = (ComposedEvent, SelfComposedEvent)
_INF = float("inf")


# --------------------------------------------------------------------------- checks
def _check(event: Any, where: str = "") -> None:
    """Concrete checks of every parameter of ``event`` (``ValueError`` naming it)."""
    if isinstance(event, GaussianEvent):
        v.check_range(f"{where}mu", event.mu, 0.0, _INF, low_open=True)
    elif isinstance(event, DiscreteGaussianEvent):
        v.check_range(f"{where}sigma", event.sigma, 0.0, _INF, high_open=True)
        v.check_integer(f"{where}shift", event.shift, 0)
        if not isinstance(event.dim, (int, np.integer)) or isinstance(event.dim, bool) or event.dim < 1:
            raise ValueError(f"{where}dim must be a Python integer >= 1; got {event.dim!r}")
    elif isinstance(event, RandomizedResponseEvent):
        v.check_range(f"{where}r", event.r, 0.0, 1.0, low_open=True)
    elif isinstance(event, KaryRandomizedResponseEvent):
        v.check_range(f"{where}xi", event.xi, 0.0, _INF)
        v.check_integer(f"{where}k", event.k, 2)
    elif isinstance(event, GaussianMixtureEvent):
        _mixture.check_mixture(event.mus, event.weights, where)
    elif isinstance(event, (ComposedEvent, ParallelEvent)):
        if not isinstance(event.events, (tuple, list)) or not event.events:
            raise ValueError(f"{where}events must be a non-empty tuple of events; got {event.events!r}")
        for i, part in enumerate(event.events):
            _check(part, f"{where}events[{i}].")
    elif isinstance(event, SelfComposedEvent):
        _check(event.event, f"{where}event.")
        v.check_integer(f"{where}count", event.count, 1)
    elif not isinstance(event, NoPrivacyEvent):
        raise NotImplementedError(f"not a privacy event: {type(event).__name__} ({event!r})")


def _valid(event: Any) -> Array:
    """Traced domain of every parameter of ``event`` (NaN fails every predicate)."""
    if isinstance(event, GaussianEvent):
        return jnp.asarray(event.mu) > 0
    if isinstance(event, DiscreteGaussianEvent):
        return _zcdp._dg_valid(*_gdp._float(event.sigma, event.shift))
    if isinstance(event, RandomizedResponseEvent):
        r = jnp.asarray(event.r)
        return (r > 0) & (r <= 1)
    if isinstance(event, KaryRandomizedResponseEvent):
        k = jnp.asarray(event.k)
        return (jnp.asarray(event.xi) >= 0) & (k >= 2) & (k == jnp.round(k))
    if isinstance(event, GaussianMixtureEvent):
        return _mixture.mixture_valid(event.mus, event.weights)
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        return functools.reduce(jnp.logical_and, [_valid(e) for e in event.events])
    if isinstance(event, SelfComposedEvent):
        count = jnp.asarray(event.count)
        return _valid(event.event) & (count >= 1) & (count == jnp.round(count))
    return jnp.asarray(True)


def _prepare(event: Any) -> Any:
    """Leaves as arrays; concrete budgets below the dtype's normal range raised to it."""

    def budget(x):
        x = np.asarray(x) if isinstance(x, (list, tuple)) else x
        return _gdp.round_up_tiny(x, jnp.result_type(x, float))

    def array(x):
        return jnp.asarray(np.asarray(x) if isinstance(x, (list, tuple)) else x)

    if isinstance(event, GaussianEvent):
        return GaussianEvent(budget(event.mu))
    if isinstance(event, DiscreteGaussianEvent):
        return DiscreteGaussianEvent(array(event.sigma), array(event.shift), event.dim)
    if isinstance(event, RandomizedResponseEvent):
        return RandomizedResponseEvent(budget(event.r))
    if isinstance(event, KaryRandomizedResponseEvent):
        return KaryRandomizedResponseEvent(budget(event.xi), array(event.k))
    if isinstance(event, GaussianMixtureEvent):
        return GaussianMixtureEvent(budget(event.mus), array(event.weights))
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        return type(event)(tuple(_prepare(e) for e in event.events))
    if isinstance(event, SelfComposedEvent):
        return SelfComposedEvent(_prepare(event.event), array(event.count))
    return event


def _checked(event: Any) -> Any:
    _check(event)
    return _prepare(event)


def _dtype(event: Any, *xs: ArrayLike):
    return jnp.result_type(*jax.tree_util.tree_leaves(event), *xs, float)


# --------------------------------------------------------------------------- classification
def _sequential_parts(event: Any, count: Any = 1) -> list[tuple[Any, Any]]:
    """(part, number of uses) of a sequential composition, nested compositions flattened."""
    if isinstance(event, ComposedEvent):
        return [pc for e in event.events for pc in _sequential_parts(e, count)]
    if isinstance(event, SelfComposedEvent):
        return _sequential_parts(event.event, count * jnp.asarray(event.count))
    return [(event, count)]


def _kind(event: Any) -> str:
    """'none', 'gdp', 'rr' (one RR / K-RR), 'pure', 'dg', 'zcdp', 'mixture' or 'parallel'."""
    leaf_kinds = {NoPrivacyEvent: "none", GaussianEvent: "gdp", DiscreteGaussianEvent: "dg",
                  RandomizedResponseEvent: "rr", KaryRandomizedResponseEvent: "rr",
                  GaussianMixtureEvent: "mixture", ParallelEvent: "parallel"}
    if type(event) in leaf_kinds:
        return leaf_kinds[type(event)]
    if isinstance(event, _SEQUENTIAL):
        kinds = {_kind(part) for part, _ in _sequential_parts(event)}
        if "none" in kinds:
            return "none"
        if kinds <= {"gdp"}:
            return "gdp"
        if kinds <= {"rr"}:
            return "pure"
        if kinds <= {"gdp", "dg"}:
            return "zcdp"
    raise NotImplementedError(f"no accountant for {_describe(event)}")


def _mu(event: Any) -> Array:
    """sqrt(sum count_i mu_i^2) over the Gaussian parts, scaled so tiny mus do not underflow."""
    parts = _sequential_parts(event)
    if len(parts) == 1:
        (part, count), = parts
        mu = jnp.asarray(part.mu, _dtype(part))
        return mu if count is 1 else mu * jnp.sqrt(jnp.asarray(count, mu.dtype))
    mus = [jnp.asarray(p.mu, _dtype(event)) for p, _ in parts]
    top = jax.lax.stop_gradient(functools.reduce(jnp.maximum, mus))
    scale = jnp.where(jnp.isfinite(top) & (top > 0), top, 1.0)
    total = sum(jnp.asarray(c, scale.dtype) * jnp.square(m / scale) for m, (_, c) in zip(mus, parts))
    return jnp.where(jnp.isinf(top), jnp.inf, jnp.sqrt(total) * scale)


def _rho(event: Any) -> Array:
    """zCDP rho: sum of count_i mu_i^2 / 2 (Gaussian) and count_i shift_i^2 / (2 sigma_i^2)."""
    dtype = _dtype(event)
    total = jnp.zeros((), dtype)
    for part, count in _sequential_parts(event):
        if isinstance(part, GaussianEvent):
            mu = jnp.asarray(part.mu, dtype)
            rho = 0.5 * mu * mu
        else:
            rho = _zcdp.discrete_gaussian_rho(part.sigma, part.shift).astype(dtype)
        total = total + jnp.asarray(count, dtype) * rho
    return total


def _pq(event: Any) -> tuple[Array, Array]:
    """(p, q) of one RR / K-RR: P(report the true value), P(report one given other value)."""
    if isinstance(event, RandomizedResponseEvent):
        r = jnp.asarray(event.r, _dtype(event))
        return 0.5 * (1.0 + r), 0.5 * (1.0 - r)
    explore = acc.krr_explore_prob(event.xi, event.k)
    q = explore / jnp.asarray(event.k, explore.dtype)
    return 1.0 - explore + q, q


def _eps0(event: Any) -> Array:
    """Pure-DP eps of an RR / K-RR or the basic-composition sum count_i eps_i."""
    if isinstance(event, RandomizedResponseEvent):
        return acc.rr_epsilon(event.r)
    if isinstance(event, KaryRandomizedResponseEvent):
        return jnp.asarray(event.xi, _dtype(event))
    dtype = _dtype(event)
    return sum(jnp.asarray(c, dtype) * _eps0(p) for p, c in _sequential_parts(event))
