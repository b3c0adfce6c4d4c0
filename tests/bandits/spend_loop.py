"""A policy's own ``init``/``step`` scanned under one ``jit`` (params traced), recording the
per-visitor spend: the bandit tests' cheap alternative to compiling ``simulate``'s batched
kernels when only the budget bookkeeping is checked."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnums=(0, 3))
def spend_per_step(algorithm, params, keys, num_steps: int):
    """``(len(keys), num_steps)`` spends of ``algorithm`` run from each key (step t uses
    ``fold_in(key, t)``, init ``fold_in(key, 99)``)."""

    def one(key):
        def body(state, t):
            state, outputs = algorithm.step(params, state, None, jax.random.fold_in(key, t))
            return state, outputs.spend

        state = algorithm.init(params, jax.random.fold_in(key, 99))
        return jax.lax.scan(body, state, jnp.arange(num_steps))[1]

    return jax.vmap(one)(keys)
