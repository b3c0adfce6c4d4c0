"""Every public mechanism of ``ldpjax.mechanisms`` runs under ``jax.jit`` with its budget as a
Python float (a literal, concrete at the call) and as a traced argument, and both give the same
release (same key, same draw): bit for bit for integers, bits and grid values; within 4 ulps on
the float paths (XLA may fuse ``value + sigma * z`` into one rounding in one program and not in
the other). K-ary randomized response is tested with its own module. Default precision and
``JAX_ENABLE_X64=1`` both.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax import mechanisms as M

KEY = jax.random.key(31)
X = jnp.array([0.25, 0.5, 0.75])
BITS = jnp.array([0, 1, 1], jnp.int32)
WORDS = jnp.array([0, 2**30, 2**31, 2**32 - 1], jnp.uint32)

# name -> (release(key, budget), budget): the budget is the argument that jit traces or not
MECHANISMS = {
    "gaussian float": (lambda k, b: M.gaussian_mechanism(k, X, 1.0, b), 0.7),
    "gaussian granular": (
        lambda k, b: M.gaussian_mechanism(k, X, 1.0, b, domain=(0.0, 1.0), granularity=2**-6),
        0.7,
    ),
    "laplace float": (lambda k, b: M.laplace_mechanism(k, X, 1.0, b), 0.7),
    "laplace granular": (
        lambda k, b: M.laplace_mechanism(k, X, 1.0, b, domain=(0.0, 1.0), granularity=2**-6),
        0.7,
    ),
    "randomized_response": (lambda k, b: M.randomized_response(k, BITS, b), 0.6),
    "randomized_response_from_bits": (
        lambda k, b: M.randomized_response_from_bits(WORDS, jnp.zeros(4, jnp.int32), b),
        0.6,
    ),
    "randomized_response_bernoulli": (
        lambda k, b: M.randomized_response_bernoulli(k, jnp.full(3, 0.3), b),
        0.6,
    ),
    "randomized_response_bernoulli_from_bits": (
        lambda k, b: M.randomized_response_bernoulli_from_bits(WORDS, jnp.full(4, 0.3), b),
        0.6,
    ),
    "discrete_gaussian": (lambda k, b: M.discrete_gaussian(k, b, (3,)), 2.5),
    "discrete_laplace": (lambda k, b: M.discrete_laplace(k, b, (3,)), 2.5),
    "debias_randomized_response": (
        lambda k, b: M.debias_randomized_response(jnp.array([0.0, 1.0]), b),
        0.6,
    ),
}


FLOAT_PATHS = ("gaussian float", "laplace float", "debias_randomized_response")


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_mechanism_jits_with_literal_and_traced_budget(name):
    release, budget = MECHANISMS[name]
    literal = np.asarray(jax.jit(lambda k: release(k, budget))(KEY))
    traced = np.asarray(jax.jit(release)(KEY, budget))
    assert literal.shape == traced.shape and literal.size > 0
    assert not np.any(np.isnan(literal.astype(float)))
    if name in FLOAT_PATHS:
        eps = float(np.finfo(literal.dtype).eps)
        np.testing.assert_allclose(traced, literal, rtol=4 * eps, atol=4 * eps)
    else:
        np.testing.assert_array_equal(traced, literal)
