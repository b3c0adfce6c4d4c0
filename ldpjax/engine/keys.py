"""PRNG keys: explicit, never defaulted, with a selectable implementation.

``make_key(seed, impl)`` returns a typed key. ``threefry2x32`` (JAX's default) is counter based
and gives bit-identical streams however the work is split across devices, chunks or ``vmap``
batches. ``rbg`` (and ``unsafe_rbg``) use the XLA RngBitGenerator and are much faster on CPU;
they are deterministic for a fixed program, but their streams under ``vmap`` / sharding are not
guaranteed to match a different batching, so prefer threefry when results must not depend on
chunk size or device count.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax.types import PRNGKey

KEY_IMPLS = ("threefry2x32", "rbg", "unsafe_rbg")
_ALIASES = {"threefry": "threefry2x32"}


def resolve_impl(impl: str) -> str:
    name = _ALIASES.get(impl, impl)
    if name not in KEY_IMPLS:
        raise ValueError(f"key_impl must be one of {KEY_IMPLS + tuple(_ALIASES)}, got {impl!r}")
    return name


def make_key(seed: int, impl: str = "threefry2x32") -> PRNGKey:
    """A typed PRNG key from an integer seed and a key implementation name."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    return jax.random.key(int(seed), impl=resolve_impl(impl))


def as_typed_key(key: PRNGKey) -> PRNGKey:
    """Accept typed keys and legacy uint32 keys; return a typed key."""
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key):
        return key
    if key.dtype == jnp.uint32:
        return jax.random.wrap_key_data(key)
    raise ValueError(f"key must be a PRNG key (jax.random.key), got dtype {key.dtype}")


def key_impl_name(key: PRNGKey) -> str:
    return str(jax.random.key_impl(as_typed_key(key)))


def seed_keys(key: PRNGKey, seed_index) -> tuple[PRNGKey, PRNGKey]:
    """(init_key, run_key) of run ``seed_index``: split(fold_in(key, seed_index))."""
    init_key, run_key = jax.random.split(jax.random.fold_in(key, seed_index))
    return init_key, run_key


__all__ = ["KEY_IMPLS", "as_typed_key", "key_impl_name", "make_key", "resolve_impl", "seed_keys"]
