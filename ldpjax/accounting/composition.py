"""Compositions of privacy events: the same record in several releases, or each record in one.

* :class:`ComposedEvent` ``(events)``: sequential composition, the same record in every part;
* :class:`SelfComposedEvent` ``(event, count)``: ``count`` uses of one record by the same
  release (dp_accounting's ``SelfComposedDpEvent``), e.g. a record reused m times;
* :class:`ParallelEvent` ``(events)``: each record in exactly one part (the worst part counts).

A composition answers the views of the event protocol (:mod:`ldpjax.accounting.protocol`) from
its flattened list of (part, uses): all-Gaussian parts compose exactly (mu^2 add); all-pure parts
and (eps, delta) parts by basic composition; zCDP parts by adding rho; any mix through the
privacy loss distribution of its parts (:mod:`ldpjax.accounting.pld_accountant`). The accountants
(:mod:`ldpjax.accounting.accountant`) take the tightest valid bound. The release events live in
:mod:`ldpjax.accounting.events`.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import protocol as p
from ldpjax.accounting.events import NoPrivacyEvent, _check_events
from ldpjax.types import Array, ArrayLike


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

    def grants_no_privacy(self) -> bool:
        """One use without privacy reveals the record: the composition claims none."""
        return any(p.grants_no_privacy(e) for e, _ in self.sequential_parts())

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


_SEQUENTIAL_VIEWS = ("_none", "grants_no_privacy", "delta_at", "epsilon_at", "tradeoff_at", "gdp_mu", "pure_eps",
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
      >>> from ldpjax.accounting.events import GaussianEvent
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
      >>> from ldpjax.accounting.events import GaussianEvent
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
      >>> from ldpjax.accounting.events import LaplaceEvent
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

    def grants_no_privacy(self) -> bool:
        """The worst part counts: one part without privacy leaves its records none."""
        return any(p.grants_no_privacy(e) for e in self.events)

    def ties(self) -> list[Array]:
        return [t for e in self.events for t in p.ties(e)]

    def delta_at(self, eps: Array) -> Array:
        return functools.reduce(jnp.maximum, [p.delta_of(e, eps) for e in self.events])

    def epsilon_at(self, log_delta: Array) -> Array:
        return functools.reduce(jnp.maximum, [p.epsilon_of(e, log_delta) for e in self.events])

    def tradeoff_at(self, alpha: Array) -> Array:
        return functools.reduce(jnp.minimum, [p.tradeoff_of(e, alpha) for e in self.events])



__all__ = ["ComposedEvent", "ParallelEvent", "SelfComposedEvent"]
