"""Privacy events of the frequency and mean oracles, with their exact profiles.

Every oracle here has a worst pair of neighbouring inputs whose output laws differ on two sets
of outcomes only: one of mass P under the first input and Q = P e^-eps0 under the second (loss
+eps0), its mirror image (loss -eps0), and the rest with equal mass under both (loss 0). Such a
*pair channel* has the exact profile, inverse, tradeoff curve and privacy loss distribution

    delta(e) = P (1 - e^(e - eps0))  (e < eps0; 0 from eps0 on),
    eps(delta) = eps0 + log(1 - delta / P)  (delta < P; else 0),
    f(alpha) = max(1 - e^eps0 alpha, 1 - (P - Q) - alpha, e^-eps0 (1 - alpha)),
    PLD: atoms +eps0, -eps0, 0 with masses P, Q, 1 - P - Q,

and pure epsilon eps0. The events (parameter domains in brackets; P and eps0):

* :class:`UnaryEncodingEvent` ``(p, q)`` — unary encoding (0 <= q <= p <= 1, p > 0, q < 1): the
  pair differs in two bits, P = p (1 - q), eps0 = ln(p (1 - q) / ((1 - p) q)) (Wang, Blocki,
  Li & Jha, "Locally Differentially Private Protocols for Frequency Estimation", USENIX
  Security 2017); :func:`sue_event` and :func:`oue_event` give the presets at a budget eps;
* :class:`LocalHashingEvent` ``(eps, g)`` — local hashing (eps in [0, inf], integer g >= 2):
  two items collide with probability at least 1/g under the public hash family, and the
  outputs are then equal in law, so P = (1 - 1/g) e^eps / (e^eps + g - 1), eps0 = eps;
* :class:`HadamardResponseEvent` ``(eps)`` — Hadamard response (Acharya, Sun & Zhang, AISTATS
  2019): P = e^eps / (2 (e^eps + 1)), eps0 = eps, for every d;
* :class:`SubsetSelectionEvent` ``(eps, d, k)`` — k-subset selection (Ye & Barg, IEEE Trans.
  IT 2018; integers d >= 2, 1 <= k <= d - 1): P = k (d - k) e^eps / ((d - 1)(k e^eps + d - k));
* :class:`DuchiEvent` ``(eps)`` — Duchi, Jordan & Wainwright's one-bit mean mechanism (JASA
  2018): binary randomized response at eps, P = e^eps / (e^eps + 1);
* :class:`PiecewiseEvent` ``(eps)`` — the piecewise mechanism (Wang et al., ICDE 2019):
  P = s / (s + 1), s = e^(eps/2) (an upper bound for its discretised release, see
  :mod:`ldpjax.mechanisms.piecewise`);
* :class:`HybridEvent` ``(eps)`` — the hybrid mechanism: P = beta s / (s + 1) + (1 - beta)
  e^eps / (e^eps + 1), beta = 1 - e^(-eps/2) for eps > 0.61, else 0.

Each is exact for the mechanism of :mod:`ldpjax.mechanisms` it names, whose realised law (on
integer thresholds) is never more distinguishable than the nominal one. Claims round up: P is
evaluated in log space with relative error of a few units of the dtype's epsilon and raised by
:data:`ROUND_UP` of them, eps0 is the budget itself (UE: the float evaluation raised by its
rounding bound), and the profile, inverse and tradeoff are evaluated on the side of less
privacy (checked against 60-digit mpmath and a brute-force enumeration of the output laws in
``tests/accounting/test_oracles_events.py``). Validation, ``valid``, ``prepared`` and the views
follow :mod:`ldpjax.accounting.protocol`; ``privacy_loss`` gives the exact three-atom PLD, so
compositions of these events are accounted by the PLD accountant.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import protocol as p
from ldpjax.accounting.pld import PldGrid, PrivacyLossDistribution, discretise_atoms
from ldpjax.types import Array, ArrayLike

#: Units of the dtype's epsilon by which P is raised (its log-space evaluation is within 4).
ROUND_UP = 16
#: Below this budget the hybrid mechanism is Duchi et al.'s alone (Wang et al. 2019).
HYBRID_THRESHOLD = 0.61
_INF = float("inf")


def _u(dtype) -> float:
    return float(jnp.finfo(dtype).eps)


def log1m(x: Array) -> Array:
    """log(1 - x) for x <= 1, within a few units of the dtype's epsilon (relative).

    ``log1p(-x)`` below x = 1/4; ``log(1 - x)`` above, where 1 - x is rounded by at most half
    a unit and |log(1 - x)| >= 0.28 keeps that relative. (XLA's float64 ``log1p`` is off by up
    to 120 units near -0.41, measured against mpmath; its argument stays in (-1/4, 0] here.)
    """
    small = x < 0.25
    return jnp.where(small, jnp.log1p(-jnp.where(small, x, 0.0)),
                     jnp.log(1.0 - jnp.where(small, 0.5, x)))


def _whole(x: Array) -> Array:
    return x == jnp.round(x)


# --------------------------------------------------------------------------- the pair channel
class _PairChannel:
    """The views of a pair channel from ``_pair(dtype, up) -> (log P, eps0)`` (module doc);
    copied onto each NamedTuple event by :func:`_pair_channel`."""

    def _up(self, dtype) -> tuple[Array, Array]:
        log_mass, eps0 = self._pair(dtype, True)
        return jnp.minimum(log_mass + ROUND_UP * _u(dtype), 0.0), eps0

    def delta_at(self, eps: Array) -> Array:
        log_mass, eps0 = self._up(eps.dtype)
        gap = jnp.where(eps < jnp.inf, eps0 - eps, -jnp.inf)
        inside = gap > 0
        shape = -jnp.expm1(-jnp.where(inside, gap, 1.0))  # 1 - e^(e - eps0), relative ulps
        out = jnp.where(inside, jnp.exp(log_mass) * shape * (1.0 + 4.0 * _u(eps.dtype)), 0.0)
        # no privacy (eps0 = inf): the mass P sits at loss +inf, delta(inf) = P
        out = jnp.where((eps == jnp.inf) & (eps0 == jnp.inf), jnp.exp(log_mass), out)
        return jnp.minimum(out, 1.0)

    def epsilon_at(self, log_delta: Array) -> Array:
        dtype = log_delta.dtype
        log_mass, eps0 = self._up(dtype)
        tol = _u(dtype)
        lowered = log_delta - 2.0 * tol * jnp.abs(log_delta) - 4.0 * tol
        ratio = jnp.exp(jnp.minimum(lowered - log_mass, 0.0))  # delta / P, rounded down
        inside = lowered < log_mass
        shift = log1m(jnp.where(inside, ratio, 0.0))  # <= 0
        out = eps0 + shift  # exact where shift = 0 (delta = 0: the pure epsilon)
        out = out + jnp.where(shift < 0, 4.0 * tol * (jnp.where(eps0 < jnp.inf, eps0, 0.0)
                                                       - shift), 0.0)
        return jnp.where(inside, jnp.maximum(out, 0.0), 0.0)

    def tradeoff_at(self, alpha: Array) -> Array:
        log_mass, eps0 = self._up(alpha.dtype)
        finite = eps0 < jnp.inf
        safe = jnp.where(finite, eps0, 0.0)
        gap = jnp.exp(log_mass) * -jnp.expm1(-safe)  # P - Q
        first = jnp.where(finite, 1.0 - jnp.exp(safe) * alpha, jnp.where(alpha > 0, -1.0, 1.0))
        third = jnp.where(finite, jnp.exp(-safe) * (1.0 - alpha), 0.0)
        middle = 1.0 - jnp.where(finite, gap, jnp.exp(log_mass)) - alpha
        out = jnp.maximum(jnp.maximum(first, middle), third)
        return jnp.maximum(out * (1.0 - 8.0 * _u(alpha.dtype)), 0.0)

    def pure_eps(self, dtype) -> Array:
        return self._pair(dtype, True)[1]

    def privacy_loss(self, grid: PldGrid, pessimistic: bool = True) -> PrivacyLossDistribution:
        dtype = p.dtype_of(self)
        log_mass, eps0 = self._up(dtype) if pessimistic else self._pair(dtype, False)
        finite = eps0 < jnp.inf
        log_q = jnp.where(finite, log_mass - jnp.where(finite, eps0, 0.0), -jnp.inf)
        rest = 1.0 - jnp.exp(log_mass) - jnp.exp(log_q)
        log_rest = jnp.where(rest > 0, jnp.log(jnp.where(rest > 0, rest, 1.0)), -jnp.inf)
        losses = jnp.stack([eps0, -eps0, jnp.zeros_like(eps0)], -1)
        masses = jnp.stack([log_mass, log_q, log_rest], -1)
        parts = discretise_atoms(grid, losses, masses, pessimistic)
        return PrivacyLossDistribution(*parts, grid=grid, pessimistic=pessimistic)


_VIEWS = ("_up", "delta_at", "epsilon_at", "tradeoff_at", "pure_eps", "privacy_loss")


def _pair_channel(cls):
    for name in _VIEWS:
        setattr(cls, name, _PairChannel.__dict__[name])
    return cls


def _budget(eps: ArrayLike, dtype) -> Array:
    return jnp.asarray(eps, dtype)


def _log_sigmoid(x: Array) -> Array:
    """log(1 / (1 + e^-x)) = -softplus(-x), accurate at both ends (x = inf gives 0)."""
    return -jax.nn.softplus(-x)


# --------------------------------------------------------------------------- unary encoding
@_pair_channel
class UnaryEncodingEvent(NamedTuple):
    """Unary encoding with probabilities p (own bit) and q (other bits), exact for the floats.

    P = p (1 - q), eps0 = (log p - log(1 - p)) - (log q - log(1 - q)), raised by its rounding
    bound (8 units of the dtype's epsilon times the sum of the four logarithms' sizes). p = 1 or q = 0: no privacy (eps0 = inf).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> round(float(epsilon(UnaryEncodingEvent(0.5, 0.25), 0.0)), 4)  # ln 3
      1.0986
    """

    p: ArrayLike
    q: ArrayLike

    def check(self, where: str) -> None:
        v.check_range(f"{where}p", self.p, 0.0, 1.0, low_open=True)
        v.check_range(f"{where}q", self.q, 0.0, 1.0, high_open=True)
        if v.is_concrete((self.p, self.q)) and np.any(np.asarray(self.q, np.float64)
                                                      > np.asarray(self.p, np.float64)):
            raise ValueError(f"{where}q must be <= {where}p; got q = {self.q!r}, p = {self.p!r}")

    def valid(self) -> Array:
        prob, q = jnp.asarray(self.p), jnp.asarray(self.q)
        return (prob > 0) & (prob <= 1) & (q >= 0) & (q < 1) & (q <= prob)

    def prepared(self) -> UnaryEncodingEvent:
        return UnaryEncodingEvent(p.array(self.p), p.array(self.q))

    def _pair(self, dtype, up: bool) -> tuple[Array, Array]:
        prob, q = jnp.asarray(self.p, dtype), jnp.asarray(self.q, dtype)
        prob, q = jnp.broadcast_arrays(prob, q)
        ok = (prob > 0) & (q < 1)
        prob, q = jnp.where(ok, prob, 0.5), jnp.where(ok, q, 0.25)
        terms = (jnp.log(prob), log1m(prob), jnp.log(q), log1m(q))
        eps0 = (terms[0] - terms[1]) - (terms[2] - terms[3])
        finite = jnp.isfinite(eps0)
        size = sum(jnp.abs(jnp.where(jnp.isfinite(t), t, 0.0)) for t in terms)
        if up:
            eps0 = eps0 + 8.0 * _u(dtype) * size  # each term within 3 units
        eps0 = jnp.where(finite, jnp.maximum(eps0, 0.0), jnp.inf)
        return terms[0] + terms[3], eps0


def _down_ulps(x: Array, ulps: int = 4) -> Array:
    """x lowered by ``ulps`` floats (value; the gradient is x's)."""
    fixed = jax.lax.stop_gradient(x)
    low = fixed
    for _ in range(ulps):
        low = jnp.nextafter(low, jnp.zeros_like(low))
    return x + (low - fixed)


def _up_ulps(x: Array, ulps: int = 4) -> Array:
    """x raised by ``ulps`` floats, at most 1 (value; the gradient is x's)."""
    fixed = jax.lax.stop_gradient(x)
    high = fixed
    for _ in range(ulps):
        high = jnp.nextafter(high, jnp.full_like(high, 2.0))
    return x + (jnp.minimum(high, 1.0) - fixed)


def sue_event(eps: ArrayLike) -> UnaryEncodingEvent:
    """The claim of SUE at budget eps: ``UnaryEncodingEvent(p, q)`` with p = e^(eps/2) /
    (e^(eps/2) + 1) rounded up and q = 1 / (e^(eps/2) + 1) rounded down (4 floats each beyond
    their evaluation error), so the claim is never below that of the exact preset.
    Differentiable in eps.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> round(float(epsilon(sue_event(1.0), 0.0)), 4)
      1.0
    """
    v.check_range("eps", eps, 0.0, _INF)
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    q = _down_ulps(jax.nn.sigmoid(-0.5 * eps))
    return UnaryEncodingEvent(_up_ulps(1.0 - q), q)


def oue_event(eps: ArrayLike) -> UnaryEncodingEvent:
    """The claim of OUE at budget eps: ``UnaryEncodingEvent(1/2, q)``, q = 1 / (e^eps + 1)
    rounded down (4 floats beyond its evaluation error). Differentiable in eps.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> round(float(epsilon(oue_event(2.0), 0.0)), 4)
      2.0
    """
    v.check_range("eps", eps, 0.0, _INF)
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    return UnaryEncodingEvent(jnp.full_like(eps, 0.5), _down_ulps(jax.nn.sigmoid(-eps)))


# --------------------------------------------------------------------------- eps-parameterised
def _check_eps(eps: ArrayLike, where: str) -> None:
    v.check_range(f"{where}eps", eps, 0.0, _INF)


@_pair_channel
class LocalHashingEvent(NamedTuple):
    """Local hashing (BLH, OLH) at budget eps over g buckets, hash drawn from the public family
    of :mod:`ldpjax.mechanisms.local_hashing` (collision probability >= 1/g).

    Example:
      >>> from ldpjax.accounting.accountant import delta
      >>> round(float(delta(LocalHashingEvent(1.0, 4), 0.0)), 4)  # (3/4)(e - 1)/(e + 3)
      0.2254
    """

    eps: ArrayLike
    g: ArrayLike

    def check(self, where: str) -> None:
        _check_eps(self.eps, where)
        v.check_integer(f"{where}g", self.g, 2)

    def valid(self) -> Array:
        g = jnp.asarray(self.g)
        return (jnp.asarray(self.eps) >= 0) & (g >= 2) & _whole(g)

    def prepared(self) -> LocalHashingEvent:
        return LocalHashingEvent(p.budget_array(self.eps), p.array(self.g))

    def _pair(self, dtype, up: bool) -> tuple[Array, Array]:
        del up
        eps, g = jnp.broadcast_arrays(_budget(self.eps, dtype), jnp.asarray(self.g, dtype))
        g = jnp.maximum(g, 2.0)
        decay = jnp.exp(-jnp.maximum(eps, 0.0))
        return log1m(1.0 / g) - jnp.log1p((g - 1.0) * decay), eps


@_pair_channel
class HadamardResponseEvent(NamedTuple):
    """Hadamard response at budget eps (any number of items).

    Example:
      >>> from ldpjax.accounting.accountant import delta
      >>> round(float(delta(HadamardResponseEvent(1.0), 0.0)), 4)  # (e - 1) / (2 (e + 1))
      0.2311
    """

    eps: ArrayLike

    def check(self, where: str) -> None:
        _check_eps(self.eps, where)

    def valid(self) -> Array:
        return jnp.asarray(self.eps) >= 0

    def prepared(self) -> HadamardResponseEvent:
        return HadamardResponseEvent(p.budget_array(self.eps))

    def _pair(self, dtype, up: bool) -> tuple[Array, Array]:
        del up
        eps = _budget(self.eps, dtype)
        return _log_sigmoid(eps) - math.log(2.0), eps


@_pair_channel
class SubsetSelectionEvent(NamedTuple):
    """k-subset selection over d items at budget eps.

    Example:
      >>> from ldpjax.accounting.accountant import delta
      >>> round(float(delta(SubsetSelectionEvent(1.0, 4, 2), 0.0)), 4)  # (4/3)(e - 1)/(2e + 2)
      0.3081
    """

    eps: ArrayLike
    d: ArrayLike
    k: ArrayLike

    def check(self, where: str) -> None:
        _check_eps(self.eps, where)
        v.check_integer(f"{where}d", self.d, 2)
        v.check_integer(f"{where}k", self.k, 1)
        if v.is_concrete((self.d, self.k)) and np.any(np.asarray(self.k) >= np.asarray(self.d)):
            raise ValueError(f"{where}k must be in [1, d - 1]; got k = {self.k!r}, d = {self.d!r}")

    def valid(self) -> Array:
        d, k = jnp.asarray(self.d), jnp.asarray(self.k)
        return (jnp.asarray(self.eps) >= 0) & _whole(d) & _whole(k) & (k >= 1) & (k < d)

    def prepared(self) -> SubsetSelectionEvent:
        return SubsetSelectionEvent(p.budget_array(self.eps), p.array(self.d), p.array(self.k))

    def _pair(self, dtype, up: bool) -> tuple[Array, Array]:
        del up
        eps, d, k = jnp.broadcast_arrays(_budget(self.eps, dtype), jnp.asarray(self.d, dtype),
                                         jnp.asarray(self.k, dtype))
        d = jnp.maximum(d, 2.0)
        k = jnp.clip(k, 1.0, d - 1.0)
        decay = jnp.exp(-jnp.maximum(eps, 0.0))
        log_mass = (jnp.log(k) + jnp.log(d - k) - jnp.log(d - 1.0)
                    - jnp.log(k + (d - k) * decay))
        return log_mass, eps


@_pair_channel
class DuchiEvent(NamedTuple):
    """Duchi, Jordan & Wainwright's one-bit mechanism for [-1, 1] at budget eps.

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> float(epsilon(DuchiEvent(1.5), 0.0))
      1.5
    """

    eps: ArrayLike

    def check(self, where: str) -> None:
        _check_eps(self.eps, where)

    def valid(self) -> Array:
        return jnp.asarray(self.eps) >= 0

    def prepared(self) -> DuchiEvent:
        return DuchiEvent(p.budget_array(self.eps))

    def _pair(self, dtype, up: bool) -> tuple[Array, Array]:
        del up
        eps = _budget(self.eps, dtype)
        return _log_sigmoid(eps), eps


@_pair_channel
class PiecewiseEvent(NamedTuple):
    """The piecewise mechanism for [-1, 1] at budget eps (continuous, and a valid claim for the
    discretised release of :func:`~ldpjax.mechanisms.piecewise.piecewise_mechanism`).

    Example:
      >>> from ldpjax.accounting.accountant import delta
      >>> round(float(delta(PiecewiseEvent(2.0), 0.0)), 4)  # P - Q = 1 - e^(-eps/2)
      0.6321
    """

    eps: ArrayLike

    def check(self, where: str) -> None:
        _check_eps(self.eps, where)

    def valid(self) -> Array:
        return jnp.asarray(self.eps) >= 0

    def prepared(self) -> PiecewiseEvent:
        return PiecewiseEvent(p.budget_array(self.eps))

    def _pair(self, dtype, up: bool) -> tuple[Array, Array]:
        del up
        eps = _budget(self.eps, dtype)
        return _log_sigmoid(0.5 * eps), eps


@_pair_channel
class HybridEvent(NamedTuple):
    """The hybrid mechanism for [-1, 1] at budget eps (beta-mixture of the piecewise and the
    one-bit mechanisms, branch revealed: an upper bound where it is not).

    Example:
      >>> from ldpjax.accounting.accountant import epsilon
      >>> float(epsilon(HybridEvent(2.0), 0.0))
      2.0
    """

    eps: ArrayLike

    def check(self, where: str) -> None:
        _check_eps(self.eps, where)

    def valid(self) -> Array:
        return jnp.asarray(self.eps) >= 0

    def prepared(self) -> HybridEvent:
        return HybridEvent(p.budget_array(self.eps))

    def _pair(self, dtype, up: bool) -> tuple[Array, Array]:
        del up
        eps = _budget(self.eps, dtype)
        beta = jnp.where(eps > HYBRID_THRESHOLD, -jnp.expm1(-0.5 * eps), 0.0)
        mass = beta * jax.nn.sigmoid(0.5 * eps) + (1.0 - beta) * jax.nn.sigmoid(eps)
        return jnp.log(mass), eps


FREQUENCY_EVENTS: tuple[Any, ...] = (UnaryEncodingEvent, LocalHashingEvent,
                                     HadamardResponseEvent, SubsetSelectionEvent, DuchiEvent,
                                     PiecewiseEvent, HybridEvent)

__all__ = [
    "DuchiEvent",
    "FREQUENCY_EVENTS",
    "HadamardResponseEvent",
    "HybridEvent",
    "LocalHashingEvent",
    "PiecewiseEvent",
    "ROUND_UP",
    "SubsetSelectionEvent",
    "UnaryEncodingEvent",
    "log1m",
    "oue_event",
    "sue_event",
]
