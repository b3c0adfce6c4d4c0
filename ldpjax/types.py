"""Type aliases used across ldpjax.

Policy (as in blackjax): functions accept ``ArrayLike`` (Python scalars, NumPy or JAX arrays)
and return ``Array`` (JAX arrays). Random keys are ``PRNGKey``: new-style typed keys from
``jax.random.key`` / :func:`ldpjax.engine.make_key` (any implementation: philox4x32 from
``make_key``, threefry2x32 from ``jax.random.key``) or legacy uint32
keys. Every random function takes its key as the first argument and never defaults it.
Parameter and state containers are pytrees (usually ``NamedTuple``) so that they can be
``vmap``-ed, ``jit``-ed and differentiated.
"""

from __future__ import annotations

from typing import Any

import jax

Array = jax.Array
ArrayLike = jax.typing.ArrayLike
PRNGKey = jax.Array
PyTree = Any

__all__ = ["Array", "ArrayLike", "PRNGKey", "PyTree"]
