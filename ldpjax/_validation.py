"""Validation at the public Python boundary.

Checks run only on *concrete* values (Python numbers, NumPy arrays, committed JAX arrays). Inside
``jit``/``vmap``/``grad`` the arguments are tracers whose values are unknown at trace time; those
checks are skipped and the numerical functions instead return NaN for out-of-domain entries (see
each function's docstring). A failed check raises ``ValueError`` that names the argument, the
allowed range and the offending value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np


def is_concrete(value: Any) -> bool:
    """True when every leaf of ``value`` can be read on the host (no tracers)."""
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree_util.tree_leaves(value))


def _as_numpy(value: Any) -> np.ndarray:
    return np.asarray(value)


def _show(x: float) -> float | int:
    return int(x) if np.isfinite(x) and float(x).is_integer() and abs(x) < 2**53 else float(x)


def _describe(value: np.ndarray, bad: np.ndarray) -> str:
    if value.ndim == 0:
        return repr(_show(value.item()))
    first = [_show(x) for x in value[bad].ravel()[:3].tolist()]
    return f"{first} (first offending entries of an array of shape {value.shape})"


def check(name: str, value: Any, ok: Callable[[np.ndarray], np.ndarray], allowed: str) -> None:
    """Raise ``ValueError`` if any entry of a concrete ``value`` fails ``ok``.

    ``ok`` maps a float64 NumPy array to a boolean array; NaN always fails.
    """
    if value is None or not is_concrete(value):
        return
    arr = _as_numpy(value)
    if arr.dtype.kind in "US":
        raise ValueError(f"{name} must be numeric ({allowed}), got {arr!r}")
    if jax.dtypes.issubdtype(arr.dtype, jax.dtypes.prng_key):
        raise ValueError(f"{name} must be numeric, got a PRNG key")
    with np.errstate(invalid="ignore"):
        arr = arr.astype(np.float64)
        good = np.asarray(ok(arr), dtype=bool) & ~np.isnan(arr)
    if not np.all(good):
        raise ValueError(f"{name} must be {allowed}; got {_describe(arr, ~good)}")


def check_range(
    name: str,
    value: Any,
    low: float = -np.inf,
    high: float = np.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Check ``low <(=) value <(=) high`` entrywise on concrete values."""

    def ok(x: np.ndarray) -> np.ndarray:
        lo = x > low if low_open else x >= low
        hi = x < high if high_open else x <= high
        return lo & hi

    allowed = (
        f"in {'(' if low_open else '['}{_fmt(low)}, {_fmt(high)}{')' if high_open else ']'}"
    )
    check(name, value, ok, allowed)


def check_integer(name: str, value: Any, low: int = -(2**62), high: int = 2**62) -> None:
    """Check that a concrete ``value`` holds integers in ``[low, high]``."""
    if high >= 2**62:
        allowed = f"an integer >= {_fmt(low)}"
    else:
        allowed = f"an integer in [{_fmt(low)}, {_fmt(high)}]"
    check(name, value, lambda x: (x == np.round(x)) & (x >= low) & (x <= high), allowed)


def check_sums_to_one(name: str, value: Any, axis: int = -1, atol: float = 1e-6) -> None:
    """Check that concrete weights are non-negative and sum to one along ``axis``."""
    if value is None or not is_concrete(value):
        return
    arr = np.asarray(value, dtype=np.float64)
    check_range(name, arr, 0.0, 1.0)
    total = arr.sum(axis=axis)
    if not np.all(np.abs(total - 1.0) <= atol):
        raise ValueError(
            f"{name} must be non-negative weights that sum to 1 along axis {axis}; "
            f"they sum to {np.ravel(total)[:3].tolist()}"
        )


def _fmt(x: float) -> str:
    if x == np.inf:
        return "inf"
    if x == -np.inf:
        return "-inf"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(float(x))


def valid_or_nan(valid: jax.Array, value: jax.Array) -> jax.Array:
    """Return ``value`` where ``valid`` holds and NaN elsewhere (the traced-input policy)."""
    import jax.numpy as jnp

    return jnp.where(valid, value, jnp.nan)
