"""Privacy events and their accountants (re-exported from :mod:`ldpjax.accounting`).

The events live beside the accountants that read them: :mod:`ldpjax.accounting.events` (the
event types), :mod:`ldpjax.accounting.protocol` (what an accountant may call on an event) and
:mod:`ldpjax.accounting.accountant` (``delta``, ``epsilon``, ``tradeoff``, ...). The mechanisms
build events; this module keeps the old import path working.

Example:
  >>> round(float(delta(GaussianEvent(1.0), 1.0)), 4)
  0.1269
"""

from __future__ import annotations

from typing import Any

from ldpjax import accounting as acc  # noqa: F401  (older callers read events.acc)
from ldpjax.accounting import protocol as _protocol
from ldpjax.accounting.accountant import check_event as _check  # noqa: F401
from ldpjax.accounting.accountant import (
    composed_mu,
    composed_rho,
    delta,
    describe,
    epsilon,
    pure_epsilon,
    route,
    tradeoff,
)
from ldpjax.accounting.events import PURE_EVENTS, ApproxDpEvent, DiscreteGaussianEvent, GaussianEvent, GaussianMixtureEvent, KaryRandomizedResponseEvent, LaplaceEvent, NoPrivacyEvent, PureDpEvent, RandomizedResponseEvent
from ldpjax.accounting.composition import ComposedEvent, ParallelEvent, SelfComposedEvent

_describe = _protocol.name_of
_PROFILE_KINDS = {"RandomizedResponseEvent": "rr", "KaryRandomizedResponseEvent": "rr",
                  "DiscreteGaussianEvent": "dg", "GaussianMixtureEvent": "mixture"}


def _kind(event: Any) -> str:
    """The earlier name of an event's route: 'none', 'gdp', 'rr', 'pure', 'dg', 'zcdp',
    'mixture', 'parallel' (or 'approx', 'profile' for the newer events)."""
    kind = route(event)
    if kind == "none of them":
        raise NotImplementedError(f"no accountant for {_describe(event)}")
    if kind == "profile":
        return _PROFILE_KINDS.get(type(event).__name__, kind)
    return kind


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
    "composed_mu",
    "composed_rho",
    "delta",
    "describe",
    "epsilon",
    "pure_epsilon",
    "tradeoff",
]
