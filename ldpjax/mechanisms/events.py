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
* :class:`LaplaceEvent` ``(eps)`` — a pure eps-DP release (Laplace, or discrete Laplace on a
  grid), eps in [0, inf];
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
* Laplace: the eps-DP profile delta(e) = (e^eps - e^e) / (1 + e^eps) and tradeoff f_{eps, 0},
  the worst case over all eps-DP mechanisms (an upper bound for the Laplace mechanism's own,
  1 - e^((e - eps)/2));
* discrete Gaussian: scalar (dim = 1) with 12 sigma + shift <= 4096: the exact profile (window
  sum plus a tail bound, capped by the zCDP bound; :mod:`ldpjax.accounting.zcdp`); otherwise
  the (shift^2 / (2 sigma^2))-zCDP bound (CKS 2020, Thm 14) converted to (eps, delta) (CKS 2020,
  Cor. 13) — an upper bound; tradeoff: not available (``NotImplementedError``);
* sequential composition (``ComposedEvent``, ``SelfComposedEvent``): all-Gaussian parts compose
  exactly (mu^2 add, so ``count`` uses give mu sqrt(count)); Gaussian and discrete-Gaussian
  parts through zCDP (rho adds, mu-GDP being mu^2/2-zCDP; an upper bound); all pure parts (RR,
  K-RR, Laplace) by basic composition (eps add; an upper bound); other mixes raise
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


class LaplaceEvent(NamedTuple):
    """A pure eps-DP release: the Laplace mechanism (scale sensitivity / eps) or the discrete
    Laplace on a grid. ``eps = inf``: no noise."""

    eps: ArrayLike


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


PURE_EVENTS = (RandomizedResponseEvent, KaryRandomizedResponseEvent, LaplaceEvent)
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
    elif isinstance(event, LaplaceEvent):
        v.check_range(f"{where}eps", event.eps, 0.0, _INF)
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
    if isinstance(event, LaplaceEvent):
        return jnp.asarray(event.eps) >= 0
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
    if isinstance(event, LaplaceEvent):
        return LaplaceEvent(budget(event.eps))
    if isinstance(event, GaussianMixtureEvent):
        return GaussianMixtureEvent(budget(event.mus), array(event.weights))
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        return type(event)(tuple(_prepare(e) for e in event.events))
    if isinstance(event, SelfComposedEvent):
        return SelfComposedEvent(_prepare(event.event), array(event.count))
    return event


def _ties(event: Any) -> list[Array]:
    """The event's float leaves (a mixture's summed over components), for ``valid_or_nan``."""
    if isinstance(event, GaussianMixtureEvent):
        return [jnp.sum(jnp.asarray(x, _dtype(event)), axis=-1) for x in event]
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        return [t for e in event.events for t in _ties(e)]
    if isinstance(event, SelfComposedEvent):
        return [*_ties(event.event), event.count]
    return jax.tree_util.tree_leaves(event)  # non-float leaves are skipped by valid_or_nan


def _checked(event: Any) -> Any:
    _check(event)
    return _prepare(event)


def _dtype(event: Any, *xs: ArrayLike):
    return jnp.result_type(*jax.tree_util.tree_leaves(event), *xs, float)


# --------------------------------------------------------------------------- classification
def _sequential_parts(event: Any, count: Any = None) -> list[tuple[Any, Any]]:
    """(part, number of uses or None for one) of a sequential composition, flattened."""
    if isinstance(event, ComposedEvent):
        return [pc for e in event.events for pc in _sequential_parts(e, count)]
    if isinstance(event, SelfComposedEvent):
        uses = jnp.asarray(event.count)
        return _sequential_parts(event.event, uses if count is None else count * uses)
    return [(event, count)]


def _times(count: Any, value: Array) -> Array:
    return value if count is None else jnp.asarray(count, value.dtype) * value


def _kind(event: Any) -> str:
    """'none', 'gdp', 'rr' (one RR / K-RR), 'pure', 'dg', 'zcdp', 'mixture' or 'parallel'."""
    leaf_kinds = {NoPrivacyEvent: "none", GaussianEvent: "gdp", DiscreteGaussianEvent: "dg",
                  RandomizedResponseEvent: "rr", KaryRandomizedResponseEvent: "rr",
                  LaplaceEvent: "pure",
                  GaussianMixtureEvent: "mixture", ParallelEvent: "parallel"}
    if type(event) in leaf_kinds:
        return leaf_kinds[type(event)]
    if isinstance(event, _SEQUENTIAL):
        kinds = {_kind(part) for part, _ in _sequential_parts(event)}
        if "none" in kinds:
            return "none"
        if kinds <= {"gdp"}:
            return "gdp"
        if kinds <= {"rr", "pure"}:
            return "pure"
        if kinds <= {"gdp", "dg"}:
            return "zcdp"
    raise NotImplementedError(f"no accountant for {_describe(event)}")


def _mu(event: Any) -> Array:
    """sqrt(sum count_i mu_i^2) over the Gaussian parts, scaled so tiny mus do not underflow."""
    parts = _sequential_parts(event)
    if len(parts) == 1:
        ((part, count),) = parts
        mu = jnp.asarray(part.mu, _dtype(part))
        return mu if count is None else mu * jnp.sqrt(jnp.asarray(count, mu.dtype))
    mus = [jnp.asarray(p.mu, _dtype(event)) for p, _ in parts]
    top = jax.lax.stop_gradient(functools.reduce(jnp.maximum, mus))
    scale = jnp.where(jnp.isfinite(top) & (top > 0), top, 1.0)
    total = sum(_times(c, jnp.square(m / scale)) for m, (_, c) in zip(mus, parts, strict=True))
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
        total = total + _times(count, rho)
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
    if isinstance(event, LaplaceEvent):
        return jnp.asarray(event.eps, _dtype(event))
    return sum(_times(c, _eps0(p)) for p, c in _sequential_parts(event))


# --------------------------------------------------------------------------- kernels
def _delta_of(event: Any, eps: Array) -> Array:
    kind = _kind(event)
    if kind == "none":
        return jnp.ones_like(eps)
    if kind == "parallel":
        return functools.reduce(jnp.maximum, [_delta_of(e, eps) for e in event.events])
    if kind == "gdp":
        return jnp.exp(_gdp._log_delta_jit(*jnp.broadcast_arrays(_mu(event), eps)))
    if kind == "rr":
        p, q = _pq(event)
        shown = jnp.where(q > 0, jnp.exp(eps) * q, 0.0)  # q = 0 (no privacy): e^inf * 0 is 0
        return jnp.maximum(0.0, p - shown)
    if kind == "pure":
        eps0 = _eps0(event)
        # the eps0-DP profile (tight for binary RR): (e^eps0 - e^eps) / (1 + e^eps0), >= 0
        out = (1.0 - jnp.exp(jnp.where(eps < jnp.inf, eps, 0.0) - eps0)) / (1.0 + jnp.exp(-eps0))
        return jnp.where(eps < jnp.inf, jnp.maximum(0.0, out), 0.0)
    if kind == "dg":
        return jnp.exp(_zcdp.discrete_gaussian_log_delta_jit(event.sigma, event.shift, eps, event.dim))
    if kind == "zcdp":
        return jnp.exp(_zcdp._zcdp_log_delta_jit(_rho(event), eps))
    return jnp.exp(_mixture.mixture_log_delta(event.mus, event.weights, eps))


def _epsilon_of(event: Any, log_target: Array) -> Array:
    kind = _kind(event)
    if kind == "none":
        return jnp.full_like(log_target, jnp.inf)
    if kind == "parallel":
        return functools.reduce(jnp.maximum, [_epsilon_of(e, log_target) for e in event.events])
    if kind == "gdp":
        return _gdp.epsilon_at_log_delta(_mu(event), log_target)
    target = jnp.exp(log_target)
    if kind == "rr":
        p, q = _pq(event)
        positive = (p - target > q) & (q > 0)
        ratio = jnp.where(positive, p - target, 1.0) / jnp.where(positive, q, 1.0)
        out = jnp.where(positive, jnp.log(ratio), 0.0)
        return jnp.where((q == 0) & (p > target), jnp.inf, out)
    if kind == "pure":
        eps0 = _eps0(event)
        # invert (1 - e^(eps - eps0)) / (1 + e^-eps0) = delta
        x = target * (1.0 + jnp.exp(-eps0))
        out = jnp.where(x < 1, eps0 + jnp.log1p(-jnp.where(x < 1, x, 0.0)), 0.0)
        return jnp.maximum(out, 0.0)
    if kind == "dg":
        return _zcdp.discrete_gaussian_epsilon_jit(event.sigma, event.shift, log_target, event.dim)
    if kind == "zcdp":
        return _zcdp._zcdp_epsilon_jit(_rho(event), log_target)
    return _mixture.mixture_epsilon_at_log_delta(event.mus, event.weights, log_target)


def _tradeoff_of(event: Any, alpha: Array) -> Array:
    kind = _kind(event)
    if kind == "none":
        return jnp.zeros_like(alpha)
    if kind == "parallel":
        return functools.reduce(jnp.minimum, [_tradeoff_of(e, alpha) for e in event.events])
    if kind == "gdp":
        return acc.gdp_tradeoff(_mu(event), alpha)
    if kind in ("rr", "pure"):
        return acc.pure_dp_tradeoff(_eps0(event), alpha)
    if kind == "mixture":
        return acc.gdp_mixture_tradeoff(event.mus, event.weights, alpha)
    raise NotImplementedError(f"tradeoff is not available for {_describe(event)}")


def _delta_kernel(event: Any, eps: Array) -> Array:
    eps = jnp.asarray(eps, _dtype(event, eps))
    return v.valid_or_nan(_valid(event) & (eps >= 0), _delta_of(event, eps), *_ties(event), eps)


def _epsilon_kernel(event: Any, log_target: Array) -> Array:
    log_target = jnp.asarray(log_target, _dtype(event, log_target))
    out = _epsilon_of(event, log_target)
    return v.valid_or_nan(_valid(event) & (log_target < 0), out, *_ties(event), log_target)


def _tradeoff_kernel(event: Any, alpha: Array) -> Array:
    alpha = jnp.asarray(alpha, _dtype(event, alpha))
    valid = _valid(event) & (alpha >= 0) & (alpha <= 1)
    return v.valid_or_nan(valid, _tradeoff_of(event, alpha), *_ties(event), alpha)


# --------------------------------------------------------------------------- accountants
def delta(event: Any, eps: ArrayLike) -> Array:
    """delta(eps): the smallest delta such that ``event`` is (eps, delta)-DP for one record.

    Args:
      event: a privacy event (see the module docstring for the parameter domains).
      eps: in [0, inf].

    Example:
      >>> round(float(delta(GaussianEvent(1.0), 1.0)), 4)
      0.1269
    """
    v.check_range("eps", eps, 0.0, _INF)
    event = _checked(event)
    _kind(event)  # NotImplementedError before tracing
    return _delta_kernel(event, eps)


def epsilon(event: Any, delta_target: ArrayLike) -> Array:
    """The smallest eps >= 0 such that ``event`` is (eps, delta_target)-DP for one record.

    Args:
      event: a privacy event.
      delta_target: in [0, 1). A concrete value is logged in float64, so any valid delta
        (1e-300 included) works in float32. delta = 0 gives inf for approximate-DP events.

    Example:
      >>> round(float(epsilon(RandomizedResponseEvent(0.5), 0.0)), 4)
      1.0986
    """
    v.check_range("delta", delta_target, 0.0, 1.0, high_open=True)
    event = _checked(event)
    _kind(event)
    log_target = _gdp.log_probability(delta_target, _dtype(event, delta_target))
    return _epsilon_kernel(event, log_target)


def tradeoff(event: Any, alpha: ArrayLike) -> Array:
    """The tradeoff function f(alpha): the smallest type II error of a level-alpha test telling
    two neighbouring records apart from the release.

    Example:
      >>> round(float(tradeoff(GaussianEvent(1.0), 0.05)), 4)
      0.7405
    """
    v.check_range("alpha", alpha, 0.0, 1.0)
    event = _checked(event)
    if _kind(event) in ("dg", "zcdp"):
        raise NotImplementedError(f"tradeoff is not available for {_describe(event)}")
    return _tradeoff_kernel(event, alpha)


def pure_epsilon(event: Any) -> Array:
    """eps0 of a pure event: rr_epsilon(r), xi, or the basic-composition sum (count times).

    Example:
      >>> round(float(pure_epsilon(SelfComposedEvent(RandomizedResponseEvent(0.5), 2))), 4)
      2.1972
    """
    event = _checked(event)
    if _kind(event) not in ("rr", "pure"):
        raise NotImplementedError(f"{_describe(event)} is not a pure-DP event")
    return v.valid_or_nan(_valid(event), _eps0(event), *_ties(event))


def composed_rho(event: Any) -> Array:
    """zCDP parameter of a (composed) Gaussian / discrete-Gaussian event: the sum of
    count * mu^2 / 2 (continuous, Bun & Steinke 2016) and count * shift^2 / (2 sigma^2)
    (discrete, CKS 2020 Thm 14) over the parts; inf for a part without noise.

    Example:
      >>> float(composed_rho(ComposedEvent((GaussianEvent(1.0), DiscreteGaussianEvent(2.0, 2)))))
      1.0
    """
    event = _checked(event)
    if _kind(event) not in ("gdp", "dg", "zcdp"):
        raise NotImplementedError(f"{_describe(event)} has no zCDP accountant")
    return v.valid_or_nan(_valid(event), _rho(event), *_ties(event))


def composed_mu(event: Any) -> Array:
    """mu of an all-Gaussian (possibly composed) event: sqrt(sum count_i mu_i^2).

    Example:
      >>> round(float(composed_mu(ComposedEvent((GaussianEvent(0.6), GaussianEvent(0.8))))), 4)
      1.0
    """
    event = _checked(event)
    if _kind(event) != "gdp":
        raise NotImplementedError(f"{_describe(event)} is not an all-Gaussian event")
    return v.valid_or_nan(_valid(event), _mu(event), *_ties(event))


# --------------------------------------------------------------------------- descriptions
def _describe(event) -> str:
    if isinstance(event, (ComposedEvent, ParallelEvent)):
        inner = ", ".join(_describe(e) for e in event.events)
        return f"{type(event).__name__}({inner})"
    if isinstance(event, SelfComposedEvent):
        return f"SelfComposedEvent({_describe(event.event)})"
    return type(event).__name__


def describe(event: Any) -> dict[str, Any]:
    """A JSON-able description of ``event`` (type and numbers; arrays as nested lists).

    Example:
      >>> describe(GaussianEvent(1.0))
      {'type': 'GaussianEvent', 'mu': 1.0}
    """

    def number(x):
        arr = np.asarray(x)
        if arr.ndim == 0:
            value = arr.item()
            return value if not isinstance(value, float) or np.isfinite(value) else repr(value)
        return [number(a) for a in arr]

    if isinstance(event, (ComposedEvent, ParallelEvent)):
        return {"type": type(event).__name__, "events": [describe(e) for e in event.events]}
    if isinstance(event, SelfComposedEvent):
        return {"type": "SelfComposedEvent", "event": describe(event.event),
                "count": number(event.count)}
    if isinstance(event, DiscreteGaussianEvent):
        return {"type": "DiscreteGaussianEvent", "sigma": number(event.sigma),
                "shift": number(event.shift), "dim": int(event.dim)}
    if isinstance(event, tuple) and hasattr(event, "_fields"):
        return {"type": type(event).__name__, **{f: number(getattr(event, f)) for f in event._fields}}
    raise TypeError(f"not a privacy event: {event!r}")


__all__ = [
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "GaussianMixtureEvent",
    "KaryRandomizedResponseEvent",
    "LaplaceEvent",
    "NoPrivacyEvent",
    "ParallelEvent",
    "RandomizedResponseEvent",
    "SelfComposedEvent",
    "composed_mu",
    "composed_rho",
    "delta",
    "describe",
    "epsilon",
    "pure_epsilon",
    "tradeoff",
]
