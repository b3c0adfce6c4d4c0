"""The release entry point of one mechanism on real data: a secure key and a real-data-safe path.

``release(mechanism, key, *args, **kwargs)`` calls ``mechanism(key, *args, **kwargs)`` after two
checks that the mechanisms themselves leave to the caller, because simulations need the other
answer:

1. the key is a secure key (:func:`~ldpjax.mechanisms.secure_key`: 128 bits from the OS CSPRNG),
   not one made from a seed, whose noise anyone with the seed can replay and subtract
   (:func:`~ldpjax.mechanisms.secure.require_secure_key`);
2. the mechanism and its arguments form a path whose law holds for real data. Registered:

   * :func:`~ldpjax.mechanisms.gaussian_mechanism` and :func:`~ldpjax.mechanisms.laplace_mechanism`
     with ``granularity`` set (the float path's low-order bits leak the value: Mironov, "On
     Significance of the Least Significant Bits for Differential Privacy", CCS 2012);
   * :func:`~ldpjax.mechanisms.randomized_response`,
     :func:`~ldpjax.mechanisms.kary_randomized_response` and
     :func:`~ldpjax.mechanisms.kary_randomized_response_explore` (decided on integer words, exact
     to 2^-32).

   Everything else is a simulation path (``randomized_response_bernoulli`` and
   ``kary_randomized_response_counts`` are exact laws of *simulated* data; the float Gaussian
   and Laplace paths leak through their bits) and raises ``ValueError``.
   :func:`register_release` admits a new mechanism, with a check of its arguments.

A whole algorithm over real data is released with :func:`ldpjax.engine.release_run`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ldpjax.mechanisms.gaussian import gaussian_mechanism
from ldpjax.mechanisms.kary import kary_randomized_response, kary_randomized_response_explore
from ldpjax.mechanisms.laplace import laplace_mechanism
from ldpjax.mechanisms.randomized_response import randomized_response
from ldpjax.mechanisms.secure import require_secure_key
from ldpjax.types import PRNGKey

#: ``check(arguments)``: the call's arguments by name (defaults filled in); raises
#: ``ValueError`` when they make the call a simulation path.
ReleaseCheck = Callable[[Mapping[str, Any]], None]

_REGISTRY: dict[Callable[..., Any], ReleaseCheck | None] = {}


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def register_release(fn: Callable[..., Any], check: ReleaseCheck | None = None) -> Callable[..., Any]:
    """Admit ``fn`` (called as ``fn(key, ...)``) to :func:`release`; returns ``fn``.

    Args:
      fn: a mechanism whose release is safe for real data with a secure key.
      check: optional ``check(arguments)`` run before each call on the call's arguments by name
        (``inspect.BoundArguments.arguments`` with defaults applied); it raises ``ValueError``
        for arguments that make the call a simulation path (e.g. a float path).

    Example:
      >>> from ldpjax.mechanisms import secure_key
      >>> def half_coin(key, bit):  # randomized response at r = 1/2 (eps = log 3)
      ...     return randomized_response(key, bit, 0.5)
      >>> register_release(half_coin) is half_coin
      True
      >>> int(release(half_coin, secure_key(), 1)) in (0, 1)
      True
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable mechanism; got {fn!r}")
    if check is not None and not callable(check):
        raise TypeError(f"check must be None or a callable check(arguments); got {check!r}")
    _REGISTRY[fn] = check
    return fn


def _needs_granularity(arguments: Mapping[str, Any], name: str) -> None:
    if arguments.get("granularity") is None:
        raise ValueError(
            f"release: {name} without granularity is the float path, a simulation path: its "
            "low-order bits leak the value (Mironov 2012). Pass granularity=2**-k (a power of "
            "two) for the exact release on the grid g Z"
        )


register_release(gaussian_mechanism, lambda a: _needs_granularity(a, "gaussian_mechanism"))
register_release(laplace_mechanism, lambda a: _needs_granularity(a, "laplace_mechanism"))
register_release(randomized_response)
register_release(kary_randomized_response)
register_release(kary_randomized_response_explore)


def registered() -> tuple[str, ...]:
    """Names of the mechanisms :func:`release` takes.

    Example:
      >>> "randomized_response" in registered()
      True
    """
    return tuple(_name(fn) for fn in _REGISTRY)


def release(mechanism: Callable[..., Any], key: PRNGKey, *args: Any, **kwargs: Any) -> Any:
    """``mechanism(key, *args, **kwargs)`` for real data: a secure key and a safe path only.

    Args:
      mechanism: a registered mechanism (module docstring; :func:`register_release`).
      key: a key from :func:`~ldpjax.mechanisms.secure_key` (never one made from a seed).
      *args, **kwargs: the mechanism's own arguments after the key.

    Returns:
      The mechanism's release. Its claim is the mechanism's own (e.g. ``granular_claim``,
      ``laplace_claim``, ``RandomizedResponseEvent(r)``).

    Raises:
      ValueError: a key made from a seed (``make_key(0)``, ``jax.random.key(0)``: the message
        says how to get a secure key), a mechanism that is not registered (a simulation path),
        or arguments its check refuses (e.g. the float Gaussian path).

    Example:
      >>> import jax.numpy as jnp
      >>> from ldpjax.mechanisms import randomized_response, secure_key
      >>> release(randomized_response, secure_key(), jnp.array([0, 1, 1]), 0.5).shape
      (3,)
      >>> from ldpjax.engine import make_key
      >>> release(randomized_response, make_key(0), jnp.array([0, 1]), 0.5)
      Traceback (most recent call last):
      ...
      ValueError: release: key must come from ldpjax.mechanisms.secure_key() ...
    """
    require_secure_key(key, "release")
    try:
        check = _REGISTRY[mechanism]
        known = True
    except (KeyError, TypeError):
        check, known = None, False
    if not known:
        raise ValueError(
            f"release: {_name(mechanism)} is a simulation path, not a release of real data; "
            f"release takes {', '.join(registered())} (register_release admits a mechanism that "
            "is safe for real data)"
        )
    if check is not None:
        bound = inspect.signature(mechanism).bind(key, *args, **kwargs)
        bound.apply_defaults()
        check(bound.arguments)
    return mechanism(key, *args, **kwargs)


__all__ = ["ReleaseCheck", "register_release", "registered", "release"]
