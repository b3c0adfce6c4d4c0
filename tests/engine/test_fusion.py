"""ldpjax._fusion.computed_once: the identity, bit for bit, for every dtype it is used on."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ldpjax._fusion import computed_once


def test_computed_once_returns_the_same_bits_for_floats_ints_and_bools():
    dtype = jnp.result_type(float)  # float32, or float64 under x64
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.5], dtype)
    values = np.concatenate([special, np.random.default_rng(0).normal(size=57).astype(dtype)])
    once = np.asarray(jax.jit(computed_once)(values))
    assert once.dtype == values.dtype
    # compare the bit patterns: NaN stays NaN (same payload) and -0.0 keeps its sign
    uint = np.uint64 if values.dtype == np.float64 else np.uint32
    assert np.array_equal(once.view(uint), values.view(uint))
    ints = np.array([np.iinfo(np.int32).min, -1, 0, 7, np.iinfo(np.int32).max], np.int32)
    assert np.array_equal(np.asarray(jax.jit(computed_once)(ints)), ints)
    flags = np.array([True, False, True])
    out = np.asarray(jax.jit(computed_once)(flags))
    assert out.dtype == np.bool_ and np.array_equal(out, flags)


def test_computed_once_passes_the_gradient_through():
    x = jnp.asarray([0.3, -1.2, 2.0])
    grad = jax.grad(lambda y: jnp.sum(computed_once(y) ** 2))(x)
    np.testing.assert_allclose(np.asarray(grad), 2 * np.asarray(x), rtol=1e-6)


def test_computed_once_gives_a_zero_gradient_to_a_masked_nan():
    # a NaN lane that a where() discards gets cotangent 0, and must pass 0 back (jnp.max's own
    # rule would give 0 / 0 = NaN there and poison the whole gradient)
    def loss(y):
        once = computed_once(jnp.log(y))  # log(-1) = NaN in lane 1
        return jnp.sum(jnp.where(y > 0, once, 0.0))

    grad = np.asarray(jax.grad(loss)(jnp.asarray([2.0, -1.0, 4.0])))
    np.testing.assert_allclose(grad, [0.5, 0.0, 0.25], rtol=1e-6)
