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
* :class:`~ldpjax.accounting.composition.ComposedEvent` ``(events)`` — sequential composition: the same record in every part;
* :class:`~ldpjax.accounting.composition.SelfComposedEvent` ``(event, count)`` — ``count`` (an integer >= 1) uses of one record
  by the same release (dp_accounting's ``SelfComposedDpEvent``), e.g. a record reused m times;
* :class:`~ldpjax.accounting.composition.ParallelEvent` ``(events)`` — each record in exactly one part (the worst part counts);
* :class:`GaussianMixtureEvent` ``(mus, weights)`` — a revealed mixture of Gaussian releases
  (RW-AdaBatch's batch law, Lemma 2 of "Prediction with Expert Advice under Local Differential
  Privacy", ICLR 2026: the record's batch has component B with probability ``weights[B]`` and the
  batch size is public); mus in (0, inf), weights >= 0 summing to 1;
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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(np.isposinf, self.mu)

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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(lambda s, d: (s == 0) & (d > 0), self.sigma, self.shift)

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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(lambda r: r >= 1, self.r)

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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(np.isposinf, self.xi)

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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(np.isposinf, self.eps)

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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(np.isposinf, self.eps)

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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(np.isposinf, self.eps)

    def approx_dp(self, dtype) -> tuple[Array, Array]:
        return jnp.asarray(self.eps, dtype), jnp.asarray(self.delta, dtype)


class GaussianMixtureEvent(NamedTuple):
    """A revealed mixture: component b (public) is a ``mus[b]``-GDP release, with probability
    ``weights[b]`` (Lemma 2 of the expert-advice paper: amplification by batching). Components
    on the last axis.

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

    def grants_no_privacy(self) -> bool:
        return True

    def delta_at(self, eps: Array) -> Array:
        return jnp.ones_like(eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        return jnp.full_like(log_delta, jnp.inf)

    def tradeoff_at(self, alpha: Array) -> Array:
        return jnp.zeros_like(alpha)


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

    def grants_no_privacy(self) -> bool:
        return p.concrete_any(lambda q: q == 0, self.q)

    def delta_at(self, eps: Array) -> Array:
        return krr_pair_delta_unchecked(self.p, self.q, eps)

    def epsilon_at(self, log_delta: Array) -> Array:
        return krr_pair_epsilon_unchecked(self.p, self.q, log_delta)

    def pure_eps(self, dtype) -> Array:
        eps0 = krr_pair_epsilon_unchecked(self.p, self.q, jnp.asarray(-jnp.inf, dtype))
        return eps0.astype(dtype)


__all__ = [
    "ApproxDpEvent",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "GaussianMixtureEvent",
    "KaryRandomizedResponseEvent",
    "LaplaceEvent",
    "NoPrivacyEvent",
    "PureDpEvent",
    "RandomizedResponseEvent",
    "WeightedRandomizedResponseEvent",
]
