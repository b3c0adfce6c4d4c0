"""Keys for releases of real data: drawn from the operating system's CSPRNG, never from a seed.

*Simulation* (the experiments, ``ldpjax reproduce``, the engine's ``make_key(seed)``) uses public
integer seeds: its noise is replayable from the seed that ``run.json`` records, which is what a
study wants (common random numbers across grid points, reruns that match) and exactly what a
release of real data must not have: anyone holding the seed can subtract the noise.

A *release* of real data takes its key from :func:`secure_key`: 128 or more bits from
``secrets.token_bytes`` (the OS CSPRNG), wrapped as a JAX key of the chosen generator. The key is
never derived from a seed, never logged and never written to disk by ldpjax; keep it in memory
and let it go once the release is made.
"""

from __future__ import annotations

import secrets

import jax
import numpy as np

from ldpjax.types import PRNGKey


def secure_key(impl: str | None = None) -> PRNGKey:
    """A fresh JAX key from the operating system's CSPRNG (for releases of real data).

    Args:
      impl: the PRNG implementation (e.g. ``"threefry2x32"``, ``"philox4x32"``); default: the
        engine's default generator (:data:`ldpjax.engine.keys.DEFAULT_IMPL`).

    Returns:
      A typed key whose words all come from ``secrets.token_bytes``. Two calls never share a
      key (except with probability 2^-64 or less).

    Example:
      >>> import jax
      >>> k1, k2 = secure_key(), secure_key()
      >>> bool((jax.random.key_data(k1) != jax.random.key_data(k2)).any())
      True
    """
    if impl is None:
        from ldpjax.engine.keys import DEFAULT_IMPL

        impl = DEFAULT_IMPL
    shape = jax.random.key_data(jax.random.key(0, impl=impl)).shape
    words = int(np.prod(shape))
    data = np.frombuffer(secrets.token_bytes(4 * words), dtype=np.uint32).reshape(shape)
    return jax.random.wrap_key_data(data.copy(), impl=impl)


__all__ = ["secure_key"]
