"""A value computed once per step, however many fusions read it (XLA's CPU backend).

XLA fuses a cheap elementwise producer into every consumer, so an array read by several
fusions is recomputed in each of them. On CPU that is what makes a step slow when the producer
is a generator's rounds (random words, noise) or a chain of transcendental functions, and its
consumers are many slices (a fixed-order sum over clients, one K-RR division per arm).
``lax.optimization_barrier`` is removed before fusion on CPU; a reduction is not fused into its
consumers, so :func:`computed_once` routes the value through a max over the pair (x, floor),
which gives back x bit for bit.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ldpjax.types import Array, ArrayLike


@jax.custom_jvp
def _once(x: Array) -> Array:
    if jnp.issubdtype(x.dtype, jnp.floating):
        floor = -jnp.inf
    elif jnp.issubdtype(x.dtype, jnp.integer):
        floor = jnp.iinfo(x.dtype).min
    else:
        floor = False
    pair = jnp.stack([x, jnp.full_like(x, floor)], axis=-1)
    return jnp.max(pair, axis=-1)


@_once.defjvp
def _once_jvp(primals, tangents):
    # the identity's derivative, exactly: max's own rule divides by the count of maxima, which
    # is 0 at a NaN and would turn a zero cotangent (a masked NaN lane) into NaN
    (x,), (dx,) = primals, tangents
    return _once(x), dx


def computed_once(x: ArrayLike) -> Array:
    """``x`` unchanged (bit for bit, NaN and signed zeros included), computed once.

    max(x, floor) over a pair, with floor = -inf for floats, the smallest integer for integer
    dtypes and False for booleans. Differentiable as the identity (the tangent passes through
    unchanged, also where x is NaN).

    Example:
      >>> import jax.numpy as jnp
      >>> computed_once(jnp.array([1.5, -0.0, jnp.inf])).tolist()
      [1.5, -0.0, inf]
    """
    return _once(jnp.asarray(x))


__all__ = ["computed_once"]
