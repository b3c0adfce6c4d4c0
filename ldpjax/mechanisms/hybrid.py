"""The hybrid mechanism (HM) for a number in [-1, 1]: the piecewise mechanism or Duchi et al.'s.

With probability beta the value goes through the piecewise mechanism, otherwise through
Duchi, Jordan & Wainwright's one-bit mechanism, beta = 1 - e^(-eps/2) for eps > 0.61 and 0
below (Wang, Xiao, Yang, Zhao, Hui, Shin, Shin & Yu, "Collecting and Analyzing
Multidimensional Data with Local Differential Privacy", ICDE 2019, Sec. III-C; the threshold
eps* = 0.61 is theirs). Both branches are unbiased, so E[release] = x and the variance is the
beta-mixture of theirs (:mod:`ldpjax.frequency.variance`).

Privacy: the branch coin does not depend on x and each branch is eps-LDP, so HM is eps-LDP; its
profile is at most beta delta_PM(e) + (1 - beta) delta_Duchi(e) (the profile of the release
with its branch revealed; exact then, since both branches have their worst pair at x = +-1),
``HybridEvent(eps)``. Since delta_Duchi >= delta_PM pointwise (masses e^eps / (e^eps + 1) >=
s / (s + 1) at the same ratio e^eps), a branch coin that picks PM *at least* as often as beta
keeps the claim.

Real-data path (six uint32 words per report, :func:`hybrid_mechanism_from_bits`): the PM branch
iff w0 < ceil(beta^ 2^32), beta^ the float beta raised by 8 units of its dtype's epsilon (so the
coin picks PM with probability >= beta); then the discretised PM
(:func:`~ldpjax.mechanisms.piecewise.piecewise_mechanism_from_bits`, three words, grid g Z)
or Duchi's (:func:`~ldpjax.mechanisms.duchi.duchi_mechanism_from_bits`, two words, +-B^). Both
sets of outputs are fixed by eps and g: float-safe. ``granularity=None`` is the simulation
path: float branch coin and the continuous piecewise branch (refused by the release registry).
Fail closed: as the two branches (eps in
the piecewise mechanism's domain; eps = inf is refused); traced invalid ones release NaN.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax.mechanisms import _domain as dom
from ldpjax.mechanisms import _oracle_words as ow
from ldpjax.mechanisms.duchi import check_value, duchi_mechanism_from_bits
from ldpjax.mechanisms.piecewise import (
    _check,
    continuous_piecewise,
    piecewise_mechanism_from_bits,
    requires_grid,
)
from ldpjax.mechanisms.release import register_release
from ldpjax.types import Array, ArrayLike, PRNGKey

#: Below this budget the hybrid mechanism is Duchi et al.'s alone (Wang et al. 2019).
HYBRID_THRESHOLD = 0.61


def hybrid_weight(eps: ArrayLike) -> Array:
    """beta = 1 - e^(-eps/2) for eps > 0.61, else 0 (nominal; differentiable).

    Example:
      >>> round(float(hybrid_weight(2.0)), 4), float(hybrid_weight(0.5))
      (0.6321, 0.0)
    """
    eps = jnp.asarray(eps, jnp.result_type(eps, float))
    return jnp.where(eps > HYBRID_THRESHOLD, -jnp.expm1(-0.5 * eps), 0.0)


def hybrid_mechanism_from_bits(words: ArrayLike, x: ArrayLike, eps: ArrayLike,
                               granularity: float) -> Array:
    """The hybrid release decided on six uint32 words per report (module docstring).

    Args:
      words: uint32 of shape (..., 6): the branch coin, two words for Duchi's branch, three
        for the piecewise branch.
      x: values in [-1, 1], shape (...).
      eps: budget in the piecewise mechanism's domain (broadcast).
      granularity: the piecewise branch's grid (a power of two, static).

    Returns:
      Releases (release dtype); NaN where a traced argument is invalid.

    Example:
      >>> import jax.numpy as jnp
      >>> w = jnp.array([2**32 - 1, 0, 2**32 - 1, 0, 0, 0], jnp.uint32)  # Duchi's branch
      >>> round(float(hybrid_mechanism_from_bits(w, 0.0, 1.0, 2**-4)), 3)  # b = 1, kept: +B
      2.164
    """
    _check(eps, granularity)
    dtype = dom.release_dtype(eps, x)
    words = jnp.asarray(words, jnp.uint32)
    beta = jnp.asarray(hybrid_weight(jnp.asarray(eps, dtype)), dtype)
    raised = beta * (1.0 + 8.0 * float(jnp.finfo(dtype).eps))
    threshold, certain = ow.threshold_from_probability(raised, up=True)
    piecewise = certain | (words[..., 0] < threshold)
    one_bit = duchi_mechanism_from_bits(words[..., 1:3], x, eps)
    pm = piecewise_mechanism_from_bits(words[..., 3:6], x, eps, granularity)
    return jnp.where(piecewise, pm, one_bit).astype(dtype)


def hybrid_mechanism(key: PRNGKey, x: ArrayLike, eps: ArrayLike,
                     granularity: float | None = 2**-8) -> Array:
    """Release each value in [-1, 1] by the hybrid mechanism (eps-LDP, E[release] = x).

    Claim ``HybridEvent(eps)``. Safe for real data with a key from
    :func:`~ldpjax.mechanisms.secure_key` (six uint32 words per report).

    Args:
      key: PRNG key.
      x: values in [-1, 1], any shape.
      eps: budget in (0, inf), within the piecewise mechanism's domain for ``granularity``.
      granularity: the piecewise branch's grid, a power of two (static; default 2^-8), or None
        for the continuous float piecewise branch (a simulation path, refused by
        :func:`~ldpjax.mechanisms.release.release`).

    Returns:
      Releases of the broadcast shape; NaN where a traced argument is invalid.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> hybrid_mechanism(jax.random.key(0), jnp.array([-0.5, 0.5]), 2.0).shape
      (2,)
    """
    check_value(x)
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(eps))
    x = jnp.broadcast_to(jnp.asarray(x), shape)
    if granularity is None:
        word_key, branch_key, pm_key = jax.random.split(key, 3)
        one_bit = duchi_mechanism_from_bits(ow.words(word_key, shape + (2,)), x, eps)
        beta = hybrid_weight(jnp.asarray(eps, dom.release_dtype(eps, x)))
        pick = jax.random.uniform(branch_key, shape, beta.dtype) < beta  # simulation: floats
        return jnp.where(pick, continuous_piecewise(pm_key, x, eps), one_bit)
    _check(eps, granularity)
    words = ow.words(key, shape + (6,))
    return hybrid_mechanism_from_bits(words, x, eps, granularity)


# real-data paths (integer words; the key must be a secure key): ldpjax.mechanisms.release
register_release(hybrid_mechanism, requires_grid)

__all__ = [
    "HYBRID_THRESHOLD",
    "hybrid_mechanism",
    "hybrid_mechanism_from_bits",
    "hybrid_weight",
]
