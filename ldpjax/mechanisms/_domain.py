"""Fail-closed domain checks shared by every mechanism.

Two layers:

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

**No finite budget becomes no noise.** A noise scale b = sensitivity / budget (sd sigma of the
Gaussian, scale of the Laplace) is computed in the release dtype (:func:`noise_scale`). A finite
budget whose b would underflow to 0, overflow, or fall below the float spacing of the data at
its scale — b < spacing(max |value| + sensitivity), where ``value + noise`` rounds back to
``value`` with probability at least about 0.38 — is refused: concretely a ``ValueError`` naming
the budget and the largest budget the dtype honours there (:func:`check_noise_floor`), traced a
NaN release (:func:`noise_floor_ok`). For |value| <= sensitivity that largest budget is at least
2^22 (about 4.2e6) in float32 and 2^51 (about 2.3e15) in float64. A concrete budget or
sensitivity below the dtype's normal range (mu = 1e-40 in float32) is raised to its smallest
normal number (a larger sensitivity, a negligibly larger budget: what the accountants claim for
the same numbers).
"""

from __future__ import annotations

import contextlib
import threading

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.accounting.gdp import round_up_tiny
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


_OR_X64 = ", or compute in float64 (jax_enable_x64)"


def _show(x: float) -> str:
    return f"{x:.4g}"


def check_noise_floor(name: str, budget: ArrayLike, sensitivity: ArrayLike, dtype,
                      value: ArrayLike | None = None) -> None:
    """Refuse a concrete finite budget whose noise ``dtype`` cannot carry (``ValueError``).

    With b = sensitivity / budget (the noise scale) and s = spacing(max |value| + sensitivity)
    in ``dtype`` (``value`` omitted: spacing(sensitivity)), a finite budget is refused when
    b > the dtype's largest number (the smallest budget honoured is sensitivity / max) or
    b < s (the largest budget honoured is sensitivity / s). A finite sensitivity beyond the
    dtype's range is refused too. Budgets and sensitivities below the normal range count as the
    smallest normal number (see the module). Skipped unless ``budget`` and ``sensitivity`` are
    concrete (and ``value``, when given).

    Example:
      >>> check_noise_floor("mu", 1e39, 1.0, jnp.float32)
      Traceback (most recent call last):
      ...
      ValueError: mu=1e+39 is too large for float32: its noise scale sensitivity / mu = 1e-39 is below the float spacing 1.192e-07 at |value| + sensitivity = 1, so value + noise would round to value (a finite budget never becomes no noise); the largest mu float32 honours here is 8.389e+06 (write mu=inf for no noise, or compute in float64 (jax_enable_x64))
    """
    if not v.is_concrete((budget, sensitivity)) or (value is not None and not v.is_concrete(value)):
        return
    dtype = jnp.dtype(dtype)
    info = jnp.finfo(dtype)
    big, tiny = float(info.max), float(info.tiny)
    with np.errstate(all="ignore"):
        b = np.asarray(budget, np.float64)
        s = np.asarray(sensitivity, np.float64)
        b = np.where((b > 0) & (b < tiny), tiny, b)
        s = np.where((s > 0) & (s < tiny), tiny, s)
        if np.any(np.isfinite(s) & (s > big)):
            raise ValueError(
                f"sensitivity={_show(float(np.max(s)))} is not representable in {dtype} "
                f"(largest finite number {_show(big)}): compute in float64 or rescale the data"
            )
        finite = np.isfinite(b) & (b > 0) & (s > 0) & np.isfinite(s)
        if not np.any(finite):
            return
        scale, s, b = np.broadcast_arrays(s / np.where(finite, b, 1.0), s, b)
        finite = np.broadcast_to(finite, scale.shape)
        if np.any(finite & (scale > big)):
            i = np.argmax(finite & (scale > big))
            raise ValueError(
                f"{name}={_show(b.flat[i])} is too small for {dtype} with sensitivity="
                f"{_show(s.flat[i])}: its noise scale sensitivity / {name} = "
                f"{_show(scale.flat[i])} overflows (largest finite number {_show(big)}); the "
                f"smallest {name} {dtype} honours here is {_show(s.flat[i] / big)}"
            )
        extent = 0.0 if value is None else float(np.max(np.abs(np.asarray(value, np.float64))))
        top = np.asarray(s + extent, dtype)
        floor = np.where(np.isfinite(top), np.spacing(np.abs(top)), np.inf).astype(np.float64)
        low = finite & (scale < floor)
    if np.any(low):
        i = np.argmax(low)
        raise ValueError(
            f"{name}={_show(b.flat[i])} is too large for {dtype}: its noise scale sensitivity / "
            f"{name} = {_show(scale.flat[i])} is below the float spacing {_show(floor.flat[i])} "
            f"at |value| + sensitivity = {_show(float(top.flat[i]))}, so value + noise would "
            f"round to value (a finite budget never becomes no noise); the largest {name} "
            f"{dtype} honours here is {_show(s.flat[i] / floor.flat[i])} (write {name}=inf for "
            f"no noise{_OR_X64 if dtype != jnp.float64 else ''})"
        )


def noise_floor_ok(scale: ArrayLike, sensitivity: ArrayLike, value: ArrayLike | None = None
                   ) -> Array:
    """Traced :func:`check_noise_floor`: b = 0 (an inf budget, checked elsewhere) or
    spacing(max |value| + sensitivity) <= b < inf, in the dtype of ``scale``."""
    scale = jnp.asarray(scale)
    top = jnp.asarray(sensitivity, scale.dtype)
    if value is not None:
        top = top + jnp.max(jnp.abs(jnp.asarray(value, scale.dtype)))
    floor = jnp.spacing(jax.lax.stop_gradient(top))  # a bound, not a function to differentiate
    return (scale == 0) | ((scale >= floor) & (scale < jnp.inf))


def noise_scale(sensitivity: ArrayLike, budget: ArrayLike, name: str) -> Array:
    """b = sensitivity / budget, the noise scale of a Gaussian (budget mu) or Laplace (budget
    eps) release: 0 for an inf budget honoured here (:func:`inf_allowed`), NaN (value and
    gradient) for a traced invalid one or one whose b the dtype cannot carry
    (:func:`noise_floor_ok` at value 0); concrete ones raise ``ValueError``.

    Example:
      >>> float(noise_scale(2.0, 4.0, "mu"))
      0.5
    """
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_range(name, budget, 0.0, jnp.inf, low_open=True)
    check_precision("sensitivity", sensitivity)
    check_precision(name, budget)
    dtype = release_dtype(sensitivity, budget)
    check_noise_floor(name, budget, sensitivity, dtype)
    allow_inf = inf_allowed(budget)
    sensitivity = round_up_tiny(sensitivity, dtype)
    budget = round_up_tiny(budget, dtype)
    finite = jnp.isfinite(budget)
    scale = jnp.where(finite, sensitivity / jnp.where(finite & (budget > 0), budget, 1.0), 0.0)
    ok = mu_ok(budget, allow_inf) & sensitivity_ok(sensitivity)
    ok = ok & (~finite | ((scale > 0) & noise_floor_ok(scale, sensitivity)))
    return poison(ok, scale, sensitivity, budget)


def check_rate(name: str, r: ArrayLike, dtype) -> None:
    """Refuse a concrete truthful rate r < 1 that ``dtype`` rounds to 1 (it would never flip).

    Example:
      >>> check_rate("r", 1 - 2**-26, jnp.float32)
      Traceback (most recent call last):
      ...
      ValueError: r=0.9999999850988388 rounds to 1 (no privacy) in float32: the largest r below 1 that float32 honours is 1 - 2^-24 = 0.9999999403953552 (write r=1.0 for no privacy, or compute in float64 (jax_enable_x64))
    """
    if not v.is_concrete(r):
        return
    dtype = jnp.dtype(dtype)
    exact = np.asarray(r, np.float64)
    rounded = np.asarray(np.asarray(r).astype(dtype), np.float64)
    bad = (exact < 1) & (rounded >= 1)
    if np.any(bad):
        below = float(np.nextafter(np.asarray(1.0, dtype), np.asarray(0.0, dtype)))
        bits = jnp.finfo(dtype).nmant + 1
        raise ValueError(
            f"{name}={float(exact[bad].ravel()[0])!r} rounds to 1 (no privacy) in {dtype}: the "
            f"largest {name} below 1 that {dtype} honours is 1 - 2^-{bits} = {below!r} "
            f"(write {name}=1.0 for no privacy{_OR_X64 if dtype != jnp.float64 else ''})"
        )


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
    "check_noise_floor",
    "check_power_of_two",
    "check_precision",
    "check_rate",
    "inf_allowed",
    "no_privacy_allowed",
    "no_privacy_permitted",
    "release_dtype",
    "in_box",
    "mu_ok",
    "noise_floor_ok",
    "noise_scale",
    "poison",
    "prob_ok",
    "rate_ok",
    "sensitivity_ok",
    "xi_ok",
]
