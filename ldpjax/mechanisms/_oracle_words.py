"""Integer word counts shared by the frequency and mean oracles, exact for the budget.

Every coin of an oracle's real-data path is decided on one uint32 word w against an integer
threshold T (the coin shows iff w < T, probability T / 2^32). The thresholds that carry the
privacy claim are computed from the float budget x (epsilon, or epsilon / 2) for the *real*
number e^x, in double-word arithmetic (:mod:`ldpjax.mechanisms._float_float`: relative error
below 2^-40 in float32, 2^-98 in float64), and then rounded on the side of privacy:

* :func:`ceil_words` gives ceil(2^32 c / (a + b (e^x - 1))) (never below the exact ceiling, one
  word above it only where the quotient lies within the error bound below an integer);
* :func:`floor_words` gives a value never above floor(2^32 c / (a + b (e^x - 1)));
* :func:`scaled_floor` gives a value never above floor(n e^x) for a uint32 n.

The bound used is 16 u^2 per double-word operation (u = 2^-24 in float32, 2^-53 in float64;
the routines' own bounds are at most 16 u^2, 64 u^2 for e^x - 1) over 12 operations, plus an
absolute 2^-18 (float32) or 2^-45 (float64) of a word for the last rounding, as in
:func:`ldpjax.mechanisms.kary.budget_width`. Budgets beyond 80 (float32) or 700 (float64) are
clipped there: the thresholds they give are those of the clip, which only ever adds privacy
(a smaller ratio is never claimed: callers state the claim for the budget as written and the
realised ratio is at most e^x).

:func:`float_budget` rounds a concrete budget *down* to the release dtype (the release is then
exact for a budget no larger than the one written), :func:`float_probability` rounds a
concrete probability up or down.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _float_float as ff
from ldpjax.types import Array, ArrayLike

#: Largest budget the double-word e^x - 1 takes per dtype (larger ones are clipped to it).
X_MAX = {"float32": 80.0, "float64": 700.0}
TWO32 = 2.0**32
_ROUNDS = 12


def margin(y_hi: Array, rounds: int = _ROUNDS) -> Array:
    """The error bound of a double-word result y (relative 16 rounds u^2, plus the absolute
    rounding of the ceiling's fractional part)."""
    name = str(y_hi.dtype)
    u = ff.UNIT[name]
    absolute = 2.0**-18 if name == "float32" else 2.0**-45
    return jnp.abs(y_hi) * (16.0 * rounds * u * u) + absolute


def expm1_word(x: Array):
    """e^x - 1 as a double word for a float x >= 0 (clipped to :data:`X_MAX`; NaN and inf as 0:
    callers mask them)."""
    x = jnp.asarray(x, jnp.result_type(x, float))
    safe = jnp.where((x >= 0) & (x < jnp.inf), x, 0.0)
    return ff.expm1(jnp.clip(safe, 0.0, X_MAX[str(x.dtype)]))


def quotient(c: ArrayLike, a: ArrayLike, b: ArrayLike, em1):
    """2^32 c / (a + b em1) as a double word, for em1 = :func:`expm1_word` (x) and whole floats
    a, b, c below 2^24."""
    dtype = em1[0].dtype
    a, b, c, hi, lo = jnp.broadcast_arrays(jnp.asarray(a, dtype), jnp.asarray(b, dtype),
                                           jnp.asarray(c, dtype), em1[0], em1[1])
    zero = jnp.zeros_like(hi)
    denominator = ff.add((a, zero), ff.mul_float((hi, lo), b))
    return ff.div((c * TWO32, zero), denominator)


def _quotient(c: ArrayLike, a: ArrayLike, b: ArrayLike, x: Array):
    """2^32 c / (a + b (e^x - 1)) as a double word (a, b, c whole floats below 2^24, x >= 0)."""
    return quotient(c, a, b, expm1_word(x))


def ceil_words(c: ArrayLike, a: ArrayLike, b: ArrayLike, x: ArrayLike) -> tuple[Array, Array]:
    """(ceil(2^32 c / (a + b (e^x - 1))) as uint32, whether it reached 2^32), never below the
    exact ceiling; x = inf gives 0 words (for b > 0).

    Example:
      >>> t, over = ceil_words(1, 2, 1, 1.0)  # ceil(2^32 / (1 + e))
      >>> int(t), bool(over)
      (1155094610, False)
    """
    x = jnp.asarray(x, jnp.result_type(x, float))
    finite = x < jnp.inf
    y = _quotient(c, a, b, jnp.where(finite, jnp.maximum(x, 0.0), 0.0))
    words, over = ff.ceil_to_uint32(y, margin(y[0]))
    return jnp.where(finite, words, jnp.uint32(0)), finite & over


def floor_words(c: ArrayLike, a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Array:
    """An integer never above floor(2^32 c / (a + b (e^x - 1))) (uint32; the exact floor, or one
    below it where the quotient lies within the error bound of an integer); x = inf gives 0.

    Example:
      >>> int(floor_words(1, 2, 1, 1.0))  # floor(2^32 / (1 + e)) = 1155094609
      1155094609
    """
    x = jnp.asarray(x, jnp.result_type(x, float))
    finite = x < jnp.inf
    y = _quotient(c, a, b, jnp.where(finite, jnp.maximum(x, 0.0), 0.0))
    return jnp.where(finite, floor_of(y), jnp.uint32(0))


def floor_of(y) -> Array:
    """An integer never above the double word y >= 0 (uint32; y < 2^32): ceil(y - margin) - 1,
    the exact floor, or one below it where y lies within the error bound above an integer."""
    low = ff.add(y, (-margin(y[0]), jnp.zeros_like(y[0])))
    words, _ = ff.ceil_to_uint32((jnp.maximum(low[0], 0.0), jnp.where(low[0] > 0, low[1], 0.0)),
                                 jnp.zeros_like(y[0]))
    return jnp.where(words > 0, words - 1, jnp.uint32(0))


def as_double_word(n: Array, dtype) -> tuple[Array, Array]:
    """A uint32 as an exact double word (its 16-bit halves are exact floats)."""
    n = jnp.asarray(n, jnp.uint32)
    hi = (n >> 16).astype(dtype) * 65536.0
    lo = (n & jnp.uint32(0xFFFF)).astype(dtype)
    return ff.fast_two_sum(hi, lo)


def scaled_floor(n: ArrayLike, x: ArrayLike) -> Array:
    """An integer never above floor(n e^x) for a uint32 n and a float x >= 0 (uint32; the result
    must stay below 2^32: the caller keeps n e^x <= 2^32).

    Example:
      >>> int(scaled_floor(1000, 1.0))  # floor(1000 e) = 2718
      2718
    """
    return scaled_floor_of(n, expm1_word(x))


def scaled_floor_of(n: ArrayLike, em1) -> Array:
    """:func:`scaled_floor` from em1 = :func:`expm1_word` (x)."""
    n_dw = as_double_word(n, em1[0].dtype)
    return floor_of(ff.add(n_dw, ff.mul(n_dw, em1)))  # n + n (e^x - 1)


def float_budget(x: ArrayLike, dtype):
    """A budget as ``dtype``: a concrete one as a NumPy array, rounded *down* where it is not
    representable (the release is then exact for a budget no larger than the one written); a
    traced one as it is.

    Example:
      >>> float(float_budget(0.1, jnp.float32)) <= 0.1
      True
    """
    return float_probability(x, dtype, up=False)


def float_probability(x: ArrayLike, dtype, up: bool):
    """A concrete number as ``dtype`` rounded up (``up``) or down where not representable (a
    NumPy array, concrete under ``jit``); a traced one as it is."""
    if not v.is_concrete(x):
        return jnp.asarray(x, dtype)
    exact = np.asarray(x, np.float64)
    rounded = exact.astype(dtype)
    with np.errstate(invalid="ignore"):
        wrong = (rounded.astype(np.float64) < exact) if up else (
            rounded.astype(np.float64) > exact)
    toward = np.asarray(np.inf if up else -np.inf, dtype)
    return np.where(wrong, np.nextafter(rounded, toward), rounded)


def threshold_from_probability(prob: Array, up: bool) -> tuple[Array, Array]:
    """(T, certain): T = ceil (``up``) or floor of prob 2^32 as uint32 (exact: scaling a float by
    2^32 and rounding it to an integer are exact), and whether prob 2^32 >= 2^32 (the coin
    always shows; T is then 0).

    Example:
      >>> t, certain = threshold_from_probability(jnp.float32(0.25), up=False)
      >>> int(t), bool(certain)
      (1073741824, False)
    """
    scaled = jnp.ceil(prob * TWO32) if up else jnp.floor(prob * TWO32)
    certain = scaled >= TWO32
    return jnp.where(certain | ~(scaled > 0), 0.0, scaled).astype(jnp.uint32), certain


def uint32_from_float(y: Array) -> Array:
    """A whole float in [0, 2^32) as uint32, exactly (also where float32 holds it in 24 bits)."""
    high = y >= 2.0**31
    return jnp.where(high, (y - 2.0**31).astype(jnp.uint32) + jnp.uint32(2**31),
                     jnp.maximum(y, 0.0).astype(jnp.uint32))


def words(key, shape) -> Array:
    """uint32 words that decide an oracle's reports (``jax.random.bits``)."""
    return jax.random.bits(key, tuple(shape), jnp.uint32)


__all__ = [
    "TWO32",
    "X_MAX",
    "as_double_word",
    "ceil_words",
    "expm1_word",
    "float_budget",
    "float_probability",
    "floor_of",
    "floor_words",
    "margin",
    "quotient",
    "scaled_floor",
    "scaled_floor_of",
    "threshold_from_probability",
    "uint32_from_float",
    "words",
]
