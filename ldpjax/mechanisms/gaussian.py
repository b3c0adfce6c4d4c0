"""The Gaussian mechanism: the one noise scale, the float path and the float-safe granular path.

For a value with l2 sensitivity Delta between neighbouring inputs, releasing
``value + sigma Z`` with sigma = Delta / mu is mu-GDP (Dong, Roth & Su 2019, Thm 2.7).

Two paths:

* **float** (default, ``granularity=None``): ``value + sigma * N(0, I)`` in floating point. Fast
  and right for *simulation*, but as Mironov (CCS 2012) showed, the low-order bits of a float
  release depend on ``value``: for ``value`` in {0, 1} and mu = 1, the event
  "|output| < 0.5 and output not a multiple of 2^-24" has probability about 0.26 when value = 0
  and 0 when value = 1 (float32). Do **not** use it to release real data.
* **granular** (``granularity=g``, a power of two such as 2**-10): the value is rounded to the
  grid g Z (round half up), and the noise is g Y with Y an exact discrete Gaussian
  N_Z(0, (sigma_g / g)^2) (:mod:`ldpjax.mechanisms.discrete_gaussian`). Every output is an
  exact multiple of g, so its bits say nothing beyond its value. **Use this path for a release
  of real data.**

Rounding and sensitivity (granular path): with round-half-up, each coordinate of the rounded
difference is at most ceil(|difference| / g) grid steps, so the rounded l2 sensitivity is at most
Delta_g = Delta + g sqrt(d) (d = number of coordinates of one release). When a ``domain``
[lower, upper] with both endpoints on the grid is declared, rounding maps the domain into itself
and Delta_g = min(Delta + g sqrt(d), (upper - lower) sqrt(d)). The noise is calibrated to
Delta_g: sigma_g = Delta_g / mu.

Privacy claim of the granular path (as :class:`~ldpjax.mechanisms.events.DiscreteGaussianEvent`):
for a scalar release (d = 1) the exact privacy profile delta(eps) of the discrete Gaussian with
integer shift D = ceil(Delta_g / g) and s = sigma_g / g
(:func:`~ldpjax.mechanisms.discrete_gaussian.discrete_gaussian_delta`); for d > 1 the
(D^2 / (2 s^2))-zCDP guarantee of the multivariate discrete Gaussian (CKS 2020, Thm 14),
converted to (eps, delta). It is *not* claimed to be exactly mu-GDP: for s >= 1 its profile is
within a whisker of the mu-GDP one (compare with ``accounting.gdp_delta``; the tests do), and the
event says what was computed.

Fail closed: concrete out-of-domain ``mu``, ``sensitivity`` (it must be > 0), values or
``granularity`` raise ``ValueError``; traced ones make the release NaN (never the unperturbed
value). ``mu = inf`` (no noise) is honoured only when concrete at the call or inside
:func:`~ldpjax.mechanisms.no_privacy_permitted` (the engine's checked grids); a traced inf
elsewhere (e.g. an overflow) gives NaN. float16 / bfloat16 inputs raise ``ValueError``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms.discrete_gaussian import DG_INVALID, MAX_GRID_SIGMA, discrete_gaussian
from ldpjax.types import Array, ArrayLike, PRNGKey


def gaussian_noise_scale(sensitivity: ArrayLike, mu: ArrayLike) -> Array:
    """The one noise scale of ldpjax: sigma = sensitivity / mu (0 when mu = inf explicitly).

    Args:
      sensitivity: l2 sensitivity, in (0, inf).
      mu: GDP parameter, in (0, inf]; ``inf`` means no noise, honoured only when concrete here
        or inside :func:`~ldpjax.mechanisms.no_privacy_permitted` (the engine's checked grids).

    Returns:
      sigma; NaN (value and gradient) for out-of-domain entries under ``jit`` (NaN, mu <= 0,
      an unchecked traced mu = inf, sensitivity <= 0 or inf).

    Example:
      >>> float(gaussian_noise_scale(2.0, 4.0))
      0.5
    """
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_range("mu", mu, 0.0, jnp.inf, low_open=True)
    dom.check_precision("sensitivity", sensitivity)
    dom.check_precision("mu", mu)
    dtype = dom.release_dtype(sensitivity, mu)
    allow_inf = dom.inf_allowed(mu)
    sensitivity = jnp.asarray(sensitivity, dtype)
    mu = jnp.asarray(mu, dtype)
    finite = jnp.isfinite(mu)
    scale = jnp.where(finite, sensitivity / jnp.where(finite & (mu > 0), mu, 1.0), 0.0)
    return dom.poison(dom.mu_ok(mu, allow_inf) & dom.sensitivity_ok(sensitivity), scale,
                      sensitivity, mu)


def rounded_sensitivity(
    sensitivity: ArrayLike, granularity: float, dim: int, domain: tuple[float, float] | None = None
) -> Array:
    """l2 sensitivity after rounding to g Z: Delta + g sqrt(d), or the domain's diameter bound.

    Args:
      sensitivity: Delta >= 0 before rounding.
      granularity: g, a power of two.
      dim: d, the number of coordinates of one release.
      domain: optional (lower, upper) box with both endpoints on the grid; then the bound is
        min(Delta + g sqrt(d), (upper - lower) sqrt(d)).

    Example:
      >>> float(rounded_sensitivity(1.0, 2**-4, 4))  # 1 + 2^-4 sqrt(4)
      1.125
      >>> float(rounded_sensitivity(2.0, 2**-4, 4, (0.0, 1.0)))  # gains in [0, 1]^4
      2.0
    """
    dom.check_power_of_two("granularity", granularity)
    bound = jnp.asarray(sensitivity, jnp.result_type(sensitivity, float)) + granularity * math.sqrt(dim)
    if domain is not None and _on_grid(domain, granularity):
        bound = jnp.minimum(bound, (domain[1] - domain[0]) * math.sqrt(dim))
    return bound


def _on_grid(domain: tuple[float, float], g: float) -> bool:
    return all(float(b) / g == round(float(b) / g) for b in domain)


def _check_domain(domain) -> tuple[float, float] | None:
    if domain is None:
        return None
    try:
        lower, upper = (float(b) for b in domain)
    except (TypeError, ValueError):
        raise TypeError(f"domain must be a pair of Python floats (lower, upper), got {domain!r}") from None
    if not (np.isfinite(lower) and np.isfinite(upper) and lower < upper):
        raise ValueError(f"domain must be finite with lower < upper, got {domain!r}")
    return lower, upper


def prepare_release(value, sensitivity, budget, budget_name: str, domain, granularity):
    """The boundary checks every real-valued release shares: ``(value, domain, in_domain)``.

    Concrete out-of-domain values, sensitivities, budgets, domains or granularities raise
    ``ValueError`` (float16 / bfloat16 too); ``value`` comes back as float32 or float64 and
    ``in_domain`` is the traced check (inside ``domain``, or finite) that poisons the release.
    """
    dom.check_precision("value", value)
    dom.check_floating("value", value)
    v.check_range("sensitivity", sensitivity, 0.0, jnp.inf, low_open=True, high_open=True)
    v.check_range(budget_name, budget, 0.0, jnp.inf, low_open=True)
    for name, x in (("sensitivity", sensitivity), (budget_name, budget)):
        dom.check_precision(name, x)
    domain = _check_domain(domain)
    dom.check_power_of_two("granularity", granularity)
    value = jnp.asarray(value)
    if not jnp.issubdtype(value.dtype, jnp.floating):
        value = value.astype(jnp.result_type(float))
    value = value.astype(dom.release_dtype(value, sensitivity, budget))
    if domain is None:
        return value, None, jnp.all(jnp.isfinite(value))
    v.check_range("value", value, domain[0], domain[1])
    return value, domain, dom.in_box(value, *domain)


def gaussian_mechanism(
    key: PRNGKey,
    value: ArrayLike,
    sensitivity: ArrayLike,
    mu: ArrayLike,
    *,
    domain: tuple[float, float] | None = None,
    granularity: float | None = None,
) -> Array:
    """Release ``value`` with Gaussian noise calibrated to mu-GDP (one release = one record).

    Args:
      key: PRNG key.
      value: the true value (any shape; the whole array is one record's release).
      sensitivity: l2 sensitivity of ``value`` between neighbouring inputs, in (0, inf).
      mu: GDP parameter, in (0, inf]; ``inf`` releases ``value`` unchanged (no privacy) only when
        it is concrete here or the engine checked it (``no_privacy_permitted``); a traced inf
        otherwise gives NaN.
      domain: optional static (lower, upper): the domain the sensitivity assumes (e.g. (0, 1)
        for gains). Concrete values outside it raise; traced ones give a NaN release.
      granularity: None for the fast float path (simulation only: leaks through low-order bits),
        or a power of two g for the float-safe granular path (exact discrete Gaussian on g Z;
        use it for real data).

    Returns:
      The release, same shape as ``value`` (float32 or float64; float16/bfloat16 inputs raise
      ``ValueError``). NaN where a traced argument is out of domain.

    Safe for real data: only with ``granularity`` set and a key from
    :func:`~ldpjax.mechanisms.secure_key`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> out = gaussian_mechanism(jax.random.key(0), jnp.zeros(3), 1.0, 1.0, granularity=2**-8)
      >>> bool(jnp.all(out * 2**8 == jnp.round(out * 2**8)))
      True
    """
    value, domain, in_domain = prepare_release(value, sensitivity, mu, "mu", domain, granularity)
    if granularity is None:
        scale = gaussian_noise_scale(sensitivity, mu).astype(value.dtype)
        release = value + scale * jax.random.normal(key, value.shape, value.dtype)
        return dom.poison(in_domain & ~jnp.isnan(scale), release)
    return _granular_release(key, value, sensitivity, mu, domain, granularity, in_domain)


def _granular_release(key, value, sensitivity, mu, domain, g, in_domain) -> Array:
    dim = max(int(np.prod(value.shape)), 1)
    sens_g = rounded_sensitivity(sensitivity, g, dim, domain)
    scale = gaussian_noise_scale(sens_g, mu)
    grid_sigma = (scale / g).astype(value.dtype)
    if v.is_concrete(grid_sigma) and np.all(np.isfinite(np.asarray(grid_sigma))):
        if np.any(np.asarray(grid_sigma) > MAX_GRID_SIGMA):
            raise ValueError(
                f"granularity={g!r} is too fine for this noise scale ({float(np.max(scale)):.4g}): "
                f"sigma / granularity must be <= {MAX_GRID_SIGMA:.0f}; use a coarser power of two"
            )
    ok = in_domain & (grid_sigma <= MAX_GRID_SIGMA) & ~jnp.isnan(grid_sigma)
    ok = ok & dom.sensitivity_ok(sensitivity)  # the unrounded sensitivity must be > 0 too
    safe_sigma = jnp.where(ok, grid_sigma, 0.0)
    grid_value = jnp.floor(value / g + 0.5)  # round half up: the sensitivity bound above
    noise = discrete_gaussian(key, safe_sigma, value.shape, value.dtype)
    ok = ok & (noise != DG_INVALID)  # a sampler that ran out of rounds fails closed
    release = (grid_value + noise.astype(value.dtype)) * g
    return dom.poison(ok, release)


def granular_claim(
    sensitivity: ArrayLike, mu: ArrayLike, granularity: float, dim: int,
    domain: tuple[float, float] | None = None,
):
    """The :class:`~ldpjax.mechanisms.events.DiscreteGaussianEvent` of a granular release.

    Example:
      >>> event = granular_claim(1.0, 1.0, 2**-8, 1, (0.0, 1.0))
      >>> float(event.sigma), float(event.shift)
      (256.0, 256.0)
    """
    from ldpjax.mechanisms.events import DiscreteGaussianEvent

    domain = _check_domain(domain)
    sens_g = rounded_sensitivity(sensitivity, granularity, dim, domain)
    sigma = gaussian_noise_scale(sens_g, mu) / granularity
    shift = jnp.ceil(sens_g / granularity - 1e-9)
    return DiscreteGaussianEvent(sigma=sigma, shift=shift, dim=dim)


__all__ = [
    "gaussian_mechanism",
    "gaussian_noise_scale",
    "granular_claim",
    "rounded_sensitivity",
]
