"""Validation at the public Python boundary.

Checks run only on *concrete* values (Python numbers, NumPy arrays, committed JAX arrays). Inside
``jit``/``vmap``/``grad`` the arguments are tracers whose values are unknown at trace time; those
checks are skipped and the numerical functions instead return NaN for out-of-domain entries (see
each function's docstring). A failed check raises ``ValueError`` that names the argument, the
allowed range and the offending value.

Budgets, ranges and counts are real numbers: :func:`check_range` and :func:`check_integer` refuse
booleans (a Python ``bool``, a NumPy or JAX boolean array; ``r=True`` is not a truthful rate of
1). The dtype is static, so this holds for traced values too. Checks meant for bits or masks use
:func:`check`, which accepts booleans, or pass ``allow_bool=True``.
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


def is_bool(value: Any) -> bool:
    """True for a Python ``bool`` or an array (NumPy, JAX, traced or not) of boolean dtype."""
    if isinstance(value, (bool, np.bool_)):
        return True
    dtype = getattr(value, "dtype", None)
    if dtype is None and isinstance(value, (list, tuple)):
        leaves = jax.tree_util.tree_leaves(value)
        return bool(leaves) and all(is_bool(leaf) for leaf in leaves)
    if dtype is None:
        return False
    try:
        return np.dtype(dtype) == np.bool_
    except TypeError:  # extended dtypes (PRNG keys)
        return False


def check_not_bool(name: str, value: Any, allowed: str) -> None:
    """Raise ``ValueError`` if ``value`` is boolean (also when traced: the dtype is static)."""
    if value is None or not is_bool(value):
        return
    if isinstance(value, (bool, np.bool_)):
        shown = repr(bool(value))
    else:
        shown = f"a boolean array of shape {tuple(np.shape(value))}"
    raise ValueError(f"{name} must be a number {allowed}, not a boolean; got {shown}")


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
    """Check ``low <(=) value <(=) high`` entrywise on concrete values.

    Booleans raise (also traced ones) unless ``allow_bool``.
    """

    def ok(x: np.ndarray) -> np.ndarray:
        lo = x > low if low_open else x >= low
        hi = x < high if high_open else x <= high
        return lo & hi

    allowed = (
        f"in {'(' if low_open else '['}{_fmt(low)}, {_fmt(high)}{')' if high_open else ']'}"
    )
    if not allow_bool:
        check_not_bool(name, value, allowed)
    check(name, value, ok, allowed)
    check_representable(name, value)


def check_representable(name: str, value: Any) -> None:
    """Refuse a concrete finite number that JAX's default float type cannot hold.

    Without ``jax_enable_x64`` a Python or float64 number becomes float32 when it enters JAX;
    a finite budget above float32's range (mu = 1e39) would become inf there, which means "no
    noise". It raises ``ValueError`` instead (an inf must be written as inf).

    Example:
      >>> import jax
      >>> if not jax.config.jax_enable_x64:
      ...     try:
      ...         check_representable("mu", 1e39)
      ...     except ValueError as err:
      ...         print(str(err)[:40])
      ... else:
      ...     print("mu=1e+39 is a finite number that float32")
      mu=1e+39 is a finite number that float32
    """
    if value is None or not is_concrete(value) or isinstance(value, (str, bytes)):
        return
    import jax

    if jax.config.jax_enable_x64:
        return
    arr = np.asarray(value)
    if arr.dtype.kind != "f" or arr.dtype.itemsize <= 4:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        big = np.isfinite(arr) & ~np.isfinite(arr.astype(np.float32))
    if np.any(big):
        bad = float(arr[big].ravel()[0])
        raise ValueError(
            f"{name}={bad:.3g} is a finite number that float32 cannot hold (it would become "
            f"inf, which means no noise); the largest is {float(np.finfo(np.float32).max):.4g}: "
            f"write inf for no noise, or enable jax_enable_x64"
        )


def check_integer(
    name: str, value: Any, low: int = -(2**62), high: int = 2**62, *, allow_bool: bool = False
) -> None:
    """Check that a concrete ``value`` holds integers in ``[low, high]``.

    Booleans raise (also traced ones) unless ``allow_bool``.
    """
    if high >= 2**62:
        allowed = f"an integer >= {_fmt(low)}"
    else:
        allowed = f"an integer in [{_fmt(low)}, {_fmt(high)}]"
    if not allow_bool:
        check_not_bool(name, value, f"({allowed})")
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


def valid_or_nan(valid: jax.Array, value: jax.Array, *inputs: Any) -> jax.Array:
    """Return ``value`` where ``valid`` holds and NaN elsewhere — in the gradient too.

    The traced-input policy. The value is ``value * where(valid, 1, nan)``: bit for bit
    ``value`` where valid (inf and -0.0 included), NaN where not, with the dtype, weak type and
    broadcasting of ``jnp.where(valid, value, nan)``. Forward-mode derivatives of the invalid
    entries are NaN. Reverse mode (``jax.grad``) needs the ``inputs`` the check was about:
    where ``value`` was computed from a safe substitute (``where(valid, mu, 1.0)``) no
    cotangent reaches ``mu``, so each float ``input`` is tied to the invalid entries by a term
    that is 0 in value and has a NaN derivative there (``where`` would give a zero gradient,
    and an optimiser could walk through an invalid budget). Inputs whose shape does not
    broadcast to the output's are summed to a scalar first.

    Note: a NaN entry stays NaN in the gradient even if a later step masks its *value* (e.g.
    ``jnp.nanmean``), and with ``jax.jacrev`` over an array of budgets one invalid entry makes
    the derivatives of shared inputs NaN; vmap over budgets keeps them apart.
    """
    import jax.numpy as jnp

    out = jnp.asarray(value) * jnp.where(valid, 1.0, jnp.nan)
    ties = [_tie(x, out.shape) for x in inputs]
    ties = [t for t in ties if t is not None]
    if not ties:
        return out
    bad = jnp.where(valid, 0.0, jnp.nan)
    return jnp.where(valid, out, (bad * sum(ties)).astype(out.dtype))


def _tie(x: Any, shape: tuple[int, ...]) -> jax.Array | None:
    """x - stop_gradient(x) (0 in value, derivative 1), shaped to broadcast to ``shape``."""
    import jax.numpy as jnp

    if x is None:
        return None
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return None
    tie = x - jax.lax.stop_gradient(x)
    try:
        if jnp.broadcast_shapes(tie.shape, shape) == tuple(shape):
            return tie
    except ValueError:
        pass
    return jnp.sum(tie)
