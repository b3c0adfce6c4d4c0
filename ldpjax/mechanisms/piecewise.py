"""The piecewise mechanism (PM) for a number in [-1, 1], released on a grid g Z.

**Continuous PM** (Wang, Xiao, Yang, Zhao, Hui, Shin, Shin & Yu, "Collecting and Analyzing
Multidimensional Data with Local Differential Privacy", ICDE 2019, Sec. III-B): with
s = e^(eps/2) and C = (s + 1) / (s - 1), the release of x has density p = (e^eps - s) /
(2 s + 2) on [l(x), l(x) + C - 1], l(x) = (C + 1) x / 2 - (C - 1) / 2, and p / e^eps on the
rest of [-C, C]; E[release] = x, variance x^2 / (s - 1) + (s + 3) / (3 (s - 1)^2). Its worst
pair (x = 1 against -1: disjoint high windows of mass s / (s + 1)) gives the exact profile
delta(e) = (s - e^e / s) / (s + 1) for e < eps (``PiecewiseEvent(eps)``).

**Discretised PM** (what :func:`piecewise_mechanism` releases, float-safe). The release is
g m for an integer m in [-M, M] (N = 2M + 1 grid points, g = ``granularity``, a power of two).
Each point owns an integer number of the 2^32 values of a uint32 word: A words for the w points
of a *window*, B for the others, with (:func:`piecewise_parameters`)

* w = max(1, floor((C - 1) / g)) and M large enough for the fit and the bound below,
* B = floor(2^32 / (N + w (e^eps - 1))) and A = floor(B e^eps), both for the real e^eps of the
  float eps (double-word arithmetic; :mod:`ldpjax.mechanisms._oracle_words`), so A / B <= e^eps
  and T = w A + (N - w) B <= 2^32;
* the window starts at floor(sigma) or floor(sigma) + 1, sigma = K x - (w - 1) / 2 with
  K = T / (g (A - B) w), the second with probability frac(sigma) (a coin on its own word):
  then E[g m] = g (A - B) w K x / T = x, up to the float rounding of K and sigma (relative
  2^-24 in float32);
* a word w1 < T picks the point whose range of words holds it (a redraw with w2 if w1 >= T;
  both >= T: an invalid release, NaN, probability ((2^32 - T) / 2^32)^2).

*Claim, with proof.* Under every input each point has probability A / 2^32 or B / 2^32 (a
mixture of the two window positions keeps every point between them), times the same factor
1 + (2^32 - T) / 2^32 of the redraw; the invalid outcome has the same probability under every
input. Hence for inputs x, x' and any point, P(m | x) / P(m | x') <= A / B <= e^eps: the
discretised mechanism is eps-LDP (its realised epsilon log(A / B) never exceeds eps). For its
profile, write P(m | x) = (B + (A - B) a_m) c with a_m in [0, 1], sum_m a_m = w (c = (1 + r) /
2^32); then for e >= 0, P(m | x) - e^e P(m | x') <= a_m (A - e^e B) c (linear in a_m, and
nonpositive at a_m = 0), so delta(e) <= w c (A - e^e B) <= P_d (1 - e^(e - eps)) with
P_d = w A c <= w A / T. The parameters keep N >= w (s + 1), which gives w A / T <= s / (s + 1)
(w A <= w B e^eps = w B s^2 <= (N - w) B s), so delta(e) <= (s / (s + 1)) (1 - e^(e - eps)):
the continuous PM's exact profile bounds the discretised one, and ``PiecewiseEvent(eps)`` is a
valid claim for it (pure epsilon eps; tight as g -> 0).

Simulation path: ``granularity=None`` (:func:`continuous_piecewise`) samples the continuous
mechanism from float uniforms, the paper's law up to float rounding (its variance is the closed
form above); its low-order bits depend on x, so the release registry refuses it.

The domain: eps in (0, inf) with the grid fine enough for the budget and coarse enough for
32-bit words (checked: A > B, N < 2^23, the window fits in [-M, M] at x = +-1, N >= w (s + 1));
e.g. g = 2^-8 serves eps in [0.01, 15] (tested). Fail closed: concrete x outside [-1, 1], eps
outside the domain, a granularity that is not a power of two or float16 / bfloat16 raise
``ValueError``; traced invalid ones release NaN. eps = inf is refused (use eps < inf).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import _oracle_words as ow
from ldpjax.mechanisms.duchi import check_value, value_ok
from ldpjax.mechanisms.release import register_release
from ldpjax.types import Array, ArrayLike, PRNGKey

_MAX_HALF = 2**22 - 1


class PiecewiseParameters(NamedTuple):
    """The integers of the discretised PM at (eps, g) (module docstring).

    Attributes:
      high: A, words of each window point (uint32).
      low: B, words of each other point (uint32).
      total: T = w A + (N - w) B (uint32).
      width: w, window points (int32).
      half: M, the grid is g m for m in [-M, M] (int32).
      center_scale: K, the window centre is K x (release dtype).
      valid: whether (eps, g) is in the domain.
    """

    high: Array
    low: Array
    total: Array
    width: Array
    half: Array
    center_scale: Array
    valid: Array


def _check(eps: ArrayLike, granularity: float) -> None:
    v.check_range("eps", eps, 0.0, jnp.inf, low_open=True, high_open=True)
    dom.check_precision("eps", eps)
    dom.check_power_of_two("granularity", granularity)


def _sizes(eps: Array, g: float) -> tuple[Array, Array, Array]:
    """(w, M, gamma): w and a first M (module docstring) from the fit K + (w - 1) / 2 <= M (K
    estimated without the floors, two points of slack) and from N >= w (s + 1) (with a
    relative margin of 2^-18); gamma = g w (e^eps - 1) > 2 (>= s + 1 whenever w >= 1)."""
    half_eps = jnp.expm1(0.5 * eps)  # s - 1
    w = jnp.clip(jnp.floor(2.0 / (jnp.maximum(half_eps, 1e-30) * g)), 1.0, float(_MAX_HALF))
    gamma = jnp.maximum(g * w * jnp.expm1(eps), 2.0 + 1e-3)
    fit = (1.0 / g + 1.0 / gamma + 0.5 * (w - 1.0)) / (1.0 - 2.0 / gamma) + 2.0
    bound = 0.5 * (w * (half_eps + 2.0) * (1.0 + 2.0**-18) - 1.0)
    m = jnp.ceil(jnp.clip(jnp.maximum(fit, bound), 1.0, float(_MAX_HALF) + 1.0))
    return w.astype(jnp.int32), m.astype(jnp.int32), gamma


def _integers(em1, w: Array, m: Array, g: float):
    """(B, A, T, K, ok) for window w and half-width M at e^eps - 1 = em1 (a double word)."""
    dtype = em1[0].dtype
    n = 2 * m + 1
    low = ow.floor_of(ow.quotient(1, n.astype(dtype), w.astype(dtype), em1))
    high = ow.scaled_floor_of(low, em1)
    w_u, n_u = w.astype(jnp.uint32), n.astype(jnp.uint32)
    first = w_u * high
    total = first + (n_u - w_u) * low
    ok = (low >= 1) & (high > low) & (total > first) & (m <= _MAX_HALF)
    hi_t, lo_t = ow.as_double_word(total, dtype)
    hi_d, lo_d = ow.as_double_word(high - low, dtype)
    scale = (hi_t + lo_t) / (g * (hi_d + lo_d) * w.astype(dtype))
    return low, high, total, scale, ok


def _parameters(eps: Array, g: float) -> PiecewiseParameters:
    """The parameters for a float eps (any, traced or not); see :func:`piecewise_parameters`."""
    dtype = eps.dtype
    ok = (eps > 0) & (eps < jnp.inf)
    x = jnp.where(ok, eps, 1.0)
    u = float(jnp.finfo(dtype).eps)
    w, m, gamma = _sizes(x, g)
    em1 = ow.expm1_word(x)

    def refine(_, m):  # N grows by 2 delta: K grows by 2 delta / gamma < delta
        _, _, _, scale, fine = _integers(em1, w, m, g)
        deficit = scale * (1.0 + 8.0 * u) + 0.5 * (w - 1).astype(dtype) - m.astype(dtype)
        step = jnp.ceil(jnp.maximum(deficit, 0.0) / (1.0 - 2.0 / gamma)) + 1.0
        step = jnp.where(fine & (deficit > 0), jnp.minimum(step, 2.0**22), 0.0)
        return m + step.astype(jnp.int32)

    m = jax.lax.fori_loop(0, 3, refine, m)
    low, high, total, scale, fine = _integers(em1, w, m, g)
    ok = ok & fine & (total >= jnp.uint32(2**32 - 2**22))
    ok = ok & (scale * (1.0 + 8.0 * u) + 0.5 * (w - 1).astype(dtype) <= m.astype(dtype))
    s_plus = jnp.exp(0.5 * x) + 1.0
    ok = ok & ((2 * m + 1).astype(dtype) >= w.astype(dtype) * s_plus * (1.0 + 2.0**-20))
    return PiecewiseParameters(high, low, total, w, m, scale, ok)


_parameters_jit = jax.jit(_parameters, static_argnums=1)


def piecewise_parameters(eps: ArrayLike, granularity: float) -> PiecewiseParameters:
    """The integers (A, B, T, w, M), the centre scale K and the validity of the discretised PM.

    M starts from :func:`_sizes` and is raised (three refinements) until the window fits with
    the floors of A and B; the fit, N >= w (s + 1), A > B, N < 2^23 and a redraw probability
    (2^32 - T) / 2^32 <= 2^-10 are then checked. A concrete eps (also a literal under ``jit``)
    is evaluated at once and, outside the domain, raises ``ValueError``; a traced one gives
    ``valid = False``.

    Example:
      >>> prm = piecewise_parameters(1.0, 2**-4)
      >>> int(prm.width), int(prm.half), bool(prm.valid)
      (49, 67, True)
    """
    _check(eps, granularity)
    g = float(granularity)
    dtype = dom.release_dtype(eps)
    x = ow.float_budget(eps, dtype)
    if not v.is_concrete(eps):
        return _parameters(jnp.asarray(x, dtype), g)
    with jax.ensure_compile_time_eval():
        prm = _parameters_jit(jnp.asarray(x, dtype), g)
    if not np.all(np.asarray(prm.valid)):
        raise ValueError(
            f"eps={eps!r} with granularity={granularity!r} has no valid discretised piecewise "
            f"mechanism: the grid must be fine enough for the budget and coarse enough for 32-bit "
            f"words (N = 2M + 1 < 2^23 points, A > B, T >= 2^32 - 2^22); e.g. "
            f"granularity=2**-8 serves eps in [0.01, 15]")
    return prm


def _point(z: Array, start: Array, prm: PiecewiseParameters) -> tuple[Array, Array]:
    """(index m, z < T): the grid point whose range of words holds z; ranges in order, B words
    for points before the window, A in it, B after it."""
    before = (start + prm.half).astype(jnp.uint32)
    r1 = before * prm.low
    r2 = r1 + prm.width.astype(jnp.uint32) * prm.high
    low, high = jnp.maximum(prm.low, 1), jnp.maximum(prm.high, 1)
    pos = jnp.where(z < r1, z // low,
                    jnp.where(z < r2, before + (z - r1) // high,
                              before + prm.width.astype(jnp.uint32) + (z - r2) // low))
    return pos.astype(jnp.int32) - prm.half, z < prm.total


def piecewise_mechanism_from_bits(words: ArrayLike, x: ArrayLike, eps: ArrayLike,
                                  granularity: float) -> Array:
    """The discretised PM decided on three uint32 words per report (module docstring).

    Args:
      words: uint32 of shape (..., 3): the window coin, the point, its redraw.
      x: values in [-1, 1], shape (...).
      eps: budget in (0, inf) (broadcast).
      granularity: the grid g (a power of two, static).

    Returns:
      Releases g m (release dtype); NaN where a traced argument is invalid or both point words
      fall outside the T words.

    Example:
      >>> import jax.numpy as jnp
      >>> w = jnp.array([0, 0, 0], jnp.uint32)  # the lowest point of the grid
      >>> float(piecewise_mechanism_from_bits(w, 0.0, 1.0, 2**-4)) == -67 * 2**-4  # M = 67
      True
    """
    prm = piecewise_parameters(eps, granularity)
    dtype = dom.release_dtype(eps, x)
    words = jnp.asarray(words, jnp.uint32)
    x = jnp.asarray(x, dtype)
    ok = prm.valid & value_ok(x)
    sigma = prm.center_scale.astype(dtype) * jnp.where(ok, x, 0.0) - 0.5 * (
        prm.width - 1).astype(dtype)
    floor = jnp.floor(sigma)
    up, _ = ow.threshold_from_probability(sigma - floor, up=False)
    start = floor.astype(jnp.int32) + (words[..., 0] < up).astype(jnp.int32)
    start = jnp.clip(start, -prm.half, prm.half - prm.width + 1)
    first, inside = _point(words[..., 1], start, prm)
    second, inside2 = _point(words[..., 2], start, prm)
    m = jnp.where(inside, first, second)
    ok = ok & (inside | inside2)
    return dom.poison(ok, m.astype(dtype) * granularity, x)


def continuous_piecewise(key: PRNGKey, x: ArrayLike, eps: ArrayLike) -> Array:
    """The continuous piecewise mechanism in floating point: the *simulation* path.

    With probability s / (s + 1) a uniform point of [l(x), l(x) + C - 1], else a uniform point
    of the rest of [-C, C] (module docstring), from two float uniforms. Its law is the paper's
    up to float rounding, but the low-order bits of a float release depend on x (Mironov, CCS
    2012): for real data use the grid (:func:`piecewise_mechanism` with a granularity). NaN
    where a traced argument is invalid.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> continuous_piecewise(jax.random.key(0), jnp.array([0.0, 1.0]), 1.0).shape
      (2,)
    """
    check_value(x)
    v.check_range("eps", eps, 0.0, jnp.inf, low_open=True, high_open=True)
    dom.check_precision("eps", eps)
    dtype = dom.release_dtype(eps, x)
    x, eps = jnp.asarray(x, dtype), jnp.asarray(eps, dtype)
    ok = value_ok(x) & (eps > 0) & (eps < jnp.inf)
    sm1 = jnp.expm1(0.5 * jnp.where(ok, eps, 1.0))  # s - 1
    c = 1.0 + 2.0 / sm1
    left = 0.5 * (c + 1.0) * jnp.where(ok, x, 0.0) - 0.5 * (c - 1.0)
    shape = jnp.broadcast_shapes(x.shape, eps.shape)
    coin_key, point_key = jax.random.split(key)
    high = jax.random.uniform(coin_key, shape, dtype) < (sm1 + 1.0) / (sm1 + 2.0)
    u = jax.random.uniform(point_key, shape, dtype)
    inside = left + u * (c - 1.0)
    rest = -c + u * (c + 1.0)  # the rest, [-C, l) and (r, C], has length C + 1
    outside = jnp.where(rest < left, rest, rest + (c - 1.0))  # past the window of length C - 1
    return dom.poison(ok, jnp.where(high, inside, outside), x, eps)


def piecewise_mechanism(key: PRNGKey, x: ArrayLike, eps: ArrayLike,
                        granularity: float | None = 2**-8) -> Array:
    """Release each value in [-1, 1] by the discretised piecewise mechanism on the grid g Z.

    eps-LDP (realised epsilon log(A / B) <= eps) with E[release] = x; claim
    ``PiecewiseEvent(eps)`` (the continuous PM's exact profile bounds the discretised one:
    proof in the module docstring). Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key` (three uint32 words per report).
    ``granularity=None`` is the continuous float mechanism (:func:`continuous_piecewise`), a
    simulation path that :func:`~ldpjax.mechanisms.release.release` refuses.

    Args:
      key: PRNG key.
      x: values in [-1, 1], any shape.
      eps: budget in (0, inf) (broadcast).
      granularity: the grid g, a power of two (static; default 2^-8), or None (simulation).

    Returns:
      Releases on g Z within [-M g, M g] (about [-C, C]); NaN where a traced argument is
      invalid.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> out = piecewise_mechanism(jax.random.key(0), jnp.array([-0.5, 0.5]), 1.0)
      >>> bool(jnp.all(out * 2**8 == jnp.round(out * 2**8)))  # on the grid
      True
    """
    if granularity is None:
        return continuous_piecewise(key, x, eps)
    check_value(x)
    _check(eps, granularity)
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(eps))
    words = ow.words(key, shape + (3,))
    return piecewise_mechanism_from_bits(words, jnp.broadcast_to(jnp.asarray(x), shape), eps,
                                         granularity)


def requires_grid(arguments) -> None:
    """The release check: the continuous path (``granularity=None``) is a simulation path."""
    if arguments.get("granularity") is None:
        raise ValueError("release: the piecewise mechanism without granularity is the float "
                         "path, a simulation path (its low-order bits leak the value, Mironov "
                         "2012); pass granularity=2**-k for the release on the grid g Z")


# real-data paths (integer words; the key must be a secure key): ldpjax.mechanisms.release
register_release(piecewise_mechanism, requires_grid)

__all__ = [
    "PiecewiseParameters",
    "continuous_piecewise",
    "piecewise_mechanism",
    "piecewise_mechanism_from_bits",
    "piecewise_parameters",
    "requires_grid",
]
