"""Duchi, Jordan & Wainwright's one-bit mechanism for a number in [-1, 1]: two output values.

A value x in [-1, 1] is released as +B or -B, B = (e^eps + 1) / (e^eps - 1), with
P[+B | x] = 1/2 + x (e^eps - 1) / (2 (e^eps + 1)), so E[release] = x (Duchi, Jordan &
Wainwright, "Minimax Optimal Procedures for Locally Private Estimation", JASA 2018, Sec. 4.2.3
for d = 1). The worst pair is x = 1 against x = -1, which is binary randomized response at
eps: eps-LDP, exact profile delta(e) = (e^eps - e^e) / (e^eps + 1) (``DuchiEvent(eps)``).
Variance B^2 - x^2 (:mod:`ldpjax.frequency.variance`).

Real-data path (two uint32 words per report, :func:`duchi_mechanism_from_bits`). The same law
as randomized response applied to a stochastic rounding of x: a bit b is 1 iff w0 <
floor((1 + x) / 2 2^32) (the data's own randomness: any law of b keeps the claim), then b is
flipped iff w1 < T = ceil(2^32 / (e^eps + 1)) for the real e^eps of the float eps (capped at
2^31; :mod:`ldpjax.mechanisms._oracle_words`), and the release is +-B^ with
B^ = 2^32 / (2^32 - 2 T). For every pair of inputs the ratio of the probabilities of a release
is at most (2^32 - T) / T <= e^eps (the realised epsilon never exceeds eps), and
E[release] = x up to the rounding of (1 + x) / 2 2^32 (below 2^-32) and of 1 + x in the release
dtype (float32: 2^-24). The two output values are fixed by eps alone: float-safe.

Randomness: both words from the caller's key (secret for real data). The real-data path is
also the simulation path (two words per report, no float arithmetic on the privacy coin).

No privacy (eps = inf: T = 0, B^ = 1, a stochastic rounding of x) only when concrete or
permitted. Fail closed: concrete x outside [-1, 1] or not finite, eps <= 0 or NaN, eps so small
that T reaches 2^31 (below about 2^-30: B would be infinite) or float16 / bfloat16 raise
``ValueError``; traced invalid ones release NaN.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import _validation as v
from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import _oracle_words as ow
from ldpjax.mechanisms.release import register_release
from ldpjax.mechanisms.unary_encoding import other_bit_words
from ldpjax.types import Array, ArrayLike, PRNGKey

_HALF = 2**31


def check_value(x: ArrayLike) -> None:
    """Concrete values must be finite numbers in [-1, 1] (also in float32/float64 only)."""
    dom.check_precision("x", x)
    v.check_range("x", x, -1.0, 1.0)


def value_ok(x: Array) -> Array:
    """Traced domain of values: in [-1, 1] (NaN fails)."""
    return (x >= -1.0) & (x <= 1.0)


def _flip_words(x: Array, allow_inf: bool) -> tuple[Array, Array]:
    ok = (x > 0) & (allow_inf | (x < jnp.inf))
    t = other_bit_words(jnp.where(ok, x, 1.0))
    return t, ok & (t < jnp.uint32(_HALF))


def flip_words(eps: ArrayLike) -> tuple[Array, Array]:
    """(T, valid): T = ceil(2^32 / (e^eps + 1)) capped at 2^31 (0 at eps = inf) for the float
    eps (a concrete one rounded down to the release dtype), and the traced domain (eps > 0,
    T < 2^31, inf only where permitted). A concrete eps (also a literal under ``jit``) is
    evaluated at once and, where T reaches 2^31, raises ``ValueError``.

    Example:
      >>> t, ok = flip_words(1.0)
      >>> int(t), bool(ok)
      (1155094610, True)
    """
    v.check_range("eps", eps, 0.0, jnp.inf, low_open=True)
    dom.check_precision("eps", eps)
    allow_inf = dom.inf_allowed(eps)
    dtype = dom.release_dtype(eps)
    if not v.is_concrete(eps):
        return _flip_words(jnp.asarray(eps, dtype), allow_inf)
    with jax.ensure_compile_time_eval():  # concrete values, also under an outer jit
        t, ok = _flip_words(jnp.asarray(ow.float_budget(eps, dtype), dtype), allow_inf)
    if not np.all(np.asarray(ok)):
        raise ValueError(f"eps={eps!r} is too small for the 32-bit one-bit mechanism (its scale "
                         f"B = (e^eps + 1) / (e^eps - 1) would be infinite): use eps >= 2^-30")
    return t, ok


def duchi_scale(eps: ArrayLike) -> Array:
    """B^ = 2^32 / (2^32 - 2 T) of the real-data path (T = :func:`flip_words`), the magnitude of
    every release; within 2^-31 relative of the nominal (e^eps + 1) / (e^eps - 1).

    Example:
      >>> round(float(duchi_scale(1.0)), 4)  # (e + 1) / (e - 1)
      2.164
    """
    t, ok = flip_words(eps)
    dtype = dom.release_dtype(eps)
    span = jnp.uint32(0) - jnp.uint32(2) * t  # 2^32 - 2T (mod 2^32; 0 for T = 0)
    hi, lo = ow.as_double_word(span, dtype)
    scale = jnp.where(t == 0, 1.0, ow.TWO32 / jnp.where(t == 0, 1.0, hi + lo))
    return dom.poison(ok, scale.astype(dtype))


def duchi_mechanism_from_bits(words: ArrayLike, x: ArrayLike, eps: ArrayLike) -> Array:
    """The one-bit release decided on two uint32 words per report (module docstring).

    Args:
      words: uint32 of shape (..., 2).
      x: values in [-1, 1], shape (...).
      eps: budget in (0, inf] (broadcast).

    Returns:
      +-B^ (``duchi_scale(eps)``) in the release dtype; NaN where a traced argument is invalid.

    Example:
      >>> import jax.numpy as jnp
      >>> w = jnp.array([[0, 2**32 - 1], [0, 0]], jnp.uint32)  # b = 1 kept; b = 1 flipped
      >>> [round(z, 3) for z in duchi_mechanism_from_bits(w, 0.5, 1.0).tolist()]
      [2.164, -2.164]
    """
    t, ok = flip_words(eps)
    dtype = dom.release_dtype(eps, x)
    words = jnp.asarray(words, jnp.uint32)
    x = jnp.asarray(x, dtype)
    ok = ok & value_ok(x)
    y = jnp.floor((1.0 + jnp.where(ok, x, 0.0)) * 0.5 * ow.TWO32)  # exact scaling
    certain = y >= ow.TWO32
    bit = certain | (words[..., 0] < ow.uint32_from_float(jnp.where(certain, 0.0, y)))
    shown = bit ^ (words[..., 1] < t)
    scale = duchi_scale(eps).astype(dtype)
    return dom.poison(ok, jnp.where(shown, scale, -scale), x)


def duchi_mechanism(key: PRNGKey, x: ArrayLike, eps: ArrayLike) -> Array:
    """Release each value in [-1, 1] as +-B with E[release] = x (eps-LDP).

    Exact for eps (realised epsilon <= eps, module docstring); claim ``DuchiEvent(eps)``. Safe
    for real data with a key from :func:`~ldpjax.mechanisms.secure_key`.

    Args:
      key: PRNG key.
      x: values in [-1, 1], any shape.
      eps: budget in (0, inf] (broadcast; inf: no privacy, concrete or permitted only).

    Returns:
      Releases (+-``duchi_scale(eps)``) of the broadcast shape; NaN where a traced argument is
      invalid.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> out = duchi_mechanism(jax.random.key(0), jnp.array([-1.0, 0.0, 1.0]), 1.0)
      >>> sorted(set(round(z, 3) for z in out.tolist())) <= [-2.164, 2.164]
      True
    """
    check_value(x)
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(eps))
    words = ow.words(key, shape + (2,))
    return duchi_mechanism_from_bits(words, jnp.broadcast_to(jnp.asarray(x), shape), eps)


# real-data paths (integer words; the key must be a secure key): ldpjax.mechanisms.release
register_release(duchi_mechanism)

__all__ = [
    "check_value",
    "duchi_mechanism",
    "duchi_mechanism_from_bits",
    "duchi_scale",
    "flip_words",
    "value_ok",
]
