"""The floating-point attack on the float path (Mironov, CCS 2012), and why the granular path
resists it.

Known property, documented in the README ("Privacy guarantees"): the float path
``value + sigma * N(0, 1)`` in floating point leaks ``value`` through its low-order bits. For
value 0 vs 1 at mu = 1, the event "|output| < 0.5 and output not a multiple of 2^-24" has
probability about 0.26 for value 0 and 0 for value 1 when computed unfused (outputs near 0 that
come from value 1 are 1 + z rounded on the coarser grid of numbers near 1, spacing 2^-24), and
about 0.16 for value 1 when XLA fuses the add (measured here): either way a single release
distinguishes the two inputs with an advantage mu = 1 does not allow.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax import mechanisms as M

N = 200_000
KEY0, KEY1 = jax.random.split(jax.random.key(11))


def _attack_event(out: np.ndarray) -> np.ndarray:
    scaled = out.astype(np.float64) * 2.0**24
    return (np.abs(out) < 0.5) & (scaled != np.round(scaled))


def _releases(value: float, granularity, n: int = N):
    # N independent coordinates (the float path's noise is iid per coordinate; on the granular
    # path the whole vector is one release and its rounded sensitivity grows, which changes
    # nothing about the grid).
    release = jax.jit(
        lambda k: M.gaussian_mechanism(
            k, jnp.full((n,), value, jnp.float32), 1.0, 1.0, granularity=granularity
        )
    )
    return np.asarray(release(KEY0 if value == 0 else KEY1))


def test_float_path_leaks_low_order_bits():
    p0 = _attack_event(_releases(0.0, None)).mean()
    p1 = _attack_event(_releases(1.0, None)).mean()
    # P0 is about 0.26 (SE <= 0.0011 at N = 2e5). P1 depends on how XLA compiles
    # value + sigma * z: exactly 0 without fusion (1 + z is then a multiple of 2^-24), about 0.16
    # when the add is fused into one rounding (seen with jaxlib 0.10.2 under jit). Either way
    # one release tells 0 from 1 far beyond mu = 1's allowance: a gap of 0.05 is > 30 SE.
    assert p0 > 0.2
    assert p0 - p1 > 0.05


def test_granular_path_resists():
    g = 2.0**-10
    out0, out1 = _releases(0.0, g, N // 4), _releases(1.0, g, N // 4)
    for out in (out0, out1):
        assert np.all(out / g == np.round(out / g))  # every output on the grid
        assert _attack_event(out).mean() == 0.0
    # and the low-order bits below the grid carry nothing: the residues mod g are all zero
    assert np.all(np.mod(out0, g) == 0) and np.all(np.mod(out1, g) == 0)
