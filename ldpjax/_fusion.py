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

import jax.numpy as jnp

from ldpjax.types import Array, ArrayLike


def computed_once(x: ArrayLike) -> Array:
    """``x`` unchanged (bit for bit, NaN and signed zeros included), computed once.

    max(x, floor) over a pair, with floor = -inf for floats, the smallest integer for integer
    dtypes and False for booleans. Differentiable (the gradient flows to x).

    Example:
      >>> import jax.numpy as jnp
      >>> computed_once(jnp.array([1.5, -0.0, jnp.inf])).tolist()
      [1.5, -0.0, inf]
    """
    x = jnp.asarray(x)
    if jnp.issubdtype(x.dtype, jnp.floating):
        floor = -jnp.inf
    elif jnp.issubdtype(x.dtype, jnp.integer):
        floor = jnp.iinfo(x.dtype).min
    else:
        floor = False
    pair = jnp.stack([x, jnp.full_like(x, floor)], axis=-1)
    return jnp.max(pair, axis=-1)


__all__ = ["computed_once"]
