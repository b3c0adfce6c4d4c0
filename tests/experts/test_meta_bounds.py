"""Theorem 3's bound: closed form, its two regimes, gradients (float64 central differences),
vmap/jit, validation."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ldpjax.experts.meta_bounds import regret_bound_meta


def reference(mu, T, m, n, ratio, sens=None):
    sens = math.sqrt(n) if sens is None else sens
    eta = math.sqrt(2) if math.isinf(mu) else sens / mu
    return (max(math.sqrt(2), eta * math.sqrt(ratio)) + math.sqrt(2)) * math.sqrt(
        2 * T * math.log(m)
    )


@pytest.mark.parametrize(
    "mu,T,m,n,ratio",
    [
        (1.0, 148, 13, 24, 0.3),
        (0.25, 148, 13, 293, 1.0),
        (np.inf, 1000, 5, 10, 0.9),
        (4.0, 50, 2, 2, 0.01),
    ],
)
def test_closed_form(x64, mu, T, m, n, ratio):
    assert float(regret_bound_meta(mu, T, m, n, ratio)) == pytest.approx(
        reference(mu, T, m, n, ratio), rel=1e-12
    )
    assert float(regret_bound_meta(mu, T, m, n, ratio, sensitivity=1.0)) == pytest.approx(
        reference(mu, T, m, n, ratio, 1.0), rel=1e-12
    )


def test_static_case_reduces_to_rw_ftpl_form(x64):
    # lambda_ratio = 1 (all learners always play different one-hot actions) and eta >= sqrt 2:
    # the bound is (eta + sqrt 2) sqrt(2 T log m).
    mu, T, n = 0.5, 200, 9
    eta = 3 / 0.5
    assert float(regret_bound_meta(mu, T, n, n, 1.0)) == pytest.approx(
        (eta + math.sqrt(2)) * math.sqrt(2 * T * math.log(n))
    )
    # lambda_ratio = 0 (learners always agree): the floor 2 sqrt 2 sqrt(2 T log m).
    assert float(regret_bound_meta(mu, T, n, n, 0.0)) == pytest.approx(
        2 * math.sqrt(2) * math.sqrt(2 * T * math.log(n))
    )


def test_gradients_match_finite_differences(x64):
    args = jnp.asarray([0.7, 148.0, 13.0, 0.4])  # mu, T, m, ratio (n = 24 fixed)

    def f(a):
        return regret_bound_meta(a[0], a[1], a[2], 24, a[3])

    grad = np.asarray(jax.grad(f)(args))
    h = 1e-6
    for i in range(4):
        e = np.zeros(4)
        e[i] = h * float(args[i])
        fd = (float(f(args + e)) - float(f(args - e))) / (2 * e[i])
        assert grad[i] == pytest.approx(fd, rel=1e-6)
    assert grad[0] < 0  # more privacy budget -> smaller bound


def test_vmap_and_jit_over_mu():
    mus = jnp.asarray([0.25, 0.5, 1.0, jnp.inf])
    out = jax.jit(jax.vmap(lambda mu: regret_bound_meta(mu, 148, 13, 24, 0.5)))(mus)
    assert np.all(np.diff(np.asarray(out)) < 0)


def test_bad_inputs():
    with pytest.raises(ValueError, match="mu"):
        regret_bound_meta(0.0, 10, 3, 3, 0.5)
    with pytest.raises(ValueError, match="num_learners"):
        regret_bound_meta(1.0, 10, 1, 3, 0.5)
    with pytest.raises(ValueError, match="lambda_ratio"):
        regret_bound_meta(1.0, 10, 3, 3, -0.5)
    with pytest.raises(ValueError, match="num_rounds"):
        regret_bound_meta(1.0, 0, 3, 3, 0.5)
    # traced out-of-domain input: NaN, not an exception
    assert np.isnan(jax.jit(lambda mu: regret_bound_meta(mu, 10, 3, 3, 0.5))(-1.0))
