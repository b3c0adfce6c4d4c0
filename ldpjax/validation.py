"""Public validators for your own algorithms' ``validate`` hooks and parameter builders.

These are the checks every ldpjax algorithm uses at its public boundary. They run only on
*concrete* values (Python numbers, NumPy arrays, committed JAX arrays): under ``jit``, ``vmap``
or ``grad`` the arguments are tracers whose values are unknown, so the checks return without
looking, and the mechanisms fail closed instead (a NaN release; see :mod:`ldpjax.mechanisms`).
:func:`valid_or_nan` is that traced-side policy for your own numerical functions.

A failed check raises ``ValueError`` naming the argument, the allowed range and the first
offending entries, e.g. ``params.mu must be in (0, inf]; got -1``. Budgets, ranges and counts
are real numbers: :func:`check_range` and :func:`check_integer` refuse booleans (a Python
``bool`` or a boolean array, also traced: the dtype is static) unless ``allow_bool=True``.

Example (a ``validate`` hook, called by :func:`ldpjax.engine.simulate` on the whole concrete
params grid before compiling):

  >>> import jax.numpy as jnp
  >>> from ldpjax import validation
  >>> def validate(params, inputs):
  ...     validation.check_range("params.mu", params["mu"], 0.0, jnp.inf, low_open=True)
  ...     validation.check_range("inputs", inputs, 0.0, 1.0)
  >>> validate({"mu": jnp.array([0.5, 1.0])}, jnp.ones(4))
  >>> validate({"mu": jnp.array([0.5, -1.0])}, jnp.ones(4))
  Traceback (most recent call last):
  ...
  ValueError: params.mu must be in (0, inf]; got [-1] (first offending entries of an array of shape (2,))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from ldpjax import _validation as _v


def is_concrete(value: Any) -> bool:
    """Whether every leaf of the pytree ``value`` can be read on the host (no tracers).

    Args:
      value: any pytree.

    Returns:
      ``False`` inside ``jit`` / ``vmap`` / ``grad`` for traced leaves, else ``True``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> seen = []
      >>> _ = jax.jit(lambda x: seen.append(is_concrete(x)) or x)(1.0)
      >>> is_concrete(jnp.ones(3)), seen
      (True, [False])
    """
    return _v.is_concrete(value)


def check(name: str, value: Any, ok: Callable[[np.ndarray], np.ndarray], allowed: str) -> None:
    """Raise ``ValueError`` if any entry of a concrete ``value`` fails the predicate ``ok``.

    Args:
      name: the argument's name as the user wrote it (``"params.mu"``, ``"inputs"``).
      value: a number, an array or ``None`` (``None`` and traced values are not checked).
      ok: maps a float64 NumPy array to a boolean array of the entries that are allowed; NaN
        always fails.
      allowed: the allowed set in words, for the message (``"a power of two"``).

    Raises:
      ValueError: naming ``name``, ``allowed`` and the first offending entries (also for string
        values and PRNG keys).

    Example:
      >>> check("granularity", 0.25, lambda g: np.log2(g) == np.round(np.log2(g)), "a power of two")
      >>> check("granularity", 0.3, lambda g: np.log2(g) == np.round(np.log2(g)), "a power of two")
      Traceback (most recent call last):
      ...
      ValueError: granularity must be a power of two; got 0.3
    """
    _v.check(name, value, ok, allowed)


def check_range(
    name: str,
    value: Any,
    low: float = -np.inf,
    high: float = np.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
    allow_bool: bool = False,
) -> None:
    """Check ``low <(=) value <(=) high`` entrywise on a concrete ``value``.

    Args:
      name: the argument's name for the message.
      value: a number, an array or ``None`` (``None`` and traced values are not checked).
      low: lower end of the allowed interval.
      high: upper end of the allowed interval.
      low_open: exclude ``low`` (``(low, ...``).
      high_open: exclude ``high`` (``..., high)``).
      allow_bool: accept boolean values (refused by default, also traced ones).

    Raises:
      ValueError: an entry outside the interval, NaN, or a boolean value.

    Example:
      >>> check_range("r", 0.5, 0.0, 1.0, low_open=True)
      >>> check_range("r", 0.0, 0.0, 1.0, low_open=True)
      Traceback (most recent call last):
      ...
      ValueError: r must be in (0, 1]; got 0
    """
    _v.check_range(name, value, low, high, low_open=low_open, high_open=high_open,
                   allow_bool=allow_bool)


def check_integer(
    name: str, value: Any, low: int = -(2**62), high: int = 2**62, *, allow_bool: bool = False
) -> None:
    """Check that a concrete ``value`` holds integers in ``[low, high]``.

    Args:
      name: the argument's name for the message.
      value: a number, an array or ``None`` (``None`` and traced values are not checked).
      low: smallest allowed integer.
      high: largest allowed integer.
      allow_bool: accept boolean values (refused by default, also traced ones).

    Raises:
      ValueError: a non-integer entry, one outside ``[low, high]``, NaN, or a boolean value.

    Example:
      >>> check_integer("k", 3, low=2)
      >>> check_integer("k", 2.5, low=2)
      Traceback (most recent call last):
      ...
      ValueError: k must be an integer >= 2; got 2.5
    """
    _v.check_integer(name, value, low, high, allow_bool=allow_bool)


def check_sums_to_one(name: str, value: Any, axis: int = -1, atol: float = 1e-6) -> None:
    """Check that concrete weights are in [0, 1] and sum to one along ``axis``.

    Args:
      name: the argument's name for the message.
      value: an array of weights or ``None`` (``None`` and traced values are not checked).
      axis: the axis that must sum to one.
      atol: absolute tolerance on the sum.

    Raises:
      ValueError: a weight outside [0, 1] or NaN, or a sum farther than ``atol`` from 1.

    Example:
      >>> check_sums_to_one("weights", [0.25, 0.75])
      >>> check_sums_to_one("weights", [0.5, 0.6])
      Traceback (most recent call last):
      ...
      ValueError: weights must be non-negative weights that sum to 1 along axis -1; they sum to [1.1]
    """
    _v.check_sums_to_one(name, value, axis=axis, atol=atol)


def check_not_bool(name: str, value: Any, allowed: str) -> None:
    """Raise ``ValueError`` if ``value`` is boolean (also when traced: the dtype is static).

    Args:
      name: the argument's name for the message.
      value: any value; a Python ``bool`` or an array of boolean dtype fails.
      allowed: what is allowed instead, in words (``"in (0, inf]"``).

    Raises:
      ValueError: ``value`` is boolean.

    Example:
      >>> check_not_bool("mu", True, "in (0, inf]")
      Traceback (most recent call last):
      ...
      ValueError: mu must be a number in (0, inf], not a boolean; got True
    """
    _v.check_not_bool(name, value, allowed)


def valid_or_nan(valid: jax.Array, value: jax.Array, *inputs: Any) -> jax.Array:
    """``value`` where ``valid`` holds and NaN elsewhere, in the value and in the gradient.

    The traced-side half of fail-closed: where a check cannot run (traced arguments), return
    NaN for invalid entries instead of a number. Pass the float ``inputs`` the check was about
    so that ``jax.grad`` with respect to them is NaN at invalid entries too (a plain
    ``jnp.where`` gives a zero gradient there, and an optimiser could walk through an invalid
    budget).

    Args:
      valid: boolean array (broadcast against ``value``).
      value: the result computed from safe substitutes of the inputs.
      *inputs: the float inputs whose validity ``valid`` describes.

    Returns:
      An array with the dtype and shape of ``jnp.where(valid, value, nan)``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> def noise_sd(mu):
      ...     ok = mu > 0
      ...     return valid_or_nan(ok, 1.0 / jnp.where(ok, mu, 1.0), mu)
      >>> float(noise_sd(2.0)), bool(jnp.isnan(jax.grad(noise_sd)(-1.0)))
      (0.5, True)
    """
    return _v.valid_or_nan(valid, value, *inputs)


__all__ = [
    "check",
    "check_integer",
    "check_not_bool",
    "check_range",
    "check_sums_to_one",
    "is_concrete",
    "valid_or_nan",
]
