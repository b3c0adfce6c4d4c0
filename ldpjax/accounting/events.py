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
* :class:`WeightedRandomizedResponseEvent` ``(p, q)`` — a randomized-response channel by its
  worst pair (weighted K-ary RR), 0 <= q <= p <= 1, p > 0;
* :class:`LaplaceEvent` ``(eps)`` — the Laplace mechanism on one coordinate (scale
  sensitivity / eps), eps in [0, inf];
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
* Laplace: its own profile delta(e) = 1 - e^((e - eps)/2) for e < eps (0 from eps on),
  epsilon(delta) = max(0, eps + 2 log(1 - delta)) and the Laplace tradeoff curve of Dong, Roth
  & Su (:mod:`ldpjax.accounting.laplace`);
* pure DP (``PureDpEvent``, and the granular Laplace's claim): the eps-DP profile delta(e) =
  (e^eps - e^e) / (1 + e^eps) and tradeoff f_{eps, 0}, the worst case over all eps-DP
  mechanisms; (eps, delta)-DP: delta + (1 - delta) times that profile and f_{eps, delta}, the
  worst case over all (eps, delta)-DP mechanisms;
* discrete Gaussian: scalar (dim = 1) with 12 sigma + shift <= 4096: the exact profile (window
  sum plus a tail bound, capped by the zCDP bound; :mod:`ldpjax.accounting.zcdp`); otherwise
  the (shift^2 / (2 sigma^2))-zCDP bound (CKS 2020, Thm 14) converted to (eps, delta) (CKS 2020,
  Cor. 13) — an upper bound; tradeoff: not available (``NotImplementedError``);
* sequential composition (``ComposedEvent``, ``SelfComposedEvent``): all-Gaussian parts compose
  exactly (mu^2 add, so ``count`` uses give mu sqrt(count)); any other composition of more than
  one use by the privacy loss distribution of its parts composed by FFT
  (:mod:`ldpjax.accounting.pld_accountant`, an upper bound), capped by the closed forms that
  apply: all pure parts (RR, K-RR, Laplace, pure DP) by basic composition (eps add), pure and
  (eps, delta) parts by basic composition (eps add, delta add), Gaussian and
  discrete-Gaussian parts through zCDP (rho adds, mu-GDP being mu^2/2-zCDP); a part without a
  privacy loss distribution or a shared closed form raises ``NotImplementedError``;
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
from ldpjax.accounting import laplace as _laplace
from ldpjax.accounting import mixture as _mixture
from ldpjax.accounting import protocol as p
from ldpjax.accounting import zcdp as _zcdp
from ldpjax.accounting.mixture import gdp_mixture_tradeoff
from ldpjax.accounting.pure import (
    krr_explore_prob,
    krr_pair_delta_unchecked,
    krr_pair_epsilon_unchecked,
    rr_delta_unchecked,
    rr_epsilon,
    rr_epsilon_unchecked,
)
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

    Its profile is evaluated in relative terms and rounded up (:mod:`ldpjax.accounting.pure`):
    never below the exact values for the float r; r = 1e-9 gives eps = 2e-9, not 0.

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

    def delta_at(self, eps: Array) -> Array:
        return rr_delta_unchecked(jnp.asarray(self.r, p.dtype_of(self, eps)), eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        return rr_epsilon_unchecked(jnp.asarray(self.r, p.dtype_of(self, log_delta)), log_delta)

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
    """The Laplace mechanism on one coordinate: ``value + (sensitivity / eps) L``, L a standard
    Laplace variable. ``eps = inf``: no noise.

    Accounted exactly (:mod:`ldpjax.accounting.laplace`): delta(e) = 1 - e^((e - eps)/2) below
    eps, epsilon(delta) = max(0, eps + 2 log(1 - delta)), the Laplace tradeoff curve of Dong,
    Roth & Su (2022), and in compositions its own privacy loss distribution (atoms at +-eps and
    a continuous part between them). It is eps-DP (``pure_eps``), but its profile is below the
    worst eps-DP pair's: the discrete Laplace on a grid, whose loss takes only the values
    +-eps, is a ``PureDpEvent`` (:func:`ldpjax.mechanisms.laplace_claim`).

    Example:
      >>> from ldpjax.accounting.accountant import delta, epsilon
      >>> float(epsilon(LaplaceEvent(0.5), 0.0))
      0.5
      >>> round(float(delta(LaplaceEvent(1.0), 0.0)), 4)  # 1 - e^-1/2
      0.3935
    """

    eps: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}eps", self.eps, 0.0, _INF)

    def valid(self) -> Array:
        return jnp.asarray(self.eps) >= 0

    def prepared(self) -> LaplaceEvent:
        return LaplaceEvent(p.budget_array(self.eps))

    def delta_at(self, eps: Array) -> Array:
        return _laplace.laplace_delta_unchecked(jnp.asarray(self.eps, p.dtype_of(self, eps)), eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        eps0 = jnp.asarray(self.eps, p.dtype_of(self, log_delta))
        return _laplace.laplace_epsilon_unchecked(eps0, log_delta)

    def tradeoff_at(self, alpha: Array) -> Array:
        eps0 = jnp.asarray(self.eps, p.dtype_of(self, alpha))
        return _laplace.laplace_tradeoff_unchecked(eps0, alpha)

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
        # a concrete delta below the normal range (1e-300 in float32) counts as the smallest normal
        return ApproxDpEvent(p.budget_array(self.eps), p.budget_array(self.delta))

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
        return SelfComposedEvent(p.prepared(self.event), _count_array(self.count, self.event))

    def ties(self) -> list[Array]:
        return [*p.ties(self.event), self.count]

    def sequential_parts(self, count: Any = None) -> list[tuple[Any, Any]]:
        uses = jnp.asarray(self.count)
        return _sequential_parts(self.event, uses if count is None else count * uses)


def _count_array(count: ArrayLike, event: Any) -> Array:
    """A use count as an array: as given where it fits in int32; a concrete integer count beyond
    int32 as a float of the event's dtype, rounded *up* where that float is not exact
    (2^40 + 1 in float32), so the composed claim never counts fewer uses."""
    arr = np.asarray(count) if v.is_concrete(count) else None
    if arr is None or arr.dtype.kind not in "iuO" or np.all(np.abs(arr.astype(float)) < 2**31):
        return p.array(count)
    dtype = jnp.dtype(p.dtype_of(event))
    out = arr.astype(np.float64).astype(dtype)
    to_int = np.vectorize(int, otypes=[object])
    short = np.isfinite(out) & (to_int(np.where(np.isfinite(out), out, 0)) < to_int(arr))
    return jnp.asarray(np.where(short, np.nextafter(out, dtype.type(np.inf)), out), dtype)


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


class WeightedRandomizedResponseEvent(NamedTuple):
    """A randomized-response channel given by its worst pair: delta(eps) = max(0, p - e^eps q).

    In the worst pair of neighbouring inputs one outcome has probability p under the first
    and q <= p under the second, and it is the only outcome less likely under the second.
    K-RR at budget xi is (p, q) = (e^xi, 1) / (K - 1 + e^xi); weighted K-RR (epsilon-greedy
    with arm-specific budgets, a_j = 1 / (e^{xi_j} - 1), S = sum_j a_j) is p = (1 + a_min) /
    (1 + S), q = a_min / (1 + S), a_min of the largest budget. Pure eps0 = log(p / q);
    epsilon(delta) = log((p - delta) / q). Evaluated with directed rounding
    (:func:`~ldpjax.accounting.pure.krr_pair_delta_unchecked`): never below the exact values
    for the floats p and q. Domain: p in (0, 1], q in [0, p] (q = 0: no privacy).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> round(float(epsilon(WeightedRandomizedResponseEvent(0.75, 0.25), 0.0)), 4)  # log 3
      1.0986
    """

    p: ArrayLike
    q: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}p", self.p, 0.0, 1.0, low_open=True)
        v.check_range(f"{where}q", self.q, 0.0, 1.0)
        if v.is_concrete((self.p, self.q)) and np.any(np.asarray(self.q) > np.asarray(self.p)):
            raise ValueError(f"{where}q must be <= {where}p; got q = {self.q!r}, p = {self.p!r}")

    def valid(self) -> Array:
        prob, q = jnp.asarray(self.p), jnp.asarray(self.q)
        return (prob > 0) & (prob <= 1) & (q >= 0) & (q <= prob)

    def prepared(self) -> WeightedRandomizedResponseEvent:
        return WeightedRandomizedResponseEvent(p.array(self.p), p.array(self.q))

    def delta_at(self, eps: Array) -> Array:
        return krr_pair_delta_unchecked(self.p, self.q, eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        return krr_pair_epsilon_unchecked(self.p, self.q, log_delta)

    def pure_eps(self, dtype) -> Array:
        eps0 = krr_pair_epsilon_unchecked(self.p, self.q, jnp.asarray(-jnp.inf, dtype))
        return eps0.astype(dtype)


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
    "WeightedRandomizedResponseEvent",
]
