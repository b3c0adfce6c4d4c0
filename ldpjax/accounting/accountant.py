"""The accountants of privacy events: delta(eps), epsilon(delta), tradeoff(alpha) for one record.

They read any event through the event protocol (:mod:`ldpjax.accounting.protocol`): the
event's own profile where it has one, or its GDP view (both exact), else the tightest of its
pure-DP, (eps, delta)-DP and zCDP bounds and, for a composition of several releases or a
subsampled release, its privacy loss distribution composed by FFT
(:mod:`ldpjax.accounting.pld_accountant`; ``grid=None`` sizes the grid from concrete
arguments, :data:`~ldpjax.accounting.pld_accountant.DEFAULT_GRID` under ``jit``), so the
built-in events (:mod:`ldpjax.accounting.events`) and an event defined elsewhere are accounted
the same way. Each accountant first checks the whole event on concrete values
(``ValueError`` naming the parameter), then computes; traced out-of-domain parameters give NaN,
in the gradient too. ``jit``/``vmap``/``grad``-able in the event's numbers, in float32 and
float64.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any

import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import gdp as _gdp
from ldpjax.accounting import protocol as p
from ldpjax.accounting.pld import PldGrid
from ldpjax.accounting.pld_accountant import pld_grid, uses_pld
from ldpjax.types import Array, ArrayLike

_INF = float("inf")


def check_event(event: Any) -> None:
    """The accountants' concrete check of ``event``: ``ValueError`` naming a parameter outside
    its domain (``events[1].mu must be in (0, inf]; got -1``); ``NotImplementedError`` for an
    object that is not a privacy event.

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent
      >>> check_event(GaussianEvent(-1.0))
      Traceback (most recent call last):
      ...
      ValueError: mu must be in (0, inf]; got -1
    """
    p.check(event)


def _checked(event: Any) -> Any:
    p.check(event)
    return p.prepared(event)


def _kernel(event: Any, value: Array, x: Array, valid_x: Array) -> Array:
    return v.valid_or_nan(p.valid(event) & valid_x, value, *p.ties(event), x)


# --------------------------------------------------------------------------- accountants
def _grid_scope(grid: PldGrid | None):
    return contextlib.nullcontext() if grid is None else pld_grid(grid)


def delta(event: Any, eps: ArrayLike, grid: PldGrid | None = None) -> Array:
    """delta(eps): the smallest delta such that ``event`` is (eps, delta)-DP for one record.

    Args:
      event: a privacy event (see :mod:`ldpjax.accounting.events` for the parameter domains).
      eps: in [0, inf].
      grid: the :class:`~ldpjax.accounting.pld.PldGrid` of a PLD bound (module docstring);
        ``None`` chooses one.

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent
      >>> round(float(delta(GaussianEvent(1.0), 1.0)), 4)
      0.1269
    """
    v.check_range("eps", eps, 0.0, _INF)
    event = _checked(event)
    eps = jnp.asarray(eps, p.dtype_of(event, eps))
    with _grid_scope(grid):
        value = p.delta_of(event, eps)
    return _kernel(event, value, eps, eps >= 0)


def epsilon(event: Any, delta_target: ArrayLike, grid: PldGrid | None = None) -> Array:
    """The smallest eps >= 0 such that ``event`` is (eps, delta_target)-DP for one record.

    Args:
      event: a privacy event.
      delta_target: in [0, 1). A concrete value is logged in float64, so any valid delta
        (1e-300 included) works in float32. delta = 0 gives inf for approximate-DP events.
      grid: the :class:`~ldpjax.accounting.pld.PldGrid` of a PLD bound (module docstring);
        ``None`` chooses one.

    Example:
      >>> from ldpjax.accounting.events import RandomizedResponseEvent
      >>> round(float(epsilon(RandomizedResponseEvent(0.5), 0.0)), 4)
      1.0986
    """
    v.check_range("delta", delta_target, 0.0, 1.0, high_open=True)
    event = _checked(event)
    log_target = _gdp.log_probability(delta_target, p.dtype_of(event, delta_target))
    log_target = jnp.asarray(log_target, p.dtype_of(event, log_target))
    with _grid_scope(grid):
        value = p.epsilon_of(event, log_target)
    return _kernel(event, value, log_target, log_target < 0)


def tradeoff(event: Any, alpha: ArrayLike) -> Array:
    """The tradeoff function f(alpha): the smallest type II error of a level-alpha test telling
    two neighbouring records apart from the release.

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent
      >>> round(float(tradeoff(GaussianEvent(1.0), 0.05)), 4)
      0.7405
    """
    v.check_range("alpha", alpha, 0.0, 1.0)
    event = _checked(event)
    alpha = jnp.asarray(alpha, p.dtype_of(event, alpha))
    return _kernel(event, p.tradeoff_of(event, alpha), alpha, (alpha >= 0) & (alpha <= 1))


def _view_or_raise(event: Any, name: str, what: str) -> Array:
    event = _checked(event)
    out = p.view(event, name, p.dtype_of(event))
    if out is None:
        raise NotImplementedError(f"{p.name_of(event)} {what}")
    return v.valid_or_nan(p.valid(event), out, *p.ties(event))


def pure_epsilon(event: Any) -> Array:
    """eps0 of a pure event: rr_epsilon(r), xi, eps, or the basic-composition sum (count times).

    Example:
      >>> from ldpjax.accounting.events import RandomizedResponseEvent
      >>> from ldpjax.accounting.composition import SelfComposedEvent
      >>> round(float(pure_epsilon(SelfComposedEvent(RandomizedResponseEvent(0.5), 2))), 4)
      2.1972
    """
    return _view_or_raise(event, "pure_eps", "is not a pure-DP event")


def composed_rho(event: Any) -> Array:
    """zCDP parameter of a (composed) Gaussian / discrete-Gaussian event: the sum of
    count * mu^2 / 2 (continuous, Bun & Steinke 2016) and count * shift^2 / (2 sigma^2)
    (discrete, CKS 2020 Thm 14) over the parts; inf for a part without noise.

    Example:
      >>> from ldpjax.accounting.events import DiscreteGaussianEvent, GaussianEvent
      >>> from ldpjax.accounting.composition import ComposedEvent
      >>> float(composed_rho(ComposedEvent((GaussianEvent(1.0), DiscreteGaussianEvent(2.0, 2)))))
      1.0
    """
    return _view_or_raise(event, "zcdp_rho", "has no zCDP accountant")


def composed_mu(event: Any) -> Array:
    """mu of an all-Gaussian (possibly composed) event: sqrt(sum count_i mu_i^2).

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent
      >>> from ldpjax.accounting.composition import ComposedEvent
      >>> round(float(composed_mu(ComposedEvent((GaussianEvent(0.6), GaussianEvent(0.8))))), 4)
      1.0
    """
    return _view_or_raise(event, "gdp_mu", "is not an all-Gaussian event")


def route(event: Any) -> str:
    """How the accountants read ``event``: 'none' (it grants no privacy: the event protocol's
    no-noise view), 'parallel', 'profile' (its own, exact),
    'gdp', 'pld' (its privacy loss distribution, capped by any closed form), 'pure', 'approx',
    'zcdp', or 'none of them' (not accountable).

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent, LaplaceEvent
      >>> from ldpjax.accounting.composition import ComposedEvent
      >>> route(ComposedEvent((GaussianEvent(1.0), GaussianEvent(2.0)))), route(LaplaceEvent(1.0))
      ('gdp', 'profile')
    """
    none = getattr(event, "_none", None)  # a NoPrivacyEvent part, also among traced parts
    if p.grants_no_privacy(event) or (none is not None and none() is not None):
        return "none"
    if hasattr(event, "events") and not hasattr(event, "sequential_parts"):
        return "parallel"
    if hasattr(event, "delta_at") and not hasattr(event, "sequential_parts"):
        return "profile"
    dtype = p.dtype_of(event)
    if p.view(event, "gdp_mu", dtype) is not None:
        return "gdp"
    if uses_pld(event):
        return "pld"
    for name, kind in (("pure_eps", "pure"), ("approx_dp", "approx"), ("zcdp_rho", "zcdp")):
        if p.view(event, name, dtype) is not None:
            return kind
    return "none of them"


# --------------------------------------------------------------------------- descriptions
def _fields(event: Any) -> tuple[str, ...] | None:
    names = getattr(type(event), "_fields", None)
    if isinstance(names, tuple):
        return names
    if dataclasses.is_dataclass(event) and not isinstance(event, type):
        return tuple(f.name for f in dataclasses.fields(event))
    return None


def _number(x: Any) -> Any:
    arr = np.asarray(x)
    if arr.ndim == 0:
        value = arr.item()
        return value if not isinstance(value, float) or np.isfinite(value) else repr(value)
    return [_number(a) for a in arr]


def _describe_value(value: Any) -> Any:
    if _fields(value) is not None:
        return describe(value)
    if isinstance(value, (tuple, list)) and value and all(_fields(e) is not None for e in value):
        return [describe(e) for e in value]
    return _number(value)


def describe(event: Any) -> dict[str, Any]:
    """A JSON-able description of ``event`` (type and numbers; arrays as nested lists).

    Any NamedTuple or dataclass event is described field by field; parts of a composition
    (an event, or a tuple of events) are described in turn.

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent
      >>> describe(GaussianEvent(1.0))
      {'type': 'GaussianEvent', 'mu': 1.0}
    """
    names = _fields(event)
    if names is None:
        raise TypeError(f"not a privacy event: {event!r}")
    return {"type": type(event).__name__,
            **{name: _describe_value(getattr(event, name)) for name in names}}


__all__ = [
    "check_event",
    "composed_mu",
    "composed_rho",
    "delta",
    "describe",
    "epsilon",
    "pure_epsilon",
    "route",
    "tradeoff",
]
