"""Fail-closed domain checks shared by every mechanism.

Two layers (spec ``privacy-layer.md``, Sec. 1):

* **concrete** values (Python numbers, NumPy arrays, committed JAX arrays) are checked at the
  public boundary and raise ``ValueError`` naming the argument, the allowed range and the
  offending entries (:mod:`ldpjax._validation`);
* **traced** values (under ``jit``/``vmap``/``grad``) cannot be read at trace time, so each
  mechanism computes a boolean ``valid`` mask with the predicates below and *fails closed*:
  a real-valued release becomes NaN, a bit becomes a fair coin, a category -1 (invalid) —
  never the unperturbed input. NaN compares false, so every predicate rejects it.

**No privacy only when checked.** A budget that means "no noise" (mu = inf, xi = inf, an
exploration probability of 0, a truthful rate of 1) is honoured only

* when it is *concrete* where the mechanism is called (an inf you wrote), or
* inside :func:`no_privacy_permitted`, which the engine (``simulate``, ``rollout``) enters only
  after its concrete grid check found such a budget in the params it was given.

A *traced* no-noise budget outside the permit (e.g. ``mu = jnp.exp(100.0)`` under ``jit``)
gives a NaN release. The permit is part of JAX's jit cache key, so a program traced with it is
never reused without it.

**Dtypes.** Releases compute in float32 or float64 only: a float16 or bfloat16 budget, value or
uniform raises ``ValueError`` naming the dtype (dtypes are static, so this holds under ``jit``
too).
"""

from __future__ import annotations

import contextlib
import threading

import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.types import Array, ArrayLike


def _make_permit():
    """A boolean JAX config state that is part of the jit cache key and the trace context."""
    try:
        from jax._src import config as jax_config

        return jax_config.bool_state(
            "ldpjax_no_privacy_permit", False,
            "ldpjax: an inf budget means no noise (set only by the engine's concrete checks)",
            include_in_jit_key=True, include_in_trace_context=True,
        )
    except Exception:  # pragma: no cover - a JAX without config states: never permit traced inf
        return None


_PERMIT = _make_permit()
_FALLBACK = threading.local()


def no_privacy_allowed() -> bool:
    """True inside :func:`no_privacy_permitted` (a traced inf budget then means no noise)."""
    if _PERMIT is None:
        return False
    return bool(_PERMIT.value)


@contextlib.contextmanager
def no_privacy_permitted():
    """Within this context a traced no-noise budget (mu = inf, xi = inf, ...) means no noise.

    Entered by the engine after its concrete grid check found such a budget; enter it yourself
    only around code whose budgets you have checked concretely. Outside it, a traced inf budget
    gives a NaN release.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from ldpjax.mechanisms import gaussian_mechanism
      >>> release = jax.jit(lambda mu: gaussian_mechanism(jax.random.key(0), 1.0, 1.0, mu))
      >>> bool(jnp.isnan(release(jnp.inf)))
      True
      >>> with no_privacy_permitted():
      ...     float(release(jnp.inf))
      1.0
    """
    if _PERMIT is None:  # pragma: no cover
        yield
        return
    with _PERMIT(True):
        yield


def inf_allowed(budget: ArrayLike) -> bool:
    """Whether a no-noise value of ``budget`` is honoured here (concrete, or permitted)."""
    return v.is_concrete(budget) or no_privacy_allowed()


LOW_PRECISION = ("float16", "bfloat16")


def check_precision(name: str, value: ArrayLike) -> None:
    """Refuse float16 / bfloat16 (static dtypes: also under ``jit``)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and str(jnp.dtype(dtype)) in LOW_PRECISION:
        raise ValueError(
            f"{name} has dtype {jnp.dtype(dtype)}: privacy releases compute in float32 or float64 "
            f"only (low precision leaks through rounding); cast it with .astype(jnp.float32)"
        )


def release_dtype(*values: ArrayLike):
    """The float dtype of a release of ``values`` (float32 or float64; low precision refused)."""
    dtype = jnp.result_type(*values, float)
    if str(dtype) in LOW_PRECISION:
        raise ValueError(f"a release cannot compute in {dtype}: use float32 or float64")
    return dtype


def poison(valid: ArrayLike, value: ArrayLike, *inputs: ArrayLike) -> Array:
    """``value`` where ``valid``, NaN elsewhere — also in the gradient.

    Bit for bit ``value`` where valid; NaN value and NaN derivatives where not. Pass the
    ``inputs`` the check was about (a budget, a sensitivity): where ``value`` was computed from a
    safe substitute no reverse-mode cotangent would reach them, so each is tied to the invalid
    entries by a term that is 0 in value with a NaN derivative
    (:func:`ldpjax._validation.valid_or_nan`). An optimiser cannot walk through an invalid budget.
    """
    return v.valid_or_nan(valid, jnp.asarray(value), *inputs)


def mu_ok(mu: ArrayLike, allow_inf: bool = True) -> Array:
    """mu in (0, inf) — or (0, inf] when ``allow_inf`` (see :func:`inf_allowed`)."""
    mu = jnp.asarray(mu)
    return (mu > 0) if allow_inf else ((mu > 0) & (mu < jnp.inf))


def sensitivity_ok(sensitivity: ArrayLike) -> Array:
    """sensitivity in (0, inf): a zero sensitivity would mean no noise."""
    s = jnp.asarray(sensitivity)
    return (s > 0) & (s < jnp.inf)


def rate_ok(r: ArrayLike) -> Array:
    """Truthful-response rate r in (0, 1]."""
    r = jnp.asarray(r)
    return (r > 0) & (r <= 1)


def xi_ok(xi: ArrayLike) -> Array:
    """K-ary budget xi in [0, inf]."""
    return jnp.asarray(xi) >= 0


def prob_ok(p: ArrayLike) -> Array:
    """A probability in [0, 1]."""
    p = jnp.asarray(p)
    return (p >= 0) & (p <= 1)


def in_box(value: ArrayLike, lower: float, upper: float) -> Array:
    """Every entry of ``value`` in [lower, upper] (NaN fails)."""
    value = jnp.asarray(value)
    return jnp.all((value >= lower) & (value <= upper))


def check_floating(name: str, value: ArrayLike) -> None:
    """Concrete ``value`` must be numeric, non-empty, finite and not a string or key."""
    if value is None:
        raise TypeError(f"{name} must be an array of numbers, got None")
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of numbers, got a string {value!r}")
    if not v.is_concrete(value):
        return
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of numbers, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    v.check(name, arr, np.isfinite, "finite")


def check_bits(name: str, bit: ArrayLike) -> None:
    """Concrete bits must be bool or integers 0/1."""
    if isinstance(bit, (str, bytes)):
        raise TypeError(f"{name} must be bits (bool or 0/1), got a string {bit!r}")
    if not v.is_concrete(bit):
        return
    arr = np.asarray(bit)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be bits (bool or 0/1), got dtype {arr.dtype}")
    v.check(name, arr, lambda x: (x == 0) | (x == 1), "bits: 0 or 1 (or bool)")


def check_categories(name: str, category: ArrayLike, k: ArrayLike) -> None:
    """Concrete categories must be integers in [0, k)."""
    if isinstance(category, (str, bytes)):
        raise TypeError(f"{name} must be integer categories, got a string {category!r}")
    if not v.is_concrete(category):
        return
    arr = np.asarray(category)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be integer categories, got dtype {arr.dtype}")
    if v.is_concrete(k):
        kmax = np.asarray(k, np.float64)
        with np.errstate(invalid="ignore"):
            ok = (arr == np.round(arr)) & (arr >= 0) & (arr < kmax)
        if not np.all(ok):
            bad = np.asarray(arr, np.float64)[~np.broadcast_to(ok, arr.shape)].ravel()[:3]
            raise ValueError(
                f"{name} must be integers in [0, k) with k = {np.ravel(kmax)[:3].tolist()}; "
                f"got {bad.tolist()}"
            )
    else:
        v.check_integer(name, arr, 0, allow_bool=True)


def check_power_of_two(name: str, value: float | None) -> None:
    """``granularity`` must be None or a (static, Python) power of two such as 2**-10."""
    if value is None:
        return
    if not isinstance(value, (int, float, np.floating, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a Python float power of two (e.g. 2**-10), got {value!r}")
    value = float(value)
    if not (value > 0 and np.isfinite(value)):
        raise ValueError(f"{name} must be a positive power of two (e.g. 2**-10), got {value!r}")
    mantissa, _ = np.frexp(value)
    if mantissa != 0.5:
        raise ValueError(f"{name} must be a power of two (e.g. 2**-10 = {2**-10}), got {value!r}")


__all__ = [
    "LOW_PRECISION",
    "check_bits",
    "check_categories",
    "check_floating",
    "check_power_of_two",
    "check_precision",
    "inf_allowed",
    "no_privacy_allowed",
    "no_privacy_permitted",
    "release_dtype",
    "in_box",
    "mu_ok",
    "poison",
    "prob_ok",
    "rate_ok",
    "sensitivity_ok",
    "xi_ok",
]
