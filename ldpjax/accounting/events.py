"""Privacy events: small frozen pytrees that describe what a release costs one record.

The design of Google's ``dp_accounting`` (``dp_event.py``): an algorithm *describes* its
releases with events; accountants (:mod:`ldpjax.accounting.accountant`: ``delta``, ``epsilon``,
``tradeoff``) *compute* with them. Never change what an event means — add a new one. Ours are
JAX pytrees, so the accountants are ``jit``/``vmap``/``grad``-able in the event's numbers. Each
event implements the views of the event protocol (:mod:`ldpjax.accounting.protocol`) it
supports; an event defined elsewhere that implements one is accounted the same way.

Events (parameter domains in brackets):

* :class:`GaussianEvent` ``(mu)`` — a mu-GDP release, mu in (0, inf];
* :class:`DiscreteGaussianEvent` ``(sigma, shift, dim)`` — the granular release: discrete
  Gaussian of scale sigma in [0, inf) (grid units; 0 is no noise), integer l2 shift >= 0,
  ``dim`` coordinates (static);
* :class:`RandomizedResponseEvent` ``(r)`` — binary randomized response, truthful rate in (0, 1];
* :class:`KaryRandomizedResponseEvent` ``(xi, k)`` — K-ary RR, xi in [0, inf], integer k >= 2;
* :class:`LaplaceEvent` ``(eps)`` — a pure eps-DP release (Laplace, or discrete Laplace on a
  grid), eps in [0, inf];
* :class:`PureDpEvent` ``(eps)`` — any eps-DP release, eps in [0, inf];
* :class:`ApproxDpEvent` ``(eps, delta)`` — any (eps, delta)-DP release, eps in [0, inf],
  delta in [0, 1];
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

Accounting (exact unless stated):

* Gaussian: ``gdp_delta`` / ``gdp_epsilon`` / ``gdp_tradeoff``;
* randomized response (binary and K-ary): delta(eps) = max(0, p - e^eps q) with p (q) the
  probability of reporting the true (a given other) value; epsilon(delta) = log((p - delta)/q);
  the tradeoff is the pure-DP curve f_{eps0, 0} (exact for binary RR, a valid lower bound for
  K-ary);
* Laplace and pure DP: the eps-DP profile delta(e) = (e^eps - e^e) / (1 + e^eps) and tradeoff
  f_{eps, 0}, the worst case over all eps-DP mechanisms (an upper bound for the Laplace
  mechanism's own, 1 - e^((e - eps)/2)); (eps, delta)-DP: delta + (1 - delta) times that
  profile and f_{eps, delta}, the worst case over all (eps, delta)-DP mechanisms;
* discrete Gaussian: scalar (dim = 1) with 12 sigma + shift <= 4096: the exact profile (window
  sum plus a tail bound, capped by the zCDP bound; :mod:`ldpjax.accounting.zcdp`); otherwise
  the (shift^2 / (2 sigma^2))-zCDP bound (CKS 2020, Thm 14) converted to (eps, delta) (CKS 2020,
  Cor. 13) — an upper bound; tradeoff: not available (``NotImplementedError``);
* sequential composition (``ComposedEvent``, ``SelfComposedEvent``): all-Gaussian parts compose
  exactly (mu^2 add, so ``count`` uses give mu sqrt(count)); all pure parts (RR, K-RR, Laplace,
  pure DP) by basic composition (eps add; an upper bound); pure and (eps, delta) parts by basic
  composition (eps add, delta add; an upper bound); Gaussian and discrete-Gaussian parts
  through zCDP (rho adds, mu-GDP being mu^2/2-zCDP; an upper bound); other mixes raise
  ``NotImplementedError``;
* parallel: delta = max over parts, epsilon = max, tradeoff = min (exact worst case);
* Gaussian mixture: ``gdp_mixture_delta`` / ``gdp_mixture_tradeoff``; epsilon by a root in
  log delta.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import gdp as _gdp
from ldpjax.accounting import mixture as _mixture
from ldpjax.accounting import protocol as p
from ldpjax.accounting import zcdp as _zcdp
from ldpjax.accounting.mixture import gdp_mixture_tradeoff
from ldpjax.accounting.pure import krr_explore_prob, rr_epsilon
from ldpjax.types import Array, ArrayLike

_INF = float("inf")


def _check_events(events: Any, where: str) -> None:
    if not isinstance(events, (tuple, list)) or not events:
        raise ValueError(f"{where}events must be a non-empty tuple of events; got {events!r}")
    for i, part in enumerate(events):
        p.check(part, f"{where}events[{i}].")


# --------------------------------------------------------------------------- releases
class GaussianEvent(NamedTuple):
    """A mu-GDP Gaussian release (Dong, Roth & Su 2019). ``mu = inf``: no noise.

    Example:
      >>> from ldpjax.accounting.accountant import delta
      >>> round(float(delta(GaussianEvent(1.0), 1.0)), 4)
      0.1269
    """

    mu: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}mu", self.mu, 0.0, _INF, low_open=True)

    def valid(self) -> Array:
        return jnp.asarray(self.mu) > 0

    def prepared(self) -> GaussianEvent:
        return GaussianEvent(p.budget_array(self.mu))

    def gdp_mu(self, dtype) -> Array:
        return jnp.asarray(self.mu, dtype)

    def zcdp_rho(self, dtype) -> Array:
        mu = jnp.asarray(self.mu, dtype)
        return 0.5 * mu * mu


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class DiscreteGaussianEvent:
    """A discrete Gaussian release on a grid: scale ``sigma`` and integer l2 ``shift`` in grid
    units, ``dim`` coordinates (static). ``sigma = 0`` (with ``shift > 0``): no noise.

    Example:
      >>> from ldpjax.accounting.accountant import composed_rho
      >>> float(composed_rho(DiscreteGaussianEvent(2.0, 2)))  # shift^2 / (2 sigma^2)
      0.5
    """

    sigma: ArrayLike
    shift: ArrayLike
    dim: int = dataclasses.field(default=1, metadata=dict(static=True))

    def check(self, where: str) -> None:
        v.check_range(f"{where}sigma", self.sigma, 0.0, _INF, high_open=True)
        v.check_integer(f"{where}shift", self.shift, 0)
        dim = self.dim
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool) or dim < 1:
            raise ValueError(f"{where}dim must be a Python integer >= 1; got {dim!r}")

    def valid(self) -> Array:
        return _zcdp._dg_valid(*_gdp._float(self.sigma, self.shift))

    def prepared(self) -> DiscreteGaussianEvent:
        return DiscreteGaussianEvent(p.array(self.sigma), p.array(self.shift), self.dim)

    def delta_at(self, eps: Array) -> Array:
        return jnp.exp(
            _zcdp.discrete_gaussian_log_delta_jit(self.sigma, self.shift, eps, self.dim))

    def epsilon_at(self, log_delta: Array) -> Array:
        return _zcdp.discrete_gaussian_epsilon_jit(self.sigma, self.shift, log_delta, self.dim)

    def zcdp_rho(self, dtype) -> Array:
        return _zcdp.discrete_gaussian_rho(self.sigma, self.shift).astype(dtype)


def _rr_delta(pq: tuple[Array, Array], eps: Array) -> Array:
    prob, q = pq
    shown = jnp.where(q > 0, jnp.exp(eps) * q, 0.0)  # q = 0 (no privacy): e^inf * 0 is 0
    return jnp.maximum(0.0, prob - shown)


def _rr_epsilon(pq: tuple[Array, Array], log_target: Array) -> Array:
    prob, q = pq
    target = jnp.exp(log_target)
    positive = (prob - target > q) & (q > 0)
    ratio = jnp.where(positive, prob - target, 1.0) / jnp.where(positive, q, 1.0)
    out = jnp.where(positive, jnp.log(ratio), 0.0)
    return jnp.where((q == 0) & (prob > target), jnp.inf, out)


class RandomizedResponseEvent(NamedTuple):
    """Binary randomized response with truthful rate r in (0, 1].

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> round(float(epsilon(RandomizedResponseEvent(0.5), 0.0)), 4)  # log 3
      1.0986
    """

    r: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}r", self.r, 0.0, 1.0, low_open=True)

    def valid(self) -> Array:
        r = jnp.asarray(self.r)
        return (r > 0) & (r <= 1)

    def prepared(self) -> RandomizedResponseEvent:
        return RandomizedResponseEvent(p.budget_array(self.r))

    def _pq(self) -> tuple[Array, Array]:
        r = jnp.asarray(self.r, p.dtype_of(self))
        return 0.5 * (1.0 + r), 0.5 * (1.0 - r)

    def delta_at(self, eps: Array) -> Array:
        return _rr_delta(self._pq(), eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        return _rr_epsilon(self._pq(), log_delta)

    def pure_eps(self, dtype) -> Array:
        return rr_epsilon(self.r).astype(dtype)


class KaryRandomizedResponseEvent(NamedTuple):
    """K-ary randomized response with budget xi in [0, inf] over k >= 2 categories.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> round(float(epsilon(KaryRandomizedResponseEvent(1.0, 4), 0.0)), 4)
      1.0
    """

    xi: ArrayLike
    k: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}xi", self.xi, 0.0, _INF)
        v.check_integer(f"{where}k", self.k, 2)

    def valid(self) -> Array:
        k = jnp.asarray(self.k)
        return (jnp.asarray(self.xi) >= 0) & (k >= 2) & (k == jnp.round(k))

    def prepared(self) -> KaryRandomizedResponseEvent:
        return KaryRandomizedResponseEvent(p.budget_array(self.xi), p.array(self.k))

    def _pq(self) -> tuple[Array, Array]:
        explore = krr_explore_prob(self.xi, self.k)
        q = explore / jnp.asarray(self.k, explore.dtype)
        return 1.0 - explore + q, q

    def delta_at(self, eps: Array) -> Array:
        return _rr_delta(self._pq(), eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        return _rr_epsilon(self._pq(), log_delta)

    def pure_eps(self, dtype) -> Array:
        return jnp.asarray(self.xi, dtype)


class LaplaceEvent(NamedTuple):
    """A pure eps-DP release: the Laplace mechanism (scale sensitivity / eps) or the discrete
    Laplace on a grid. ``eps = inf``: no noise.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> float(epsilon(LaplaceEvent(0.5), 0.0))
      0.5
    """

    eps: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}eps", self.eps, 0.0, _INF)

    def valid(self) -> Array:
        return jnp.asarray(self.eps) >= 0

    def prepared(self) -> LaplaceEvent:
        return LaplaceEvent(p.budget_array(self.eps))

    def pure_eps(self, dtype) -> Array:
        return jnp.asarray(self.eps, dtype)


class PureDpEvent(NamedTuple):
    """Any eps-DP release (dp_accounting's ``EpsilonDeltaDpEvent`` with delta = 0).

    Accounted by the worst case over all eps-DP mechanisms; composes with RR, K-RR and Laplace
    parts by basic composition. ``eps = inf``: no privacy.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> float(epsilon(PureDpEvent(0.5), 0.0))
      0.5
    """

    eps: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}eps", self.eps, 0.0, _INF)

    def valid(self) -> Array:
        return jnp.asarray(self.eps) >= 0

    def prepared(self) -> PureDpEvent:
        return PureDpEvent(p.budget_array(self.eps))

    def pure_eps(self, dtype) -> Array:
        return jnp.asarray(self.eps, dtype)


class ApproxDpEvent(NamedTuple):
    """Any (eps, delta)-DP release (dp_accounting's ``EpsilonDeltaDpEvent``).

    Its profile is the tight one of (eps, delta)-DP, delta + (1 - delta) (e^eps - e^e) /
    (1 + e^eps) at e < eps, and its tradeoff f_{eps, delta} (Dong, Roth & Su 2019, Prop. 2.5);
    it composes with pure and (eps, delta) parts by basic composition (both add).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> event = ApproxDpEvent(1.0, 1e-6)
      >>> bool(epsilon(event, 1e-5) < 1.0), float(epsilon(event, 1e-7))
      (True, inf)
    """

    eps: ArrayLike
    delta: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}eps", self.eps, 0.0, _INF)
        v.check_range(f"{where}delta", self.delta, 0.0, 1.0)

    def valid(self) -> Array:
        d = jnp.asarray(self.delta)
        return (jnp.asarray(self.eps) >= 0) & (d >= 0) & (d <= 1)

    def prepared(self) -> ApproxDpEvent:
        return ApproxDpEvent(p.budget_array(self.eps), p.array(self.delta))

    def approx_dp(self, dtype) -> tuple[Array, Array]:
        return jnp.asarray(self.eps, dtype), jnp.asarray(self.delta, dtype)


class GaussianMixtureEvent(NamedTuple):
    """A revealed mixture: component b (public) is a ``mus[b]``-GDP release, with probability
    ``weights[b]`` (paper 000, Lemma 2: amplification by batching). Components on the last axis.

    Example:
      >>> from ldpjax.accounting.accountant import delta
      >>> round(float(delta(GaussianMixtureEvent([1.0, 0.5], [0.5, 0.5]), 1.0)), 4)
      0.0669
    """

    mus: ArrayLike
    weights: ArrayLike

    def check(self, where: str) -> None:
        _mixture.check_mixture(self.mus, self.weights, where)

    def valid(self) -> Array:
        return _mixture.mixture_valid(self.mus, self.weights)

    def prepared(self) -> GaussianMixtureEvent:
        return GaussianMixtureEvent(p.budget_array(self.mus), p.array(self.weights))

    def ties(self) -> list[Array]:
        return [jnp.sum(jnp.asarray(x, p.dtype_of(self)), axis=-1) for x in self]

    def delta_at(self, eps: Array) -> Array:
        return jnp.exp(_mixture.mixture_log_delta(self.mus, self.weights, eps))

    def epsilon_at(self, log_delta: Array) -> Array:
        return _mixture.mixture_epsilon_at_log_delta(self.mus, self.weights, log_delta)

    def tradeoff_at(self, alpha: Array) -> Array:
        return gdp_mixture_tradeoff(self.mus, self.weights, alpha)


class NoPrivacyEvent(NamedTuple):
    """A release without privacy noise (only ever from an explicit ``mu = inf``).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> float(epsilon(NoPrivacyEvent(), 1e-5))
      inf
    """

    def check(self, where: str) -> None:
        del where

    def delta_at(self, eps: Array) -> Array:
        return jnp.ones_like(eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        return jnp.full_like(log_delta, jnp.inf)

    def tradeoff_at(self, alpha: Array) -> Array:
        return jnp.zeros_like(alpha)


# --------------------------------------------------------------------------- compositions
def _times(count: Any, value: Array) -> Array:
    return value if count is None else jnp.asarray(count, value.dtype) * value


def _has(parts: list[tuple[Any, Any]], name: str) -> bool:
    return all(hasattr(part, name) for part, _ in parts)


class _Sequential:
    """The views of a sequential composition, from its flattened (part, uses) list (its
    ``sequential_parts``); :func:`_sequential` copies them onto a NamedTuple."""

    def _none(self) -> NoPrivacyEvent | None:
        parts = self.sequential_parts()
        return NoPrivacyEvent() if any(isinstance(e, NoPrivacyEvent) for e, _ in parts) else None

    def delta_at(self, eps: Array) -> Array | None:
        none = self._none()
        return None if none is None else none.delta_at(eps)

    def epsilon_at(self, log_delta: Array) -> Array | None:
        none = self._none()
        return None if none is None else none.epsilon_at(log_delta)

    def tradeoff_at(self, alpha: Array) -> Array | None:
        none = self._none()
        return None if none is None else none.tradeoff_at(alpha)

    def gdp_mu(self, dtype) -> Array | None:
        """sqrt(sum count_i mu_i^2), scaled so that tiny mus do not underflow."""
        parts = self.sequential_parts()
        if not _has(parts, "gdp_mu"):
            return None
        if len(parts) == 1:
            ((part, count),) = parts
            mu = part.gdp_mu(p.dtype_of(part))
            if mu is None:
                return None
            return mu if count is None else mu * jnp.sqrt(jnp.asarray(count, mu.dtype))
        mus = [part.gdp_mu(dtype) for part, _ in parts]
        if any(m is None for m in mus):
            return None
        top = jax.lax.stop_gradient(functools.reduce(jnp.maximum, mus))
        scale = jnp.where(jnp.isfinite(top) & (top > 0), top, 1.0)
        total = sum(_times(c, jnp.square(m / scale)) for m, (_, c) in zip(mus, parts, strict=True))
        return jnp.where(jnp.isinf(top), jnp.inf, jnp.sqrt(total) * scale)

    def pure_eps(self, dtype) -> Array | None:
        """Basic composition: sum count_i eps_i."""
        del dtype
        parts = self.sequential_parts()
        if not _has(parts, "pure_eps"):
            return None
        eps = [part.pure_eps(p.dtype_of(part)) for part, _ in parts]
        if any(e is None for e in eps):
            return None
        return sum(_times(c, e) for e, (_, c) in zip(eps, parts, strict=True))

    def approx_dp(self, dtype) -> tuple[Array, Array] | None:
        """Basic composition: (sum count_i eps_i, min(1, sum count_i delta_i))."""
        del dtype
        parts = self.sequential_parts()
        if not all(hasattr(e, "approx_dp") or hasattr(e, "pure_eps") for e, _ in parts):
            return None
        pairs = [p.approx_view(part, p.dtype_of(part)) for part, _ in parts]
        if any(pair is None for pair in pairs):
            return None
        eps = sum(_times(c, e) for (e, _), (_, c) in zip(pairs, parts, strict=True))
        delta = sum(_times(c, d) for (_, d), (_, c) in zip(pairs, parts, strict=True))
        return eps, jnp.minimum(delta, 1.0)

    def zcdp_rho(self, dtype) -> Array | None:
        """sum count_i rho_i (mu-GDP parts count mu^2 / 2)."""
        parts = self.sequential_parts()
        if not _has(parts, "zcdp_rho"):
            return None
        total = jnp.zeros((), dtype)
        for part, count in parts:
            rho = part.zcdp_rho(dtype)
            if rho is None:
                return None
            total = total + _times(count, rho)
        return total


_SEQUENTIAL_VIEWS = ("_none", "delta_at", "epsilon_at", "tradeoff_at", "gdp_mu", "pure_eps",
                     "approx_dp", "zcdp_rho")


def _sequential(cls):
    for name in _SEQUENTIAL_VIEWS:
        setattr(cls, name, _Sequential.__dict__[name])
    return cls


@_sequential
class ComposedEvent(NamedTuple):
    """Sequential composition: one record takes part in every event of ``events``.

    Example:
      >>> from ldpjax.accounting.accountant import composed_mu
      >>> round(float(composed_mu(ComposedEvent((GaussianEvent(0.6), GaussianEvent(0.8))))), 4)
      1.0
    """

    events: tuple

    def check(self, where: str) -> None:
        _check_events(self.events, where)

    def valid(self) -> Array:
        return functools.reduce(jnp.logical_and, [p.valid(e) for e in self.events])

    def prepared(self) -> ComposedEvent:
        return ComposedEvent(tuple(p.prepared(e) for e in self.events))

    def ties(self) -> list[Array]:
        return [t for e in self.events for t in p.ties(e)]

    def sequential_parts(self, count: Any = None) -> list[tuple[Any, Any]]:
        return [pc for e in self.events for pc in _sequential_parts(e, count)]


@_sequential
class SelfComposedEvent(NamedTuple):
    """``count`` identical uses of one record by ``event`` (an integer count >= 1): the
    sequential composition of ``count`` copies, dp_accounting's ``SelfComposedDpEvent``.

    Gaussian: mu sqrt(count) (exact); pure events: count * eps0 (basic composition); discrete
    Gaussian: count * rho (zCDP).

    Example:
      >>> from ldpjax.accounting.accountant import composed_mu
      >>> round(float(composed_mu(SelfComposedEvent(GaussianEvent(1.0), 4))), 4)
      2.0
    """

    event: Any
    count: ArrayLike

    def check(self, where: str) -> None:
        p.check(self.event, f"{where}event.")
        v.check_integer(f"{where}count", self.count, 1)

    def valid(self) -> Array:
        count = jnp.asarray(self.count)
        return p.valid(self.event) & (count >= 1) & (count == jnp.round(count))

    def prepared(self) -> SelfComposedEvent:
        return SelfComposedEvent(p.prepared(self.event), p.array(self.count))

    def ties(self) -> list[Array]:
        return [*p.ties(self.event), self.count]

    def sequential_parts(self, count: Any = None) -> list[tuple[Any, Any]]:
        uses = jnp.asarray(self.count)
        return _sequential_parts(self.event, uses if count is None else count * uses)


def _sequential_parts(event: Any, count: Any = None) -> list[tuple[Any, Any]]:
    """(part, number of uses or None for one) of a sequential composition, flattened."""
    if hasattr(event, "sequential_parts"):
        return event.sequential_parts(count)
    return [(event, count)]


class ParallelEvent(NamedTuple):
    """Parallel composition: each record takes part in exactly one event of ``events``.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> float(epsilon(ParallelEvent((LaplaceEvent(0.5), LaplaceEvent(2.0))), 0.0))
      2.0
    """

    events: tuple

    def check(self, where: str) -> None:
        _check_events(self.events, where)

    def valid(self) -> Array:
        return functools.reduce(jnp.logical_and, [p.valid(e) for e in self.events])

    def prepared(self) -> ParallelEvent:
        return ParallelEvent(tuple(p.prepared(e) for e in self.events))

    def ties(self) -> list[Array]:
        return [t for e in self.events for t in p.ties(e)]

    def delta_at(self, eps: Array) -> Array:
        return functools.reduce(jnp.maximum, [p.delta_of(e, eps) for e in self.events])

    def epsilon_at(self, log_delta: Array) -> Array:
        return functools.reduce(jnp.maximum, [p.epsilon_of(e, log_delta) for e in self.events])

    def tradeoff_at(self, alpha: Array) -> Array:
        return functools.reduce(jnp.minimum, [p.tradeoff_of(e, alpha) for e in self.events])


PURE_EVENTS = (RandomizedResponseEvent, KaryRandomizedResponseEvent, LaplaceEvent)

__all__ = [
    "ApproxDpEvent",
    "ComposedEvent",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "GaussianMixtureEvent",
    "KaryRandomizedResponseEvent",
    "LaplaceEvent",
    "NoPrivacyEvent",
    "ParallelEvent",
    "PureDpEvent",
    "RandomizedResponseEvent",
    "SelfComposedEvent",
]
