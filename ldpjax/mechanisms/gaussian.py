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

Privacy claim of the granular path (as :class:`~ldpjax.accounting.events.DiscreteGaussianEvent`):
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

No finite mu becomes no noise (:mod:`ldpjax.mechanisms._domain`): on the float path the sd
sigma = sensitivity / mu must be at least the float spacing at max |value| + sensitivity (so
``value + noise`` does not round back to ``value``): mu <= sensitivity / spacing(max |value| +
sensitivity), at least 2^22 (about 4.2e6) in float32 and 2^51 in float64 for |value| <=
sensitivity; beyond it a concrete mu raises ``ValueError`` naming that largest mu, a traced one
gives NaN. A sigma that overflows the dtype, or a sensitivity beyond its range (1e39 in
float32), is refused the same way; a concrete mu below the normal range (1e-40 in float32) is
raised to the smallest normal number, as the accountants do. On the granular path sigma / g
must lie in [:data:`~ldpjax.mechanisms.discrete_gaussian.MIN_GRID_SIGMA`,
:data:`~ldpjax.mechanisms.discrete_gaussian.MAX_GRID_SIGMA`] (2^-60 keeps the sampler's
arithmetic defined; a sigma that small releases the rounded value with probability
1 - e^(-2^119), which is the discrete Gaussian's own law, and the claim says so).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms.discrete_gaussian import (
    DG_INVALID,
    MAX_GRID_SIGMA,
    MIN_GRID_SIGMA,
    discrete_gaussian,
)
from ldpjax.types import Array, ArrayLike, PRNGKey


def gaussian_noise_scale(sensitivity: ArrayLike, mu: ArrayLike) -> Array:
    """The one noise scale of ldpjax: sigma = sensitivity / mu (0 when mu = inf explicitly).

    Args:
      sensitivity: l2 sensitivity, in (0, inf).
      mu: GDP parameter, in (0, inf]; ``inf`` means no noise, honoured only when concrete here
        or inside :func:`~ldpjax.mechanisms.no_privacy_permitted` (the engine's checked grids).

    Returns:
      sigma; NaN (value and gradient) for out-of-domain entries under ``jit`` (NaN, mu <= 0,
      an unchecked traced mu = inf, sensitivity <= 0 or inf) and for a finite mu whose sigma
      the dtype cannot carry (below the float spacing at the sensitivity, or overflowing); such
      a concrete mu raises ``ValueError`` naming the largest (smallest) mu the dtype honours.
      A concrete mu or sensitivity below the normal range counts as its smallest normal number.

    Example:
      >>> float(gaussian_noise_scale(2.0, 4.0))
      0.5
    """
    return dom.noise_scale(sensitivity, mu, "mu")


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
        dom.check_noise_floor("mu", mu, sensitivity, value.dtype, value)
        scale = gaussian_noise_scale(sensitivity, mu).astype(value.dtype)
        release = value + scale * jax.random.normal(key, value.shape, value.dtype)
        ok = in_domain & ~jnp.isnan(scale) & dom.noise_floor_ok(scale, sensitivity, value)
        return dom.poison(ok, release)
    return _granular_release(key, value, sensitivity, mu, domain, granularity, in_domain)


def _granular_release(key, value, sensitivity, mu, domain, g, in_domain) -> Array:
    dim = max(int(np.prod(value.shape)), 1)
    sens_g = rounded_sensitivity(sensitivity, g, dim, domain)
    scale = gaussian_noise_scale(sens_g, mu)
    grid_sigma = (scale / g).astype(value.dtype)
    check_grid_sigma(grid_sigma, sens_g, g)
    # sigma = 0 only for an inf mu honoured by gaussian_noise_scale (a finite one is NaN there)
    in_range = (grid_sigma == 0) | ((grid_sigma >= MIN_GRID_SIGMA) & (grid_sigma <= MAX_GRID_SIGMA))
    ok = in_domain & in_range & ~jnp.isnan(grid_sigma)
    ok = ok & dom.sensitivity_ok(sensitivity)  # the unrounded sensitivity must be > 0 too
    safe_sigma = jnp.where(ok, grid_sigma, 0.0)
    grid_value = jnp.floor(value / g + 0.5)  # round half up: the sensitivity bound above
    noise = discrete_gaussian(key, safe_sigma, value.shape, value.dtype)
    ok = ok & (noise != DG_INVALID)  # a sampler that ran out of rounds fails closed
    release = (grid_value + noise.astype(value.dtype)) * g
    return dom.poison(ok, release, sensitivity, mu)  # NaN gradients at an invalid budget


def check_grid_sigma(grid_sigma: ArrayLike, sensitivity: ArrayLike, granularity: float) -> None:
    """Refuse a concrete grid scale s = sigma / g outside [MIN_GRID_SIGMA, MAX_GRID_SIGMA]
    (0, an inf mu, passes): ``ValueError`` naming the coarser granularity or the largest mu.

    Example:
      >>> check_grid_sigma(1e6, 1.0, 2**-10)
      Traceback (most recent call last):
      ...
      ValueError: granularity=0.0009765625 is too fine for this noise scale (976.6): sigma / granularity must be <= 419430; use a coarser power of two (about 2**-8 or coarser)
    """
    if not v.is_concrete((grid_sigma, sensitivity)):
        return
    s = np.asarray(grid_sigma, np.float64)
    if not np.all(np.isfinite(s)):
        return
    if np.any(s > MAX_GRID_SIGMA):
        sigma = float(np.nanmax(s)) * granularity
        exponent = int(np.ceil(np.log2(sigma / MAX_GRID_SIGMA)))
        raise ValueError(
            f"granularity={granularity!r} is too fine for this noise scale ({sigma:.4g}): "
            f"sigma / granularity must be <= {MAX_GRID_SIGMA:.0f}; use a coarser power of two "
            f"(about 2**{exponent} or coarser)"
        )
    small = (s > 0) & (s < MIN_GRID_SIGMA)
    if np.any(small):
        sens = float(np.max(np.asarray(sensitivity, np.float64)))
        raise ValueError(
            f"mu is too large for granularity={granularity!r}: sigma / granularity = "
            f"{float(np.min(s[small])):.3g} is below {MIN_GRID_SIGMA:.3g} (2^-60), where the "
            f"discrete Gaussian sampler's arithmetic underflows; the largest mu honoured here is "
            f"{sens / (granularity * MIN_GRID_SIGMA):.4g} (write mu=inf for no noise)"
        )


def granular_claim(
    sensitivity: ArrayLike, mu: ArrayLike, granularity: float, dim: int,
    domain: tuple[float, float] | None = None,
):
    """The :class:`~ldpjax.accounting.events.DiscreteGaussianEvent` of a granular release.

    Example:
      >>> event = granular_claim(1.0, 1.0, 2**-8, 1, (0.0, 1.0))
      >>> float(event.sigma), float(event.shift)
      (256.0, 256.0)
    """
    from ldpjax.accounting import DiscreteGaussianEvent

    domain = _check_domain(domain)
    sens_g = rounded_sensitivity(sensitivity, granularity, dim, domain)
    sigma = gaussian_noise_scale(sens_g, mu) / granularity
    shift = jnp.ceil(sens_g / granularity - 1e-9)
    return DiscreteGaussianEvent(sigma=sigma, shift=shift, dim=dim)


__all__ = [
    "check_grid_sigma",
    "gaussian_mechanism",
    "gaussian_noise_scale",
    "granular_claim",
    "rounded_sensitivity",
]
