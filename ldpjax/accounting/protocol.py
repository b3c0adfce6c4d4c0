"""The event protocol: how the accountants read a privacy event.

An event is a small frozen pytree (a ``NamedTuple`` or a registered frozen dataclass) that
*describes* what a release costs one record; the accountants (:mod:`ldpjax.accounting.accountant`)
*compute* with it. They dispatch on what the event offers, not on its type, so an event defined
outside ldpjax is accounted as soon as it implements one of the views below. Every method is
optional; a method may also return ``None`` when the event cannot offer that view (a
composition whose parts do not share it).

Views, in the order the accountants try them:

1. its own profile (exact): ``delta_at(eps)``, ``epsilon_at(log_delta)``, ``tradeoff_at(alpha)``
   — arguments already arrays of the computation dtype; ``log_delta`` is log delta, in
   [-inf, 0);
2. ``gdp_mu(dtype)`` — the event is mu-GDP (Dong, Roth & Su 2019); composes exactly;
3. ``pure_eps(dtype)`` — the event is eps-DP; composes by adding eps (basic composition);
4. ``approx_dp(dtype)`` — ``(eps, delta)``: the event is (eps, delta)-DP; composes by adding
   both (pure events take part with delta = 0);
5. ``zcdp_rho(dtype)`` — the event is rho-zCDP (Bun & Steinke 2016); composes by adding rho.
   No tradeoff curve is derived from it;
6. ``privacy_loss(grid, pessimistic)`` — the event's own privacy loss distribution on a
   :class:`~ldpjax.accounting.pld.PldGrid` (a
   :class:`~ldpjax.accounting.pld.PrivacyLossDistribution`; e.g. the subsampled events of
   :mod:`ldpjax.accounting.subsampling`).

Views 3-5 and the PLD are bounds: an event without an exact view (1, 2) is accounted by the
tightest of them. The PLD (:mod:`ldpjax.accounting.pld_accountant`) is used for an event with
view 6 and for a sequential composition of more than one use of releases that all have a PLD
(a shipped event, or views 2-4 or 6), composed by FFT; where it is NaN (its grid cannot hold the
composition, under ``jit``) the closed forms alone count.

The no-noise view (optional): ``grants_no_privacy()`` — ``True`` when the event, at its
*concrete* parameters, claims no privacy at all: a release that may show the input unperturbed
(``NoPrivacyEvent``, mu = inf, r = 1, xi = inf, eps = inf, a discrete Gaussian of scale 0); a
composition, sequential or parallel, when one of its parts does (its claim is then no privacy
too). :func:`grants_no_privacy` reads it: an event without it, one that returns ``None``, and
an event with traced leaves grant nothing (``False``). The engine honours a no-noise budget
(:func:`ldpjax.mechanisms.no_privacy_permitted`) only where this view, or an inf in the
concrete params, says so; it never turns a finite budget into no noise.

Validation hooks (also optional): ``check(where)`` raises ``ValueError`` for a concrete parameter
outside its domain, naming it as ``where + field``; ``valid()`` is the traced domain (a boolean
array; NaN fails it); ``prepared()`` returns the event with array leaves (see
:func:`budget_array`); ``ties()`` lists the leaves a NaN result is tied to (default: all leaves).

Example (a third-party pure event):
  >>> from typing import NamedTuple
  >>> import jax.numpy as jnp
  >>> from ldpjax.accounting.accountant import epsilon
  >>> class Coin(NamedTuple):
  ...     eps: float
  ...     def pure_eps(self, dtype):
  ...         return jnp.asarray(self.eps, dtype)
  >>> float(epsilon(Coin(0.5), 0.0))
  0.5
"""

from __future__ import annotations

import functools
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting import gdp as _gdp
from ldpjax.accounting import zcdp as _zcdp
from ldpjax.accounting.gdp import gdp_tradeoff, round_up_tiny
from ldpjax.accounting.pure import pure_dp_tradeoff
from ldpjax.types import Array, ArrayLike

VIEWS = ("delta_at", "epsilon_at", "tradeoff_at", "gdp_mu", "pure_eps", "approx_dp", "zcdp_rho",
         "privacy_loss")
#: (uses_pld(event), log_delta(event, eps), epsilon(event, log_delta)) of the PLD bound,
#: installed by :mod:`ldpjax.accounting.pld_accountant` when it is imported (with the package).
_PLD: list = []


def register_pld(uses_pld, log_delta, epsilon) -> None:
    """Install the PLD bound the dispatch below takes into account (view 6)."""
    _PLD[:] = [(uses_pld, log_delta, epsilon)]


class PrivacyEvent(Protocol):
    """What an accountant may call on an event (every method optional; see the module)."""

    def check(self, where: str) -> None: ...

    def valid(self) -> Array: ...

    def prepared(self) -> Any: ...

    def ties(self) -> list: ...

    def delta_at(self, eps: Array) -> Array | None: ...

    def epsilon_at(self, log_delta: Array) -> Array | None: ...

    def tradeoff_at(self, alpha: Array) -> Array | None: ...

    def gdp_mu(self, dtype) -> Array | None: ...

    def pure_eps(self, dtype) -> Array | None: ...

    def approx_dp(self, dtype) -> tuple[Array, Array] | None: ...

    def zcdp_rho(self, dtype) -> Array | None: ...

    def privacy_loss(self, grid: Any, pessimistic: bool) -> Any: ...

    def grants_no_privacy(self) -> bool | None: ...


# --------------------------------------------------------------------------- leaves
def budget_array(x: ArrayLike) -> Array:
    """A budget leaf as an array; a concrete one below the dtype's normal range raised to it."""
    x = np.asarray(x) if isinstance(x, (list, tuple)) else x
    return round_up_tiny(x, jnp.result_type(x, float))


def array(x: ArrayLike) -> Array:
    """A leaf as an array (lists and tuples accepted)."""
    return jnp.asarray(np.asarray(x) if isinstance(x, (list, tuple)) else x)


def _numbers(event: Any) -> list:
    """The event's numeric leaves (an unregistered class is one leaf, and no number)."""
    return [x for x in jax.tree_util.tree_leaves(event)
            if isinstance(x, (int, float, np.ndarray, np.generic)) or hasattr(x, "dtype")]


def dtype_of(event: Any, *xs: ArrayLike):
    """The computation dtype of ``event`` (and of ``xs``): its leaves' common float type."""
    return jnp.result_type(*_numbers(event), *xs, float)


def view(event: Any, name: str, *args: Any) -> Any:
    """``event.name(*args)``, or ``None`` where the event does not offer that view."""
    method = getattr(event, name, None)
    return None if method is None else method(*args)


def approx_view(event: Any, dtype) -> tuple[Array, Array] | None:
    """``(eps, delta)`` of an approximate-DP event, a pure one being (eps, 0)."""
    pair = view(event, "approx_dp", dtype)
    if pair is not None:
        return pair
    eps = view(event, "pure_eps", dtype)
    return None if eps is None else (eps, jnp.zeros_like(eps))


# --------------------------------------------------------------------------- validation
def check(event: Any, where: str = "") -> None:
    """Concrete checks of every parameter of ``event`` (``ValueError`` naming it).

    An object that implements neither ``check`` nor a view is not a privacy event:
    ``NotImplementedError``.
    """
    method = getattr(event, "check", None)
    if method is not None:
        method(where)
    elif not any(hasattr(event, name) for name in VIEWS):
        raise NotImplementedError(f"not a privacy event: {type(event).__name__} ({event!r})")


def valid(event: Any) -> Array:
    """Traced domain of every parameter of ``event`` (True where it states none)."""
    out = view(event, "valid")
    return jnp.asarray(True) if out is None else out


def prepared(event: Any) -> Any:
    """``event`` with array leaves (itself where it has no ``prepared``)."""
    out = view(event, "prepared")
    return event if out is None else out


def ties(event: Any) -> list[Array]:
    """The leaves a NaN result is tied to, for ``valid_or_nan`` (non-float leaves skipped)."""
    out = view(event, "ties")
    return _numbers(event) if out is None else out


def concrete_any(predicate: Any, *xs: ArrayLike) -> bool:
    """``True`` when ``predicate(*arrays)`` holds anywhere, the leaves ``xs`` taken as NumPy
    arrays in their own precision (1e39 stays finite: it is not float32's inf); ``False`` when
    one of them is traced (a no-noise view decides on concrete parameters only)."""
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(xs)):
        return False
    return bool(np.any(predicate(*(np.asarray(x) for x in xs))))


def grants_no_privacy(event: Any) -> bool:
    """Whether ``event``, at its concrete parameters, claims no privacy (the no-noise view).

    ``event.grants_no_privacy()`` where the event offers it (``None`` counts as ``False``);
    ``False`` for an event without that view and for an event with traced leaves (nothing is
    decided under ``jit``). Never ``True`` for a finite budget of a built-in event.

    Example:
      >>> from ldpjax.accounting.events import GaussianEvent, NoPrivacyEvent, RandomizedResponseEvent
      >>> from ldpjax.accounting.composition import ComposedEvent
      >>> grants_no_privacy(NoPrivacyEvent()), grants_no_privacy(RandomizedResponseEvent(1.0))
      (True, True)
      >>> grants_no_privacy(ComposedEvent((GaussianEvent(1.0), RandomizedResponseEvent(0.5))))
      False
    """
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(event)):
        return False
    own = view(event, "grants_no_privacy")
    return False if own is None else bool(own)


def name_of(event: Any) -> str:
    """A short name for messages: ``ComposedEvent(GaussianEvent, LaplaceEvent)``."""
    parts = getattr(event, "events", None)
    if isinstance(parts, (tuple, list)):
        return f"{type(event).__name__}({', '.join(name_of(e) for e in parts)})"
    inner = getattr(event, "event", None)
    if inner is not None:
        return f"{type(event).__name__}({name_of(inner)})"
    return type(event).__name__


# --------------------------------------------------------------------------- pure and approximate DP
def pure_delta(eps0: Array, eps: Array) -> Array:
    """The eps0-DP profile (tight for binary RR): (e^eps0 - e^eps) / (1 + e^eps0), >= 0."""
    out = (1.0 - jnp.exp(jnp.where(eps < jnp.inf, eps, 0.0) - eps0)) / (1.0 + jnp.exp(-eps0))
    return jnp.where(eps < jnp.inf, jnp.maximum(0.0, out), 0.0)


def pure_epsilon(eps0: Array, target: Array) -> Array:
    """The inverse of :func:`pure_delta` in eps at delta = ``target`` (0 where it is flat)."""
    x = target * (1.0 + jnp.exp(-eps0))
    out = jnp.where(x < 1, eps0 + jnp.log1p(-jnp.where(x < 1, x, 0.0)), 0.0)
    return jnp.maximum(out, 0.0)


def approx_delta(eps0: Array, delta0: Array, eps: Array) -> Array:
    """The tight profile of (eps0, delta0)-DP: delta0 + (1 - delta0) (pure profile).

    The worst (eps0, delta0)-DP pair of distributions (Kairouz, Oh & Viswanath 2015) puts
    mass delta0 on an outcome only one of them has and the rest on a binary randomized response.
    """
    return delta0 + (1.0 - delta0) * pure_delta(eps0, eps)


def approx_epsilon(eps0: Array, delta0: Array, target: Array) -> Array:
    """The inverse of :func:`approx_delta`: inf below delta0, else the pure inverse."""
    room = 1.0 - delta0
    ok = (target >= delta0) & (room > 0)
    scaled = jnp.where(ok, (target - delta0) / jnp.where(room > 0, room, 1.0), 0.0)
    return jnp.where(ok, pure_epsilon(eps0, scaled), jnp.inf)


def approx_tradeoff(eps0: Array, delta0: Array, alpha: Array) -> Array:
    """f_{eps0, delta0}(alpha) = max(0, 1 - delta0 - e^eps0 alpha, e^-eps0 (1 - delta0 - alpha))
    (Dong, Roth & Su 2019, Prop. 2.5)."""
    finite = jnp.isfinite(eps0)
    safe = jnp.where(finite, eps0, 0.0)
    rest = 1.0 - delta0
    out = jnp.maximum(jnp.maximum(0.0, rest - jnp.exp(safe) * alpha), jnp.exp(-safe) * (rest - alpha))
    return jnp.where(finite, out, 0.0)


# --------------------------------------------------------------------------- dispatch
def _tightest(closed: list[Array], pld: Array | None) -> Array:
    """The smallest of the bounds; a NaN PLD bound (grid too short) defers to the closed forms."""
    if pld is None:
        return functools.reduce(jnp.minimum, closed)
    if not closed:
        return pld
    best = functools.reduce(jnp.minimum, closed)
    return jnp.where(jnp.isnan(pld), best, jnp.minimum(best, pld))


def delta_of(event: Any, eps: Array) -> Array:
    """delta(eps) from ``event``'s exact view, else the tightest of its bounds (no checks;
    ``eps`` cast already)."""
    own = view(event, "delta_at", eps)
    if own is not None:
        return own
    dtype = dtype_of(event)
    mu = view(event, "gdp_mu", dtype)
    if mu is not None:
        return jnp.exp(_gdp._log_delta_jit(*jnp.broadcast_arrays(mu, eps)))
    closed = []
    pair = approx_view(event, dtype)
    if pair is not None:
        closed.append(approx_delta(*pair, eps))
    rho = view(event, "zcdp_rho", dtype)
    if rho is not None:
        closed.append(jnp.exp(_zcdp._zcdp_log_delta_jit(rho, eps)))
    pld = None
    if _PLD and _PLD[0][0](event):
        pld = jnp.minimum(jnp.exp(_PLD[0][1](event, eps)), 1.0)
    if not closed and pld is None:
        raise NotImplementedError(f"no accountant for {name_of(event)}")
    return _tightest(closed, pld)


def epsilon_of(event: Any, log_target: Array) -> Array:
    """eps(delta) at log delta = ``log_target`` from ``event``'s exact view, else the tightest of
    its bounds (the PLD is skipped at a concrete delta = 0 when a closed form exists)."""
    own = view(event, "epsilon_at", log_target)
    if own is not None:
        return own
    dtype = dtype_of(event)
    mu = view(event, "gdp_mu", dtype)
    if mu is not None:
        return _gdp.epsilon_at_log_delta(mu, log_target)
    closed = []
    pair = approx_view(event, dtype)
    if pair is not None:
        closed.append(approx_epsilon(*pair, jnp.exp(log_target)))
    rho = view(event, "zcdp_rho", dtype)
    if rho is not None:
        closed.append(_zcdp._zcdp_epsilon_jit(rho, log_target))
    zero = closed and v.is_concrete(log_target) and bool(np.all(np.asarray(log_target) == -np.inf))
    pld = None
    if _PLD and _PLD[0][0](event) and not zero:
        pld = _PLD[0][2](event, log_target)
    if not closed and pld is None:
        raise NotImplementedError(f"no accountant for {name_of(event)}")
    return _tightest(closed, pld)


def tradeoff_of(event: Any, alpha: Array) -> Array:
    """The tradeoff curve at ``alpha`` from the first view that gives one (not zCDP)."""
    own = view(event, "tradeoff_at", alpha)
    if own is not None:
        return own
    dtype = dtype_of(event)
    mu = view(event, "gdp_mu", dtype)
    if mu is not None:
        return gdp_tradeoff(mu, alpha)
    eps0 = view(event, "pure_eps", dtype)
    if eps0 is not None:
        return pure_dp_tradeoff(eps0, alpha)
    pair = approx_view(event, dtype)
    if pair is not None:
        return approx_tradeoff(*pair, alpha)
    raise NotImplementedError(f"tradeoff is not available for {name_of(event)}")


__all__ = [
    "PrivacyEvent",
    "VIEWS",
    "approx_delta",
    "approx_epsilon",
    "approx_tradeoff",
    "approx_view",
    "array",
    "budget_array",
    "check",
    "concrete_any",
    "delta_of",
    "dtype_of",
    "epsilon_of",
    "grants_no_privacy",
    "name_of",
    "prepared",
    "pure_delta",
    "pure_epsilon",
    "ties",
    "tradeoff_of",
    "valid",
    "view",
]
