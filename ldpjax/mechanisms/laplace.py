"""The Laplace mechanism: pure eps-DP, on a float path (simulation) and on a grid (real data).

For a value with l1 sensitivity Delta, ``value + (Delta / eps) L`` with L ~ Laplace(0, 1)
(density e^-|x| / 2) is eps-DP (Dwork, McSherry, Nissim & Smith 2006). The DP-SGD comparison of
"Federated Learning of Quantile Inference under Local Differential Privacy" (ICLR 2026)
privatises the unit-range subgradient this way at eps_k = log((1 + r_k)/(1 - r_k)):
noise sd sqrt(2) / eps_k.

Two paths:

* **float** (default, ``granularity=None``): ``value + b * jax.random.laplace`` with
  b = Delta / eps. For *simulation*: like the float Gaussian, its low-order bits depend on the
  value (Mironov 2012).
* **granular** (``granularity=g``, a power of two): the value is rounded to g Z (round half up),
  and the noise is g Y with Y an exact discrete Laplace, P[Y = y] proportional to
  exp(-|y| / t) (Canonne, Kamath & Steinke 2020, Algorithm 2). The scale t = n / 64 is a
  multiple of 1/64 rounded *up* from D / eps (n = ceil(64 D / eps) >= 1, from D / eps computed
  in the dtype), where D = ceil(Delta_g / g) is the rounded l1 sensitivity in grid units
  (Delta_g = Delta + g d for d coordinates, or the domain's bound), so the release is
  (D / t)-DP with D / t <= eps up to the rounding of D / eps (for integer shifts up to D the
  privacy loss of the discrete Laplace is at most D / t). Its claim (:func:`laplace_claim`) is
  ``PureDpEvent(D / t)``, D / t = 64 D / n itself rounded up (at most one ulp above the
  quotient): never below the true value. (The float path claims ``LaplaceEvent(eps)``, the
  continuous mechanism's own, tighter profile; the discrete Laplace's loss takes only the
  values +-D / t at D = 1, the worst eps-DP pair.) Every output is a multiple of g. **Use this path for a release of real
  data** with a key from :func:`~ldpjax.mechanisms.secure_key`.

Sampler (CKS 2020, Algorithm 2, with rational scale n / 64): U uniform on {0, ..., n - 1}
accepted with probability exp(-U / n); V ~ Geometric (P(V >= j) = e^-j, drawn by inversion from
a uniform of 2^-64 resolution made of two words, so the float resolution never truncates its
tail; a draw with V >= 44, probability e^-44 < 1e-19, makes the release NaN rather than being
clipped); X = U + n V; Y = floor(X / 64); a fair sign B, rejecting (B = 1, Y = 0). Strictly,
then, the granular release is pure (D / t)-DP except near the cut: outputs at least
floor(44 t) grid steps from the rounded value may be cut (NaN) for one neighbour and not for
the other, D steps away, and those outputs have probability at most
e^(-(floor(44 t) - D) / t) <= e^(D/t + 1/t - 44); so the release is (D / t, delta)-DP with
that delta (at most 5.7e-19 at D / t = 1 with t >= 1; it grows with D / t: keep eps moderate
on this path). Acceptance probabilities are computed in floating point (a law
residual of the order of the float epsilon; never a change of support). Rounds run in a
``lax.while_loop`` bounded by :data:`MAX_ROUNDS` (each round accepts with probability above
0.3): an entry unfinished after it (probability below 1e-19) makes the release NaN.

Fail closed: concrete eps outside (0, inf], sensitivity outside (0, inf), values outside the
domain, a bad granularity or float16/bfloat16 inputs raise ``ValueError``; traced ones give a NaN
release (and NaN gradients). eps = inf (no noise) is honoured only when concrete or inside
:func:`~ldpjax.mechanisms.no_privacy_permitted`. No finite eps becomes no noise: on the float
path b = Delta / eps must be at least the float spacing at max |value| + Delta (the rule of
:mod:`ldpjax.mechanisms._domain`, as for the Gaussian: eps <= Delta / spacing, at least 2^22 in
float32 for |value| <= Delta), a b that overflows or a Delta beyond the dtype's range is
refused, and a concrete eps below the normal range is raised to the smallest normal number; on
the granular path the grid scale is at least 1/64 for every finite eps and at most
:data:`MAX_GRID_SCALE` (a concrete eps beyond either raises ``ValueError``, see
:func:`check_grid_scale`; traced: NaN).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.types import Array, ArrayLike, PRNGKey

#: Denominator of the discrete Laplace scale t = n / SCALE_DENOMINATOR (grid units).
SCALE_DENOMINATOR = 64
#: Where the geometric part of the sampler stops (its tail beyond: probability e^-44 < 1e-19).
MAX_GEOMETRIC = 44
#: Largest grid-unit scale the exact sampler accepts (X = U + n V stays within int32).
MAX_GRID_SCALE = float((2**31 - 1) // ((MAX_GEOMETRIC + 2) * SCALE_DENOMINATOR * SCALE_DENOMINATOR))
#: Most rounds of candidates before the sampler gives up (then the release is NaN).
MAX_ROUNDS = 128
#: The sampler's "no valid draw" sentinel.
DL_INVALID = -(2**31)


def laplace_noise_scale(sensitivity: ArrayLike, eps: ArrayLike) -> Array:
    """b = sensitivity / eps (0 for a concrete or permitted eps = inf; NaN when invalid).

    A finite eps whose b the dtype cannot carry (below the float spacing at the sensitivity,
    or overflowing) is refused: ``ValueError`` when concrete, NaN when traced
    (:func:`ldpjax.mechanisms._domain.noise_scale`).

    Example:
      >>> float(laplace_noise_scale(1.0, 2.0))
      0.5
    """
    return dom.noise_scale(sensitivity, eps, "eps")


def _geometric_from_bits(words: Array, dtype) -> tuple[Array, Array]:
    """V = floor(-log u) (P(V >= j) = e^-j) from a uniform u with 2^-64 resolution built from two
    uint32 words: exact in its support up to float rounding, cut at V = MAX_GEOMETRIC (the tail
    beyond has probability e^-44 < 1e-19; such draws are flagged invalid, never clipped)."""
    high, low = words[..., 0], words[..., 1]
    fine = (low.astype(dtype) + 0.5) * 2.0**-32
    u = jnp.where(high > 0, (high.astype(dtype) + fine) * 2.0**-32, fine * 2.0**-32)
    geo = jnp.floor(-jnp.log(u))
    ok = geo < MAX_GEOMETRIC
    return jnp.where(ok, geo, 0.0).astype(jnp.int32), ok


def _one_round(key: PRNGKey, n: Array, shape, dtype) -> tuple[Array, Array, Array]:
    """One candidate per entry: (candidate, accepted?, fell in the cut tail?)."""
    k_u, k_acc, k_v, k_sign = jax.random.split(key, 4)
    u_int = jax.random.randint(k_u, shape, 0, jnp.maximum(n, 1), dtype=jnp.int32)
    accept_u = jax.random.uniform(k_acc, shape, dtype) < jnp.exp(
        -u_int.astype(dtype) / n.astype(dtype))
    geo, in_support = _geometric_from_bits(jax.random.bits(k_v, shape + (2,), jnp.uint32), dtype)
    y = (u_int + n * geo) // SCALE_DENOMINATOR
    negative = jax.random.bernoulli(k_sign, 0.5, shape)
    accepted = accept_u & ~(negative & (y == 0))
    return jnp.where(negative, -y, y), accepted, accepted & ~in_support


def discrete_laplace(key: PRNGKey, scale: ArrayLike, shape=(), dtype=None) -> Array:
    """Integers Y with P[Y = y] proportional to exp(-|y| / t), t = ceil(64 scale) / 64 >= scale.

    Args:
      key: PRNG key.
      scale: t in (0, MAX_GRID_SCALE] (grid units); it is rounded *up* to a multiple of 1/64.
      shape: output shape.
      dtype: float dtype of the acceptance computations.

    Returns:
      int32 array; :data:`DL_INVALID` where the scale is invalid or the bounded loop ran out.

    Example:
      >>> import jax
      >>> discrete_laplace(jax.random.key(0), 3.0, (4,)).dtype
      dtype('int32')
    """
    v.check_range("scale", scale, 0.0, MAX_GRID_SCALE, low_open=True)
    dom.check_precision("scale", scale)
    shape = tuple(shape)
    dtype = dom.release_dtype(scale) if dtype is None else dom.release_dtype(jnp.zeros((), dtype))
    t = jnp.broadcast_to(jnp.asarray(scale, dtype), shape)
    valid = (t > 0) & (t <= MAX_GRID_SCALE)
    n = jnp.ceil(jnp.where(valid, t, 1.0) * SCALE_DENOMINATOR).astype(jnp.int32)

    def cond(carry):
        _, done, _, i = carry
        return ~jnp.all(done) & (i < MAX_ROUNDS)

    def body(carry):
        out, done, cut, i = carry
        y, ok, tail = _one_round(jax.random.fold_in(key, i), n, shape, dtype)
        take = ok & ~done
        return jnp.where(take, y, out), done | ok, cut | (take & tail), i + 1

    init = (jnp.zeros(shape, jnp.int32), ~valid, jnp.zeros(shape, bool), jnp.asarray(0, jnp.int32))
    out, done, cut, _ = jax.lax.while_loop(cond, body, init)
    return jnp.where(valid & done & ~cut, out, DL_INVALID)


def granular_laplace_scale(sensitivity, eps, granularity: float, dim: int, domain=None):
    """(shift D, grid scale t): D = ceil(Delta_g / g) and t = ceil(64 D / eps) / 64.

    Delta_g = Delta + g d (l1 rounding error of d coordinates), or at most (upper - lower) d with
    a grid-aligned ``domain``. The release is (D / t)-DP, D / t <= eps.

    Example:
      >>> shift, scale = granular_laplace_scale(1.0, 1.0, 2**-4, 1, (0.0, 1.0))
      >>> float(shift), float(scale)
      (16.0, 16.0)
    """
    dom.check_power_of_two("granularity", granularity)
    sens = jnp.asarray(sensitivity, dom.release_dtype(sensitivity, eps))
    bound = sens + granularity * dim
    if domain is not None and all(float(b) / granularity == round(float(b) / granularity)
                                  for b in domain):
        bound = jnp.minimum(bound, (domain[1] - domain[0]) * dim)
    shift = jnp.ceil(bound / granularity - 1e-9)
    eps = jnp.asarray(eps, sens.dtype)
    finite = jnp.isfinite(eps)
    raw = shift / jnp.where(finite & (eps > 0), eps, 1.0)
    # n >= 1: a finite eps never gives the scale 0 (no noise), even where D / eps underflows
    n = jnp.maximum(jnp.ceil(raw * SCALE_DENOMINATOR), 1.0)
    scale = jnp.where(finite, n / SCALE_DENOMINATOR, 0.0)
    return shift, scale


def check_grid_scale(grid_scale: ArrayLike, granularity: float) -> None:
    """Refuse a concrete grid scale t above :data:`MAX_GRID_SCALE` (``ValueError`` naming the
    coarsest granularity that fits).

    Example:
      >>> check_grid_scale(81650.0, 2**-14)
      Traceback (most recent call last):
      ...
      ValueError: granularity=6.103515625e-05 is too fine for this noise scale: scale / granularity = 8.165e+04 grid units, above the exact sampler's 11397; use a coarser power of two (about 2**-11 or coarser)
    """
    if not v.is_concrete(grid_scale):
        return
    t = np.asarray(grid_scale, np.float64)
    if np.any(t > MAX_GRID_SCALE):
        worst = float(np.nanmax(t))
        exponent = int(np.ceil(np.log2(granularity * worst / MAX_GRID_SCALE)))
        raise ValueError(
            f"granularity={granularity!r} is too fine for this noise scale: scale / granularity = "
            f"{worst:.4g} grid units, above the exact sampler's {MAX_GRID_SCALE:.0f}; use a "
            f"coarser power of two (about 2**{exponent} or coarser)"
        )


def laplace_mechanism(
    key: PRNGKey,
    value: ArrayLike,
    sensitivity: ArrayLike,
    eps: ArrayLike,
    *,
    domain: tuple[float, float] | None = None,
    granularity: float | None = None,
) -> Array:
    """Release ``value`` with Laplace noise calibrated to eps-DP (l1 ``sensitivity``).

    Args:
      key: PRNG key (a :func:`~ldpjax.mechanisms.secure_key` for real data).
      value: the true value (any shape; the whole array is one record's release).
      sensitivity: l1 sensitivity in (0, inf).
      eps: budget in (0, inf]; inf (no noise) only when concrete or permitted.
      domain: optional static (lower, upper) the sensitivity assumes.
      granularity: None (float path: simulation) or a power of two g (exact discrete Laplace
        on g Z: real data).

    Returns:
      The release (float32 or float64), NaN where a traced argument is invalid. Its claim is
      :func:`laplace_claim`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> out = laplace_mechanism(jax.random.key(0), jnp.zeros(3), 1.0, 1.0, granularity=2**-6)
      >>> bool(jnp.all(out * 2**6 == jnp.round(out * 2**6)))
      True
    """
    from ldpjax.mechanisms.gaussian import prepare_release

    value, domain, in_domain = prepare_release(value, sensitivity, eps, "eps", domain, granularity)
    if granularity is None:
        dom.check_noise_floor("eps", eps, sensitivity, value.dtype, value)
    scale = laplace_noise_scale(sensitivity, eps).astype(value.dtype)
    ok = in_domain & ~jnp.isnan(scale)
    if granularity is None:
        release = value + scale * jax.random.laplace(key, value.shape, value.dtype)
        return dom.poison(ok & dom.noise_floor_ok(scale, sensitivity, value), release)
    dim = max(int(np.prod(value.shape)), 1)
    _, grid_scale = granular_laplace_scale(sensitivity, eps, granularity, dim, domain)
    grid_scale = grid_scale.astype(value.dtype)
    check_grid_scale(grid_scale, granularity)
    ok = ok & (grid_scale <= MAX_GRID_SCALE)
    zero = grid_scale == 0  # eps = inf only (finite eps: t >= 1/64), checked above
    noise = discrete_laplace(key, jnp.where(ok & ~zero, grid_scale, 1.0), value.shape, value.dtype)
    noise = jnp.where(zero, 0, noise)
    ok = ok & (noise != DL_INVALID)
    release = (jnp.floor(value / granularity + 0.5) + noise.astype(value.dtype)) * granularity
    return dom.poison(ok, release, sensitivity, eps)  # NaN gradients at an invalid budget


def _two_product(a: Array, b: Array) -> tuple[Array, Array]:
    """(p, e) with p = fl(a b) and p + e = a b exactly (Dekker 1971, "A floating-point technique
    for extending the available precision", Numer. Math. 18; Veltkamp's splitting)."""
    factor = 2.0 ** ((jnp.finfo(a.dtype).nmant + 2) // 2) + 1.0

    def split(x):
        c = factor * x
        hi = c - (c - x)
        return hi, x - hi

    a_hi, a_lo = split(a)
    b_hi, b_lo = split(b)
    p = a * b
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def quotient_up(numerator: ArrayLike, denominator: ArrayLike) -> Array:
    """numerator / denominator (positive, exactly representable), rounded *up*.

    The correctly rounded quotient q is kept where q * denominator >= numerator exactly (an
    error-free product decides it, :func:`_two_product`), else raised by one ulp: q is within
    half an ulp of the real quotient, so the result is never below it and at most one ulp above.

    Example:
      >>> float(quotient_up(64.0, 16.0)), float(quotient_up(1.0, 3.0)) > 1 / 3
      (4.0, True)
    """
    num, den = jnp.broadcast_arrays(*(jnp.asarray(x, jnp.result_type(numerator, denominator, float))
                                      for x in (numerator, denominator)))
    q = num / den
    product, error = _two_product(q, den)
    above = (product > num) | ((product == num) & (error >= 0))
    step = jax.lax.stop_gradient(jnp.nextafter(q, jnp.asarray(jnp.inf, q.dtype)) - q)
    return jnp.where(above, q, q + step)


def laplace_claim(sensitivity, eps, granularity: float | None = None, dim: int = 1, domain=None):
    """The privacy event of a release of ``dim`` coordinates.

    * Float path, one coordinate: ``LaplaceEvent(eps)``, the continuous Laplace mechanism (its
      own profile, 1 - e^((e - eps)/2) below eps; :mod:`ldpjax.accounting.laplace`).
    * Float path, ``dim > 1`` (l1 sensitivity over the vector): ``PureDpEvent(eps)``, the worst
      eps-DP pair (the scalar Laplace profile is not claimed for vectors).
    * Granular path: ``PureDpEvent(D / t)`` with D / t = 64 D / n of the scale actually used,
      rounded up (:func:`quotient_up`), at most eps up to the rounding of D / eps. The
      discrete Laplace's privacy loss takes only the values +-D / t at unit shift D = 1,
      where the worst eps-DP pair (binary randomized response) is its exact profile; for
      D > 1 that pair is a valid upper bound (the release is (D / t)-DP).

    Example:
      >>> round(float(laplace_claim(1.0, 0.7).eps), 6)
      0.7
      >>> type(laplace_claim(1.0, 1.0, 2**-4, 1, (0.0, 1.0))).__name__
      'PureDpEvent'
    """
    from ldpjax.accounting import LaplaceEvent, PureDpEvent

    eps_arr = jnp.asarray(eps, dom.release_dtype(sensitivity, eps))
    if granularity is None:
        return LaplaceEvent(eps_arr) if dim == 1 else PureDpEvent(eps_arr)
    shift, scale = granular_laplace_scale(sensitivity, eps, granularity, dim, domain)
    positive = scale > 0
    n = jnp.where(positive, scale * SCALE_DENOMINATOR, 1.0)  # exact: n is a whole number
    claim = quotient_up(shift * SCALE_DENOMINATOR, n)
    return PureDpEvent(jnp.where(positive, claim, jnp.inf))


__all__ = [
    "DL_INVALID",
    "MAX_GRID_SCALE",
    "check_grid_scale",
    "discrete_laplace",
    "granular_laplace_scale",
    "laplace_claim",
    "laplace_mechanism",
    "laplace_noise_scale",
    "quotient_up",
]
